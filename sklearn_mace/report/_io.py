"""Reading the audit's input tables (CSV or Parquet) with clear errors.

CSV files are read as a user would hope: the delimiter is sniffed (``,``, ``;``, tab or
``|``), UTF-8 is tried first and Latin-1 next (with a note), spaces after a delimiter are
skipped, and a first column that is a saved pandas index (an unnamed ``0, 1, 2, …``) is
dropped with a note. Duplicated column names, binary files, empty and header-only files are
refused with a message that names the file.
"""

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["AuditInputError", "read_table"]

CSV_SUFFIXES = {".csv", ".tsv", ".txt", ".gz", ".bz2", ".zip", ".xz"}
PARQUET_SUFFIXES = {".parquet", ".pq"}
COMPRESSED_SUFFIXES = {".gz", ".bz2", ".zip", ".xz", ".zst"}
DELIMITERS = ",;\t|"
SAMPLE_BYTES = 1 << 16


class AuditInputError(ValueError):
    """The audit's input cannot be used: unreadable file, mismatched columns, too few rows."""


def _sniff(sample, default):
    """The delimiter of a CSV sample (``default`` when the sniffer cannot tell)."""
    lines = [line for line in sample.splitlines() if line.strip()][:20]
    if not lines:
        return default
    try:
        return csv.Sniffer().sniff("\n".join(lines), delimiters=DELIMITERS).delimiter
    except csv.Error:
        return default


def _header(sample, sep):
    """The column names of the first line, as written (before pandas renames duplicates)."""
    first = sample.splitlines()[0] if sample.splitlines() else ""
    return [name.strip() for name in next(csv.reader(io.StringIO(first), delimiter=sep), [])]


def _saved_index(frame):
    """Whether the first column is a pandas index saved with the data (unnamed, 0..n-1)."""
    name = str(frame.columns[0])
    if not (name == "" or name.startswith("Unnamed: 0")) or frame.shape[1] < 2:
        return False
    values = pd.to_numeric(frame.iloc[:, 0], errors="coerce")
    if values.isna().any():
        return False
    start = values.iloc[0]
    return bool(np.array_equal(values.to_numpy(), np.arange(start, start + len(values))))


def read_table(path, *, role="input"):
    """Read one table of records with pandas.

    ``.parquet``/``.pq`` files are read with ``pandas.read_parquet`` (needs the ``pyarrow``
    extra: ``pip install "sklearn-mace[parquet]"``); every other file as CSV
    (``.tsv``: tab-separated; compressed ``.csv.gz`` etc. work too). For plain CSV files the
    delimiter is sniffed among ``, ; tab |`` and the encoding is UTF-8, else Latin-1.

    Parameters
    ----------
    path : str or Path
        The file; its suffix picks the reader.
    role : str, default="input"
        What the table is (``"members"``, ``"synthetic"``, …), for the error messages.

    Returns
    -------
    frame : pandas.DataFrame with at least one row
        ``frame.attrs["notes"]`` lists what was done on reading (encoding fallback, a
        dropped index column), for the caller to show.

    Raises
    ------
    AuditInputError
        When the file is missing, unreadable, binary, not a table, empty or header-only,
        or has duplicated column names.

    Examples
    --------
    A table saved by pandas with ``;`` and its index: the delimiter is found and the index
    column dropped, with a note.

    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from sklearn_mace.report import read_table
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "members.csv"
    ...     pd.DataFrame({"age": [39, 52], "job": ["nurse", "clerk"]}).to_csv(path, sep=";")
    ...     frame = read_table(path, role="members")
    >>> frame.to_dict("list")
    {'age': [39, 52], 'job': ['nurse', 'clerk']}
    >>> "index" in frame.attrs["notes"][0]
    True
    """
    path = Path(path)
    where = f"{role} file '{path}'"
    if not path.exists():
        raise AuditInputError(f"Cannot read the {where}: no such file.")
    if path.is_dir():
        raise AuditInputError(f"Cannot read the {where}: it is a directory, not a table file.")
    suffixes = [s.lower() for s in path.suffixes]
    notes = []
    parquet = bool(suffixes) and suffixes[-1] in PARQUET_SUFFIXES
    try:
        if parquet:
            frame = pd.read_parquet(path)
        else:
            frame = _read_csv(path, suffixes, where, notes)
    except AuditInputError:
        raise
    except ImportError as exc:
        raise AuditInputError(
            f"Cannot read the {where}: reading Parquet needs pyarrow "
            '(pip install "sklearn-mace[parquet]"), or convert the file to CSV.'
        ) from exc
    except pd.errors.EmptyDataError as exc:
        raise AuditInputError(f"Cannot read the {where}: the file is empty.") from exc
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, ValueError) as exc:
        kind = "Parquet" if parquet else "CSV"
        raise AuditInputError(f"Cannot read the {where} as {kind}: {exc}") from exc
    duplicated = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
    if duplicated:
        raise AuditInputError(f"The {where} has duplicated column names {duplicated}.")
    if frame.shape[1] == 0:
        raise AuditInputError(f"The {where} has no columns.")
    if frame.shape[0] == 0:
        raise AuditInputError(f"The {where} has a header but no rows.")
    if _saved_index(frame):
        notes.append(
            f"the first column of the {where} is an unnamed 0, 1, 2, … index (saved by "
            "pandas): it was dropped"
        )
        frame = frame.iloc[:, 1:]
    frame.attrs["notes"] = notes
    return frame


def _read_csv(path, suffixes, where, notes):
    """CSV with a sniffed delimiter and a Latin-1 fallback; refuses binary content."""
    compressed = bool(suffixes) and suffixes[-1] in COMPRESSED_SUFFIXES
    default = "\t" if ".tsv" in suffixes else ","
    if compressed:  # pandas decompresses; no sniffing of the raw bytes
        first = pd.read_csv(path, sep=default, header=None, nrows=1, dtype=str)
        _check_header([str(v).strip() for v in first.iloc[0]] if len(first) else [], where)
        return pd.read_csv(path, sep=default, skipinitialspace=True)
    with open(path, "rb") as handle:
        raw = handle.read(SAMPLE_BYTES)
    if not raw.strip():
        raise AuditInputError(f"Cannot read the {where}: the file is empty.")
    if b"\x00" in raw:
        raise AuditInputError(
            f"Cannot read the {where}: it holds binary data, not a CSV table (for Parquet, "
            "name the file .parquet)."
        )
    encoding = "utf-8-sig"
    try:
        sample = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        if exc.start < len(raw) - 4:  # not just a character cut at the sample's end
            encoding = "latin-1"
            sample = raw.decode(encoding)
            notes.append(f"the {where} is not UTF-8: it was read as Latin-1")
        else:
            sample = raw[: exc.start].decode(encoding)
    sep = default if ".tsv" in suffixes else _sniff(sample, default)
    header = _header(sample, sep)
    _check_header(header, where)
    try:
        frame = pd.read_csv(path, sep=sep, encoding=encoding, skipinitialspace=True)
    except UnicodeDecodeError:
        frame = pd.read_csv(path, sep=sep, encoding="latin-1", skipinitialspace=True)
        notes.append(f"the {where} is not UTF-8: it was read as Latin-1")
    if frame.shape[1] == 1 and sep == "," and any(d in sample for d in ";\t|"):
        raise AuditInputError(
            f"The {where} has a single column {str(frame.columns[0])[:60]!r}: is it "
            "delimited by something other than ',' (';', tab, '|')? Save it as "
            "comma-separated CSV."
        )
    return frame


def _check_header(header, where):
    seen, duplicated = set(), []
    for name in header:
        if name in seen and name not in duplicated:
            duplicated.append(name)
        seen.add(name)
    if duplicated:
        raise AuditInputError(
            f"The {where} has duplicated column names {duplicated}; every column needs its "
            "own name."
        )
