"""Membership risk of several queries at once: the maximum over queries (MACE Remark 1)."""

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch
from sklearn.utils.validation import check_array

from ._advantage import KDEAdvantageEstimator

__all__ = ["max_query_advantage"]


def max_query_advantage(X, y, column_groups, *, estimator=None):
    """Optimal advantage of each query in ``column_groups`` and the largest (MACE Remark 1).

    Each group of columns of ``X`` is one query ``Q_S^i``; the membership risk of the set
    of queries is reported as the maximum of the per-query risks.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Query features of members and non-members.
    y : array-like of shape (n_samples,)
        Membership labels.
    column_groups : dict of name -> list of column indices, or list of lists
        The queries; a list is named by position (``0``, ``1``, …).
    estimator : KDEAdvantageEstimator, default=None
        Cloned for each group (``None``: ``KDEAdvantageEstimator()``); anything with
        ``fit`` and ``advantage_estimate_`` works.

    Returns
    -------
    result : Bunch
        ``advantage`` (the maximum), ``best_query`` (its name), ``advantages`` (dict
        name -> advantage), ``intervals`` (dict name -> ``advantage_estimate_interval_`` or None)
        and ``estimators`` (dict name -> fitted estimator).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.estimation import max_query_advantage
    >>> rng = np.random.default_rng(0)
    >>> m = np.r_[np.ones(1000), np.zeros(1000)]
    >>> X = rng.normal(size=(2000, 2)) + np.c_[m * 0.2, m * 2.0]
    >>> max_query_advantage(X, m, {"weak": [0], "strong": [1]}).best_query
    'strong'
    """
    X = check_array(X, dtype=np.float64)
    groups = (
        dict(enumerate(column_groups))
        if isinstance(column_groups, list | tuple)
        else dict(column_groups)
    )
    if not groups:
        raise ValueError("column_groups must name at least one query (a list of columns).")
    base = KDEAdvantageEstimator() if estimator is None else estimator
    fitted, advantages, intervals = {}, {}, {}
    for name, columns in groups.items():
        columns = np.atleast_1d(np.asarray(columns))
        if columns.size == 0:
            raise ValueError(f"column_groups[{name!r}] is empty; give at least one column.")
        if columns.dtype.kind not in "iu" or columns.min() < 0 or columns.max() >= X.shape[1]:
            raise ValueError(
                f"column_groups[{name!r}] must hold column indices in [0, {X.shape[1]}); "
                f"got {columns.tolist()!r}."
            )
        fitted[name] = clone(base).fit(X[:, columns], y)
        advantages[name] = float(fitted[name].advantage_estimate_)
        intervals[name] = getattr(fitted[name], "advantage_estimate_interval_", None)
    best = max(advantages, key=advantages.get)
    return Bunch(
        advantage=advantages[best],
        best_query=best,
        advantages=advantages,
        intervals=intervals,
        estimators=fitted,
    )
