"""Membership-inference attacks as scikit-learn classifiers."""

from ._baselines import GANLeaksAttack, LOGANAttack, MonteCarloAttack, SyntheticDensityAttack
from ._bayes import BayesOptimalMIA
from ._btta import BTTAttack, TakeTheTypicalAttack, btta_expected_metrics
from ._compare import compare_attacks
from ._domias import DOMIASAttack
from ._generalized import GeneralizedMetricAttack
from ._lira import LiRAAttack, logit_confidence
from ._shadow import ShadowModelAttack, ShadowModels
from ._synthetic import SyntheticDataAttack, stack_synthetic_reference
from ._threshold import ThresholdAttack

__all__ = [
    "BTTAttack",
    "BayesOptimalMIA",
    "DOMIASAttack",
    "GANLeaksAttack",
    "GeneralizedMetricAttack",
    "LOGANAttack",
    "LiRAAttack",
    "MonteCarloAttack",
    "ShadowModelAttack",
    "ShadowModels",
    "SyntheticDataAttack",
    "SyntheticDensityAttack",
    "TakeTheTypicalAttack",
    "ThresholdAttack",
    "btta_expected_metrics",
    "compare_attacks",
    "logit_confidence",
    "stack_synthetic_reference",
]
