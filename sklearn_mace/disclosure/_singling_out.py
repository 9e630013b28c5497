"""Singling-out risk: predicates from a release that isolate one real person (anonymeter's).

Singling out is the first of the three criteria of anonymisation of the Article 29 Working
Party (Opinion 05/2014), next to linkability and inference. anonymeter (Giomi et al. 2023)
measures it by writing predicates from the release that isolate exactly one release row
("age >= 87 and job == 'pilot'") and counting how often such a predicate isolates exactly one
record of the release's training data — against the same count on control records the
release never saw.
"""

import math
import struct
from functools import partial
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ._base import ReleaseMixin
from ._mixed import _BLOCK_ELEMENTS, NUMERIC
from ._rates import RESULT_COLUMNS, risk_row

__all__ = ["SinglingOutRisk", "singling_out_risk"]

_LE, _EQ, _GE = -1, 0, 1
_SCREENS = (512, 4096)  # release rows on which the multivariate search rejects most attempts
_COUNT_BLOCK = 1 << 18  # release rows compared at a time (not a release-long encoding)


def _matches(encoded, predicate):
    """Rows of ``encoded`` (list of columns) where every term ``(column, op, value)`` holds."""
    mask = np.ones(len(encoded[0]), dtype=bool)
    for j, op, value in predicate:
        column = encoded[j]
        if op == _EQ:
            mask &= column == value
        elif op == _LE:
            mask &= column <= value
        else:
            mask &= column >= value
    return mask


def _term_counts(screen, values, chosen, numeric, medians):
    """Rows of ``screen`` (columns by rows) that each attempt's predicate holds for.

    Attempt ``i`` tests columns ``chosen[i]`` at its row's ``values[i]``: equality on a
    categorical column, ``>=`` (value at or above the column's median) or ``<=`` on a
    numeric one — the comparisons of :meth:`SinglingOutRisk._shaped`.
    """
    mask = np.ones((len(chosen), screen.shape[1]), dtype=bool)
    at = np.arange(len(chosen))
    for i in range(chosen.shape[1]):
        j = chosen[:, i]
        value = values[at, j][:, None]
        column = screen[j]
        upper = (value >= medians[j][:, None]) & numeric[j][:, None]
        lower = ~upper & numeric[j][:, None]
        mask &= (column >= value) | lower
        mask &= (column <= value) | upper
    return mask.sum(axis=1)


def _screened_counts(screen, n, values, rows, chosen, counts_of, numeric, medians):
    """Each attempt's matching rows where at most one (exact): ``_SCREENS`` rows, then all.

    ``screen`` holds the shuffle's first rows of the ``n``-row release, ``values`` the
    attempts' rows encoded (attempts by columns, float64). An attempt
    that holds for two rows of a screen holds for two rows of the release; the others go
    on to the next screen, and the last ones are counted on every row by
    ``counts_of(rows, chosen)``."""
    counts = np.full(len(rows), 2)
    open_ = np.arange(len(rows))
    for size in _SCREENS:
        counts[open_] = _term_counts(
            screen[:, :size], values[open_], chosen[open_], numeric, medians
        )
        open_ = open_[counts[open_] <= 1]
        if size >= n:
            return counts
    counts[open_] = counts_of(rows[open_], chosen[open_])
    return counts


def _nth_true(mask, ks, block=1 << 20):
    """Positions of the ``ks``-th true entries of ``mask`` (``ks`` ascending, from 0),
    counted ``block`` entries at a time (not every true entry's position at once)."""
    positions = np.empty(len(ks), dtype=np.intp)
    seen = i = 0
    for start in range(0, len(mask), block):
        if i == len(ks):
            break
        part = mask[start : start + block]
        found = int(np.count_nonzero(part))
        stop = int(np.searchsorted(ks, seen + found))  # the ks within this block
        if stop > i:
            positions[i:stop] = np.flatnonzero(part)[ks[i:stop] - seen] + start
            i = stop
        seen += found
    return positions


def _raw_bound(raw, scale, value, upper):
    """The raw end ``t`` of a numeric term's half-line: ``x >= t`` exactly when
    ``x / scale >= value`` (``upper``), else ``x <= t`` exactly when ``x / scale <= value``,
    for every double ``x``; ``raw / scale == value``.

    Correctly rounded division by ``scale > 0`` is non-decreasing in ``x`` (Python's float
    division is NumPy's: IEEE 754), so each side is a half-line of doubles; its end is
    walked to one double at a time from ``raw`` (a few at most where several doubles share
    a quotient), else found by bisection over the doubles' order."""
    outward = -math.inf if upper else math.inf

    def inside(x):
        return x / scale >= value if upper else x / scale <= value

    t = raw
    for _ in range(8):
        step = math.nextafter(t, outward)
        if not inside(step):
            return t
        t = step
    lo, hi = _order_key(outward), _order_key(t)  # outside, inside
    while abs(hi - lo) > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if inside(_from_key(mid)) else (mid, hi)
    return _from_key(hi)


def _order_key(x):
    """An integer in the doubles' order (``-0.0`` and ``0.0`` share 0)."""
    (bits,) = struct.unpack("<q", struct.pack("<d", x))
    return bits if bits >= 0 else -(bits & 0x7FFF_FFFF_FFFF_FFFF)


def _from_key(key):
    """The double of an :func:`_order_key`."""
    bits = key if key >= 0 else (-key) | (1 << 63)
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _choice(rng, n, size):
    """``rng.choice(n, size, replace=False)`` (same draws, same values) in int32 when ``n``
    allows: the legacy ``RandomState.choice`` shuffles a whole ``arange(n)`` of int64, and
    its shuffle draws the same swaps whatever the dtype."""
    if n >= 2**31 or not isinstance(rng, np.random.RandomState):
        return rng.choice(n, size, replace=False)
    order = np.arange(n, dtype=np.int32)
    rng.shuffle(order)
    return order[:size].astype(np.intp)


def _singles_out(encoded, predicates):
    """Whether each predicate holds for exactly one row of ``encoded``."""
    return np.array([_matches(encoded, p).sum() == 1 for p in predicates], dtype=bool)


class SinglingOutRisk(ReleaseMixin):
    """Risk that predicates written from a release single out records behind it.

    ``fit(release)`` writes up to ``n_queries`` distinct predicates that each hold for
    exactly one release row (anonymeter's ``SinglingOutEvaluator``, Giomi et al. 2023):

    * ``mode="univariate"``: one column each — ``column == value`` for a value that occurs
      once in the release, and, for a numeric column, also ``column <= minimum`` and
      ``column >= maximum`` when the extreme occurs once;
    * ``mode="multivariate"``: ``n_columns`` random columns of a random release row ``r``,
      ``column == r_j`` for a categorical column, and for a numeric one ``column >= r_j``
      when ``r_j`` is at or above the release median, else ``column <= r_j``; a predicate is
      kept when it holds for exactly one release row.

    :meth:`evaluate` counts the predicates that single out exactly one of the ``targets``
    (the release's training records) and exactly one of as many ``control`` records (same
    population, never seen by the release; the larger of the two sets is subsampled to the
    smaller, so both are searched at the same size) and reports the two success rates with
    exact (Clopper–Pearson) intervals, the success rate on the targets of random
    predicates of the same shape (values drawn column by column from the release, so that
    no row's combination survives; not filtered), and anonymeter's risk
    ``(a − c)/(1 − c)`` with an interval (:func:`~sklearn_mace.disclosure._rates.residual_risk`).

    The intervals treat the predicates as independent trials, as anonymeter does. They are
    not quite: all are evaluated on the same records. Predicates that isolate single rows
    mostly hold for disjoint sets of rows, whose match counts are negatively associated
    (multinomial), which makes the binomial interval conservative rather than optimistic;
    ``tests/disclosure/test_singling_out.py`` checks the coverage on releases that know nothing.

    **A negative risk.** A predicate is kept when it isolates one release row. A release
    that holds several near copies of every member makes such predicates rarely hold for a
    member (a member who satisfied one would bring its copies along), while the controls,
    which the release does not cover, satisfy them at the population's rate: the risk reads
    clearly negative (−0.19 [−0.27, −0.11] on ``benchmarks/bench_disclosure.py``'s
    ``leaky`` release, five noisy copies of each member; anonymeter clips it to 0). Such a
    release is not safe — its linkability and inference risks are near 1. Singling out
    measures isolation, not closeness: read it beside the other two.

    Parameters
    ----------
    mode : {"multivariate", "univariate"}, default="multivariate"
        Which predicates to write.
    n_queries : int, default=500
        The most predicates written (fewer when the release has fewer that single out).
    n_columns : int, default=3
        Columns per multivariate predicate (all columns when the release has fewer).
    max_attempts : int, default=None
        Multivariate predicates tried at most; None: ``200 * n_queries``. On a 5 000-row,
        8-column release about 0.5 % of them isolate one row.
    confidence : float, default=0.95
        Level of the rate intervals and of the risk interval.
    random_state : int, RandomState instance or None, default=None
        The predicates' rows and columns, the subsample of the larger record set, and the
        random predicates of the baseline.

    Attributes
    ----------
    predicates_ : list of list of (str or int, str, object)
        The predicates, each a list of ``(column, operator, value)`` terms (``"=="``,
        ``"<="`` or ``">="``; values as in the release).
    column_kinds_ : ndarray of str
        ``"numeric"`` or ``"categorical"`` per column.
    n_release_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when the release is a DataFrame with string column names.

    See Also
    --------
    singling_out_risk : Both modes in one call.
    LinkabilityRisk, AttributeInferenceRisk : The other two criteria.

    References
    ----------
    Giomi, Boenisch, Wehmeyer & Tasnádi, "A Unified Framework for Quantifying Privacy Risk in
    Synthetic Data", PoPETs 2023(2), arXiv:2211.10459 (singling-out risk, §3–4); Article 29
    Data Protection Working Party, Opinion 05/2014 on Anonymisation Techniques.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_mace.disclosure import SinglingOutRisk
    >>> rng = np.random.default_rng(0)
    >>> def table(n):
    ...     return pd.DataFrame({"age": rng.integers(18, 90, n), "job": rng.choice(list("abcd"), n),
    ...                          "town": rng.choice(list("xyz"), n)})
    >>> members, control = table(300), table(300)
    >>> risk = SinglingOutRisk(n_queries=200, random_state=0).fit(members)  # a copy
    >>> result = risk.evaluate(members, control)
    >>> print(f"{result.loc['multivariate', 'attack_rate']:.2f}")
    1.00
    >>> bool(result.loc["multivariate", "risk_low"] > 0.5)
    True
    """

    _parameter_constraints = {
        "mode": [StrOptions({"multivariate", "univariate"})],
        "n_queries": [Interval(Integral, 1, None, closed="left")],
        "n_columns": [Interval(Integral, 1, None, closed="left")],
        "max_attempts": [None, Interval(Integral, 1, None, closed="left")],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        mode="multivariate",
        n_queries=500,
        n_columns=3,
        max_attempts=None,
        confidence=0.95,
        random_state=None,
    ):
        self.mode = mode
        self.n_queries = n_queries
        self.n_columns = n_columns
        self.max_attempts = max_attempts
        self.confidence = confidence
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Write the predicates that single out one release row.

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
            The fitted estimator (``predicates_`` set).
        """
        self._fit_release(X)
        rng = check_random_state(self.random_state)
        if self.mode == "univariate":
            found = self._univariate(rng)
        else:
            found = self._multivariate(rng)
        if not found:
            raise ValueError(
                f"No {self.mode} predicate singles out one row of the release "
                f"({self.n_release_} rows): every value combination occurs at least twice."
            )
        self._predicates = found
        self.predicates_ = self._readable(found)
        return self

    def _candidates(self, j):
        """Column ``j``'s one-row predicates, as ``(ordered, single, ends)``: the column's
        encoding sorted, whether each sorted value is held once (the values held once, in
        ascending order, are ``ordered[single]``), and (numeric) ``(op, value)`` for the
        minimum (``<=``) and the maximum (``>=``) when held once.

        ``np.unique``'s values of count 1, from one sorted copy and two boolean rows
        (``np.unique`` with counts holds about five column-sized arrays), not a copy of the
        values held once (issue #28: all of a continuous column). A numeric column is sorted
        raw and divided in place: ``x / r`` is non-decreasing in ``x``, so this is the sorted
        encoding. A value held once matches one row (the extremes: only that row lies beyond
        them); the release's numeric columns are finite (no NaN, which matches no row)."""
        ordered = np.sort(self._table.columns[j])
        numeric = self.column_kinds_[j] == NUMERIC
        if numeric:
            np.divide(ordered, self._table.scales[j], out=ordered)
        single = np.ones(len(ordered), dtype=bool)
        differ = ordered[1:] != ordered[:-1]
        single[1:] &= differ
        single[:-1] &= differ
        del differ
        ends = []
        if numeric:
            if single[0]:
                ends.append((_LE, ordered[0]))
            if single[-1]:
                ends.append((_GE, ordered[-1]))
        return ordered, single, ends

    def _univariate(self, rng):
        """Up to ``n_queries`` one-column predicates that each hold for one release row.

        The candidates, column by column, in :meth:`_candidates`' order; when there are more
        than ``n_queries``, ``rng.choice`` draws which (kept in candidate order). Only the
        drawn predicates are built: the candidates are counted in a first pass over the
        columns and the drawn ones taken in a second (a Python predicate per candidate
        took about 180 bytes per value held once, their values 8)."""
        sizes = []
        for j in range(self.n_features_in_):
            _, single, ends = self._candidates(j)
            sizes.append(int(np.count_nonzero(single)) + len(ends))
            del single
        starts = np.cumsum([0, *sizes])
        if starts[-1] > self.n_queries:
            chosen = np.sort(_choice(rng, int(starts[-1]), self.n_queries))
        else:
            chosen = np.arange(starts[-1])
        found = []
        for j in range(self.n_features_in_):
            picks = chosen[(chosen >= starts[j]) & (chosen < starts[j + 1])] - starts[j]
            if picks.size == 0:
                continue
            ordered, single, ends = self._candidates(j)
            n_once = sizes[j] - len(ends)
            once = ordered[_nth_true(single, picks[picks < n_once])]
            if self.column_kinds_[j] != NUMERIC:
                once = once.astype(np.intp)  # the codes' type in the records' encoding
            for i, k in enumerate(picks):
                if k < n_once:
                    found.append([(j, _EQ, once[i])])
                else:
                    found.append([(j, *ends[k - n_once])])
        return found

    def _row_values(self, row):
        """Release row ``row`` encoded, one scalar per column (float64, or an int64 code)."""
        rows = np.array([row])
        return [
            self._table.encoded(j, rows)[0]
            if kind == NUMERIC
            else np.intp(self._table.columns[j][row])
            for j, kind in enumerate(self.column_kinds_)
        ]

    def _medians(self):
        """The median of each numeric column's encoding (NaN for a categorical one)."""
        return np.array(
            [
                np.median(self._table.encoded(j), overwrite_input=True)  # a fresh copy
                if kind == NUMERIC
                else np.nan
                for j, kind in enumerate(self.column_kinds_)
            ]
        )

    def _shaped(self, row_values, columns, medians):
        """The multivariate predicate of a row's values on ``columns``."""
        terms = []
        for j in columns:
            value = row_values[j]
            if self.column_kinds_[j] == NUMERIC:
                terms.append((j, _GE if value >= medians[j] else _LE, value))
            else:
                terms.append((j, _EQ, value))
        return terms

    def _multivariate(self, rng):
        """Random predicates of ``n_columns`` columns, kept when they isolate one release row;
        tried in batches until ``n_queries`` are found or ``max_attempts`` tried.

        Each attempt takes a random row of the shuffle. Each batch is screened on the
        shuffle's first ``_SCREENS`` rows: a predicate that holds for two of them cannot
        single out one row, and most are rejected there; the others are counted on every
        row. The same predicates as counting every attempt on every row (the same draws,
        batch by batch), at a fraction of the comparisons."""
        p, n, table = self.n_features_in_, self.n_release_, self._table
        k = min(self.n_columns, p)
        medians = self._medians()
        numeric = np.array([kind == NUMERIC for kind in self.column_kinds_])
        head = self._order[: _SCREENS[-1]]
        screen = np.stack([table.encoded(j, head) for j in range(p)]).astype(np.float64)
        budget = 200 * self.n_queries if self.max_attempts is None else self.max_attempts
        batch = max(1, min(budget, _BLOCK_ELEMENTS // n))
        found, seen, tried = [], set(), 0
        while tried < budget and len(found) < self.n_queries:
            size = min(batch, budget - tried)
            tried += size
            rows = self._order[rng.randint(n, size=size)]
            chosen = np.sort(np.argsort(rng.random_sample((size, p)), axis=1)[:, :k], axis=1)
            values = np.column_stack([table.encoded(j, rows) for j in range(p)])
            counts = _screened_counts(
                screen,
                n,
                values.astype(np.float64),
                rows,
                chosen,
                partial(self._counts, medians=medians),
                numeric,
                medians,
            )
            for attempt in np.flatnonzero(counts == 1):
                predicate = self._shaped(self._row_values(rows[attempt]), chosen[attempt], medians)
                key = tuple(predicate)
                if key not in seen:
                    seen.add(key)
                    found.append(predicate)
                    if len(found) == self.n_queries:
                        break
        return found

    def _counts(self, rows, chosen, *, medians):
        """Release rows that each attempt's predicate (its release row ``rows``, its columns
        ``chosen``) holds for: one comparison per column, ``_COUNT_BLOCK`` rows at a time.

        A numeric term ``x / r >= v`` (or ``<=``) is compared on the raw values, as
        ``x >= t`` with ``t`` the end of its half-line (:func:`_raw_bound`): the same rows,
        without dividing the column."""
        table, n = self._table, self.n_release_
        terms = []
        for j in range(self.n_features_in_):
            attempts = np.flatnonzero((chosen == j).any(axis=1))
            if attempts.size == 0:
                continue
            if self.column_kinds_[j] != NUMERIC:
                terms.append((j, attempts, table.columns[j][rows[attempts]][:, None], None))
                continue
            raw = table.columns[j][rows[attempts]]
            values = table.encoded(j, rows[attempts])
            upper = values >= medians[j]
            bounds = [
                _raw_bound(float(x), table.scales[j], float(v), bool(u))
                for x, v, u in zip(raw, values, upper, strict=True)
            ]
            terms.append((j, attempts, np.array(bounds)[:, None], upper))
        counts = np.zeros(len(rows), dtype=np.intp)
        for start in range(0, n, _COUNT_BLOCK):
            block = slice(start, min(start + _COUNT_BLOCK, n))
            mask = np.ones((len(rows), block.stop - start), dtype=bool)
            for j, attempts, values, upper in terms:
                column = table.columns[j][block][None, :]
                if upper is None:
                    mask[attempts] &= column == values
                else:
                    mask[attempts[upper]] &= column >= values[upper]
                    mask[attempts[~upper]] &= column <= values[~upper]
            counts += mask.sum(axis=1)
        return counts

    def _random_predicates(self, rng):
        """Predicates of the same shapes from values drawn column by column from the release
        (random rows of the shuffle)."""
        medians = self._medians()
        shuffled = []
        for predicate in self._predicates:
            values = {
                j: self._row_values(self._order[rng.randint(self.n_release_)])[j]
                for j, _, _ in predicate
            }
            if self.mode == "univariate":
                shuffled.append([(j, op, values[j]) for j, op, _ in predicate])
            else:
                columns = [j for j, _, _ in predicate]
                shuffled.append(self._shaped(values, columns, medians))
        return shuffled

    def _shown(self, j, values):
        """The release's own value behind each encoded value of numeric column ``j``: that
        of the first row in the shuffle whose encoding equals it (as ``argmax`` over the
        shuffled encoding found it), read ``_COUNT_BLOCK`` rows of the shuffle at a time."""
        wanted = np.unique(np.asarray(values, dtype=np.float64))
        raw, scale, shown = self._table.columns[j], self._table.scales[j], {}
        for start in range(0, self.n_release_, _COUNT_BLOCK):
            held = raw[self._order[start : start + _COUNT_BLOCK]]
            encoded = held / scale
            at = np.minimum(np.searchsorted(wanted, encoded), len(wanted) - 1)
            hit = np.flatnonzero(wanted[at] == encoded)
            ids, first = np.unique(at[hit], return_index=True)  # the first hit of each value
            for i, f in zip(ids, first, strict=True):
                shown.setdefault(wanted[i], float(held[hit[f]]))
            if len(shown) == len(wanted):
                break
        return shown

    def _readable(self, predicates):
        """The predicates with column names, operator strings and the release's own values.

        A numeric value is shown as the release row that holds it (the first such row in
        the shuffle), not as ``x / r * r``; each numeric column is read once for all its
        terms."""
        operators = {_EQ: "==", _LE: "<=", _GE: ">="}
        shown = {}
        for j in sorted({j for p in predicates for j, _, _ in p}):
            if self.column_kinds_[j] != NUMERIC:
                continue
            values = {value for p in predicates for i, _, value in p if i == j}
            for value, raw in self._shown(j, list(values)).items():
                shown[j, value] = raw
        return [
            [
                (
                    self._names[j],
                    operators[op],
                    shown[j, value]
                    if self.column_kinds_[j] == NUMERIC
                    else self._table.categories[j][int(value)],
                )
                for j, op, value in predicate
            ]
            for predicate in predicates
        ]

    def _same_size(self, target_encoded, control_encoded, rng):
        n_t, n_c = len(target_encoded[0]), len(control_encoded[0])
        n = min(n_t, n_c)

        def take(encoded, size):
            if size == n:
                return encoded
            rows = np.sort(rng.choice(size, n, replace=False))
            return [c[rows] for c in encoded]

        return take(target_encoded, n_t), take(control_encoded, n_c)

    def evaluate(self, targets, control):
        """Count the predicates that single out one target and one control record; the risk.

        Parameters
        ----------
        targets : DataFrame or array-like of shape (n_targets, n_features)
            Records the release was generated from.
        control : DataFrame or array-like of shape (n_control, n_features)
            Records from the same population that the release cannot have seen (the
            non-members; never rows the release may have been built from). The larger of
            the two sets is subsampled to the size of the smaller.

        Returns
        -------
        result : DataFrame with one row, index ``mode``
            The columns of :meth:`AttributeInferenceRisk.evaluate`, with ``n_targets`` and
            ``n_control`` the number of predicates (each tried on both sets) and
            ``baseline_rate`` the success of random predicates on the targets.
        """
        _, target_encoded = self._encoded(targets)
        _, control_encoded = self._encoded(control)
        self._check_controls(target_encoded, control_encoded)
        rng = check_random_state(self.random_state)
        target_encoded, control_encoded = self._same_size(target_encoded, control_encoded, rng)
        baseline = _singles_out(target_encoded, self._random_predicates(rng)).mean()
        row = risk_row(
            _singles_out(target_encoded, self._predicates),
            _singles_out(control_encoded, self._predicates),
            float(baseline),
            self.confidence,
        )
        return pd.DataFrame([row], index=pd.Index([self.mode], name="mode"), columns=RESULT_COLUMNS)


def singling_out_risk(
    members,
    non_members,
    synthetic,
    *,
    n_queries=500,
    n_columns=3,
    confidence=0.95,
    random_state=None,
):
    """Univariate and multivariate singling-out risk of one release.

    :class:`SinglingOutRisk` in both modes, fitted on ``synthetic`` and evaluated on the
    ``members`` (the release's training records) against the ``non_members`` (the control
    records: population records the release never saw). Each row's interval is at
    ``confidence`` on its own, as the other disclosure risks (not corrected across rows).

    Parameters
    ----------
    members, non_members : DataFrame or array-like
        Records the release was and was not generated from, with the release's columns.
    synthetic : DataFrame or array-like
        The release.
    n_queries : int, default=500
        The most predicates per mode.
    n_columns : int, default=3
        Columns per multivariate predicate.
    confidence : float, default=0.95
        Level of the intervals.
    random_state : int, RandomState instance or None, default=None
        Seeds the two modes (one draw each).

    Returns
    -------
    result : DataFrame, index ``mode`` (``"univariate"``, ``"multivariate"``)
        The columns of :meth:`SinglingOutRisk.evaluate`. A mode that finds no predicate
        that singles out a release row is left out.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_mace.disclosure import singling_out_risk
    >>> rng = np.random.default_rng(0)
    >>> def table(n):
    ...     return pd.DataFrame({"age": rng.integers(18, 90, n), "job": rng.choice(list("abcd"), n),
    ...                          "town": rng.choice(list("xyz"), n)})
    >>> members, non_members = table(400), table(400)
    >>> fresh = singling_out_risk(members, non_members, table(400), random_state=0)
    >>> bool((fresh["risk_low"] <= 0).all() and (fresh["risk_high"] >= 0).all())
    True
    """
    rng = check_random_state(random_state)
    rows = []
    for mode in ("univariate", "multivariate"):
        risk = SinglingOutRisk(
            mode=mode,
            n_queries=n_queries,
            n_columns=n_columns,
            confidence=confidence,
            random_state=rng.randint(2**31),
        )
        try:
            risk.fit(synthetic)
        except ValueError as exc:
            if "singles out" not in str(exc):
                raise
            continue
        rows.append(risk.evaluate(members, non_members))
    return pd.concat(rows) if rows else pd.DataFrame(columns=RESULT_COLUMNS).rename_axis("mode")
