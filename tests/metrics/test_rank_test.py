"""The two-tail rank test of a DP claim (issue #30, ``sklearn_mace/metrics/_rank_test.py``).

Ground truth: randomized response at ε (one bit, kept with probability e^ε/(1 + e^ε)) is the
extremal ε-DP pair, so on it the test's level is exact (α of the audits certify above ε,
not fewer); the DP histogram's count (rounded Laplace), the discrete Laplace mechanism,
asymmetric randomized response and the Gaussian mechanism at δ > 0 are ε-DP at known ε
and lie strictly inside; with no leakage nothing above 0 may be certified beyond α, on
skewed, heavy-tailed and discrete scores alike.
"""

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binom

from sklearn_mace.metrics._fdp import gaussian_epsilon
from sklearn_mace.metrics._rank_test import (
    _entry_times,
    critical_epsilons,
    rank_grid_epsilon,
    rank_pairs,
    rank_statistic,
    rank_test_epsilon,
)

ALPHA = 0.05


def most_allowed(n_audits, alpha=ALPHA):
    """Audits allowed over ``alpha``: the binomial's 99.9 % quantile (a sound test fails
    this check in about 1 of 1 000 runs)."""
    return int(binom.isf(0.001, n_audits, alpha))


def extremal(u, epsilon, delta=0.0):
    return np.minimum(
        1.0, np.minimum(np.exp(epsilon) * u + delta, 1 - np.exp(-epsilon) * (1 - u - delta))
    )


# ------------------------------------------------------------------ the pieces, exactly


@pytest.mark.parametrize("delta", [0.0, 1e-3, 0.1])
def test_entry_time_is_where_the_extremal_curve_crosses_the_level(delta, rng):
    u, level = rng.uniform(0, 1, 300), rng.uniform(0, 1, 300)
    got = _entry_times(u, level, delta)
    for ui, li, gi in zip(u, level, got, strict=True):
        if extremal(ui, 0.0, delta) > li:
            assert gi == 0.0
        else:  # the least θ with h*_θ(u) > level, by root finding on the curve itself
            root = brentq(lambda e, ui=ui, li=li: extremal(ui, e, delta) - li, 0.0, 50.0)
            assert gi == pytest.approx(root, abs=1e-9)


def test_statistic_counts_both_tails_with_random_tie_breaks():
    members = np.array([5.0, 4.0, 3.0, 1.0, 0.0])
    nonmembers = np.array([3.5, 2.0, 1.5, 0.5, -1.0])
    rng = np.random.default_rng(0)
    # above the 2nd highest non-member (2.0): 5, 4, 3; below the 2nd lowest member (1.0):
    # 0.5, −1
    assert rank_statistic(members, nonmembers, 1, 1, rng) == 5
    assert rank_statistic(members, nonmembers, 1, None, rng) == 3
    assert rank_statistic(members, nonmembers, None, 1, rng) == 2
    # all tied: the keys decide, so the count is a uniformly random rank
    counts = [rank_statistic(np.zeros(3), np.zeros(3), 0, None, rng) for _ in range(3000)]
    # members above the top non-member among 6 exchangeable runs: 0..3 w.p. 3/6, 3/10...
    expected = [0.5, 0.3, 0.15, 0.05]
    np.testing.assert_allclose(np.bincount(counts, minlength=4) / 3000, expected, atol=0.03)


def test_statistic_is_monotone_in_the_members_and_non_members(rng):
    """Step 1 of the argument: raising a member or lowering a non-member never lowers T."""
    for _ in range(200):
        members = rng.integers(0, 6, 12).astype(float)
        nonmembers = rng.integers(0, 6, 12).astype(float)
        k_high, k_low = rng.integers(0, 12, 2)
        seed = int(rng.integers(1 << 30))
        t = rank_statistic(members, nonmembers, k_high, k_low, np.random.default_rng(seed))
        up, down = members.copy(), nonmembers.copy()
        up[rng.integers(12)] += rng.integers(1, 3)
        down[rng.integers(12)] -= rng.integers(1, 3)
        for m, n in ((up, nonmembers), (members, down)):
            assert rank_statistic(m, n, k_high, k_low, np.random.default_rng(seed)) >= t


def test_the_simulated_law_is_the_extremal_pairs(rng):
    """The entry-time shortcut gives the same law of T at θ as scoring the extremal pair
    directly: compare means and upper quantiles over 4 000 draws each."""
    n, m, k, theta = 60, 50, 6, 1.2
    pairs = [(k, k)]
    table = critical_epsilons(
        n, m, pairs, delta=0.0, alpha=0.5, n_simulations=1, rng=rng, chunk=1
    )  # smoke: one draw
    assert table[0].shape == (n + m,)
    direct = [
        rank_statistic(extremal(rng.random(n), theta), rng.random(m), k, k, rng)
        for _ in range(4000)
    ]
    U, V = rng.random((4000, n)), rng.random((4000, m))
    level = np.sort(V, axis=1)[:, m - k - 1 : m - k]
    x = np.sort(U, axis=1)[:, k : k + 1]
    shortcut = (_entry_times(U, level, 0.0) < theta).sum(1) + (_entry_times(x, V, 0.0) < theta).sum(
        1
    )
    assert np.mean(direct) == pytest.approx(np.mean(shortcut), rel=0.02)
    for q in (0.5, 0.9, 0.95):
        assert abs(np.quantile(direct, q) - np.quantile(shortcut, q)) <= 2


def test_critical_values_are_monotone_and_ranked_as_documented(rng):
    n = 40
    tables = critical_epsilons(
        n, n, rank_pairs(n, n), delta=0.0, alpha=0.05, n_simulations=199, rng=rng
    )
    for table in tables:
        assert np.all(np.diff(table) >= 0)
        assert table[0] == 0.0  # one member above: no evidence against ε = 0
    # the grid depends on the sizes only; few runs round fractions together, tested once
    assert rank_pairs(4, 3) == [(0, 0), (1, 1), (0, None), (1, None), (None, 0), (None, 1)]
    # fewer than 1/α draws cannot reject anything
    assert critical_epsilons(
        n, n, [(3, 3)], delta=0.0, alpha=0.05, n_simulations=10, rng=rng, ts=[80]
    ) == [0.0]


# ------------------------------------------------------------------ validity, simulated


def response(rng, n, member, epsilon):
    keep = rng.random(n) < 1.0 / (1.0 + np.exp(-epsilon))
    return (keep == member).astype(float)


def histogram(rng, n, member, epsilon):
    return np.rint(member + rng.laplace(0.0, 1 / epsilon, n))


def discrete_laplace(rng, n, member, epsilon):
    a = np.exp(-epsilon)
    return (rng.geometric(1 - a, n) - rng.geometric(1 - a, n) + member).astype(float)


def asymmetric(rng, n, member, epsilon, q=0.05):
    return (rng.random(n) < (q * np.exp(epsilon) if member else q)).astype(float)


def _audits(draw, epsilon, n, audits, simulations, delta=0.0, truth=None):
    truth = epsilon if truth is None else truth
    bounds = []
    for seed in range(audits):
        rng = np.random.default_rng([seed, 11])
        members, nonmembers = draw(rng, n, True, epsilon), draw(rng, n, False, epsilon)
        bound, _ = rank_grid_epsilon(
            members, nonmembers, delta=delta, alpha=ALPHA, n_simulations=simulations, rng=rng
        )
        bounds.append(bound)
    bounds = np.array(bounds)
    return bounds, int(np.sum(bounds > truth + 1e-12))


def test_level_is_exact_on_the_extremal_pair():
    """Randomized response is the worst case: one test at α certifies above the true ε in
    about α of the audits (fresh simulations each), no more and not much fewer."""
    hits = 0
    audits = 400
    for seed in range(audits):
        rng = np.random.default_rng([seed, 3])
        members, nonmembers = response(rng, 80, True, 1.0), response(rng, 80, False, 1.0)
        hits += (
            rank_test_epsilon(members, nonmembers, 15, 15, alpha=ALPHA, n_simulations=199, rng=rng)
            > 1.0
        )
    assert hits <= most_allowed(audits)
    assert hits >= binom.ppf(0.001, audits, ALPHA)  # exact, not merely conservative


@pytest.mark.parametrize(
    "draw, epsilon",
    [(histogram, 1.0), (response, 2.0), (asymmetric, 2.0), (discrete_laplace, 1.0)],
    ids=["histogram-1", "response-2", "asymmetric-2", "discrete-laplace-1"],
)
def test_sound_on_dp_mechanisms_reduced(draw, epsilon):
    bounds, over = _audits(draw, epsilon, 150, 50, 499)
    assert over <= most_allowed(50)
    assert bounds.mean() > 0.2 * epsilon  # informative, not vacuous


def gaussian(rng, n, member, mu):
    return rng.normal(mu * member, 1.0, n)


NULL_LAWS = {  # no leakage: the same law with and without the target
    "lognormal": ("lognormal", (0.0, 2.0)),
    "cauchy": ("standard_cauchy", ()),
    "poisson": ("poisson", (2.0,)),
    "rare-bit": ("binomial", (1, 0.03)),
}


@pytest.mark.parametrize("law", sorted(NULL_LAWS))
def test_null_scores_certify_nothing_beyond_alpha(law):
    method, parameters = NULL_LAWS[law]
    audits, positive = 80, 0
    for seed in range(audits):
        rng = np.random.default_rng([seed, 5])
        draw = getattr(rng, method)
        members = np.asarray(draw(*parameters, size=120), float)
        nonmembers = np.asarray(draw(*parameters, size=90), float)
        bound, _ = rank_grid_epsilon(members, nonmembers, alpha=ALPHA, n_simulations=499, rng=rng)
        positive += bound > 0
    assert positive <= most_allowed(audits)


@pytest.mark.slow
@pytest.mark.parametrize(
    "draw, epsilon, delta, truth",
    [
        (histogram, 1.0, 0.0, 1.0),
        (histogram, 0.5, 0.0, 0.5),
        (histogram, 2.0, 0.0, 2.0),
        (response, 1.0, 0.0, 1.0),
        (response, 2.0, 0.0, 2.0),
        (response, 3.0, 0.0, 3.0),
        (asymmetric, 1.0, 0.0, 1.0),
        (asymmetric, 2.0, 0.0, 2.0),
        (discrete_laplace, 1.0, 0.0, 1.0),
        (gaussian, 1.0, 1e-3, gaussian_epsilon(1.0, 1e-3)),
    ],
    ids=[
        "histogram-1",
        "histogram-0.5",
        "histogram-2",
        "response-1",
        "response-2",
        "response-3",
        "asymmetric-1",
        "asymmetric-2",
        "discrete-laplace-1",
        "gaussian-delta",
    ],
)
def test_sound_on_dp_mechanisms(draw, epsilon, delta, truth):
    """Fresh simulations per audit (the validity statement's randomness), 300 runs a side."""
    _, over = _audits(draw, epsilon, 300, 300, 1999, delta=delta, truth=truth)
    assert over <= most_allowed(300)
