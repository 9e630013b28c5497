"""The rank test against μ-GDP claims (issue #30, ``family="gaussian"`` of
``sklearn_mace/metrics/_rank_test.py``).

Ground truth: the Gaussian mechanism (``N(μ, 1)`` with the target, ``N(0, 1)`` without) is the
extremal μ-GDP pair, so on it one test's level is exact; any increasing transform of its
scores (log-normal) is the same mechanism to a rank test; an ε-DP mechanism is μ-GDP at
``μ_ε = 2Φ⁻¹(e^ε/(1 + e^ε))`` (its curve's knee lies on ``G_{μ_ε}``, which is convex below
the two lines through it; checked below), so randomized response, the DP histogram's count
and the Laplace mechanism are μ-GDP at a known μ (randomized response touches that curve at
one point only); with no leakage nothing above 0 may be certified beyond α, on skewed,
heavy-tailed and discrete scores alike.
"""

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binom, norm

from sklearn_mace.metrics._fdp import gaussian_tradeoff
from sklearn_mace.metrics._rank_test import (
    _gaussian_entry_times,
    critical_epsilons,
    rank_grid_mu,
    rank_statistic,
)

ALPHA = 0.05


def most_allowed(n_audits, alpha=ALPHA):
    """Audits allowed over ``alpha``: the binomial's 99.9 % quantile (a sound test fails
    this check in about 1 of 1 000 runs)."""
    return int(binom.isf(0.001, n_audits, alpha))


def gaussian_curve(u, mu):
    """``h*_μ(u) = Φ(Φ⁻¹(u) + μ)``: where the Gaussian pair puts a member's quantile ``u``
    in the non-members' law."""
    return norm.cdf(norm.ppf(u) + mu)


def implied_mu(epsilon):
    return 2.0 * norm.ppf(np.exp(epsilon) / (1.0 + np.exp(epsilon)))


# ------------------------------------------------------------------ the pieces, exactly


def test_entry_time_is_where_the_gaussian_curve_crosses_the_level(rng):
    u, level = rng.uniform(0.01, 0.99, 300), rng.uniform(0.01, 0.99, 300)
    got = _gaussian_entry_times(norm.ppf(u), norm.ppf(level))
    for ui, li, gi in zip(u, level, got, strict=True):
        if ui > li:  # h*_0 is the identity: already above at μ = 0
            assert gi == 0.0
        else:  # the least μ with h*_μ(u) > level, by root finding on the curve itself
            root = brentq(lambda m, ui=ui, li=li: gaussian_curve(ui, m) - li, 0.0, 20.0)
            assert gi == pytest.approx(root, abs=1e-9)


def test_epsilon_dp_is_gaussian_dp_at_the_implied_mu():
    """The ground truth the DP mechanisms below rely on: ``f_{ε,0} ≥ G_{μ_ε}`` everywhere,
    with equality at the knee ``1/(1 + e^ε)``."""
    fpr = np.linspace(0.0, 1.0, 20001)
    for epsilon in (0.5, 1.0, 2.0):
        pure = np.maximum.reduce(
            [np.zeros_like(fpr), 1 - np.exp(epsilon) * fpr, np.exp(-epsilon) * (1 - fpr)]
        )
        mu = implied_mu(epsilon)
        assert np.all(pure >= gaussian_tradeoff(fpr, mu) - 1e-12)
        knee = 1.0 / (1.0 + np.exp(epsilon))
        assert gaussian_tradeoff(knee, mu) == pytest.approx(knee, rel=1e-9)
        assert np.any(pure < gaussian_tradeoff(fpr, mu - 0.01))  # and at no smaller μ


def test_the_simulated_law_is_the_gaussian_pairs(rng):
    """The normal-quantile shortcut gives the same law of ``T`` at μ as scoring the Gaussian
    pair directly: means within 2 % and upper quantiles within 2 counts over 4 000 draws."""
    n, m, k, mu = 60, 50, 6, 0.8
    direct = [
        rank_statistic(rng.normal(mu, 1.0, n), rng.normal(0.0, 1.0, m), k, k, rng)
        for _ in range(4000)
    ]
    Z1, Z0 = rng.standard_normal((4000, n)), rng.standard_normal((4000, m))
    level = np.sort(Z0, axis=1)[:, m - k - 1 : m - k]
    x = np.sort(Z1, axis=1)[:, k : k + 1]
    shortcut = (_gaussian_entry_times(Z1, level) < mu).sum(1) + (
        _gaussian_entry_times(x, Z0) < mu
    ).sum(1)
    assert np.mean(direct) == pytest.approx(np.mean(shortcut), rel=0.02)
    for q in (0.5, 0.9, 0.95):
        assert abs(np.quantile(direct, q) - np.quantile(shortcut, q)) <= 2


def test_critical_mus_are_monotone_and_an_unknown_family_is_refused(rng):
    tables = critical_epsilons(
        40, 40, [(4, 4), (4, None)], delta=0.0, alpha=0.05, n_simulations=199, rng=rng,
        family="gaussian",
    )  # fmt: skip
    for table in tables:
        assert np.all(np.diff(table) >= 0) and table[0] == 0.0
    assert tables[0][-1] > 1.0  # every member above every non-member: strong evidence
    with pytest.raises(ValueError, match="family must be one of"):
        critical_epsilons(4, 4, [(0, 0)], delta=0.0, alpha=0.5, n_simulations=9, rng=rng,
                          family="laplace")  # fmt: skip


# ------------------------------------------------------------------ validity, simulated


def test_level_is_exact_on_the_gaussian_pair():
    """The Gaussian pair is the worst case: one test at α certifies above the true μ in
    about α of the audits (fresh simulations each), no more and not much fewer."""
    hits, audits, mu = 0, 400, 1.0
    for seed in range(audits):
        rng = np.random.default_rng([seed, 21])
        members, nonmembers = rng.normal(mu, 1.0, 80), rng.normal(0.0, 1.0, 80)
        t = rank_statistic(members, nonmembers, 15, 15, rng)
        bound = critical_epsilons(
            80, 80, [(15, 15)], delta=0.0, alpha=ALPHA, n_simulations=199, rng=rng, ts=[t],
            family="gaussian",
        )[0]  # fmt: skip
        hits += bound > mu
    assert hits <= most_allowed(audits)
    assert hits >= binom.ppf(0.001, audits, ALPHA)  # exact, not merely conservative


def gaussian(rng, n, member, mu):
    return rng.normal(mu * member, 1.0, n)


def lognormal(rng, n, member, mu):  # the Gaussian mechanism seen through exp: skewed
    return np.exp(2.0 * rng.normal(mu * member, 1.0, n))


def response(rng, n, member, epsilon):
    keep = rng.random(n) < 1.0 / (1.0 + np.exp(-epsilon))
    return (keep == member).astype(float)


def histogram(rng, n, member, epsilon):
    return np.rint(member + rng.laplace(0.0, 1 / epsilon, n))


def laplace(rng, n, member, epsilon):
    return member + rng.laplace(0.0, 1 / epsilon, n)


MECHANISMS = {  # name: (draw, parameter, the true μ or an upper bound on it)
    "gaussian-0.27": (gaussian, 0.27, 0.27),
    "gaussian-1": (gaussian, 1.0, 1.0),
    "lognormal-gaussian-1": (lognormal, 1.0, 1.0),
    "response-1": (response, 1.0, implied_mu(1.0)),
    "histogram-1": (histogram, 1.0, implied_mu(1.0)),
    "laplace-1": (laplace, 1.0, implied_mu(1.0)),
}


def _audits(name, n, audits, simulations):
    draw, parameter, truth = MECHANISMS[name]
    bounds = []
    for seed in range(audits):
        rng = np.random.default_rng([seed, 17])
        members, nonmembers = draw(rng, n, True, parameter), draw(rng, n, False, parameter)
        bound, _ = rank_grid_mu(
            members, nonmembers, alpha=ALPHA, n_simulations=simulations, rng=rng
        )
        bounds.append(bound)
    bounds = np.array(bounds)
    return bounds, truth, int(np.sum(bounds > truth + 1e-12))


@pytest.mark.parametrize(
    "name", ["gaussian-1", "lognormal-gaussian-1", "response-1", "histogram-1"]
)
def test_sound_on_gdp_mechanisms_reduced(name):
    bounds, truth, over = _audits(name, 150, 50, 499)
    assert over <= most_allowed(50)
    assert bounds.mean() > 0.2 * truth  # informative, not vacuous


def test_scale_free():
    """A rank test reads ranks only: the Gaussian mechanism and its log-normal image give
    the same bounds from the same seeds."""
    a, _, _ = _audits("gaussian-1", 60, 5, 199)
    b, _, _ = _audits("lognormal-gaussian-1", 60, 5, 199)
    np.testing.assert_array_equal(a, b)


NULL_LAWS = {  # no leakage: the same law with and without the target
    "lognormal": ("lognormal", (0.0, 2.0)),
    "student-t": ("standard_t", (1.5,)),
    "poisson": ("poisson", (2.0,)),
    "rare-bit": ("binomial", (1, 0.03)),
}


@pytest.mark.parametrize("law", sorted(NULL_LAWS))
def test_null_scores_certify_no_mu_beyond_alpha(law):
    method, parameters = NULL_LAWS[law]
    audits, positive = 80, 0
    for seed in range(audits):
        rng = np.random.default_rng([seed, 25])
        draw = getattr(rng, method)
        members = np.asarray(draw(*parameters, size=120), float)
        nonmembers = np.asarray(draw(*parameters, size=90), float)
        bound, _ = rank_grid_mu(members, nonmembers, alpha=ALPHA, n_simulations=499, rng=rng)
        positive += bound > 0
    assert positive <= most_allowed(audits)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_sound_on_gdp_mechanisms(name):
    """Fresh simulations per audit (the validity statement's randomness), 300 runs a side."""
    _, _, over = _audits(name, 300, 300, 1999)
    assert over <= most_allowed(300)
