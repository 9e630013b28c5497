"""What the disclosure estimators share: fitting on a release and naming its columns."""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._controls import check_controls
from ._mixed import NUMERIC, MixedTable, validated_frame

__all__ = ["ReleaseMixin"]


class ReleaseMixin(BaseEstimator):
    """``fit(release)`` for the disclosure attacks (not used directly).

    ``fit`` validates the release, shuffles its rows once (``random_state``: ties between
    equidistant release rows go to a random one) and prepares it for the Gower-like distance
    (:class:`~sklearn_mace.disclosure._mixed.MixedTable`). The shuffle is kept as the rows'
    order (``_order``: shuffled row ``i`` is row ``_order[i]`` of the release ``_frame``),
    not as a shuffled copy of the table, and the table holds the release's own numeric
    columns, not an encoded copy (issue #28: 458 MiB each for a 10-million-row, 6-column
    release); the searches return release rows, and :meth:`_raw` reads their values.
    """

    def _fit_release(self, X):
        frame = validated_frame(self, X, reset=True)
        names = getattr(self, "feature_names_in_", None)
        self._names = [str(c) for c in names] if names is not None else list(range(frame.shape[1]))
        order = check_random_state(self.random_state).permutation(len(frame))
        if len(order) < 2**31:  # half the memory; the same rows
            order = order.astype(np.int32)
        self._frame, self._order = frame, order
        self._table = MixedTable(frame, self._names, order=order)
        self.column_kinds_ = np.asarray(self._table.kinds, dtype=object)
        self.n_release_ = len(frame)
        return frame

    def _raw(self, j, rows=None):
        """Column ``j``'s values at release rows ``rows`` (any shape; all when None):
        float64 for a numeric column (:meth:`MixedTable.numeric_values`, the table's own
        array, read-only), the values as given otherwise."""
        if self.column_kinds_[j] == NUMERIC:
            values = self._table.columns[j]
        else:
            values = self._frame[j].to_numpy()
        return values if rows is None else values[rows]

    def _encoded(self, X):
        """Validate rows to attack against the release; return (frame, encoded columns)."""
        check_is_fitted(self)
        frame = validated_frame(self, X, reset=False)
        return frame, self._table.encode(frame)

    def _check_controls(self, target_encoded, control_encoded):
        """Warn when the release holds control records verbatim (see ``_controls``)."""
        check_controls(
            self._table,
            target_encoded,
            control_encoded,
            n_release=self.n_release_,
            n_targets=len(target_encoded[0]),
            stacklevel=4,
        )

    def _positions(self, columns, parameter):
        """Positions of ``columns`` (names, or positions for arrays), with a clear error."""
        scalar = isinstance(columns, (str, Integral))
        positions = []
        for column in [columns] if scalar else list(columns):
            if isinstance(column, Integral) and not isinstance(column, bool):
                if not 0 <= column < self.n_features_in_:
                    raise ValueError(
                        f"{parameter}: column position {column} is out of range for the "
                        f"{self.n_features_in_} column(s) of the release."
                    )
                positions.append(int(column))
            elif str(column) in self._names and isinstance(self._names[0], str):
                positions.append(self._names.index(str(column)))
            else:
                raise ValueError(
                    f"{parameter}: column {column!r} is not in the release; its columns are "
                    f"{self._names}."
                )
        if len(set(positions)) != len(positions):
            raise ValueError(f"{parameter} names a column twice: {columns!r}.")
        return positions
