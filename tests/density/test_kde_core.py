"""The log-space Gaussian KDE core, against scipy, brute force and closed forms."""

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import logsumexp
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.density import GaussianKDE
from sklearn_mace.density._kde import bandwidth_matrix, gaussian_log_kernel_sum


def brute_force_log_kde(Q, X, H):
    """Obviously-correct reference: mean of multivariate normal pdfs, in log space."""
    logpdf = np.stack([stats.multivariate_normal(x, H).logpdf(Q) for x in X], axis=-1)
    return logsumexp(np.atleast_2d(logpdf), axis=-1) - np.log(len(X))


@pytest.mark.parametrize("rule", ["scott", "silverman"])
def test_rules_equal_scipy_gaussian_kde(rng, rule):
    X = rng.normal(size=(500, 3)) @ rng.normal(size=(3, 3))
    Q = 2 * rng.normal(size=(200, 3))
    ours = GaussianKDE(bandwidth=rule, device="cpu").fit(X).score_samples(Q)
    theirs = stats.gaussian_kde(X.T, bw_method=rule).logpdf(Q.T)
    # Both are exact float64 computations; 1e-9 relative leaves room for summation order.
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


@pytest.mark.parametrize("bandwidth", [0.4, [0.2, 0.5, 1.0]])
def test_fixed_bandwidths_equal_brute_force(rng, bandwidth):
    X, Q = rng.normal(size=(80, 3)), rng.normal(size=(30, 3))
    H = bandwidth_matrix(X, bandwidth)
    np.testing.assert_allclose(np.diag(H), np.broadcast_to(np.square(bandwidth), 3))
    ours = GaussianKDE(bandwidth=bandwidth).fit(X).score_samples(Q)
    np.testing.assert_allclose(ours, brute_force_log_kde(Q, X, H), rtol=1e-10)


def test_tails_keep_relative_accuracy(rng):
    # A record 12 bandwidths from every training point: its density is ~1e-30; plain
    # densities would still represent it, at 40 it underflows (log ≈ −800) — log space keeps it.
    X = rng.normal(size=(200, 2))
    Q = np.array([[12.0, 0.0], [40.0, -40.0]])
    ours = GaussianKDE(bandwidth=0.5).fit(X).score_samples(Q)
    np.testing.assert_allclose(ours, brute_force_log_kde(Q, X, 0.25 * np.eye(2)), rtol=1e-12)
    assert ours[1] < -1000


def test_finite_in_64_dimensions(rng):
    X = rng.normal(size=(300, 64))
    log_density = GaussianKDE().fit(X).score_samples(X[:20] + 5.0)
    assert np.all(np.isfinite(log_density))


def test_density_integrates_to_one_in_1d(rng):
    kde = GaussianKDE(bandwidth="silverman").fit(rng.exponential(size=(100, 1)))
    total, error = integrate.quad(
        lambda x: np.exp(kde.score_samples(np.array([[x]]))[0]), -20, 40, limit=200
    )
    assert total == pytest.approx(1.0, abs=1e-6)


def test_chunking_does_not_change_results(rng):
    Zq, Zd = rng.normal(size=(57, 4)), rng.normal(size=(91, 4))
    whole = gaussian_log_kernel_sum(Zq, Zd)
    tiny = gaussian_log_kernel_sum(Zq, Zd, max_chunk_bytes=8 * 91 * 5)  # 5 rows per block
    np.testing.assert_allclose(tiny, whole, rtol=1e-13)


def test_tiled_kernel_sums_match_the_one_pass_sums(rng):
    # Data too large for 16 query rows per block go through data tiles and a second
    # logsumexp: the same sums up to rounding (a few ulps of the log), including far-out
    # queries whose sums are dominated by one tile.
    Zq = np.vstack([rng.normal(size=(40, 3)), [[30.0, 0.0, 0.0], [0.0, -25.0, 4.0]]])
    Zd = rng.normal(size=(3000, 3))
    one_pass = gaussian_log_kernel_sum(Zq, Zd, max_chunk_bytes=8 * 3000 * 42)
    tiled = gaussian_log_kernel_sum(Zq, Zd, max_chunk_bytes=8 * 3000 * 4)  # 4 rows < 16
    np.testing.assert_allclose(tiled, one_pass, rtol=1e-13)
    direct = np.log(np.exp(-0.5 * ((Zq[:40, None] - Zd[None]) ** 2).sum(axis=2)).sum(axis=1))
    np.testing.assert_allclose(tiled[:40], direct, rtol=1e-12)


def test_samples_have_the_kde_moments(rng):
    # A KDE sample is a data row plus N(0, H) noise: mean = data mean, cov = data cov + H.
    X = rng.normal(size=(400, 2)) @ np.array([[1.0, 0.5], [0.0, 1.0]])
    kde = GaussianKDE(bandwidth=0.8).fit(X)
    S = kde.sample(200_000, random_state=0)
    expected_cov = np.cov(X, rowvar=False, ddof=0) + kde.bandwidth_matrix_
    # Monte-Carlo standard error of each entry ≈ sqrt(2/200000)·var ≈ 0.006; 0.03 is 5 s.e.
    np.testing.assert_allclose(S.mean(axis=0), X.mean(axis=0), atol=0.02)
    np.testing.assert_allclose(np.cov(S, rowvar=False), expected_cov, atol=0.03)


def test_grid_search_over_bandwidth_prefers_a_sensible_value(rng):
    X = rng.normal(size=(300, 1))
    search = GridSearchCV(GaussianKDE(), {"bandwidth": [0.01, 0.4, 20.0]}, cv=3).fit(X)
    assert search.best_params_["bandwidth"] == 0.4


@pytest.mark.parametrize(
    "bandwidth, X, match",
    [
        (0.0, np.ones((5, 1)), "bandwidth"),
        (-1.0, np.ones((5, 1)), "bandwidth"),
        ([1.0, 2.0], np.ones((5, 1)), r"1 floats > 0 \(one per feature\)"),
        ("scott", np.c_[np.arange(5.0), np.ones(5)], "singular"),
        ("scott", np.random.default_rng(0).normal(size=(3, 5)), "singular"),
        ("wide", np.ones((5, 1)), "bandwidth"),
    ],
)
def test_bad_bandwidths_are_rejected(bandwidth, X, match):
    with pytest.raises(ValueError, match=match):
        GaussianKDE(bandwidth=bandwidth).fit(X)


def test_nan_input_is_rejected():
    with pytest.raises(ValueError, match="NaN"):
        GaussianKDE().fit(np.array([[0.0], [np.nan], [1.0]]))


@parametrize_with_checks([GaussianKDE(device="cpu")])
def test_gaussian_kde_passes_estimator_checks(estimator, check):
    check(estimator)
