"""The kinds of audit, one line each: adding a kind is its folder and a line here."""

from .algorithm import ALGORITHM
from .model import MODEL
from .release import RELEASE

__all__ = ["KINDS", "kind_named"]

KINDS = (RELEASE, MODEL, ALGORITHM)


def kind_named(name):
    """The :class:`~._kind.Kind` whose subjects are called ``name`` (``AuditResult.kind``)."""
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise ValueError(f"no kind of audit is called {name!r}; the kinds: {[k.name for k in KINDS]}")
