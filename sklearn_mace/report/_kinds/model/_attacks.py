"""The model audit's attacks, each scoring every target without having been fitted on it.

* BTTA from the generalization gap (Bentley et al. 2021, Alg. 1: the correctness flag with
  the train and test accuracy) and CBTTA with its best partition (Thm 3; the partition is
  chosen by an inner cross-validation) — both cross-fitted, so the scores are held out;
* with a ``population`` table, one set of reference models (:class:`ReferenceSet`, a
  shared step: :class:`~sklearn_mace.attacks.ShadowModels` on balanced halves of the
  targets and the population, trained once, never seeing a membership label) read by the
  shadow-model attack (Shokri et al. 2017), LiRA (Carlini et al. 2022,
  :class:`~sklearn_mace.attacks.LiRAAttack`) and RMIA (Zarifzadeh et al. 2024,
  :class:`~sklearn_mace.attacks.RMIAAttack`). With one reference model (``K = 1``) it is
  trained on a random half of the population alone and only RMIA runs, offline;
* for a model that gives labels only, the label-only attack (Choquette-Choo et al. 2021,
  :class:`~sklearn_mace.attacks.LabelOnlyAttack`): how often the predicted label survives
  noise. Its score of a record comes from the model's labels alone, never from a membership
  label, so it is held out by construction.
"""

import time
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_predict
from sklearn.neural_network import MLPClassifier

from ....attacks import (
    BTTAttack,
    LabelOnlyAttack,
    LiRAAttack,
    RMIAAttack,
    ShadowModelAttack,
    ShadowModels,
)
from ....attacks._reference import MIN_POPULATION
from ..._engine import Scores
from ._io import IndexedClassifier

__all__ = [
    "REFERENCE",
    "ReferenceSet",
    "btta_scores",
    "cbtta_scores",
    "label_only_scores",
    "lira_scores",
    "reference_models",
    "rmia_offline_scores",
    "rmia_scores",
    "shadow_scores",
]

N_FOLDS = 5
CBTTA_PARTITIONS = (
    "true_label",
    "predicted_label",
    "true_label_confidence",
    "predicted_label_confidence",
    ("predicted_label", "predicted_label_confidence"),
)
#: the shared step that trains the reference models
REFERENCE = "Reference models"
# Carlini et al.'s online LiRA is close to its best from 16 shadows (Fig. 9); RMIA needs fewer
REFERENCE_MODELS = 16
LIRA_MIN_MODELS = 4  # LiRA's per-record variances need 2 IN and 2 OUT models per record
# the shadow-model attack's networks train on at most this many reference-model queries
SHADOW_ATTACK_ROWS = 10_000
# BTTAttack warns when the test accuracy exceeds the training accuracy; Bayes' rule applies
_TEST_ABOVE_TRAIN = r"The test accuracy .* exceeds the training accuracy"


def _btta_inputs(engine, subject):
    return subject.inputs.queries.to_numpy()[:, :5], engine.targets.membership


def btta_scores(engine, subject, seed):
    """Held-out log posterior odds of BTTA (correctness flag, train and test accuracy)."""
    Q, m = _btta_inputs(engine, subject)
    folds = StratifiedKFold(N_FOLDS, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", _TEST_ABOVE_TRAIN, UserWarning)
        score = cross_val_predict(
            BTTAttack(prior=engine.targets.prior), Q[:, :1], m, cv=folds, method="decision_function"
        )
    accuracy = subject.inputs.accuracy
    detail = f"train accuracy {accuracy[0]:.3f}, test {accuracy[1]:.3f}"
    return Scores(score=score, detail=detail)


def cbtta_scores(engine, subject, seed):
    """Held-out log posterior odds of CBTTA, its partition chosen by an inner 3-fold CV."""
    Q, m = _btta_inputs(engine, subject)
    grid = GridSearchCV(
        BTTAttack(prior=engine.targets.prior, n_classes=subject.inputs.n_classes),
        {"partition": [list(p) if isinstance(p, tuple) else p for p in CBTTA_PARTITIONS]},
        cv=StratifiedKFold(3, shuffle=True, random_state=seed),
    )
    folds = StratifiedKFold(N_FOLDS, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", _TEST_ABOVE_TRAIN, UserWarning)
        score = cross_val_predict(grid, Q, m, cv=folds, method="decision_function")
        best = clone(grid).fit(Q, m).best_params_["partition"]
    best = best if isinstance(best, str) else " × ".join(best)
    return Scores(
        score=score, detail=f"partition {best} (on all targets), chosen by inner 3-fold CV"
    )


@dataclass
class ReferenceSet:
    """The reference models of one audited model, shared by the shadow attacks.

    ``models`` is a :class:`~sklearn_mace.attacks.ShadowModels` (``split="balanced"``)
    fitted on ``targets`` then ``population`` (records: input columns, class index last);
    ``targets`` is None when some target's label is unknown to the model, and the pool is
    then the population alone. With one model (``offline``) it is a ``split="random"``
    :class:`~sklearn_mace.attacks.ShadowModels` fitted on a random half of ``population``
    alone, for RMIA offline; ``targets`` are then kept but trained nothing.
    """

    models: ShadowModels
    targets: np.ndarray
    population: np.ndarray
    seconds: float

    @property
    def n_models(self):
        return len(self.models.estimators_)

    @property
    def offline(self):
        """Whether the models were trained on the population alone."""
        return self.models.split == "random"

    def describe(self):
        """One sentence: how many models, on which split, at what training cost."""
        if self.offline:
            return (
                f"{self.n_models} reference model (a clone of the training recipe) trained on a "
                f"random half of the {len(self.population)} population rows alone (no target "
                "trained it; no membership label is used), read by RMIA offline: "
                f"{self.seconds:.1f} s of training"
            )
        n_targets = 0 if self.targets is None else len(self.targets)
        n_pool = n_targets + len(self.population)
        k = self.n_models
        return (
            f"{k} reference models (clones of the training recipe), each trained on a random "
            f"half of a pool of {n_pool} records ({n_targets} targets + "
            f"{len(self.population)} population rows; every record trains exactly {k // 2} "
            "of them, Carlini et al.'s balanced split; no membership label is used), "
            "trained once and read by the shadow-model attack, LiRA and RMIA: "
            f"{self.seconds:.1f} s of training ({self.seconds / k:.2f} s per model)"
        )


def _records(frame, columns, index):
    return np.column_stack([frame[columns].to_numpy(dtype=float), index])


def reference_models(engine, subject, seed):
    """Train the subject's reference models once (joblib, ``engine.n_jobs``)."""
    columns = subject.inputs.columns
    keep = subject.inputs.population_index >= 0
    population = _records(
        engine.inputs.population[keep], columns, subject.inputs.population_index[keep]
    )
    targets = None
    if np.all(subject.inputs.index >= 0):
        targets = _records(engine.inputs.targets, columns, subject.inputs.index)
    pool = population if targets is None else np.vstack([targets, population])
    n_models = engine.inputs.n_reference_models
    split = "balanced"
    if n_models == 1:  # RMIA offline: the one model trains on a random half of the population
        pool, split = population, "random"
        if pool.shape[0] < MIN_POPULATION:
            raise ValueError(
                f"one reference model trained on the population alone needs at least "
                f"{MIN_POPULATION} population rows; got {pool.shape[0]}."
            )
    if pool.shape[0] < 2 * n_models:
        raise ValueError(
            f"{n_models} reference models need at least {2 * n_models} pool records; the "
            f"pool has {pool.shape[0]}."
        )
    start = time.perf_counter()
    models = ShadowModels(
        clone(subject.inputs.recipe),
        n_reference_models=n_models,
        split=split,
        outputs=("true_label", "proba"),
        n_jobs=engine.n_jobs,
        random_state=seed,
        verbose=0,
    ).fit(pool[:, :-1], pool[:, -1])
    return ReferenceSet(models, targets, population, time.perf_counter() - start)


def shadow_scores(engine, subject, seed):
    """Shokri et al.'s attack: one attack model per class, trained on the reference models'
    queries of the population rows (their membership in each reference model is known)."""
    shared = subject.shared.reference
    n_classes = subject.inputs.n_classes
    models = shared.models
    n_targets = 0 if shared.targets is None else len(shared.targets)
    rows = np.flatnonzero(models.sample_index_ >= n_targets)
    rng = np.random.default_rng(seed)
    if rows.size > SHADOW_ATTACK_ROWS:
        rows = np.sort(rng.choice(rows, SHADOW_ATTACK_ROWS, replace=False))
    Qs, ms = models.queries_[rows], models.membership_[rows]
    if Qs.shape[1] != 1 + n_classes:
        raise ValueError(f"a reference model saw {Qs.shape[1] - 1} of the {n_classes} classes")
    with warnings.catch_warnings():  # the attack MLPs stop at max_iter on tiny classes
        warnings.simplefilter("ignore", ConvergenceWarning)
        # Shokri's per-class attack network (two layers of 50, as in the BTTA replication)
        net = MLPClassifier((50, 50), max_iter=200, random_state=seed)
        attack = ShadowModelAttack(net).fit(Qs, ms)
    queries = subject.inputs.queries
    proba = np.exp(queries[[f"log_proba_{j}" for j in range(n_classes)]].to_numpy())
    X = np.column_stack([queries["true_label"].to_numpy(), proba])
    detail = f"{shared.n_models} reference models, attack trained on {rows.size} of their queries"
    return Scores(score=attack.decision_function(X), detail=detail)


def _pool_attack(engine, subject, attack):
    """Fit ``attack`` on the shared reference models; its scores of the targets."""
    shared = subject.shared.reference
    target = IndexedClassifier(subject.inputs.model, subject.inputs.columns)
    attack.set_params(target=target, reference_models=shared.models)
    attack.fit(shared.targets, engine.targets.membership, population=shared.population)
    return attack.decision_function(shared.targets)


def lira_scores(engine, subject, seed):
    """LiRA, online (Carlini et al. 2022) on the shared reference models: each target and
    population record trained half of them (its membership label is never used); the target
    model is queried through its log-probabilities."""
    shared = subject.shared.reference
    score = _pool_attack(engine, subject, LiRAAttack(None))
    detail = f"{shared.n_models} reference models, each record IN for half"
    return Scores(score=score, detail=detail)


def rmia_scores(engine, subject, seed):
    """RMIA, online (Zarifzadeh et al. 2024) on the shared reference models: each target
    compared with every population record by the pairwise likelihood ratio."""
    shared = subject.shared.reference
    score = _pool_attack(engine, subject, RMIAAttack(None))
    detail = (
        f"{shared.n_models} reference models (IN and OUT), against "
        f"{len(shared.population)} population records, gamma = 1"
    )
    return Scores(score=score, detail=detail)


def rmia_offline_scores(engine, subject, seed):
    """RMIA, offline (Zarifzadeh et al. 2024) with one reference model trained on a random
    half of the population alone: every target is OUT of it, ``Pr(x)`` is its probability
    under the paper's linear correction, and the targets are compared with the population
    records it did not train on."""
    shared = subject.shared.reference
    attack = RMIAAttack(None, online=False)
    score = _pool_attack(engine, subject, attack)
    detail = (
        f"{shared.n_models} reference model on the population alone (OUT for every target), "
        f"a = {attack.offline_a}, gamma = 1"
    )
    return Scores(score=score, detail=detail)


def label_only_scores(engine, subject, seed):
    """Choquette-Choo et al.'s label-only attack (ICML 2021, §4 gap and §5 boundary
    distance by random noise): ``1[f(x) = y]`` plus the fraction of noisy copies of ``x``
    (0.25, 0.5 and 1 standard deviation of each input column, 16 copies each) still labelled
    ``y``. Only ``predict`` is called; the membership labels set the attack's cut
    (``offset_``) and nothing else, and the cut is not used: ``score_samples`` is the same
    whatever the membership labels, so every score is held out by construction."""
    columns = subject.inputs.columns
    frame = engine.inputs.targets
    records = np.column_stack([frame[columns].to_numpy(dtype=float), subject.inputs.index])
    target = IndexedClassifier(subject.inputs.model, columns)
    attack = LabelOnlyAttack(target, random_state=seed)
    attack.fit(records, engine.targets.membership)
    levels = ", ".join(f"{s:g}" for s in attack.noise)
    detail = (
        f"labels only: {attack.n_queries} noisy copies per record at {levels} standard "
        f"deviations ({len(records) * (1 + attack.n_queries * len(attack.noise))} queries)"
    )
    return Scores(score=attack.score_samples(records), detail=detail)
