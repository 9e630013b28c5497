"""``sklearn-mace audit-algorithm``: the algorithm audit's command line.

Its options, the inputs it reads from them, its checks and its demo (the embedded population,
read by the audit itself: no input files to write); the common path of
``sklearn_mace/cli.py`` does the rest (the ``--out`` check, warnings, writing, printing). The
one-run design (``--design one-run``) has its own card (``_one_run_view.py``), written
through the same staging and manifest. Only ``argparse`` loads at import
time.
"""

import argparse
from pathlib import Path

from ... import _arguments as arguments
from ..._arguments import EXIT_CODES
from .._kind import print_report, write_report
from ._recipes import DPSGD, HISTOGRAMS, RECIPES, WHITE_BOX

#: Python parameters whose flag has another name (see ``Command.renamed``)
RENAMED = {"recipes": "recipe", "n_canaries": "canaries"}
DEFAULT_OUT = Path("mace-output") / "audit-algorithm"
RANDOM_STATE_HELP = (
    "the base of every random choice (targets, the runs' data and seeds, the attack's split "
    "of the runs): the same inputs and --random-state give the same report (default: 0)"
)
HELP = "does a training recipe keep its DP claim? shadow runs, certified ε per target"
#: what --device would move (its help): nothing yet
DEVICE_NOTE = (
    ", as in the other audits; this audit has none yet (the recipes train on the CPU, the "
    "runs' features are computed in NumPy)"
)
DESCRIPTION = (
    "Audit a training algorithm, not one output: each recipe is trained --n-runs "
    "times without any target and as many times with each target, an attack learns "
    "the target's presence from part of the runs and the other runs certify a lower "
    "bound on ε (exact Clopper-Pearson bounds; --certificate rank-test adds a rank "
    "test of both tails); a claim is contradicted only when "
    "that bound exceeds --claimed-epsilon. Without inputs it audits the embedded "
    "demo: the correct and a wrong-noise DP histogram synthesizer, both claimed at "
    f"ε = 1. Writes report.html, summary.csv, records.csv and figures/. {EXIT_CODES}"
)


def add_arguments(sub):
    """The options of ``sklearn-mace audit-algorithm``."""
    sub.add_argument(
        "--recipe",
        nargs="+",
        choices=tuple(RECIPES),
        metavar="NAME",
        help="built-in recipes to audit: dp-histogram, wrong-noise-histogram, "
        "gaussian-mixture, and sdv, ctgan, smartnoise when their package is installed; "
        "dpsgd-logreg, dpsgd-logreg-noise-bug and dpsgd-mlp (opacus, --design one-run: Dirac "
        "canaries, "
        "the population's last column the label, default scikit-learn's breast-cancer "
        "table) (default: the two histograms)",
    )
    sub.add_argument(
        "--population",
        metavar="PATH",
        help="records (CSV or Parquet) the training sets are drawn from; columns with at "
        "most 20 values are categorical (default: the embedded demo population)",
    )
    sub.add_argument(
        "--targets",
        type=arguments.positive_count("--targets"),
        metavar="K",
        help="audit the K most vulnerable records of the population (default: the demo's "
        "most common record and empty-cell canary, or 2 on a population file)",
    )
    _claim_options(sub)
    _design_options(sub)
    sub.add_argument(
        "--n-runs",
        type=arguments.positive_count("--n-runs", low=10),
        default=1000,
        help="runs per side (default: 1000); n runs per side certify at most about log(n/3)",
    )
    sub.add_argument(
        "--n-jobs",
        type=arguments.n_jobs,
        default=None,
        help="runs in parallel (joblib: -1 = all cores)",
    )
    arguments.add_out(sub, DEFAULT_OUT)
    arguments.add_device(sub, "kernel passes", DEVICE_NOTE)
    arguments.add_random_state_and_quiet(sub, RANDOM_STATE_HELP)


def _claim_spec(text):
    from ._audit import parse_claim

    try:
        return parse_claim(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"--claim {error}") from None


def _claim_options(sub):
    """The claim of ``audit-algorithm``."""
    sub.add_argument(
        "--claimed-epsilon",
        type=arguments.number("--claimed-epsilon", 0, float("inf"), closed_low=True),
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
        type=arguments.number("--delta", 0, 1, closed_low=True),
        default=None,
        help="δ at which ε is certified, and of --claimed-epsilon's claim (default: the "
        "claim's δ, 0 for --claimed-epsilon)",
    )
    sub.add_argument(
        "--confidence",
        type=arguments.number("--confidence", 0, 1),
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


def _design_options(sub):
    """The one-run design of ``audit-algorithm``."""
    sub.add_argument(
        "--design",
        choices=("multi-run", "one-run"),
        default="multi-run",
        help="multi-run: --n-runs trainings per side (the card); one-run: one training with "
        "--canaries canaries, each in with probability 1/2 (Steinke et al. 2023; add/remove "
        "only; its own card)",
    )
    sub.add_argument(
        "--canaries",
        type=arguments.positive_count("--canaries", low=10),
        default=1000,
        help="canaries of --design one-run, drawn from the population (default: 1000)",
    )
    sub.add_argument(
        "--certificate",
        choices=("threshold", "rank-test"),
        default="threshold",
        help="how the certifying runs give each target's ε (multi-run): threshold, the "
        "attack's threshold rule (exact Clopper-Pearson bounds); rank-test, that rule's point "
        "at half the level (the trade-off figure) and rank tests of both tails on all "
        "certifying runs at the other half, the larger ε and μ reported: tighter on pure DP "
        "mechanisms with discrete outputs, a few CPU seconds more per target at 1 000 runs "
        "(default: threshold)",
    )
    sub.add_argument(
        "--white-box",
        action="store_true",
        help="--design one-run of dpsgd-logreg and dpsgd-logreg-noise-bug: read each "
        "canary's coordinate of the recipe's per-step noisy gradients (white-box gradient "
        "canaries, every canary guessed on) instead of the final model",
    )


def _recipes(args):
    return args.recipe or list(HISTOGRAMS)


def check_arguments(args):
    """Every recipe named once, and its package installed; the device exists."""
    from ..._io import AuditInputError
    from ._recipes import available_recipes

    recipes = _recipes(args)
    missing = [r for r in recipes if r not in available_recipes()]
    if missing:
        raise AuditInputError(
            f'--recipe {missing[0]} needs its package: pip install "sklearn-mace[{missing[0]}]".'
        )
    if len(set(recipes)) != len(recipes):
        raise AuditInputError(f"--recipe names each recipe once; got {recipes}.")
    trainers = [r for r in recipes if r in DPSGD]
    if args.white_box and (args.design != "one-run" or set(recipes) - set(WHITE_BOX)):
        raise AuditInputError(
            f"--white-box reads the per-step gradients of {' and '.join(WHITE_BOX)} in "
            "--design one-run; give only those recipes and --design one-run."
        )
    if args.certificate != "threshold" and args.design == "one-run":
        raise AuditInputError(
            f"--certificate {args.certificate} certifies the multi-run design's independent runs; "
            "--design one-run certifies from one training's guesses, always with both "
            "Steinke, Nasr & Jagielski's bound and the f-DP analysis (Mahloujifar, Melis & "
            "Chaudhuri): leave --certificate out."
        )
    if args.targets is not None and args.design == "one-run":
        raise AuditInputError(
            "--targets chooses the multi-run design's target records; --design one-run "
            "draws --canaries canaries from the population: leave --targets out."
        )
    if args.neighbour != "add-remove" and args.design == "one-run":
        raise AuditInputError(
            "--design one-run puts each canary in or leaves it out: it audits --neighbour "
            "add-remove only."
        )
    if trainers and args.design != "one-run":
        raise AuditInputError(
            f"--recipe {trainers[0]} is audited in one run, with Dirac canaries: add "
            "--design one-run."
        )
    arguments.check_device(args)


def input_files(args):
    """The input file given, for the ``--out`` check."""
    return arguments.input_files(args, ("population",))


def wants_demo(args):
    """No population, recipe or target given: the embedded demo."""
    return args.population is None and args.recipe is None and args.targets is None


def demo_intro(args):
    """That no input was given."""
    return [
        "No inputs given: auditing the embedded demo (see `sklearn-mace audit-algorithm --help`)."
    ]


def _population(args):
    """The population table, or None (the embedded demo's)."""
    if args.population is None:
        return None
    return arguments.read_inputs({"population": args.population}, distinct=())["population"]


def audit_from_arguments(args):
    """The claim, then ``audit_algorithm``: the shadow runs of each recipe, or one run each
    with ``--design one-run`` (the Python call a user makes: the same result, so
    ``write_report`` and the command line write the same files)."""
    from ._audit import audit_algorithm, make_claim

    relation = args.neighbour.replace("-", "_")
    claim = None if args.claim is None else make_claim(args.claim, relation)
    return audit_algorithm(
        _recipes(args),
        _population(args),
        targets=args.targets,
        claimed_epsilon=args.claimed_epsilon,
        claim=claim,
        delta=args.delta,
        confidence=args.confidence,
        relation=relation,
        n_runs=args.n_runs,
        certificate=args.certificate.replace("-", "_"),
        n_jobs=args.n_jobs,
        random_state=args.random_state,
        verbose=not args.quiet,
        on_error="report",
        device=args.device,
        **_design_keywords(args),
    )


def _design_keywords(args):
    """``--design one-run``'s keywords of ``audit_algorithm`` (none for the multi-run
    design, whose defaults they are)."""
    if args.design != "one-run":
        return {}
    return {"design": "one_run", "n_canaries": args.canaries, "white_box": args.white_box}


def writes(result):
    """What this kind writes: the multi-run ``AuditResult`` and the one-run result."""
    from .._kind import is_audit_result

    return is_audit_result(result) or _is_one_run(result)


def _is_one_run(result):
    from ._types import OneRunResult

    return isinstance(result, OneRunResult)


def write(kind, result, stage, caught, *, title=None, presentation=None):
    """The report; for the one-run design its own card (``_one_run_view.py``): report.html,
    summary.csv, guesses.csv and the trade-off figures, listed in the manifest like every
    report file. ``write_report`` and the command line both come here."""
    if not _is_one_run(result):
        return write_report(kind, result, stage, caught, title=title, presentation=presentation)
    if presentation is not None:
        raise TypeError(
            "presentation= shows an AuditResult; a one-run result (design='one_run') has its "
            "own card: leave presentation out."
        )
    from ._one_run_view import write_one_run

    return write_one_run(result, stage, caught, title=title)


def show(kind, result, paths, caught, quiet):
    """The summary; for the one-run design each recipe's verdict line, where the files lie,
    and the warnings of the run (the library's, then the others' unless ``quiet``)."""
    from ..._warnings import warning_notes

    if not _is_one_run(result):
        return print_report(kind, result, paths, caught, quiet)
    from ._one_run_view import one_run_lines

    for line in one_run_lines(result):
        print(line)
    print(f"report: {paths['report']}")
    print(f"summary: {paths['summary']}")
    ours, third_party, _ = warning_notes(caught or [], [])
    for note in ours + ([] if quiet else third_party):
        print(note)
    return None
