"""GaussianKDE additions: Chen-2017 pointwise intervals (MACE Lemma 4) and the FFT grid path."""

import numpy as np
import pytest
from scipy import integrate, optimize
from scipy.stats import gaussian_kde, norm

from sklearn_mace.density import GaussianKDE
from sklearn_mace.density._grid import binned_gaussian_kde, kde_grid_axes, linear_binning
from sklearn_mace.density._kde import gaussian_kernel_squared_integral


def test_mu_k_is_the_integral_of_the_squared_kernel():
    for d in (1, 2):
        value = integrate.nquad(lambda *u: np.prod(norm.pdf(u)) ** 2, [(-10, 10)] * d)[0]
        assert gaussian_kernel_squared_integral(d) == pytest.approx(value, rel=1e-8)


def test_interval_half_width_is_lemma_4():
    # 1-D, h = 0.3: half-width z_{1-α/2} sqrt(μ_K f̂ / (n h)) by hand.
    X = np.random.default_rng(0).normal(size=(400, 1))
    kde = GaussianKDE(bandwidth=0.3, device="cpu").fit(X)
    x = np.array([[0.0], [1.5]])
    log_f, log_lo, log_hi = kde.score_samples_interval(x, confidence=0.9)
    f = np.exp(log_f)
    half = norm.ppf(0.95) * np.sqrt(f / (2 * np.sqrt(np.pi)) / (400 * 0.3))
    np.testing.assert_allclose(np.exp(log_hi), f + half, rtol=1e-12)
    np.testing.assert_allclose(np.exp(log_lo), f - half, rtol=1e-12)


def test_interval_stays_finite_far_in_the_tails():
    # Far out the relative half-width explodes: the lower bound is 0 (-inf in log space),
    # the upper bound stays a finite log density instead of overflowing.
    X = np.random.default_rng(0).normal(size=(200, 3))
    kde = GaussianKDE(device="cpu").fit(X)
    log_f, log_lo, log_hi = kde.score_samples_interval(np.full((1, 3), 40.0))
    assert np.isfinite(log_f[0]) and log_lo[0] == -np.inf and np.isfinite(log_hi[0])
    assert log_hi[0] > log_f[0]


def test_interval_coverage_of_the_smoothed_density(rng):
    # The variance-based interval of Lemma 4 covers E f̂_h(x) = φ(x; 0, 1 + h²) (the bias is
    # a separate matter); 300 repetitions give a coverage SE of ~1.3 %, so >= 0.95 − 0.03
    # detects a wrong variance (e.g. a missing μ_K would give ~ 0.6).
    h, n, x0 = 0.4, 300, np.array([[0.5]])
    target = norm.pdf(0.5, scale=np.sqrt(1 + h**2))
    hits = 0
    for _ in range(300):
        kde = GaussianKDE(bandwidth=h, device="cpu").fit(rng.normal(size=(n, 1)))
        _, lo, hi = kde.score_samples_interval(x0, confidence=0.95)
        hits += np.exp(lo[0]) <= target <= np.exp(hi[0])
    assert hits / 300 >= 0.95 - 0.03


def test_bad_confidence():
    kde = GaussianKDE(device="cpu").fit(np.random.default_rng(0).normal(size=(20, 1)))
    with pytest.raises(ValueError, match="confidence"):
        kde.score_samples_interval(np.zeros((1, 1)), confidence=1.0)


@pytest.mark.parametrize("d", [1, 2])
def test_grid_density_matches_scipy_gaussian_kde(d, rng):
    # Linear binning + FFT vs scipy's exact KDE at the grid nodes (independent code).
    X = rng.normal(size=(300, d))
    if d == 2:
        X[:, 1] += 0.6 * X[:, 0]  # a correlated (full) bandwidth matrix
    kde = GaussianKDE(device="cpu").fit(X)
    axes = kde_grid_axes([X], [kde.bandwidth_matrix_])
    grid = kde.density_on_grid(axes)
    nodes = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, d)
    exact = gaussian_kde(X.T)(nodes.T).reshape(grid.shape)
    # Binning adds at most δ²/4 = h²/1024 of kernel variance per axis, which moves the
    # density by at most ~d/2 · 0.1 % of its peak; measured over 12 seeds: <= 0.02 %.
    assert np.abs(grid - exact).max() <= 1e-3 * exact.max()


def test_grid_integral_of_abs_difference_within_1e_4_of_the_exact_integral(rng):
    # U_N's integrand |p r̂ − (1−p) q̂| in 1-D. Reference: scipy's exact KDEs, integrated
    # piecewise between the sign changes (located by brentq) with adaptive quadrature.
    X, Y, p = rng.normal(0.8, 1, (150, 1)), rng.normal(0, 1.3, (250, 1)), 0.35
    r, q = GaussianKDE(device="cpu").fit(X), GaussianKDE(device="cpu").fit(Y)
    axes = kde_grid_axes([X, Y], [r.bandwidth_matrix_, q.bandwidth_matrix_])
    cell = axes[0][1] - axes[0][0]
    on_grid = np.abs(p * r.density_on_grid(axes) - (1 - p) * q.density_on_grid(axes)).sum() * cell
    r_ref, q_ref = gaussian_kde(X.T), gaussian_kde(Y.T)
    g = lambda x: p * r_ref(x)[0] - (1 - p) * q_ref(x)[0]  # noqa: E731
    coarse = np.linspace(-12, 12, 2401)
    values = p * r_ref(coarse) - (1 - p) * q_ref(coarse)
    roots = [
        optimize.brentq(g, a, b)
        for a, b, va, vb in zip(coarse[:-1], coarse[1:], values[:-1], values[1:], strict=True)
        if va * vb < 0
    ]
    knots = np.r_[-12.0, roots, 12.0]
    exact = sum(
        abs(integrate.quad(g, a, b, epsabs=1e-12, limit=200)[0])
        for a, b in zip(knots[:-1], knots[1:], strict=True)
    )
    assert abs(on_grid - exact) <= 1e-4


def test_grid_integral_2d_within_1e_4_of_fine_exact_grid(rng):
    # Reference: scipy's exact KDEs on a 4x finer grid; the Riemann sum of a smooth
    # integrand with a few kinks is accurate to ~1e-6 there.
    X, Y, p = rng.normal(0.5, 1, (120, 2)), rng.normal(0, 1, (120, 2)), 0.5
    r, q = GaussianKDE(device="cpu").fit(X), GaussianKDE(device="cpu").fit(Y)
    axes = kde_grid_axes([X, Y], [r.bandwidth_matrix_, q.bandwidth_matrix_])
    cell = np.prod([a[1] - a[0] for a in axes])
    diff = p * r.density_on_grid(axes) - (1 - p) * q.density_on_grid(axes)
    fine = kde_grid_axes(
        [X, Y], [r.bandwidth_matrix_, q.bandwidth_matrix_], points_per_bandwidth=24, tail=6.0
    )
    nodes = np.stack(np.meshgrid(*fine, indexing="ij"), -1).reshape(-1, 2).T
    exact = np.abs(p * gaussian_kde(X.T)(nodes) - (1 - p) * gaussian_kde(Y.T)(nodes)).sum()
    exact *= np.prod([a[1] - a[0] for a in fine])
    assert abs(np.abs(diff).sum() * cell - exact) <= 1e-4


def test_binned_kde_accepts_a_plain_bandwidth_matrix(rng):
    X = rng.normal(size=(50, 1))
    axes = [np.linspace(-6, 6, 1201)]
    density = binned_gaussian_kde(X, np.array([[0.25]]), axes)
    assert density.sum() * (axes[0][1] - axes[0][0]) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("d", [1, 2])
def test_linear_binning_against_brute_force(d, rng):
    # Each point splits its unit mass between the 2^d surrounding nodes, by hand; mass and
    # mean are preserved exactly (what makes the binned KDE's error second order).
    X = rng.normal(size=(200, d))
    axes = [np.linspace(-5, 5, 41)] * d
    spacing = axes[0][1] - axes[0][0]
    reference = np.zeros((41,) * d)
    for x in X:
        u = (x + 5) / spacing
        i = np.floor(u).astype(int)
        f = u - i
        for corner in np.ndindex(*(2,) * d):
            c = np.array(corner)
            reference[tuple(i + c)] += np.prod(np.where(c == 1, f, 1 - f))
    weights = linear_binning(X, axes)
    np.testing.assert_allclose(weights, reference / 200, atol=1e-14)
    nodes = np.meshgrid(*axes, indexing="ij")
    for j in range(d):
        assert (weights * nodes[j]).sum() == pytest.approx(X[:, j].mean(), abs=1e-12)
