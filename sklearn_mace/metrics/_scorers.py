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
    """Names accepted by :func:`get_scorer` in addition to scikit-learn's own."""
    return sorted(SCORERS)


def get_scorer(scoring):
    """A scorer by name: this package's membership scorers, else scikit-learn's.

    Names: ``"membership_advantage"`` (MACE Def. 1, from ``predict``),
    ``"tpr_at_1pct_fpr"`` and ``"tpr_at_0.1pct_fpr"`` (from ``decision_function`` or
    ``predict_proba``). Any scikit-learn name (``"roc_auc"``, ``"accuracy"``) works too.

    Examples
    --------
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn_mace.metrics import get_scorer
    >>> scoring = get_scorer("tpr_at_1pct_fpr")
    """
    if isinstance(scoring, str) and scoring in SCORERS:
        return SCORERS[scoring]
    return _sklearn_get_scorer(scoring)
