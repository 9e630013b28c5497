"""Membership-inference attacks as scikit-learn classifiers."""

from ._baselines import GANLeaksAttack, LOGANAttack, MonteCarloAttack, SyntheticDensityAttack
from ._compare import compare_attacks
from ._domias import DOMIASAttack
from ._synthetic import SyntheticDataAttack, stack_synthetic_reference

__all__ = [
    "DOMIASAttack",
    "GANLeaksAttack",
    "LOGANAttack",
    "MonteCarloAttack",
    "SyntheticDataAttack",
    "SyntheticDensityAttack",
    "compare_attacks",
    "stack_synthetic_reference",
]
