"""The audit of synthetic releases (``audit_release``, ``sklearn-mace audit``)."""

from .._kind import Kind
from ._view import presentation

RELEASE = Kind(name="release", presentation=presentation)
