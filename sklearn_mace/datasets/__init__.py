"""Offline datasets with known ground truth for tests, examples and benchmarks."""

from ._planted import make_planted_leak

__all__ = ["make_planted_leak"]
