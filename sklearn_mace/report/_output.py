"""Writing a report folder safely: checked before any work, replaced in one step at the end.

* :func:`check_output_dir` runs before anything is computed: the folder must be a folder
  (not a file), writable, or creatable inside a writable parent; it must hold none of the
  input files (resolved paths compared), no symbolic link where the writer writes (its
  sub-folders, its files, the manifest and the files it lists), and no file of the report's
  fixed names that an earlier run did not write.
* :func:`staged_output` gives the writer an empty staging folder (hidden, beside the report
  folder or inside it) and moves the finished files into place only when the writer
  succeeded. A failed run leaves the previous report as it was.
* **The manifest.** The folder's ``.sklearn-mace-files.json`` lists the files the last run
  wrote. A new run replaces exactly those (and removes those it no longer writes, so the
  folder never mixes two runs); **nothing else is ever removed or overwritten**: a file a
  user keeps in the folder, in ``figures/`` or in ``inputs/`` stays, and a file of the same
  name as one the report writes stops the run (before any work for the fixed names, before
  anything is moved for the others).
* :func:`write_csv` is the one CSV writer: text cells (and column names) that a spreadsheet
  would run as a formula are escaped.
"""

import contextlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from ._io import AuditInputError

__all__ = [
    "OWN_FILES",
    "check_output_dir",
    "escape_cell",
    "relocate",
    "staged_output",
    "write_csv",
]

OWN_FILES = (
    "report.html",
    "summary.csv",
    "records.csv",
    "comparisons.csv",
    "disclosure.csv",
    "guesses.csv",  # the one-run algorithm card
)
FIGURES = "figures"
MANIFEST = ".sklearn-mace-files.json"
STAGING_PREFIX = ".sklearn-mace-staging-"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)", re.I)


def escape_cell(value):
    """A CSV cell a spreadsheet shows as text: OWASP's rule against formula injection.

    A text that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a
    single quote in front, unless it is a number written with its sign (``-1.5``,
    ``+2e3``); anything that is not text is returned as it is.

    Examples
    --------
    >>> from sklearn_mace.report._output import escape_cell
    >>> escape_cell("=1+1"), escape_cell("@SUM(1)"), escape_cell("-1.5"), escape_cell(-2)
    ("'=1+1", "'@SUM(1)", '-1.5', -2)
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        if value[0] in "+-" and _NUMBER.fullmatch(value):
            return value
        return "'" + value
    return value


def write_csv(frame, path):
    """Write ``frame`` to ``path`` as CSV (no index) with every text cell escaped.

    Column names and the cells of text, categorical and mixed columns go through
    :func:`escape_cell`; numbers stay numbers.
    """
    import pandas as pd

    frame = frame.rename(columns=lambda name: escape_cell(str(name)))
    escaped = {}
    for position, (_, column) in enumerate(frame.items()):
        if not (
            pd.api.types.is_object_dtype(column)
            or pd.api.types.is_string_dtype(column)
            or isinstance(column.dtype, pd.CategoricalDtype)
        ):
            continue
        escaped[position] = column.astype(object).map(escape_cell, na_action="ignore")
    if escaped:
        frame = frame.copy()
        for position, column in escaped.items():
            frame.isetitem(position, column)
    frame.to_csv(path, index=False)
    return path


def _writable(folder):
    """Whether files can be created in ``folder`` (tried, since permissions can lie)."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        handle, probe = tempfile.mkstemp(prefix=STAGING_PREFIX, dir=folder)
    except OSError:
        return False
    os.close(handle)
    os.unlink(probe)
    return True


def read_manifest(out):
    """The files (relative POSIX paths) the last run wrote into ``out``, from its manifest.

    Entries that would leave the folder (absolute, ``..``) or name a hidden file are ignored:
    a manifest never makes the writer touch anything outside ``out``.
    """
    path = Path(out) / MANIFEST
    if not path.is_file() or path.is_symlink():
        return []
    try:
        listed = json.loads(path.read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError):
        return []
    kept = []
    for name in listed if isinstance(listed, list) else []:
        parts = PurePosixPath(name).parts if isinstance(name, str) else ()
        if parts and not PurePosixPath(name).is_absolute():
            if not any(part in ("", ".", "..") or part.startswith(".") for part in parts):
                kept.append(str(PurePosixPath(*parts)))
    return kept


def _inside(path, folder):
    """Whether ``path`` (as given, or resolved) lies in ``folder`` (as given, or resolved)."""
    given, real = Path(os.path.abspath(path)), Path(path).resolve()
    folders = {Path(os.path.abspath(folder)), Path(folder).resolve()}
    return any(p == f or f in p.parents for p in (given, real) for f in folders)


def _check_inputs(out, inputs, option):
    """No input file may lie in the report folder: the report could overwrite it."""
    for role, path in inputs:
        if path is not None and _inside(path, out):
            raise AuditInputError(
                f"{option} '{out}' holds the input file '{path}' ({role}): the report must "
                "not be written where its inputs are. Pick another output folder."
            )


def _check_existing(out, option, folders, files):
    """The checks of an existing report folder (see :func:`check_output_dir`)."""
    listed = read_manifest(out)
    touched = [*folders, *files, MANIFEST, *listed]
    for name in touched:
        if os.path.islink(out / name):
            raise AuditInputError(
                f"{option} '{out}' holds a symbolic link '{name}' where the report writes: "
                "the writer never follows links. Remove it, or pick another folder."
            )
    for name in folders:
        if (out / name).exists() and not (out / name).is_dir():
            raise AuditInputError(
                f"{option} '{out}' holds a file '{name}' where the report writes its "
                f"'{name}' folder: move it, or pick another folder."
            )
    for name in files:
        if (out / name).is_dir():
            raise AuditInputError(
                f"{option} '{out}' holds a folder '{name}' where the report writes a "
                "file: move it, or pick another folder."
            )
        if (out / name).exists() and name not in listed:
            raise AuditInputError(
                f"{option} '{out}' holds a file '{name}' that no earlier report wrote (it "
                f"is not in {MANIFEST}): the report would overwrite it. Move it, or pick "
                "another folder."
            )
    for folder in [out, *(out / n for n in folders if (out / n).is_dir())]:
        if not _writable(folder):
            raise AuditInputError(
                f"{option}: the folder '{folder}' is not writable; pick another folder "
                "or change its permissions."
            )


def check_output_dir(out, *, option="out", inputs=(), folders=(FIGURES,), files=OWN_FILES):
    """Check, before any work, that the report can be written to the folder ``out``.

    Parameters
    ----------
    out : str or Path
        The report folder; created (with its parents) if it does not exist.
    option : str, default="out"
        How the folder was given, for the error message (the CLI passes ``"--out"``).
    inputs : iterable of (str, path)
        The input files, as (role, path): none may lie in ``out``.
    folders : tuple of str, default=("figures",)
        The sub-folders the writer writes into (the demos add ``inputs`` and ``models``).
    files : tuple of str
        The fixed names of the files the writer writes (relative to ``out``).

    Returns
    -------
    out : Path

    Raises
    ------
    AuditInputError
        ``out`` is a file, is not writable or cannot be created; holds an input file, a
        symbolic link where the report writes, a folder where it writes a file (or a file
        where it writes a folder), or a file of the report's names that no earlier report
        wrote.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn_mace.report._output import check_output_dir
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     check_output_dir(Path(folder) / "new" / "audit").name
    'audit'
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise AuditInputError(
            f"{option} '{out}' is an existing file, not a folder: pass a folder (it is "
            "created if needed)."
        )
    _check_inputs(out, inputs, option)
    if out.is_dir():
        _check_existing(out, option, folders, files)
        return out
    ancestor = out.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise AuditInputError(
            f"{option} '{out}' cannot be created: '{ancestor}' is a file, not a folder."
        )
    if not _writable(ancestor):
        raise AuditInputError(
            f"{option} '{out}' cannot be created: the folder '{ancestor}' is not writable."
        )
    return out


def _staged_files(stage):
    """The files written under ``stage``, as relative POSIX paths, manifest first."""
    names = sorted(p.relative_to(stage).as_posix() for p in stage.rglob("*") if p.is_file())
    return [MANIFEST, *(n for n in names if n != MANIFEST)]


def _write_manifest(stage):
    """List the staged files in the stage's manifest (which moves in with them)."""
    names = [n for n in _staged_files(stage) if n != MANIFEST]
    text = json.dumps({"written_by": "sklearn-mace", "files": names}, indent=1)
    (stage / MANIFEST).write_text(text + "\n", encoding="utf-8")


def _check_collisions(stage, out, option):
    """Refuse, before anything moves, to overwrite a file or follow a link not ours."""
    listed = set(read_manifest(out)) | {MANIFEST}
    for name in _staged_files(stage):
        target = out / name
        parents = [out / p for p in PurePosixPath(name).parents if str(p) != "."]
        for path in [target, *parents]:
            if os.path.islink(path):
                raise AuditInputError(
                    f"{option} '{out}' holds a symbolic link '{path.relative_to(out)}' where "
                    "the report writes: remove it, or pick another folder."
                )
        if target.exists() and (name not in listed or not target.is_file()):
            raise AuditInputError(
                f"{option} '{out}' holds '{name}', which no earlier report wrote: the report "
                "would overwrite it. Move it, or pick another folder (nothing was written)."
            )


def _move_into_place(stage, out, option):
    """Replace the files of the last run (the manifest's) by those in ``stage``; roll back
    on error. Nothing the manifest does not list is moved or removed."""
    _check_collisions(stage, out, option)
    backup = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX + "old-", dir=out))
    old = [n for n in [*read_manifest(out), MANIFEST] if (out / n).is_file()]
    moved_old, moved_new = [], []
    try:
        for name in old:
            target = backup / name
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(out / name, target)
            moved_old.append((out / name, target))
        for name in reversed(_staged_files(stage)):  # the manifest last
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / name, target)
            moved_new.append(target)
    except OSError as exc:
        for target in moved_new:
            with contextlib.suppress(OSError):
                target.unlink()
        restored = True
        for path, target in moved_old:
            try:
                os.replace(target, path)
            except OSError:
                restored = False
        if not restored:  # keep the old files where the error message says
            raise OSError(
                f"Moving the report into '{out}' failed ({exc}); the previous report's files "
                f"are kept in '{backup}'."
            ) from exc
        shutil.rmtree(backup, ignore_errors=True)
        raise
    shutil.rmtree(backup, ignore_errors=True)


@contextlib.contextmanager
def staged_output(out, *, option="out", folders=(FIGURES,), files=OWN_FILES):
    """Write a report into a staging folder; move it into ``out`` only on success.

    On success the staged files replace those the previous run listed in the folder's
    manifest, and a new manifest lists them; nothing else in ``out`` is touched.

    Parameters
    ----------
    out : str or Path
        The report folder (checked with :func:`check_output_dir`).
    option : str, default="out"
        How the folder was given, for error messages.
    folders, files : tuple of str
        The sub-folders and the fixed file names the writer uses (see
        :func:`check_output_dir`).

    Yields
    ------
    stage : Path
        An empty folder to write the report into, with the layout it will have in ``out``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn_mace.report._output import staged_output
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     with staged_output(Path(folder) / "audit") as stage:
    ...         _ = (stage / "summary.csv").write_text("a,b\\n")
    ...     sorted(p.name for p in (Path(folder) / "audit").iterdir())
    ['.sklearn-mace-files.json', 'summary.csv']
    """
    out = check_output_dir(out, option=option, folders=folders, files=files)
    existed = out.is_dir()
    if not existed:
        out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out if existed else out.parent))
    umask = os.umask(0)
    os.umask(umask)
    stage.chmod(0o777 & ~umask)  # mkdtemp's 0700 would become the report folder's mode
    try:
        yield stage
        _write_manifest(stage)
        if existed:
            _move_into_place(stage, out, option)
        else:
            os.replace(stage, out)  # one rename: the folder appears complete
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def relocate(paths, stage, out):
    """The paths written under ``stage`` as they are after the move into ``out``."""
    return {key: Path(out) / Path(path).relative_to(stage) for key, path in paths.items()}
