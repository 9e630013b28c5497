"""The model audit's battery: which attacks run on a trained classifier, and what is kept.

The target records are the model's training rows (members) and hold-out rows from the same
population (non-members). The model is queried once per record, from its log-probabilities
(exact losses, no rounded softmax): the per-record loss ``−log M_y(x)``, the true-label
confidence ``M_y(x)``, the correctness flag and the predicted label and confidence
(:func:`model_queries`). On these queries the battery runs

* BTTA from the generalization gap (Bentley et al. 2021, Alg. 1: the correctness flag with the
  train and test accuracy) and CBTTA with its best partition (Thm 3; the partition is chosen
  by an inner cross-validation, so the scores stay held-out);
* MACE on the loss and on the true-label confidence (MACE Thm 6, Def. 3): the optimal
  advantage, and each record's individual risk, from :class:`KDEAdvantageEstimator`;
* with a ``population`` table, the shadow-model attack (Shokri et al. 2017) through
  :class:`ShadowModels` and LiRA (Carlini et al. 2022, :class:`LiRAAttack`).

Every attack scores each target without having been fitted on it (cross-fitting or shadow
models), and every row of the summary carries AUC, TPR at 1 % and 0.1 % FPR and the certified
ε lower bound of its scores.
"""

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_predict
from sklearn.neural_network import MLPClassifier
from sklearn.utils import check_random_state

from .._validation import check_prior
from ..attacks import (
    BTTAttack,
    LiRAAttack,
    ShadowModelAttack,
    ShadowModels,
)
from ..estimation import KDEAdvantageEstimator
from ..metrics import audit_epsilon, tpr_at_fpr
from ._io import AuditInputError
from ._model_io import IndexedClassifier

__all__ = ["ModelAuditResult", "ModelResult", "audit_model", "model_queries"]

MIN_TARGETS = 10  # per class: fewer leaves 5-fold cross-fitting folds without a class
N_FOLDS = 5
CBTTA_PARTITIONS = (
    "true_label",
    "predicted_label",
    "true_label_confidence",
    "predicted_label_confidence",
    ("predicted_label", "predicted_label_confidence"),
)
BTTA_NAME = "BTTA (generalization gap)"
CBTTA_NAME = "CBTTA (best partition)"
MACE_LOSS = "MACE optimal (loss)"
MACE_CONFIDENCE = "MACE optimal (true-label confidence)"
SHADOW_NAME = "Shadow-model attack (Shokri)"
LIRA_NAME = "LiRA (online)"
LIRA_SHADOWS = 16  # Carlini et al.'s online LiRA is close to its best from 16 shadows (Fig. 9)


@dataclass
class ModelResult:
    """What the battery found for one model."""

    name: str
    format: str
    path: str
    queries: pd.DataFrame  # loss, confidences, correctness of every target
    scores: dict  # analysis name -> membership score of every target (larger = member)
    summary: pd.DataFrame
    risk: np.ndarray  # MACE individual risk on the loss, every target (held-out)
    train_accuracy: float
    test_accuracy: float
    # max over the attacks of their ε bounds at confidence 1 − α/k (Bonferroni): a bound that
    # holds at 1 − α for all k attacks at once, unlike the largest of the per-attack bounds
    epsilon_all_attacks: float = np.nan


@dataclass
class ModelAuditResult:
    """Everything the model report shows."""

    models: list
    membership: np.ndarray  # 1 member, 0 non-member, one per target record
    target_source: np.ndarray  # "members" / "non-members"
    target_row: np.ndarray  # row in its input table (0-based, header excluded)
    labels: np.ndarray  # the true label of every target
    label: str
    prior: float
    confidence: float
    feature_names: list
    n_rows: dict
    notes: list = field(default_factory=list)

    @property
    def summary(self):
        """One row per (model, analysis): the table printed and written to summary.csv."""
        return pd.concat([r.summary for r in self.models], ignore_index=True)

    @property
    def records(self):
        """Every target with its queries, risk and attack scores, ranked by risk per model."""
        frames = []
        for model in self.models:
            frame = pd.DataFrame(
                {
                    "model": model.name,
                    "source": self.target_source,
                    "row": self.target_row,
                    "member": self.membership.astype(int),
                    self.label: self.labels,
                    **{
                        c: model.queries[c].to_numpy()
                        for c in ("loss", "true_label_confidence", "correct")
                    },
                    "risk": model.risk,
                }
            )
            for name, score in model.scores.items():
                frame[f"score: {name}"] = score
            frame = frame.sort_values(["risk", "loss"], ascending=[False, True], kind="stable")
            frame.insert(1, "rank", np.arange(1, len(frame) + 1))
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------------------- queries
def model_queries(model, frame, labels):
    """What a black-box adversary sees of ``model`` on labelled records (MACE §2.2).

    Computed from log-probabilities, so the loss is exact even where the probability of the
    true label rounds to 1.

    Parameters
    ----------
    model : AuditedModel
    frame : DataFrame
        The model's input columns.
    labels : ndarray of shape (n_samples,)
        The true labels.

    Returns
    -------
    queries : DataFrame
        ``correct``, ``true_label`` (index of the label among the model's classes, −1 when
        it is not one of them), ``predicted_label`` (index), ``true_label_confidence``,
        ``predicted_label_confidence`` — BTTAttack's layout, columns 0-4 — then ``loss``
        (``−log M_y(x)``) and ``log_proba_<j>`` for every class.
    """
    logp = model.log_proba(frame)
    classes = model.resolve_classes(logp.shape[1], labels)
    if len(classes) != logp.shape[1]:
        raise AuditInputError(
            f"The model '{model.name}' names {len(classes)} classes but returns "
            f"{logp.shape[1]} probability columns."
        )
    model.check_label_output(logp)
    lookup = {str(c): j for j, c in enumerate(classes)}
    index = np.array([lookup.get(str(v), -1) for v in labels])
    rows = np.arange(len(index))
    true_logp = np.where(index >= 0, logp[rows, np.maximum(index, 0)], logp.min(axis=1))
    predicted = np.argmax(logp, axis=1)
    queries = pd.DataFrame(
        {
            "correct": (predicted == index).astype(float),
            "true_label": index.astype(float),
            "predicted_label": predicted.astype(float),
            "true_label_confidence": np.exp(true_logp),
            "predicted_label_confidence": np.exp(logp[rows, predicted]),
            "loss": -true_logp,
        }
    )
    for j in range(logp.shape[1]):
        queries[f"log_proba_{j}"] = logp[:, j]
    return queries, index


# ---------------------------------------------------------------------------- scoring
def _epsilon_audit(score, m, *, prior, confidence, seed):
    """The certified ε lower bound of an attack's held-out scores (larger = member)."""
    return audit_epsilon(
        score[m == 1], score[m == 0], confidence=confidence, prior=prior, random_state=seed
    ).epsilon_lower_bound


def _row(model, analysis, m, score, *, prior, confidence, seed, **extra):
    return {
        "model": model,
        "analysis": analysis,
        "auc": roc_auc_score(m, score),
        "tpr_at_1pct_fpr": tpr_at_fpr(m, score, fpr=0.01),
        "tpr_at_0.1pct_fpr": tpr_at_fpr(m, score, fpr=0.001),
        "epsilon_lower_bound": _epsilon_audit(
            score, m, prior=prior, confidence=confidence, seed=seed
        ),
        "advantage_estimate": np.nan,
        "advantage_lower_bound": np.nan,
        "p_value": np.nan,
        "detail": "",
        **extra,
    }


def _btta_scores(Q, m, *, prior, n_classes, seed):
    """Held-out log posterior odds of BTTA and of CBTTA with the inner-CV best partition."""
    folds = StratifiedKFold(N_FOLDS, shuffle=True, random_state=seed)
    with warnings.catch_warnings():  # test accuracy above train: Bayes' rule still applies
        warnings.simplefilter("ignore", UserWarning)
        btta = cross_val_predict(
            BTTAttack(prior=prior), Q[:, :1], m, cv=folds, method="decision_function"
        )
        grid = GridSearchCV(
            BTTAttack(prior=prior, n_classes=n_classes),
            {"partition": [list(p) if isinstance(p, tuple) else p for p in CBTTA_PARTITIONS]},
            cv=StratifiedKFold(3, shuffle=True, random_state=seed),
        )
        # BTTAttack can reject a partition whose accuracies sum to 1 + 1e-16 (a rounding
        # bug in attacks/_btta.py); the grid then scores that partition NaN and skips it
        warnings.simplefilter("ignore", FitFailedWarning)
        try:
            cbtta = cross_val_predict(grid, Q, m, cv=folds, method="decision_function")
            best = clone(grid).fit(Q, m).best_params_["partition"]
        except ValueError as exc:
            return btta, None, str(exc)
    return btta, cbtta, best if isinstance(best, str) else " × ".join(best)


def _mace(query, m, *, prior, confidence, seed):
    """MACE on a one-dimensional query (Thm 6, Def. 3): the U_N estimate, its certified lower
    bound and p-value, the cross-fitted log posterior odds (an honest attack score) and the
    cross-fitted individual risk of every record."""
    Q = np.asarray(query, dtype=float).reshape(-1, 1)
    estimator = KDEAdvantageEstimator(prior=prior, confidence=confidence, random_state=seed).fit(
        Q, m
    )
    return {
        "advantage": estimator.advantage_estimate_,
        "lower": estimator.advantage_lower_bound_,
        "p_value": estimator.p_value_,
        "score": estimator.crossfit_decision_,
        "risk": estimator.crossfit_risk_,
    }


def _shadow_estimator(model, recipes):
    recipe = recipes.get(model.name, recipes.get(""))
    if recipe is not None:
        return recipe
    return None if model.estimator is None else model.estimator


def _shadow_scores(
    estimator, population, pop_index, target_q, n_classes, *, n_members, n_jobs, seed
):
    """Shokri et al.'s attack: shadows on the population, one attack model per class."""
    n_shadow = int(np.clip(len(population) // (2 * n_members), 2, 8))
    shadows = ShadowModels(
        clone(estimator),
        n_shadow=n_shadow,
        outputs=("true_label", "proba"),
        random_state=seed,
        verbose=0,
    )
    if "n_jobs" in shadows.get_params():
        shadows.set_params(n_jobs=n_jobs)
    keep = pop_index >= 0
    with warnings.catch_warnings():  # the attack MLPs stop at max_iter on tiny classes
        warnings.simplefilter("ignore", ConvergenceWarning)
        Qs, ms = shadows.fit_queries(population[keep], pop_index[keep])
        if Qs.shape[1] != 1 + n_classes:
            raise ValueError(f"a shadow model saw {Qs.shape[1] - 1} of the {n_classes} classes")
        # Shokri's per-class attack network (two layers of 50, as in the BTTA replication),
        # stopped at 200 epochs: a class has only ~100 shadow records
        attack = ShadowModelAttack(MLPClassifier((50, 50), max_iter=200, random_state=seed)).fit(
            Qs, ms
        )
    proba = np.exp(target_q[[f"log_proba_{j}" for j in range(n_classes)]].to_numpy())
    X = np.column_stack([target_q["true_label"].to_numpy(), proba])
    return attack.decision_function(X), n_shadow


def _lira_scores(
    model, recipe, inputs, targets, target_index, population, pop_index, m, *, n_jobs, seed
):
    """LiRA, online (Carlini et al. 2022): the targets and the population form the shadows'
    pool, each record training half of the ``LIRA_SHADOWS`` shadows (its membership label
    is never used to train them); the target model is queried through its log-probabilities."""

    def records(frame, index):
        return np.column_stack([frame[inputs].to_numpy(dtype=float), index])

    target_records = records(targets, target_index)
    keep = pop_index >= 0
    attack = LiRAAttack(
        IndexedClassifier(model, inputs),
        clone(recipe),
        n_shadow=LIRA_SHADOWS,
        n_jobs=n_jobs,
        random_state=seed,
        verbose=0,
    ).fit(target_records, m, population=records(population[keep], pop_index[keep]))
    return attack.decision_function(target_records)


def _population_attacks(
    model, recipe, inputs, targets, index, queries, population, label, m, *, notes, n_jobs, row
):
    """The shadow-model attack and LiRA on one model (scores, summary rows)."""
    name = model.name
    if recipe is None:
        notes.append(
            f"'{name}' is an ONNX model, which carries no training procedure: the "
            "shadow-model attack and LiRA need one (--shadow-estimator)."
        )
        return {}, []
    lookup = {str(c): j for j, c in enumerate(model.classes_)}
    pop_index = np.array([lookup.get(str(v), -1) for v in population[label].to_numpy()])
    n_classes, seed = len(model.classes_), row["seed"]
    scores, rows = {}, []
    try:
        X_pop = population[inputs].to_numpy(dtype=float)
        score, n_shadow = _shadow_scores(
            recipe,
            X_pop,
            pop_index,
            queries,
            n_classes,
            n_members=int(m.sum()),
            n_jobs=n_jobs,
            seed=seed,
        )
    except ValueError as exc:  # text columns, a shadow without some class, too few rows
        notes.append(f"'{name}': the shadow-model attack could not run: {exc}")
    else:
        scores[SHADOW_NAME] = score
        rows.append(_row(name, SHADOW_NAME, m, score, **row, detail=f"{n_shadow} shadow models"))
    if np.any(index < 0):
        notes.append(
            f"'{name}': LiRA skipped: some targets' labels are not among the model's classes."
        )
        return scores, rows
    try:
        score = _lira_scores(
            model,
            recipe,
            inputs,
            targets,
            index,
            population,
            pop_index,
            m,
            n_jobs=n_jobs,
            seed=seed,
        )
    except ValueError as exc:
        notes.append(f"'{name}': LiRA could not run: {exc}")
    else:
        scores[LIRA_NAME] = score
        rows.append(
            _row(
                name,
                LIRA_NAME,
                m,
                score,
                **row,
                detail=f"{LIRA_SHADOWS} shadow models, each record IN for half",
            )
        )
    return scores, rows


def _check_tables(members, non_members, population, label, columns):
    tables = {"members": members, "non-members": non_members}
    if population is not None:
        tables["population"] = population
    for name, frame in tables.items():
        if label not in frame.columns:
            raise AuditInputError(
                f"The {name} table has no label column {label!r} (--label); its columns are "
                f"{list(frame.columns)}."
            )
    if columns is not None:
        for name, frame in tables.items():
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise AuditInputError(
                    f"The {name} table lacks the requested column(s) {missing} (--columns)."
                )
        features = [c for c in columns if c != label]
    else:
        features = [c for c in members.columns if c != label]
        for name, frame in tables.items():
            theirs = [c for c in frame.columns if c != label]
            if set(theirs) != set(features):
                raise AuditInputError(
                    f"Mismatched columns: the {name} table has {sorted(set(theirs))}, the "
                    f"members table {sorted(set(features))}; use --columns for a common "
                    "subset."
                )
    for name, frame in tables.items():
        if len(frame) < MIN_TARGETS and name != "population":
            raise AuditInputError(
                f"Too few rows for the audit: the {name} table has "
                f"{len(frame)}; it needs at least {MIN_TARGETS}."
            )
    return tables, features


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
    shadow_estimators=None,
    n_jobs=None,
    random_state=0,
    verbose=True,
):
    """Run the model battery on one or more trained classifiers.

    Parameters
    ----------
    models : AuditedModel or dict of str -> AuditedModel
        Loaded with :func:`~sklearn_mace.report._model_io.load_model`; several are compared
        side by side on the same records.
    members, non_members : DataFrame
        The model's training rows and hold-out rows, with the label column.
    label : str
        The true-label column.
    population : DataFrame, default=None
        Further rows from the population, disjoint from both, that train shadow models
        (shadow-model attack, LiRA).
    columns : list of str, default=None
        The model's input columns (default: every column but the label).
    prior : float in (0, 1), default=None
        P(member) for advantages, risks and ε; default: the members' fraction of targets.
    confidence : float in (0, 1), default=0.95
        Level of the certified bounds.
    shadow_estimators : dict of str -> estimator, default=None
        The training recipe (an unfitted, or fitted and then cloned, scikit-learn classifier)
        that shadow models copy, per model name; key ``""`` applies to every model. A
        scikit-learn model (skops, pickle) is its own recipe; an ONNX model has none.
    n_jobs : int, default=None
        Parallel shadow-model training (joblib's semantics), where the estimators offer it.
    random_state : int, default=0
    verbose : bool, default=True
        A progress bar on stderr.

    Returns
    -------
    result : ModelAuditResult

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_mace.report._model_battery import audit_model
    >>> from sklearn_mace.report._model_io import AuditedModel
    >>> table = load_iris(as_frame=True).frame.sample(frac=1, random_state=0)
    >>> members, non_members = table.iloc[:75], table.iloc[75:]
    >>> tree = DecisionTreeClassifier(random_state=0).fit(
    ...     members.drop(columns="target"), members["target"])
    >>> model = AuditedModel("tree", "tree.skops", "skops", estimator=tree)
    >>> result = audit_model(model, members, non_members, label="target", verbose=False)
    >>> result.summary["analysis"].tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['BTTA (generalization gap)', 'CBTTA (best partition)', 'MACE optimal (loss)',
     'MACE optimal (true-label confidence)']
    >>> bool((result.summary["epsilon_lower_bound"] >= 0).all())
    True
    """
    from tqdm.auto import tqdm

    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}.")
    if prior is not None:
        check_prior(prior)
    if not isinstance(models, dict):
        models = {models.name: models}
    if not models:
        raise AuditInputError("At least one model is needed.")
    recipes = dict(shadow_estimators or {})
    tables, features = _check_tables(members, non_members, population, label, columns)
    rng = check_random_state(random_state)
    targets = pd.concat([members, non_members], ignore_index=True)
    labels = targets[label].to_numpy()
    m = np.r_[np.ones(len(members), dtype=int), np.zeros(len(non_members), dtype=int)]
    prior_value = float(m.mean()) if prior is None else float(prior)
    notes = []
    n_pop_steps = 0 if population is None else 2
    results = []
    with tqdm(
        total=len(models) * (4 + n_pop_steps),
        desc="sklearn-mace audit-model",
        disable=not verbose,
        unit="step",
    ) as progress:
        for name, model in models.items():
            inputs = model.input_columns(features)
            progress.set_postfix_str(f"{name}: querying the model")
            queries, index = model_queries(model, targets[inputs], labels)
            if np.any(index < 0):
                notes.append(
                    f"'{name}': {np.sum(index < 0)} true labels are not among the "
                    "model's classes; they count as misclassified with the lowest "
                    "probability the model gives."
                )
            n_classes = len(model.classes_)
            Q = queries.to_numpy()[:, :5]
            correct = queries["correct"].to_numpy()
            train_acc, test_acc = correct[m == 1].mean(), correct[m == 0].mean()
            seed = rng.randint(np.iinfo(np.int32).max)
            row = dict(prior=prior_value, confidence=confidence, seed=seed)
            scores, rows = {}, []
            progress.update()
            progress.set_postfix_str(f"{name}: BTTA / CBTTA")
            btta, cbtta, best = _btta_scores(
                Q, m, prior=prior_value, n_classes=n_classes, seed=seed
            )
            scores[BTTA_NAME] = btta
            rows.append(
                _row(
                    name,
                    BTTA_NAME,
                    m,
                    btta,
                    **row,
                    detail=f"train accuracy {train_acc:.3f}, test {test_acc:.3f}",
                )
            )
            if cbtta is None:
                notes.append(f"'{name}': CBTTA could not run: {best}")
            else:
                scores[CBTTA_NAME] = cbtta
                rows.append(
                    _row(
                        name,
                        CBTTA_NAME,
                        m,
                        cbtta,
                        **row,
                        detail=f"partition {best}, chosen by inner 3-fold CV",
                    )
                )
            progress.update()
            for analysis, column, detail in (
                (MACE_LOSS, "loss", "query −log M_y(x)"),
                (
                    MACE_CONFIDENCE,
                    "true_label_confidence",
                    "query M_y(x) = exp(−loss): a bijection of the loss, so the same optimal "
                    "advantage",
                ),
            ):
                progress.set_postfix_str(f"{name}: {analysis}")
                mace = _mace(
                    queries[column], m, prior=prior_value, confidence=confidence, seed=seed
                )
                scores[analysis] = mace["score"]
                rows.append(
                    _row(
                        name,
                        analysis,
                        m,
                        mace["score"],
                        **row,
                        advantage_estimate=mace["advantage"],
                        advantage_lower_bound=mace["lower"],
                        p_value=mace["p_value"],
                        detail=detail,
                    )
                )
                if column == "loss":
                    risk = mace["risk"]
                progress.update()
            if population is not None:
                progress.set_postfix_str(f"{name}: shadow models, LiRA")
                extra_scores, extra_rows = _population_attacks(
                    model,
                    _shadow_estimator(model, recipes),
                    inputs,
                    targets,
                    index,
                    queries,
                    population,
                    label,
                    m,
                    notes=notes,
                    n_jobs=n_jobs,
                    row=row,
                )
                scores.update(extra_scores)
                rows.extend(extra_rows)
                progress.update(2)
            joint = 1 - (1 - confidence) / len(scores)
            results.append(
                ModelResult(
                    epsilon_all_attacks=max(
                        _epsilon_audit(score, m, prior=prior_value, confidence=joint, seed=seed)
                        for score in scores.values()
                    ),
                    name=name,
                    format=model.format,
                    path=str(model.path),
                    queries=queries,
                    scores=scores,
                    summary=pd.DataFrame(rows),
                    risk=risk,
                    train_accuracy=float(train_acc),
                    test_accuracy=float(test_acc),
                )
            )
    n_rows = {k: len(v) for k, v in tables.items()}
    return ModelAuditResult(
        models=results,
        membership=m,
        target_source=np.r_[
            np.full(len(members), "members"), np.full(len(non_members), "non-members")
        ].astype(object),
        target_row=np.r_[np.arange(len(members)), np.arange(len(non_members))],
        labels=labels,
        label=label,
        prior=prior_value,
        confidence=confidence,
        feature_names=features,
        n_rows=n_rows,
        notes=notes,
    )
