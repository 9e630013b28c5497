"""The rank test's power on its worst case (``rank_grid_power``, issue #30): the card's power
sentence under ``certificate="rank_test"`` reads it. Ground truth: audits of randomized
response simulated directly — the rank grid run on the scores (fresh calibration each) and
the threshold rule certified by ``audit_epsilon`` — against the shortcut's estimate."""

import numpy as np
import pytest

from sklearn_mace.metrics import audit_epsilon
from sklearn_mace.metrics._rank_test import rank_grid_epsilon, rank_grid_power

N, AT_LEAST, TRUE_EPSILON, AUDITS = 100, 1.0, 1.5, 200


def response(rng, n, member, epsilon):
    keep = rng.random(n) < 1.0 / (1.0 + np.exp(-epsilon))
    return (keep == member).astype(float)


@pytest.fixture(scope="module")
def direct():
    """Per audit of randomized response at ε = 1.5: (rank test at α/2 above 1, point at α/2
    above 1), 100 runs per side."""
    out = []
    for seed in range(AUDITS):
        rng = np.random.default_rng([seed, 9])
        members = response(rng, N, True, TRUE_EPSILON)
        nonmembers = response(rng, N, False, TRUE_EPSILON)
        rank, _ = rank_grid_epsilon(members, nonmembers, alpha=0.025, n_simulations=999, rng=rng)
        point = audit_epsilon(members, nonmembers, threshold=0.5, confidence=0.975)
        out.append((rank > AT_LEAST, point.epsilon_lower_bound > AT_LEAST))
    return np.array(out)


def test_power_matches_audits_simulated_directly(direct):
    """Tolerance 0.11: the direct fraction's standard error is at most 0.035 (200 audits),
    the shortcut's 0.011 (2 000 draws); 0.11 is three of both combined."""
    rank = rank_grid_power(
        N, N, [TRUE_EPSILON], at_least=AT_LEAST, alpha=0.025, n_simulations=999,
        rng=np.random.default_rng(1),
    )[0]  # fmt: skip
    joint = rank_grid_power(
        N, N, [TRUE_EPSILON], at_least=AT_LEAST, alpha=0.025, n_simulations=999,
        point_level=0.025 / 2, rng=np.random.default_rng(1),
    )[0]  # fmt: skip
    assert rank == pytest.approx(direct[:, 0].mean(), abs=0.11)
    assert joint == pytest.approx(direct.any(axis=1).mean(), abs=0.11)
    assert 0.2 < rank < joint < 0.95  # an informative cell: neither 0 nor 1


def test_power_at_the_claim_is_at_most_alpha_and_grows():
    """On the worst case of a true claim the test rejects at most α of the time (its level);
    the same draws for every ε make the estimate non-decreasing."""
    grid = np.linspace(AT_LEAST, 2.5, 16)
    power = rank_grid_power(
        N, N, grid, at_least=AT_LEAST, alpha=0.05, n_simulations=999, n_power=4000,
        rng=np.random.default_rng(2),
    )  # fmt: skip
    assert power[0] <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 4000)
    assert np.all(np.diff(power) >= 0) and power[-1] > 0.95
