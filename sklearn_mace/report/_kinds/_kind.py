"""What one kind of audit is: the unit a configuration of the engine is made of.

A kind (releases, models, training recipes) lives in its own folder under ``_kinds/`` and
exports one :class:`Kind`; ``_registry.py`` lists them, one line each. Everything the rest of
the package needs to know about a kind goes through its :class:`Kind`: the command line
(``sklearn_mace/cli.py``) builds one command per kind from it and runs every kind through one
path (check, demo, warnings, writing, printing), naming no kind itself.

Nothing here is imported at the command line's start beyond the kinds' ``_cli.py`` modules,
which import only ``argparse`` then: a kind's engine, presentation and demo load when used.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Command", "Demo", "Kind", "is_audit_result", "print_report", "write_report"]


@dataclass(frozen=True)
class Command:
    """A sub-command of ``sklearn-mace``.

    Attributes
    ----------
    name : str
        What the user types (``"audit-model"``).
    help : str
        The line of ``sklearn-mace --help``.
    description : str
        The text of ``sklearn-mace <name> --help``.
    add_arguments : callable
        ``add_arguments(parser)``: the command's options.
    renamed : dict of str -> str
        The Python parameters (of the kind's audit and loaders) whose flag has another
        name: parameter -> the flag's ``dest`` (``"n_canaries": "canaries"``), and values
        that are flags of their own (``"disclosure=False": "no_disclosure"``); every other
        parameter is its flag's ``dest``. The CLI words the library's messages with it.
    """

    name: str
    help: str
    description: str
    add_arguments: Callable
    renamed: dict = field(default_factory=dict)


def no_lines(_):
    """No lines to print."""
    return []


@dataclass(frozen=True)
class Demo:
    """A kind's embedded demo: what runs when the command gets no input.

    Attributes
    ----------
    out : Path
        The default output folder of the demo.
    wants : callable
        ``wants(args) -> bool``: the arguments ask for the demo (no input given).
    intro : callable
        ``intro(args) -> list of str``: printed before the demo runs.
    run : callable or None
        ``run(args, stage) -> result``: writes the demo's input files (tables, models) under
        the staging folder ``stage``, audits them and returns the result (the report is
        written and printed by the common path). None: the kind's audit reads its embedded
        data itself (``audit_from_arguments``), and the demo writes no input files.
    check : callable or None
        ``check(args)``: raises ``AuditInputError`` for options the demo would drop; None:
        the kind's ``check_arguments``.
    outro : callable
        ``outro(out) -> list of str``: printed after the report (the same audit from files).
    folders, files : tuple of str
        The sub-folders and file names the demo writes under ``out`` besides the report's
        own, checked before any work.
    command : Command or None
        A command that runs the demo alone (``sklearn-mace demo``); it takes ``--out``,
        ``--random-state`` and ``--quiet``.
    """

    out: Path
    wants: Callable
    intro: Callable = no_lines
    run: Callable | None = None
    check: Callable | None = None
    outro: Callable = no_lines
    folders: tuple = ("figures",)
    files: tuple = ()
    command: Command | None = None


def write_report(kind, result, stage, caught, *, title=None, presentation=None):
    """The common report's files under ``stage``: report.html, the CSVs, the figures;
    ``presentation`` (default: the kind's) and ``title`` (default: the presentation's) as
    :func:`~sklearn_mace.report.write_report` takes them."""
    from .._writer import write_report_files

    shown = kind.presentation(result) if presentation is None else presentation
    return write_report_files(result, stage, caught=caught, title=title, presentation=shown)


def is_audit_result(result):
    """Whether ``result`` is an :class:`~sklearn_mace.report.AuditResult` (what the common
    writer writes)."""
    from .._results import AuditResult

    return isinstance(result, AuditResult)


def print_report(kind, result, paths, caught, quiet):
    """The common printed summary of a written report."""
    from .._writer import print_report

    print_report(result, paths, caught, quiet=quiet, presentation=kind.presentation(result))


@dataclass(frozen=True)
class Kind:
    """One configuration of the audit engine, with its command and its demo.

    Attributes
    ----------
    name : str
        What one audited subject is, as ``AuditResult.kind`` says it (``"release"``).
    presentation : callable
        ``presentation(result) -> Presentation``: what this kind adds to the common report.
    command : Command
        Its ``sklearn-mace`` command (``audit``, ``audit-model``, ``audit-algorithm``).
    default_out : Path
        The output folder when ``--out`` is not given.
    check_arguments : callable
        ``check_arguments(args)``: raises ``AuditInputError`` (naming the flags) for what can
        be seen before any work: inputs missing, names repeated, options that exclude each
        other.
    input_files : callable
        ``input_files(args) -> list of (flag, path)``: no input file may lie in ``--out``.
    audit_from_arguments : callable
        ``audit_from_arguments(args) -> result``: reads the inputs and runs the audit (its
        failed analyses reported, not raised: ``on_error="report"``). ``result.partial``
        says whether an analysis failed (exit status 3).
    demo : Demo
        Its embedded demo.
    writer : callable
        ``writer(kind, result, stage, caught, **options) -> paths``: writes the result's
        files into the staging folder (default: the common report, :func:`write_report`);
        ``options``: ``title`` and ``presentation`` when the Python caller gave them (a
        writer that takes neither is never passed them).
    writes : callable
        ``writes(result) -> bool``: whether ``writer`` can write ``result`` (default: an
        :class:`~sklearn_mace.report.AuditResult`, :func:`is_audit_result`);
        :func:`~sklearn_mace.report.write_report` refuses anything else.
    printer : callable
        ``printer(kind, result, paths, caught, quiet)``: prints what was written (default:
        the common summary, :func:`print_report`).
    """

    name: str
    presentation: Callable
    command: Command
    default_out: Path
    check_arguments: Callable
    input_files: Callable
    audit_from_arguments: Callable
    demo: Demo
    writer: Callable = write_report
    printer: Callable = print_report
    writes: Callable = is_audit_result

    def write(self, result, stage, caught, **options):
        """Write ``result`` into the staging folder ``stage``; returns the paths written.
        ``options`` (``title``, ``presentation``) reach the writer when they are not None."""
        given = {name: value for name, value in options.items() if value is not None}
        return self.writer(self, result, stage, caught, **given)

    def show(self, result, paths, caught, quiet):
        """Print the summary of the written ``result`` (``paths``: where it now lies)."""
        self.printer(self, result, paths, caught, quiet)
