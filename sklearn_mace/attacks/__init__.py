"""Membership-inference attacks as scikit-learn classifiers."""

from ._bayes import BayesOptimalMIA
from ._generalized import GeneralizedMetricAttack

__all__ = [
    "BayesOptimalMIA",
    "GeneralizedMetricAttack",
]
