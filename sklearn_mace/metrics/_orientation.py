"""Attack scores from an attacker or a query, the right way up (larger = more likely a member).

A query declares which way its columns point (``membership_orientation()``: ``+1`` when
larger values mean "member", as a discriminator score or a density ratio; ``-1`` when smaller
values do, as the distance to the nearest synthetic record (MACE Eq. 2) or a loss; ``0`` when
a column has no order, as a predicted label). Every consumer of scores — ROC curves, TPR at
low FPR, :func:`~sklearn_mace.metrics.audit_epsilon` — reads larger as "member", so a query's
column must be turned the right way up first; :func:`membership_scores` does it from the
declaration, never by guessing from the data.
"""

import numpy as np

__all__ = ["membership_scores", "orientation_of"]


def orientation_of(estimator):
    """The declared orientation of each output column of a fitted query (or pipeline).

    Parameters
    ----------
    estimator : fitted query or Pipeline ending in one
        Anything with ``membership_orientation()`` (a Pipeline is asked through its last
        step).

    Returns
    -------
    orientation : ndarray of int or None
        ``+1`` / ``-1`` / ``0`` per column, or None when nothing is declared.
    """
    last = estimator[-1] if hasattr(estimator, "steps") else estimator
    declare = getattr(last, "membership_orientation", None)
    if not callable(declare):
        return None
    return np.asarray(declare(), dtype=int).ravel()


def membership_scores(estimator, X, *, column=0):
    """One score per record, larger = more likely a member, from a fitted attacker or query.

    An attacker (anything with ``decision_function``) gives its decision function, larger =
    member by the attacker contract. A query gives column ``column`` of ``transform(X)``,
    multiplied by the orientation it declares (``membership_orientation()``): a distance to
    the release (:class:`~sklearn_mace.queries.NearestSyntheticDistance`, smaller = member)
    comes back negated. A column with no declared order (``0``, e.g. a predicted label), or a
    transformer that declares nothing, is refused rather than guessed.

    Parameters
    ----------
    estimator : fitted attacker, query, or Pipeline ending in a query
        What scores the records.
    X : array-like of shape (n_samples, n_features)
        The records (or query features, for an attacker).
    column : int, default=0
        The query column to score with.

    Returns
    -------
    scores : ndarray of shape (n_samples,), float64
        Ready for ``roc_auc_score``, :func:`tpr_at_fpr`, :class:`MembershipRocDisplay` and
        :func:`audit_epsilon` (pass ``scores[m == 1], scores[m == 0]``).

    Raises
    ------
    ValueError
        When the column has no membership order or the estimator declares none.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import roc_auc_score
    >>> from sklearn_mace.metrics import membership_scores
    >>> from sklearn_mace.queries import NearestSyntheticDistance
    >>> rng = np.random.default_rng(0)
    >>> members, non_members = rng.normal(size=(100, 4)), rng.normal(size=(100, 4))
    >>> synthetic = members + 0.1 * rng.normal(size=members.shape)  # near-copies
    >>> X, m = np.r_[members, non_members], np.r_[np.ones(100), np.zeros(100)]
    >>> query = NearestSyntheticDistance(synthetic).fit(X)
    >>> round(roc_auc_score(m, membership_scores(query, X)), 3)  # close = member
    0.998
    >>> round(roc_auc_score(m, query.transform(X)[:, 0]), 3)  # the raw distance: upside down
    0.002
    """
    if hasattr(estimator, "decision_function"):
        return np.asarray(estimator.decision_function(X), dtype=float).ravel()
    if not hasattr(estimator, "transform"):
        raise TypeError(
            f"{type(estimator).__name__} is neither an attacker (decision_function) nor a "
            "query (transform)."
        )
    orientation = orientation_of(estimator)
    name = type(estimator[-1] if hasattr(estimator, "steps") else estimator).__name__
    if orientation is None:
        raise ValueError(
            f"{name} does not declare which way its columns point "
            "(membership_orientation()); negate a distance or a loss yourself, or fit an "
            "attacker on it."
        )
    Q = np.asarray(estimator.transform(X), dtype=float)
    Q = Q.reshape(len(Q), -1)
    if not -Q.shape[1] <= column < Q.shape[1]:
        raise ValueError(f"column={column} is out of range for {Q.shape[1]} query column(s).")
    sign = int(orientation[column])
    if sign == 0:
        raise ValueError(
            f"column {column} of {name} has no membership order (e.g. a label or one class's "
            "probability): fit an attacker on it (BayesOptimalMIA) instead."
        )
    return sign * Q[:, column]
