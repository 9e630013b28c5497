"""Density estimators used by the attacks.

Gaussian KDE in log space (:class:`GaussianKDE`, exact pointwise path, Chen-2017
intervals, a binned/FFT grid path for d ≤ 2), histogram densities with Clopper–Pearson
intervals (:class:`HistogramDensity`) and the BNAF normalizing flow (:class:`BNAFDensity`,
torch). The numeric kernels (``gaussian_log_kernel_sum``, ``bandwidth_matrix``, the binned
grid) stay in the private modules ``_kde`` and ``_grid``.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._bnaf": ["BNAFDensity"],
        "._histogram": ["HistogramDensity", "clopper_pearson_interval"],
        "._kde": ["GaussianKDE"],
    },
)
