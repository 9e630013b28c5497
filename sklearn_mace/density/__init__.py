"""Density estimators used by the attacks: Gaussian KDE in log space, the BNAF flow."""

from ._bnaf import BNAFDensity
from ._kde import BANDWIDTH_RULES, GaussianKDE, bandwidth_matrix, gaussian_log_kernel_sum

__all__ = [
    "BANDWIDTH_RULES",
    "BNAFDensity",
    "GaussianKDE",
    "bandwidth_matrix",
    "gaussian_log_kernel_sum",
]
