"""KDEAdvantageEstimator against closed forms (MACE Thm 5, Thm 6, Alg. 1, Thm 1.4, Remark 1)."""

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace import KDEAdvantageEstimator
from sklearn_mace.density import GaussianKDE
from sklearn_mace.estimation import histogram_advantage, kde_advantage, max_query_advantage
from sklearn_mace.estimation._advantage import mcdiarmid_half_width
from sklearn_mace.utils._testing import expected_failed_checks


def two_gaussians(rng, n_members, n_nonmembers, shift=1.0, d=1):
    members = rng.normal(size=(n_members, d))
    members[:, 0] += shift
    Q = np.r_[members, rng.normal(size=(n_nonmembers, d))]
    return Q, np.r_[np.ones(n_members, int), np.zeros(n_nonmembers, int)]


def randomized_response(rng, n, eps):
    m = rng.integers(0, 2, n)
    keep = rng.random(n) < np.exp(eps) / (1 + np.exp(eps))
    return np.where(keep, m, 1 - m).astype(float)[:, None], m


def optimal_advantage_two_gaussians(prior, shift=1.0):
    """∫ |p φ(x − δ) − (1 − p) φ(x)| dx by adaptive quadrature."""
    f = lambda x: abs(prior * norm.pdf(x - shift) - (1 - prior) * norm.pdf(x))  # noqa: E731
    return integrate.quad(
        f, -15, 15, limit=200, points=[shift / 2 + np.log((1 - prior) / prior) / shift]
    )[0]


@parametrize_with_checks(
    [
        KDEAdvantageEstimator(device="cpu", random_state=0, n_mc_samples=2000),
        KDEAdvantageEstimator(discrete=True),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_estimator_checks(estimator, check):
    check(estimator)


def test_u_n_two_gaussians_at_p_half_is_total_variation(rng):
    # Truth 2Φ(δ/2) − 1 = 0.3829. N = 80 000: SD of U_N ≈ 0.003 over seeds and the Scott
    # smoothing bias ≈ −0.002 (measured over 10 seeds), so 0.012 is > 3 SD + bias.
    Q, m = two_gaussians(rng, 40_000, 40_000)
    est = KDEAdvantageEstimator(device="cpu").fit(Q, m)
    assert est.integration_ == "grid"
    assert est.advantage_estimate_ == pytest.approx(2 * norm.cdf(0.5) - 1, abs=0.012)
    assert (
        est.advantage_estimate_interval_[0]
        <= 2 * norm.cdf(0.5) - 1
        <= est.advantage_estimate_interval_[1]
    )
    assert est.trivial_advantage_ == pytest.approx(0.0, abs=1e-12)


def test_u_n_two_gaussians_at_p_0_3_by_numerical_integration(rng):
    # N₁ = pN as in Experiment 2; the densities cross at x = 1.35, so neither term dominates
    # everywhere (the answer is not the trivial |2p − 1| = 0.4). Same tolerance reasoning.
    truth = optimal_advantage_two_gaussians(0.3)
    assert truth > 0.4 + 0.05
    Q, m = two_gaussians(rng, 24_000, 56_000)
    est = KDEAdvantageEstimator(device="cpu").fit(Q, m)
    assert est.prior_ == pytest.approx(0.3)
    assert est.advantage_estimate_ == pytest.approx(truth, abs=0.012)
    assert est.trivial_advantage_ == pytest.approx(0.4)


def test_u_n_prior_decoupled_from_a_balanced_sample(rng):
    # A balanced sample reporting at p = 0.3 estimates the same integral as above.
    Q, m = two_gaussians(rng, 40_000, 40_000)
    est = KDEAdvantageEstimator(prior=0.3, device="cpu").fit(Q, m)
    assert est.advantage_estimate_ == pytest.approx(optimal_advantage_two_gaussians(0.3), abs=0.012)
    # McDiarmid with N₁ ≠ pN: sqrt(2 (p²/N₁ + (1−p)²/N₂) log(2/δ)).
    half = np.sqrt(2 * (0.09 / 40_000 + 0.49 / 40_000) * np.log(2 / 0.05))
    assert est.advantage_estimate_interval_[1] - est.advantage_estimate_ == pytest.approx(half)


def test_mcdiarmid_half_width_is_the_paper_formula_under_experiment_2():
    N, p, delta = 10_000, 0.2, 0.05
    assert mcdiarmid_half_width(int(p * N), int((1 - p) * N), p, 1 - delta) == pytest.approx(
        np.sqrt(2 / N * np.log(2 / delta))
    )


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_w_n_randomized_response_is_tanh_and_recovers_epsilon(eps, rng):
    # Randomized response with ε attains the Thm 1.4 bound: Adv = tanh(ε/2) at p = 0.5.
    # N = 80 000: SD of W_N ≈ 0.004, so 0.015; ε = 2·artanh(Adv) has slope 2/(1 − Adv²)
    # <= 4.9 here, so ε is within 0.08.
    Q, m = randomized_response(rng, 80_000, eps)
    est = KDEAdvantageEstimator(discrete=True, prior=0.5).fit(Q, m)
    assert est.integration_ == "histogram"
    assert est.advantage_estimate_ == pytest.approx(np.tanh(eps / 2), abs=0.015)
    assert est.epsilon_lower_bound_ == pytest.approx(eps, abs=0.08)


def test_w_n_with_bins_matches_the_binned_truth(rng):
    # With fixed edges, W_N estimates Σ_j |p·P_r(bin j) − (1−p)·P_q(bin j)|, computable from
    # Φ. N = 60 000: W_N's SD ≈ 0.004 and its upward bias over 20 bins ≈ 0.005; tol 0.02.
    edges = np.linspace(-4, 5, 21)
    # Rows outside [-4, 5] (~3e-5 of each class) fall in no cell, in the truth as in W_N.
    truth = np.abs(0.5 * np.diff(norm.cdf(edges - 1)) - 0.5 * np.diff(norm.cdf(edges))).sum()
    Q, m = two_gaussians(rng, 30_000, 30_000)
    est = KDEAdvantageEstimator(bins=[edges]).fit(Q, m)
    assert est.advantage_estimate_ == pytest.approx(truth, abs=0.02)


def test_monte_carlo_agrees_with_the_grid_on_the_same_u_n(rng):
    # Same U_N (2-D), two integrators: the grid is within 1e-4 of the exact integral
    # (test_density_kde_interval), so the MC estimate must be within 4 of its standard errors.
    Q, m = two_gaussians(rng, 1500, 1500, d=2)
    grid = KDEAdvantageEstimator(device="cpu").fit(Q, m)
    mc = KDEAdvantageEstimator(
        integration="monte_carlo", n_mc_samples=20_000, random_state=0, device="cpu"
    ).fit(Q, m)
    assert grid.integration_ == "grid" and mc.integration_ == "monte_carlo"
    assert 0 < mc.mc_standard_error_ < 0.5 / np.sqrt(20_000)
    assert (
        abs(mc.advantage_estimate_ - grid.advantage_estimate_) <= 4 * mc.mc_standard_error_ + 1e-4
    )


def test_monte_carlo_in_3d_against_closed_form(rng):
    # d = 3 uses Monte Carlo from the pooled KDE. Truth 0.383; at N = 8 000 Scott's
    # h ≈ 0.3 biases U_N by about −0.01 and its SD is ~0.008, MC SE ~0.004: tol 0.035.
    # (MACE's own U_N: per-class Scott bandwidths on the raw query.)
    Q, m = two_gaussians(rng, 4000, 4000, d=3)
    est = KDEAdvantageEstimator(
        bandwidth="scott", feature_map=None, random_state=0, n_mc_samples=5000, device="cpu"
    ).fit(Q, m)
    assert est.integration_ == "monte_carlo"
    assert est.advantage_estimate_ == pytest.approx(2 * norm.cdf(0.5) - 1, abs=0.035)


def test_score_is_held_out_advantage_not_u_n(rng):
    # A tiny bandwidth overfits: U_N grows towards 1 (spikes at the points), far above the
    # truth 0.383, but the plug-in classifier's held-out advantage cannot beat the optimum:
    # the 4 000-record test estimate has SD 0.015, so optimum + 0.03 is 2 SD above the
    # optimum, and the spiky (≈ 1-NN) rule scores far below it (0.23 ± 0.01, 8 seeds);
    # a grid search must prefer the sensible bandwidth.
    Q, m = two_gaussians(rng, 2000, 2000)
    Q_test, m_test = two_gaussians(rng, 2000, 2000)
    spiky = KDEAdvantageEstimator(bandwidth=1e-3, device="cpu").fit(Q, m)
    assert spiky.advantage_estimate_ > 2 * norm.cdf(0.5) - 1 + 0.1
    assert spiky.score(Q_test, m_test) <= 2 * norm.cdf(0.5) - 1 + 0.03
    search = GridSearchCV(KDEAdvantageEstimator(device="cpu"), {"bandwidth": [1e-3, 0.3]}, cv=3)
    search.fit(Q, m)
    assert search.best_params_["bandwidth"] == 0.3
    # The score is the prior-weighted advantage 2(p·TPR + (1−p)·TNR) − 1 on held-out data.
    pred = search.best_estimator_.predict(Q_test)
    tpr, tnr = pred[m_test == 1].mean(), 1 - pred[m_test == 0].mean()
    assert search.best_estimator_.score(Q_test, m_test) == pytest.approx(tpr + tnr - 1)


def test_individual_risks_of_fitted_records(rng):
    Q, m = two_gaussians(rng, 300, 300)
    est = KDEAdvantageEstimator(device="cpu").fit(Q, m)
    np.testing.assert_allclose(est.individual_risk_, est.individual_risk(Q))
    # Thm 1.2: Adv_p = E|f_p(z)|; the in-sample mean of the risks estimates it too. Over
    # 12 seeds it was below U_N by 0.010 ± 0.0024 (max 0.014): 0.025 is that plus 6 SD.
    assert est.individual_risk_.mean() == pytest.approx(est.advantage_estimate_, abs=0.025)
    risk, lower, upper = est.individual_risk(Q[:5], return_interval=True)
    assert np.all((lower <= risk) & (risk <= upper))


def _mcdiarmid_coverage(rng, reps):
    truth, hits = 2 * norm.cdf(0.5) - 1, 0
    for _ in range(reps):
        Q, m = two_gaussians(rng, 1000, 1000)
        lo, hi = (
            KDEAdvantageEstimator(device="cpu", confidence=0.9)
            .fit(Q, m)
            .advantage_estimate_interval_
        )
        hits += lo <= truth <= hi
    return hits / reps


@pytest.mark.slow
def test_mcdiarmid_interval_coverage_simulation(rng):
    # 200 repetitions at 1 − δ = 0.9: McDiarmid is conservative, so the smoothing bias
    # (~ −0.01 at N = 2 000) still leaves coverage >= 0.9 − 0.03.
    assert _mcdiarmid_coverage(rng, 200) >= 0.9 - 0.03


def test_mcdiarmid_interval_coverage_reduced(rng):
    # Reduced version: 40 repetitions; a half-width of 0.055 vs an SD of ~0.011 covers
    # essentially always, so >= 0.85 only fails if the interval is wrong.
    assert _mcdiarmid_coverage(rng, 40) >= 0.85


def test_w_n_interval_coverage_randomized_response(rng):
    # W_N for randomized response, 200 repetitions at 1 − δ = 0.9 (cheap: histograms).
    truth, hits = np.tanh(0.5), 0
    for _ in range(200):
        Q, m = randomized_response(rng, 500, 1.0)
        lo, hi = (
            KDEAdvantageEstimator(discrete=True, confidence=0.9)
            .fit(Q, m)
            .advantage_estimate_interval_
        )
        hits += lo <= truth <= hi
    assert hits / 200 >= 0.9 - 0.03


def test_max_query_advantage_remark_1(rng):
    # Three one-column queries with shifts 1, 2, 0: the maximum is the δ = 2 query,
    # 2Φ(1) − 1 = 0.683 (tolerance as for U_N at N = 8 000: 0.03).
    m = np.r_[np.ones(4000, int), np.zeros(4000, int)]
    X = rng.normal(size=(8000, 3)) + np.c_[m * 1.0, m * 2.0, m * 0.0]
    result = max_query_advantage(
        X, m, {"a": [0], "b": [1], "none": [2]}, estimator=KDEAdvantageEstimator(device="cpu")
    )
    assert result.best_query == "b"
    assert result.advantage == pytest.approx(2 * norm.cdf(1) - 1, abs=0.03)
    assert result.advantages["none"] < 0.05
    with pytest.raises(ValueError, match="column"):
        max_query_advantage(X, m, {"bad": [5]})


@pytest.mark.parametrize(
    "params, Q, y, match",
    [
        ({}, [[np.nan], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "NaN"),
        ({}, [[np.inf], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "infinity"),
        ({}, [[0.0], [1.0], [2.0], [3.0]], [0, 0, 0, 0], "one class"),
        ({"prior": 1.0}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "prior"),
        ({"bandwidth": -0.1}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "bandwidth"),
        ({"confidence": 1.5}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 0, 0], "confidence"),
        ({}, [[0.0], [1.0], [2.0], [3.0]], [1, 1, 1, 0], "at least 2 non-members"),
        ({"integration": "grid", "bandwidth": 0.5}, np.eye(6, 3), [1, 1, 1, 0, 0, 0], "grid"),
    ],
)
def test_bad_input_errors_name_the_parameter(params, Q, y, match):
    with pytest.raises(ValueError, match=match):
        KDEAdvantageEstimator(device="cpu", **params).fit(np.asarray(Q, dtype=float), y)


@pytest.mark.parametrize(
    "args, match",
    [
        ((100, 100, 0.5, 1.5), "confidence"),
        ((100, 100, 1.0), "prior"),
        ((0, 100, 0.5), "n_members"),
    ],
)
def test_mcdiarmid_half_width_bad_input_is_an_error_not_nan(args, match):
    with pytest.raises(ValueError, match=match):
        mcdiarmid_half_width(*args)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"prior": 1.5}, "prior"),
        ({"prior": 0.5, "integration": "gird"}, "integration"),
        ({"prior": 0.5, "n_mc_samples": 1}, "n_mc_samples"),
    ],
)
def test_kde_advantage_bad_input_is_an_error_not_nan(kwargs, match, rng):
    kde = GaussianKDE(device="cpu").fit(rng.normal(size=(50, 1)))
    with pytest.raises(ValueError, match=match):
        kde_advantage(kde, kde, **kwargs)
    with pytest.raises(ValueError, match="prior"):
        histogram_advantage(None, None, 0.0)
