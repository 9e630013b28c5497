"""Estimators of the optimal membership advantage (MACE §5) and its certified bound."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._advantage": ["KDEAdvantageEstimator", "histogram_advantage", "kde_advantage"],
        "._certify": ["certified_advantage", "forward_chained_p_value"],
        "._multi_query": ["max_query_advantage"],
    },
)
