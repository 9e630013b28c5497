"""Scorers for ``GridSearchCV`` / ``cross_val_score``, looked up by name with :func:`get_scorer`."""

from functools import partial

from sklearn.metrics import get_scorer as _sklearn_get_scorer
from sklearn.metrics import make_scorer

from ._membership import membership_advantage, tpr_at_fpr

__all__ = ["SCORERS", "get_scorer", "get_scorer_names"]

_SCORE_RESPONSE = ("decision_function", "predict_proba")

SCORERS = {
    "membership_advantage": make_scorer(membership_advantage),
    "tpr_at_1pct_fpr": make_scorer(partial(tpr_at_fpr, fpr=0.01), response_method=_SCORE_RESPONSE),
    "tpr_at_0.1pct_fpr": make_scorer(
        partial(tpr_at_fpr, fpr=0.001), response_method=_SCORE_RESPONSE
    ),
}


def get_scorer_names():
    """Names accepted by :func:`get_scorer` in addition to scikit-learn's own.

    Returns
    -------
    names : list of str
        The membership scorer names, sorted.

    Examples
    --------
    >>> from sklearn_mace.metrics import get_scorer_names
    >>> get_scorer_names()
    ['membership_advantage', 'tpr_at_0.1pct_fpr', 'tpr_at_1pct_fpr']
    """
    return sorted(SCORERS)


def get_scorer(scoring):
    """A scorer by name: this package's membership scorers, else scikit-learn's.

    Names: ``"membership_advantage"`` (MACE Def. 1, from ``predict``),
    ``"tpr_at_1pct_fpr"`` and ``"tpr_at_0.1pct_fpr"`` (from ``decision_function`` or
    ``predict_proba``). Any scikit-learn name (``"roc_auc"``, ``"accuracy"``) works too.

    Parameters
    ----------
    scoring : str or callable
        A name from :func:`get_scorer_names` or any argument of
        :func:`sklearn.metrics.get_scorer`.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y)``, for ``cross_val_score`` and ``GridSearchCV``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_mace.metrics import get_scorer
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0, 0, 1, 1])
    >>> attacker = LogisticRegression().fit(X, y)
    >>> get_scorer("membership_advantage")(attacker, X, y)
    1.0
    """
    if isinstance(scoring, str) and scoring in SCORERS:
        return SCORERS[scoring]
    return _sklearn_get_scorer(scoring)
