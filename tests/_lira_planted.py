"""A planted membership problem whose Neyman–Pearson test is known in closed form (for LiRA).

Record ``i`` (its id in feature column 0) has a difficulty ``a_i ~ N(0, spread^2)``. A model
"trained" on a set of ids has logit-scaled confidence ``phi_i = a_i + delta * [i trained]
+ noise * z_i`` on record ``i``, with ``z_i ~ N(0, 1)`` drawn afresh for every model. Given the
record, IN and OUT are ``N(a_i + delta, noise^2)`` and ``N(a_i, noise^2)``: the likelihood
ratio is increasing in ``phi_i - a_i`` alone, so thresholding ``phi_i - a_i`` is the
Neyman–Pearson test of the pooled problem, with ``TPR(alpha) = Phi(delta / noise - z_{1-alpha})``.
A global threshold on ``phi`` ignores ``a_i`` and does far worse: LiRA's per-record Gaussians
are what must recover the optimum.
"""

import numpy as np
from scipy.special import expit
from scipy.stats import norm
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state


class PlantedModel(ClassifierMixin, BaseEstimator):
    """The planted 'model': classes [0, 1], true label 1, confidence as in the module doc."""

    def __init__(self, difficulty, *, delta=2.0, noise=1.0, random_state=None):
        self.difficulty = difficulty
        self.delta = delta
        self.noise = noise
        self.random_state = random_state

    def fit(self, X, y):
        ids = np.asarray(X)[:, 0].astype(int)
        self.trained_ = np.zeros(len(self.difficulty), dtype=bool)
        self.trained_[ids] = True
        self.z_ = check_random_state(self.random_state).normal(size=len(self.difficulty))
        self.classes_ = np.array([0, 1])
        return self

    def logit(self, X):
        ids = np.asarray(X)[:, 0].astype(int)
        return self.difficulty[ids] + self.delta * self.trained_[ids] + self.noise * self.z_[ids]

    def predict_proba(self, X):
        phi = self.logit(X)
        return np.column_stack([expit(-phi), expit(phi)])  # both sides exact in the tails


def planted_problem(n_records, *, spread=3.0, delta=2.0, noise=1.0, location=0.0, seed=0):
    """(records, member, target, oracle scores) with a target trained on a random half.

    ``location`` shifts every difficulty: far below 0, ``p_y = expit(phi)`` is ``exp(phi)``
    to first order, the regime where RMIA's probability ratio is the planted likelihood ratio.
    """
    rng = np.random.default_rng(seed)
    difficulty = location + rng.normal(scale=spread, size=n_records)
    records = np.column_stack([np.arange(n_records), np.ones(n_records)])
    member = rng.random(n_records) < 0.5
    target = PlantedModel(difficulty, delta=delta, noise=noise, random_state=seed + 1)
    target.fit(records[member, :1], np.ones(member.sum()))
    oracle = target.logit(records) - difficulty  # phi - a_i: the Neyman–Pearson statistic
    return records, member, target, oracle


def neyman_pearson_tpr(fpr, *, delta=2.0, noise=1.0):
    """TPR of the optimal test at false-positive rate ``fpr``."""
    return float(norm.cdf(delta / noise - norm.ppf(1 - fpr)))


def planted_target(difficulty, records, *, delta=2.0, noise=1.0, seed=0):
    """Another target on the same records: (target, member, oracle scores)."""
    rng = np.random.default_rng(seed)
    member = rng.random(len(records)) < 0.5
    target = PlantedModel(difficulty, delta=delta, noise=noise, random_state=seed + 1)
    target.fit(records[member, :1], np.ones(member.sum()))
    return target, member, target.logit(records) - difficulty
