"""Query transformers: what an adversary observes about a record (MACE §2.2).

Each query is a scikit-learn transformer ``records -> (n, q)`` whose output feeds the attack
and estimation estimators. Hybrid queries (MACE Eq. 4) are a ``FeatureUnion`` of these.
"""

from ._baselines import GANLeaksQuery, LOGANQuery
from ._classifier import ClassifierQuery
from ._discriminator import DiscriminatorQuery, MultiDiscriminatorQuery
from ._domias import DOMIASQuery, SyntheticDensityQuery
from ._generator import GeneratorReconstructionQuery
from ._synthetic import MonteCarloQuery, NearestSyntheticDistance

__all__ = [
    "ClassifierQuery",
    "DOMIASQuery",
    "DiscriminatorQuery",
    "GANLeaksQuery",
    "GeneratorReconstructionQuery",
    "LOGANQuery",
    "MonteCarloQuery",
    "MultiDiscriminatorQuery",
    "NearestSyntheticDistance",
    "SyntheticDensityQuery",
]
