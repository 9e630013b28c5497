"""Writing a report folder safely: checked before any work, replaced in one step at the end.

* :func:`check_output_dir` runs before anything is computed: the folder must be a folder
  (not a file), writable, or creatable inside a writable parent; an existing ``figures/``
  must be a writable folder.
* :func:`staged_output` gives the writer an empty staging folder (hidden, beside the report
  folder or inside it) and moves the finished files into place only when the writer
  succeeded. A failed run leaves the previous report as it was.
* The report folder never mixes two runs: the report's own files left by an earlier run —
  ``report.html``, ``summary.csv``, ``records.csv``, ``comparisons.csv``, ``disclosure.csv`` and
  the ``*.png`` files in ``figures/`` — are removed when the new ones arrive. Nothing else is
  ever removed: other files a user keeps in the folder (or in ``figures/``) stay.
"""

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from ._io import AuditInputError

__all__ = ["OWN_FILES", "check_output_dir", "staged_output"]

OWN_FILES = ("report.html", "summary.csv", "records.csv", "comparisons.csv", "disclosure.csv")
FIGURES = "figures"
STAGING_PREFIX = ".sklearn-mace-staging-"


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


def check_output_dir(out, *, option="--out"):
    """Check, before any work, that the report can be written to the folder ``out``.

    Parameters
    ----------
    out : str or Path
        The report folder; created (with its parents) if it does not exist.
    option : str, default="--out"
        How the folder was given, for the error message.

    Returns
    -------
    out : Path

    Raises
    ------
    AuditInputError
        ``out`` is a file, is not writable, holds a folder where the report writes a file
        (or a file named ``figures``), or cannot be created.

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
    if out.is_dir():
        for name in OWN_FILES:
            if (out / name).is_dir():
                raise AuditInputError(
                    f"{option} '{out}' holds a folder '{name}' where the report writes a "
                    "file: move it, or pick another folder."
                )
        figures = out / FIGURES
        if figures.exists() and not figures.is_dir():
            raise AuditInputError(
                f"{option} '{out}' holds a file 'figures' where the report writes its "
                "figures folder: move it, or pick another folder."
            )
        for folder in (out, figures) if figures.is_dir() else (out,):
            if not _writable(folder):
                raise AuditInputError(
                    f"{option}: the folder '{folder}' is not writable; pick another folder "
                    "or change its permissions."
                )
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


def _move_into_place(stage, out):
    """Replace the report's own files in ``out`` by those in ``stage``; roll back on error."""
    backup = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX + "old-", dir=out))
    (backup / FIGURES).mkdir()
    moved_old, moved_new = [], []
    old_figures = sorted((out / FIGURES).glob("*.png")) if (out / FIGURES).is_dir() else []
    try:
        for path in [*(out / n for n in OWN_FILES if (out / n).exists()), *old_figures]:
            target = backup / path.relative_to(out)
            os.replace(path, target)
            moved_old.append((path, target))
        (out / FIGURES).mkdir(exist_ok=True)
        for path in sorted(p for p in stage.rglob("*") if p.is_file()):
            target = out / path.relative_to(stage)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
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
def staged_output(out):
    """Write a report into a staging folder; move it into ``out`` only on success.

    Parameters
    ----------
    out : str or Path
        The report folder (checked with :func:`check_output_dir`).

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
    ['summary.csv']
    """
    out = check_output_dir(out, option="the output folder")
    existed = out.is_dir()
    if not existed:
        out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out if existed else out.parent))
    umask = os.umask(0)
    os.umask(umask)
    stage.chmod(0o777 & ~umask)  # mkdtemp's 0700 would become the report folder's mode
    try:
        yield stage
        if existed:
            _move_into_place(stage, out)
        else:
            os.replace(stage, out)  # one rename: the folder appears complete
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def relocate(paths, stage, out):
    """The paths written under ``stage`` as they are after the move into ``out``."""
    return {key: Path(out) / Path(path).relative_to(stage) for key, path in paths.items()}
