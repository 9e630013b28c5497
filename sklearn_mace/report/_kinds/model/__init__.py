"""The audit of trained classifiers (``audit_model``, ``sklearn-mace audit-model``)."""

from .._kind import Kind
from ._view import presentation

MODEL = Kind(name="model", presentation=presentation)
