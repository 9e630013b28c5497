"""``sklearn-mace audit-model``: the model audit's command line.

Its options, the inputs it reads from them (tables, models, shadow recipes), its checks and
its demo; the common path of ``sklearn_mace/cli.py`` does the rest (the ``--out`` check,
warnings, writing, printing). Only ``argparse`` loads at import time.
"""

import argparse
from pathlib import Path

from ... import _arguments as arguments
from ..._arguments import EXIT_CODES, RELATION

#: Python parameters whose flag has another name (see ``Command.renamed``)
RENAMED = {
    "models": "model",
    "shadow_estimators": "shadow_estimator",
    "n_reference_models": "reference_models",
    "max_skops_bytes": "max_skops_size",
    "id_columns=[]": "keep_id_columns",
}
DEFAULT_OUT = Path("mace-output") / "audit-model"
HELP = "privacy report for a trained classifier (ONNX, skops): HTML, CSV and PNG"
DESCRIPTION = (
    "Audit a trained classifier for membership leakage: BTTA from the generalization "
    "gap and its best CBTTA partition, MACE on the per-record loss (its Bayes rule, a "
    "certified lower bound on the optimal advantage, and its best-ε threshold), and "
    "with --population one set of reference models read by the shadow-model attack, "
    "LiRA and RMIA. Every analysis's held-out "
    "scores get a certified ε lower bound, and every certified number of a model holds "
    "at --confidence together. Without inputs it audits an embedded demo (an overfit "
    f"and a regularised classifier on scikit-learn's digits). {RELATION} {EXIT_CODES}"
)
#: what --device moves (its help)
DEVICE_PASSES = "the kernel sums of MACE's estimator on the loss"
#: the input options, in the order the --out check names them
INPUT_OPTIONS = ("members", "non_members", "model", "shadow_estimator", "population")
#: what the demo refuses: every audit option other than --out, --random-state, --device,
#: --quiet and --n-jobs
DEMO_DEFAULTS = {
    **arguments.CLAIM_DEFAULTS,
    **arguments.TABLE_DEFAULTS,
    "shadow_estimator": None,
    "columns": None,
    "drop_unmatched_labels": False,
    "allow_missing": False,
    "reference_models": 16,
    "probability_output": None,
    "classes": None,
    "force_low_accuracy": False,
    "label_only": False,
    "max_skops_size": None,
    "trust_pickle": False,
}


def _reference_models(text):
    value = arguments.integer(lambda v: v >= 1, text)
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


def _inputs(sub):
    inputs = sub.add_argument_group("inputs (tables: CSV or Parquet)")
    inputs.add_argument(
        "--model",
        metavar="[NAME=]PATH",
        nargs="+",
        type=arguments.named_path,
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
        type=arguments.named_path,
        help="training recipe that shadow models copy (an unfitted or fitted scikit-learn "
        "classifier in skops, or pickle with --trust-pickle), per model NAME or for all; "
        "default: the model itself when it is a scikit-learn model (ONNX has none)",
    )


def add_arguments(sub):
    """The options of ``sklearn-mace audit-model``."""
    _inputs(sub)
    options = sub.add_argument_group("audit options")
    options.add_argument(
        "--trust-pickle",
        action="store_true",
        help="allow pickle/joblib files. Loading a pickle RUNS CODE stored in the file: use "
        "it only for files you trust",
    )
    arguments.claim_options(options, "model")
    options.add_argument(
        "--columns",
        action="append",
        metavar="A,B,…",
        help="the model's input columns, comma-separated (default: all but the label)",
    )
    arguments.table_options(options)
    _audit_options(options)
    _output_options(sub.add_argument_group("what the model outputs (model-output gate)"))


def _output_options(group):
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


def _audit_options(options):
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
    arguments.add_out(options, DEFAULT_OUT)
    options.add_argument(
        "--n-jobs",
        type=arguments.n_jobs,
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
    arguments.add_device(options, DEVICE_PASSES)


def wants_demo(args):
    """No input given: the embedded demo."""
    given = ("model", "members", "non_members", "label", "population")
    return all(getattr(args, name) is None for name in given)


def check_arguments(args):
    """The models, both tables and the label, or nothing; the models' names differ."""
    given = {"--model": args.model, "--members": args.members}
    given.update({"--non-members": args.non_members, "--label": args.label})
    arguments.missing_inputs(given, "the model audit", none="no inputs")
    arguments.check_names([name for name, _ in args.model], "model")
    arguments.check_device(args)


def check_demo(args):
    """The demo takes only --out, --random-state, --device, --quiet and --n-jobs, and needs
    the packages that save its models."""
    from ._demo import check_demo_packages

    arguments.refuse_demo_options(args, DEMO_DEFAULTS, "audit-model", ", --n-jobs")
    arguments.check_device(args)
    check_demo_packages()


def input_files(args):
    """The input files given, for the ``--out`` check."""
    return arguments.input_files(args, INPUT_OPTIONS)


def _is_onnx(path):
    """--probability-output and --classes go to the ONNX models only."""
    return Path(path).suffix.lower() == ".onnx"


def _load_models(args):
    from ..._io import AuditInputError
    from ._io import load_estimator, load_model

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


def audit_from_arguments(args):
    """Read the tables, load the models and audit them (``audit_model``)."""
    from ._audit import audit_model

    files = {"members": args.members, "non-members": args.non_members}
    if args.population is not None:
        files["population"] = args.population
    id_columns = arguments.id_columns(args)
    tables = arguments.read_inputs(files, ("members", "non-members", "population"), args)
    models, recipes = _load_models(args)
    result = audit_model(
        models,
        tables["members"],
        tables["non-members"],
        label=args.label,
        population=tables.get("population"),
        columns=arguments.columns(args),
        shadow_estimators=recipes,
        n_reference_models=args.reference_models,
        n_jobs=args.n_jobs,
        id_columns=id_columns,
        drop_unmatched_labels=args.drop_unmatched_labels,
        allow_missing=args.allow_missing,
        force_low_accuracy=args.force_low_accuracy,
        label_only=args.label_only,
        device=args.device,
        **arguments.claim_kwargs(args),
        on_error="report",
    )
    result.notes[:0] = arguments.reading_notes(tables)
    return result


def demo_intro(args):
    """That no input was given, and what the demo is."""
    from ._demo import N_MEMBERS

    return [
        "No inputs given: auditing the embedded model demo (see `sklearn-mace audit-model "
        "--help`).",
        "sklearn-mace audit-model demo: digits, an overfit random forest (ONNX) and a "
        f"regularised logistic regression (skops), trained on the same {N_MEMBERS} "
        "members",
    ]


def run_demo(args, stage):
    """Write the demo's tables and models under ``stage`` and audit the models."""
    from ._demo import audit_demo

    return audit_demo(
        stage,
        n_jobs=args.n_jobs,
        random_state=args.random_state,
        verbose=not args.quiet,
        device=args.device,
    )


def demo_outro(out):
    """The same audit from the files the demo wrote."""
    from ._demo import LABEL, MODEL_FILES

    inputs, models = out / "inputs", out / "models"
    names = ("overfit", "regularised", "recipe")
    files = {name: models / file for name, file in zip(names, MODEL_FILES, strict=True)}
    return [
        f"the same from files: sklearn-mace audit-model --model overfit={files['overfit']} "
        f"regularised={files['regularised']} --shadow-estimator "
        f"overfit={files['recipe']} --members {inputs}/members.csv --non-members "
        f"{inputs}/non_members.csv --population {inputs}/population.csv --label {LABEL} "
        f"--out {out}-from-files"
    ]
