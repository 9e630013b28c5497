"""Membership-inference attacks as scikit-learn classifiers."""

from ._bayes import BayesOptimalMIA
from ._btta import BTTAttack, TakeTheTypicalAttack, btta_expected_metrics
from ._generalized import GeneralizedMetricAttack
from ._shadow import ShadowModelAttack, ShadowModels

__all__ = [
    "BTTAttack",
    "BayesOptimalMIA",
    "GeneralizedMetricAttack",
    "ShadowModelAttack",
    "ShadowModels",
    "TakeTheTypicalAttack",
    "btta_expected_metrics",
]
