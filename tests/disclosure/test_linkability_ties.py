"""Linkability with ties kept (issue #29): a half-copy reads its planted risk of 0.5.

anonymeter keeps exactly ``n_neighbors`` release rows per view, breaking ties in release
order; on Adult-like tables a view of a few categorical columns puts hundreds of release rows
at distance 0, so a member copied into the release rarely keeps its own row in both views and
the risk of a half-copy reads 0.13 (issue #29). With every tied row kept, a copied member
always links through its own row: ``a = q + (1 − q)·c`` for a release that copies a share
``q`` of the members, and the risk ``(a − c)/(1 − c)`` is ``q``.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.disclosure import LinkabilityRisk
from sklearn_mace.disclosure._linkability import random_link_rate, random_link_rates


def adult_like(n, rng):
    """Adult's column types: a few numbers, many low-cardinality categories, skewed."""
    return pd.DataFrame(
        {
            "age": rng.integers(17, 90, n),
            "workclass": rng.choice(list("abcdefg"), n, p=[0.7, 0.1, 0.05, 0.05, 0.04, 0.03, 0.03]),
            "fnlwgt": rng.integers(10_000, 1_000_000, n),
            "education": rng.choice(list("abcdefghijklmnop"), n),
            "marital": rng.choice(list("abcdefg"), n),
            "occupation": rng.choice(list("abcdefghijklmn"), n),
            "relationship": rng.choice(list("abcdef"), n),
            "race": rng.choice(list("abcde"), n, p=[0.85, 0.1, 0.03, 0.01, 0.01]),
            "sex": rng.choice(list("fm"), n),
            "capital_gain": np.where(rng.random(n) < 0.92, 0, rng.integers(100, 99_999, n)),
            "capital_loss": np.where(rng.random(n) < 0.95, 0, rng.integers(100, 4_000, n)),
            "hours": rng.choice([40] * 6 + [20, 30, 45, 50, 60], n),
            "country": rng.choice(list("abcdefghij"), n, p=[0.9] + [0.1 / 9] * 9),
            "income": rng.choice(["<=50K", ">50K"], n, p=[0.76, 0.24]),
        }
    )


@pytest.fixture(scope="module")
def tables():
    rng = np.random.default_rng(0)
    members, non_members, reference = (
        adult_like(1000, rng),
        adult_like(1000, rng),
        adult_like(5000, rng),
    )
    half_copy = pd.concat([members.iloc[:500], reference.iloc[:4500]], ignore_index=True)
    return members, non_members, half_copy, reference


@pytest.mark.parametrize("n_neighbors", [1, 5])
def test_half_copy_reads_its_planted_risk(tables, n_neighbors):
    # truth 0.5; 1 000 targets and controls: standard deviation of the risk about 0.02-0.03
    # (measured 0.507 and 0.506); tolerance 0.08. anonymeter's rule reads 0.08-0.13 here.
    members, non_members, half_copy, _ = tables
    kept = LinkabilityRisk(n_neighbors=n_neighbors, random_state=0).fit(half_copy)
    result = kept.evaluate(members, non_members).iloc[0]
    assert result["risk"] == pytest.approx(0.5, abs=0.08)
    assert result["risk_low"] > 0.4
    assert result["risk_low"] <= 0.5 <= result["risk_high"]
    anonymeter = LinkabilityRisk(n_neighbors=n_neighbors, ties="random", random_state=0)
    weak = anonymeter.fit(half_copy).evaluate(members, non_members).iloc[0]
    assert weak["risk"] < 0.25


def test_fresh_release_covers_zero(tables):
    members, non_members, _, reference = tables
    for n_neighbors in (1, 5):
        risk = LinkabilityRisk(n_neighbors=n_neighbors, random_state=0).fit(reference)
        result = risk.evaluate(members, non_members).iloc[0]
        assert result["risk_low"] <= 0 <= result["risk_high"]
        # the baseline is random linking with the sets found: the control's rate
        assert result["baseline_rate"] == pytest.approx(result["control_rate"], abs=0.03)


def test_random_link_rates_by_simulation():
    # 20 000 pairs of random subsets: standard error <= 0.0036; tolerance 0.015
    rng = np.random.default_rng(0)
    n, a, b = 50, 4, 9
    hits = [
        bool(set(rng.choice(n, a, replace=False)) & set(rng.choice(n, b, replace=False)))
        for _ in range(20_000)
    ]
    assert np.mean(hits) == pytest.approx(random_link_rates(n, [a], [b])[0], abs=0.015)
    assert random_link_rates(10, [6], [5])[0] == 1.0
    assert random_link_rates(100, [3], [3])[0] == pytest.approx(random_link_rate(100, 3))


def test_ties_keep_every_row_at_the_minimum_distance():
    release = pd.DataFrame({"a": ["x", "x", "y", "z"], "b": ["u", "v", "v", "v"]})
    records = pd.DataFrame({"a": ["x", "y"], "b": ["u", "u"]})
    kept = LinkabilityRisk(random_state=0).fit(release)
    # record 0: view a ties rows {0, 1}, view b is row {0}: linked. record 1: a -> {2},
    # b -> {0}: not linked
    np.testing.assert_array_equal(kept.predict(records), [True, False])
    with pytest.raises(ValueError, match="ties"):
        LinkabilityRisk(ties="first").fit(release)
