"""Helpers shared by the displays; matplotlib is imported only when something is drawn."""

import numpy as np


def _get_ax(ax):
    """Return ``ax`` and its figure, creating both when ``ax`` is None."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    return ax, ax.figure


def _as_1d(name, values, n=None):
    """``values`` as a finite 1-D float array, of length ``n`` when given."""
    values = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(values).all():
        raise ValueError(f"{name} contains NaN or infinite values.")
    if n is not None and values.shape[0] != n:
        raise ValueError(f"{name} has {values.shape[0]} entries; expected {n}, one per estimate.")
    return values


def _check_interval(estimate, lower, upper):
    """Both bounds or neither; each finite, one per estimate, and containing it."""
    if (lower is None) != (upper is None):
        raise ValueError("Pass both lower and upper, or neither.")
    if lower is None:
        return None, None
    n = estimate.shape[0]
    lower, upper = _as_1d("lower", lower, n), _as_1d("upper", upper, n)
    if np.any(lower > estimate + 1e-12) or np.any(upper < estimate - 1e-12):
        raise ValueError("Each interval must contain its estimate: lower <= estimate <= upper.")
    return lower, upper
