"""What one kind of audit is: the unit a configuration of the engine is made of.

A kind (releases, models, training recipes) lives in its own folder under ``_kinds/`` and
exports one :class:`Kind`; ``_registry.py`` lists them, one line each. Everything the rest of
the package needs to know about a kind goes through its :class:`Kind`.
"""

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Kind"]


@dataclass(frozen=True)
class Kind:
    """One configuration of the audit engine.

    Attributes
    ----------
    name : str
        What one audited subject is, as ``AuditResult.kind`` says it (``"release"``).
    presentation : callable
        ``presentation(result) -> Presentation``: what this kind adds to the common report.
    """

    name: str
    presentation: Callable
