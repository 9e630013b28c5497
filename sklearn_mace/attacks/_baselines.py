"""DOMIAS §4 baselines as attacks on stacked rows: deprecated, see :mod:`._deprecated`.

The baselines are query transformers now (:mod:`sklearn_mace.queries`); this module keeps
the old import path of the deprecated classes for one release.
"""

from ._deprecated import GANLeaksAttack, LOGANAttack, MonteCarloAttack, SyntheticDensityAttack

__all__ = ["GANLeaksAttack", "LOGANAttack", "MonteCarloAttack", "SyntheticDensityAttack"]
