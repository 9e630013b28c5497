"""sklearn-mace: membership-inference auditing as scikit-learn estimators.

How much does a generative model, its synthetic data or a classifier leak about who was in
its training set? MACE (optimal membership advantage and individual privacy risk with
confidence intervals), DOMIAS (density-ratio attack on synthetic data) and Bayesian
Take-the-Typical, as estimators and transformers that compose with ``Pipeline``,
``GridSearchCV`` and ``cross_val_score``.
"""

from .attacks import (
    DOMIASAttack,
    GANLeaksAttack,
    LOGANAttack,
    MonteCarloAttack,
    SyntheticDensityAttack,
    compare_attacks,
)
from .experiment import PriorSampler, membership_experiment

__version__ = "0.1.0.dev0"

__all__ = [
    "DOMIASAttack",
    "GANLeaksAttack",
    "LOGANAttack",
    "MonteCarloAttack",
    "PriorSampler",
    "SyntheticDensityAttack",
    "compare_attacks",
    "membership_experiment",
]
