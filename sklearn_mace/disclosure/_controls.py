"""Control records must be records the release cannot have seen; a warning when it has.

anonymeter's risk ``(a − c)/(1 − c)`` compares an attack on the release's training records
(rate ``a``) with the same attack on control records (rate ``c``). The comparison is only
fair when the release knows nothing about the controls: population records the generator
never saw — the audit's non-members, as anonymeter's control set. Records the release may have
been built from, such as a reference sample that also fills the release, make the controls
look exposed too: a release of 500 members verbatim and 4 500 reference rows read risks
−0.385 (attribute inference) and −0.051 (linkability) with the reference rows among the
controls, and clearly positive risks with the non-members alone.

:func:`check_controls` counts the controls that appear verbatim in the release and warns
(:class:`ControlCopyWarning`) when there are more than chance explains. Chance comes from the
real data: the share ``s`` of controls that equal some target row (two independent samples
of the population) gives the probability that a control equals one population row, so a
release of ``n_release`` population-like rows holds a given control with probability about
``1 − (1 − s)^(n_release / n_targets)``; the warning needs a one-sided binomial p-value
below 0.001 and one percentage point above that rate.
"""

import warnings

import numpy as np
import pandas as pd
from scipy.stats import binom

__all__ = ["ControlCopyWarning", "check_controls"]

P_VALUE = 1e-3
MARGIN = 0.01
_HASH_BLOCK = 1 << 18  # release rows hashed at once


class ControlCopyWarning(UserWarning):
    """The release holds control records verbatim: the disclosure risks are understated."""


def _row_hashes(encoded):
    """One 64-bit hash per row of a table encoded as a list of columns."""
    frame = pd.DataFrame({j: np.asarray(column) for j, column in enumerate(encoded)})
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


def _share_in(rows, table, block=None):
    """Share of ``rows`` found in ``table`` (encoded columns, or a
    :class:`~sklearn_mace.disclosure._mixed.MixedTable` encoded block by block), hashed
    ``block`` rows at a time (``_HASH_BLOCK`` when None; a row's hash does not depend on
    the others: no table-sized copy or encoding of a large release)."""
    block = _HASH_BLOCK if block is None else block
    if hasattr(table, "encoded_block"):
        n, rows_of = table.n_rows, table.encoded_block
    else:
        n, rows_of = len(table[0]), lambda start, stop: [c[start:stop] for c in table]
    hashes = _row_hashes(rows)
    found = np.zeros(len(hashes), dtype=bool)
    for start in range(0, n, block):
        found |= np.isin(hashes, _row_hashes(rows_of(start, start + block)))
    return float(found.mean())


def check_controls(release, targets, control, *, n_release, n_targets, stacklevel=3):
    """Warn when the release holds more control records verbatim than chance explains.

    Parameters
    ----------
    release : MixedTable or list of ndarray
        The release: a :class:`~sklearn_mace.disclosure._mixed.MixedTable` (encoded
        block by block), or its columns encoded as the records are.
    targets, control : list of ndarray
        The records, encoded column by column (numbers scaled, categories as codes;
        :meth:`~sklearn_mace.disclosure._mixed.MixedTable.encode`).
    n_release, n_targets : int
        Their numbers of rows.
    stacklevel : int, default=3
        Passed to :func:`warnings.warn`.

    Returns
    -------
    copied : float
        The share of control records found verbatim in the release.
    """
    n_control = len(control[0])
    copied = _share_in(control, release)
    if copied == 0.0:
        return copied
    coincide = _share_in(control, targets)
    expected = 1.0 - (1.0 - coincide) ** (n_release / max(n_targets, 1))
    k = int(round(copied * n_control))
    p_value = float(binom.sf(k - 1, n_control, min(expected, 1.0)))
    if p_value < P_VALUE and copied > expected + MARGIN:
        warnings.warn(
            f"The release holds {k} of the {n_control} control records verbatim "
            f"({copied:.0%}; about {expected:.0%} would by chance): it has seen them, so "
            "they do not measure what an attacker learns about unseen records and the "
            "risks are understated. Use control records the release cannot have seen (the "
            "non-members), never rows it may have been built from (e.g. the reference "
            "sample).",
            ControlCopyWarning,
            stacklevel=stacklevel,
        )
    return copied
