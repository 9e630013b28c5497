"""Attribute inference pooled over the secret columns (issue #29): one exact, narrow row.

A column that the control guesses almost always right (Adult's capital-loss, 0 for about 95 %
of people) leaves ``1 − c`` near 0 and its risk interval near [−0.7, 0.7] whatever the
release. Guessing one random secret per record keeps one independent trial per record, so
the Clopper–Pearson intervals stay exact, and the risk is that of an attacker who targets a
random column: for a release that copies a share ``q`` of the members it is ``q`` again.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from sklearn_mace.disclosure import AttributeInferenceRisk
from tests.disclosure.test_linkability_ties import adult_like


@pytest.fixture(scope="module")
def tables():
    rng = np.random.default_rng(0)
    members, non_members, reference = (adult_like(n, rng) for n in (1000, 1000, 5000))
    half_copy = pd.concat([members.iloc[:500], reference.iloc[:4500]], ignore_index=True)
    return members, non_members, half_copy, reference


def test_half_copy_pooled_reads_the_planted_risk_with_a_narrow_interval(tables):
    # truth 0.5 for every column, so for the pooled attack too; 1 000 trials a side:
    # standard deviation about 0.03 (measured 0.507 [0.42, 0.58]); tolerance 0.1
    members, non_members, half_copy, _ = tables
    risk = AttributeInferenceRisk(random_state=0).fit(half_copy)
    per_column = risk.evaluate(members, non_members)
    pooled = risk.evaluate_pooled(members, non_members).loc["pooled"]
    assert pooled["kind"] == "pooled"
    assert pooled["risk"] == pytest.approx(0.5, abs=0.1)
    assert pooled["risk_low"] > 0.35
    widest = (per_column["risk_high"] - per_column["risk_low"]).max()  # capital_loss: 0.59
    assert pooled["risk_high"] - pooled["risk_low"] < widest / 2
    # its rates are those of a random column: the mean of the per-column rates, roughly
    assert pooled["control_rate"] == pytest.approx(per_column["control_rate"].mean(), abs=0.05)


def _misses(n_releases):
    misses = 0
    for seed in range(n_releases):
        rng = np.random.default_rng(100 + seed)
        release, targets, control = (adult_like(300, rng) for _ in range(3))
        result = AttributeInferenceRisk(random_state=seed).fit(release)
        row = result.evaluate_pooled(targets, control).loc["pooled"]
        misses += not row["risk_low"] <= 0 <= row["risk_high"]
    return misses


def test_fresh_releases_cover_zero():
    # valid intervals miss 0 with probability <= 0.05: fail above the 99.9 % quantile of
    # Binomial(n, 0.05)
    assert _misses(10) <= binom.ppf(0.999, 10, 0.05)


@pytest.mark.slow
def test_fresh_releases_cover_zero_slow():
    assert _misses(120) <= binom.ppf(0.999, 120, 0.05)
