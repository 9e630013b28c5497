"""The model audit's attacks, each scoring every target without having been fitted on it.

* BTTA from the generalization gap (Bentley et al. 2021, Alg. 1: the correctness flag with
  the train and test accuracy) and CBTTA with its best partition (Thm 3; the partition is
  chosen by an inner cross-validation) — both cross-fitted, so the scores are held out;
* with a ``population`` table, the shadow-model attack (Shokri et al. 2017) through
  :class:`~sklearn_mace.attacks.ShadowModels` and LiRA (Carlini et al. 2022,
  :class:`~sklearn_mace.attacks.LiRAAttack`), whose shadows never see a membership label.
"""

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_predict
from sklearn.neural_network import MLPClassifier

from ..attacks import BTTAttack, LiRAAttack, ShadowModelAttack, ShadowModels
from ._engine import Scores
from ._model_io import IndexedClassifier

__all__ = ["btta_scores", "cbtta_scores", "lira_scores", "shadow_scores"]

N_FOLDS = 5
CBTTA_PARTITIONS = (
    "true_label",
    "predicted_label",
    "true_label_confidence",
    "predicted_label_confidence",
    ("predicted_label", "predicted_label_confidence"),
)
LIRA_SHADOWS = 16  # Carlini et al.'s online LiRA is close to its best from 16 shadows (Fig. 9)
# BTTAttack warns when the test accuracy exceeds the training accuracy; Bayes' rule applies
_TEST_ABOVE_TRAIN = r"The test accuracy .* exceeds the training accuracy"


def _btta_inputs(engine, subject):
    return subject.inputs["queries"].to_numpy()[:, :5], engine.targets.membership


def btta_scores(engine, subject, seed):
    """Held-out log posterior odds of BTTA (correctness flag, train and test accuracy)."""
    Q, m = _btta_inputs(engine, subject)
    folds = StratifiedKFold(N_FOLDS, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", _TEST_ABOVE_TRAIN, UserWarning)
        score = cross_val_predict(
            BTTAttack(prior=engine.targets.prior), Q[:, :1], m, cv=folds, method="decision_function"
        )
    accuracy = subject.inputs["accuracy"]
    detail = f"train accuracy {accuracy[0]:.3f}, test {accuracy[1]:.3f}"
    return Scores(score=score, detail=detail)


def cbtta_scores(engine, subject, seed):
    """Held-out log posterior odds of CBTTA, its partition chosen by an inner 3-fold CV."""
    Q, m = _btta_inputs(engine, subject)
    grid = GridSearchCV(
        BTTAttack(prior=engine.targets.prior, n_classes=subject.inputs["n_classes"]),
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


def shadow_scores(engine, subject, seed):
    """Shokri et al.'s attack: shadows on the population, one attack model per class."""
    population, pop_index = engine.inputs["population"], subject.inputs["population_index"]
    n_classes, keep = subject.inputs["n_classes"], subject.inputs["population_index"] >= 0
    n_members = int(engine.targets.membership.sum())
    n_shadow = int(np.clip(len(population) // (2 * n_members), 2, 8))
    shadows = ShadowModels(
        clone(subject.inputs["recipe"]),
        n_shadow=n_shadow,
        outputs=("true_label", "proba"),
        n_jobs=engine.n_jobs,
        random_state=seed,
        verbose=0,
    )
    X_pop = population[subject.inputs["columns"]].to_numpy(dtype=float)
    with warnings.catch_warnings():  # the attack MLPs stop at max_iter on tiny classes
        warnings.simplefilter("ignore", ConvergenceWarning)
        Qs, ms = shadows.fit_queries(X_pop[keep], pop_index[keep])
        if Qs.shape[1] != 1 + n_classes:
            raise ValueError(f"a shadow model saw {Qs.shape[1] - 1} of the {n_classes} classes")
        # Shokri's per-class attack network (two layers of 50, as in the BTTA replication),
        # stopped at 200 epochs: a class has only ~100 shadow records
        net = MLPClassifier((50, 50), max_iter=200, random_state=seed)
        attack = ShadowModelAttack(net).fit(Qs, ms)
    queries = subject.inputs["queries"]
    proba = np.exp(queries[[f"log_proba_{j}" for j in range(n_classes)]].to_numpy())
    X = np.column_stack([queries["true_label"].to_numpy(), proba])
    return Scores(score=attack.decision_function(X), detail=f"{n_shadow} shadow models")


def lira_scores(engine, subject, seed):
    """LiRA, online (Carlini et al. 2022): the targets and the population form the shadows'
    pool, each record training half of the ``LIRA_SHADOWS`` shadows (its membership label
    is never used to train them); the target model is queried through its log-probabilities.
    """
    columns = subject.inputs["columns"]

    def records(frame, index):
        return np.column_stack([frame[columns].to_numpy(dtype=float), index])

    targets = records(engine.inputs["targets"], subject.inputs["index"])
    keep = subject.inputs["population_index"] >= 0
    population = engine.inputs["population"][keep]
    attack = LiRAAttack(
        IndexedClassifier(subject.inputs["model"], columns),
        clone(subject.inputs["recipe"]),
        n_shadow=LIRA_SHADOWS,
        n_jobs=engine.n_jobs,
        random_state=seed,
        verbose=0,
    ).fit(
        targets,
        engine.targets.membership,
        population=records(population, subject.inputs["population_index"][keep]),
    )
    detail = f"{LIRA_SHADOWS} shadow models, each record IN for half"
    return Scores(score=attack.decision_function(targets), detail=detail)
