"""sklearn-mace: membership-inference auditing as scikit-learn estimators.

How much does a generative model, its synthetic data or a classifier leak about who was in
its training set? MACE (optimal membership advantage and individual privacy risk with
confidence intervals), DOMIAS (density-ratio attack on synthetic data) and Bayesian
Take-the-Typical, as estimators and transformers that compose with ``Pipeline``,
``GridSearchCV`` and ``cross_val_score``.
"""

from .attacks import (
    BayesOptimalMIA,
    BTTAttack,
    DOMIASAttack,
    GANLeaksAttack,
    GeneralizedMetricAttack,
    LiRAAttack,
    LOGANAttack,
    MonteCarloAttack,
    ShadowModelAttack,
    ShadowModels,
    SyntheticDensityAttack,
    TakeTheTypicalAttack,
    compare_attacks,
)
from .estimation import KDEAdvantageEstimator
from .experiment import PriorSampler, membership_experiment
from .queries import (
    ClassifierQuery,
    DiscriminatorQuery,
    GeneratorReconstructionQuery,
    MonteCarloQuery,
    MultiDiscriminatorQuery,
    NearestSyntheticDistance,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "BTTAttack",
    "BayesOptimalMIA",
    "ClassifierQuery",
    "DOMIASAttack",
    "DiscriminatorQuery",
    "GANLeaksAttack",
    "GeneralizedMetricAttack",
    "GeneratorReconstructionQuery",
    "KDEAdvantageEstimator",
    "LOGANAttack",
    "LiRAAttack",
    "MonteCarloAttack",
    "MonteCarloQuery",
    "MultiDiscriminatorQuery",
    "NearestSyntheticDistance",
    "PriorSampler",
    "ShadowModelAttack",
    "ShadowModels",
    "SyntheticDensityAttack",
    "TakeTheTypicalAttack",
    "compare_attacks",
    "membership_experiment",
]
