"""Targets worth auditing: the population's most vulnerable records, and worst-case canaries.

Privacy is a worst-case property: an audit of an average record says little about the
records a generator exposes most (Stadler, Oprisanu & Troncoso 2022; Meeus et al. 2023). Two
ways to pick a target:

* :func:`vulnerability_scores` / :func:`select_vulnerable_records` rank real records by how
  isolated they are in the population — Meeus et al.'s mean distance to the k nearest
  records, the local outlier factor, or the rarity of their values;
* :func:`make_canaries` builds records outside the data's support (a canary, Jagielski,
  Ullman & Oprea 2020; Nasr et al. 2021), whose presence no other record can mask.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.neighbors import LocalOutlierFactor, NearestNeighbors
from sklearn.utils import check_array, check_random_state

__all__ = ["make_canaries", "select_vulnerable_records", "vulnerability_scores"]

METHODS = ("knn_distance", "local_outlier_factor", "rare_values")


def _standardized(X):
    spread = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(spread > 0, spread, 1.0)


def _check_count(value, name, low, high=None):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise ValueError(f"{name} must be an int >= {low}; got {value!r}.")
    if high is not None and value > high:
        raise ValueError(f"{name}={value} is more than the {high} record(s) available.")
    return int(value)


def vulnerability_scores(X, *, method="knn_distance", n_neighbors=5, metric="euclidean"):
    """How exposed each record of a population is: larger means more vulnerable.

    Columns are standardized (zero mean, unit variance; constant columns left as they are)
    before distances are taken.

    * ``"knn_distance"`` — the mean distance to the record's ``n_neighbors`` nearest other
      records (Meeus et al. 2023, §4: records far from all others are the ones a generator
      must memorise to reproduce; they use k = 5 and a cosine distance on one-hot encoded
      records, ``metric="cosine"`` here);
    * ``"local_outlier_factor"`` — Breunig et al.'s (2000) local outlier factor over
      ``n_neighbors`` neighbours: how much sparser the record's neighbourhood is than its
      neighbours' own;
    * ``"rare_values"`` — ``−Σ_j log f_j(x_j)``, ``f_j`` the relative frequency of the
      record's value in column ``j``: records made of rare values (meaningful for discrete
      columns; with continuous ones every value is unique).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The population (numeric).
    method : {"knn_distance", "local_outlier_factor", "rare_values"}, default="knn_distance"
        The score.
    n_neighbors : int >= 1, default=5
        ``k`` of the distance-based scores.
    metric : str, default="euclidean"
        Distance of ``"knn_distance"`` (any metric of
        :class:`~sklearn.neighbors.NearestNeighbors`, e.g. ``"cosine"``).

    Returns
    -------
    scores : ndarray of shape (n_samples,)
        Vulnerability of every record.

    See Also
    --------
    select_vulnerable_records : the indices of the largest scores.

    References
    ----------
    M. Meeus, F. Guepin, A.-M. Creţu, Y.-A. de Montjoye. Achilles' Heels: Vulnerable Record
    Identification in Synthetic Data Publishing. ESORICS 2023. M. M. Breunig, H.-P. Kriegel,
    R. T. Ng, J. Sander. LOF: Identifying Density-Based Local Outliers. SIGMOD 2000.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import vulnerability_scores
    >>> X = np.r_[np.zeros((10, 2)), [[5.0, 5.0]]]
    >>> int(np.argmax(vulnerability_scores(X, n_neighbors=3)))
    10
    """
    X = check_array(X, dtype=np.float64)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
    if method == "rare_values":
        score = np.zeros(X.shape[0])
        for column in X.T:
            _, inverse, counts = np.unique(column, return_inverse=True, return_counts=True)
            score -= np.log(counts[inverse.ravel()] / column.size)
        return score
    k = _check_count(n_neighbors, "n_neighbors", 1, X.shape[0] - 1)
    Z = _standardized(X)
    if method == "local_outlier_factor":
        return -LocalOutlierFactor(n_neighbors=k).fit(Z).negative_outlier_factor_
    # k + 1 neighbours of each record among all: the record itself (distance 0) is dropped
    distances, _ = NearestNeighbors(n_neighbors=k + 1, metric=metric).fit(Z).kneighbors(Z)
    return distances[:, 1:].mean(axis=1)


def select_vulnerable_records(
    X, n_targets=5, *, method="knn_distance", n_neighbors=5, metric="euclidean"
):
    """Indices of the ``n_targets`` most vulnerable records, most vulnerable first.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The population (numeric).
    n_targets : int >= 1, default=5
        How many records.
    method : {"knn_distance", "local_outlier_factor", "rare_values"}, default="knn_distance"
        The score (see :func:`vulnerability_scores`).
    n_neighbors : int >= 1, default=5
        ``k`` of the distance-based scores.
    metric : str, default="euclidean"
        Distance of ``"knn_distance"``.

    Returns
    -------
    indices : ndarray of int of shape (n_targets,)
        Rows of ``X``; ties are broken by the lower index.

    See Also
    --------
    vulnerability_scores : the scores themselves.
    AlgorithmAudit : audits these records as targets (``targets=n``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import select_vulnerable_records
    >>> X = np.r_[np.zeros((10, 2)), [[5.0, 5.0]], [[-3.0, 0.0]]]
    >>> select_vulnerable_records(X, 2, n_neighbors=3).tolist()
    [10, 11]
    """
    scores = vulnerability_scores(X, method=method, n_neighbors=n_neighbors, metric=metric)
    n_targets = _check_count(n_targets, "n_targets", 1, scores.size)
    return np.argsort(-scores, kind="stable")[:n_targets]


def make_canaries(X, n_canaries=1, *, distance=1.0, columns=None, random_state=None):
    """Worst-case targets: records outside the support of the population.

    Construction: for each canary and each moved column ``j``, a random side
    ``s_j ∈ {−1, +1}``; the value is ``max_j + distance·range_j`` for ``+1`` and
    ``min_j − distance·range_j`` for ``−1``, with ``range_j = max_j − min_j`` of ``X`` (1 for
    a constant column). Every canary thus lies at least ``distance·range_j`` beyond the data
    in every moved column: no population record is near it, so a generator or model that
    memorises records shows it most (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021).
    Columns not moved take the values of a population record drawn at random (keep a label
    column there, and set the canary's label yourself, e.g. flipped).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The population (numeric).
    n_canaries : int >= 1, default=1
        How many canaries.
    distance : float > 0, default=1.0
        How far beyond the data, in units of each column's range.
    columns : array-like of int or None, default=None
        The columns moved out of the support; None: all of them.
    random_state : int, RandomState instance or None, default=None
        The sides and the records of the columns not moved.

    Returns
    -------
    canaries : ndarray of shape (n_canaries, n_features)
        The canaries.

    See Also
    --------
    select_vulnerable_records : real records, ranked by vulnerability.

    References
    ----------
    M. Jagielski, J. Ullman, A. Oprea. Auditing Differentially Private Machine Learning: How
    Private is Private SGD? NeurIPS 2020. M. Nasr, S. Song, A. Thakurta, N. Papernot,
    N. Carlini. Adversary Instantiation: Lower Bounds for Differentially Private Machine
    Learning. IEEE S&P 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import make_canaries
    >>> X = np.array([[0.0, 10.0], [1.0, 20.0]])
    >>> canary = make_canaries(X, random_state=0)
    >>> canary.shape, bool(np.all((canary > X.max(0)) | (canary < X.min(0))))
    ((1, 2), True)
    """
    X = check_array(X, dtype=np.float64)
    n_canaries = _check_count(n_canaries, "n_canaries", 1)
    if isinstance(distance, bool) or not isinstance(distance, Real) or not distance > 0:
        raise ValueError(f"distance must be a number > 0; got {distance!r}.")
    d = X.shape[1]
    moved = np.arange(d) if columns is None else np.asarray(columns, dtype=int).ravel()
    if moved.size == 0 or np.any((moved < -d) | (moved >= d)):
        raise ValueError(f"columns must be column indices of X (0 to {d - 1}); got {columns!r}.")
    rng = check_random_state(random_state)
    low, high = X.min(axis=0), X.max(axis=0)
    spread = np.where(high > low, high - low, 1.0)
    canaries = X[rng.randint(X.shape[0], size=n_canaries)].copy()
    side = rng.randint(2, size=(n_canaries, moved.size)).astype(bool)
    beyond = np.where(
        side, high[moved] + distance * spread[moved], low[moved] - distance * spread[moved]
    )
    canaries[:, moved] = beyond
    return canaries
