"""How an audit's result is shown, found from the result alone: its kind's presentation.

The writer (``_writer.py``) is handed a presentation; a result knows only its kind
(``AuditResult.kind``), and the registry of kinds (``_kinds/_registry.py``) knows how each
kind is shown. This module joins the two for the public :func:`write_report` (kinds import
the writer, so the writer does not import the registry).
"""

from ._kinds._registry import kind_named
from ._output import check_output_dir, relocate, staged_output
from ._writer import write_report_files

__all__ = ["presentation_of", "write_report"]


def presentation_of(result):
    """How ``result`` is shown: its kind's presentation (``_kinds/_registry.py``)."""
    return kind_named(result.kind).presentation(result)


def write_report(result, out, *, title=None, presentation=None):
    """Write an audit — of synthetic releases or of models — to the folder ``out``.

    Writes ``report.html`` (figures embedded as base64 PNG, no external resources),
    ``summary.csv`` (one row per subject and analysis: the certified ε and advantage lower
    bounds with their operating point, AUC, TPR at low FPR, estimates, facts),
    ``records.csv`` (every target record, members first, exposed first, with every score) and
    ``figures/*.png``; with several releases or models, ``comparisons.csv`` (paired tests of
    their held-out advantages); a synthetic-data audit adds ``disclosure.csv``. Nothing is written
    outside ``out``.

    The folder is checked before anything is drawn, the files are written into a staging
    folder and moved into ``out`` at the end: a failure leaves the previous report intact.
    The folder's manifest (``.sklearn-mace-files.json``) lists the files written; the next
    report replaces exactly those, so two runs never mix, and nothing else in ``out`` is
    removed or overwritten. Text cells that a spreadsheet would run as a formula (``=``,
    ``+``, ``-``, ``@``, tab, carriage return) are escaped with a leading ``'``. Figure
    files are named ``<kind>_<n>_<name>.png`` (``n``: the subject's place), unique per
    subject.

    Parameters
    ----------
    result : AuditResult
        What :func:`audit_release` or :func:`audit_model` returned.
    out : str or Path
        The output folder (created if needed).
    title : str, default=None
        Title of the HTML page; default: the audit kind's.
    presentation : Presentation, default=None
        How the result is shown; default: its kind's (``result.kind``).

    Returns
    -------
    paths : dict of str -> Path
        ``report``, ``summary``, ``records``, one entry per figure, and ``comparisons`` and
        ``disclosure`` when written.

    Raises
    ------
    AuditInputError
        A ``ValueError`` naming ``out``, before anything is drawn: ``out`` is a file or
        cannot be written, holds a symbolic link where the report writes, or a file of the
        report's names (``summary.csv``, …) that no earlier report wrote.

    Examples
    --------
    Drawing the figures takes a few seconds, so this example is not run as a doctest:

    >>> import tempfile
    >>> import numpy as np, pandas as pd
    >>> from sklearn_mace.report import audit_release, write_report
    >>> rng = np.random.default_rng(0)
    >>> members = pd.DataFrame({"x": rng.normal(size=30), "y": rng.normal(size=30)})
    >>> non_members = pd.DataFrame({"x": rng.normal(size=30), "y": rng.normal(size=30)})
    >>> result = audit_release(members, non_members, members, verbose=False)  # doctest: +SKIP
    >>> with tempfile.TemporaryDirectory() as out:  # doctest: +SKIP
    ...     paths = write_report(result, out)
    ...     print(paths["report"].name, paths["summary"].name)
    report.html summary.csv
    """
    check_output_dir(out, option="out")
    with staged_output(out, option="out") as stage:
        shown = presentation_of(result) if presentation is None else presentation
        paths = write_report_files(result, stage, title=title, presentation=shown)
    return relocate(paths, stage, out)
