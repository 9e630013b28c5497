"""Query transformers: what an adversary observes about a record (MACE §2.2).

Each query is a scikit-learn transformer ``records -> (n, q)`` whose output feeds the attack
and estimation estimators. Hybrid queries (MACE Eq. 4) are a ``FeatureUnion`` of these.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._classifier": ["ClassifierQuery"],
        "._discriminator": ["DiscriminatorQuery", "MultiDiscriminatorQuery"],
        "._generator": ["GeneratorReconstructionQuery"],
        "._synthetic": ["MonteCarloQuery", "NearestSyntheticDistance"],
    },
)
