"""The data-quality gate: what is wrong with the tables, said before any analysis runs.

Both audits read their records through here:

* **records among both members and non-members** (:func:`check_overlapping_records`): a
  record that is a member *and* a non-member makes the two classes share it; every attack
  then sees the same record labelled both ways, and the certified ε falls towards zero (issue
  #25: 100 shared records took a release's ε from 1.14 to 0.30). It is an input error naming
  the rows, unless the caller drops them from both tables (``drop_overlapping_records=True``).
  Where records repeat within the tables themselves (few discrete columns: different people
  with equal records), equal records across the tables are an error only when a random split
  of the pooled records would rarely share as many (:func:`overlap_p_value`, p ≤ 0.001);
  otherwise they are kept, with a warning;
* **notes** (:func:`table_notes`), printed with the summary and listed in the report:
  duplicated rows of a table, and columns constant or without values in one table.

Rows are compared with :func:`row_keys`: numbers as numbers (``39`` equals ``39.0``), anything
else as text, a missing value equal to a missing value.
"""

import warnings

import numpy as np
import pandas as pd

from ._io import AuditInputError, AuditInputWarning

__all__ = [
    "check_overlapping_records",
    "in_sorted",
    "overlap_p_value",
    "repeated_rows",
    "row_keys",
    "table_notes",
]

SHOWN = 5  # rows named in a message
OVERLAP_P = 1e-3  # a shared-record count this improbable under a random split is an error
OVERLAP_PERMUTATIONS = 999
KEY_BLOCK = 1 << 16  # rows hashed at a time (row_keys)


def row_keys(tables, columns, *, block=KEY_BLOCK):
    """A 64-bit key per row of every table, equal for rows equal on ``columns``.

    Numbers are compared as numbers (a column whose non-missing values all parse as numbers
    in every table is compared as float, so ``39`` equals ``39.0`` and ``-0.0`` equals
    ``0.0``), anything else as text; a missing value equals a missing value. Keys are
    pandas' row hashes: two different rows share a key with probability about 2⁻⁶⁴.

    The tables are hashed ``block`` rows at a time (a row's hash depends on its own values
    only), each column taken as the type the pooled tables give it: the memory beyond the
    keys (8 bytes a row) is a few blocks, however large a release.

    Parameters
    ----------
    tables : dict of str -> DataFrame
        The tables.
    columns : list of str
        The columns compared.
    block : int, default=KEY_BLOCK
        Rows hashed at a time.

    Returns
    -------
    keys : dict of str -> ndarray of uint64
        One key per row of each table.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_mace.report._quality import row_keys
    >>> keys = row_keys({"a": pd.DataFrame({"x": [39, 40]}),
    ...                  "b": pd.DataFrame({"x": ["39.0", "41"]})}, ["x"])
    >>> bool(keys["a"][0] == keys["b"][0]), bool(keys["a"][1] == keys["b"][1])
    (True, False)
    """
    columns = list(columns)
    if not columns:
        return {name: np.zeros(len(frame), dtype=np.uint64) for name, frame in tables.items()}
    modes = [_key_mode(tables, column, block) for column in columns]
    keys = {}
    for name, frame in tables.items():
        keys[name] = np.empty(len(frame), dtype=np.uint64)
        for start in range(0, len(frame), block):
            part = frame.iloc[start : start + block]
            comparable = {
                position: _comparable(part[column], dtype, mode)
                for position, (column, (dtype, mode)) in enumerate(zip(columns, modes, strict=True))
            }
            keys[name][start : start + block] = pd.util.hash_pandas_object(
                pd.DataFrame(comparable), index=False
            ).to_numpy()
    return keys


def _key_mode(tables, column, block):
    """``(pooled dtype, mode)`` of a column for :func:`row_keys`: the dtype that
    concatenating the tables gives it (read off their first rows), and ``"number"`` (numeric
    or boolean), ``"parsed"`` (text whose non-missing values all parse as numbers, in every
    table) or ``"text"``."""
    dtype = _pooled_dtype([frame[column] for frame in tables.values()])
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        return dtype, "number"
    given = parsed = 0
    for frame in tables.values():
        for start in range(0, len(frame), block):
            values = frame[column].iloc[start : start + block].astype(dtype)
            given += int(values.notna().sum())
            parsed += int(pd.to_numeric(values, errors="coerce").notna().sum())
    return dtype, "parsed" if parsed == given and given else "text"


def _pooled_dtype(columns):
    """The dtype ``pd.concat(columns)`` gives, from one row of each: its first non-missing
    value, or its first row when it has none (pandas leaves all-missing columns out of the
    choice, so the row must be missing too)."""
    heads = []
    for values in columns:
        present = np.flatnonzero(values.notna().to_numpy())
        heads.append(values.iloc[present[:1]] if present.size else values.iloc[:1])
    return pd.concat(heads).dtype


def _comparable(values, dtype, mode):
    """A block of a column as :func:`row_keys` compares it (see :func:`_key_mode`)."""
    values = values.astype(dtype).reset_index(drop=True)
    if mode == "number":
        return values.astype(float) + 0.0
    if mode == "parsed":
        return pd.to_numeric(values, errors="coerce").astype(float) + 0.0
    return values.astype("string").fillna("\x00<missing>")


def _rows(positions):
    """``"3, 17, 42, …"``: the first rows of a list (0-based, the header not counted)."""
    positions = [int(p) for p in positions]
    shown = ", ".join(map(str, positions[:SHOWN]))
    return shown + (", …" if len(positions) > SHOWN else "")


def check_overlapping_records(tables, columns, *, drop=False, parameter="drop_overlapping_records"):
    """Refuse (or drop) the records that are among both the members and the non-members.

    A record that is both a member and a non-member is labelled both ways: every attack
    sees it in both classes, so the claims lose power (issue #25: 100 shared records took a
    release's certified ε from 1.14 to 0.30) and the hold-out is not a hold-out. Rows are
    compared on ``columns`` with :func:`row_keys`. When records repeat within the tables
    too, equal records across them can be different people: they are refused only when a
    random split of the pooled records shares fewer equal pairs with probability
    ``1 − OVERLAP_P`` (:func:`overlap_p_value`), else kept with a warning.

    Parameters
    ----------
    tables : dict of str -> DataFrame
        Holds ``"members"`` and ``"non-members"`` (other tables are returned as they are).
    columns : list of str
        The columns a record is compared on (the audited columns).
    drop : bool, default=False
        Leave the shared records out of both tables (with an
        :class:`~sklearn_mace.report.AuditInputWarning` naming the rows) instead of raising
        (records that meet by chance are kept either way).
    parameter : str or None, default="drop_overlapping_records"
        The caller's parameter that sets ``drop``, named in the error (None: the caller has
        none; the error then asks to fix the tables).

    Returns
    -------
    tables : dict of str -> DataFrame
        The same tables, or without the shared records (index reset) when ``drop``.

    Raises
    ------
    AuditInputError
        When records are shared and ``drop`` is False: how many, and their rows in each table.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_mace.report._quality import check_overlapping_records
    >>> members = pd.DataFrame({"age": [30, 41, 52]})
    >>> non_members = pd.DataFrame({"age": [41.0, 60, 70]})
    >>> tables = {"members": members, "non-members": non_members}
    >>> try:
    ...     check_overlapping_records(tables, ["age"])
    ... except ValueError as exc:
    ...     print(str(exc).split(":")[0])
    1 record(s) are among both the members and the non-members
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     kept = check_overlapping_records(tables, ["age"], drop=True)
    >>> kept["members"]["age"].tolist(), kept["non-members"]["age"].tolist()
    ([30, 52], [60.0, 70.0])
    """
    pair = {"members": tables["members"], "non-members": tables["non-members"]}
    keys = row_keys(pair, columns)
    shared = np.intersect1d(keys["members"], keys["non-members"])
    if shared.size == 0:
        return tables
    p_value = overlap_p_value(keys["members"], keys["non-members"])
    if p_value > OVERLAP_P:
        warnings.warn(
            f"{shared.size} record(s) are among both the members and the non-members, but "
            "records repeat within the tables too, and a random split of the pooled records "
            f"shares as many (p = {p_value:.2g}): kept, as different people with equal "
            "records.",
            AuditInputWarning,
            stacklevel=2,
        )
        return tables
    in_members = np.isin(keys["members"], shared)
    in_non = np.isin(keys["non-members"], shared)
    where = (
        f"members row(s) {_rows(np.flatnonzero(in_members))}; non-members row(s) "
        f"{_rows(np.flatnonzero(in_non))} (0-based, the header not counted)"
    )
    what = (
        f"{shared.size} record(s) are among both the members and the non-members: {where}. "
        "A shared record is labelled both ways, which hides leakage"
    )
    if not drop:
        if parameter is None:
            raise AuditInputError(f"{what}; remove them from one of the tables.")
        raise AuditInputError(
            f"{what}; remove them from one of the tables, or pass {parameter}=True to leave "
            "them out of both."
        )
    warnings.warn(
        f"{what}: {int(in_members.sum())} members and {int(in_non.sum())} non-member rows "
        "were left out of the audit.",
        AuditInputWarning,
        stacklevel=2,
    )
    kept = dict(tables)
    kept["members"] = pair["members"].loc[~in_members].reset_index(drop=True)
    kept["non-members"] = pair["non-members"].loc[~in_non].reset_index(drop=True)
    return kept


def overlap_p_value(member_keys, non_member_keys, *, n_permutations=OVERLAP_PERMUTATIONS, seed=0):
    """How probable as many equal member/non-member pairs are if the records were split at
    random: 0 when no record repeats within either table (then an equal pair is one record
    in both), else a permutation p-value.

    Records that repeat within a table (few discrete columns: different people, equal
    records) also meet across the tables by chance. The statistic is the number of equal
    pairs across the tables, ``Σ_k m_k n_k`` over the distinct records ``k``; its null
    distribution comes from ``n_permutations`` random splits of the pooled records into
    tables of the same sizes, and the p-value is ``(1 + #{split ≥ observed}) / (1 +
    n_permutations)``. Linear in the records per split.

    Parameters
    ----------
    member_keys, non_member_keys : ndarray
        One key per record (:func:`row_keys`).
    n_permutations : int, default=999
    seed : int, default=0

    Returns
    -------
    p_value : float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.report._quality import overlap_p_value
    >>> overlap_p_value(np.array([1, 2, 3]), np.array([3, 4]))  # records never repeat
    0.0
    >>> rng = np.random.default_rng(0)  # 3 possible records: meeting is chance
    >>> overlap_p_value(rng.integers(0, 3, 60), rng.integers(0, 3, 90)) > 0.01
    True
    """
    member_keys, non_member_keys = np.asarray(member_keys), np.asarray(non_member_keys)
    within = (
        pd.Series(member_keys).duplicated().any() or pd.Series(non_member_keys).duplicated().any()
    )
    if not within:
        return 0.0
    codes, uniques = pd.factorize(np.concatenate([member_keys, non_member_keys]))
    total = np.bincount(codes, minlength=len(uniques))
    n_members = len(member_keys)

    def cross_pairs(member_codes):
        in_members = np.bincount(member_codes, minlength=len(uniques))
        return int((in_members * (total - in_members)).sum())

    observed = cross_pairs(codes[:n_members])
    rng = np.random.default_rng(seed)
    exceed = sum(
        cross_pairs(codes[rng.permutation(len(codes))[:n_members]]) >= observed
        for _ in range(n_permutations)
    )
    return (1 + exceed) / (1 + n_permutations)


def repeated_rows(keys):
    """Whether each row repeats an earlier row (equal keys), by sorting: a sorted copy of the
    keys (8 bytes a row) finds the keys that repeat, and only the rows holding one are
    ordered to mark all but their first (where a hash table of 10 million keys takes about
    270 MiB).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.report._quality import repeated_rows
    >>> repeated_rows(np.array([7, 3, 7, 7, 1], dtype=np.uint64)).tolist()
    [False, False, True, True, False]
    """
    keys = np.asarray(keys)
    repeated = np.zeros(len(keys), dtype=bool)
    ordered = np.sort(keys)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return repeated
    values = np.unique(ordered[1:][same])  # the keys held by two rows or more
    del ordered, same
    rows = np.flatnonzero(in_sorted(keys, values))
    held = keys[rows]
    order = np.argsort(held, kind="stable")  # equal keys in row order: the first is kept
    later = np.zeros(len(rows), dtype=bool)
    later[order[1:]] = held[order[1:]] == held[order[:-1]]
    repeated[rows[later]] = True
    return repeated


def in_sorted(values, sorted_keys):
    """Whether each of ``values`` is among ``sorted_keys`` (sorted ascending): a binary
    search per value, no copy of the keys (``np.isin`` sorts both arrays together: 470 MiB
    and a minute for 7 500 targets against 10 million release rows).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.report._quality import in_sorted
    >>> keys = np.array([1, 3, 9], dtype=np.uint64)
    >>> in_sorted(np.array([3, 4, 9], dtype=np.uint64), keys).tolist()
    [True, False, True]
    """
    values, sorted_keys = np.asarray(values), np.asarray(sorted_keys)
    if sorted_keys.size == 0:
        return np.zeros(values.shape, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, values), sorted_keys.size - 1)
    return sorted_keys[at] == values


def _duplicate_notes(tables, columns, keys=None):
    keys = row_keys(tables, columns) if keys is None else keys
    notes = []
    for name in tables:
        repeated = repeated_rows(keys[name])
        if repeated.any():
            notes.append(
                f"the {name} table has {int(repeated.sum())} duplicated row(s) (repeats of an "
                f"earlier row on the audited columns: row(s) {_rows(np.flatnonzero(repeated))})"
            )
    return notes


def _empty_or_constant_notes(tables, columns):
    """Columns without values, or with one value, in one table (the real tables' are in the
    column report: those columns are dropped)."""
    notes = []
    for name, frame in tables.items():
        empty, constant = [], []
        for column in columns:
            values = frame[column]
            count = int(values.notna().sum())
            if count == 0:
                empty.append(column)
            elif count == len(values) and _single_value(values):
                constant.append(column)
        if empty:
            notes.append(f"the {name} table has no values in column(s) {_names(empty)}")
        if constant and len(frame) > 1:
            notes.append(f"the {name} table has a single value in column(s) {_names(constant)}")
    return notes


def _single_value(values):
    """Whether a column without missing values holds one value: each cell equals the first
    (a pass over the column, where counting its distinct values hashes every cell); Python
    objects (which may be lists) are counted as before."""
    if values.dtype == object:
        return values.nunique(dropna=False) == 1
    return bool((values == values.iloc[0]).all())


def _names(columns):
    shown = ", ".join(repr(c) for c in columns[:SHOWN])
    return shown + (f" and {len(columns) - SHOWN} more" if len(columns) > SHOWN else "")


def table_notes(tables, columns, compared=None, *, keys=None):
    """What is odd about the tables, for the report's notes (the audit goes on).

    Parameters
    ----------
    tables : dict of str -> DataFrame
        The tables, keyed by what they are.
    columns : list of str
        The audited columns.
    compared : list of str, default=None
        The columns rows are compared on for duplicates (the kept ones, without row ids);
        default: ``columns``.
    keys : dict of str -> ndarray, default=None
        :func:`row_keys` of ``tables`` on ``compared``, when the caller has them.

    Returns
    -------
    notes : list of str
        Duplicated rows of each table; columns without values, or with a single value, in a
        table.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_mace.report._quality import table_notes
    >>> members = pd.DataFrame({"a": [1, 1, 2], "b": [None] * 3})
    >>> for note in table_notes({"members": members}, ["a", "b"]):
    ...     print(note)
    the members table has 1 duplicated row(s) (repeats of an earlier row on the audited columns: row(s) 1)
    the members table has no values in column(s) 'b'
    """  # noqa: E501
    columns = list(columns)
    compared = columns if compared is None else list(compared)
    notes = _duplicate_notes(tables, compared, keys) if compared else []
    return notes + _empty_or_constant_notes(tables, columns)
