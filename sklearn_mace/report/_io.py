"""Reading the audit's input tables (CSV or Parquet) as a person means them, with clear errors.

CSV files are read as a user would hope:

* the **delimiter** is found among ``,``, ``;``, tab and ``|``: the one that splits the header
  and every record of the first 64 KiB into the same number (> 1) of fields, quotes honoured
  (the most fields wins a tie; none: one column);
* the **encoding** is UTF-8 (a byte-order mark is skipped; UTF-16 with its mark is read too),
  else Latin-1, with a note;
* **decimal commas**: in a ``;``-separated file whose numbers are written ``14,25`` (and none
  ``14.25``), the comma is the decimal mark and ``.`` the thousands separator
  (``1.234,5`` = 1234.5), with a note; a file that mixes both is refused with an example of
  each; ``decimal=`` and ``thousands=`` set them explicitly. In a ``,``-separated file, quoted
  numbers written ``"1,234"`` read as 1234;
* spaces after a delimiter are skipped, and a first column that is a saved pandas index (an
  unnamed ``0, 1, 2, …``) is dropped with a note.

Duplicated column names, binary files, empty and header-only files are refused with a message
that names the file (:class:`AuditInputError`). A progress bar over the bytes read is shown
with ``verbose=True``.
"""

import bz2
import csv
import gzip
import io
import lzma
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["AuditInputError", "AuditInputWarning", "read_table"]

CSV_SUFFIXES = {".csv", ".tsv", ".txt", ".gz", ".bz2", ".zip", ".xz"}
PARQUET_SUFFIXES = {".parquet", ".pq"}
#: compressed suffixes whose first bytes the standard library can read (for sniffing)
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
COMPRESSED_SUFFIXES = {".gz", ".bz2", ".zip", ".xz", ".zst"}
DELIMITERS = ",;\t|"
SAMPLE_BYTES = 1 << 16
SAMPLE_LINES = 3  # whole lines the sample holds at least (the header and two records)
MAX_HEADER_BYTES = 1 << 26  # a first line longer than 64 MiB is not a table's header
READ_ROWS = 1 << 18  # CSV rows parsed at a time (numeric tables: no second copy of the frame)
_SNIFF_RECORDS = 200
# number shapes, on a stripped cell
_COMMA_DECIMAL = re.compile(r"[-+]?(\d{1,3}(\.\d{3})+|\d+),\d+")  # 14,25  1.234,5
_DOT_GROUPED = re.compile(r"[-+]?\d{1,3}(\.\d{3})+")  # 1.234: thousands, or a decimal point
_DOT_DECIMAL = re.compile(r"[-+]?\d*\.\d+([eE][-+]?\d+)?")  # 14.25  .5  1.5e3
_COMMA_GROUPED = re.compile(r"[-+]?\d{1,3}(,\d{3})+(\.\d+)?")  # 1,234  1,234.5


class AuditInputError(ValueError):
    """The audit's input cannot be used: unreadable file, mismatched columns, too few rows."""


class AuditInputWarning(UserWarning):
    """Something in the inputs was changed to audit them (a column dropped, rows left out).

    The message names what and why; the audit goes on. The report's notes list it too.
    """


def _records(sample, sep, truncated):
    """The first records of ``sample`` split at ``sep`` (quotes honoured), blank ones skipped."""
    reader = csv.reader(io.StringIO(sample), delimiter=sep, strict=False)
    records = []
    try:
        for record in reader:
            if any(cell.strip() for cell in record):
                records.append(record)
            if len(records) > _SNIFF_RECORDS:
                break
    except csv.Error:  # a NUL byte or a field past csv's size limit: no verdict from here
        return []
    if truncated and len(records) <= _SNIFF_RECORDS:  # the last one may be cut off
        records = records[:-1]
    return records


def _sniff(sample, default, truncated=False):
    """The delimiter that splits the header and every sampled record into as many fields.

    Among those that do with more than one field, the one giving the most fields wins (ties:
    the order ``, ; tab |``); when none does, one that leaves every record whole (a
    one-column table whose text holds the other delimiters), else ``default`` (a ragged
    table, which pandas refuses naming the line).
    """
    best, best_fields, single = default, 1, None
    for sep in DELIMITERS:
        records = _records(sample, sep, truncated)
        if not records:
            continue
        fields = {len(record) for record in records}
        if len(fields) != 1:
            continue
        n = fields.pop()
        if n > best_fields:
            best, best_fields = sep, n
        elif n == 1 and single is None:  # one field in every record: a one-column table
            single = sep
    if best_fields == 1 and single is not None:
        return single
    return best


def _header(sample, sep):
    """The column names of the first record, as written (before pandas renames duplicates)."""
    records = _records(sample, sep, truncated=False)
    return [name.strip() for name in records[0]] if records else []


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


def _number_style(sample, sep, truncated):
    """Example cells ``{shape: (column, cell)}`` of each way of writing numbers in the sample."""
    records = _records(sample, sep, truncated)
    if len(records) < 2:
        return {}
    header, found = records[0], {}
    for record in records[1:]:
        for j, cell in enumerate(record):
            cell = cell.strip()
            if not cell or not cell[-1].isdigit():
                continue
            name = header[j].strip() if j < len(header) else str(j)
            for shape, pattern in (
                ("comma decimal", _COMMA_DECIMAL),
                ("dot grouped", _DOT_GROUPED),
                ("dot decimal", _DOT_DECIMAL),
                ("comma grouped", _COMMA_GROUPED),
            ):
                if pattern.fullmatch(cell):
                    found.setdefault(shape, (name, cell))
                    break
    return found


def _number_format(sample, sep, decimal, thousands, where, notes, truncated):
    """``(decimal, thousands)`` for pandas: as given, or read off the sample (module doc)."""
    style = _number_style(sample, sep, truncated)
    if decimal is None:
        comma, dot = style.get("comma decimal"), style.get("dot decimal")
        if comma and sep == ";":
            if dot:
                raise AuditInputError(
                    f"The {where} writes numbers both with a decimal comma ({comma[1]!r} in "
                    f"column {comma[0]!r}) and a decimal point ({dot[1]!r} in column "
                    f"{dot[0]!r}); say which is meant with decimal='.' or decimal=','."
                )
            decimal = ","
            notes.append(
                f"the {where} writes numbers with a decimal comma ({comma[1]!r} in column "
                f"{comma[0]!r}): ',' was read as the decimal mark and '.' as the thousands "
                "separator (pass decimal='.' if that is wrong)"
            )
        elif comma and not dot:
            notes.append(
                f"the {where} has numbers written with a comma ({comma[1]!r} in column "
                f"{comma[0]!r}), read as text; pass decimal=',' if the comma is "
                "the decimal mark"
            )
        decimal = decimal or "."
    if thousands is None:
        if decimal == "," and "dot decimal" not in style:
            thousands = "."
        elif decimal == "." and sep != "," and "comma grouped" in style:
            thousands = ","
        elif decimal == "." and sep == "," and "comma grouped" in style:
            thousands = ","  # only quoted cells can hold a comma here: "1,234"
    if thousands == decimal:
        raise AuditInputError(
            f"Cannot read the {where}: decimal={decimal!r} and thousands={thousands!r} must differ."
        )
    return decimal, thousands or None


def read_table(path, *, role="input", decimal=None, thousands=None, verbose=False):
    """Read one table of records with pandas.

    ``.parquet``/``.pq`` files are read with ``pandas.read_parquet`` (needs the ``pyarrow``
    extra: ``pip install "sklearn-mace[parquet]"``); every other file as CSV
    (``.tsv``: tab-separated; compressed ``.csv.gz`` etc. work too). How CSV files are read
    (delimiter, encoding, decimal commas) is described in the module docstring.

    Parameters
    ----------
    path : str or Path
        The file; its suffix picks the reader.
    role : str, default="input"
        What the table is (``"members"``, ``"synthetic"``, …), for the error messages.
    decimal : {",", "."} or None, default=None
        The decimal mark of the CSV's numbers; None: ``","`` when the file is
        ``;``-separated and writes its numbers ``14,25`` (never ``14.25``), else ``"."``.
    thousands : str or None, default=None
        The thousands separator; None: ``"."`` with a decimal comma (unless a number is
        written with a decimal point), ``","`` when quoted numbers are written ``"1,234"``,
        else none. ``""`` turns it off.
    verbose : bool, default=False
        A progress bar (on stderr) over the bytes read.

    Returns
    -------
    frame : pandas.DataFrame with at least one row
        ``frame.attrs["notes"]`` lists what was done on reading (encoding fallback, decimal
        commas, a dropped index column), for the caller to show.

    Raises
    ------
    AuditInputError
        When the file is missing, unreadable, binary, not a table, empty or header-only,
        has duplicated column names, or mixes decimal commas and points.

    Examples
    --------
    A table saved by pandas with ``;``, decimal commas and its index: the delimiter and the
    decimal mark are found and the index column dropped, with notes.

    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from sklearn_mace.report import read_table
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "members.csv"
    ...     table = pd.DataFrame({"bmi": [24.5, 31.25], "job": ["nurse", "clerk"]})
    ...     table.to_csv(path, sep=";", decimal=",")
    ...     frame = read_table(path, role="members")
    >>> frame.to_dict("list")
    {'bmi': [24.5, 31.25], 'job': ['nurse', 'clerk']}
    >>> ["decimal comma" in note or "index" in note for note in frame.attrs["notes"]]
    [True, True]
    """
    if decimal not in (None, ",", "."):
        raise ValueError(f"decimal must be ',', '.' or None; got {decimal!r}.")
    if thousands is not None and not (isinstance(thousands, str) and len(thousands) <= 1):
        raise ValueError(f"thousands must be one character, '' or None; got {thousands!r}.")
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
            frame = _read_parquet(path, where, notes)
        else:
            frame = _read_csv(path, suffixes, where, notes, decimal, thousands, verbose)
    except AuditInputError:
        raise
    except ImportError as exc:
        raise AuditInputError(
            f"Cannot read the {where}: reading Parquet needs pyarrow "
            '(pip install "sklearn-mace[parquet]"), or convert the file to CSV.'
        ) from exc
    except pd.errors.EmptyDataError as exc:
        raise AuditInputError(f"Cannot read the {where}: the file is empty.") from exc
    except (
        pd.errors.ParserError,
        UnicodeError,
        OSError,
        ValueError,
        csv.Error,
        EOFError,
        zipfile.BadZipFile,
        lzma.LZMAError,
    ) as exc:
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


def _read_parquet(path, where, notes):
    """``pandas.read_parquet``, without the nested columns (lists, structs, maps), which
    have no distance to audit: they are dropped with a note."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    nested = [f.name for f in pq.read_schema(path) if pa.types.is_nested(f.type)]
    frame = pd.read_parquet(path)
    dropped = [c for c in frame.columns if c in set(nested)]
    if dropped:
        notes.append(
            f"the {where} has nested columns (lists, structs or maps) {dropped}: they have "
            "no distance to audit and were dropped"
        )
        frame = frame.drop(columns=dropped)
    return frame


def _read_sample(handle):
    """``(first bytes, whether the file has more)``: at least ``SAMPLE_BYTES``, and on until
    the sample holds ``SAMPLE_LINES`` whole lines (the header read whole, however long: a
    header cut at 64 KiB can end in a prefix of a later name, ``c1`` of ``c10000``, and look
    duplicated), at most ``MAX_HEADER_BYTES``."""
    raw = handle.read(SAMPLE_BYTES)
    while raw.count(b"\n") < SAMPLE_LINES and len(raw) < MAX_HEADER_BYTES:
        more = handle.read(max(len(raw), SAMPLE_BYTES))
        if not more:
            return raw, False
        raw += more
    more = handle.read(1)
    return raw, bool(more)


def _raw_sample(path, suffixes):
    """``(first bytes, whether the file has more)``; decompressed when the suffix says so."""
    suffix = suffixes[-1] if suffixes else ""
    if suffix in _OPENERS:
        with _OPENERS[suffix](path, "rb") as handle:
            return _read_sample(handle)
    if suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if len(names) != 1:
                raise AuditInputError(
                    f"Cannot read the zip file '{path}': it holds {len(names)} files; a table "
                    "needs exactly one."
                )
            with archive.open(names[0]) as handle:
                return _read_sample(handle)
    if suffix in COMPRESSED_SUFFIXES:  # .zst: pandas decompresses, nothing to sniff here
        return None, False
    with open(path, "rb") as handle:
        return _read_sample(handle)


def _decode(raw, truncated, where, notes):
    """``(encoding, text)`` of the sample: UTF-16 by its mark, UTF-8, else Latin-1 (noted)."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = raw.decode("utf-16", errors="ignore" if truncated else "strict")
        return "utf-16", text
    if b"\x00" in raw:
        raise AuditInputError(
            f"Cannot read the {where}: it holds binary data, not a CSV table (for Parquet, "
            "name the file .parquet)."
        )
    try:
        return "utf-8-sig", raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(raw) - 4:  # a character cut at the sample's end
            return "utf-8-sig", raw[: exc.start].decode("utf-8-sig")
        notes.append(f"the {where} is not UTF-8: it was read as Latin-1")
        return "latin-1", raw.decode("latin-1")


def _read_csv(path, suffixes, where, notes, decimal, thousands, verbose):
    """CSV with a sniffed delimiter and decimal mark and a Latin-1 fallback; refuses binary
    content."""
    default = "\t" if ".tsv" in suffixes else ","
    raw, truncated = _raw_sample(path, suffixes)
    if raw is not None and not raw.strip():
        raise AuditInputError(f"Cannot read the {where}: the file is empty.")
    if raw is None:  # not sniffable: the defaults
        encoding, sample, sep, header = "utf-8", "", default, []
    else:
        encoding, sample = _decode(raw, truncated, where, notes)
        sep = default if ".tsv" in suffixes else _sniff(sample, default, truncated)
        header = _header(sample, sep)
        _check_header(_without_trailing_blanks(header), where)
    decimal, thousands = _number_format(sample, sep, decimal, thousands, where, notes, truncated)
    options = {"sep": sep, "decimal": decimal, "thousands": thousands, "skipinitialspace": True}
    try:
        frame = _pandas_read(path, suffixes, encoding, options, verbose)
    except UnicodeDecodeError:
        if encoding == "latin-1":
            raise
        frame = _pandas_read(path, suffixes, "latin-1", options, verbose)
        notes.append(f"the {where} is not UTF-8: it was read as Latin-1")
    if frame.shape[1] == 1 and any(d in str(frame.columns[0]) for d in DELIMITERS):
        raise AuditInputError(
            f"The {where} has a single column {str(frame.columns[0])[:60]!r}: its records do "
            "not split into the same number of fields at any delimiter (',', ';', tab, '|'); "
            "check the rows whose number of fields differs from the header's."
        )
    return _drop_trailing_blanks(frame, header, where, notes)


def _without_trailing_blanks(header):
    """The header without its trailing unnamed fields (a spreadsheet's ``a,b,,``)."""
    end = len(header)
    while end > 0 and header[end - 1] == "":
        end -= 1
    return header[:end]


def _drop_trailing_blanks(frame, header, where, notes):
    """Drop the trailing columns without a name and without a value (a spreadsheet saves
    ``a,b,,`` for columns it once used), with a note; trailing unnamed columns that hold
    values are refused as duplicated names when there are several."""
    blanks = len(header) - len(_without_trailing_blanks(header))
    if not blanks or blanks > frame.shape[1]:
        return frame
    tail = frame.iloc[:, frame.shape[1] - blanks :]
    if tail.notna().any().any():
        _check_header(header, where)
        return frame
    notes.append(
        f"the last {blanks} column(s) of the {where} have no name and no values (a "
        "spreadsheet's trailing delimiters, 'a,b,,'): dropped"
    )
    return frame.iloc[:, : frame.shape[1] - blanks]


class _CountingReader(io.RawIOBase):
    """A binary file whose reads advance a progress bar by the bytes read."""

    def __init__(self, handle, bar):
        self._handle, self._bar = handle, bar

    def readable(self):
        return True

    def readinto(self, buffer):
        n = self._handle.readinto(buffer)
        self._bar.update(n or 0)
        return n

    def seekable(self):  # zip archives seek to their directory
        return True

    def seek(self, offset, whence=io.SEEK_SET):
        return self._handle.seek(offset, whence)

    def tell(self):
        return self._handle.tell()


def _pandas_read(path, suffixes, encoding, options, verbose, chunk_rows=None):
    """``pandas.read_csv`` through a handle whose reads advance a progress bar (bytes), in
    blocks of ``chunk_rows`` rows (:func:`_read_blocks`); whole when the blocks hold text or
    mixed types."""
    chunk_rows = READ_ROWS if chunk_rows is None else chunk_rows
    frame = _read_handle(path, suffixes, encoding, options, verbose, chunk_rows)
    if frame is None:  # text or mixed types: pandas' own whole-file inference
        frame = _read_handle(path, suffixes, encoding, options, verbose, None)
    return frame


def _read_handle(path, suffixes, encoding, options, verbose, chunk_rows):
    """One ``pandas.read_csv`` of the file: whole (``chunk_rows`` None), or in blocks, which
    gives None when they cannot be put together exactly as the whole read would."""
    from tqdm.auto import tqdm

    suffix = suffixes[-1] if suffixes else ""
    compression = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip", ".zst": "zstd"}
    size = path.stat().st_size
    with (
        open(path, "rb") as raw_handle,
        tqdm(
            total=size,
            unit="B",
            unit_scale=True,
            desc=f"reading {path.name}",
            disable=not verbose,
        ) as bar,
    ):
        handle = io.BufferedReader(_CountingReader(raw_handle, bar))
        kwargs = {"encoding": encoding, "compression": compression.get(suffix), **options}
        if chunk_rows is None:
            return pd.read_csv(handle, **kwargs)
        with pd.read_csv(handle, chunksize=chunk_rows, **kwargs) as blocks:
            return _read_blocks(blocks)


def _numeric_kind(dtype):
    """Whether a parsed block's column holds numbers or booleans only (no text)."""
    return isinstance(dtype, np.dtype) and dtype.kind in "biuf"


def _read_blocks(blocks):
    """The blocks of rows of a CSV put into one frame without a second copy of it, or None.

    Each numeric column grows in one array (doubling; the pages past the rows written are
    never touched, and the unused tail is given back at the end), and the frame is made of
    those arrays, one block per column as ``pandas.read_csv`` makes it. So reading holds
    the frame, one block of rows and at most one column's copy while it grows. Exactly the
    whole read's frame: numbers parse cell by cell, and a column's type is the same in
    every block (integers in some and floats in others give floats, as pandas gives). None
    (the caller reads the file whole) when a block has a column of text, dates or mixed
    types, where pandas' whole-file inference of a column's type depends on where its own
    blocks fall, or mixes booleans with numbers.
    """
    columns, arrays, dtypes, n = None, {}, {}, 0
    for block in blocks:
        if columns is None:
            columns = block.columns
        if not all(_numeric_kind(dtype) for dtype in block.dtypes):
            return None
        for position in range(block.shape[1]):
            values = block.iloc[:, position].to_numpy()
            dtypes.setdefault(position, set()).add(values.dtype)
            if len(dtypes[position]) > 1 and not dtypes[position] <= _INT_FLOAT:
                return None
            arrays[position] = _appended(arrays.get(position), n, values)
        n += len(block)
    if columns is None:  # a header without rows: pandas' own empty frame
        return None
    for array in arrays.values():
        array.resize(n, refcheck=False)  # in place: the allocator returns the unused tail
    return pd.DataFrame(
        {column: arrays.pop(position) for position, column in enumerate(columns)},
        columns=columns,
        copy=False,
    )


_INT_FLOAT = {np.dtype(np.int64), np.dtype(np.float64)}


def _appended(array, n, values):
    """``values`` written after the first ``n`` entries of ``array``, which is replaced by
    one twice as long when full or when the values need a wider type."""
    if array is None:
        array = np.empty(max(len(values), READ_ROWS), dtype=values.dtype)
    dtype = np.result_type(array.dtype, values.dtype)
    if dtype != array.dtype or n + len(values) > len(array):
        grown = np.empty(max(2 * len(array), n + len(values)), dtype=dtype)
        grown[:n] = array[:n]
        array = grown
    array[n : n + len(values)] = values
    return array


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
