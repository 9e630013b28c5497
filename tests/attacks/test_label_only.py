"""LabelOnlyAttack: the closed form on a linear boundary, leakage from labels, null models."""

import warnings

import numpy as np
import pytest
from scipy.stats import binom
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace import LabelOnlyAttack
from sklearn_mace.attacks import RecordViews
from sklearn_mace.attacks._label_only import linear_robustness
from sklearn_mace.metrics import audit_epsilon
from sklearn_mace.report._kinds.model._demo import LABEL, demo_recipes, make_model_demo_tables
from sklearn_mace.utils._testing import expected_failed_checks


class RowMean(TransformerMixin, BaseEstimator):
    """The mean of each row (a named class: its repr, hence the test ids, is fixed)."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return np.asarray(X, dtype=float).mean(axis=1, keepdims=True)


def _any_width_target():
    """A fitted target that accepts records of any width (the check suite varies it)."""
    X = np.random.default_rng(0).normal(size=(60, 1))
    return make_pipeline(RowMean(), GaussianNB()).fit(X, X[:, 0] > 0)


@parametrize_with_checks(
    [
        LabelOnlyAttack(_any_width_target(), n_queries=2),
        LabelOnlyAttack(_any_width_target(), noise=0.5, n_queries=2, prior=0.3),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # labels unknown to the target
        check(estimator)


def test_score_is_the_linear_closed_form():
    # A linear boundary w.x + b = 0: the noise s * scale ⊙ e crosses it with standard
    # deviation s * ||w ⊙ scale||, so a correctly labelled record keeps its label with
    # probability Phi(margin / (s ||w ⊙ scale||)), margin = |w.x + b|. 2 000 queries per
    # level: binomial standard error <= 0.011 per level; tolerance 0.05.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2)) * [1.0, 3.0]
    y = (X @ [1.0, 0.5] + 0.2 * rng.normal(size=400) > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    records = np.column_stack([X, y])
    attack = LabelOnlyAttack(model, noise=(0.25, 1.0), n_queries=2000).fit(
        records, np.arange(400) < 200
    )
    np.testing.assert_allclose(attack.scale_, X.std(axis=0))
    w, b = model.coef_[0], model.intercept_[0]
    rows = records[:25]
    margin = (rows[:, :-1] @ w + b) * np.where(rows[:, -1] == 1, 1, -1)
    spread = np.linalg.norm(w * attack.scale_)
    correct = (margin > 0).astype(float)
    robust = np.mean([linear_robustness(margin, s * spread) for s in (0.25, 1.0)], axis=0)
    np.testing.assert_allclose(attack.score_samples(rows), correct + robust, atol=0.05)


def test_same_record_same_score_in_any_batch():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(int)
    model = DecisionTreeClassifier(random_state=0).fit(X[:50], y[:50])
    records = np.column_stack([X, y])
    attack = LabelOnlyAttack(model).fit(records, np.arange(100) < 50)
    whole = attack.score_samples(records)
    np.testing.assert_array_equal(attack.score_samples(records[::-1])[::-1], whole)
    np.testing.assert_array_equal(attack.score_samples(records[7:9]), whole[7:9])
    kept = clone(attack)
    assert kept.target is model  # the fitted target is kept, never refitted


def test_predict_follows_the_cut():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    member = np.arange(200) < 100
    model = DecisionTreeClassifier(random_state=0).fit(X[member], y[member])
    records = np.column_stack([X, y])
    attack = LabelOnlyAttack(model, member_label="in")
    attack.fit(records, np.where(member, "in", "out"))
    decision = attack.decision_function(records)
    np.testing.assert_array_equal(attack.predict(records) == "in", decision > 0)
    assert not hasattr(attack, "predict_proba")


def test_views_average_the_augmented_scores():
    X = np.random.default_rng(3).random((60, 4))
    y = (X[:, 0] > 0.5).astype(int)
    model = DecisionTreeClassifier(random_state=0).fit(X[:30], y[:30])
    records = np.column_stack([X, y])
    member = np.arange(60) < 30
    views = RecordViews("image", n_views=3, image_shape=(2, 2), flip=False)
    attack = LabelOnlyAttack(model, views=views).fit(records, member)
    alone = LabelOnlyAttack(model).fit(records, member)
    stacked = attack.views_.transform(records)
    expected = np.mean([alone.score_samples(v) for v in stacked], axis=0)
    np.testing.assert_allclose(attack.score_samples(records), expected)


def test_bad_input():
    model = DecisionTreeClassifier().fit([[0.0], [1.0]], [0, 1])
    records = np.column_stack([np.arange(10.0), np.arange(10) % 2])
    with pytest.raises(ValueError, match="noise must be a positive"):
        LabelOnlyAttack(model, noise=(0.5, -1.0)).fit(records, np.arange(10) < 5)
    with pytest.raises(ValueError, match="at least 2"):
        LabelOnlyAttack(model).fit(records[:, :1], np.arange(10) < 5)


# ----------------------------------------------------------------------------- leakage
def test_certifies_the_model_demo_forest_from_labels_alone():
    # the overfit forest of `sklearn-mace audit-model`'s demo, queried for labels only. The
    # cut of the attack is fitted on a quarter of the targets; the certificate uses the
    # other 600 records' scores (audit_epsilon splits them again: threshold on one half,
    # bound on the other). Measured: epsilon >= 1.03 (seed 0; 0.25 and 0.34 with the demo
    # at seeds 1 and 2; the regularised model of the demo: 0 at all three).
    members, hold_out, _ = make_model_demo_tables(0)
    forest, _ = demo_recipes(0)
    X = members.drop(columns=LABEL).to_numpy(float)
    forest.fit(X, members[LABEL])
    records = np.vstack(
        [
            np.column_stack([X, members[LABEL]]),
            np.column_stack([hold_out.drop(columns=LABEL).to_numpy(float), hold_out[LABEL]]),
        ]
    )
    member = np.arange(len(records)) < len(members)
    fit_rows = np.random.default_rng(0).random(len(records)) < 0.25
    attack = LabelOnlyAttack(forest).fit(records[fit_rows], member[fit_rows])
    scores = attack.decision_function(records[~fit_rows])
    held = member[~fit_rows]
    audit = audit_epsilon(scores[held], scores[~held], random_state=0)
    assert audit.epsilon_lower_bound > 0.5


def _null_card(seed, n_features, tails):
    """One null audit: the target never trained on any target record, so members and
    non-members are exchangeable for it; True when the audit certifies epsilon > 0."""
    rng = np.random.default_rng(seed)
    n = 400

    def draw(k):
        if tails == "student-t":
            return rng.standard_t(1.5, size=(k, n_features))
        return rng.lognormal(0.0, 1.0, size=(k, n_features))  # skewed

    train, targets = draw(n), draw(n)
    label = lambda Z: Z[:, 0] - np.median(train[:, 0]) + rng.normal(size=len(Z)) > 0  # noqa: E731
    model = RandomForestClassifier(20, random_state=seed) if seed % 2 else LogisticRegression()
    model.fit(train, label(train))
    records = np.column_stack([targets, label(targets)])
    member = rng.permutation(np.arange(n) < n // 2)
    attack = LabelOnlyAttack(model, n_queries=8).fit(records[: n // 4], member[: n // 4])
    scores = attack.decision_function(records[n // 4 :])
    held = member[n // 4 :]
    audit = audit_epsilon(scores[held], scores[~held], random_state=seed)
    return audit.epsilon_lower_bound > 0


def _claims_at_most_alpha(n_cards):
    cases = [(d, t) for d in (2, 8) for t in ("student-t", "lognormal")]
    claims = sum(_null_card(seed, *cases[seed % len(cases)]) for seed in range(n_cards))
    # each card claims with probability <= alpha = 0.05; fail only above the 99.9 %
    # quantile of Binomial(n_cards, 0.05), so a correct attack fails this test < 0.1 %
    assert claims <= binom.ppf(0.999, n_cards, 0.05), claims


def test_null_models_certify_nothing():
    _claims_at_most_alpha(24)


@pytest.mark.slow
def test_null_models_certify_nothing_slow():
    _claims_at_most_alpha(120)
