"""Membership-inference attacks as scikit-learn classifiers (``docs/design.md``).

The synthetic-data signals (MC, GAN-leaks, LOGAN, the synthetic density) are query
transformers, see :mod:`sklearn_mace.queries`, followed by a head such as
:class:`ThresholdAttack`.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._bayes": ["BayesOptimalMIA"],
        "._btta": ["BTTAttack", "TakeTheTypicalAttack", "btta_expected_metrics"],
        "._compare": ["compare_attacks"],
        "._domias": ["DOMIASAttack"],
        "._generalized": ["GeneralizedMetricAttack"],
        "._label_only": ["LabelOnlyAttack"],
        "._lira": ["LiRAAttack", "logit_confidence"],
        "._rmia": ["RMIAAttack"],
        "._shadow": ["ShadowModelAttack", "ShadowModels"],
        "._threshold": ["ThresholdAttack"],
        "._views": ["RecordViews"],
    },
)
