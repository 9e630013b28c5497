"""Query transformers: what an adversary observes about a record (MACE §2.2).

Each query is a scikit-learn transformer ``records -> (n, q)`` whose output feeds the attack
and estimation estimators. Hybrid queries (MACE Eq. 4) are a ``FeatureUnion`` of these. The
queries against released synthetic data (DOMIAS's density ratio, ``p_G`` alone, MC,
GAN-leaks, LOGAN) have one column, larger = more likely a member: an attack score as it is.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._baselines": ["GANLeaksQuery", "LOGANQuery"],
        "._classifier": ["ClassifierQuery"],
        "._discriminator": ["DiscriminatorQuery", "MultiDiscriminatorQuery"],
        "._domias": ["DOMIASQuery", "SyntheticDensityQuery"],
        "._generator": ["GeneratorReconstructionQuery"],
        "._scale": ["ScaleMismatchWarning"],
        "._synthetic": ["MonteCarloQuery", "NearestSyntheticDistance"],
    },
)
