"""Membership-inference attacks as scikit-learn classifiers (``docs/design.md``)."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._baselines": [
            "GANLeaksAttack",
            "LOGANAttack",
            "MonteCarloAttack",
            "SyntheticDensityAttack",
        ],
        "._bayes": ["BayesOptimalMIA"],
        "._btta": ["BTTAttack", "TakeTheTypicalAttack", "btta_expected_metrics"],
        "._compare": ["compare_attacks"],
        "._domias": ["DOMIASAttack"],
        "._generalized": ["GeneralizedMetricAttack"],
        "._lira": ["LiRAAttack", "logit_confidence"],
        "._shadow": ["ShadowModelAttack", "ShadowModels"],
    },
)
