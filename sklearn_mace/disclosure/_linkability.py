"""Linkability risk: joining two halves of a record through a release (anonymeter's linkability)."""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.special import gammaln

from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ._base import ReleaseMixin
from ._mixed import _BLOCK_ELEMENTS
from ._rates import RESULT_COLUMNS, risk_row

__all__ = ["LinkabilityRisk"]


def random_link_rate(n_release, n_neighbors):
    """Chance that two uniformly random ``k``-subsets of ``n`` release rows share a row.

    ``1 − C(n − k, k) / C(n, k)``: the success rate of an attacker who links at random.

    Examples
    --------
    >>> print(f"{random_link_rate(100, 1):.3f} {random_link_rate(100, 5):.3f}")
    0.010 0.230
    """
    if 2 * n_neighbors > n_release:
        return 1.0
    i = np.arange(n_neighbors)
    return float(1.0 - np.prod((n_release - n_neighbors - i) / (n_release - i)))


def random_link_rates(n_release, size_a, size_b):
    """Chance that a random ``size_a``-subset and a random ``size_b``-subset of ``n`` release
    rows share a row, ``1 − C(n − b, a) / C(n, a)``, per record (sizes as arrays).

    Examples
    --------
    >>> print(f"{random_link_rates(100, [5], [5])[0]:.3f}")
    0.230
    """
    a = np.asarray(size_a, dtype=float)
    b = np.asarray(size_b, dtype=float)
    n = float(n_release)
    with np.errstate(invalid="ignore"):
        log_apart = (
            gammaln(n - b + 1) - gammaln(n - b - a + 1) - gammaln(n + 1) + gammaln(n - a + 1)
        )
    return np.where(a + b > n, 1.0, 1.0 - np.exp(np.where(a + b > n, 0.0, log_apart)))


def _tied_neighbours(table, queries, columns, n_neighbors, start, stop):
    """(block, n_release) bool: release rows at or within the ``n_neighbors``-th smallest
    distance of each query over ``columns`` (every row tied there included)."""
    release = table.shuffled()  # a small release (the dense pass): any order, rows as sets
    shape = (stop - start, table.n_rows)
    distance = table._distance(
        queries, columns, start, stop, np.empty(shape), np.empty(shape), release
    )
    kth = np.partition(distance, n_neighbors - 1, axis=1)[:, n_neighbors - 1 : n_neighbors]
    return distance <= kth


def _tied_rows(table, query, columns, n_neighbors, work=None):
    """:func:`_tied_neighbours` of one query, as release row indices (ascending), from the
    pruned search of a large release (:meth:`MixedTable.candidates`): the same rows."""
    rows = table.candidates(query, columns, n_neighbors, work=work)
    distance = table.distances(query, columns, rows)
    kth = np.partition(distance, n_neighbors - 1)[n_neighbors - 1]
    return rows[distance <= kth]


class LinkabilityRisk(ReleaseMixin):
    """Risk that a release links two partial views of the records behind it.

    The attacker holds two disjoint column subsets of each target record, ``columns_a``
    and ``columns_b``, as if from two data sets, and links them through the release: the
    ``n_neighbors`` nearest release rows of each half (Gower-like mixed-type distance, see
    :mod:`sklearn_mace.disclosure._mixed`) are found, and the link succeeds when the two
    neighbour sets share a row. This is anonymeter's ``LinkabilityEvaluator`` attack
    (Giomi et al. 2023).

    **Ties.** A view made of a few categorical columns puts many release rows at the same
    distance from a record — on Adult's second half (relationship, race, sex, ..., income)
    hundreds of rows sit at distance 0. anonymeter keeps ``n_neighbors`` of them in release
    order, so a member copied into the release links only when its own row happens to be
    kept in both views, and the risk of a release that copies half its members reads far
    below the 0.5 it is (issue #29: 0.130 on the Adult half-copy). ``ties="keep"`` (the
    default) keeps every row tied with the ``n_neighbors``-th nearest: a copied member always
    links through its own row, the control links by chance as before, and the risk of a
    release that copies a share ``q`` of its members is ``q`` in expectation, since then
    ``a = q + (1 − q)·c`` and ``(a − c)/(1 − c) = q``. ``ties="random"`` is anonymeter's
    rule (ties broken at random).

    ``fit(release)`` learns the release; :meth:`predict` says which records are linked;
    :meth:`evaluate` runs the attack on ``targets`` (trained on) and ``control`` records
    (same population, not trained on) through the same release and reports the success
    rates with exact (Clopper–Pearson) intervals, the rate of random linking
    (:func:`random_link_rates` for the neighbour sets found) and anonymeter's risk
    ``(a − c)/(1 − c)`` with an interval (see
    :func:`~sklearn_mace.disclosure._rates.residual_risk`).

    Parameters
    ----------
    columns_a, columns_b : list of str or int, default=None
        The two views (names for a DataFrame, or positions); disjoint. Default: the first
        ``⌈p/2⌉`` columns and the rest (``columns_b`` defaults to the columns not in
        ``columns_a``).
    n_neighbors : int, default=1
        Release rows per half.
    ties : {"keep", "random"}, default="keep"
        ``"keep"``: every release row tied with the ``n_neighbors``-th nearest counts as a
        neighbour; ``"random"``: exactly ``n_neighbors`` rows, ties broken at random
        (anonymeter's rule).
    confidence : float, default=0.95
        Level of the rate intervals and of the risk interval.
    random_state : int, RandomState instance or None, default=None
        Order in which ties between equidistant release rows are broken.

    Attributes
    ----------
    columns_a_, columns_b_ : list
        The two views (names, or positions for arrays).
    column_kinds_ : ndarray of str
        ``"numeric"`` or ``"categorical"`` per column.
    n_release_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when the release is a DataFrame with string column names.

    See Also
    --------
    AttributeInferenceRisk : Guessing a secret column through the release.

    References
    ----------
    Giomi, Boenisch, Wehmeyer & Tasnádi, "A Unified Framework for Quantifying Privacy Risk in
    Synthetic Data", PoPETs 2023(2), arXiv:2211.10459 (linkability risk).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.disclosure import LinkabilityRisk
    >>> rng = np.random.default_rng(0)
    >>> targets, control = rng.normal(size=(200, 4)), rng.normal(size=(200, 4))
    >>> risk = LinkabilityRisk(random_state=0).fit(targets)  # a release that copies
    >>> risk.predict(targets[:5])
    array([ True,  True,  True,  True,  True])
    >>> result = risk.evaluate(targets, control)
    >>> print(f"{result.loc['a|b', 'attack_rate']:.2f} {result.loc['a|b', 'risk']:.2f}")
    1.00 1.00
    """

    _parameter_constraints = {
        "columns_a": ["array-like", None],
        "columns_b": ["array-like", None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "ties": [StrOptions({"keep", "random"})],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        columns_a=None,
        columns_b=None,
        n_neighbors=1,
        ties="keep",
        confidence=0.95,
        random_state=None,
    ):
        self.columns_a = columns_a
        self.columns_b = columns_b
        self.n_neighbors = n_neighbors
        self.ties = ties
        self.confidence = confidence
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the release through which the two views are linked.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_release, n_features)
            The released (synthetic) records. A DataFrame keeps mixed column types; an
            array is read as numeric.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator (``columns_a_`` and ``columns_b_`` set).
        """
        self._fit_release(X)
        p = self.n_features_in_
        if p < 2:
            raise ValueError(
                f"Linkability needs two views of the records; the release has {p} feature(s)."
            )
        if self.columns_a is None:
            a = list(range((p + 1) // 2))
        else:
            a = self._positions(self.columns_a, "columns_a")
        if self.columns_b is None:
            b = [j for j in range(p) if j not in a]
        else:
            b = self._positions(self.columns_b, "columns_b")
        if not a or not b:
            raise ValueError("columns_a and columns_b must each name at least one column.")
        shared = sorted(set(a) & set(b))
        if shared:
            raise ValueError(
                f"columns_a and columns_b must be disjoint; both hold "
                f"{[self._names[j] for j in shared]}."
            )
        if self.n_neighbors > self.n_release_:
            raise ValueError(
                f"n_neighbors={self.n_neighbors} exceeds the number of release rows "
                f"(n_samples = {self.n_release_})."
            )
        self._a, self._b = a, b
        self.columns_a_ = [self._names[j] for j in a]
        self.columns_b_ = [self._names[j] for j in b]
        return self

    def _links(self, encoded):
        """Whether each record links, and the sizes of its two neighbour sets."""
        n_queries, n_release = len(encoded[0]), self.n_release_
        if self.ties == "random":
            idx_a = self._table.kneighbors(encoded, self._a, self.n_neighbors)
            idx_b = self._table.kneighbors(encoded, self._b, self.n_neighbors)
            sizes = np.full(n_queries, self.n_neighbors)
            return (idx_a[:, :, None] == idx_b[:, None, :]).any(axis=(1, 2)), sizes, sizes
        linked = np.empty(n_queries, dtype=bool)
        size_a, size_b = np.empty(n_queries, int), np.empty(n_queries, int)
        if self._table._pruned():
            work = self._table.search_buffers()
            for i in range(n_queries):
                query = [column[i] for column in encoded]
                near_a = _tied_rows(self._table, query, self._a, self.n_neighbors, work)
                near_b = _tied_rows(self._table, query, self._b, self.n_neighbors, work)
                linked[i] = np.intersect1d(near_a, near_b, assume_unique=True).size > 0
                size_a[i], size_b[i] = len(near_a), len(near_b)
            return linked, size_a, size_b
        block = max(1, _BLOCK_ELEMENTS // n_release)
        for start in range(0, n_queries, block):
            stop = min(start + block, n_queries)
            near_a = _tied_neighbours(self._table, encoded, self._a, self.n_neighbors, start, stop)
            near_b = _tied_neighbours(self._table, encoded, self._b, self.n_neighbors, start, stop)
            linked[start:stop] = (near_a & near_b).any(axis=1)
            size_a[start:stop], size_b[start:stop] = near_a.sum(axis=1), near_b.sum(axis=1)
        return linked, size_a, size_b

    def _linked(self, encoded):
        return self._links(encoded)[0]

    def predict(self, X):
        """Whether the attacker links the two views of each record of ``X``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Records with the release's columns; both views ``columns_a_`` and
            ``columns_b_`` are read.

        Returns
        -------
        linked : ndarray of shape (n_samples,), bool
            True where the neighbour sets of the two views (the ``n_neighbors`` nearest
            release rows, with their ties under ``ties="keep"``) share a row.
        """
        _, encoded = self._encoded(X)
        return self._linked(encoded)

    def evaluate(self, targets, control):
        """Link ``targets`` and ``control`` through the release; the risk.

        Parameters
        ----------
        targets : DataFrame or array-like of shape (n_targets, n_features)
            Records the release was generated from.
        control : DataFrame or array-like of shape (n_control, n_features)
            Records from the same population that the release cannot have seen (the
            non-members; never rows the release may have been built from, such as a
            reference sample). A :class:`~sklearn_mace.disclosure._controls.ControlCopyWarning`
            says when the release holds more of them verbatim than chance explains.

        Returns
        -------
        result : DataFrame with one row, index ``"a|b"``
            ``columns_a``, ``columns_b`` (the views, joined by ``", "``) and the columns of
            :meth:`AttributeInferenceRisk.evaluate` (``baseline_rate``: random linking with
            neighbour sets of the sizes found, averaged over the targets).
        """
        _, target_encoded = self._encoded(targets)
        _, control_encoded = self._encoded(control)
        self._check_controls(target_encoded, control_encoded)
        linked, size_a, size_b = self._links(target_encoded)
        row = risk_row(
            linked,
            self._linked(control_encoded),
            float(np.mean(random_link_rates(self.n_release_, size_a, size_b))),
            self.confidence,
        )
        views = {
            "columns_a": ", ".join(map(str, self.columns_a_)),
            "columns_b": ", ".join(map(str, self.columns_b_)),
        }
        return pd.DataFrame(
            [{**views, **row}],
            index=pd.Index(["a|b"], name="views"),
            columns=["columns_a", "columns_b", *RESULT_COLUMNS],
        )
