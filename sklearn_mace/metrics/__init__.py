"""Membership metrics, generalized (Koyejo) metrics, the DP link and scorers."""

from ._audit import EpsilonAudit, OneRunAudit, audit_epsilon, one_run_epsilon
from ._dp import advantage_bound, epsilon_lower_bound, individual_risk_bound
from ._generalized import METRIC_NAMES, GeneralizedMetric
from ._membership import membership_advantage, top_quantile_precision, tpr_at_fpr
from ._plot import AdvantageDisplay, IndividualRiskDisplay, MembershipRocDisplay
from ._scorers import generalized_metric_scorer, get_scorer, get_scorer_names

__all__ = [
    "AdvantageDisplay",
    "EpsilonAudit",
    "IndividualRiskDisplay",
    "MembershipRocDisplay",
    "METRIC_NAMES",
    "GeneralizedMetric",
    "OneRunAudit",
    "advantage_bound",
    "audit_epsilon",
    "epsilon_lower_bound",
    "generalized_metric_scorer",
    "get_scorer",
    "get_scorer_names",
    "individual_risk_bound",
    "membership_advantage",
    "one_run_epsilon",
    "top_quantile_precision",
    "tpr_at_fpr",
]
