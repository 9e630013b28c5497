"""Membership-inference attacks as scikit-learn classifiers (``docs/design.md``).

``GANLeaksAttack``, ``LOGANAttack``, ``MonteCarloAttack``, ``SyntheticDensityAttack``,
``SyntheticDataAttack`` and ``stack_synthetic_reference`` are deprecated (the synthetic-data
signals are query transformers now, see :mod:`sklearn_mace.queries`) and go in the next
release.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._bayes": ["BayesOptimalMIA"],
        "._btta": ["BTTAttack", "TakeTheTypicalAttack", "btta_expected_metrics"],
        "._compare": ["compare_attacks"],
        "._deprecated": [
            "GANLeaksAttack",
            "LOGANAttack",
            "MonteCarloAttack",
            "SyntheticDataAttack",
            "SyntheticDensityAttack",
            "stack_synthetic_reference",
        ],
        "._domias": ["DOMIASAttack"],
        "._generalized": ["GeneralizedMetricAttack"],
        "._lira": ["LiRAAttack", "logit_confidence"],
        "._shadow": ["ShadowModelAttack", "ShadowModels"],
        "._threshold": ["ThresholdAttack"],
    },
)
