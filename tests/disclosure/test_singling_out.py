"""Singling-out risk: predicates by hand, planted copies, releases that know nothing."""

import functools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from sklearn_mace.disclosure import ControlCopyWarning, SinglingOutRisk, singling_out_risk


def _table(n, rng, heavy=False):
    columns = {
        "age": rng.integers(18, 90, n),
        "job": rng.choice(list("abcdefgh"), n, p=[0.4, 0.2, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05]),
        "town": rng.choice(list("xyzw"), n),
    }
    if heavy:  # heavy-tailed and skewed numeric columns
        columns["t"] = np.round(rng.standard_t(1.5, n), 1)
        columns["lognormal"] = np.round(rng.lognormal(0.0, 1.5, n), 1)
    return pd.DataFrame(columns)


def test_predicates_by_hand():
    release = pd.DataFrame({"age": [20, 30, 30, 40], "job": ["a", "b", "b", "b"]})
    risk = SinglingOutRisk(mode="univariate", random_state=0).fit(release)
    found = sorted(map(tuple, (tuple(term) for p in risk.predicates_ for term in p)))
    # unique values 20, 40 and "a"; the unique minimum 20 and maximum 40 again as <= / >=
    assert found == sorted(
        [
            ("age", "==", 20.0),
            ("age", "==", 40.0),
            ("age", "<=", 20.0),
            ("age", ">=", 40.0),
            ("job", "==", "a"),
        ]
    )
    targets = pd.DataFrame({"age": [20, 20, 40, 35], "job": ["a", "c", "b", "b"]})
    control = pd.DataFrame({"age": [50, 41, 39, 38], "job": ["c", "c", "c", "a"]})
    result = risk.evaluate(targets, control).loc["univariate"]
    # targets: age==20 holds twice (no), age==40 once, age<=20 twice, age>=40 once, job==a once
    # control: age==20/40 never, age<=20 never, age>=40 twice (50, 41), job==a once
    assert result["n_targets"] == result["n_control"] == 5
    assert result["attack_rate"] == pytest.approx(3 / 5)
    assert result["control_rate"] == pytest.approx(1 / 5)
    assert result["risk"] == pytest.approx((3 / 5 - 1 / 5) / (1 - 1 / 5))


def test_every_multivariate_predicate_singles_out_one_release_row():
    rng = np.random.default_rng(0)
    release = _table(300, rng)
    risk = SinglingOutRisk(n_queries=100, random_state=0).fit(release)
    assert 0 < len(risk.predicates_) <= 100
    for predicate in risk.predicates_:
        mask = np.ones(len(release), dtype=bool)
        for column, op, value in predicate:
            values = release[column].to_numpy()
            mask &= {"==": values == value, "<=": values <= value, ">=": values >= value}[op]
        assert mask.sum() == 1
        assert len(predicate) == 3


def test_risk_grows_with_the_members_copied():
    # a release of 1 000 rows that copies k members and fills up with fresh population rows
    rng = np.random.default_rng(1)
    members, non_members = _table(1000, rng, heavy=True), _table(1000, rng, heavy=True)
    risks = {}
    for k in (0, 500, 1000):
        release = pd.concat([members.iloc[:k], _table(1000 - k, rng, heavy=True)])
        risks[k] = singling_out_risk(members, non_members, release, random_state=0)
    for mode in ("univariate", "multivariate"):
        low, high = risks[0].loc[mode, ["risk_low", "risk_high"]]
        assert low <= 0 <= high
        assert risks[500].loc[mode, "risk_low"] > 0
        assert risks[1000].loc[mode, "risk_low"] > 0.9
        assert (
            risks[0].loc[mode, "risk"]
            < risks[500].loc[mode, "risk"]
            < risks[1000].loc[mode, "risk"]
        )


def _misses(n_releases):
    """Releases drawn from the population alone: how often an interval misses the risk 0."""
    misses = {"univariate": 0, "multivariate": 0}
    for seed in range(n_releases):
        rng = np.random.default_rng(seed)
        heavy = seed % 2 == 1
        tables = [_table(500, rng, heavy) for _ in range(3)]
        with warnings.catch_warnings():
            # low-cardinality tables hold chance copies of controls; not the subject here
            warnings.simplefilter("ignore", ControlCopyWarning)
            result = singling_out_risk(*tables, n_queries=300, random_state=seed)
        for mode in result.index:
            low, high = result.loc[mode, ["risk_low", "risk_high"]]
            misses[mode] += not low <= 0 <= high
    return misses


def _at_most_alpha(n_releases):
    # each interval misses with probability <= 1 - confidence = 0.05 if it is valid; fail only
    # above the 99.9 % quantile of Binomial(n, 0.05). Measured: 0 misses of 60 per mode.
    limit = binom.ppf(0.999, n_releases, 0.05)
    for mode, count in _misses(n_releases).items():
        assert count <= limit, (mode, count)


def test_fresh_releases_cover_zero():
    _at_most_alpha(12)


@pytest.mark.slow
def test_fresh_releases_cover_zero_slow():
    _at_most_alpha(120)


def test_sets_of_different_sizes_are_searched_at_the_same_size():
    rng = np.random.default_rng(2)
    release = _table(400, rng)
    risk = SinglingOutRisk(n_queries=50, random_state=0).fit(release)
    # the release's own rows as targets, three times as many controls: subsampled to 400
    control = _table(1200, rng)
    result = risk.evaluate(release, control).loc["multivariate"]
    assert result["attack_rate"] == 1.0
    assert result["control_rate"] < 0.6


def test_bad_input():
    duplicated = pd.DataFrame({"a": [1, 1, 2, 2], "b": ["x", "x", "y", "y"]})
    with pytest.raises(ValueError, match="No multivariate predicate singles out"):
        SinglingOutRisk().fit(duplicated)
    empty = singling_out_risk(duplicated, duplicated, duplicated, random_state=0)
    assert empty.empty
    with pytest.raises(ValueError, match="mode"):
        SinglingOutRisk(mode="bivariate").fit(duplicated)


def test_screened_search_keeps_exactly_the_attempts_that_single_out_one_row(monkeypatch):
    # issue #28: the multivariate search rejects attempts on the first release rows; every
    # attempt must still be kept iff it holds for exactly one row of the whole release
    from sklearn_mace.disclosure import _singling_out
    from sklearn_mace.disclosure._singling_out import _SCREENS, _screened_counts

    rng = np.random.default_rng(0)
    n = _SCREENS[-1] + 3000
    release = pd.DataFrame(
        {
            "a": rng.integers(0, 40, n).astype(float),
            "b": rng.choice(list("pqrstu"), n),
            "c": np.round(rng.normal(size=n), 1),
            "d": rng.choice(list("xy"), n),
        }
    )
    risk = SinglingOutRisk(mode="multivariate", random_state=0).fit(release)
    encoded = risk._table.shuffled()  # the release as the search reads it, in one piece
    numeric = np.array([kind == "numeric" for kind in risk.column_kinds_])
    medians = np.array(
        [np.median(c) if k else np.nan for c, k in zip(encoded, numeric, strict=True)]
    )
    np.testing.assert_array_equal(risk._medians(), medians)
    positions = rng.integers(n, size=3000)  # places in the shuffle
    rows = risk._order[positions]
    chosen = np.sort(np.argsort(rng.random((3000, 4)), axis=1)[:, :3], axis=1)
    screen = np.stack([c[: _SCREENS[-1]] for c in encoded]).astype(float)
    values = np.column_stack([c[positions] for c in encoded]).astype(float)
    full = risk._counts(rows, chosen, medians=medians)
    counts_of = functools.partial(risk._counts, medians=medians)
    screened = _screened_counts(screen, n, values, rows, chosen, counts_of, numeric, medians)
    assert 5 < (full == 1).sum() < 2900  # both outcomes occur
    np.testing.assert_array_equal(screened == 1, full == 1)
    # the counts, taken 1 000 release rows at a time, are those over the whole encoding
    brute = np.ones((200, n), dtype=bool)
    for i in range(200):
        for j in chosen[i]:
            value, column = values[i, j], encoded[j]
            if not numeric[j]:
                brute[i] &= column == value
            elif value >= medians[j]:
                brute[i] &= column >= value
            else:
                brute[i] &= column <= value
    np.testing.assert_array_equal(full[:200], brute.sum(axis=1))
    monkeypatch.setattr(_singling_out, "_COUNT_BLOCK", 1000)
    np.testing.assert_array_equal(risk._counts(rows, chosen, medians=medians), full)


@pytest.mark.parametrize("scale", [1.0, 3.0, 0.37, 1e6, 7e-300, 2e300])
@pytest.mark.parametrize("upper", [True, False])
def test_raw_bound_splits_the_doubles_as_the_encoding_does(scale, upper):
    # issue #28: multivariate counts compare raw values against a bound, not x / r against
    # the value; every double near the bound (and at random) must fall on the same side
    from sklearn_mace.disclosure._singling_out import _raw_bound

    rng = np.random.default_rng(int(scale * 1000) % 2**32)
    raws = [0.0, -0.0, 5e-324, -5e-324, 1.0, -2.5, 1e-310, *rng.normal(size=20) * scale]
    for raw in raws:
        value = raw / scale
        t = _raw_bound(raw, scale, value, upper)
        near = [t]
        for direction in (-np.inf, np.inf):
            x = t
            for _ in range(12):
                x = np.nextafter(x, direction)
                near.append(x)
        xs = np.array([*near, raw, *(rng.normal(size=200) * scale * 2)])
        if upper:
            np.testing.assert_array_equal(xs >= t, xs / scale >= value)
        else:
            np.testing.assert_array_equal(xs <= t, xs / scale <= value)
