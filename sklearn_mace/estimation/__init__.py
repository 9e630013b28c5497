"""Estimators of the optimal membership advantage (MACE §5)."""

from ._advantage import (
    KDEAdvantageEstimator,
    histogram_advantage,
    kde_advantage,
    mcdiarmid_half_width,
)

__all__ = [
    "KDEAdvantageEstimator",
    "histogram_advantage",
    "kde_advantage",
    "mcdiarmid_half_width",
]
