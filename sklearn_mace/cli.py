"""Command line: ``sklearn-mace audit …`` (also ``python -m sklearn_mace audit …``).

``sklearn-mace audit`` with no input files, and ``sklearn-mace demo``, run the audit on the
embedded default (bundled breast-cancer data, a leaky and a safer generator).
"""

import argparse
import sys
from pathlib import Path

DEFAULT_OUT = Path("mace-output") / "audit"
DEMO_OUT = Path("mace-output") / "demo"
MODEL_OUT = Path("mace-output") / "audit-model"


def _open_unit_interval(name):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number; got {text!r}") from None
        if not 0.0 < value < 1.0:
            raise argparse.ArgumentTypeError(f"{name} must be in (0, 1); got {text}")
        return value

    return parse


def _non_negative(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--epsilon must be a number; got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"--epsilon must be >= 0; got {text}")
    return value


def _delta(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--delta must be a number; got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"--delta must be in [0, 1); got {text}")
    return value


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"--max-categories must be an integer >= 1; got {text!r}")
    return value


def _random_state(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(
            f"--random-state must be an integer in [0, 2**32 - 1]; got {text!r}"
        )
    return value


def _n_jobs(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0:
        raise argparse.ArgumentTypeError(
            f"--n-jobs must be a non-zero integer (-1: all cores); got {text!r}"
        )
    return value


def _release(text):
    """``NAME=PATH`` or ``PATH`` (the name is then the file name without its suffixes)."""
    name, sep, path = text.partition("=")
    if not sep or not name or Path(text).exists():
        path = text
        name = Path(text).name.split(".")[0] or text
    return name, path


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sklearn-mace", description="Membership-inference auditing with scikit-learn."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    audit = commands.add_parser(
        "audit",
        help="privacy report for synthetic data: HTML, CSV and PNG under --out",
        description=(
            "Audit synthetic data for membership leakage: DOMIAS (KDE, cross-validated "
            "bandwidth), MACE on the nearest-synthetic distance (a certified lower bound on "
            "the optimal advantage with its p-value, the estimate U_N beside it, held-out "
            "per-record risk), and the MC and GAN-leaks CAL baselines; every attack gets a "
            "certified ε lower bound from its scores. Files are CSV or Parquet. Without "
            "input files it audits the embedded demo data. Exit status: 0 complete report, "
            "2 input error (nothing written), 3 partial report (an analysis failed; see "
            "'Failed analyses' in report.html and the status column of summary.csv)."
        ),
    )
    inputs = audit.add_argument_group("inputs (CSV or Parquet; all three, or none for the demo)")
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
        type=_release,
        help="released synthetic rows; several releases are compared side by side",
    )
    inputs.add_argument(
        "--reference",
        metavar="PATH",
        help="further population rows for DOMIAS and GAN-leaks CAL "
        "(default: half of the non-members)",
    )
    options = audit.add_argument_group("audit options")
    options.add_argument(
        "--prior",
        type=_open_unit_interval("--prior"),
        default=None,
        help="P(member) at which advantages and risks are stated (default: "
        "the fraction of members among the audited records)",
    )
    options.add_argument(
        "--columns",
        action="append",
        metavar="A,B,…",
        help="audit only these comma-separated columns (default: all)",
    )
    options.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=None,
        help=f"output folder (default: {DEFAULT_OUT}, or {DEMO_OUT} for the "
        "demo); nothing is written elsewhere",
    )
    options.add_argument(
        "--group-by",
        metavar="COLUMN",
        default=None,
        help="a categorical column of the members and non-members that "
        "groups the records in the risk figure and records.csv",
    )
    options.add_argument(
        "--confidence",
        type=_open_unit_interval("--confidence"),
        default=0.95,
        help="level at which each release's certified claims hold together (default: 0.95)",
    )
    options.add_argument(
        "--delta",
        type=_delta,
        default=0.0,
        help="δ of (ε, δ)-DP at which the ε lower bounds are stated (default: 0)",
    )
    options.add_argument(
        "--epsilon",
        type=_non_negative,
        default=1.0,
        help="ε whose DP bound the figures draw; a certified ε above it "
        "turns a release's card red (default: 1)",
    )
    options.add_argument(
        "--max-categories",
        type=_positive_int,
        default=20,
        help="text columns with more categories (after merging those under 1 %% of the "
        "rows) are dropped as identifiers or free text (default: 20)",
    )
    options.add_argument("--random-state", type=_random_state, default=0)
    options.add_argument(
        "--n-jobs",
        type=_n_jobs,
        default=None,
        help="releases audited in parallel (joblib: -1 = all cores); the "
        "report does not depend on it",
    )
    options.add_argument(
        "--no-disclosure",
        action="store_true",
        help="skip the attribute-inference and linkability analyses",
    )
    options.add_argument("--quiet", action="store_true", help="no progress bar")

    add_audit_model_parser(commands)

    demo = commands.add_parser("demo", help="the audit on the embedded default data")
    demo.add_argument("--out", metavar="DIR", type=Path, default=DEMO_OUT)
    demo.add_argument("--random-state", type=_random_state, default=0)
    demo.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _read_inputs(files, distinct):
    """Read ``{role: path}`` (notes to stderr); the ``distinct`` roles must differ."""
    from .report import AuditInputError, read_table

    tables = {}
    for role, path in files.items():
        tables[role] = read_table(path, role=role)
        for note in tables[role].attrs.get("notes", []):
            print(f"note: {note}", file=sys.stderr)
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


def run_audit(args):
    from .report import AuditInputError, audit, write_report
    from .report._output import check_output_dir
    from .report._summary import print_summary

    given = [args.members, args.non_members, args.synthetic]
    if all(v is None for v in given) and args.reference is None:
        from ._demo import run_demo

        ignored = [
            flag
            for flag, value, default in (
                ("--prior", args.prior, None),
                ("--columns", args.columns, None),
                ("--group-by", args.group_by, None),
                ("--confidence", args.confidence, 0.95),
                ("--epsilon", args.epsilon, 1.0),
                ("--max-categories", args.max_categories, 20),
                ("--delta", args.delta, 0.0),
                ("--n-jobs", args.n_jobs, None),
                ("--no-disclosure", args.no_disclosure, False),
            )
            if value != default
        ]
        if ignored:  # the demo has its own settings; running it would silently drop these
            raise AuditInputError(
                f"{', '.join(ignored)} need input files (--members, "
                "--non-members, --synthetic); the demo takes only --out, "
                "--random-state and --quiet."
            )
        check_output_dir(args.out or DEMO_OUT)
        print(
            "No input files given: auditing the embedded demo data "
            "(see `sklearn-mace audit --help`)."
        )
        return run_demo(
            out=args.out or DEMO_OUT, random_state=args.random_state, verbose=not args.quiet
        )
    missing = [
        flag
        for flag, v in zip(("--members", "--non-members", "--synthetic"), given, strict=True)
        if v is None
    ]
    if missing:
        raise AuditInputError(
            f"the audit needs {', '.join(missing)} as well (or no input files at all for the demo)."
        )
    names = [name for name, _ in args.synthetic]
    if len(set(names)) != len(names):
        raise AuditInputError(
            f"synthetic release names must differ; got {names}. Name them with NAME=PATH."
        )
    out = check_output_dir(args.out or DEFAULT_OUT)  # before any work
    files = {"members": args.members, "non-members": args.non_members}
    if args.reference is not None:
        files["reference"] = args.reference
    files.update({f"synthetic '{name}'": path for name, path in args.synthetic})
    # a release may equal the members (a perfect copy, audited as such), not the real tables
    tables = _read_inputs(files, distinct=("members", "non-members", "reference"))
    members, non_members = tables["members"], tables["non-members"]
    synthetic = {name: tables[f"synthetic '{name}'"] for name, _ in args.synthetic}
    reference = tables.get("reference")
    columns = None
    if args.columns:
        columns = [c.strip() for text in args.columns for c in text.split(",") if c.strip()]
    result = audit(
        members,
        non_members,
        synthetic,
        reference,
        columns=columns,
        prior=args.prior,
        confidence=args.confidence,
        delta=args.delta,
        epsilon=args.epsilon,
        max_categories=args.max_categories,
        group_by=args.group_by,
        random_state=args.random_state,
        n_jobs=args.n_jobs,
        disclosure=not args.no_disclosure,
        verbose=not args.quiet,
    )
    paths = write_report(result, out)
    print_summary(result, paths)
    return result


def add_audit_model_parser(commands):
    """The ``audit-model`` subcommand: a trained classifier instead of synthetic data."""
    sub = commands.add_parser(
        "audit-model",
        help="privacy report for a trained classifier (ONNX, skops): HTML, CSV and PNG",
        description=(
            "Audit a trained classifier for membership leakage: BTTA from the generalization "
            "gap and its best CBTTA partition, MACE's optimal advantage on the per-record "
            "loss and true-label confidence with certified lower bounds, and with "
            "--population the shadow-model attack and LiRA. Every attack row has AUC, TPR at "
            "low FPR and a certified ε lower bound. Without inputs it audits an embedded "
            "demo (an overfit and a regularised classifier on scikit-learn's digits)."
        ),
    )
    inputs = sub.add_argument_group("inputs (tables: CSV or Parquet)")
    inputs.add_argument(
        "--model",
        metavar="[NAME=]PATH",
        nargs="+",
        type=_release,
        help="the classifier(s): .onnx (run by onnxruntime), .skops, or a "
        "pickle/joblib file with --trust-pickle; several are compared "
        "side by side",
    )
    inputs.add_argument("--members", metavar="PATH", help="the model's training rows")
    inputs.add_argument(
        "--non-members",
        metavar="PATH",
        help="hold-out rows from the same population, unseen in training",
    )
    inputs.add_argument("--label", metavar="COL", help="the true-label column of the tables")
    inputs.add_argument(
        "--population",
        metavar="PATH",
        help="further population rows that train shadow models (shadow-model attack, LiRA)",
    )
    inputs.add_argument(
        "--shadow-estimator",
        metavar="[NAME=]PATH",
        nargs="+",
        type=_release,
        help="training recipe that shadow models copy (an unfitted or fitted "
        "scikit-learn classifier in skops, or pickle with "
        "--trust-pickle), per model NAME or for all; default: the model "
        "itself when it is a scikit-learn model (ONNX has none)",
    )
    options = sub.add_argument_group("audit options")
    options.add_argument(
        "--trust-pickle",
        action="store_true",
        help="allow pickle/joblib files. Loading a pickle RUNS CODE stored in "
        "the file: use it only for files you trust",
    )
    options.add_argument(
        "--prior",
        type=_open_unit_interval("--prior"),
        default=None,
        help="P(member) for advantages, risks and ε (default: the fraction "
        "of members among the audited records)",
    )
    options.add_argument(
        "--columns",
        action="append",
        metavar="A,B,…",
        help="the model's input columns, comma-separated (default: all but the label)",
    )
    options.add_argument(
        "--confidence",
        type=_open_unit_interval("--confidence"),
        default=0.95,
        help="level of the certified bounds (default: 0.95)",
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
    options.add_argument("--random-state", type=_random_state, default=0)
    options.add_argument("--quiet", action="store_true", help="no progress bar")
    return sub


def run_audit_model(args):
    """``sklearn-mace audit-model``: load, audit, write the report, print the summary."""
    from .report import AuditInputError
    from .report._model_battery import audit_model
    from .report._model_html import print_model_summary, write_model_report
    from .report._model_io import load_estimator, load_model
    from .report._output import check_output_dir

    given = {
        "--model": args.model,
        "--members": args.members,
        "--non-members": args.non_members,
        "--label": args.label,
    }
    if all(v is None for v in given.values()) and args.population is None:
        from ._model_demo import run_model_demo

        if args.shadow_estimator or args.prior is not None or args.columns:
            raise AuditInputError(
                "--shadow-estimator, --prior and --columns need input "
                "files; the demo takes only --out, --n-jobs, "
                "--random-state and --quiet."
            )
        check_output_dir(args.out)
        print(
            "No inputs given: auditing the embedded model demo "
            "(see `sklearn-mace audit-model --help`)."
        )
        return run_model_demo(
            out=args.out, n_jobs=args.n_jobs, random_state=args.random_state, verbose=not args.quiet
        )
    missing = [flag for flag, value in given.items() if value is None]
    if missing:
        raise AuditInputError(
            f"the model audit needs {', '.join(missing)} as well (or no "
            "inputs at all for the demo)."
        )
    names = [name for name, _ in args.model]
    if len(set(names)) != len(names):
        raise AuditInputError(f"model names must differ; got {names}. Name them with NAME=PATH.")
    out = check_output_dir(args.out)  # before any work
    files = {"members": args.members, "non-members": args.non_members}
    if args.population is not None:
        files["population"] = args.population
    tables = _read_inputs(files, distinct=("members", "non-members", "population"))
    members, non_members = tables["members"], tables["non-members"]
    population = tables.get("population")
    models = {
        name: load_model(path, name=name, trust_pickle=args.trust_pickle)
        for name, path in args.model
    }
    recipes = {}
    for name, path in args.shadow_estimator or []:
        key = name if len(args.shadow_estimator) > 1 or name in models else ""
        recipes[key] = load_estimator(path, trust_pickle=args.trust_pickle)
    columns = None
    if args.columns:
        columns = [c.strip() for text in args.columns for c in text.split(",") if c.strip()]
    result = audit_model(
        models,
        members,
        non_members,
        label=args.label,
        population=population,
        columns=columns,
        prior=args.prior,
        confidence=args.confidence,
        shadow_estimators=recipes,
        n_jobs=args.n_jobs,
        random_state=args.random_state,
        verbose=not args.quiet,
    )
    paths = write_model_report(result, out)  # staged: all files arrive together, or none
    print_model_summary(result, paths)
    return result


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    from .report import AuditInputError

    try:
        import matplotlib  # noqa: F401  (the report's figures)
    except ImportError:
        parser.exit(
            2,
            f"sklearn-mace {args.command}: error: the report's figures need "
            'matplotlib: pip install "sklearn-mace[plot]"\n',
        )

    try:
        if args.command == "audit":
            return 3 if run_audit(args).partial else 0  # 3: a partial report (some failed)
        elif args.command == "audit-model":
            run_audit_model(args)
        else:
            from ._demo import run_demo

            run_demo(out=args.out, random_state=args.random_state, verbose=not args.quiet)
    except AuditInputError as exc:
        parser.exit(2, f"sklearn-mace {args.command}: error: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
