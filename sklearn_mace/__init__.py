"""sklearn-mace: membership-inference auditing as scikit-learn estimators.

How much does a generative model, its synthetic data or a classifier leak about who was in
its training set? MACE (optimal membership advantage and individual privacy risk with
confidence intervals), DOMIAS (density-ratio attack on synthetic data) and Bayesian
Take-the-Typical, as estimators and transformers that compose with ``Pipeline``,
``GridSearchCV`` and ``cross_val_score``.

The names below load on first use (``docs/design.md``, "Imports"): ``import sklearn_mace``
imports neither torch nor pandas.
"""

from ._lazy import attach
from ._version import __version__ as __version__

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._validation": ["MembershipLabelWarning"],
        ".algorithm": ["AlgorithmAudit"],
        ".attacks": [
            "BTTAttack",
            "BayesOptimalMIA",
            "DOMIASAttack",
            "GeneralizedMetricAttack",
            "LabelOnlyAttack",
            "LiRAAttack",
            "RMIAAttack",
            "RecordViews",
            "ShadowModelAttack",
            "ShadowModels",
            "TakeTheTypicalAttack",
            "ThresholdAttack",
            "compare_attacks",
        ],
        ".estimation": ["KDEAdvantageEstimator"],
        ".experiment": ["PriorSampler", "membership_experiment"],
        ".queries": [
            "ClassifierQuery",
            "DOMIASQuery",
            "DiscriminatorQuery",
            "GANLeaksQuery",
            "GeneratorReconstructionQuery",
            "LOGANQuery",
            "MonteCarloQuery",
            "MultiDiscriminatorQuery",
            "NearestSyntheticDistance",
            "ScaleMismatchWarning",
            "SyntheticDensityQuery",
        ],
    },
    submodules=[
        "algorithm",
        "attacks",
        "base",
        "datasets",
        "density",
        "disclosure",
        "estimation",
        "experiment",
        "generative",
        "metrics",
        "queries",
        "report",
    ],
)
