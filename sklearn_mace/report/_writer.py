"""Writing an audit to a folder: report.html (self-contained), summary.csv, records.csv,
figures/*.png, comparisons.csv with several subjects (and what the kind adds, e.g.
disclosure.csv). Nothing is written elsewhere."""

from pathlib import Path

from ._figures import common_figures
from ._format import embed_figure
from ._html import render_report
from ._output import check_output_dir, relocate, staged_output

__all__ = ["write_report"]


def write_report(result, out, *, title=None):
    """Write an audit — of synthetic releases or of models — to the folder ``out``.

    Writes ``report.html`` (figures embedded as base64 PNG, no external resources),
    ``summary.csv`` (one row per subject and analysis: the certified ε and advantage lower
    bounds with their operating point, AUC, TPR at low FPR, estimates, facts),
    ``records.csv`` (every target record, members first, exposed first, with every score) and
    ``figures/*.png``; with several releases or models, ``comparisons.csv`` (paired tests of
    their held-out advantages); a synthetic-data audit adds ``disclosure.csv``. Nothing is written
    outside ``out``.

    The folder is checked before anything is drawn, the files are written into a staging
    folder and moved into ``out`` at the end: a failure leaves the previous report intact,
    and the report's own files from an earlier run are replaced, never mixed with the new
    ones. Other files in ``out`` are left alone.

    Parameters
    ----------
    result : AuditResult
        What :func:`audit` or :func:`audit_model` returned.
    out : str or Path
        The output folder (created if needed).
    title : str, default=None
        Title of the HTML page; default: the audit kind's.

    Returns
    -------
    paths : dict of str -> Path
        ``report``, ``summary``, ``records``, one entry per figure, and ``comparisons`` and
        ``disclosure`` when written.

    Examples
    --------
    Drawing the figures takes a few seconds, so this example is not run as a doctest:

    >>> import tempfile
    >>> import numpy as np, pandas as pd
    >>> from sklearn_mace.report import audit, write_report
    >>> rng = np.random.default_rng(0)
    >>> members = pd.DataFrame({"x": rng.normal(size=30), "y": rng.normal(size=30)})
    >>> non_members = pd.DataFrame({"x": rng.normal(size=30), "y": rng.normal(size=30)})
    >>> result = audit(members, non_members, members, verbose=False)  # doctest: +SKIP
    >>> with tempfile.TemporaryDirectory() as out:  # doctest: +SKIP
    ...     paths = write_report(result, out)
    ...     print(paths["report"].name, paths["summary"].name)
    report.html summary.csv
    """
    check_output_dir(out, option="the output folder")
    with staged_output(out) as stage:
        paths = _write_files(result, stage, title or result.presentation.title)
    return relocate(paths, stage, out)


def _write_files(result, out, title):
    """The body of :func:`write_report`, writing into the (staging) folder ``out``."""
    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    summary, records = result.summary, result.records
    paths = {
        "report": out / "report.html",
        "summary": out / "summary.csv",
        "records": out / "records.csv",
    }
    summary.to_csv(paths["summary"], index=False)
    records.to_csv(paths["records"], index=False)
    comparisons = result.comparisons
    if not comparisons.empty:
        paths["comparisons"] = out / "comparisons.csv"
        comparisons.to_csv(paths["comparisons"], index=False)
    paths.update(result.presentation.extra_files(result, out))
    common = common_figures(result) if result.presentation.record_targets else {}
    figures = {**common, **result.presentation.figures(result)}
    figure_html = []
    for name, (fig, caption) in figures.items():
        png, element = embed_figure(fig, name, caption)
        paths[name] = out / "figures" / name
        paths[name].write_bytes(png)
        figure_html.append(element)
    page = render_report(result, summary, records, figure_html, title, comparisons)
    paths["report"].write_text(page, encoding="utf-8")
    return paths
