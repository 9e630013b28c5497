"""``sklearn-mace audit`` (and ``sklearn-mace demo``): the release audit's command line.

Its options, the inputs it reads from them, its checks and its demo; the common path of
``sklearn_mace/cli.py`` does the rest (the ``--out`` check, warnings, writing, printing).
Only ``argparse`` loads at import time.
"""

import argparse
from pathlib import Path

from ... import _arguments as arguments
from ..._arguments import EXIT_CODES, RELATION

#: Python parameters whose flag has another name (see ``Command.renamed``)
RENAMED = {"id_columns=[]": "keep_id_columns", "disclosure=False": "no_disclosure"}
DEFAULT_OUT = Path("mace-output") / "audit"
DEMO_OUT = Path("mace-output") / "demo"
HELP = "privacy report for synthetic data: HTML, CSV and PNG under --out"
DESCRIPTION = (
    "Audit synthetic data for membership leakage: MACE on the nearest-synthetic "
    "distance (its Bayes rule, a certified lower bound on the optimal advantage with "
    "the estimate U_N beside it, held-out per-record risk), DOMIAS, the MC and "
    "GAN-leaks CAL baselines and the exact-copy test; every analysis's held-out scores "
    "get a certified ε lower bound, and every certified number of a release holds at "
    "--confidence together. Files are CSV or Parquet. Without input files it audits "
    f"the embedded demo data. {RELATION} {EXIT_CODES}"
)
DEMO_HELP = "the audit on the embedded demo data (like `audit` without input files)"
DEMO_DESCRIPTION = "Audit the embedded synthetic-data demo and write its report. " + EXIT_CODES
#: what --device moves (its help)
DEVICE_PASSES = (
    "the kernel passes (the nearest-synthetic distances, MACE's estimator, DOMIAS, MC and "
    "GAN-leaks CAL)"
)
#: the input options, in the order the --out check names them
INPUT_OPTIONS = ("members", "non_members", "reference", "synthetic")
#: what the demo refuses: every audit option other than --out, --random-state and --quiet
DEMO_DEFAULTS = {
    **arguments.CLAIM_DEFAULTS,
    "columns": None,
    "group_by": None,
    "max_categories": 20,
    "n_jobs": None,
    "no_disclosure": False,
    **arguments.TABLE_DEFAULTS,
    "allow_unparsed": None,
    "drop_overlapping_records": False,
    "max_columns": 5000,
}


def _positive_int(text):
    value = arguments.integer(lambda v: v >= 1, text)
    if value is None:
        raise argparse.ArgumentTypeError(f"--max-categories must be an integer >= 1; got {text!r}")
    return value


def _inputs(sub):
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
        type=arguments.named_path,
        help="released synthetic rows; several releases are compared side by side",
    )
    inputs.add_argument(
        "--reference",
        metavar="PATH",
        help="further population rows for DOMIAS and GAN-leaks CAL (default: half of the "
        "non-members)",
    )


def add_arguments(sub):
    """The options of ``sklearn-mace audit``."""
    _inputs(sub)
    options = sub.add_argument_group("audit options")
    arguments.claim_options(options, "release")
    options.add_argument(
        "--columns", action="append", metavar="A,B,…", help="audit only these columns"
    )
    arguments.table_options(options)
    arguments.add_out(options, None, f"{DEFAULT_OUT}, or {DEMO_OUT} for the demo")
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
        type=arguments.n_jobs,
        default=None,
        help="releases audited in parallel (joblib: -1 = all cores); the report does not "
        "depend on it",
    )
    options.add_argument(
        "--no-disclosure",
        action="store_true",
        help="skip the attribute-inference and linkability analyses",
    )
    arguments.add_device(options, DEVICE_PASSES)
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
        type=arguments.number("--max-columns", 1, float("inf"), closed_low=True, integer=True),
        default=5000,
        metavar="N",
        help="refuse tables with more audited columns (default: 5000)",
    )


def add_demo_arguments(sub):
    """The options of ``sklearn-mace demo``."""
    arguments.add_out(sub, DEMO_OUT)
    arguments.add_device(sub, DEVICE_PASSES)
    arguments.add_random_state_and_quiet(sub)


def wants_demo(args):
    """No input file given: the embedded demo."""
    return all(getattr(args, name, None) is None for name in INPUT_OPTIONS)


def check_arguments(args):
    """All three inputs, or none; the releases' names differ; the device exists."""
    given = {"--members": args.members, "--non-members": args.non_members}
    given["--synthetic"] = args.synthetic
    arguments.missing_inputs(given, "the audit")
    arguments.check_names([name for name, _ in args.synthetic], "synthetic release")
    arguments.check_device(args)


def check_demo(args):
    """The demo takes only --out, --random-state, --device and --quiet."""
    arguments.refuse_demo_options(args, DEMO_DEFAULTS, "audit")
    arguments.check_device(args)


def input_files(args):
    """The input files given, for the ``--out`` check."""
    return arguments.input_files(args, INPUT_OPTIONS)


def audit_from_arguments(args):
    """Read the tables and audit the releases (``audit_release``)."""
    from ._audit import HandedOver, audit_release

    files = {"members": args.members, "non-members": args.non_members}
    if args.reference is not None:
        files["reference"] = args.reference
    files.update({f"synthetic '{name}'": path for name, path in args.synthetic})
    id_columns = arguments.id_columns(args)
    sources = _release_files(args)  # before reading: a file changed after it is refused
    # a release may equal the members (a perfect copy, audited as such), not the real tables
    tables = arguments.read_inputs(files, ("members", "non-members", "reference"), args)
    notes = arguments.reading_notes(tables)
    result = audit_release(
        tables["members"],
        tables["non-members"],
        # handed over: the raw releases are freed before the analyses (and read again from
        # their files for the disclosure risks)
        HandedOver(
            ((name, tables.pop(f"synthetic '{name}'")) for name, _ in args.synthetic),
            sources=sources,
        ),
        tables.get("reference"),
        columns=arguments.columns(args),
        max_categories=args.max_categories,
        group_by=args.group_by,
        n_jobs=args.n_jobs,
        disclosure=not args.no_disclosure,
        id_columns=id_columns,
        allow_unparsed=arguments.listed(args.allow_unparsed or []),
        drop_overlapping_records=args.drop_overlapping_records,
        max_columns=args.max_columns,
        device=args.device,
        **arguments.claim_kwargs(args),
        on_error="report",
    )
    result.notes[:0] = notes
    return result


def _release_files(args):
    """``{name: ReleaseFile or None}``: how to read each release again for the disclosure
    risks (none without them, or for a file that is not a regular file, such as a pipe)."""
    from ._inputs import ReleaseFile

    if args.no_disclosure:
        return {}
    return {
        name: ReleaseFile.before_reading(
            path, "--synthetic", **arguments.read_options(f"synthetic '{name}'", args)
        )
        for name, path in args.synthetic
    }


def demo_intro(args):
    """What the demo is (and, from ``audit``, that no input file was given)."""
    lines = (
        []
        if args.demo_only
        else [
            "No input files given: auditing the embedded demo data (see `sklearn-mace audit "
            "--help`)."
        ]
    )
    return [
        *lines,
        "sklearn-mace demo: breast cancer, a leaky (overfit 100-component mixture) and a "
        "safer (3-component mixture) synthetic release",
    ]


def run_demo(args, stage):
    """Write the demo's tables under ``stage/inputs`` and audit them."""
    from ._demo import audit_demo

    return audit_demo(
        stage, random_state=args.random_state, verbose=not args.quiet, device=args.device
    )


def demo_outro(out):
    """The same audit from the files the demo wrote."""
    inputs = out / "inputs"
    return [
        f"the same from files: sklearn-mace audit --members {inputs}/members.csv "
        f"--non-members {inputs}/non_members.csv --reference {inputs}/reference.csv "
        f"--synthetic leaky={inputs}/synthetic_leaky.csv safe={inputs}/synthetic_safe.csv "
        f"--group-by diagnosis --out {out}-from-files"
    ]
