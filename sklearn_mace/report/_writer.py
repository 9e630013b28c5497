"""Writing an audit to a folder: report.html (self-contained), summary.csv, records.csv,
figures/*.png, comparisons.csv with several subjects (and what the kind adds, e.g.
disclosure.csv). Nothing is written elsewhere; every CSV goes through ``write_csv``
(formula injection escaped), and the folder's manifest lists what was written."""

import contextlib
from pathlib import Path

from ._format import embed_figure
from ._html import render_report
from ._kinds._registry import kind_named
from ._output import check_output_dir, relocate, staged_output, write_csv
from ._section import Report
from ._warnings import add_warning_notes, catching_warnings

__all__ = ["presentation_of", "print_report", "write_report", "write_report_files"]


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
        paths = write_report_files(result, stage, title=title, presentation=presentation)
    return relocate(paths, stage, out)


def write_report_files(result, out, *, title=None, caught=None, presentation=None):
    """The body of :func:`write_report`, writing into the (staging) folder ``out``.

    ``caught``: the warnings of the run (a :class:`._warnings.WarningLog` from
    ``catching_warnings``), or None. When given, the warnings raised while writing
    (matplotlib's, drawing) join them and all become the report's notes
    (:func:`._warnings.add_warning_notes`) before the page is rendered. ``presentation``:
    how the result is shown (default: :func:`presentation_of`).
    """
    out = Path(out)
    report = Report(result, presentation_of(result) if presentation is None else presentation)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    paths = {
        "report": out / "report.html",
        "summary": out / "summary.csv",
        "records": out / "records.csv",
    }
    write_csv(report.summary, paths["summary"])
    write_csv(report.records, paths["records"])
    if not report.comparisons.empty:
        paths["comparisons"] = out / "comparisons.csv"
        write_csv(report.comparisons, paths["comparisons"])
    with contextlib.nullcontext([]) if caught is None else catching_warnings() as drawing:
        paths.update(_section_files(report, out))
    if caught is not None:
        caught.extend(drawing)
        add_warning_notes(result, caught)
    page = render_report(report, title or report.presentation.title)
    paths["report"].write_text(page, encoding="utf-8")
    return paths


def _section_files(report, out):
    """Every section's files, then its figures, drawn into ``out/figures`` and embedded
    (``report.figures``), in the sections' order."""
    paths = {}
    sections = report.presentation.sections
    for section in sections:
        paths.update(section.files(report, out))
    figures = {}
    for section in sections:
        figures.update(section.figures(report))
    for name, (fig, caption) in figures.items():
        png, element = embed_figure(fig, name, caption)
        paths[name] = out / "figures" / name
        paths[name].write_bytes(png)
        report.figures.append(element)
    return paths


def print_report(result, paths, caught=None, *, quiet=False, presentation=None):
    """Print the summary of a written report: the third-party warnings of ``caught`` (a
    ``WarningLog`` whose notes were added), listed in the report's notes, are counted in one
    line (not at all when ``quiet``). ``presentation``: how the result is shown (default:
    :func:`presentation_of`)."""
    from dataclasses import replace

    from ._summary import print_summary
    from ._warnings import printed_notes

    shown = presentation_of(result) if presentation is None else presentation
    print_summary(replace(result, notes=printed_notes(result, caught, quiet)), shown, paths)
