"""Query transformers: what an adversary observes about a record (MACE §2.2)."""

from ._classifier import ClassifierQuery

__all__ = ["ClassifierQuery"]
