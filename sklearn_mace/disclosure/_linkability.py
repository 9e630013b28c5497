"""Linkability risk: joining two halves of a record through a release (anonymeter's linkability)."""

from numbers import Integral, Real

import numpy as np
import pandas as pd

from ..utils._sklearn_compat import Interval, _fit_context
from ._base import ReleaseMixin
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


class LinkabilityRisk(ReleaseMixin):
    """Risk that a release links two partial views of the records behind it.

    The attacker holds two disjoint column subsets of each target record, ``columns_a``
    and ``columns_b``, as if from two data sets, and links them through the release: the
    ``n_neighbors`` nearest release rows of each half (Gower-like mixed-type distance, see
    :mod:`sklearn_mace.disclosure._mixed`) are found, and the link succeeds when the two
    neighbour sets share a row. This is anonymeter's ``LinkabilityEvaluator`` attack
    (Giomi et al. 2023).

    ``fit(release)`` learns the release; :meth:`predict` says which records are linked;
    :meth:`evaluate` runs the attack on ``targets`` (trained on) and ``control`` records
    (same population, not trained on) through the same release and reports the success
    rates with exact (Clopper–Pearson) intervals, the rate of random linking
    (:func:`random_link_rate`) and anonymeter's risk ``(a − c)/(1 − c)`` with an interval
    (see :func:`~sklearn_mace.disclosure._rates.residual_risk`).

    Parameters
    ----------
    columns_a, columns_b : list of str or int, default=None
        The two views (names for a DataFrame, or positions); disjoint. Default: the first
        ``⌈p/2⌉`` columns and the rest (``columns_b`` defaults to the columns not in
        ``columns_a``).
    n_neighbors : int, default=1
        Release rows per half.
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
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, *, columns_a=None, columns_b=None, n_neighbors=1, confidence=0.95, random_state=None
    ):
        self.columns_a = columns_a
        self.columns_b = columns_b
        self.n_neighbors = n_neighbors
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

    def _linked(self, encoded):
        idx_a = self._table.kneighbors(encoded, self._a, self.n_neighbors)
        idx_b = self._table.kneighbors(encoded, self._b, self.n_neighbors)
        return (idx_a[:, :, None] == idx_b[:, None, :]).any(axis=(1, 2))

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
            True where the ``n_neighbors`` nearest release rows of the two views share a row.
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
            :meth:`AttributeInferenceRisk.evaluate` (``baseline_rate``: random linking).
        """
        _, target_encoded = self._encoded(targets)
        _, control_encoded = self._encoded(control)
        self._check_controls(target_encoded, control_encoded)
        row = risk_row(
            self._linked(target_encoded),
            self._linked(control_encoded),
            random_link_rate(self.n_release_, self.n_neighbors),
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
