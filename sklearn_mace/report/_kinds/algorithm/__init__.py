"""The audit of training recipes (``audit_algorithm``, ``sklearn-mace audit-algorithm``)."""

from .._kind import Kind
from ._view import presentation

ALGORITHM = Kind(name="recipe", presentation=presentation)
