"""Disclosure risks beyond membership: attribute inference and linkability (anonymeter's).

Each risk is an estimator fitted on a release; ``evaluate(targets, control)`` attacks the
records the release was generated from and control records of the same population through
it and reports anonymeter's risk ``(attack − control)/(1 − control)`` with exact intervals.
"""

from ._inference import AttributeInferenceRisk
from ._linkability import LinkabilityRisk, random_link_rate
from ._rates import clopper_pearson, residual_risk
from ._summary import disclosure_summary

__all__ = [
    "AttributeInferenceRisk",
    "LinkabilityRisk",
    "clopper_pearson",
    "disclosure_summary",
    "random_link_rate",
    "residual_risk",
]
