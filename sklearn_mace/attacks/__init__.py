"""Membership-inference attacks as scikit-learn classifiers."""

from ._bayes import BayesOptimalMIA

__all__ = [
    "BayesOptimalMIA",
]
