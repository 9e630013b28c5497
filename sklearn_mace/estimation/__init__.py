"""Estimators of the optimal membership advantage (MACE §5)."""

from ._advantage import (
    KDEAdvantageEstimator,
    histogram_advantage,
    kde_advantage,
    mcdiarmid_half_width,
)
from ._certify import certified_advantage, crossfit_p_value
from ._multi_query import max_query_advantage

__all__ = [
    "KDEAdvantageEstimator",
    "certified_advantage",
    "crossfit_p_value",
    "histogram_advantage",
    "kde_advantage",
    "max_query_advantage",
    "mcdiarmid_half_width",
]
