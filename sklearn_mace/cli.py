"""Command line: ``sklearn-mace audit …``, ``audit-model …``, ``audit-algorithm …`` and
``demo`` (also ``python -m sklearn_mace``).

One command per kind of audit (``report/_kinds/_registry.py``; each kind's options, inputs
and demo are its own, ``report/_kinds/<kind>/_cli.py``), and one path for all of them
(:func:`run_kind`): check the arguments, check ``--out``, run the audit (or the kind's
demo) with every warning caught, write the report (staged), print its summary. This module
names no kind. Exit status: 0 a complete report, 2 an input error (nothing written), 3 a
partial report (an analysis failed; see "Failed analyses" in report.html and the ``status``
column of summary.csv), 130 interrupted (Ctrl-C; a previous report is left intact).
Warnings raised by the audit go into the report's notes: the library's own (a column
dropped, rows left out) are printed with the summary, the others (NumPy's, scikit-learn's,
…, joblib's worker processes included) only counted, and not at all with ``--quiet``.
``--out`` may hold no input file and no symbolic link where the report writes; a report
replaces only the files its folder's manifest lists (``report/_output.py``). Without input
files each command audits its kind's embedded demo (``demo``: the synthetic-data one).
"""

import argparse
import atexit
import os
import re
import shutil
import sys
import tempfile

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report an interrupted command


def build_parser():
    """The ``sklearn-mace`` argument parser: one command per kind, then the demo commands."""
    from ._version import __version__
    from .report._kinds._registry import KINDS

    parser = argparse.ArgumentParser(
        prog="sklearn-mace", description="Membership-inference auditing with scikit-learn."
    )
    parser.add_argument("--version", action="version", version=f"sklearn-mace {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for kind in KINDS:
        _add_command(commands, kind, kind.command, demo_only=False)
    for kind in KINDS:
        if kind.demo.command is not None:
            _add_command(commands, kind, kind.demo.command, demo_only=True)
    return parser


def _add_command(commands, kind, command, *, demo_only):
    """One sub-command; its arguments remember the kind (and whether it runs the demo only)."""
    sub = commands.add_parser(command.name, help=command.help, description=command.description)
    command.add_arguments(sub)
    sub.set_defaults(kind=kind, demo_only=demo_only)


def run_kind(kind, args):
    """The one path of every command: check, audit (or demo), write, print; the result.

    The arguments and ``--out`` are checked before any work; the audit runs with every
    warning caught (those of joblib's worker processes too), which become the report's
    notes. A demo writes its input files into the report's staging folder, so they arrive
    with the report (or not at all).
    """
    demo = kind.demo if args.demo_only or kind.demo.wants(args) else None
    (kind.check_arguments if demo is None or demo.check is None else demo.check)(args)
    out = _checked_out(kind, args, demo)  # before any work
    if demo is not None:
        _say(demo.intro(args))
    if demo is not None and demo.run is not None:
        return _staged_demo(kind, demo, args, out)
    from .report._warnings import catching_warnings

    with catching_warnings() as caught:
        result = kind.audit_from_arguments(args)
    _in_command_words(args, result, caught)
    _write_and_print(kind, args, result, out, caught)
    return result


def _in_command_words(args, result, caught):
    """The library's warnings and the result's notes name Python parameters; the command
    line says its flags instead (:func:`_in_flags`)."""
    from dataclasses import replace

    flags = _parameter_flags(build_parser(), args.command)
    for i, item in enumerate(caught):
        if item.module.split(".")[0] == "sklearn_mace":
            caught[i] = replace(item, message=_in_flags(item.message, flags))
    notes = getattr(result, "notes", None)
    if notes is not None:
        notes[:] = [_in_flags(note, flags) for note in notes]
    other = getattr(result, "other_failures", None)  # e.g. the disclosure risks' reason
    if other:
        other[:] = [(*failure[:-1], _in_flags(failure[-1], flags)) for failure in other]


def _say(lines):
    for line in lines:
        print(line)


def _layout(demo):
    """The sub-folders and fixed file names the report (and the demo) write under --out."""
    from .report._output import FIGURES, OWN_FILES

    if demo is None:
        return {"folders": (FIGURES,), "files": OWN_FILES}
    return {"folders": demo.folders, "files": (*OWN_FILES, *demo.files)}


def _checked_out(kind, args, demo):
    """--out, checked before any work: writable, holding no input file and no link."""
    from .report._output import check_output_dir

    default = kind.default_out if demo is None else demo.out
    return check_output_dir(
        args.out or default, option="--out", inputs=kind.input_files(args), **_layout(demo)
    )


def _staged_demo(kind, demo, args, out):
    """The demo: its input files and the report staged together, then the summary and the
    same audit from files."""
    from .report._output import relocate, staged_output
    from .report._warnings import catching_warnings

    with staged_output(out, option="--out", **_layout(demo)) as stage:
        with catching_warnings() as caught:
            result = demo.run(args, stage)
        _in_command_words(args, result, caught)
        paths = kind.write(result, stage, caught)
    kind.show(result, relocate(paths, stage, out), caught, args.quiet)
    _say(demo.outro(out))
    return result


def _write_and_print(kind, args, result, out, caught):
    """Write the report (staged: all files arrive, or none), then print the summary: the
    third-party warnings, listed in the report's notes, are only counted on the terminal
    (not at all with --quiet)."""
    from .report._show import write_staged  # write_report's own path

    paths = write_staged(result, out, kind=kind, option="--out", caught=caught)
    kind.show(result, paths, caught, args.quiet)


def _private_matplotlib_config():
    """Point matplotlib's config and font cache at a temporary folder removed at exit.

    matplotlib writes its font cache under the user's home on its first import; the CLI
    writes nothing outside ``--out``. Only before matplotlib is imported, and only when
    the user has not chosen ``MPLCONFIGDIR``. (Building the cache takes under a second.)
    """
    if "matplotlib" in sys.modules or "MPLCONFIGDIR" in os.environ:
        return
    folder = tempfile.mkdtemp(prefix="sklearn-mace-mpl-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["MPLCONFIGDIR"] = folder


def _private_cuda_cache():
    """Point CUDA's JIT cache at a temporary folder removed at exit (issue #28).

    With a GPU, the CUDA driver compiles kernels on their first launch and stores them in
    ``~/.nv/ComputeCache`` unless ``CUDA_CACHE_PATH`` says elsewhere; the CLI writes nothing
    outside ``--out``. The driver reads the variable when it starts, which the CLI has not
    done yet (nothing touches CUDA before the command runs); a user's own
    ``CUDA_CACHE_PATH`` is kept (a lasting cache saves the compilation in the next run), and
    a build of torch without CUDA needs none.
    """
    if "CUDA_CACHE_PATH" in os.environ:
        return
    import torch

    if torch.version.cuda is None:
        return
    folder = tempfile.mkdtemp(prefix="sklearn-mace-cuda-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["CUDA_CACHE_PATH"] = folder


_VALUE = r"""\[[^\[\]]*\]|'[^']*'|"[^"]*"|True|False|None|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"""
_PARAMETER = re.compile(
    rf"(?<![\w.])(?<!\w\()([a-z_][a-z0-9_]*)=(?:({_VALUE})(?![\w/])|(?=[\s,;:.)]|$))"
)


def _parameter_flags(parser, command):
    """Python parameter (or ``name=value``) -> the argparse action of its flag in
    ``command``, read off the parser (each action's dest), so it cannot drift."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub = commands.choices[command]
    actions = {a.dest: a for a in sub._actions if a.option_strings}
    renamed = sub.get_default("kind").command.renamed  # the kind's parameters named otherwise
    actions.update({p: actions[d] for p, d in renamed.items() if d in actions})
    return actions


def _in_flags(message, flags):
    """A library message (it names Python parameters) in the command line's words: each
    ``name=value`` of a parameter with a flag becomes the flag, e.g.
    ``allow_unparsed=['age']`` -> ``--allow-unparsed age``, ``trust_pickle=True`` ->
    ``--trust-pickle``, ``columns=`` -> ``--columns``."""

    def flag(match):
        action = flags.get(match.group(0)) or flags.get(match.group(1))
        value = match.group(2)
        if action is None:
            return match.group(0)
        option = action.option_strings[-1]
        if match.group(0) in flags:  # a value that is a flag of its own: id_columns=[]
            return option
        if action.nargs == 0:  # a switch: name=True
            return option if value in (None, "True") else match.group(0)
        if value is None:
            return option
        if value.startswith("["):
            items = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
            if isinstance(action, argparse._AppendAction):  # given once per value
                return " ".join(f"{option} {item}" for item in items)
            return f"{option} {','.join(items)}"
        if value[0] in "'\"" and len(value) > 2 and " " not in value:
            value = value[1:-1]
        return f"{option} {value}"

    return _PARAMETER.sub(flag, message)


def main(argv=None):
    """Run the command line; returns the exit status (0, 2, 3, or 130 when interrupted)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _private_matplotlib_config()
    _private_cuda_cache()

    try:
        import matplotlib  # noqa: F401  (the report's figures)
    except ImportError:
        parser.exit(
            2,
            f"sklearn-mace {args.command}: error: the report's figures need matplotlib: "
            'pip install "sklearn-mace[plot]"\n',
        )
    return _exit_status(parser, args)


def _exit_status(parser, args):
    """Run the command; an input error is one line and exit 2, Ctrl-C one line and 130."""
    from .report import AuditInputError

    try:
        result = run_kind(args.kind, args)
    except AuditInputError as exc:
        message = _in_flags(str(exc), _parameter_flags(parser, args.command))
        parser.exit(2, f"sklearn-mace {args.command}: error: {message}\n")
    except KeyboardInterrupt:  # one line, not a traceback; the report is staged
        print(
            f"\nsklearn-mace {args.command}: interrupted; no new report was written (a "
            "previous report in the output folder is left as it was).",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return 3 if result.partial else 0  # 3: a partial report (some analysis failed)


if __name__ == "__main__":
    sys.exit(main())
