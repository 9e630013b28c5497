"""The model audit: the engine configured for trained classifiers (which analyses, which inputs).

The target records are the model's training rows (members) and hold-out rows from the same
population (non-members). The model is queried once per record, from its log-probabilities
(exact losses, no rounded softmax): the per-record loss ``−log M_y(x)``, the true-label
confidence, the correctness flag and the predicted label and confidence
(:func:`model_queries`). On these the engine runs

* BTTA and CBTTA (``_model_attacks.py``);
* MACE on the loss (MACE Thm 6, Def. 3), fitted once per model as a shared step: its
  cross-fitted Bayes rule (a certified lower bound on the optimal advantage, ``U_N`` beside
  it, each record's held-out risk) and the same scores at their best-ε threshold. The
  true-label confidence is a bijection of the loss, and the estimator maps its query to
  normal scores first, so a second MACE on it would repeat the same claim and only widen the
  correction: it is not run;
* with a ``population`` table and a training recipe, one set of reference models trained
  once (a shared step) and read by the shadow-model attack, LiRA and RMIA.

A model that gives labels only (an ONNX graph without a probability output), or any model
with ``label_only=True``, is queried through ``predict`` alone: its one analysis is the
label-only attack (``LABEL_ONLY_ANALYSES``, Choquette-Choo et al. 2021), K = 1, and a note
names what was skipped.

Every analysis goes through the engine (``_engine.py``): held-out scores certified with
:func:`~sklearn_mace.metrics.audit_epsilon`, one Bonferroni correction over the model's
claims, failures isolated (exit code 3), seeds drawn up front.
"""

import numbers

import numpy as np
import pandas as pd

from ..._analyses import mace_analyses, mace_fit_step
from ..._engine import (
    Analysis,
    AuditEngine,
    SharedStep,
    Subject,
    Targets,
    check_device,
    check_on_error,
)
from ..._results import AuditResult, failure_notes
from ..._verdict import check_claim_options, check_margin
from ._attacks import (
    LIRA_MIN_MODELS,
    REFERENCE,
    REFERENCE_MODELS,
    btta_scores,
    cbtta_scores,
    label_only_scores,
    lira_scores,
    reference_models,
    rmia_offline_scores,
    rmia_scores,
    shadow_scores,
)
from ._inputs import prepare_model_records
from ._queries import (
    as_audited_models,
    check_model_tables,
    check_train_accuracy,
    label_index,
    model_queries,
)
from ._types import ModelInputs, ModelReportInputs, ModelShared, QueriedModel

__all__ = [
    "ANALYSES",
    "LABEL_ONLY_ANALYSES",
    "ONE_MODEL_ANALYSES",
    "POPULATION_ANALYSES",
    "REFERENCE_STEP",
    "ModelAudit",
    "audit_model",
]

MACE_FIT = "MACE fit (loss)"
MACE_BAYES, MACE_BEST = mace_analyses("loss", MACE_FIT)
SHADOW_NAME = "Shadow-model attack (Shokri)"
LIRA_NAME = "LiRA (online)"
RMIA_NAME = "RMIA (online)"
RMIA_OFFLINE_NAME = "RMIA (offline)"
REFERENCE_STEP = SharedStep(REFERENCE, reference_models, key="reference")
#: the analyses of every model, in report order (tests replace entries to plant failures)
ANALYSES = [
    Analysis("BTTA (generalization gap)", btta_scores),
    Analysis("CBTTA (best partition)", cbtta_scores),
    MACE_BAYES,
    MACE_BEST,
]
#: the analyses that need a population table and a training recipe
POPULATION_ANALYSES = [
    Analysis(SHADOW_NAME, shadow_scores, needs=(REFERENCE,)),
    Analysis(LIRA_NAME, lira_scores, needs=(REFERENCE,)),
    Analysis(RMIA_NAME, rmia_scores, needs=(REFERENCE,)),
]
#: with one reference model (on the population alone): RMIA offline instead of the three
ONE_MODEL_ANALYSES = [Analysis(RMIA_OFFLINE_NAME, rmia_offline_scores, needs=(REFERENCE,))]
#: the analyses of a model that gives labels only (or audited with label_only=True)
LABEL_ONLY_ANALYSES = [Analysis("Label-only attack (Choquette-Choo)", label_only_scores)]
RECORD_QUERIES = ("loss", "true_label_confidence", "correct")


def _loss(subject):
    """MACE's query of a model: each target's loss."""
    return subject.inputs.loss


class ModelAudit(AuditEngine):
    """The engine configured for trained classifiers (one subject per model).

    Models run one after the other (an ONNX session does not pickle); ``n_jobs`` goes to
    the shadow models instead.
    """

    kind = "model"
    ranking = MACE_BAYES.name
    parallel_subjects = False

    def shared_steps(self, subject):
        """MACE fitted on the per-record loss; the reference models when a population and a
        recipe exist (trained once, read by every shadow attack). None for labels only."""
        if subject.inputs.label_only:
            return []
        steps = [mace_fit_step(MACE_FIT, _loss)]
        if subject.inputs.population_analyses:
            steps.append(REFERENCE_STEP)
        return steps

    def analyses(self, subject):
        """``ANALYSES``, and the shadow attacks when a population and a recipe exist (RMIA
        offline alone with one reference model); the label-only attack alone for a model
        that gives labels only."""
        if subject.inputs.label_only:
            return list(LABEL_ONLY_ANALYSES)
        names = subject.inputs.population_analyses
        optional = [*POPULATION_ANALYSES, *ONE_MODEL_ANALYSES]
        return [*ANALYSES, *(a for a in optional if a.name in names)]

    def describe(self, subject, results):
        """The model's format, file, accuracies and where its classes came from."""
        model, (train, test) = subject.inputs.model, subject.inputs.accuracy
        return {
            "format": model.format,
            "path": str(model.path),
            "train_accuracy": train,
            "test_accuracy": test,
            "classes_from": getattr(model, "classes_source", None) or "",
        }

    def record_columns(self, subject, results):
        """Each target's label and what the model says of it (loss, confidence, correct)."""
        queries = subject.inputs.queries
        columns = {subject.inputs.label: self.inputs.labels}
        if subject.inputs.label_only:
            return columns | {c: queries[c].to_numpy() for c in ("predicted_label", "correct")}
        columns.update({c: queries[c].to_numpy() for c in RECORD_QUERIES})
        return columns

    def run_subject(self, subject, progress):
        """The engine's run; a label-only model's records are ranked by its one attack."""
        result = super().run_subject(subject, progress)
        if subject.inputs.label_only:
            result.ranking = LABEL_ONLY_ANALYSES[0].name
        return result


def _population_analyses(name, model, recipe, population, index, n_models, notes):
    """Which shadow attacks can run on this model; a note for each that cannot."""
    if population is None:
        return ()
    if recipe is None:
        notes.append(
            f"'{name}' is an ONNX model, which carries no training procedure: the "
            "shadow-model attack, LiRA and RMIA need one (shadow_estimators=)."
        )
        return ()
    if np.any(index < 0):
        notes.append(
            f"'{name}': LiRA and RMIA skipped: some targets' labels are not among the model's "
            "classes, so the targets cannot train reference models nor be scored as records"
            + ("." if n_models > 1 else "; with one reference model nothing else runs.")
        )
        return (SHADOW_NAME,) if n_models > 1 else ()
    if n_models == 1:
        notes.append(
            f"'{name}': one reference model, trained on a random half of the population alone: "
            "only RMIA runs, offline (every target OUT of the model). LiRA is skipped (its "
            f"per-record Gaussians need {LIRA_MIN_MODELS} models, each record IN for half) and "
            "so is the shadow-model attack (the audit trains its networks on the queries of "
            "balanced reference models; give 2 or more for it)."
        )
        return (RMIA_OFFLINE_NAME,)
    if n_models < LIRA_MIN_MODELS:
        notes.append(
            f"'{name}': LiRA skipped: {n_models} reference models leave a record fewer than 2 "
            f"IN and 2 OUT models to fit its Gaussians (it needs {LIRA_MIN_MODELS})."
        )
        return (SHADOW_NAME, RMIA_NAME)
    return (SHADOW_NAME, LIRA_NAME, RMIA_NAME)


def _subject(
    name,
    model,
    *,
    targets,
    features,
    label,
    population,
    recipes,
    m,
    n_models,
    notes,
    force,
    label_only=False,
):
    """One model as a subject: its queries, accuracies and which analyses it gets; a model
    no better than the majority class on its members stops here (unless ``force``)."""
    if label_only or getattr(model, "label_only", False):
        return _label_only_subject(
            name,
            model,
            targets=targets,
            features=features,
            label=label,
            m=m,
            notes=notes,
            force=force,
            population=population,
            asked=label_only,
        )
    inputs = model.input_columns(features)
    labels = targets[label].to_numpy()
    queries, index = model_queries(model, targets[inputs], labels)
    correct = _checked_accuracy(name, queries, index, labels, m, notes=notes, force=force)
    recipe = recipes.get(name, recipes.get(""))
    recipe = model.estimator if recipe is None else recipe
    pop_index = None
    if population is not None:
        pop_index = label_index(model.classes_, population[label].to_numpy())
    shadow = _population_analyses(name, model, recipe, population, index, n_models, notes)
    return Subject(
        name,
        QueriedModel(
            model=model,
            columns=inputs,
            label=label,
            queries=queries,
            loss=queries["loss"].to_numpy(),
            index=index,
            n_classes=len(model.classes_),
            accuracy=(float(correct[m == 1].mean()), float(correct[m == 0].mean())),
            recipe=recipe,
            population_index=pop_index,
            population_analyses=shadow,
            label_only=False,
        ),
        ModelShared(),
    )


def _checked_accuracy(name, queries, index, labels, m, *, notes, force):
    """Which targets the model labels right; a note on true labels it lacks, and the
    train-accuracy gate (a model no better than the majority class on its members)."""
    if np.any(index < 0):
        notes.append(
            f"'{name}': {np.sum(index < 0)} true labels are not among the model's classes; "
            "they count as misclassified with the lowest probability the model gives."
        )
    correct = queries["correct"].to_numpy()
    low = check_train_accuracy(name, correct[m == 1], labels[m == 1], force=force)
    notes.extend([low] if low else [])
    return correct


def _label_only_subject(name, model, *, targets, features, label, m, notes, force, **why):
    """A model queried for its predicted labels only: the label-only attack is its one
    analysis (so ``K = 1``), and a note says which analyses were skipped and why."""
    inputs = model.input_columns(features)
    labels = targets[label].to_numpy()
    index = label_index(model.classes_, labels)
    predicted = label_index(model.classes_, model.predict(targets[inputs]))
    correct = ((predicted == index) & (index >= 0)).astype(float)
    low = check_train_accuracy(name, correct[m == 1], labels[m == 1], force=force)
    notes.extend([low] if low else [])
    notes.append(_label_only_note(name, model, why["asked"], why["population"] is not None))
    queries = pd.DataFrame({"predicted_label": predicted.astype(float), "correct": correct})
    return Subject(
        name,
        QueriedModel(
            model=model,
            columns=inputs,
            label=label,
            queries=queries,
            index=index,
            accuracy=(float(correct[m == 1].mean()), float(correct[m == 0].mean())),
            recipe=None,
            population_analyses=(),
            label_only=True,
        ),
        ModelShared(),
    )


def _label_only_note(name, model, asked, population):
    """Which analyses a label-only audit skips, and why."""
    why = "gives its predicted labels only (its ONNX graph has a label output and no "
    why += "probability output)"
    if asked:
        why = "audited from its predicted labels only (label_only=True)"
    elif model.session is None:
        why = "gives its predicted labels only (it has no predict_proba)"
    shadow = ", ".join(a.name for a in POPULATION_ANALYSES)
    return (
        f"'{name}' {why}: its one claim is the label-only attack's (Choquette-Choo et al. "
        "2021; how often the predicted label survives noise). Skipped: CBTTA and MACE, which "
        "need the model's confidences or losses"
        + (f"; {shadow}, which need its probabilities" if population else "")
        + "; BTTA, whose correctness flag is the first term of the label-only score (a "
        "second claim on it would only widen the correction)."
    )


def audit_model(
    models,
    members,
    non_members,
    *,
    label,
    population=None,
    columns=None,
    prior=None,
    confidence=0.95,
    delta=0.0,
    claimed_epsilon=1.0,
    bounded_margin=0.1,
    shadow_estimators=None,
    n_reference_models=REFERENCE_MODELS,
    n_jobs=None,
    random_state=0,
    id_columns="auto",
    drop_unmatched_labels=False,
    allow_missing=False,
    force_low_accuracy=False,
    label_only=False,
    verbose=True,
    on_error="raise",
    device="auto",
):
    """Audit one or more trained classifiers for membership leakage.

    Parameters
    ----------
    models : classifier, AuditedModel or dict of str -> either
        Fitted scikit-learn classifiers (with ``predict_proba``), or models loaded with
        :func:`load_model` (ONNX, skops, trusted pickle); several are compared side by
        side on the same records.
    members, non_members : DataFrame
        The model's training rows and hold-out rows, with the label column.
    label : str
        The true-label column.
    population : DataFrame, default=None
        Further rows from the population, disjoint from both, that train reference models
        (shadow-model attack, LiRA, RMIA) and are RMIA's comparison records. Without it
        those three do not run, and a note in ``result.notes`` says so.
    columns : list of str, default=None
        The model's input columns (default: every column but the label).
    prior : float in (0, 1), default=None
        P(member) for advantages, risks and ε; default: the members' fraction of targets.
    confidence : float in (0, 1), default=0.95
        ``1 − α``: every certified number printed for a model holds together with this
        probability (each of its ``K`` claims at ``1 − α/K``, Bonferroni).
    delta : float in [0, 1), default=0.0
        The δ of (ε, δ)-DP at which the ε lower bounds are stated (e.g. the ``1e-5`` of a
        DP-SGD accountant).
    claimed_epsilon : float >= 0, default=1.0
        The ε of a DP claim to test: a certified ε above it turns the card red. Member-vs-
        hold-out audits refute *substitute-one* DP; DP-SGD accountants (opacus) state
        add/remove-one ε, which implies substitute-one ``2·ε``: pass that.
    bounded_margin : float in (0, 1), default=0.1
        The card is green ("leakage bounded") only when every analysis's certified upper
        bound on the advantage of any threshold on its scores is at most
        ``|2p − 1| + bounded_margin`` (``docs/design.md``, "One card, one set of claim
        rules"); otherwise it is red (leakage certified) or inconclusive.
    shadow_estimators : dict of str -> estimator, default=None
        The training recipe (an unfitted, or fitted and then cloned, scikit-learn classifier)
        that shadow models copy, per model name; key ``""`` applies to every model. A
        scikit-learn model is its own recipe; an ONNX model has none.
    n_reference_models : int >= 1, default=16
        Reference models trained (once per model, with a population and a recipe) on random
        halves of the targets and the population, each record in exactly half of them, and
        shared by the shadow-model attack, LiRA (which needs at least 4) and RMIA. 1: one
        model on a random half of the population alone (at least 20 rows), read by RMIA
        offline only (the row "RMIA (offline)"); LiRA and the shadow-model attack are skipped
        with a note.
    n_jobs : int, default=None
        Parallel shadow-model training (joblib's semantics); results do not depend on it.
    random_state : int, default=0
        The base of every seed.
    id_columns : "auto" or list of str, default="auto"
        Row-id columns left out of the inputs of a model that does not name its inputs:
        ``"auto"`` those that look like one (with a warning), a list exactly those, ``[]``
        none (:func:`~sklearn_mace.report._kinds.model._inputs.model_input_columns`).
    drop_unmatched_labels : bool, default=False
        Leave out the records whose label is missing or not a class of a model (with a
        note); by default they are an input error naming the values and the rows. Labels
        are matched by value: ``1``, ``1.0``, ``"1"`` and ``True`` are one class.
    allow_missing : bool, default=False
        Accept missing feature values (for a model that imputes them); infinite values are
        refused either way.
    force_low_accuracy : bool, default=False
        Audit a model whose accuracy on its members is at or below their majority-class
        rate (with a note). By default such a model stops the audit with an input error
        ("the model does not predict these labels — wrong output, label coding or column
        order?"): its card would be green because it was queried wrongly
        (:func:`~sklearn_mace.report._kinds.model._queries.check_train_accuracy`).
    label_only : bool, default=False
        Query every model for its predicted labels only: its one claim is then
        :class:`~sklearn_mace.attacks.LabelOnlyAttack`'s (Choquette-Choo et al. 2021), and a
        note names the analyses skipped. A model that gives labels only (an ONNX graph with
        a label output and no probability output) is audited so whatever this says.
    verbose : bool, default=True
        A progress bar on stderr.
    on_error : {"raise", "report"}, default="raise"
        A failing analysis (or shared step) raises its exception (``"raise"``, as
        scikit-learn's ``GridSearchCV(error_score="raise")``), or becomes a failure with its
        reason in a partial report while the others go on (``"report"``, what
        ``sklearn-mace audit-model`` does: exit code 3).
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        Where the kernel passes run: MACE's estimator on the loss (``"auto"``: CUDA when
        available, else the CPU; ``docs/design.md``, "Devices and threads"). A CUDA device
        the machine lacks is an input error before any work. The models are queried, and
        the reference models trained, as their own code does.

    Returns
    -------
    result : AuditResult
        One :class:`SubjectResult` per model; :func:`write_report` writes the report.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_mace.report import audit_model
    >>> table = load_iris(as_frame=True).frame.drop_duplicates()  # iris repeats a record
    >>> table = table.sample(frac=1, random_state=0)
    >>> members, non_members = table.iloc[:75], table.iloc[75:]
    >>> tree = DecisionTreeClassifier(random_state=0).fit(
    ...     members.drop(columns="target"), members["target"])
    >>> result = audit_model({"tree": tree}, members, non_members, label="target",
    ...                      verbose=False)
    >>> result.summary["analysis"].tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['BTTA (generalization gap)', 'CBTTA (best partition)', 'MACE Bayes rule (loss)',
     'MACE best-ε threshold (loss)']
    >>> bool((result.summary["epsilon_lower_bound"] >= 0).all())
    True
    """
    check_claim_options(
        confidence=confidence, prior=prior, delta=delta, claimed_epsilon=claimed_epsilon
    )
    claimed = (float(claimed_epsilon), check_margin(bounded_margin))
    _check_reference_models(n_reference_models, label_only)
    check_on_error(on_error)
    check_device(device)
    models = as_audited_models(models)
    tables, features = check_model_tables(members, non_members, population, label, columns)
    options = dict(drop_unmatched=drop_unmatched_labels, allow_missing=allow_missing)
    tables, model_columns, notes = prepare_model_records(
        models, tables, features, label, id_columns=id_columns, **options
    )
    targets_frame = pd.concat([tables["members"], tables["non-members"]], ignore_index=True)
    targets = Targets.two_tables(len(tables["members"]), len(tables["non-members"]), prior=prior)
    population = tables.get("population")
    context = dict(targets=targets_frame, label=label, population=population, notes=notes)
    context.update(m=targets.membership, recipes=dict(shadow_estimators or {}))
    context.update(n_models=int(n_reference_models), force=bool(force_low_accuracy))
    context.update(label_only=bool(label_only))
    subjects = [
        _subject(name, model, **context, features=model_columns[name])
        for name, model in models.items()
    ]
    settings = dict(confidence=confidence, delta=float(delta), random_state=random_state)
    settings.update(n_jobs=n_jobs, on_error=on_error, device=device)
    engine = _engine(targets, targets_frame, label, population, n_reference_models, **settings)
    results = engine.run_with_progress(subjects, desc="sklearn-mace audit-model", verbose=verbose)
    notes += _reference_notes(subjects, population)
    return _result(results, engine, tables, features, label, notes, claimed)


def _engine(targets, frame, label, population, n_reference_models, *, device, **settings):
    """The engine of a model audit: the targets, and what every model's analyses share."""
    inputs = ModelInputs(
        targets=frame,
        labels=frame[label].to_numpy(),
        population=population,
        n_reference_models=int(n_reference_models),
        device=device,
    )
    return ModelAudit(targets, inputs=inputs, **settings)


def _check_reference_models(n_reference_models, label_only):
    """``n_reference_models`` and ``label_only``, or a ``ValueError`` naming them."""
    if not isinstance(label_only, (bool, np.bool_)):
        raise ValueError(f"label_only must be True or False; got {label_only!r}.")
    if (
        isinstance(n_reference_models, bool)
        or not isinstance(n_reference_models, numbers.Integral)
        or n_reference_models < 1
    ):
        raise ValueError(
            "n_reference_models must be an integer >= 1 (1: RMIA offline only, on a model "
            "trained on half of the population; >= 2: each record trains half of the "
            f"reference models); got {n_reference_models!r}."
        )


def _reference_notes(subjects, population):
    """Each model's shared reference models: how many, which split, what cost; without a
    population, which analyses did not run and what runs them (:func:`_no_population_note`)."""
    if population is None:
        full = [s for s in subjects if not s.inputs.label_only]
        return [_no_population_note(full)] if full else []
    return [
        f"'{subject.name}': {subject.shared.reference.describe()}."
        for subject in subjects
        if subject.shared.reference is not None
    ]


def _no_population_note(subjects):
    """Without a population table no reference model is trained: the shadow-model attack,
    LiRA and RMIA do not run. Said, with the parameter that runs them, since a card with
    fewer claims reads like a complete one."""
    *first, last = (a.name for a in POPULATION_ANALYSES)
    names = f"{', '.join(first)} and {last}"
    without = len(ANALYSES)
    note = (
        f"No population table (population=): {names} did "
        f"not run, so each model has {without} claims instead of up to "
        f"{without + len(POPULATION_ANALYSES)}. Rows of the same population as the targets, "
        "disjoint from both, passed as population= train the reference models these attacks "
        "need"
    )
    onnx = [s.name for s in subjects if s.inputs.recipe is None]
    if onnx:
        note += (
            f"; {' and '.join(map(repr, onnx))} would also need a training recipe "
            "(shadow_estimators=)"
        )
    return note + "."


def _result(results, engine, tables, features, label, notes, claimed):
    return AuditResult(
        kind="model",
        subjects=results,
        targets=engine.targets,
        confidence=engine.confidence,
        delta=engine.delta,
        claimed_epsilon=claimed[0],
        bounded_margin=claimed[1],
        n_rows={name: len(frame) for name, frame in tables.items()},
        inputs=ModelReportInputs(label=label, feature_names=features),
        notes=notes + failure_notes(results),
    )
