"""Writing an audit to a folder: report.html (self-contained), summary.csv, records.csv,
figures/*.png, comparisons.csv with several subjects (and what the kind adds, e.g.
disclosure.csv). Nothing is written elsewhere; every CSV goes through ``write_csv``
(formula injection escaped), and the folder's manifest lists what was written."""

import contextlib
from pathlib import Path

from ._format import embed_figure
from ._html import render_report
from ._output import write_csv
from ._section import Report
from ._warnings import add_warning_notes, catching_warnings

__all__ = ["print_report", "write_report_files"]


def write_report_files(result, out, *, presentation, title=None, caught=None):
    """The body of :func:`~sklearn_mace.report.write_report`, writing into the (staging)
    folder ``out`` the result as ``presentation`` shows it.

    ``caught``: the warnings of the run (a :class:`._warnings.WarningLog` from
    ``catching_warnings``), or None. When given, the warnings raised while writing
    (matplotlib's, drawing) join them and all become the report's notes
    (:func:`._warnings.add_warning_notes`) before the page is rendered.
    """
    out = Path(out)
    report = Report(result, presentation)
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


def print_report(result, paths, caught=None, *, presentation, quiet=False):
    """Print the summary of a written report: the third-party warnings of ``caught`` (a
    ``WarningLog`` whose notes were added), listed in the report's notes, are counted in one
    line (not at all when ``quiet``); ``presentation`` says how the result is shown."""
    from dataclasses import replace

    from ._summary import print_summary
    from ._warnings import printed_notes

    print_summary(replace(result, notes=printed_notes(result, caught, quiet)), presentation, paths)
