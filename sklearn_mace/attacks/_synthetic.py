"""The stacked ``(X, y)`` form of synthetic-data attacks: deprecated, see :mod:`._deprecated`.

Synthetic and reference rows are constructor data of the queries and of
:class:`~sklearn_mace.attacks.DOMIASAttack` now; this module keeps the old import path of the
deprecated names for one release.
"""

from ._deprecated import SyntheticDataAttack, stack_synthetic_reference

__all__ = ["SyntheticDataAttack", "stack_synthetic_reference"]
