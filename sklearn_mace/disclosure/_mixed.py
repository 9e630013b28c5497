"""Mixed-type tables and the Gower-like distance of the disclosure attacks.

The distance between two records over a set of columns ``C`` is

``d(x, y) = Σ_{j ∈ C, numeric} |x_j − y_j| / r_j + Σ_{j ∈ C, categorical} 1[x_j ≠ y_j]``,

with ``r_j`` the range of column ``j`` in the release (1 for a constant column): Gower's
(1971) coefficient without the ``1/|C|`` factor, which changes no ranking. anonymeter's
``MixedTypeKNeighbors`` uses the same per-column terms; it takes the ranges over the release
and the queried batch together, which makes a record's neighbours depend on the other records
queried with it, so the ranges here come from the release alone (the attacker's view).
"""

from types import SimpleNamespace

import numpy as np
import pandas as pd
from sklearn.utils.validation import validate_data

__all__ = ["MixedTable", "validated_frame"]

NUMERIC, CATEGORICAL = "numeric", "categorical"
_MISSING = "<missing>"
_BLOCK_ELEMENTS = 2**21  # float64 entries of one query-by-release block (16 MiB)
# Releases of at least this many rows are searched with pruning (MixedTable.candidates);
# smaller ones by the dense pass, which is cheaper than the bookkeeping there.
_PRUNE_MIN_ROWS = 4096
# Rows whose exact distance gives the first upper bound on a query's k-th nearest distance.
_SAMPLE_ROWS = 2048
# Rows nearest on the first columns whose exact distance tightens that bound.
_BEST_ROWS = 256
# Relative slack of a pruning test on float sums taken in another order than the exact
# distance (their rounding differs by about p·2⁻⁵³ relative; 1e-9 is far above it).
_SLACK = 1e-9
# Release rows whose numeric terms a search sums at a time when it cannot start from the
# categorical pruning (float64 blocks of 512 KiB, not three release-long rows).
_DENSE_BLOCK_ROWS = 1 << 16


def validated_frame(estimator, X, *, reset):
    """Validate ``X`` and return it as a DataFrame with positional column labels.

    A pandas DataFrame keeps its column types (mixed tables); anything else is read as a
    numeric array by :func:`~sklearn.utils.validation.validate_data` (finite values only).
    Feature names and counts are checked against ``fit`` when ``reset`` is False.
    """
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        validate_data(estimator, X, skip_check_array=True, reset=reset)
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(
                f"Found array with {X.shape[0]} sample(s) and {X.shape[1]} feature(s) "
                f"(shape={X.shape}) while a minimum of 1 is required."
            )
        frame = X.reset_index(drop=True)
        frame.columns = range(frame.shape[1])
        return frame
    return pd.DataFrame(validate_data(estimator, X, dtype="numeric", reset=reset))


def column_kind(series):
    """``"numeric"`` for numeric dtypes (booleans excluded), else ``"categorical"``."""
    is_numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    return NUMERIC if is_numeric else CATEGORICAL


class MixedTable:
    """A release prepared for nearest-neighbour search under the Gower-like distance.

    A record is encoded with numeric columns divided by their release range and categorical
    values (missing values are one category, compared as text) as integer codes, ``-1`` for
    a value the release lacks, which matches nothing (:meth:`encode`). The release itself is
    not held encoded (issue #28: a release-sized float64 array, 458 MiB for a 10-million-row,
    6-column release): a numeric column is held as its raw float64 values (a view of the
    frame's column when it is a contiguous float64 column, else one converted copy) and
    divided by its range block by block in the searches (:meth:`encoded`: ``x / r`` is an
    elementwise float operation, the same floats whenever it is taken); a categorical one
    as codes of the smallest integer type that holds them.

    The rows stay in the frame's order. The attacks' shuffle (ties between equidistant rows
    go to the row that comes first in it) is ``order``: shuffled row ``i`` is release row
    ``order[i]``, and :attr:`rank` is the inverse (row ``r``'s place in the shuffle). The
    searches return release rows; their tie-breaks follow the shuffle, as when the table was
    held shuffled.

    Parameters
    ----------
    frame : DataFrame with positional column labels
        The release.
    names : list of str
        Column names used in error messages.
    order : ndarray of int, default=None
        The shuffle of the release's rows; ``None`` keeps the frame's order.
    """

    def __init__(self, frame, names, order=None):
        self.names = list(names)
        self.kinds = [column_kind(frame[j]) for j in frame.columns]
        self.n_rows = len(frame)
        self.order = np.arange(self.n_rows) if order is None else order
        self._rank = None
        self.scales, self.categories, self.columns = {}, {}, []
        for j, kind in enumerate(self.kinds):
            if kind == NUMERIC:
                values = self.numeric_values(frame, j, contiguous=True)
                spread = float(values.max() - values.min())
                self.scales[j] = spread if spread > 0 else 1.0
                self.columns.append(values)
            else:
                self.categories[j], codes = self._codes(frame[j])
                self.columns.append(codes)
        self._plan = None

    @property
    def rank(self):
        """Each release row's place in the shuffle (the inverse of ``order``; computed once,
        4 bytes a row when ``order`` is int32)."""
        if self._rank is None:
            rank = np.empty_like(self.order)
            for start in range(0, self.n_rows, _DENSE_BLOCK_ROWS):  # no release-long arange
                stop = min(start + _DENSE_BLOCK_ROWS, self.n_rows)
                rank[self.order[start:stop]] = np.arange(start, stop, dtype=rank.dtype)
            self._rank = rank
        return self._rank

    def _codes(self, series):
        """The categories of a release column, in the order they first occur in the shuffle
        (as ``pd.unique`` of the shuffled column gave them), and the rows' codes."""
        codes, uniques = pd.factorize(self._text(series))
        dtype = np.min_scalar_type(-len(uniques) - 1)
        codes = codes.astype(dtype)
        first = pd.unique(codes[self.order])  # codes in order of first occurrence
        recode = np.empty(len(uniques), dtype=dtype)
        recode[first] = np.arange(len(uniques), dtype=dtype)
        return pd.Index(uniques[first]), recode[codes]

    def numeric_values(self, frame, j, *, contiguous=False):
        """Column ``j`` as finite float64, or a ValueError naming the column.

        A float64 column is returned as the frame holds it, without a copy (read-only under
        pandas' copy-on-write); with ``contiguous``, a column that is not contiguous (a 2-D
        array's column) is copied into one (the searches read it block by block)."""
        series = frame[j]
        try:
            if series.dtype == np.float64:
                values = series.to_numpy()
            else:
                values = pd.to_numeric(series, errors="raise").to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"Column {self.names[j]!r} is numeric in the release but holds non-numeric "
                f"values here ({exc})."
            ) from None
        if not np.all(np.isfinite(values)):
            raise ValueError(
                f"Column {self.names[j]!r} contains NaN or inf; numeric columns must be "
                "finite (impute or drop the rows first)."
            )
        return np.ascontiguousarray(values) if contiguous else values

    def encoded(self, j, rows=None, out=None):
        """Column ``j``'s encoding at release rows ``rows`` (a slice or indices; all when
        None): the values divided by the range (float64, into ``out`` when given) for a
        numeric column, the codes for a categorical one."""
        values = self.columns[j] if rows is None else self.columns[j][rows]
        if self.kinds[j] != NUMERIC:
            return values
        if out is None and not np.may_share_memory(values, self.columns[j]):
            out = values  # a fresh gathered copy: divided in place
        return np.divide(values, self.scales[j], out=out)

    def encoded_block(self, start, stop):
        """Rows ``start:stop`` encoded as :meth:`encode` encodes a record (int64 codes)."""
        rows = slice(start, stop)
        return [
            self.encoded(j, rows) if kind == NUMERIC else self.columns[j][rows].astype(np.intp)
            for j, kind in enumerate(self.kinds)
        ]

    def shuffled(self):
        """The whole release encoded, in the shuffle's order: the table the attacks held
        before issue #28 (release-sized; for the dense pass of small releases and checks)."""
        return [column[self.order] for column in self.encoded_block(0, self.n_rows)]

    @staticmethod
    def _text(series):
        series = series.astype(object)
        return series.where(series.notna(), _MISSING).astype(str).to_numpy()

    def encode(self, frame):
        """Per column: scaled float64 values (numeric) or int64 codes (categorical)."""
        columns = []
        for j, kind in enumerate(self.kinds):
            if kind == NUMERIC:
                columns.append(self.numeric_values(frame, j) / self.scales[j])
            else:
                columns.append(self.categories[j].get_indexer(self._text(frame[j])))
        return columns

    def _contribution(self, queries, j, start, stop, release, out=None):
        """Column ``j``'s distance term between queries ``start:stop`` and every row of
        ``release`` (encoded columns, :meth:`shuffled`), written into ``out`` when given (no
        temporary: the passes are memory-bound)."""
        q, r = queries[j][start:stop, None], release[j][None, :]
        if out is None:
            out = np.empty((stop - start, r.shape[1]))
        if self.kinds[j] == NUMERIC:
            np.subtract(q, r, out=out)
            return np.abs(out, out=out)
        return np.not_equal(q, r, out=out, casting="unsafe")

    def _distance(self, queries, columns, start, stop, out, scratch, release):
        """``out`` = the sum over ``columns`` (in order) of their terms to the rows of
        ``release``; ``scratch`` alike."""
        out[...] = 0.0
        for j in columns:
            out += self._contribution(queries, j, start, stop, release, out=scratch)
        return out

    @staticmethod
    def _nearest(distance, n_neighbors):
        if n_neighbors == 1:
            return np.argmin(distance, axis=1)[:, None]
        return np.argsort(distance, axis=1, kind="stable")[:, :n_neighbors]

    # ---------------------------------------------------------------- pruned search
    #
    # A record's nearest release rows are found without summing every column for every row
    # (issue #28: on a 200 000-row, 27-column release this was 22 of the audit's 80 CPU s).
    # The distance is a sum of non-negative terms, so a partial sum over some columns is a
    # lower bound on it. For each query: (1) an upper bound U on its k-th nearest distance,
    # the k-th smallest exact distance to a sample of rows; (2) the categorical columns,
    # most often unequal first, counted for every row as small integers; (3) the numeric
    # columns, largest mean term first, added on the rows still in play, which are dropped
    # once their partial sum exceeds U. What is left holds every row at or within the k-th
    # nearest distance; their exact distances (the same float operations, in the same
    # order, as the dense pass) decide, so the neighbours, ties and tie-breaks are those of
    # the dense pass (tests/disclosure/test_mixed_pruning.py).

    def _search_plan(self):
        """Column order, compact codes and the bound's sample rows for :meth:`candidates`
        (computed once, from the shuffle's first rows and rows spread over it)."""
        if self._plan is None:
            n = self.n_rows
            half = min(n // 2, 4096)
            head = self.order[: 2 * half]
            mean = {}
            for j, kind in enumerate(self.kinds):  # the shuffle's first rows: random pairs
                pairs = self.encoded(j, head)
                a, b = pairs[:half], pairs[half : 2 * half]
                mean[j] = float(np.mean(np.abs(a - b) if kind == NUMERIC else a != b))
            codes = {j: self.columns[j] for j in self.categories}
            order = sorted(mean, key=lambda j: -mean[j])
            spread = np.unique(np.linspace(0, n - 1, min(n, _SAMPLE_ROWS)).astype(np.intp))
            sample = self.order[spread]
            self._plan = (order, codes, sample, [self.encoded(j, sample) for j in mean])
        return self._plan

    def _term(self, query, j, rows=None, encoded=None):
        """Column ``j``'s term between one query and the release rows ``rows`` (all when
        None; or the rows ``encoded`` holds): the float64 values of :meth:`_contribution`."""
        r = encoded[j] if encoded is not None else self.encoded(j, rows)
        if self.kinds[j] == NUMERIC:
            out = np.subtract(query[j], r)
            return np.abs(out, out=out)
        return np.not_equal(query[j], r).astype(np.float64)

    def distances(self, query, columns, rows, encoded=None):
        """Exact distances from one query to the release rows ``rows`` (or those ``encoded``
        holds) over ``columns``: bit-identical to :meth:`_distance` (zero, then each
        column's term added in order)."""
        out = np.zeros(len(rows))
        for j in columns:
            out += self._term(query, j, rows, encoded)
        return out

    def candidates(self, query, columns, n_neighbors, leave_one_out=False, work=None):
        """Release rows (ascending) that hold every row at or within one query's
        ``n_neighbors``-th smallest distance over ``columns``.

        ``query`` is one encoded record (a value per column). With ``leave_one_out``, the
        distance is over ``columns`` but any one of them: every row within the
        ``n_neighbors``-th smallest distance without column ``s`` is kept, for every ``s``.
        ``work`` (from :meth:`search_buffers`) is reused scratch memory for a run of queries.
        """
        n = self.n_rows
        order, codes, sample, sample_encoded = self._search_plan()
        if n_neighbors > len(sample):
            return np.arange(n)
        work = self.search_buffers() if work is None else work
        wanted = set(columns)
        cats = [j for j in order if j in wanted and j in codes]
        nums = [j for j in order if j in wanted and j not in codes]
        bound = _kth(self.distances(query, columns, sample, sample_encoded), n_neighbors)
        count = None
        if cats:
            count, unequal = work.count, work.unequal
            count[...] = 0
            for j in cats:
                np.not_equal(codes[j], int(query[j]), out=unequal)
                np.add(count, unequal, out=count, casting="unsafe")
            # the rows unequal on the fewest categorical columns bound the k-th distance too
            levels = np.cumsum(np.bincount(count))
            best = np.flatnonzero(count <= np.searchsorted(levels, _BEST_ROWS))[:_BEST_ROWS]
            if len(best) >= n_neighbors:
                bound = min(bound, _kth(self.distances(query, columns, best), n_neighbors))
            # integer counts are exact: an exact distance is at least its count (minus the
            # one left out, for leave_one_out: count − 1 ≤ U), whatever the numeric terms
            rows = np.flatnonzero(count <= bound + 1 if leave_one_out else count <= bound)
            if not nums:
                return rows
            if len(rows) <= n // 2:  # pruned: the numeric columns on the rows in play
                return self._numeric_pruned(query, nums, bound, leave_one_out, rows, count, work)
        # pruned little, or no categorical column: the numeric columns block by block of
        # rows (issue #28: three release-long float64 rows were 229 MiB at 10 million rows)
        found = []
        for start in range(0, n, _DENSE_BLOCK_ROWS):
            block = slice(start, min(start + _DENSE_BLOCK_ROWS, n))
            kept = self._numeric_pruned(query, nums, bound, leave_one_out, None, count, work, block)
            found.append(kept + start)
        return np.concatenate(found)

    def _numeric_pruned(self, query, nums, bound, leave_one_out, rows, count, work, block=None):
        """The rows of ``block`` (all; or ``rows`` of it) whose partial sums over the
        numeric columns ``nums`` (largest mean term first) stay within the bound, pruned
        after every second column; the categorical ``count`` starts the sums.

        A row's partial sums are the same float operations wherever it is searched (alone
        or in a block), and the bound is only ever loosened by the slack (relative to the
        largest sum in play, at least the row's own), so every row at or within the k-th
        nearest distance stays: the exact distances of what is left decide, as in the
        dense pass (``tests/disclosure/test_mixed_pruning.py``). A column's terms are
        ``|q − x / r|`` with ``x / r`` taken here (:meth:`encoded`), into ``work.term``
        while the whole block is in play."""
        offset = 0 if block is None else block.start  # rows of a block are block-relative
        block = slice(None) if block is None else block
        total = top = None
        if count is not None:
            total = count[block] if rows is None else count[block][rows]
            total = total.astype(np.float64)
            top = np.greater(total, 0).astype(np.float64) if leave_one_out else None
        for step, j in enumerate(nums):
            if rows is not None:
                term = self.encoded(j, rows + offset if offset else rows)
            elif total is None:  # the first column's terms start the sums
                term = self.encoded(j, block)
            else:
                size = len(total)
                term = self.encoded(j, block, out=work.term[:size])
            np.subtract(query[j], term, out=term)
            np.abs(term, out=term)
            if total is None:
                total, term = term, None
                top = total.copy() if leave_one_out else None
            else:
                np.add(total, term, out=total)
                if leave_one_out:
                    np.maximum(top, term, out=top)
            if step % 2 == 0 and step + 1 < len(nums):
                continue
            if leave_one_out:
                lower = np.subtract(total, top, out=term)
                limit = bound + _SLACK * (float(total.max()) + bound)
            else:  # lower = total: total ≤ U + slack·(total + U), solved for total
                lower, limit = total, bound * (1 + _SLACK) / (1 - _SLACK)
            kept = np.flatnonzero(lower <= limit)
            rows = kept if rows is None else rows[kept]
            if len(rows) == 0:
                return rows
            total = total[kept]
            top = top[kept] if leave_one_out else None
        return np.arange(len(total)) if rows is None else rows

    def search_buffers(self):
        """Scratch memory of :meth:`candidates`, reused over a run of queries (release-sized
        arrays allocated once instead of per query): the categorical counts (1 or 4 bytes
        a row and a boolean row); the numeric terms go block by block."""
        n = self.n_rows
        count = np.uint8 if len(self.categories) < 255 else np.int32
        return SimpleNamespace(
            count=np.empty(n, dtype=count) if self.categories else None,
            unequal=np.empty(n, dtype=bool) if self.categories else None,
            term=np.empty(min(n, _DENSE_BLOCK_ROWS)),
        )

    def _pruned(self):
        """Whether searches over this release use :meth:`candidates`."""
        return self.n_rows >= _PRUNE_MIN_ROWS

    def kneighbors(self, queries, columns, n_neighbors):
        """Indices of the ``n_neighbors`` release rows nearest each query over ``columns``.

        Ties go to the release row that comes first in the shuffle (``order``: ties are
        broken at random). Exact, in blocks of at most 16 MiB of distances, or pruned
        (:meth:`candidates`) on large releases, with the same result.

        Parameters
        ----------
        queries : list of ndarray
            Encoded query columns (from :meth:`encode`).
        columns : list of int
        n_neighbors : int

        Returns
        -------
        indices : ndarray of shape (n_queries, n_neighbors), nearest first
            Release rows (the frame's order).
        """
        n_queries, n_release = len(queries[0]), self.n_rows
        indices = np.empty((n_queries, n_neighbors), dtype=np.intp)
        if self._pruned():
            work = self.search_buffers()
            for i in range(n_queries):
                query = [column[i] for column in queries]
                rows = self.candidates(query, columns, n_neighbors, work=work)
                distance = self.distances(query, columns, rows)
                indices[i] = self._first(rows, distance, n_neighbors)
            return indices
        release = self.shuffled()  # a small release: the dense pass in the shuffle's order
        block = max(1, _BLOCK_ELEMENTS // n_release)
        buffers = np.empty((2, min(block, n_queries), n_release))
        for start in range(0, n_queries, block):
            stop = min(start + block, n_queries)
            out, scratch = buffers[:, : stop - start]
            distance = self._distance(queries, columns, start, stop, out, scratch, release)
            indices[start:stop] = self.order[self._nearest(distance, n_neighbors)]
        return indices

    def _first(self, rows, distance, n_neighbors):
        """The ``n_neighbors`` of ``rows`` at the smallest ``distance``, nearest first, ties
        to the first in the shuffle: the stable argsort of the dense pass over the table held
        shuffled, taken on the rows at or within the k-th smallest distance alone."""
        if len(rows) > n_neighbors:
            near = np.flatnonzero(distance <= _kth(distance, n_neighbors))
            rows, distance = rows[near], distance[near]
        return rows[np.lexsort((self.rank[rows], distance))[:n_neighbors]]

    def kneighbors_leave_one_out(self, queries, secrets, n_neighbors):
        """:meth:`kneighbors` over all columns but ``s``, for each ``s`` in ``secrets``.

        One pass over the columns instead of one per secret: the distance without column
        ``s`` is the sum of the columns before ``s`` (accumulated left to right) plus the sum
        of those after it (accumulated right to left). Release rows that agree on every
        column but ``s`` get bit-identical distances, so exact ties stay exact.

        Returns
        -------
        indices : dict of int -> ndarray of shape (n_queries, n_neighbors)
            Release rows (the frame's order).
        """
        n_queries, n_release = len(queries[0]), self.n_rows
        p = len(self.kinds)
        block = max(1, _BLOCK_ELEMENTS // (2 * p * n_release))
        indices = {s: np.empty((n_queries, n_neighbors), dtype=np.intp) for s in secrets}
        if self._pruned():
            work = self.search_buffers()
            for i in range(n_queries):
                query = [column[i] for column in queries]
                rows = self.candidates(query, range(p), n_neighbors, True, work)
                parts = [self._term(query, j, rows) for j in range(p)]
                for s, found in self._leave_one_out(rows, parts, indices, n_neighbors).items():
                    indices[s][i] = found
            return indices
        # the terms, the sums after each column and two rows of work, reused block by block
        release = self.shuffled()
        buffers = np.empty((2 * p + 3, min(block, n_queries), n_release))
        for start in range(0, n_queries, block):
            stop = min(start + block, n_queries)
            rows = buffers[:, : stop - start]
            parts, after, before, both = rows[:p], rows[p : 2 * p + 1], rows[-2], rows[-1]
            for j in range(p):
                self._contribution(queries, j, start, stop, release, out=parts[j])
            after[p] = 0.0
            for j in range(p - 1, -1, -1):
                np.add(after[j + 1], parts[j], out=after[j])
            before[...] = 0.0
            for s in range(p):
                if s in indices:
                    np.add(before, after[s + 1], out=both)
                    indices[s][start:stop] = self.order[self._nearest(both, n_neighbors)]
                before += parts[s]
        return indices

    def _leave_one_out(self, rows, parts, secrets, n_neighbors):
        """One query's nearest among ``rows`` (``parts``: its terms there, one 1-D array
        per column) without each secret: the float operations of the dense pass, in its
        order (sums before ``s`` left to right, after it right to left)."""
        p, m = len(parts), len(parts[0])
        after = np.zeros((p + 1, m))
        for j in range(p - 1, -1, -1):
            np.add(after[j + 1], parts[j], out=after[j])
        before, found = np.zeros(m), {}
        for s in range(p):
            if s in secrets:
                found[s] = self._first(rows, before + after[s + 1], n_neighbors)
            before += parts[s]
        return found


def _kth(values, k):
    """The ``k``-th smallest of ``values``."""
    return float(np.partition(values, k - 1)[k - 1])
