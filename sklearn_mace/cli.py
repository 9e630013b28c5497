"""Command line: ``sklearn-mace audit …`` and ``sklearn-mace audit-model …`` (also
``python -m sklearn_mace``).

Both commands run the same engine and write the same kind of report. Exit status: 0 a
complete report, 2 an input error (nothing written), 3 a partial report (an analysis failed;
see "Failed analyses" in report.html and the ``status`` column of summary.csv), 130
interrupted (Ctrl-C; a previous report is left intact). Warnings raised by the audit go into
the report's notes: the library's own (a column dropped, rows left out) are printed with the
summary, the others (NumPy's, scikit-learn's, …, joblib's worker processes included) only
counted, and not at all with ``--quiet``. ``--out`` may hold no input file and no symbolic
link where the report writes; a report replaces only the files its folder's manifest lists
(``report/_output.py``). Without input files,
``audit`` (and ``demo``) audit the embedded synthetic-data demo and ``audit-model`` the
embedded model demo.
"""

import argparse
import atexit
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

DEFAULT_OUT = Path("mace-output") / "audit"
DEMO_OUT = Path("mace-output") / "demo"
MODEL_OUT = Path("mace-output") / "audit-model"
EXIT_CODES = (
    "Exit status: 0 complete report, 2 input error (nothing written), 3 partial report (an "
    "analysis failed; see 'Failed analyses' in report.html and the status column of "
    "summary.csv), 130 interrupted (Ctrl-C; a previous report is left intact)."
)
RANDOM_STATE_HELP = (
    "the base of every random choice (reference split, folds, seeds): the same inputs and "
    "--random-state give the same report (default: 0)"
)
ALGORITHM_RANDOM_STATE_HELP = (
    "the base of every random choice (targets, the runs' data and seeds, the attack's split "
    "of the runs): the same inputs and --random-state give the same report (default: 0)"
)
QUIET_HELP = (
    "no progress bars, and no count of the warnings of NumPy, scikit-learn and other code on "
    "the terminal (they are listed in the report's notes either way)"
)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report an interrupted command
RELATION = (
    "Members against fresh records refute substitute-one DP; an add/remove-one ε (what DP-SGD "
    "accountants and DP synthesizers state) implies substitute-one 2ε."
)


def _number(flag, low, high, *, closed_low=False, closed_high=False, integer=False):
    """An argparse type: a number in (low, high), each end open unless closed_*."""

    def parse(text):
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a number; got {text!r}") from None
        above = value >= low if closed_low else value > low
        below = value <= high if closed_high else value < high
        if not (above and below):
            ends = ("[" if closed_low else "(", "]" if closed_high else ")")
            raise argparse.ArgumentTypeError(
                f"{flag} must be in {ends[0]}{low:g}, {high:g}{ends[1]}; got {text}"
            )
        return value

    return parse


def _integer(allowed, text):
    """``int(text)`` when it parses and ``allowed`` accepts it, else None."""
    try:
        return int(text) if allowed(int(text)) else None
    except ValueError:
        return None


def _positive_int(text):
    value = _integer(lambda v: v >= 1, text)
    if value is None:
        raise argparse.ArgumentTypeError(f"--max-categories must be an integer >= 1; got {text!r}")
    return value


def _random_state(text):
    value = _integer(lambda v: 0 <= v < 2**32, text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"--random-state must be an integer in [0, 2**32 - 1]; got {text!r}"
        )
    return value


def _n_jobs(text):
    value = _integer(lambda v: v != 0, text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"--n-jobs must be a non-zero integer (-1: all cores); got {text!r}"
        )
    return value


def _reference_models(text):
    value = _integer(lambda v: v >= 1, text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"--reference-models must be an integer >= 1 (1: RMIA offline only; >= 2: each "
            f"record trains half of them); got {text!r}"
        )
    return value


_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def _byte_size(text):
    """``--max-skops-size``: bytes, or a number with K, M, G or T (binary: 1K = 1024)."""
    number = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = number[-1:] if number[-1:] in "kmgt" else ""
    try:
        value = float(number[: len(number) - len(unit)]) * _SIZE_UNITS[unit]
    except ValueError:
        value = 0
    if not value >= 1:
        raise argparse.ArgumentTypeError(
            f"--max-skops-size must be a positive size in bytes, or with K, M or G (e.g. "
            f"4G); got {text!r}"
        )
    return int(value)


def _class_list(text):
    """``--classes A,B,…``: numbers become numbers (``1`` is the class 1), others text."""
    values = [v.strip() for v in text.split(",")]
    if len(values) < 2 or not all(values):
        raise argparse.ArgumentTypeError(
            f"--classes must list at least two classes, comma-separated; got {text!r}"
        )
    parsed = []
    for value in values:
        try:
            number = float(value)
            parsed.append(int(number) if number.is_integer() else number)
        except ValueError:
            parsed.append(value)
    return parsed


def _named_path(text):
    """``NAME=PATH`` or ``PATH`` (the name is then the file name without its suffixes)."""
    name, sep, path = text.partition("=")
    if not sep or not name or Path(text).exists():
        path = text
        name = Path(text).name.split(".")[0] or text
    return name, path


def _claim_options(group, noun):
    """The options both audits share: the claims' prior, level, δ and the claimed ε."""
    group.add_argument(
        "--prior",
        type=_number("--prior", 0, 1),
        default=None,
        help="P(member) at which advantages and risks are stated (default: the fraction of "
        "members among the audited records)",
    )
    group.add_argument(
        "--confidence",
        type=_number("--confidence", 0, 1),
        default=0.95,
        help=f"level at which every certified number of a {noun} holds, all together "
        "(Bonferroni; default: 0.95)",
    )
    group.add_argument(
        "--delta",
        type=_number("--delta", 0, 1, closed_low=True),
        default=0.0,
        help="δ of (ε, δ)-DP at which the ε lower bounds are stated, e.g. the 1e-5 of a "
        "DP-SGD accountant (default: 0)",
    )
    group.add_argument(
        "--claimed-epsilon",
        type=_number("--claimed-epsilon", 0, float("inf"), closed_low=True, closed_high=True),
        default=1.0,
        help=f"the ε of a DP claim to test: a certified ε above it turns a {noun}'s card red "
        f"(default: 1). {RELATION} For an add/remove-one claim ε, pass 2ε.",
    )
    group.add_argument(
        "--bounded-margin",
        type=_number("--bounded-margin", 0, 1),
        default=0.1,
        metavar="M",
        help=f"a {noun}'s card is green (leakage bounded) only when every analysis's certified "
        "upper bound on the advantage is at most the trivial |2p - 1| plus this margin; "
        "otherwise red (leakage certified) or grey (inconclusive) (default: 0.1)",
    )
    group.add_argument("--random-state", type=_random_state, default=0, help=RANDOM_STATE_HELP)
    group.add_argument("--quiet", action="store_true", help=QUIET_HELP)


def _thousands(text):
    if len(text) > 1 or text.isdigit():
        raise argparse.ArgumentTypeError(
            f"--thousands must be one character other than a digit, or '' for none; got {text!r}"
        )
    return text


def _table_options(group):
    """How the tables are read and which columns are row ids (both audits)."""
    group.add_argument(
        "--decimal",
        choices=(",", "."),
        default=None,
        metavar="MARK",  # argparse would show the choices as {,,.}
        help="the decimal mark of the CSV files' numbers, ',' or '.' (default: ',' for a "
        "';'-separated file whose numbers are written 14,25 and never 14.25, else '.')",
    )
    group.add_argument(
        "--thousands",
        type=_thousands,
        default=None,
        metavar="CHAR",
        help="the thousands separator of the CSV files' numbers, '' for none (default: '.' "
        "with a decimal comma, ',' when quoted numbers are written \"1,234\", else none)",
    )
    group.add_argument(
        "--id-columns",
        action="append",
        metavar="A,B,…",
        help="the columns that are row ids, left out of the audit (default: those that look "
        "like one: all-distinct integers over a dense range or under an id-like name, or an "
        "evenly spaced sequence; each is named in a warning)",
    )
    group.add_argument(
        "--keep-id-columns",
        action="store_true",
        help="keep the columns that look like row ids (split between members and hold-out "
        "rows, a row id fakes a leak)",
    )


def _audit_inputs(sub):
    inputs = sub.add_argument_group("inputs (CSV or Parquet; all three, or none for the demo)")
    inputs.add_argument("--members", metavar="PATH", help="training rows of the generator")
    inputs.add_argument(
        "--non-members",
        metavar="PATH",
        help="hold-out rows from the same population, unseen by the generator",
    )
    inputs.add_argument(
        "--synthetic",
        metavar="[NAME=]PATH",
        nargs="+",
        type=_named_path,
        help="released synthetic rows; several releases are compared side by side",
    )
    inputs.add_argument(
        "--reference",
        metavar="PATH",
        help="further population rows for DOMIAS and GAN-leaks CAL (default: half of the "
        "non-members)",
    )


def _add_audit_parser(commands):
    sub = commands.add_parser(
        "audit",
        help="privacy report for synthetic data: HTML, CSV and PNG under --out",
        description=(
            "Audit synthetic data for membership leakage: MACE on the nearest-synthetic "
            "distance (its Bayes rule, a certified lower bound on the optimal advantage with "
            "the estimate U_N beside it, held-out per-record risk), DOMIAS, the MC and "
            "GAN-leaks CAL baselines and the exact-copy test; every analysis's held-out scores "
            "get a certified ε lower bound, and every certified number of a release holds at "
            "--confidence together. Files are CSV or Parquet. Without input files it audits "
            f"the embedded demo data. {RELATION} {EXIT_CODES}"
        ),
    )
    _audit_inputs(sub)
    options = sub.add_argument_group("audit options")
    _claim_options(options, "release")
    options.add_argument(
        "--columns", action="append", metavar="A,B,…", help="audit only these columns"
    )
    _table_options(options)
    options.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=None,
        help=f"output folder (default: {DEFAULT_OUT}, or {DEMO_OUT} for the demo); nothing is "
        "written elsewhere",
    )
    options.add_argument(
        "--group-by",
        metavar="COLUMN",
        default=None,
        help="a categorical column of the members and non-members that groups the records "
        "in the risk figure and records.csv",
    )
    options.add_argument(
        "--max-categories",
        type=_positive_int,
        default=20,
        help="text columns with more categories (after merging those under 1 %% of the "
        "rows) are dropped as identifiers or free text (default: 20)",
    )
    options.add_argument(
        "--n-jobs",
        type=_n_jobs,
        default=None,
        help="releases audited in parallel (joblib: -1 = all cores); the report does not "
        "depend on it",
    )
    options.add_argument(
        "--no-disclosure",
        action="store_true",
        help="skip the attribute-inference and linkability analyses",
    )
    _quality_options(options)


def _quality_options(options):
    """The data-quality gate of ``audit``: what it may accept instead of refusing."""
    options.add_argument(
        "--allow-unparsed",
        action="append",
        metavar="A,B,…",
        help="columns that hold numbers in the real tables whose release cells may fail to "
        "parse for more than 1 %% of the values (then counted as missing, with a note); "
        "default: such a release is an input error naming the column and examples",
    )
    options.add_argument(
        "--drop-overlapping-records",
        action="store_true",
        help="leave the records found among both the members and the non-members out of "
        "both (default: an input error naming their rows)",
    )
    options.add_argument(
        "--max-columns",
        type=_number("--max-columns", 1, float("inf"), closed_low=True, integer=True),
        default=5000,
        metavar="N",
        help="refuse tables with more audited columns (default: 5000)",
    )


def _model_inputs(sub):
    inputs = sub.add_argument_group("inputs (tables: CSV or Parquet)")
    inputs.add_argument(
        "--model",
        metavar="[NAME=]PATH",
        nargs="+",
        type=_named_path,
        help="the classifier(s): .onnx (run by onnxruntime), .skops, or a pickle/joblib file "
        "with --trust-pickle; several are compared side by side",
    )
    inputs.add_argument("--members", metavar="PATH", help="the model's training rows")
    inputs.add_argument(
        "--non-members", metavar="PATH", help="hold-out rows from the same population"
    )
    inputs.add_argument("--label", metavar="COL", help="the true-label column of the tables")
    inputs.add_argument(
        "--population",
        metavar="PATH",
        help="further population rows that train the reference models (shadow-model attack, "
        "LiRA, RMIA) and that RMIA compares each target with",
    )
    inputs.add_argument(
        "--shadow-estimator",
        metavar="[NAME=]PATH",
        nargs="+",
        type=_named_path,
        help="training recipe that shadow models copy (an unfitted or fitted scikit-learn "
        "classifier in skops, or pickle with --trust-pickle), per model NAME or for all; "
        "default: the model itself when it is a scikit-learn model (ONNX has none)",
    )


def _add_audit_model_parser(commands):
    sub = commands.add_parser(
        "audit-model",
        help="privacy report for a trained classifier (ONNX, skops): HTML, CSV and PNG",
        description=(
            "Audit a trained classifier for membership leakage: BTTA from the generalization "
            "gap and its best CBTTA partition, MACE on the per-record loss (its Bayes rule, a "
            "certified lower bound on the optimal advantage, and its best-ε threshold), and "
            "with --population one set of reference models read by the shadow-model attack, "
            "LiRA and RMIA. Every analysis's held-out "
            "scores get a certified ε lower bound, and every certified number of a model holds "
            "at --confidence together. Without inputs it audits an embedded demo (an overfit "
            f"and a regularised classifier on scikit-learn's digits). {RELATION} {EXIT_CODES}"
        ),
    )
    _model_inputs(sub)
    options = sub.add_argument_group("audit options")
    options.add_argument(
        "--trust-pickle",
        action="store_true",
        help="allow pickle/joblib files. Loading a pickle RUNS CODE stored in the file: use "
        "it only for files you trust",
    )
    _claim_options(options, "model")
    options.add_argument(
        "--columns",
        action="append",
        metavar="A,B,…",
        help="the model's input columns, comma-separated (default: all but the label)",
    )
    _table_options(options)
    _model_audit_options(options)
    _model_output_options(sub.add_argument_group("what the model outputs (model-output gate)"))


def _model_output_options(group):
    """The model-output gate of ``audit-model``: which output, which classes, the
    train-accuracy gate and the skops size cap."""
    group.add_argument(
        "--probability-output",
        metavar="NAME",
        help="ONNX: the output holding the class probabilities (or logits), needed when the "
        "graph has several float outputs and none is named as probabilities (the error "
        "lists them)",
    )
    group.add_argument(
        "--classes",
        metavar="A,B,…",
        type=_class_list,
        help="ONNX: the classes of the probability columns, in order, for a model that does "
        "not name them (a torch export); by default they come from the model, never 0..K-1",
    )
    group.add_argument(
        "--force-low-accuracy",
        action="store_true",
        help="audit a model whose accuracy on its members is at or below their majority-class "
        "rate (default: exit 2, 'the model does not predict these labels')",
    )
    group.add_argument(
        "--label-only",
        action="store_true",
        help="query the models for their predicted labels only: the label-only attack "
        "(Choquette-Choo et al. 2021) is then each model's one claim (an ONNX model with a "
        "label output and no probability output is audited so anyway)",
    )
    group.add_argument(
        "--max-skops-size",
        metavar="SIZE",
        type=_byte_size,
        help="the most a .skops file may inflate to (e.g. 4G; default: 2G, and 100 times the "
        "file's size); larger ones are refused before anything is inflated",
    )


def _model_audit_options(options):
    """Labels, missing values, output, jobs and reference models of ``audit-model``."""
    options.add_argument(
        "--drop-unmatched-labels",
        action="store_true",
        help="leave out the records whose label is missing or not a class of a model "
        "(default: an input error naming the column, the values and the rows)",
    )
    options.add_argument(
        "--allow-missing",
        action="store_true",
        help="accept missing feature values, for models that handle them (an imputer in the "
        "pipeline, HistGradientBoosting); infinite values are refused either way",
    )
    options.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=MODEL_OUT,
        help=f"output folder (default: {MODEL_OUT}); nothing is written elsewhere",
    )
    options.add_argument(
        "--n-jobs",
        type=_n_jobs,
        default=None,
        help="parallel jobs for shadow models (joblib: -1 = all cores)",
    )
    options.add_argument(
        "--reference-models",
        metavar="K",
        type=_reference_models,
        default=16,
        help="with --population: how many reference models to train (default 16), once per "
        "model, each on a random half of the targets and the population; the shadow-model "
        "attack, LiRA (needs 4) and RMIA all read them. 1: one model on half of the "
        "population alone, RMIA offline only",
    )


def build_parser():
    """The ``sklearn-mace`` argument parser and its three commands."""
    from ._version import __version__

    parser = argparse.ArgumentParser(
        prog="sklearn-mace", description="Membership-inference auditing with scikit-learn."
    )
    parser.add_argument("--version", action="version", version=f"sklearn-mace {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_audit_parser(commands)
    _add_audit_model_parser(commands)
    _add_audit_algorithm_parser(commands)
    demo = commands.add_parser(
        "demo",
        help="the audit on the embedded demo data (like `audit` without input files)",
        description="Audit the embedded synthetic-data demo and write its report. " + EXIT_CODES,
    )
    demo.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=DEMO_OUT,
        help=f"output folder (default: {DEMO_OUT}); nothing is written elsewhere",
    )
    demo.add_argument("--random-state", type=_random_state, default=0, help=RANDOM_STATE_HELP)
    demo.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    return parser


def _read_inputs(files, distinct, args=None):
    """Read ``{role: path}`` as ``--decimal``/``--thousands`` say; the ``distinct`` roles
    must differ. What reading did is in each table's ``attrs["notes"]``."""
    from .report import AuditInputError, read_table

    tables = {}
    for role, path in files.items():
        tables[role] = read_table(
            path,
            role=role,
            decimal=getattr(args, "decimal", None),
            thousands=getattr(args, "thousands", None),
            verbose=not getattr(args, "quiet", True),
        )
    present = [role for role in distinct if role in tables]
    for i, first in enumerate(present):
        for second in present[i + 1 :]:
            same = Path(files[first]).resolve() == Path(files[second]).resolve()
            if same or tables[first].equals(tables[second]):
                raise AuditInputError(
                    f"The {first} file '{files[first]}' and the {second} file "
                    f"'{files[second]}' hold the same table"
                    f"{' (the same file)' if same else ''}: they must be different records."
                )
    return tables


def _listed(texts):
    return [c.strip() for text in texts for c in text.split(",") if c.strip()]


def _columns(args):
    return _listed(args.columns) if args.columns else None


def _id_columns(args):
    """``id_columns`` of the audits: "auto", the named columns, or none (--keep-id-columns)."""
    from .report import AuditInputError

    if args.keep_id_columns and args.id_columns:
        raise AuditInputError("--id-columns and --keep-id-columns exclude each other.")
    if args.keep_id_columns:
        return []
    return _listed(args.id_columns) if args.id_columns else "auto"


def _reading_notes(tables):
    return [note for frame in tables.values() for note in frame.attrs.get("notes", [])]


INPUT_OPTIONS = ("members", "non_members", "reference", "synthetic", "model")
INPUT_OPTIONS += ("shadow_estimator", "population")


def _input_files(args):
    """``(option, path)`` of every input file given, for the check that none lies in --out."""
    found = []
    for name in INPUT_OPTIONS:
        value = getattr(args, name, None)
        flag = "--" + name.replace("_", "-")
        for item in value if isinstance(value, list) else [value]:
            path = item[1] if isinstance(item, tuple) else item
            if path is not None:
                found.append((flag, path))
    return found


def _checked_out(args, default, **layout):
    """--out, checked before any work: writable, holding no input file and no link."""
    from .report._output import check_output_dir

    return check_output_dir(
        args.out or default, option="--out", inputs=_input_files(args), **layout
    )


def _audited(args, compute):
    """Run ``compute()`` with every warning caught (module doc), those of joblib's worker
    processes included; they become the report's notes when it is written. The library's
    own warnings and the notes are put in the command line's words (flags, not Python
    parameters)."""
    from dataclasses import replace

    from .report._warnings import catching_warnings

    with catching_warnings() as caught:
        result = compute()
    flags = _parameter_flags(build_parser(), args.command)
    for i, item in enumerate(caught):
        if item.module.split(".")[0] == "sklearn_mace":
            caught[i] = replace(item, message=_in_flags(item.message, flags))
    return replace(result, notes=[_in_flags(note, flags) for note in result.notes]), caught


def _write_and_print(args, result, out, caught):
    """Write the report (staged: all files arrive, or none), then print the summary: the
    third-party warnings, listed in the report's notes, are only counted on the terminal
    (not at all with --quiet)."""
    from .report._output import relocate, staged_output
    from .report._writer import presentation_of, print_report, write_report_files

    shown = presentation_of(result)  # how the result is shown, resolved once
    with staged_output(out, option="--out") as stage:
        paths = write_report_files(result, stage, caught=caught, presentation=shown)
    print_report(result, relocate(paths, stage, out), caught, quiet=args.quiet, presentation=shown)


def _changed(args, defaults):
    """The options set to something other than their default (the demos take none)."""
    return [flag for flag, default in defaults.items() if getattr(args, flag) != default]


def _check_names(names, what):
    from .report import AuditInputError

    if len(set(names)) != len(names):
        raise AuditInputError(f"{what} names must differ; got {names}. Name them with NAME=PATH.")


def _demo_options_refused(args, defaults, command):
    from .report import AuditInputError

    changed = _changed(args, defaults)
    if changed:  # the demo has its own settings; running it would silently drop these
        flags = ", ".join("--" + name.replace("_", "-") for name in changed)
        raise AuditInputError(
            f"{flags} need input files; the {command} demo takes only --out, --random-state "
            "and --quiet" + (", --n-jobs" if command == "audit-model" else "") + "."
        )


CLAIM_DEFAULTS = {
    "prior": None,
    "confidence": 0.95,
    "delta": 0.0,
    "claimed_epsilon": 1.0,
    "bounded_margin": 0.1,
}
TABLE_DEFAULTS = {"decimal": None, "thousands": None, "id_columns": None, "keep_id_columns": False}


def _run_demo(args):
    """The synthetic-data demo: ``audit`` without inputs, or ``demo``."""
    from .report._kinds.release._demo import DEMO_FILES, DEMO_FOLDERS, run_demo
    from .report._output import OWN_FILES

    if args.command == "audit":
        defaults = {**CLAIM_DEFAULTS, "columns": None, "group_by": None, "max_categories": 20}
        defaults.update(n_jobs=None, no_disclosure=False, **TABLE_DEFAULTS)
        defaults.update(allow_unparsed=None, drop_overlapping_records=False, max_columns=5000)
        _demo_options_refused(args, defaults, "audit")
    _checked_out(args, DEMO_OUT, folders=DEMO_FOLDERS, files=(*OWN_FILES, *DEMO_FILES))
    if args.command == "audit":
        print(
            "No input files given: auditing the embedded demo data (see `sklearn-mace audit "
            "--help`)."
        )
    return run_demo(
        out=args.out or DEMO_OUT, random_state=args.random_state, verbose=not args.quiet
    )


def _claim_kwargs(args):
    return {name: getattr(args, name) for name in CLAIM_DEFAULTS} | {
        "random_state": args.random_state,
        "verbose": not args.quiet,
    }


def run_audit(args):
    """``sklearn-mace audit``: read, audit, write the report, print the summary."""
    from .report import AuditInputError, audit_release

    given = {"--members": args.members, "--non-members": args.non_members}
    given["--synthetic"] = args.synthetic
    if all(v is None for v in given.values()) and args.reference is None:
        return _run_demo(args)
    missing = [flag for flag, value in given.items() if value is None]
    if missing:
        raise AuditInputError(
            f"the audit needs {', '.join(missing)} as well (or no input files at all for the demo)."
        )
    _check_names([name for name, _ in args.synthetic], "synthetic release")
    out = _checked_out(args, DEFAULT_OUT)  # before any work
    files = {"members": args.members, "non-members": args.non_members}
    if args.reference is not None:
        files["reference"] = args.reference
    files.update({f"synthetic '{name}'": path for name, path in args.synthetic})
    id_columns = _id_columns(args)

    def compute():
        # a release may equal the members (a perfect copy, audited as such), not the real
        # tables
        tables = _read_inputs(files, ("members", "non-members", "reference"), args)
        result = audit_release(
            tables["members"],
            tables["non-members"],
            {name: tables[f"synthetic '{name}'"] for name, _ in args.synthetic},
            tables.get("reference"),
            columns=_columns(args),
            max_categories=args.max_categories,
            group_by=args.group_by,
            n_jobs=args.n_jobs,
            disclosure=not args.no_disclosure,
            id_columns=id_columns,
            allow_unparsed=_listed(args.allow_unparsed or []),
            drop_overlapping_records=args.drop_overlapping_records,
            max_columns=args.max_columns,
            on_error="report",
            **_claim_kwargs(args),
        )
        result.notes[:0] = _reading_notes(tables)
        return result

    result, caught = _audited(args, compute)
    _write_and_print(args, result, out, caught)
    return result


def _run_model_demo(args):
    from .report._kinds.model._demo import DEMO_FILES, DEMO_FOLDERS, run_model_demo
    from .report._output import OWN_FILES

    defaults = {**CLAIM_DEFAULTS, **TABLE_DEFAULTS, "shadow_estimator": None, "columns": None}
    defaults.update(drop_unmatched_labels=False, allow_missing=False, reference_models=16)
    defaults.update(probability_output=None, classes=None, force_low_accuracy=False)
    defaults["label_only"] = False
    defaults["max_skops_size"] = None
    _demo_options_refused(args, defaults | {"trust_pickle": False}, "audit-model")
    _checked_out(args, MODEL_OUT, folders=DEMO_FOLDERS, files=(*OWN_FILES, *DEMO_FILES))
    print(
        "No inputs given: auditing the embedded model demo (see `sklearn-mace audit-model --help`)."
    )
    return run_model_demo(
        out=args.out, n_jobs=args.n_jobs, random_state=args.random_state, verbose=not args.quiet
    )


def _is_onnx(path):
    """--probability-output and --classes go to the ONNX models only."""
    return Path(path).suffix.lower() == ".onnx"


def _load_models(args):
    from .report import AuditInputError, load_model
    from .report._kinds.model._io import load_estimator

    onnx = dict(probability_output=args.probability_output, classes=args.classes)
    if any(v is not None for v in onnx.values()) and not any(_is_onnx(p) for _, p in args.model):
        raise AuditInputError("--probability-output and --classes apply to ONNX models only.")
    common = dict(trust_pickle=args.trust_pickle, max_skops_bytes=args.max_skops_size)
    models = {
        name: load_model(path, name=name, **common, **(onnx if _is_onnx(path) else {}))
        for name, path in args.model
    }
    recipes = {}
    for name, path in args.shadow_estimator or []:
        key = name if len(args.shadow_estimator) > 1 or name in models else ""
        recipes[key] = load_estimator(path, **common)
    return models, recipes


def run_audit_model(args):
    """``sklearn-mace audit-model``: load, audit, write the report, print the summary."""
    from .report import AuditInputError, audit_model

    given = {"--model": args.model, "--members": args.members}
    given.update({"--non-members": args.non_members, "--label": args.label})
    if all(v is None for v in given.values()) and args.population is None:
        return _run_model_demo(args)
    missing = [flag for flag, value in given.items() if value is None]
    if missing:
        raise AuditInputError(
            f"the model audit needs {', '.join(missing)} as well (or no inputs at all for the "
            "demo)."
        )
    _check_names([name for name, _ in args.model], "model")
    out = _checked_out(args, MODEL_OUT)  # before any work
    files = {"members": args.members, "non-members": args.non_members}
    if args.population is not None:
        files["population"] = args.population
    id_columns = _id_columns(args)

    def compute():
        tables = _read_inputs(files, ("members", "non-members", "population"), args)
        models, recipes = _load_models(args)
        result = audit_model(
            models,
            tables["members"],
            tables["non-members"],
            label=args.label,
            population=tables.get("population"),
            columns=_columns(args),
            shadow_estimators=recipes,
            n_reference_models=args.reference_models,
            n_jobs=args.n_jobs,
            id_columns=id_columns,
            drop_unmatched_labels=args.drop_unmatched_labels,
            allow_missing=args.allow_missing,
            force_low_accuracy=args.force_low_accuracy,
            label_only=args.label_only,
            on_error="report",
            **_claim_kwargs(args),
        )
        result.notes[:0] = _reading_notes(tables)
        return result

    result, caught = _audited(args, compute)
    _write_and_print(args, result, out, caught)
    return result


ALGORITHM_OUT = Path("mace-output") / "audit-algorithm"
ALGORITHM_RECIPES = (
    "dp-histogram",
    "wrong-noise-histogram",
    "gaussian-mixture",
    "sdv",
    "ctgan",
    "smartnoise",
)


def _add_audit_algorithm_parser(commands):
    sub = commands.add_parser(
        "audit-algorithm",
        help="does a training recipe keep its DP claim? shadow runs, certified ε per target",
        description=(
            "Audit a training algorithm, not one output: each recipe is trained --n-runs "
            "times without any target and as many times with each target, an attack learns "
            "the target's presence from part of the runs and the other runs certify a lower "
            "bound on ε (exact Clopper-Pearson bounds); a claim is contradicted only when "
            "that bound exceeds --claimed-epsilon. Without inputs it audits the embedded "
            "demo: the correct and a wrong-noise DP histogram synthesizer, both claimed at "
            f"ε = 1. Writes report.html, summary.csv, records.csv and figures/. {EXIT_CODES}"
        ),
    )
    sub.add_argument(
        "--recipe",
        nargs="+",
        choices=ALGORITHM_RECIPES,
        metavar="NAME",
        help="built-in recipes to audit: dp-histogram, wrong-noise-histogram, "
        "gaussian-mixture, and sdv, ctgan, smartnoise when their package is installed "
        "(default: the two histograms)",
    )
    sub.add_argument(
        "--population",
        metavar="PATH",
        help="records (CSV or Parquet) the training sets are drawn from; columns with at "
        "most 20 values are categorical (default: the embedded demo population)",
    )
    sub.add_argument(
        "--targets",
        type=_positive_count("--targets"),
        metavar="K",
        help="audit the K most vulnerable records of the population (default: the demo's "
        "most common record and empty-cell canary, or 2 on a population file)",
    )
    _algorithm_options(sub)


def _claim_spec(text):
    from .report._kinds.algorithm._audit import parse_claim

    try:
        return parse_claim(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"--claim {error}") from None


def _algorithm_options(sub):
    """The claim and the runs of ``audit-algorithm``."""
    sub.add_argument(
        "--claimed-epsilon",
        type=_number("--claimed-epsilon", 0, float("inf"), closed_low=True),
        default=1.0,
        help="the ε the recipes claim under --neighbour; the histograms are calibrated to "
        "it (default: 1)",
    )
    sub.add_argument(
        "--claim",
        type=_claim_spec,
        metavar="SPEC",
        help="the claim as a curve, instead of --claimed-epsilon: pure:EPS, approx:EPS,DELTA "
        "or gaussian:MU, stated for --neighbour or for the relation named after a colon "
        "(e.g. gaussian:0.27:add_remove); an add/remove claim audited with --neighbour "
        "substitute is converted by group privacy",
    )
    sub.add_argument(
        "--delta",
        type=_number("--delta", 0, 1, closed_low=True),
        default=None,
        help="δ at which ε is certified, and of --claimed-epsilon's claim (default: the "
        "claim's δ, 0 for --claimed-epsilon)",
    )
    sub.add_argument(
        "--confidence",
        type=_number("--confidence", 0, 1),
        default=0.95,
        help="each recipe's target bounds hold together at this level (default: 0.95)",
    )
    sub.add_argument(
        "--neighbour",
        choices=("add-remove", "substitute"),
        default="add-remove",
        help="neighbour relation of the claim and of the runs: the target added or removed, "
        "or substituted for another record (default: add-remove)",
    )
    _design_options(sub)
    sub.add_argument(
        "--n-runs",
        type=_positive_count("--n-runs", low=10),
        default=1000,
        help="runs per side (default: 1000); n runs per side certify at most about log(n/3)",
    )
    sub.add_argument(
        "--n-jobs", type=_n_jobs, default=None, help="runs in parallel (joblib: -1 = all cores)"
    )
    sub.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=ALGORITHM_OUT,
        help=f"output folder (default: {ALGORITHM_OUT}); nothing is written elsewhere",
    )
    sub.add_argument(
        "--random-state", type=_random_state, default=0, help=ALGORITHM_RANDOM_STATE_HELP
    )
    sub.add_argument("--quiet", action="store_true", help=QUIET_HELP)


def _design_options(sub):
    """The one-run design of ``audit-algorithm``."""
    sub.add_argument(
        "--design",
        choices=("multi-run", "one-run"),
        default="multi-run",
        help="multi-run: --n-runs trainings per side (the card); one-run: one training with "
        "--canaries canaries, each in with probability 1/2 (Steinke et al. 2023; add/remove "
        "only; writes summary.csv)",
    )
    sub.add_argument(
        "--canaries",
        type=_positive_count("--canaries", low=10),
        default=1000,
        help="canaries of --design one-run, drawn from the population (default: 1000)",
    )


def _positive_count(flag, low=1):
    def parse(text):
        value = _integer(lambda v: v >= low, text)
        if value is None:
            raise argparse.ArgumentTypeError(f"{flag} must be an integer >= {low}; got {text!r}")
        return value

    return parse


def run_audit_algorithm(args):
    """``sklearn-mace audit-algorithm``: shadow runs of each recipe, the card, the summary."""
    from .report import AuditInputError
    from .report._kinds.algorithm._audit import audit_algorithm, available_recipes, make_claim

    recipes = args.recipe or ["dp-histogram", "wrong-noise-histogram"]
    missing = [r for r in recipes if r not in available_recipes()]
    if missing:
        raise AuditInputError(
            f'--recipe {missing[0]} needs its package: pip install "sklearn-mace[{missing[0]}]".'
        )
    if len(set(recipes)) != len(recipes):
        raise AuditInputError(f"--recipe names each recipe once; got {recipes}.")
    out = _checked_out(args, ALGORITHM_OUT)  # before any work
    if args.population is None and args.recipe is None and args.targets is None:
        print(
            "No inputs given: auditing the embedded demo (see "
            "`sklearn-mace audit-algorithm --help`)."
        )
    relation = args.neighbour.replace("-", "_")
    claim = None if args.claim is None else make_claim(args.claim, relation)
    if args.design == "one-run":
        return _run_one_run(args, recipes, _algorithm_population(args), claim, out)

    def compute():
        return audit_algorithm(
            recipes,
            _algorithm_population(args),
            targets=args.targets,
            claimed_epsilon=args.claimed_epsilon,
            claim=claim,
            delta=args.delta,
            confidence=args.confidence,
            relation=relation,
            n_runs=args.n_runs,
            n_jobs=args.n_jobs,
            random_state=args.random_state,
            verbose=not args.quiet,
            on_error="report",
        )

    result, caught = _audited(args, compute)
    _write_and_print(args, result, out, caught)
    return result


def _algorithm_population(args):
    """The population table of ``audit-algorithm``, or None (the demo's)."""
    if args.population is None:
        return None
    return _read_inputs({"population": args.population}, distinct=())["population"]


def _run_one_run(args, recipes, population, claim, out):
    """``--design one-run``: one training per recipe; summary.csv and the table printed.

    summary.csv goes through the report's staging (its manifest, CSV escaping): the folder
    rules of every audit hold here too."""
    from types import SimpleNamespace

    from .report import AuditInputError
    from .report._kinds.algorithm._audit import audit_algorithm_one_run
    from .report._output import staged_output, write_csv

    if args.neighbour != "add-remove":
        raise AuditInputError(
            "--design one-run puts each canary in or leaves it out: it audits --neighbour "
            "add-remove only."
        )
    summary = audit_algorithm_one_run(
        recipes,
        population,
        n_canaries=args.canaries,
        claimed_epsilon=args.claimed_epsilon,
        claim=claim,
        delta=args.delta,
        confidence=args.confidence,
        random_state=args.random_state,
    )
    with staged_output(out, option="--out") as stage:
        write_csv(summary, stage / "summary.csv")
    columns = ["recipe", "claim", "epsilon_lower_bound", "fdp_epsilon_lower_bound"]
    columns += ["mu_lower_bound", "contradicted", "n_guesses", "n_correct"]
    print(summary[columns].to_string(index=False))
    print(f"summary: {out / 'summary.csv'}")
    return SimpleNamespace(summary=summary, partial=False)


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


# The Python parameters whose flag has another name (the others: the flag's dest is the
# parameter), and two values that are flags of their own; the flags come from the parser.
_PARAMETER_DESTS = {
    "models": "model",
    "shadow_estimators": "shadow_estimator",
    "n_reference_models": "reference_models",
    "recipes": "recipe",
    "n_canaries": "canaries",
    "max_skops_bytes": "max_skops_size",
    "id_columns=[]": "keep_id_columns",
    "disclosure=False": "no_disclosure",
}
_VALUE = r"""\[[^\[\]]*\]|'[^']*'|"[^"]*"|True|False|None|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"""
_PARAMETER = re.compile(
    rf"(?<![\w.])(?<!\w\()([a-z_][a-z0-9_]*)=(?:({_VALUE})(?![\w/])|(?=[\s,;:.)]|$))"
)


def _parameter_flags(parser, command):
    """Python parameter (or ``name=value``) -> the argparse action of its flag in
    ``command``, read off the parser (each action's dest), so it cannot drift."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    actions = {a.dest: a for a in commands.choices[command]._actions if a.option_strings}
    actions.update({p: actions[d] for p, d in _PARAMETER_DESTS.items() if d in actions})
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
    from .report import AuditInputError

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
    commands = {"audit": run_audit, "audit-model": run_audit_model}
    commands["audit-algorithm"] = run_audit_algorithm
    try:
        if args.command in commands:
            result = commands[args.command](args)
        else:
            result = _run_demo(args)
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
