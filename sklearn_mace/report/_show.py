"""How an audit's result is written and shown, found from the result alone: its kind.

The writer (``_writer.py``) is handed a presentation; a result knows only its kind
(``AuditResult.kind``, ``OneRunResult.kind``), and the registry of kinds
(``_kinds/_registry.py``) knows how each kind is shown and written. This module joins the two
for the public :func:`write_report` and for the command line (:func:`write_staged`, the one
path both take: kinds import the writer, so the writer does not import the registry).
"""

from ._kinds._kind import is_audit_result
from ._kinds._kind import write_report as common_writer
from ._kinds._registry import KINDS, kind_named
from ._output import check_output_dir, relocate, staged_output

__all__ = ["kind_of", "presentation_of", "write_report", "write_staged"]


def presentation_of(result):
    """How ``result`` is shown: its kind's presentation (``_kinds/_registry.py``)."""
    return kind_named(result.kind).presentation(result)


def kind_of(result, presentation=None):
    """The kind of audit that writes ``result`` (``_kinds/_registry.py``), or None for an
    :class:`AuditResult` of a kind no registered kind has, shown by the ``presentation``
    given (a caller's own configuration of the engine: the common writer shows it).

    Raises
    ------
    TypeError
        Naming ``result``: no kind writes it (not what an audit function returned).
    ValueError
        An ``AuditResult`` whose ``kind`` no kind has, without a ``presentation``.
    """
    name = getattr(result, "kind", None)
    kind = next((k for k in KINDS if isinstance(name, str) and k.name == name), None)
    if kind is not None and kind.writes(result):
        return kind
    if kind is None and is_audit_result(result):
        return None if presentation is not None else kind_named(name)  # names the kinds
    raise TypeError(
        "result must be what an audit function of sklearn_mace.report returned "
        "(audit_release, audit_model, audit_algorithm, also with design='one_run'); got "
        f"{type(result).__name__}."
    )


def write_staged(result, out, *, kind, option="out", caught=None, **options):
    """Write ``result`` through a staging folder into ``out``: every file arrives, or none.

    The one path of :func:`write_report` and of the command line (``cli.py``, which passes
    its ``kind``, ``option="--out"`` and the warnings it ``caught``); ``out`` is checked by
    the caller before any work. ``kind``: the :class:`~._kinds._kind.Kind` whose writer
    writes it (:func:`kind_of`), or None: the common writer, with the ``presentation``
    given. ``options`` (``title``, ``presentation``) go to the writer. Returns
    ``{name: path}`` where the files now lie.
    """
    with staged_output(out, option=option) as stage:
        if kind is None:
            paths = common_writer(None, result, stage, caught, **options)
        else:
            paths = kind.write(result, stage, caught, **options)
    return relocate(paths, stage, out)


def write_report(result, out, *, title=None, presentation=None):
    """Write an audit — of synthetic releases, of models or of training recipes — to ``out``.

    Writes ``report.html`` (figures embedded as base64 PNG, no external resources),
    ``summary.csv`` (one row per subject and analysis: the certified ε and advantage lower
    bounds with their operating point, AUC, TPR at low FPR, estimates, facts),
    ``records.csv`` (every target record, members first, exposed first, with every score) and
    ``figures/*.png``; with several releases or models, ``comparisons.csv`` (paired tests of
    their held-out advantages); a synthetic-data audit adds ``disclosure.csv``. A one-run
    audit of training recipes (``audit_algorithm(..., design="one_run")``) writes its own
    card instead, exactly as ``sklearn-mace audit-algorithm --design one-run`` does:
    ``report.html`` (one card per recipe), ``summary.csv`` (one row per recipe),
    ``guesses.csv`` (each guess count and what it certifies) and one trade-off figure per
    recipe, ``figures/tradeoff_<n>_<recipe>.png``. Nothing is written outside ``out``.

    The folder is checked before anything is drawn, the files are written into a staging
    folder and moved into ``out`` at the end: a failure leaves the previous report intact.
    The folder's manifest (``.sklearn-mace-files.json``) lists the files written; the next
    report replaces exactly those, so two runs never mix, and nothing else in ``out`` is
    removed or overwritten. Text cells that a spreadsheet would run as a formula (``=``,
    ``+``, ``-``, ``@``, tab, carriage return) are escaped with a leading ``'``. Figure
    files are named ``<kind>_<n>_<name>.png`` (``n``: the subject's place), unique per
    subject. The command line writes through the same path.

    Parameters
    ----------
    result : AuditResult or OneRunResult
        What :func:`audit_release`, :func:`audit_model` or :func:`audit_algorithm` returned
        (with ``design="one_run"``, a ``OneRunResult``).
    out : str or Path
        The output folder (created if needed).
    title : str, default=None
        Title of the HTML page; default: the audit kind's.
    presentation : Presentation, default=None
        How an ``AuditResult`` is shown; default: its kind's (``result.kind``). A one-run
        result has its own card and takes none.

    Returns
    -------
    paths : dict of str -> Path
        ``report``, ``summary``, one entry per figure, and ``records``, ``comparisons``,
        ``disclosure`` or ``guesses`` when written.

    Raises
    ------
    TypeError
        Naming ``result``, before ``out`` is touched: not what an audit function returned;
        or naming ``presentation``, given with a one-run result.
    AuditInputError
        A ``ValueError`` naming ``out``, before anything is drawn: ``out`` is a file or
        cannot be written, holds a symbolic link where the report writes, or a file of the
        report's names (``summary.csv``, ``guesses.csv``, …) that no earlier report wrote.

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

    A one-run audit of the embedded demo's two histogram synthesizers (one training each,
    400 canaries; a few seconds):

    >>> from sklearn_mace.report import audit_algorithm
    >>> one_run = audit_algorithm(design="one_run", n_canaries=400)
    >>> with tempfile.TemporaryDirectory() as out:
    ...     paths = write_report(one_run, out)
    ...     print(sorted(name for name in paths if not name.endswith(".png")))
    ['guesses', 'report', 'summary']

    Anything else is refused before ``out`` is touched:

    >>> write_report({"epsilon": 1.0}, "never-written")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: result must be what an audit function of sklearn_mace.report returned ...
    """
    kind = kind_of(result, presentation)  # before anything touches out
    check_output_dir(out, option="out")
    return write_staged(result, out, kind=kind, title=title, presentation=presentation)
