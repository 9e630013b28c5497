"""Membership-inference attacks as scikit-learn classifiers."""

from ._domias import DOMIASAttack
from ._synthetic import SyntheticDataAttack, stack_synthetic_reference

__all__ = ["DOMIASAttack", "SyntheticDataAttack", "stack_synthetic_reference"]
