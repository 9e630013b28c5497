"""Density estimators used by the attacks.

Gaussian KDE in log space (:class:`GaussianKDE`, exact pointwise path, Chen-2017
intervals, a binned/FFT grid path for d ≤ 2), histogram densities with Clopper–Pearson
intervals (:class:`HistogramDensity`) and the BNAF normalizing flow (:class:`BNAFDensity`).
"""

from ._bnaf import BNAFDensity
from ._grid import binned_gaussian_kde, kde_grid_axes, linear_binning
from ._histogram import HistogramDensity, clopper_pearson_interval, histogram_edges
from ._kde import (
    BANDWIDTH_RULES,
    GaussianKDE,
    bandwidth_matrix,
    gaussian_kernel_squared_integral,
    gaussian_log_kernel_sum,
)

__all__ = [
    "BANDWIDTH_RULES",
    "BNAFDensity",
    "GaussianKDE",
    "HistogramDensity",
    "bandwidth_matrix",
    "binned_gaussian_kde",
    "clopper_pearson_interval",
    "gaussian_kernel_squared_integral",
    "gaussian_log_kernel_sum",
    "histogram_edges",
    "kde_grid_axes",
    "linear_binning",
]
