"""Membership metrics, generalized (Koyejo) metrics, the DP link, scorers and displays."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._audit": [
            "AdvantageUpperBound",
            "EpsilonAudit",
            "OneRunAudit",
            "advantage_deviation",
            "advantage_upper_bound",
            "audit_epsilon",
            "one_run_epsilon",
        ],
        "._dp": ["advantage_bound", "epsilon_from_advantage", "individual_risk_bound"],
        "._generalized": ["GeneralizedMetric"],
        "._membership": ["membership_advantage", "top_quantile_precision", "tpr_at_fpr"],
        "._orientation": ["membership_scores"],
        "._planning": [
            "BoundSampleSizePlan",
            "SampleSizePlan",
            "audit_sample_size",
            "bounded_sample_size",
            "detectable_epsilon",
        ],
        "._paired": [
            "advantage_difference_test",
            "compare_audits",
            "delong_test",
            "tpr_at_fpr_test",
        ],
        "._plot": ["AdvantageDisplay", "IndividualRiskDisplay", "MembershipRocDisplay"],
        "._scorers": ["generalized_metric_scorer", "get_scorer", "get_scorer_names"],
    },
)
