"""BTTAttack / CBTTA / Take-the-Typical against the paper's closed forms and simulation."""

import itertools
import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.attacks import (
    BayesOptimalMIA,
    BTTAttack,
    TakeTheTypicalAttack,
    btta_expected_metrics,
)
from sklearn_mace.estimation import KDEAdvantageEstimator
from sklearn_mace.utils._testing import expected_failed_checks


@parametrize_with_checks(
    [BTTAttack(), TakeTheTypicalAttack()], expected_failed_checks=expected_failed_checks
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # random data: test acc > train acc
        check(estimator)


def _simulate(rng, n, q, p0, p1):
    """Records of Alg. 1's model: member ~ Bern(q), correct ~ Bern(p0 | member, p1 | not)."""
    member = (rng.random(n) < q).astype(int)
    correct = (rng.random(n) < np.where(member == 1, p0, p1)).astype(float)
    return correct[:, None], member


def _metrics(member, reported):
    accuracy = np.mean(member == reported)
    precision = member[reported == 1].mean() if reported.any() else np.nan
    recall = reported[member == 1].mean()
    return accuracy, precision, recall


# (q, p0, p1) covering Cases 1, 2 and 3 (Case 4 needs p1 > p0, tested below).
CASES = {
    1: (0.8, 0.9, 0.7),
    2: (0.2, 0.9, 0.7),
    3: (0.5, 0.95, 0.7),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_closed_forms_match_simulation(case, rng):
    q, p0, p1 = CASES[case]
    attack = BTTAttack.from_accuracies(p0, p1, prior=q)
    assert attack.case_ == case
    Q, member = _simulate(rng, 200_000, q, p0, p1)
    accuracy, precision, recall = _metrics(member, attack.predict(Q))
    # Binomial standard errors; 4 of them: a false alarm has probability < 1e-4 per number.
    n, n_members = member.size, member.sum()
    se_acc = np.sqrt(attack.expected_accuracy_ * (1 - attack.expected_accuracy_) / n)
    assert abs(accuracy - attack.expected_accuracy_) <= 4 * se_acc + 1e-12
    se_rec = np.sqrt(attack.expected_recall_ * (1 - attack.expected_recall_) / n_members)
    assert abs(recall - attack.expected_recall_) <= 4 * se_rec + 1e-12
    if case == 2:  # never reports member: precision is undefined, the sanctioned NaN
        assert np.isnan(attack.expected_precision_) and np.isnan(precision)
    else:
        n_reported = attack.predict(Q).sum()
        prec = attack.expected_precision_
        assert abs(precision - prec) <= 4 * np.sqrt(prec * (1 - prec) / n_reported) + 1e-12


def test_case_1_precision_is_q_not_one(rng):
    # The paper prints Case 1's precision as q / (q + (1 - q)) = 1; reporting everybody a
    # member is right for a fraction q of the records. Simulation decides.
    q, p0, p1 = CASES[1]
    attack = BTTAttack.from_accuracies(p0, p1, prior=q)
    Q, member = _simulate(rng, 100_000, q, p0, p1)
    assert attack.predict(Q).all()
    assert attack.expected_precision_ == pytest.approx(q)
    assert member.mean() == pytest.approx(q, abs=4 * np.sqrt(q * (1 - q) / member.size))


# BTTA Table 1 (q = 1/2): expected precision p0 / (p0 + p1), printed to three decimals.
TABLE_1 = [
    ("Adult", 0.848, 0.842, 0.502),
    ("MNIST", 0.984, 0.928, 0.515),
    ("Location", 1.0, 0.673, 0.598),
    ("Purchase(2)", 0.999, 0.984, 0.504),
    ("Purchase(10)", 0.999, 0.866, 0.536),
    ("Purchase(20)", 1.0, 0.781, 0.561),
    ("Purchase(50)", 1.0, 0.693, 0.591),
    ("Purchase(100)", 0.999, 0.659, 0.603),
    ("TX hosp. stay", 0.668, 0.517, 0.564),
]


@pytest.mark.parametrize(("dataset", "train", "test", "precision"), TABLE_1)
def test_table_1_precision(dataset, train, test, precision):
    attack = BTTAttack.from_accuracies(train, test, prior=0.5)
    assert attack.case_ == 3  # "necessarily true when q = 1/2 and training exceeds testing"
    assert attack.expected_precision_ == pytest.approx(precision, abs=5e-4)  # 3 decimals
    assert attack.expected_recall_ == pytest.approx(train)
    assert btta_expected_metrics(0.5, train, test)[2] == attack.expected_precision_


GRID = np.linspace(0.0, 1.0, 11)


def test_theorem_2_best_accuracy():
    # Theorem 2: max{q, 1-q, q p0 + (1-q)(1-p1)} >= max{q, 1-q, min(q,1-q)(1+g)} >= 1/2.
    # Theorem 1 (optimality) is checked by enumerating all four deterministic rules on the
    # correctness flag: none is more accurate.
    for q, p0, p1 in itertools.product(np.linspace(0.05, 0.95, 19), GRID, GRID):
        if p1 > p0:
            continue
        attack = BTTAttack.from_accuracies(p0, p1, prior=q)
        best = max(q, 1 - q, q * p0 + (1 - q) * (1 - p1))
        assert attack.expected_accuracy_ == pytest.approx(best, abs=1e-12)
        g = p0 - p1
        assert best >= max(q, 1 - q, min(q, 1 - q) * (1 + g)) - 1e-12
        assert best >= 0.5 - 1e-12
        assert attack.expected_accuracy_ >= attack.typical_accuracy_ - 1e-12  # Lemma 3
        rules = itertools.product([0, 1], repeat=2)  # report for (wrong, correct)
        enumerated = max(
            q * (p0 * correct + (1 - p0) * wrong)
            + (1 - q) * (p1 * (1 - correct) + (1 - p1) * (1 - wrong))
            for wrong, correct in rules
        )
        assert attack.expected_accuracy_ == pytest.approx(enumerated, abs=1e-12)
        # Lemma 2; its proof misses p0 = p1 = 1, q < 1/2 (both sides of the test are 0)
        assert attack.case_ != 4 or (p0 == p1 == 1 and q < 0.5)


def test_lemma_1_posterior():
    q, p0, p1 = 0.3, 0.97, 0.81
    attack = BTTAttack.from_accuracies(p0, p1, prior=q)
    proba = attack.predict_proba(np.array([[1.0], [0.0]]))[:, 1]
    assert proba[0] == pytest.approx(q * p0 / (q * p0 + (1 - q) * p1))
    assert proba[1] == pytest.approx(q * (1 - p0) / (q * (1 - p0) + (1 - q) * (1 - p1)))
    log_odds = attack.decision_function(np.array([[1.0]]))[0]
    assert log_odds == pytest.approx(np.log(proba[0] / (1 - proba[0])))


def _query(rng, n, n_classes=4):
    """Random query in the BTTA layout with a membership signal that differs per class."""
    member = rng.integers(0, 2, n)
    true = rng.integers(0, n_classes, n)
    p_correct = np.where(member == 1, 0.95, 0.6 + 0.08 * true)
    correct = (rng.random(n) < p_correct).astype(float)
    predicted = np.where(correct == 1, true, (true + 1) % n_classes)
    conf_true = np.clip(rng.beta(2 + 6 * member, 2, n), 0, 1)
    conf_pred = np.maximum(conf_true, rng.random(n) * 0.5 + 0.25)
    Q = np.column_stack([correct, true, predicted, conf_true, conf_pred])
    return Q, member


def test_fit_estimates_q_and_accuracies_by_hand():
    # Two categories by true label; counts chosen by hand.
    Q = np.array(
        [[1, 0], [1, 0], [0, 0], [1, 0], [0, 0], [1, 1], [1, 1], [0, 1], [0, 1], [0, 1]],
        dtype=float,
    )
    m = np.array([1, 1, 1, 0, 0, 1, 0, 1, 0, 0])
    attack = BTTAttack(partition="true_label").fit(Q, m)
    # label 0: members (c=1, 1, 0) -> p_train 2/3; non-members (1, 0) -> p_test 1/2; q 3/5
    # label 1: members (1, 0) -> 1/2; non-members (1, 0, 0) -> 1/3; q 2/5
    np.testing.assert_allclose(attack.category_priors_, [3 / 5, 2 / 5])
    L = attack.category_likelihoods_
    np.testing.assert_allclose(L[:, 1, 1] / L[:, 1].sum(axis=1), [2 / 3, 1 / 2])
    np.testing.assert_allclose(L[:, 0, 1] / L[:, 0].sum(axis=1), [1 / 2, 1 / 3])
    np.testing.assert_array_equal(attack.category_counts_[0], [[1, 1], [1, 2]])
    # Alg. 1 in label 0: correct 3/5*2/3 = .4 >= 2/5*1/2 = .2 -> member;
    # wrong 3/5*1/3 = .2 >= 2/5*1/2 = .2 -> member (tie, >=).
    # label 1: correct .4*.5 = .2 >= .6/3 = .2 -> member (tie); wrong .2 < .6*2/3 -> non.
    np.testing.assert_array_equal(attack.category_reports_member_, [[True, True], [False, True]])
    np.testing.assert_array_equal(attack.predict(Q[[0, 2, 5, 7]]), [1, 1, 1, 0])
    np.testing.assert_allclose(attack.predict_proba(Q[[2, 5]])[:, 1], 0.5)  # the ties
    # the flag may come as booleans, or as any numbers read as ">= 0.5 means correct"
    as_bool = BTTAttack(partition="true_label").fit(np.column_stack([Q[:, 0] == 1, Q[:, 1]]), m)
    np.testing.assert_array_equal(as_bool.category_counts_, attack.category_counts_)
    shifted = np.column_stack([0.2 + 0.6 * Q[:, 0], Q[:, 1]])  # 0.2 / 0.8
    np.testing.assert_array_equal(attack.predict(shifted), attack.predict(Q))


def test_prior_reweights_category_priors(rng):
    Q, m = _query(rng, 4000)
    balanced = BTTAttack(partition="true_label").fit(Q, m)
    skewed = BTTAttack(partition="true_label", prior=0.1).fit(Q, m)
    # q_i at prior p: p r_i / (p r_i + (1-p) s_i), r_i, s_i the category frequencies.
    r = balanced.category_likelihoods_[:, 1].sum(axis=1)
    s = balanced.category_likelihoods_[:, 0].sum(axis=1)
    np.testing.assert_allclose(skewed.category_priors_, 0.1 * r / (0.1 * r + 0.9 * s))
    assert skewed.prior_ == 0.1


PARTITIONS = [
    "true_label",
    "predicted_label",
    "true_label_confidence",
    "predicted_label_confidence",
    ["true_label", "true_label_confidence"],
    ["predicted_label", "predicted_label_confidence"],
    lambda Q: Q[:, 1] % 2,
]


@pytest.mark.parametrize("partition", PARTITIONS)
@pytest.mark.parametrize("seed", range(3))
def test_categorical_never_worse_than_btta(partition, seed):
    # Theorem 3 / the paper's remark: the cell-wise Bayes rule is at least as accurate in
    # expectation as the rule on the coarser partition. Both are evaluated on the same
    # fitted statistics, so the inequality must hold exactly.
    rng = np.random.default_rng(seed)
    Q, m = _query(rng, 1500)
    plain = BTTAttack().fit(Q, m)
    categorical = BTTAttack(partition=partition, n_classes=4).fit(Q, m)
    assert categorical.expected_accuracy_ >= plain.expected_accuracy_ - 1e-12
    # and its expected accuracy is what it scores on the very data it was fitted on
    in_sample = np.mean(categorical.predict(Q) == m)
    assert categorical.expected_accuracy_ == pytest.approx(in_sample, abs=1e-12)


def test_nested_partition_never_worse(rng):
    # "if all categories of CA1 are a subset of some category of CA2, the accuracy of CA1
    # is no less than that of CA2": PTL ∩ PTC refines PTC.
    Q, m = _query(rng, 3000)
    coarse = BTTAttack(partition="true_label_confidence").fit(Q, m)
    fine = BTTAttack(partition=["true_label", "true_label_confidence"]).fit(Q, m)
    assert fine.expected_accuracy_ >= coarse.expected_accuracy_ - 1e-12


def test_categorical_expected_accuracy_matches_simulation(rng):
    # Ground truth: three categories with known (d_i, q_i, p_i^train, p_i^test); the CBTTA
    # fitted on a large sample must reach the Bayes accuracy computed from the parameters.
    d = np.array([0.5, 0.3, 0.2])
    q = np.array([0.5, 0.7, 0.3])
    p_train = np.array([0.99, 0.8, 0.9])
    p_test = np.array([0.7, 0.85, 0.5])
    exact = sum(
        d[i]
        * (
            max(q[i] * p_train[i], (1 - q[i]) * p_test[i])
            + max(q[i] * (1 - p_train[i]), (1 - q[i]) * (1 - p_test[i]))
        )
        for i in range(3)
    )

    def draw(n):
        cat = rng.choice(3, size=n, p=d)
        member = (rng.random(n) < q[cat]).astype(int)
        correct = rng.random(n) < np.where(member == 1, p_train[cat], p_test[cat])
        return np.column_stack([correct, cat]).astype(float), member

    attack = BTTAttack(partition="true_label").fit(*draw(100_000))
    Q, member = draw(100_000)
    accuracy = np.mean(attack.predict(Q) == member)
    # 4 binomial standard errors (~0.006); the fitted rule equals the true rule here because
    # no cell is within sampling error of a tie.
    assert abs(accuracy - exact) <= 4 * np.sqrt(exact * (1 - exact) / member.size)
    # expected_accuracy_ is the plug-in sum of the fitted cell masses: with the true rule it
    # is the in-sample accuracy, binomial with the same standard error (over 200 seeds its
    # deviation had s.d. 1.00 SE, mean 0.04 SE, max 3.2 SE): 4 standard errors, not 0.01.
    assert abs(attack.expected_accuracy_ - exact) <= 4 * np.sqrt(exact * (1 - exact) / 100_000)


def test_confidence_bins():
    attack = BTTAttack(partition="predicted_label_confidence", n_bins=3, n_classes=4)
    # PPC bins on [1/4, 1]: width 1/4 -> [.25, .5), [.5, .75), [.75, 1]
    conf = np.array([0.25, 0.49, 0.5, 0.74, 0.75, 1.0, 0.1])
    np.testing.assert_array_equal(
        attack._confidence_bin(conf, "predicted_label_confidence"), [0, 0, 1, 1, 2, 2, 0]
    )
    ptc = BTTAttack(partition="true_label_confidence", n_bins=10)
    np.testing.assert_array_equal(
        ptc._confidence_bin(np.array([0.0, 0.05, 0.1, 0.95, 1.0]), "true_label_confidence"),
        [0, 0, 1, 9, 9],
    )


def test_degenerate_category_falls_back_to_typical():
    # category 1 holds only non-members: q_1 = 0, reported non-member whatever the flag.
    Q = np.array([[1, 0], [0, 0], [1, 0], [0, 0], [1, 1], [0, 1]], dtype=float)
    m = np.array([1, 1, 0, 0, 0, 0])
    attack = BTTAttack(partition="true_label").fit(Q, m)
    np.testing.assert_array_equal(attack.degenerate_categories_, [1])
    assert attack.category_priors_[1] == 0
    np.testing.assert_array_equal(attack.predict([[1, 1], [0, 1]]), [0, 0])


def test_unseen_category_uses_unpartitioned_btta(rng):
    Q, m = _query(rng, 2000)
    attack = BTTAttack(partition="true_label").fit(Q, m)
    plain = BTTAttack().fit(Q, m)
    unseen = np.array([[1, 99, 0, 0.5, 0.5], [0, 99, 0, 0.5, 0.5]])
    np.testing.assert_array_equal(attack.predict(unseen), plain.predict(unseen))
    np.testing.assert_allclose(attack.predict_proba(unseen), plain.predict_proba(unseen))


def test_ties_are_members_with_a_positive_decision():
    # q·p0 = (1−q)·p1 and q(1−p0) = (1−q)(1−p1): both cells tie, posterior exactly 1/2, and
    # Alg. 1 (>=) reports member; the decision function must then be positive, not 0.
    attack = BTTAttack.from_accuracies(0.8, 0.8, prior=0.5)
    Q = np.array([[1.0], [0.0]])
    np.testing.assert_array_equal(attack.predict_proba(Q), [[0.5, 0.5], [0.5, 0.5]])
    np.testing.assert_array_equal(attack.predict(Q), [1, 1])
    assert np.all(attack.decision_function(Q) > 0)
    # just off the tie, the sign follows the posterior on both sides
    below = BTTAttack.from_accuracies(0.8, 0.8, prior=0.49)
    assert np.all(below.decision_function(Q) < 0) and not below.predict(Q).any()
    typical = TakeTheTypicalAttack(prior=0.5).fit(Q, [1, 0])
    assert np.all(typical.decision_function(Q) > 0) and typical.predict(Q).all()


def test_take_the_typical(rng):
    Q, m = _simulate(rng, 1000, 0.3, 0.9, 0.8)
    typical = TakeTheTypicalAttack().fit(Q, m)
    assert typical.prior_ == pytest.approx(m.mean())
    assert not typical.predict(Q).any()
    assert typical.expected_accuracy_ == pytest.approx(1 - m.mean())
    assert TakeTheTypicalAttack(prior=0.5).fit(Q, m).predict(Q[:3]).tolist() == [1, 1, 1]
    assert BTTAttack().fit(Q, m).expected_accuracy_ >= typical.expected_accuracy_


# ---------------------------------------------------------------- bad input
def test_test_accuracy_above_train_warns_and_applies_bayes():
    with pytest.warns(UserWarning, match="test accuracy"):
        attack = BTTAttack.from_accuracies(0.6, 0.9, prior=0.5)
    assert attack.case_ == 4  # misclassified records are the likelier members
    np.testing.assert_array_equal(attack.predict([[1], [0]]), [0, 1])
    assert attack.expected_accuracy_ == pytest.approx(0.5 * 0.4 + 0.5 * 0.9)
    Q = np.array([[0.0]] * 6 + [[1.0]] * 4)
    with pytest.warns(UserWarning, match="test accuracy"):
        BTTAttack().fit(Q, [1, 1, 1, 0, 0, 0, 0, 0, 1, 0])


@pytest.mark.parametrize("prior", [0.0, 1.0, -0.2, 1.5])
def test_prior_outside_unit_interval(prior):
    with pytest.raises(ValueError, match="prior"):
        BTTAttack(prior=prior).fit([[1], [0]], [1, 0])
    with pytest.raises(ValueError, match="prior"):
        BTTAttack.from_accuracies(0.9, 0.8, prior=prior)


@pytest.mark.parametrize(("train", "test", "name"), [(1.2, 0.5, "train"), (0.9, -0.1, "test")])
def test_accuracy_outside_unit_interval(train, test, name):
    with pytest.raises(ValueError, match=f"{name}_accuracy"):
        BTTAttack.from_accuracies(train, test)


def test_query_too_narrow_for_partition():
    with pytest.raises(ValueError, match="needs 4 query columns"):
        BTTAttack(partition="true_label_confidence").fit([[1, 0], [0, 1]], [1, 0])
    attack = BTTAttack.from_accuracies(0.9, 0.7)
    with pytest.raises(ValueError, match="1 features"):
        attack.predict([[1, 0]])


@pytest.mark.parametrize(
    ("partition", "error", "match"),
    [
        ("label", ValueError, "partition"),
        (["true_label", "nonsense"], ValueError, "partition entries"),
        (["true_label", "true_label"], ValueError, "twice"),
        ([], ValueError, "empty"),
        (lambda Q: Q[:3, 0], ValueError, "one category key per row"),
        (lambda Q: np.array(["a"] * Q.shape[0]), TypeError, "numeric"),
    ],
)
def test_bad_partition(partition, error, match):
    with pytest.raises(error, match=match):
        BTTAttack(partition=partition).fit(np.ones((4, 5)), [1, 0, 1, 0])


# ---------------------------------------------------------------- cross-check with MACE
@pytest.mark.parametrize("partition", [None, "true_label"])
def test_agrees_with_bayes_optimal_histogram_attack(partition, rng):
    # On the discrete query (correctness flag, and the category for CBTTA) BTTA *is* the
    # Bayes-optimal rule of MACE Lemma 1 with histogram densities (Theorems 1 and 3): the
    # same posterior in every cell and the same report. A cross-check of both estimators.
    Q, m = _query(rng, 3000)
    columns = [0] if partition is None else [0, 1]
    btta = BTTAttack(partition=partition, prior=0.3).fit(Q, m)
    mace = BayesOptimalMIA(density="histogram", bins="discrete", prior=0.3).fit(Q[:, columns], m)
    Q_new, _ = _query(rng, 2000)
    posterior = btta.predict_proba(Q_new)[:, 1]
    assert np.all(np.abs(posterior - 0.5) > 1e-9)  # no ties, where >= and > could differ
    np.testing.assert_allclose(mace.predict_proba(Q_new[:, columns])[:, 1], posterior)
    np.testing.assert_array_equal(mace.predict(Q_new[:, columns]), btta.predict(Q_new))
    # MACE Thm 5: W_N = sum |p r - (1-p) q| over the cells = 2 * (Bayes accuracy) - 1,
    # the advantage of (C)BTTA's expected accuracy under the same fitted statistics.
    w_n = KDEAdvantageEstimator(discrete=True, prior=0.3).fit(Q[:, columns], m).advantage_estimate_
    assert w_n == pytest.approx(2 * btta.expected_accuracy_ - 1, abs=1e-12)


def test_grid_search_ranks_partitions_by_advantage(rng):
    from sklearn.model_selection import GridSearchCV

    Q, m = _query(rng, 2000)
    search = GridSearchCV(
        BTTAttack(), {"partition": [None, "true_label_confidence"], "n_bins": [2, 10]}, cv=3
    ).fit(Q, m)
    # the confidence carries the membership signal (_query draws it from Beta(8, 2) for
    # members, Beta(2, 2) otherwise): any confidence partition beats plain BTTA
    assert search.best_params_["partition"] == "true_label_confidence"
    assert search.best_score_ == pytest.approx(search.best_estimator_.score(Q, m), abs=0.05)
