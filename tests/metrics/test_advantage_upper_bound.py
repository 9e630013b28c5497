"""The certified upper bound on every threshold rule's advantage (the sample's best plus one
rule's Hoeffding deviation), and its two planners, against ground truth.

* Coverage: on score distributions whose best threshold advantage is known (two Gaussians in
  closed form; Cauchy and Poisson scores on an exact grid), the (1 − α) upper bound is below
  the truth in at most α of the runs — counted against the binomial 0.999 quantile of
  Bin(runs, α), exceeded with probability at most 0.001 when the bound is valid. Several
  sizes (balanced, ten times more of one side), priors ½ and 0.2, no leak and strong leaks,
  heavy-tailed and discrete (tied) scores.
* :func:`bounded_sample_size`: at the planned size, simulated leak-free analyses are all
  bounded within the margin in at least the planned 80 % of runs.
* :func:`detectable_epsilon`: at the returned ε, simulated randomized-response audits
  certify ε above the claim in at least 80 % of runs, and it agrees with
  :func:`audit_sample_size`.
"""

import numpy as np
import pytest
from scipy.stats import binom, cauchy, norm, poisson

from sklearn_mace.metrics import (
    advantage_deviation,
    advantage_upper_bound,
    audit_epsilon,
    audit_sample_size,
    bounded_sample_size,
    detectable_epsilon,
)

ALPHA = 0.05


def _gaussian_truth(shift, prior):
    """Best threshold advantage of N(shift, 1) members against N(0, 1) non-members."""
    trivial = abs(2 * prior - 1)
    if shift == 0:
        return trivial
    t = shift / 2 + np.log((1 - prior) / prior) / shift  # the likelihood-ratio threshold
    best = 2 * (prior * norm.sf(t - shift) + (1 - prior) * norm.cdf(t)) - 1
    return max(best, trivial)


def _grid_truth(sf_member, cdf_nonmember, thresholds, prior):
    """max |A(t)| over the grid, ±∞ included: TPR = P(S1 >= t), TNR = P(S0 < t)."""
    tpr, tnr = sf_member(thresholds), cdf_nonmember(thresholds)
    advantage = 2 * (prior * tpr + (1 - prior) * tnr) - 1
    return max(np.abs(advantage).max(), abs(2 * prior - 1))


DISTRIBUTIONS = {
    # name: (draw members, draw non-members, truth at a prior)
    "gaussian-null": (
        lambda rng, n: rng.normal(size=n),
        lambda rng, n: rng.normal(size=n),
        lambda p: _gaussian_truth(0.0, p),
    ),
    "gaussian-0.5": (
        lambda rng, n: rng.normal(0.5, 1, size=n),
        lambda rng, n: rng.normal(size=n),
        lambda p: _gaussian_truth(0.5, p),
    ),
    "gaussian-2": (
        lambda rng, n: rng.normal(2.0, 1, size=n),
        lambda rng, n: rng.normal(size=n),
        lambda p: _gaussian_truth(2.0, p),
    ),
    "cauchy-1": (
        lambda rng, n: rng.standard_cauchy(n) + 1.0,
        lambda rng, n: rng.standard_cauchy(n),
        # P(S1 >= t) = sf(t − 1); continuous, so P(S0 < t) = cdf(t)
        lambda p: _grid_truth(
            lambda t: cauchy.sf(t - 1.0), cauchy.cdf, np.linspace(-200, 200, 400_001), p
        ),
    ),
    "poisson-2-3": (
        lambda rng, n: rng.poisson(3.0, n).astype(float),
        lambda rng, n: rng.poisson(2.0, n).astype(float),
        # integer thresholds t: P(S1 >= t) = sf(t − 1), P(S0 < t) = cdf(t − 1)
        lambda p: _grid_truth(
            lambda t: poisson.sf(t - 1, 3.0), lambda t: poisson.cdf(t - 1, 2.0), np.arange(40), p
        ),
    ),
    "binomial-null": (  # four values only: heavy ties, the bands are conservative
        lambda rng, n: rng.binomial(3, 0.5, n).astype(float),
        lambda rng, n: rng.binomial(3, 0.5, n).astype(float),
        lambda p: abs(2 * p - 1),
    ),
}
SIZES = [(50, 50), (200, 1000), (1000, 100)]


def misses(name, sizes, prior, runs, seed=0):
    """How often the upper bound falls below the true best threshold advantage."""
    draw_1, draw_0, truth = DISTRIBUTIONS[name]
    true = truth(prior)
    rng = np.random.default_rng(seed)
    count = 0
    for _ in range(runs):
        bound = advantage_upper_bound(
            draw_1(rng, sizes[0]), draw_0(rng, sizes[1]), prior=prior, confidence=1 - ALPHA
        )
        assert bound.trivial_advantage <= bound.advantage_estimate <= bound.advantage_upper_bound
        count += bound.advantage_upper_bound < true - 1e-12
    return count


def test_the_gaussian_truth_is_the_grid_maximum():
    # the closed form used as ground truth agrees with a brute-force maximum
    for shift, prior in [(0.5, 0.5), (2.0, 0.2)]:
        grid = _grid_truth(
            lambda t, s=shift: norm.sf(t - s), norm.cdf, np.linspace(-10, 10, 200_001), prior
        )
        assert _gaussian_truth(shift, prior) == pytest.approx(grid, abs=1e-6)


@pytest.mark.parametrize("name", list(DISTRIBUTIONS))
@pytest.mark.parametrize("sizes", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("prior", [0.5, 0.2])
def test_upper_bound_covers_the_truth(name, sizes, prior):
    runs = 100
    assert misses(name, sizes, prior, runs) <= binom.ppf(0.999, runs, ALPHA)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DISTRIBUTIONS))
@pytest.mark.parametrize("prior", [0.5, 0.2])
def test_upper_bound_covers_the_truth_in_many_runs(name, prior):
    runs = 2000
    for sizes in SIZES:
        assert misses(name, sizes, prior, runs, seed=1) <= binom.ppf(0.999, runs, ALPHA)


def test_upper_bound_is_tight_enough_to_bound_a_large_null_sample():
    rng = np.random.default_rng(3)
    bound = advantage_upper_bound(rng.normal(size=5000), rng.normal(size=5000))
    # Hoeffding at α/2 = 0.025: sqrt(ln 40 · (1/5000 + 1/5000) / 2) = 0.0272
    assert bound.deviation == pytest.approx(np.sqrt(np.log(40) / 5000), rel=1e-9)
    assert bound.advantage_upper_bound < 0.06
    assert advantage_deviation(5000, 5000, 0.5, 0.025) == pytest.approx(bound.deviation)


def test_upper_bound_is_one_for_separated_scores_and_prior_aware():
    bound = advantage_upper_bound(np.arange(100.0) + 1000, np.arange(100.0), prior=0.3)
    assert bound.advantage_estimate == pytest.approx(1.0)
    assert bound.advantage_upper_bound == 1.0 and np.isinf(bound.advantage_epsilon_upper_bound)
    assert bound.trivial_advantage == pytest.approx(0.4)


def test_upper_bound_of_a_reversed_score_is_the_same():
    rng = np.random.default_rng(4)
    members, non_members = rng.normal(1, 1, 300), rng.normal(0, 1, 300)
    forward = advantage_upper_bound(members, non_members)
    backward = advantage_upper_bound(-members, -non_members)
    assert forward.advantage_upper_bound == pytest.approx(backward.advantage_upper_bound)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"prior": 1.0}, "prior"),
        ({"confidence": 0.0}, "confidence"),
        ({"delta": 1.0}, "delta"),
    ],
    ids=["prior", "confidence", "delta"],
)
def test_upper_bound_refuses_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        advantage_upper_bound([1.0, 2.0], [0.0, 1.0], **kwargs)
    with pytest.raises(ValueError, match="nonmember_scores"):
        advantage_upper_bound([1.0], [np.nan])


# ----------------------------------------------------------------------------- planners
def _all_bounded(plan, rng):
    """One simulated null card: n_analyses independent analyses, every bound within."""
    level = 1 - (1 - plan.confidence) / plan.n_analyses
    limit = abs(2 * plan.prior - 1) + plan.margin
    for _ in range(plan.n_analyses):
        bound = advantage_upper_bound(
            rng.normal(size=plan.n_members),
            rng.normal(size=plan.n_nonmembers),
            prior=plan.prior,
            confidence=level,
        )
        if bound.advantage_upper_bound > limit:
            return False
    return True


@pytest.mark.parametrize(
    "kwargs",
    [
        {"margin": 0.25, "n_analyses": 3},
        {"margin": 0.3, "n_analyses": 2, "prior": 0.25, "nonmember_ratio": 3.0},
    ],
    ids=["balanced", "prior-0.25"],
)
def test_bounded_sample_size_reaches_its_power(kwargs):
    plan = bounded_sample_size(**kwargs)
    assert plan.power >= 0.8
    rng = np.random.default_rng(5)
    runs = 100
    bounded = sum(_all_bounded(plan, rng) for _ in range(runs))
    # at least 80 % (the plan's power is a lower bound), up to the 0.001 binomial tail
    assert bounded >= binom.ppf(0.001, runs, 0.8), bounded


def test_bounded_sample_size_grows_with_the_family_and_a_smaller_margin():
    one = bounded_sample_size(0.2)
    assert bounded_sample_size(0.2, n_analyses=9).n_members > one.n_members
    assert bounded_sample_size(0.1).n_members > 3 * one.n_members  # about (0.2/0.1)²
    with pytest.raises(ValueError, match="margin"):
        bounded_sample_size(1.5)
    with pytest.raises(ValueError, match="n_analyses"):
        bounded_sample_size(0.1, n_analyses=0)


def test_detectable_epsilon_reaches_its_power():
    n, claim, level = 200, 1.0, 0.99
    epsilon = detectable_epsilon(n, n, at_least=claim, confidence=level)
    assert claim < epsilon < 4
    rate = 1 / (1 + np.exp(epsilon))  # randomized response at ε: both error rates
    rng = np.random.default_rng(6)
    runs, certified = 200, 0
    for _ in range(runs):
        members = (rng.random(n) >= rate).astype(float)  # 1 = guessed member
        non_members = (rng.random(n) < rate).astype(float)
        audit = audit_epsilon(members, non_members, threshold=1.0, confidence=level)
        certified += audit.epsilon_lower_bound > claim
    assert certified >= binom.ppf(0.001, runs, 0.8), certified


def test_detectable_epsilon_inverts_audit_sample_size():
    plan = audit_sample_size(epsilon=1.5, at_least=0.5)
    assert detectable_epsilon(plan.n_members, plan.n_nonmembers, at_least=0.5) <= 1.5 + 0.05
    assert np.isinf(detectable_epsilon(3, 3, at_least=1.0))  # 3 runs contradict nothing
