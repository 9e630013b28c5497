"""Mixed-type tables and the Gower-like distance of the disclosure attacks.

The distance between two records over a set of columns ``C`` is

``d(x, y) = Σ_{j ∈ C, numeric} |x_j − y_j| / r_j + Σ_{j ∈ C, categorical} 1[x_j ≠ y_j]``,

with ``r_j`` the range of column ``j`` in the release (1 for a constant column): Gower's
(1971) coefficient without the ``1/|C|`` factor, which changes no ranking. anonymeter's
``MixedTypeKNeighbors`` uses the same per-column terms; it takes the ranges over the release
and the queried batch together, which makes a record's neighbours depend on the other records
queried with it, so the ranges here come from the release alone (the attacker's view).
"""

import numpy as np
import pandas as pd
from sklearn.utils.validation import validate_data

__all__ = ["MixedTable", "validated_frame"]

NUMERIC, CATEGORICAL = "numeric", "categorical"
_MISSING = "<missing>"
_BLOCK_ELEMENTS = 2**21  # float64 entries of one query-by-release block (16 MiB)


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
    """A release encoded for nearest-neighbour search under the Gower-like distance.

    Numeric columns are divided by their release range; categorical values (missing values
    are one category, compared as text) become integer codes, ``-1`` for a value the release
    lacks, which matches nothing.

    Parameters
    ----------
    frame : DataFrame with positional column labels
        The release.
    names : list of str
        Column names used in error messages.
    """

    def __init__(self, frame, names):
        self.names = list(names)
        self.kinds = [column_kind(frame[j]) for j in frame.columns]
        self.scales, self.categories = {}, {}
        for j, kind in enumerate(self.kinds):
            if kind == NUMERIC:
                values = self.numeric_values(frame, j)
                spread = float(values.max() - values.min())
                self.scales[j] = spread if spread > 0 else 1.0
            else:
                self.categories[j] = pd.Index(pd.unique(self._text(frame[j])))
        self.encoded = self.encode(frame)

    def numeric_values(self, frame, j):
        """Column ``j`` as finite float64, or a ValueError naming the column."""
        try:
            values = pd.to_numeric(frame[j], errors="raise").to_numpy(dtype=np.float64)
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
        return values

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

    def _contribution(self, queries, j, start, stop, out=None):
        """Column ``j``'s distance term between queries ``start:stop`` and every release row,
        written into ``out`` when given (no temporary: the passes are memory-bound)."""
        q, r = queries[j][start:stop, None], self.encoded[j][None, :]
        if out is None:
            out = np.empty((stop - start, r.shape[1]))
        if self.kinds[j] == NUMERIC:
            np.subtract(q, r, out=out)
            return np.abs(out, out=out)
        return np.not_equal(q, r, out=out, casting="unsafe")

    def _distance(self, queries, columns, start, stop, out, scratch):
        """``out`` = the sum over ``columns`` (in order) of their terms; ``scratch`` alike."""
        out[...] = 0.0
        for j in columns:
            out += self._contribution(queries, j, start, stop, out=scratch)
        return out

    @staticmethod
    def _nearest(distance, n_neighbors):
        if n_neighbors == 1:
            return np.argmin(distance, axis=1)[:, None]
        return np.argsort(distance, axis=1, kind="stable")[:, :n_neighbors]

    def kneighbors(self, queries, columns, n_neighbors):
        """Indices of the ``n_neighbors`` release rows nearest each query over ``columns``.

        Ties go to the release row that comes first (callers shuffle the release once, so
        ties are broken at random). Exact, in blocks of at most 16 MiB of distances.

        Parameters
        ----------
        queries : list of ndarray
            Encoded query columns (from :meth:`encode`).
        columns : list of int
        n_neighbors : int

        Returns
        -------
        indices : ndarray of shape (n_queries, n_neighbors), nearest first
        """
        n_queries, n_release = len(queries[0]), len(self.encoded[0])
        block = max(1, _BLOCK_ELEMENTS // n_release)
        indices = np.empty((n_queries, n_neighbors), dtype=np.intp)
        buffers = np.empty((2, min(block, n_queries), n_release))
        for start in range(0, n_queries, block):
            stop = min(start + block, n_queries)
            out, scratch = buffers[:, : stop - start]
            distance = self._distance(queries, columns, start, stop, out, scratch)
            indices[start:stop] = self._nearest(distance, n_neighbors)
        return indices

    def kneighbors_leave_one_out(self, queries, secrets, n_neighbors):
        """:meth:`kneighbors` over all columns but ``s``, for each ``s`` in ``secrets``.

        One pass over the columns instead of one per secret: the distance without column
        ``s`` is the sum of the columns before ``s`` (accumulated left to right) plus the sum
        of those after it (accumulated right to left). Release rows that agree on every
        column but ``s`` get bit-identical distances, so exact ties stay exact.

        Returns
        -------
        indices : dict of int -> ndarray of shape (n_queries, n_neighbors)
        """
        n_queries, n_release = len(queries[0]), len(self.encoded[0])
        p = len(self.kinds)
        block = max(1, _BLOCK_ELEMENTS // (2 * p * n_release))
        indices = {s: np.empty((n_queries, n_neighbors), dtype=np.intp) for s in secrets}
        # the terms, the sums after each column and two rows of work, reused block by block
        buffers = np.empty((2 * p + 3, min(block, n_queries), n_release))
        for start in range(0, n_queries, block):
            stop = min(start + block, n_queries)
            rows = buffers[:, : stop - start]
            parts, after, before, both = rows[:p], rows[p : 2 * p + 1], rows[-2], rows[-1]
            for j in range(p):
                self._contribution(queries, j, start, stop, out=parts[j])
            after[p] = 0.0
            for j in range(p - 1, -1, -1):
                np.add(after[j + 1], parts[j], out=after[j])
            before[...] = 0.0
            for s in range(p):
                if s in indices:
                    np.add(before, after[s + 1], out=both)
                    indices[s][start:stop] = self._nearest(both, n_neighbors)
                before += parts[s]
        return indices
