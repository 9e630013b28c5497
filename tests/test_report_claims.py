"""The audit's certified claims on data whose truth is known.

A release drawn independently of the members leaks nothing, so a release card may certify
leakage (any analysis's ε > 0, or MACE's advantage bound above the trivial |2p − 1|) in at
most α = 5 % of independent runs: the battery states its claims at 1 − α/6 each (Bonferroni),
so that all six hold together (five analyses' ε, one of them the exact-copy test, and MACE's
advantage bound). The default suite runs a reduced number of null audits; the
full count is behind ``slow``.
"""

import numpy as np
import pytest
from scipy.stats import binom

from sklearn_mace.report import _battery, audit
from tests.audit_data import audit_tables

ALPHA = 0.05


@pytest.fixture(autouse=True)
def _full_release_only(monkeypatch):
    # the advantage-vs-size curve is a figure, not a claim: skip its refits to save time
    monkeypatch.setattr(_battery, "SIZE_FRACTIONS", (1.0,))


def _null_flags(seeds):
    """For each seed: did the audit certify leakage on a release that has none?"""
    flags = []
    for seed in seeds:
        members, non_members, releases = audit_tables(seed=seed)
        result = audit(
            members, non_members, {"safe": releases["safe"]}, random_state=seed, verbose=False
        )
        (release,) = result.releases
        assert np.isfinite(release.summary["epsilon_at_least"]).all()
        flags.append(release.certified_leak)
    return np.array(flags)


def _max_flags(n_runs, miss=1e-3):
    """Largest number of false flags consistent with a rate <= α: exceeded with probability
    at most ``miss`` when the claims are valid (binomial tail), so the test is not flaky."""
    return int(binom.ppf(1 - miss, n_runs, ALPHA))


def test_null_releases_rarely_flagged():
    flags = _null_flags(range(100, 104))
    # at most 2 of 4: a coarse smoke check of the path the slow test below measures with
    # 100 runs, which has the power to catch a rate a few points above α
    assert flags.sum() <= _max_flags(4), flags


@pytest.mark.slow
def test_null_releases_flagged_at_most_alpha():
    flags = _null_flags(range(1000, 1100))
    assert flags.sum() <= _max_flags(100), flags.mean()  # at most 13 of 100


@pytest.mark.slow
def test_leaky_releases_always_flagged():
    # members copied with 5 % noise, so nearest-synthetic distances separate members from
    # non-members almost perfectly (the default suite checks seed 0 in test_cli.py)
    for seed in range(100, 110):
        members, non_members, releases = audit_tables(seed=seed)
        result = audit(
            members, non_members, {"leaky": releases["leaky"]}, random_state=seed, verbose=False
        )
        (release,) = result.releases
        assert release.certified_leak and result.verdict(release) != "low"
        assert release.strongest_epsilon > 0.5  # at most about 1.6 with 40 / 30 targets
