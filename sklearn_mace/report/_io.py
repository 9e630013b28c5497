"""Reading the audit's input tables (CSV or Parquet) with clear errors."""

from pathlib import Path

import pandas as pd

__all__ = ["AuditInputError", "read_table"]

CSV_SUFFIXES = {".csv", ".tsv", ".txt", ".gz", ".bz2", ".zip", ".xz"}
PARQUET_SUFFIXES = {".parquet", ".pq"}


class AuditInputError(ValueError):
    """The audit's input cannot be used: unreadable file, mismatched columns, too few rows."""


def read_table(path, *, role="input"):
    """Read one table of records with pandas.

    ``.parquet``/``.pq`` files are read with ``pandas.read_parquet`` (needs the ``pyarrow``
    extra: ``pip install "sklearn-mace[parquet]"``); every other file as CSV
    (``.tsv``: tab-separated; compressed ``.csv.gz`` etc. work too).

    Parameters
    ----------
    path : str or Path
        The file; its suffix picks the reader.
    role : str, default="input"
        What the table is (``"members"``, ``"synthetic"``, …), for the error messages.

    Returns
    -------
    frame : pandas.DataFrame
        The table, with at least one row.

    Raises
    ------
    AuditInputError
        When the file is missing, unreadable, not a table, or empty.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from sklearn_mace.report import read_table
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "members.csv"
    ...     pd.DataFrame({"age": [30, 40], "city": ["a", "b"]}).to_csv(path, index=False)
    ...     read_table(path, role="members").shape
    (2, 2)
    """
    path = Path(path)
    where = f"{role} file '{path}'"
    if not path.exists():
        raise AuditInputError(f"Cannot read the {where}: no such file.")
    if path.is_dir():
        raise AuditInputError(f"Cannot read the {where}: it is a directory, not a table file.")
    suffixes = [s.lower() for s in path.suffixes]
    try:
        if suffixes and suffixes[-1] in PARQUET_SUFFIXES:
            frame = pd.read_parquet(path)
        else:
            sep = "\t" if ".tsv" in suffixes else ","
            frame = pd.read_csv(path, sep=sep)
    except ImportError as exc:
        raise AuditInputError(
            f"Cannot read the {where}: reading Parquet needs pyarrow "
            '(pip install "sklearn-mace[parquet]"), or convert the file to CSV.'
        ) from exc
    except pd.errors.EmptyDataError as exc:
        raise AuditInputError(f"Cannot read the {where}: the file is empty.") from exc
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, ValueError) as exc:
        kind = "Parquet" if suffixes and suffixes[-1] in PARQUET_SUFFIXES else "CSV"
        raise AuditInputError(f"Cannot read the {where} as {kind}: {exc}") from exc
    if frame.shape[0] == 0:
        raise AuditInputError(f"The {where} has a header but no rows.")
    if frame.shape[1] == 0:
        raise AuditInputError(f"The {where} has no columns.")
    return frame
