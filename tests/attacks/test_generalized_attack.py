"""GeneralizedMetricAttack against closed forms (MACE Lemma 2, Alg. 2–3, Eq. 20)."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace import GeneralizedMetricAttack
from sklearn_mace.metrics import (
    GeneralizedMetric,
    generalized_metric_scorer,
    get_scorer,
    membership_advantage,
)
from sklearn_mace.utils._testing import expected_failed_checks


def two_gaussians(rng, n_members, n_nonmembers, shift=1.0):
    Q = np.r_[rng.normal(shift, 1, (n_members, 1)), rng.normal(0, 1, (n_nonmembers, 1))]
    return Q, np.r_[np.ones(n_members, int), np.zeros(n_nonmembers, int)]


def best_f1_two_gaussians(prior, shift):
    """sup_c F1 of the rule x > c: 2TP / (2TP + FP + FN), TP = p(1 − Φ(c − δ)), ..."""

    def f1(c):
        tp = prior * norm.sf(c - shift)
        fp = (1 - prior) * norm.sf(c)
        fn = prior * norm.cdf(c - shift)
        return 2 * tp / (2 * tp + fp + fn)

    return -minimize_scalar(lambda c: -f1(c), bounds=(-5, 5), method="bounded").fun


@parametrize_with_checks(
    [GeneralizedMetricAttack(random_state=0)], expected_failed_checks=expected_failed_checks
)
def test_estimator_checks(estimator, check):
    check(estimator)


def test_alg2_am_attains_the_optimal_balanced_accuracy(rng):
    # Lemma 2: t_AM = p; η > p ⟺ r > q ⟺ x > δ/2, so AM* = Φ(δ/2) = 0.6915 for δ = 1 at
    # any prior. Experiment 2 with p = 0.2, N = 20 000: the evaluation half has 2 000
    # members, so Eq. 20's SD ≈ 0.006; 0.025 also covers η̂'s small suboptimality.
    Q, m = two_gaussians(rng, 4000, 16_000)
    attack = GeneralizedMetricAttack(metric="am", random_state=0).fit(Q, m)
    assert attack.algorithm_ == 2 and attack.threshold_ == pytest.approx(0.2)
    assert attack.metric_value_ == pytest.approx(norm.cdf(0.5), abs=0.025)


def test_alg2_any_classifier_and_prior_decoupling(rng):
    # Logistic regression is well specified for a Gaussian shift; fitted on a balanced
    # sample but asked about p = 0.1, its log odds are shifted by logit(0.1), and the AM
    # rule η > 0.1 is still x > δ/2, so the advantage is still Φ(δ/2).
    Q, m = two_gaussians(rng, 10_000, 10_000)
    attack = GeneralizedMetricAttack(
        metric="am", estimator=LogisticRegression(), prior=0.1, random_state=0
    ).fit(Q, m)
    assert attack.threshold_ == pytest.approx(0.1)
    assert attack.metric_value_ == pytest.approx(norm.cdf(0.5), abs=0.025)
    # The posterior at p = 0.1 for x = δ/2 (where r = q) is p itself. Logistic regression on
    # 10 000 rows gets the log odds there within ~0.05 (SE of its intercept ~0.02), which
    # moves η by η(1 − η)·0.05 < 0.005: 0.02 is 4 times that.
    assert attack.predict_proba([[0.5]])[0, 1] == pytest.approx(0.1, abs=0.02)


def test_alg3_f1_attains_the_best_f1(rng):
    # F1 has no closed-form t_ℓ (Lemma 2 does not apply), so Alg. 3 searches it on a second
    # split. Truth: sup_c F1(x > c) by 1-D optimisation. N = 30 000 (10 000 per split):
    # Eq. 20's SD ≈ 0.008, plus the threshold search's error; tol 0.03.
    Q, m = two_gaussians(rng, 9000, 21_000, shift=1.5)
    attack = GeneralizedMetricAttack(metric="f1", random_state=0).fit(Q, m)
    assert attack.algorithm_ == 3
    assert attack.metric_value_ == pytest.approx(best_f1_two_gaussians(0.3, 1.5), abs=0.03)
    # The searched threshold is the posterior at the optimal cut (any η in (0, 1)).
    assert 0 < attack.threshold_ < 1


def test_search_forced_for_am_finds_lemma_2_value(rng):
    # threshold="search" runs Alg. 3 even when t_ℓ is known: it must find an AM as good.
    # 4 000 rows per split: over 8 seeds AM − Φ(1/2) was 0.002 ± 0.008, so 0.03 is > 3.5 SD.
    Q, m = two_gaussians(rng, 6000, 6000)
    attack = GeneralizedMetricAttack(metric="am", threshold="search", random_state=0).fit(Q, m)
    assert attack.algorithm_ == 3
    assert attack.metric_value_ == pytest.approx(norm.cdf(0.5), abs=0.03)


def test_explicit_threshold_and_custom_metric(rng):
    # A GeneralizedMetric instance with accuracy's coefficients and t = 1/2 at p = 0.5:
    # accuracy of x > δ/2 is Φ(δ/2) as well. Evaluated on 6 000 rows: SD 0.006 (binomial),
    # 0.009 with η̂'s error (8 seeds, largest deviation 0.017), so 0.03 is > 3 SD.
    Q, m = two_gaussians(rng, 6000, 6000)
    metric = GeneralizedMetric(a11=1, a00=1, b11=1, b10=1, b01=1, b00=1)
    attack = GeneralizedMetricAttack(metric=metric, threshold=0.5, random_state=0).fit(Q, m)
    assert attack.algorithm_ == 2 and attack.threshold_ == 0.5
    assert attack.metric_value_ == pytest.approx(norm.cdf(0.5), abs=0.03)


def test_decision_function_sign_matches_predict_off_one_half(rng):
    Q, m = two_gaussians(rng, 500, 1500)
    attack = GeneralizedMetricAttack(metric="am", random_state=0).fit(Q, m)
    grid = np.linspace(-3, 4, 71)[:, None]
    np.testing.assert_array_equal(attack.decision_function(grid) > 0, attack.predict(grid) == 1)
    np.testing.assert_array_equal(attack.predict(grid), attack.predict_proba(grid)[:, 1] > 0.25)
    # Experiment 2 sample (N₁ = pN): the Eq. 20 scorer is exactly Eq. 20 ...
    eq20 = attack.metric_.empirical_measure(m, attack.predict(Q), attack.prior_)
    assert get_scorer("generalized_am")(attack, Q, m) == pytest.approx(eq20)
    # ... and score is the membership advantage at prior_, as for every attacker (for AM at
    # the sample's own prior, 2·AM − 1 = TPR + TNR − 1 ≠ 2(p·TPR + (1 − p)·TNR) − 1).
    pred = attack.predict(Q)
    assert attack.score(Q, m) == pytest.approx(membership_advantage(m, pred, prior=0.25))
    assert attack.score(Q, m) != pytest.approx(eq20)


def test_metric_value_is_the_eq20_scorer_on_the_evaluation_split(rng):
    # F1 at prior 0.1 from a balanced sample: metric_value_ reweights the last split to the
    # prior, and generalized_metric_scorer("f1") does the same on any data.
    Q, m = two_gaussians(rng, 3000, 3000, shift=2.0)
    attack = GeneralizedMetricAttack(metric="f1", prior=0.1, random_state=0).fit(Q, m)
    last = attack._split(m, attack.algorithm_)[-1]
    scorer = generalized_metric_scorer("f1")  # prior=None: the attack's prior_
    assert scorer(attack, Q[last], m[last]) == pytest.approx(attack.metric_value_, rel=1e-12)
    assert get_scorer("generalized_f1")(attack, Q[last], m[last]) == pytest.approx(
        attack.metric_value_, rel=1e-12
    )
    # Hand check: F1 = 2TP / (2TP + FP + FN) with TP = p·TPR, FP = (1 − p)·FPR, FN = p·FNR.
    pred = attack.predict(Q[last]) == 1
    tpr, fpr = pred[m[last] == 1].mean(), pred[m[last] == 0].mean()
    tp, fp, fn = 0.1 * tpr, 0.9 * fpr, 0.1 * (1 - tpr)
    assert attack.metric_value_ == pytest.approx(2 * tp / (2 * tp + fp + fn))


def test_string_labels_and_member_label(rng):
    Q, m = two_gaussians(rng, 300, 300)
    labels = np.where(m == 1, "in", "out")
    attack = GeneralizedMetricAttack(random_state=0, member_label="in").fit(Q, labels)
    reference = GeneralizedMetricAttack(random_state=0).fit(Q, m)
    np.testing.assert_array_equal(attack.classes_, ["out", "in"])
    np.testing.assert_array_equal(attack.predict(Q) == "in", reference.predict(Q) == 1)
    assert attack.metric_value_ == reference.metric_value_
    assert attack.score(Q, labels) == reference.score(Q, m)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"prior": 1.0}, "prior"),
        ({"threshold": 1.5}, "threshold"),
        ({"metric": "auc"}, "metric"),
        ({"estimator": LinearSVC()}, "estimator"),
    ],
)
def test_bad_parameters(params, match, rng):
    Q, m = two_gaussians(rng, 30, 30)
    with pytest.raises(ValueError, match=match):
        GeneralizedMetricAttack(**params).fit(Q, m)


def test_bad_data(rng):
    Q, m = two_gaussians(rng, 30, 30)
    Q[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        GeneralizedMetricAttack().fit(Q, m)
    with pytest.raises(ValueError, match="one class"):
        GeneralizedMetricAttack().fit(np.ones((10, 1)), np.ones(10))
    with pytest.raises(ValueError, match="at least 3 members"):
        GeneralizedMetricAttack(metric="f1").fit(np.arange(8.0)[:, None], [1, 1, 0, 0, 0, 0, 0, 0])
