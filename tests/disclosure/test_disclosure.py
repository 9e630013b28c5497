"""Attribute-inference and linkability risks (sklearn_mace.disclosure) against ground truth."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.disclosure import (
    AttributeInferenceRisk,
    LinkabilityRisk,
    SinglingOutRisk,
    disclosure_summary,
)
from sklearn_mace.disclosure._linkability import random_link_rate
from sklearn_mace.disclosure._mixed import MixedTable
from sklearn_mace.disclosure._rates import clopper_pearson, residual_risk


@parametrize_with_checks(
    [
        AttributeInferenceRisk(),
        AttributeInferenceRisk(secrets=0, n_neighbors=3),
        LinkabilityRisk(),
        # the default, multivariate mode; the univariate mode refuses check_estimators_dtypes'
        # 20 rows of three integer values (no value singles out a row), which is right
        SinglingOutRisk(),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def population(n, rng):
    """Adult-like rows: continuous, integer and categorical columns with dependencies."""
    age = rng.uniform(18, 80, n)
    education = rng.choice(["hs", "college", "master", "phd"], n, p=[0.4, 0.3, 0.2, 0.1])
    years = pd.Series(education).map({"hs": 9, "college": 13, "master": 15, "phd": 18})
    income = np.exp(9 + 0.02 * age + 0.08 * years.to_numpy() + rng.normal(0, 0.5, n))
    return pd.DataFrame(
        {
            "age": age,
            "education": education,
            "years": years.to_numpy(),
            "income": income,
            "sick": np.where(rng.random(n) < 0.1 + 0.004 * age, "yes", "no"),
            "hours": rng.normal(40, 8, n),
        }
    )


def gower_reference(query, release, kinds, columns):
    """Obviously-correct distances, one pair at a time (the docstring's formula)."""
    out = np.zeros((len(query), len(release)))
    for i in range(len(query)):
        for r in range(len(release)):
            for j in columns:
                a, b = query.iloc[i, j], release.iloc[r, j]
                if kinds[j] == "numeric":
                    spread = release.iloc[:, j].max() - release.iloc[:, j].min()
                    out[i, r] += abs(a - b) / (spread if spread > 0 else 1.0)
                else:
                    out[i, r] += float(str(a) != str(b))
    return out


def test_gower_neighbours_match_the_pairwise_formula(rng):
    release, query = population(60, rng), population(15, rng)
    release.columns = query.columns = range(release.shape[1])
    table = MixedTable(release, list("abcdef"))
    encoded = table.encode(query)
    for columns in ([0, 1, 2, 3, 4, 5], [1, 4], [0]):
        reference = gower_reference(query, release, table.kinds, columns)
        idx = table.kneighbors(encoded, columns, 4)
        expected = np.sort(reference, axis=1)[:, :4]
        assert np.allclose(np.take_along_axis(reference, idx, axis=1), expected, atol=1e-12)
    loo = table.kneighbors_leave_one_out(encoded, [0, 3, 5], 2)
    for s, idx in loo.items():
        reference = gower_reference(query, release, table.kinds, [j for j in range(6) if j != s])
        expected = np.sort(reference, axis=1)[:, :2]
        assert np.allclose(np.take_along_axis(reference, idx, axis=1), expected, atol=1e-12)


def test_clopper_pearson_is_scipys_exact_interval():
    for k, n in [(0, 20), (7, 20), (20, 20), (313, 1000)]:
        expected = binomtest(k, n).proportion_ci(0.9, method="exact")
        assert clopper_pearson(k, n, 0.9) == pytest.approx((expected.low, expected.high))


def test_residual_risk_interval_covers_by_simulation():
    """Binomial draws at known rates: the risk interval covers (a−c)/(1−c) ≥ 95 % of the time.

    2000 draws for each of three (a, c) pairs; the interval is conservative (Bonferroni and
    Clopper–Pearson), so coverage sits near 0.99. The check ≥ 0.95 − 3·√(0.95·0.05/2000)
    = 0.9354 fails for a true coverage of 0.92 with probability > 0.9.
    """
    rng = np.random.default_rng(1)
    for a, c in [(0.3, 0.3), (0.6, 0.2), (0.9, 0.85)]:
        truth = (a - c) / (1 - c)
        k_a, k_c = rng.binomial(300, a, 2000), rng.binomial(200, c, 2000)
        covered = [
            low <= truth <= high
            for low, high in (
                residual_risk(x, 300, y, 200, 0.95)[1:] for x, y in zip(k_a, k_c, strict=True)
            )
        ]
        assert np.mean(covered) >= 0.9354


def test_residual_risk_edges():
    risk, low, high = residual_risk(100, 100, 10, 100, 0.95)
    assert risk == 1.0 and high == 1.0 and 0.8 < low < 1.0
    with pytest.warns(RuntimeWarning, match="Every control attack succeeded"):
        risk, low, high = residual_risk(10, 10, 10, 10, 0.95)
    assert np.isnan(risk) and low == -np.inf


def test_random_link_rate_matches_simulation():
    rng = np.random.default_rng(2)
    n, k, draws = 40, 3, 20000
    a = np.argsort(rng.random((draws, n)), axis=1)[:, :k]
    b = np.argsort(rng.random((draws, n)), axis=1)[:, :k]
    simulated = (a[:, :, None] == b[:, None, :]).any(axis=(1, 2)).mean()
    # standard error √(p(1−p)/20000) ≈ 0.0025: 4 standard errors
    assert simulated == pytest.approx(random_link_rate(n, k), abs=0.01)


def test_copied_release_gives_risk_one(rng):
    """A release that copies the targets: every secret found (distance 0), risk exactly 1.

    Except ``years``, a function of ``education``: the control is always right too, so
    the risk is undefined (NaN, with a warning); ``education`` (given ``years``) leaves the
    control little room below 1, so its interval stays wide.
    """
    targets, control = population(400, rng), population(400, rng)
    inference = AttributeInferenceRisk(random_state=0).fit(targets)
    with pytest.warns(RuntimeWarning, match="Every control attack succeeded"):
        result = inference.evaluate(targets, control)
    assert list(result.index) == list(targets.columns)
    assert (result["attack_rate"] == 1.0).all()
    assert result.loc["years", "control_rate"] == 1.0 and np.isnan(result.loc["years", "risk"])
    result = result.drop(index="years")
    assert (result["risk"] == 1.0).all()
    assert (result.drop(index="education")["risk_low"] > 0.9).all()
    linking = LinkabilityRisk(random_state=0).fit(targets).evaluate(targets, control)
    assert linking["attack_rate"].item() == 1.0 and linking["risk"].item() == 1.0
    assert linking["control_rate"].item() < 0.05


def _independent_risks(seed, n=300):
    """Risks when the release, the targets and the control are independent draws."""
    rng = np.random.default_rng(seed)
    release, targets, control = population(n, rng), population(n, rng), population(n, rng)
    inference = AttributeInferenceRisk(secrets=["age", "income", "sick"], random_state=seed)
    attribute = inference.fit(release).evaluate(targets, control)
    link = LinkabilityRisk(n_neighbors=5, random_state=seed).fit(release)
    linked = link.evaluate(targets, control)
    return pd.concat([attribute, linked.rename(index={"a|b": "link"})])


def _check_independent(n_repeats):
    runs = [_independent_risks(seed) for seed in range(n_repeats)]
    covered = np.mean([((r["risk_low"] <= 0) & (r["risk_high"] >= 0)).to_numpy() for r in runs], 0)
    mean_risk = np.mean([r["risk"].to_numpy() for r in runs], axis=0)
    sd_risk = np.std([r["risk"].to_numpy() for r in runs], axis=0)
    return covered, mean_risk, sd_risk / np.sqrt(n_repeats)


def test_independent_release_gives_risk_zero():
    """A release independent of the targets: the risk interval covers 0 in ≥ 95 % of runs.

    20 seeded runs of 300/300/300 rows (the slow test runs 200). Each interval covers 0 with
    probability ≥ 0.95 by construction (in fact about 0.99, being conservative); the mean
    risk must be within 4 standard errors of 0 (or 0.05, for a column whose risk never
    varies).
    """
    covered, mean_risk, se = _check_independent(20)
    assert (covered >= 0.95).all(), covered
    assert (np.abs(mean_risk) <= np.maximum(4 * se, 0.05)).all(), (mean_risk, se)


@pytest.mark.slow
def test_independent_release_gives_risk_zero_many_runs():
    """200 runs: coverage ≥ 0.95 − 2·√(0.95·0.05/200) = 0.919 and mean risk within 4 s.e."""
    covered, mean_risk, se = _check_independent(200)
    assert (covered >= 0.919).all(), covered
    assert (np.abs(mean_risk) <= np.maximum(4 * se, 0.02)).all(), (mean_risk, se)


def test_partial_copy_risk_tracks_the_copied_share(rng):
    """Half the targets copied, half replaced by fresh rows: inference risk ≈ 1/2.

    With continuous known columns the copied half is always found; the rest behave like
    the control. So a ≈ 1/2 + c/2 and risk ≈ 1/2 (±0.1: 3 standard errors at 400 rows).
    """
    targets, control = population(400, rng), population(400, rng)
    release = pd.concat([targets.iloc[:200], population(200, rng)], ignore_index=True)
    result = AttributeInferenceRisk(secrets="income", random_state=0).fit(release)
    assert result.evaluate(targets, control).loc["income", "risk"] == pytest.approx(0.5, abs=0.1)


def test_numeric_tolerance_and_baseline_are_exact():
    release = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "secret": [100.0, 104.0, 110.0, 0.0]})
    targets = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "secret": [95.0, 110.0, 104.0, 0.0]})
    risk = AttributeInferenceRisk(secrets="secret", known=["x"], tolerance=0.06).fit(release)
    np.testing.assert_array_equal(risk.predict(targets), [100.0, 104.0, 110.0, 0.0])
    # |100−95| ≤ 5.7 yes, |104−110| ≤ 6.6 yes, |110−104| ≤ 6.24 yes, 0 exactly yes
    with pytest.warns(RuntimeWarning, match="Every control attack succeeded"):
        result = risk.evaluate(targets, targets.iloc[[0]])
    assert result.loc["secret", "attack_rate"] == 1.0
    # random row: 95 → {100}; 110 → {104, 110}; 104 → {100, 104, 110}; 0 → {0}
    assert result.loc["secret", "baseline_rate"] == pytest.approx((1 + 2 + 3 + 1) / 16)
    assert result.loc["secret", "kind"] == "numeric"


def test_categorical_guess_uses_the_neighbour_majority():
    release = pd.DataFrame({"x": [0.0, 0.1, 0.2, 5.0], "s": ["a", "b", "b", "a"]})
    query = pd.DataFrame({"x": [0.0], "s": ["?"]})
    assert AttributeInferenceRisk(secrets="s", n_neighbors=1).fit(release).predict(query)[0] == "a"
    assert AttributeInferenceRisk(secrets="s", n_neighbors=3).fit(release).predict(query)[0] == "b"
    # an unseen secret value is never guessed right; missing values are one category
    result = AttributeInferenceRisk(secrets="s").fit(release).evaluate(query, query)
    assert result.loc["s", "attack_rate"] == 0.0
    with_missing = pd.DataFrame({"x": [0.0, 1.0], "s": [None, "a"]})
    fitted = AttributeInferenceRisk(secrets="s").fit(with_missing)
    with pytest.warns(RuntimeWarning, match="Every control attack succeeded"):
        assert fitted.evaluate(with_missing, with_missing).loc["s", "attack_rate"] == 1.0


def test_predict_shapes_and_names(rng):
    release = population(50, rng)
    both = AttributeInferenceRisk(secrets=["sick", "income"], random_state=0).fit(release)
    assert both.predict(release).shape == (50, 2)
    assert both.secrets_ == ["sick", "income"]
    assert list(both.column_kinds_) == ["numeric", "categorical", "numeric", "numeric"] + [
        "categorical",
        "numeric",
    ]
    linking = LinkabilityRisk(columns_a=["age", "income"], random_state=0).fit(release)
    assert linking.columns_b_ == ["education", "years", "sick", "hours"]
    assert linking.predict(release).dtype == bool


@pytest.mark.parametrize(
    ("estimator", "message"),
    [
        (
            AttributeInferenceRisk(secrets="salary"),
            "secrets: column 'salary' is not in the release",
        ),
        (AttributeInferenceRisk(secrets=9), "column position 9 is out of range"),
        (AttributeInferenceRisk(secrets="age", known=["age", "sick"]), "known includes the secret"),
        (AttributeInferenceRisk(secrets="age", known=[]), "The attacker knows no column"),
        (AttributeInferenceRisk(secrets=["age", "age"]), "names a column twice"),
        (
            AttributeInferenceRisk(n_neighbors=99),
            "n_neighbors=99 exceeds the number of release rows \\(n_samples = 20\\)",
        ),
        (
            LinkabilityRisk(columns_a=["age"], columns_b=["age", "sick"]),
            "must be disjoint; both hold \\['age'\\]",
        ),
        (LinkabilityRisk(columns_a=["zip"]), "columns_a: column 'zip' is not in the release"),
    ],
)
def test_bad_parameters_name_the_column(estimator, message, rng):
    with pytest.raises(ValueError, match=message):
        estimator.fit(population(20, rng))


def test_bad_tables_give_clear_errors(rng):
    release = population(30, rng)
    fitted = AttributeInferenceRisk(secrets="sick").fit(release)
    with pytest.raises(ValueError, match="0 sample"):
        fitted.evaluate(release.iloc[:0], release)
    with pytest.raises(ValueError, match="0 sample"):
        AttributeInferenceRisk().fit(release.iloc[:0])
    with pytest.raises(ValueError, match="feature names"):
        fitted.evaluate(release.drop(columns="sick"), release)
    with pytest.raises(ValueError, match="feature names"):
        fitted.evaluate(release[release.columns[::-1]], release)
    broken = release.copy()
    broken.loc[3, "income"] = np.nan
    with pytest.raises(ValueError, match="Column 'income' contains NaN or inf"):
        fitted.evaluate(broken, release)
    broken["income"] = "abc"
    with pytest.raises(ValueError, match="Column 'income' is numeric in the release"):
        fitted.predict(broken)
    with pytest.raises(ValueError, match="Column 'hours' contains NaN or inf"):
        release.loc[0, "hours"] = np.inf
        AttributeInferenceRisk().fit(release)
    with pytest.raises(ValueError, match="1 feature"):
        LinkabilityRisk().fit(release[["age"]])


def test_disclosure_summary_rows_and_errors(rng):
    members, non_members = population(200, rng), population(150, rng)
    releases = {"copy": members, "fresh": population(200, rng)}
    summary = disclosure_summary(
        members, non_members, releases, secrets=["sick", "income"], random_state=0
    )
    assert list(summary["release"]) == ["copy"] * 6 + ["fresh"] * 6
    assert list(summary["analysis"][:6]) == [
        "attribute inference",
        "attribute inference",
        "attribute inference (pooled)",
        "linkability",
        "singling out",
        "singling out",
    ]
    assert list(summary["target"][4:6]) == ["univariate", "multivariate"]
    assert summary["target"][3] == "age, education, years | income, sick, hours"
    # the controls are the non-members alone (issue #22: never reference rows); singling
    # out counts predicates, each tried on 150 members and the 150 controls
    records = summary[summary["analysis"] != "singling out"]
    assert (records["n_control"] == 150).all() and (records["n_targets"] == 200).all()
    assert (records.loc[records["release"] == "copy", "risk"] == 1.0).all()
    # singling out searches 150 of the 200 members (the controls' size): a predicate that
    # isolates a copied member finds it with probability 3/4
    copied = summary[(summary["release"] == "copy") & (summary["analysis"] == "singling out")]
    assert (copied["risk_low"] > 0.5).all()
    without = disclosure_summary(
        members, non_members, releases, secrets=["sick"], singling_out=False, random_state=0
    )
    assert "singling out" not in set(without["analysis"])
    with pytest.raises(ValueError, match="synthetic 'fresh'.*lacks the column\\(s\\) \\['sick'\\]"):
        disclosure_summary(members, non_members, {"fresh": releases["fresh"].drop(columns="sick")})
    with pytest.raises(ValueError, match="non_members table has no rows"):
        disclosure_summary(members, non_members.iloc[:0], members)
    with pytest.raises(TypeError, match="members must be a pandas DataFrame"):
        disclosure_summary(members.to_numpy(), non_members, members)
