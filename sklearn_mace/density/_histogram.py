"""Histogram densities on q-dimensional queries, with Clopper–Pearson bounds (MACE Thm 2).

A discrete query is a histogram whose bins hold one distinct value each, so the same
code serves MACE §4.1.1 (discrete queries, plug-in frequencies ``r̂_j``, ``q̂_j``) and
binned continuous queries (the paper used 100^d bins). Only occupied cells are stored,
so memory grows with the data, not with the number of cells.
"""

from numbers import Integral

import numpy as np
from scipy.stats import beta
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_prior
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context

__all__ = ["HistogramDensity", "clopper_pearson_interval", "histogram_edges"]

# "auto" gives one bin per distinct value when a column has at most this many distinct
# values and at most sqrt(n) of them (a discrete query such as a 0/1 correctness flag);
# otherwise numpy's "auto" rule (the larger of Sturges and Freedman–Diaconis).
MAX_DISTINCT_FOR_VALUE_BINS = 100


def _distinct_value_edges(values):
    """Edges that put every distinct value of ``values`` in its own bin (midpoints)."""
    distinct = np.unique(values)
    if distinct.size == 1:
        return np.array([distinct[0] - 0.5, distinct[0] + 0.5])
    mids = (distinct[1:] + distinct[:-1]) / 2
    half_gap = np.diff(distinct).min() / 2
    return np.concatenate([[distinct[0] - half_gap], mids, [distinct[-1] + half_gap]])


def _column_edges(values, spec, column):
    if isinstance(spec, str):
        n_distinct = np.unique(values).size
        if spec == "discrete" or n_distinct <= min(
            MAX_DISTINCT_FOR_VALUE_BINS, max(2, np.sqrt(values.size))
        ):
            return _distinct_value_edges(values)
        return np.histogram_bin_edges(values, bins="auto")
    if isinstance(spec, Integral | np.integer):
        if spec < 1:
            raise ValueError(f"bins must be >= 1 per feature; got {spec} for feature {column}.")
        lo, hi = values.min(), values.max()
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        return np.linspace(lo, hi, int(spec) + 1)
    edges = np.asarray(spec, dtype=float)
    if (
        edges.ndim != 1
        or edges.size < 2
        or not np.all(np.isfinite(edges))
        or np.any(np.diff(edges) <= 0)
    ):
        raise ValueError(
            f"bins for feature {column} must be an int >= 1 or at least 2 finite, strictly "
            f"increasing edges; got {spec!r}."
        )
    return edges


def histogram_edges(X, bins="auto"):
    """Per-feature bin edges for the rows of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The rows to bin.
    bins : int, sequence, or {"auto", "discrete"}, default="auto"
        * int: that many equal-width bins per feature over the data range;
        * sequence of ``n_features`` ints, or of ``n_features`` edge arrays (ints and arrays
          may be mixed), as in :func:`numpy.histogramdd`; for one feature a single 1-D
          array of floats is taken as its edges;
        * ``"discrete"``: one bin per distinct value (a discrete query, MACE §4.1.1);
        * ``"auto"``: ``"discrete"`` for a feature with few distinct values (at most
          100 and at most ``sqrt(n)``, e.g. a 0/1 correctness query, where 0 and 1 land
          in separate bins), numpy's ``"auto"`` rule otherwise.

    Returns
    -------
    edges : list of ``n_features`` 1-D arrays
        Increasing bin edges of each feature.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.density._histogram import histogram_edges
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 1.0], [4.0, 0.0]])
    >>> [e.tolist() for e in histogram_edges(X, bins=2)]
    [[0.0, 2.0, 4.0], [0.0, 0.5, 1.0]]
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise ValueError("X must be a 2-D array of finite values to compute bin edges.")
    n, d = X.shape
    if isinstance(bins, str):
        if bins not in ("auto", "discrete"):
            raise ValueError(f"bins must be 'auto', 'discrete', an int or edges; got {bins!r}.")
        specs = [bins] * d
    elif isinstance(bins, Integral | np.integer):
        specs = [int(bins)] * d
    else:
        specs = list(bins)
        if (
            d == 1
            and len(specs) > 1
            and all(np.ndim(s) == 0 for s in specs)
            and not all(isinstance(s, Integral | np.integer) for s in specs)
        ):
            specs = [np.asarray(specs, dtype=float)]
        if len(specs) != d:
            raise ValueError(
                f"bins must give one entry (an int or an edge array) per feature: expected "
                f"{d}, got {len(specs)}."
            )
    return [_column_edges(X[:, j], spec, j) for j, spec in enumerate(specs)]


def clopper_pearson_interval(counts, n, confidence=0.95):
    """Exact (Clopper & Pearson, 1934) two-sided interval for a binomial proportion.

    Returns ``(lower, upper)`` with ``lower = Beta⁻¹(α/2; k, n − k + 1)`` (0 when
    ``k = 0``) and ``upper = Beta⁻¹(1 − α/2; k + 1, n − k)`` (1 when ``k = n``),
    ``α = 1 − confidence``. MACE Thm 2 uses it at level ``1 − δ/2`` for each class.
    Raises a ``ValueError`` for ``n < 1``, counts outside ``[0, n]`` or ``confidence``
    outside (0, 1).

    Parameters
    ----------
    counts : int or array-like of int
        Successes ``k``, each in ``[0, n]``.
    n : int
        Trials.
    confidence : float in (0, 1), default=0.95
        Coverage of the two-sided interval.

    Returns
    -------
    lower, upper : ndarray
        Bounds on the proportion, same shape as ``counts``.

    Examples
    --------
    >>> from sklearn_mace.density import clopper_pearson_interval
    >>> lower, upper = clopper_pearson_interval([0, 5, 10], 10)
    >>> lower.round(4).tolist(), upper.round(4).tolist()
    ([0.0, 0.1871, 0.6915], [0.3085, 0.8129, 1.0])
    """
    alpha = 1.0 - check_prior(confidence, name="confidence")
    k = np.asarray(counts, dtype=float)
    if not n >= 1 or np.any(~np.isfinite(k)) or np.any((k < 0) | (k > n)):
        raise ValueError(f"counts must lie in [0, n] with n >= 1; got n={n!r}.")
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, beta.ppf(alpha / 2, np.maximum(k, 1), n - k + 1), 0.0)
        upper = np.where(k < n, beta.ppf(1 - alpha / 2, k + 1, np.maximum(n - k, 1)), 1.0)
    return lower, upper


class HistogramDensity(DensityMixin, BaseEstimator):
    """Histogram density of q-dimensional queries: plug-in frequencies per cell.

    ``f̂(x) = c_j / (n · vol_j)`` for the cell ``j`` holding ``x`` (MACE Thm 2.1: ``r̂_j``
    is the fraction ``c_j / n``). Points outside every bin have density 0. Log densities
    are returned, ``-inf`` for empty cells.

    Parameters
    ----------
    bins : int, sequence or {"auto", "discrete"}, default="auto"
        See :func:`histogram_edges`. Pass explicit edges to share one grid between two
        densities (members and non-members), as :class:`~sklearn_mace.BayesOptimalMIA` does.

    Attributes
    ----------
    edges_ : list of ndarray
        Bin edges per feature.
    n_samples_fit_ : int
        ``n`` in the frequencies and the Clopper–Pearson intervals.
    n_features_in_ : int

    References
    ----------
    MACE (TMLR 2023), §4.1.1 and Theorem 2; Clopper & Pearson (1934).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.density import HistogramDensity
    >>> hist = HistogramDensity(bins="discrete").fit(np.array([[0.0], [1.0], [1.0], [1.0]]))
    >>> np.exp(hist.score_samples(np.array([[0.0], [1.0]])))
    array([0.25, 0.75])
    """

    _parameter_constraints = {
        "bins": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto", "discrete"}),
            "array-like",
        ],
    }

    def __init__(self, *, bins="auto"):
        self.bins = bins

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Count the rows of ``X`` per cell.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The sample whose density is estimated.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : HistogramDensity
            The fitted density.
        """
        X = validate_data(self, X, dtype=np.float64)
        self.edges_ = histogram_edges(X, self.bins)
        self._shape = tuple(len(e) - 1 for e in self.edges_)
        if np.prod(np.asarray(self._shape, dtype=float)) >= 2.0**62:
            raise ValueError(f"bins give {self._shape} cells, too many to index; use fewer bins.")
        keys, inside = self._cell_keys(X)
        self._keys, self._counts = np.unique(keys[inside], return_counts=True)
        self.n_samples_fit_ = X.shape[0]
        return self

    def _cell_keys(self, X):
        """Flat cell index of each row and whether the row lies inside the grid."""
        index = np.empty(X.shape, dtype=np.int64)
        inside = np.ones(X.shape[0], dtype=bool)
        for j, edges in enumerate(self.edges_):
            idx = np.searchsorted(edges, X[:, j], side="right") - 1
            idx[X[:, j] == edges[-1]] = len(edges) - 2  # last bin is closed, as in numpy
            inside &= (idx >= 0) & (idx < len(edges) - 1)
            index[:, j] = np.clip(idx, 0, len(edges) - 2)
        return np.ravel_multi_index(index.T, self._shape), inside

    def _cell_volume(self, X):
        volume = np.ones(X.shape[0])
        for j, edges in enumerate(self.edges_):
            idx = np.clip(np.searchsorted(edges, X[:, j], side="right") - 1, 0, len(edges) - 2)
            volume *= np.diff(edges)[idx]
        return volume

    def cell_counts(self, X):
        """Number of fitted rows in the cell of each row of ``X``, and whether it is inside.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to look up.

        Returns
        -------
        counts : ndarray of shape (n_samples,)
            Fitted rows in the cell of each point (0 outside the grid).
        inside : ndarray of shape (n_samples,), bool
            Whether each point falls inside the grid of bins.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        keys, inside = self._cell_keys(X)
        pos = np.clip(np.searchsorted(self._keys, keys), 0, max(len(self._keys) - 1, 0))
        found = inside & (self._keys.size > 0) & (self._keys[pos] == keys)
        return np.where(found, self._counts[pos] if self._keys.size else 0, 0), inside

    def score_samples(self, X):
        """Log density ``log(c_j / (n · vol_j))`` of each row (``-inf`` in empty cells).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to evaluate.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            Natural log of the density at each point.
        """
        counts, _ = self.cell_counts(X)
        X = np.asarray(X, dtype=float)
        with np.errstate(divide="ignore"):
            return np.log(counts) - np.log(self.n_samples_fit_ * self._cell_volume(X))

    def score_samples_interval(self, X, confidence=0.95):
        """Log density with its Clopper–Pearson bounds (MACE Thm 2.2).

        Returns ``(log_density, log_lower, log_upper)``; the bounds are an exact
        two-sided ``confidence`` interval for the cell probability, divided by the cell
        volume. Outside the grid there is no cell: the density is 0 and the bounds are
        ``(-inf, inf)`` (nothing is known there).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to evaluate.
        confidence : float in (0, 1), default=0.95
            Level of the two-sided interval.

        Returns
        -------
        log_density, log_lower, log_upper : ndarrays of shape (n_samples,)
            Log density and the log bounds of its interval at each point.
        """
        counts, inside = self.cell_counts(X)
        X = np.asarray(X, dtype=float)
        lower, upper = clopper_pearson_interval(counts, self.n_samples_fit_, confidence)
        log_volume = np.log(self._cell_volume(X))
        with np.errstate(divide="ignore"):
            log_density = np.log(counts) - np.log(self.n_samples_fit_) - log_volume
            log_lower = np.where(inside, np.log(lower) - log_volume, -np.inf)
            log_upper = np.where(inside, np.log(upper) - log_volume, np.inf)
        return log_density, log_lower, log_upper

    def score(self, X, y=None):
        """Total log-likelihood of ``X`` (``-inf`` if a row falls in an empty cell).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to evaluate.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        log_likelihood : float
            Sum of :meth:`score_samples` over the rows.
        """
        return float(self.score_samples(X).sum())

    def cell_frequencies(self):
        """The occupied cells as ``(flat_keys, frequencies)``; frequencies sum to 1.

        Returns
        -------
        flat_keys : ndarray of int
            Flat index of each occupied cell in the grid of bins.
        frequencies : ndarray of float
            Fraction ``c_j / n`` of the fitted rows in each of those cells.
        """
        check_is_fitted(self)
        return self._keys.copy(), self._counts / self.n_samples_fit_
