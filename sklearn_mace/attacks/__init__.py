"""Membership-inference attacks as scikit-learn classifiers."""

from ._baselines import GANLeaksAttack, LOGANAttack, MonteCarloAttack, SyntheticDensityAttack
from ._bayes import BayesOptimalMIA
from ._btta import BTTAttack, TakeTheTypicalAttack, btta_expected_metrics
from ._compare import compare_attacks
from ._domias import DOMIASAttack
from ._generalized import GeneralizedMetricAttack
from ._shadow import ShadowModelAttack, ShadowModels
from ._synthetic import SyntheticDataAttack, stack_synthetic_reference

__all__ = [
    "BTTAttack",
    "BayesOptimalMIA",
    "DOMIASAttack",
    "GANLeaksAttack",
    "GeneralizedMetricAttack",
    "LOGANAttack",
    "MonteCarloAttack",
    "ShadowModelAttack",
    "ShadowModels",
    "SyntheticDataAttack",
    "SyntheticDensityAttack",
    "TakeTheTypicalAttack",
    "btta_expected_metrics",
    "compare_attacks",
    "stack_synthetic_reference",
]
