"""BayesOptimalMIA against closed forms (MACE Lemma 1–2, Thm 1–4)."""

import numpy as np
import pytest
from scipy.special import expit, logit
from scipy.stats import gaussian_kde
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace import BayesOptimalMIA
from sklearn_mace.utils._testing import expected_failed_checks


def two_gaussians(rng, n_members, n_nonmembers, shift=1.0, d=1):
    members = rng.normal(size=(n_members, d))
    members[:, 0] += shift
    Q = np.r_[members, rng.normal(size=(n_nonmembers, d))]
    m = np.r_[np.ones(n_members, int), np.zeros(n_nonmembers, int)]
    return Q, m


def true_log_odds(x, prior, shift=1.0):
    # log N(x; shift, 1) − log N(x; 0, 1) + logit(p) = shift·x − shift²/2 + logit(p)
    return shift * x - shift**2 / 2 + logit(prior)


def randomized_response(rng, n, eps):
    m = rng.integers(0, 2, n)
    keep = rng.random(n) < np.exp(eps) / (1 + np.exp(eps))
    return np.where(keep, m, 1 - m).astype(float)[:, None], m


@parametrize_with_checks(
    [BayesOptimalMIA(device="cpu"), BayesOptimalMIA(density="histogram")],
    expected_failed_checks=expected_failed_checks,
)
def test_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("prior", [None, 0.2])
def test_posterior_matches_the_true_eta_on_a_grid(prior, rng):
    # n = 50 000 per class, h ≈ 0.115: in [-1.5, 2] (each density >= φ(2.5)) the KDE's
    # log-odds SD is <= 0.06 (Lemma 4 variance) and its smoothing bias <= 0.04, i.e. an η
    # error SD <= 0.01; over 32 seeds the largest error on the grid was 0.017, so 0.03.
    Q, m = two_gaussians(rng, 50_000, 50_000)
    attack = BayesOptimalMIA(prior=prior, device="cpu").fit(Q, m)
    grid = np.linspace(-1.5, 2.0, 29)[:, None]
    eta = expit(true_log_odds(grid[:, 0], 0.5 if prior is None else prior))
    np.testing.assert_allclose(attack.predict_proba(grid)[:, 1], eta, atol=0.03)
    np.testing.assert_array_equal(attack.predict(grid), (attack.predict_proba(grid)[:, 1] > 0.5))


def test_prior_decoupling_balanced_sample_risk_at_p_0_1(rng):
    # Balanced estimation sample, risk reported at the real-world prior p = 0.1 (Experiment 2):
    # |f_p(x)| = |tanh(L(x)/2)| with L the true log posterior odds at p = 0.1. |tanh(L/2)|
    # has slope up to 1/2 (where L ≈ 0, near x = 2.2), so: n = 50 000 per class and
    # x in [-1.5, 2], where the log-odds SD is <= 0.035 (Lemma 4 variance) and the bias
    # <= 0.04, i.e. a risk error SD <= 0.02 and a bias <= 0.02. Measured over 12 seeds:
    # the largest error on the grid was 0.015 ± 0.005 (max 0.022), so 0.04.
    Q, m = two_gaussians(rng, 50_000, 50_000)
    attack = BayesOptimalMIA(prior=0.1, device="cpu").fit(Q, m)
    grid = np.linspace(-1.5, 2.0, 29)[:, None]
    expected = np.abs(np.tanh(true_log_odds(grid[:, 0], 0.1) / 2))
    np.testing.assert_allclose(attack.individual_risk(grid), expected, atol=0.04)
    assert attack.prior_ == 0.1


def test_decision_function_is_log_posterior_odds_from_two_kdes(rng):
    # Independent reference: scipy's gaussian_kde (same default Scott bandwidth) per class.
    Q, m = two_gaussians(rng, 300, 500, d=2)
    attack = BayesOptimalMIA(device="cpu").fit(Q, m)
    X = rng.normal(size=(20, 2)) * 2
    expected = (
        gaussian_kde(Q[m == 1].T).logpdf(X.T)
        - gaussian_kde(Q[m == 0].T).logpdf(X.T)
        + np.log(300 / 500)
    )
    np.testing.assert_allclose(attack.decision_function(X), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(attack.predict_proba(X)[:, 1], expit(expected), rtol=1e-9)


def test_log_space_keeps_far_outliers_finite_in_64_dimensions(rng):
    # Plain densities underflow to 0/0 here; log densities give a finite, certain posterior.
    Q, m = two_gaussians(rng, 200, 200, shift=0.5, d=64)
    attack = BayesOptimalMIA(bandwidth=1.0, device="cpu").fit(Q, m)
    far = np.full((1, 64), 30.0)
    odds = attack.decision_function(far)
    assert np.isfinite(odds).all()
    risk, lower, upper = attack.individual_risk(far, return_interval=True)
    assert np.isfinite([risk[0], lower[0], upper[0]]).all() and 0 <= lower[0] <= risk[0] <= upper[0]


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_histogram_randomized_response_risk_is_tanh(eps, rng):
    # Randomized response meets the DP bound: every record's risk is tanh(ε/2) at p = 0.5.
    # n = 40 000: the frequency SE is ~0.0025, so |risk − tanh(ε/2)| < 0.02 at > 5 SE.
    Q, m = randomized_response(rng, 40_000, eps)
    attack = BayesOptimalMIA(density="histogram", prior=0.5).fit(Q, m)
    risk, lower, upper = attack.individual_risk(np.array([[0.0], [1.0]]), return_interval=True)
    np.testing.assert_allclose(risk, np.tanh(eps / 2), atol=0.02)
    assert np.all(lower <= np.tanh(eps / 2)) and np.all(np.tanh(eps / 2) <= upper)
    np.testing.assert_array_equal(attack.predict(np.array([[0.0], [1.0]])), [0, 1])


def test_histogram_interval_coverage_randomized_response(rng):
    # Thm 2.2 at 1 − δ = 0.9 over 300 repetitions (SE of the coverage ~1.7 %): the
    # Clopper–Pearson bounds at δ/2 each make it conservative, so >= 0.9 − 0.03.
    eps, truth, hits = 1.0, np.tanh(0.5), 0
    for _ in range(300):
        Q, m = randomized_response(rng, 400, eps)
        attack = BayesOptimalMIA(density="histogram", prior=0.5, confidence=0.9).fit(Q, m)
        _, lower, upper = attack.individual_risk(np.array([[1.0]]), return_interval=True)
        hits += lower[0] <= truth <= upper[0]
    assert hits / 300 >= 0.9 - 0.03


def _kde_coverage(rng, reps):
    x0, truth, hits = np.array([[1.5]]), None, 0
    truth = abs(np.tanh(true_log_odds(1.5, 0.5) / 2))
    for _ in range(reps):
        Q, m = two_gaussians(rng, 2000, 2000)
        attack = BayesOptimalMIA(device="cpu", confidence=0.9).fit(Q, m)
        _, lower, upper = attack.individual_risk(x0, return_interval=True)
        hits += lower[0] <= truth <= upper[0]
    return hits / reps


@pytest.mark.slow
def test_kde_interval_coverage_simulation(rng):
    # Thm 3.2 at 1 − δ = 0.9, 200 repetitions (coverage SE ~2 %); the union of two
    # (1 − δ/2) intervals is conservative, which absorbs the KDE bias at Scott's bandwidth.
    assert _kde_coverage(rng, 200) >= 0.9 - 0.03


def test_kde_interval_coverage_reduced(rng):
    # Reduced default version: 40 repetitions; a correct conservative interval covers in
    # > 95 % of them, a wrong width (e.g. no μ_K) in far fewer; 0.8 has P(fail) < 1e-3.
    assert _kde_coverage(rng, 40) >= 0.8


def test_am_metric_threshold_is_prior_and_eq18_risk(rng):
    # Lemma 2: t_AM = p. Eq. 18 for AM with η: η/(2p) if η > p else (1 − η)/(2(1 − p)).
    # η/(2p) has slope 1/(2p) = 1.7, so the member side amplifies the η error. With
    # n = 50 000 per class on [-1.5, 2] (as above) the risk error per point has SD <= 0.01
    # and bias <= 0.007 (16 seeds; largest error 0.024): 0.04 is the bias plus > 3 SD.
    Q, m = two_gaussians(rng, 50_000, 50_000)
    attack = BayesOptimalMIA(metric="am", prior=0.3, device="cpu").fit(Q, m)
    assert attack.threshold_ == pytest.approx(0.3)
    grid = np.linspace(-1.5, 2.0, 15)[:, None]
    eta = expit(true_log_odds(grid[:, 0], 0.3))
    expected = np.where(eta > 0.3, eta / 0.6, (1 - eta) / 1.4)
    keep = np.abs(eta - 0.3) > 0.05  # away from the jump at t_ℓ
    np.testing.assert_allclose(attack.individual_risk(grid)[keep], expected[keep], atol=0.04)
    risk, lower, upper = attack.individual_risk(grid, return_interval=True)
    assert np.all(lower <= risk + 1e-12) and np.all(risk <= upper + 1e-12)
    np.testing.assert_array_equal(attack.predict(grid), attack.predict_proba(grid)[:, 1] > 0.3)


def test_decision_function_is_shifted_by_the_threshold_so_its_sign_is_predict(rng):
    # AM at p = 0.3: the rule is η̂ > 0.3, so decision_function = log odds − logit(0.3); the
    # raw log odds (the old decision_function) disagree with predict where 0.3 < η̂ ≤ 1/2.
    Q, m = two_gaussians(rng, 300, 700)
    attack = BayesOptimalMIA(metric="am", device="cpu").fit(Q, m)
    grid = np.linspace(-3, 4, 141)[:, None]
    eta = attack.predict_proba(grid)[:, 1]
    decision = attack.decision_function(grid)
    np.testing.assert_allclose(decision, logit(eta) - logit(0.3), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(decision > 0, attack.predict(grid) == 1)
    np.testing.assert_array_equal(attack.predict(grid) == 1, eta > 0.3)
    assert np.any((logit(eta) > 0) != (eta > 0.3))  # rows where the raw odds were wrong
    # TPR's t_ℓ = 0: every row with η̂ > 0 is a member, and the decision stays finite.
    tpr = BayesOptimalMIA(metric="tpr", device="cpu").fit(Q, m)
    assert tpr.threshold_ == 0
    decision = tpr.decision_function(grid)
    assert np.all(np.isfinite(decision)) and np.all(decision > 0)
    np.testing.assert_array_equal(tpr.predict(grid), 1)


def test_labels_are_echoed_and_member_label_names_the_member(rng):
    Q, m = two_gaussians(rng, 200, 300)
    reference = BayesOptimalMIA(device="cpu").fit(Q, m)
    signed = BayesOptimalMIA(device="cpu").fit(Q, 2 * m - 1)
    np.testing.assert_array_equal(signed.classes_, [-1, 1])
    np.testing.assert_array_equal(signed.predict(Q), 2 * reference.predict(Q) - 1)
    named = BayesOptimalMIA(device="cpu", member_label="member")
    named.fit(Q, np.where(m == 1, "member", "non-member"))
    np.testing.assert_array_equal(named.classes_, ["non-member", "member"])
    np.testing.assert_allclose(named.predict_proba(Q), reference.predict_proba(Q))
    assert named.prior_ == reference.prior_ == 0.4


def test_metric_without_closed_form_threshold_is_rejected(rng):
    Q, m = two_gaussians(rng, 50, 50)
    with pytest.raises(ValueError, match="GeneralizedMetricAttack"):
        BayesOptimalMIA(metric="ppv", device="cpu").fit(Q, m)


def test_grid_search_over_bandwidth(rng):
    Q, m = two_gaussians(rng, 300, 300)
    search = GridSearchCV(BayesOptimalMIA(device="cpu"), {"bandwidth": [0.05, 0.3, 1.0]}, cv=3)
    search.fit(Q, m)
    assert search.best_params_["bandwidth"] in (0.05, 0.3, 1.0)


@pytest.mark.parametrize(
    "params, Q, y, match",
    [
        ({}, [[np.nan], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "NaN"),
        ({}, [[np.inf], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "infinity"),
        ({}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 1, 1], "one class"),
        ({"prior": 1.5}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "prior"),
        ({"prior": 0.0}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "prior"),
        ({"bandwidth": 0.0}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "bandwidth"),
        ({"bandwidth": [-1.0]}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "bandwidth"),
        ({"confidence": 1.0}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "confidence"),
        ({"confidence": 0.0}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "confidence"),
        ({}, [[0.0], [1.0], [2.0], [3.0]], [1, 0, 0, 0], "at least 2 members"),
        ({"density": "histogram", "bins": 0}, [[0.0], [1.0]], [1, 0], "bins"),
    ],
)
def test_bad_input_errors_name_the_parameter(params, Q, y, match):
    with pytest.raises(ValueError, match=match):
        BayesOptimalMIA(device="cpu", **params).fit(np.asarray(Q), y)
