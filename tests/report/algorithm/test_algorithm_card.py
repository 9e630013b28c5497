"""The algorithm card: the trade-off figure, the empirical μ and the design in words.

The figure is checked on what it draws (the claimed curve's line, the targets' points, the
Gaussian curve at the empirical μ), against the claim's own curve and ``summary.csv``; the
contradicted case is real: the wrong-noise histogram (claims ε = 1, truly 2) at the demo's
1 000 runs per side, whose certified points lie below the ε = 1 curve.
"""

import json

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.base import BaseEstimator

from sklearn_mace.algorithm import PrivacyClaim
from sklearn_mace.report import write_report
from sklearn_mace.report._figures import figure_file
from sklearn_mace.report._kinds.algorithm import _audit as _algorithm
from sklearn_mace.report._kinds.algorithm._audit import RECIPES, audit_algorithm
from sklearn_mace.report._kinds.algorithm._view import (
    CONTRADICTED,
    NOT_CONTRADICTED,
    AlgorithmCards,
    empirical_mu,
    implied_mu,
    presentation,
    tradeoff_figures,
    tradeoff_points,
)
from sklearn_mace.report._section import Report


@pytest.fixture(scope="module")
def demo():
    """The demo's audit (both histograms claiming ε = 1, 1 000 runs per side)."""
    return audit_algorithm(n_runs=1000, verbose=False)


@pytest.fixture(scope="module")
def written(demo, tmp_path_factory):
    out = tmp_path_factory.mktemp("card") / "report"
    paths = write_report(demo, out)
    return out, paths


def _drawn(result, subject):
    """The trade-off figure of ``subject`` as drawn: its axes, caption and points by target."""
    (name, (fig, caption)), *_ = [
        item
        for item in tradeoff_figures(Report(result, presentation(result))).items()
        if item[0] == figure_file("tradeoff", result, subject)
    ]
    (ax,) = fig.axes
    points = {}
    for collection in ax.collections:
        label = collection.get_label()
        for target in result.inputs.target_names:
            if label.startswith(f"{target}:"):
                points[target] = (collection.get_offsets()[0], collection.get_facecolor()[0])
    return ax, caption, points


def _line(ax, starts):
    (line,) = [line for line in ax.get_lines() if line.get_label().startswith(starts)]
    return line.get_xdata(), line.get_ydata()


def test_the_figure_file_exists_is_listed_and_embedded(demo, written):
    out, paths = written
    manifest = json.loads((out / ".sklearn-mace-files.json").read_text(encoding="utf-8"))
    page = (out / "report.html").read_text(encoding="utf-8")
    for subject in demo.subjects:
        name = figure_file("tradeoff", demo, subject)
        assert name.startswith("tradeoff_")
        assert (out / "figures" / name).stat().st_size > 10_000
        assert f"figures/{name}" in manifest["files"]
        assert f'data-file="figures/{name}"' in page  # embedded as base64, with its caption
    assert "a point below it (red, in the shaded region) contradicts the claim" in page


def test_the_wrong_noise_points_are_drawn_below_the_claimed_curve(demo):
    """Ground truth: the wrong-noise histogram is ε = 2-DP and claims 1; at 1 000 runs per
    side its certified points lie below the ε = 1 curve, and the figure draws them there."""
    claim = demo.inputs.claim
    wrong = next(s for s in demo.subjects if s.name == RECIPES["wrong-noise-histogram"])
    ax, _, points = _drawn(demo, wrong)
    x, y = _line(ax, "claimed:")
    np.testing.assert_allclose(y, claim.tradeoff(x))  # the drawn curve is the claim's
    np.testing.assert_allclose(  # ε = 1: f(α) = max(1 − e·α, (1 − α)/e)
        y, np.maximum(1 - np.e * x, (1 - x) / np.e), atol=1e-12
    )
    summary = demo.summary.set_index(["subject", "analysis"])
    assert len(points) == 2
    for target, ((fpr, fnr), colour) in points.items():
        row = summary.loc[(wrong.name, target)]
        np.testing.assert_allclose([fpr, fnr], [row["fpr_upper"], row["fnr_upper"]])
        assert fnr < np.interp(fpr, x, y)  # below the drawn curve
        assert row["contradicted"]
        np.testing.assert_allclose(colour[:3], _rgb(CONTRADICTED))


def _rgb(colour):
    from matplotlib.colors import to_rgb

    return to_rgb(colour)


def test_every_point_is_red_exactly_when_below_the_curve(demo):
    """Both recipes: a point's colour is the engine's verdict, and the verdict is the point's
    place against the drawn curve (the correct histogram's points lie above it)."""
    seen = set()
    for subject in demo.subjects:
        ax, _, points = _drawn(demo, subject)
        x, y = _line(ax, "claimed:")
        contradicted = {a.name: a.contradicted for a in subject.analyses}
        for target, ((fpr, fnr), colour) in points.items():
            below = fnr < np.interp(fpr, x, y)
            assert below == contradicted[target]
            expected = CONTRADICTED if below else NOT_CONTRADICTED
            np.testing.assert_allclose(colour[:3], _rgb(expected))
            seen.add(below)
    assert seen == {True, False}  # the demo has points on both sides of the curve


def test_the_gaussian_curve_passes_through_the_strongest_point(demo):
    """The dashed curve is G_μ at the recipe's largest certified μ: it passes through that
    target's point (μ = Φ⁻¹(1 − FPR) − Φ⁻¹(FNR)), and every other point lies on or above it."""
    for subject in demo.subjects:
        mu, source = empirical_mu(demo, subject)
        ax, caption, points = _drawn(demo, subject)
        x, y = _line(ax, "Gaussian curve at the empirical μ")
        np.testing.assert_allclose(y[1:-1], norm.cdf(norm.isf(x[1:-1]) - mu), rtol=1e-9)
        (fpr, fnr), _ = points[source]
        np.testing.assert_allclose(norm.cdf(norm.isf(fpr) - mu), fnr, rtol=1e-9)
        for (other_fpr, other_fnr), _ in points.values():
            assert other_fnr >= norm.cdf(norm.isf(other_fpr) - mu) - 1e-9
        summary = demo.summary
        own = summary[summary["subject"] == subject.name]
        assert mu == pytest.approx(own["mu_lower_bound"].max())
        assert f"empirical μ = {mu:.2f} (from {source})" in caption


def test_the_card_shows_mu_and_the_design(demo, written):
    out, _ = written
    page = (out / "report.html").read_text(encoding="utf-8")
    summary = demo.summary
    for subject in demo.subjects:
        mu, source = empirical_mu(demo, subject)
        assert mu > 0
        line = f"not μ-GDP for any μ below {mu:.2f}; from {source}"
        assert line in page
        own = summary[summary["subject"] == subject.name]
        certify = int(own["n_certify_runs"].iloc[0])
        assert f"multi-run: 1000 trainings per side, {certify} certify" in page
    implied = "the claim, ε = 1 (add/remove-one), implies μ-GDP for μ = 1.23"
    assert page.count(implied) == 2
    assert page.count('<th class="">certified μ ≥</th>') == 2  # per target, in each table


def test_the_printed_verdict_names_mu(demo):
    report = Report(demo, presentation(demo))
    lines = AlgorithmCards().lines(report)
    for subject in demo.subjects:
        mu, source = empirical_mu(demo, subject)
        (line,) = [line for line in lines if line.startswith(f"{subject.name}: [")]
        assert f"μ at least {mu:.2f} ({source})" in line


def test_a_gaussian_claim_is_drawn_and_named_as_its_mu():
    """A μ-GDP claim: the drawn curve is G_μ, the card shows the claimed μ beside the
    empirical one and says "not 0.5-GDP", never "(inf, 0)-DP"; contradicted exactly when the
    certified μ exceeds the claim's."""
    claim = PrivacyClaim.gaussian(0.5)
    result = audit_algorithm(["wrong-noise-histogram"], claim=claim, n_runs=400, verbose=False)
    (subject,) = result.subjects
    ax, _, points = _drawn(result, subject)
    x, y = _line(ax, "claimed: 0.5-GDP")
    np.testing.assert_allclose(y[1:-1], norm.cdf(norm.isf(x[1:-1]) - 0.5), rtol=1e-9)
    table = tradeoff_points(result, subject)
    np.testing.assert_array_equal(table["contradicted"], table["mu_lower_bound"] > 0.5)
    assert table["contradicted"].any()
    html = AlgorithmCards().card(Report(result, presentation(result)), subject)
    assert "claimed μ = 0.5" in html
    assert "not 0.5-GDP for add/remove-one neighbours" in html and "inf" not in html


def test_a_converted_gaussian_claim_says_so():
    claim = PrivacyClaim.gaussian(0.25)
    result = audit_algorithm(
        ["dp-histogram"], claim=claim, relation="substitute", n_runs=60, verbose=False
    )
    (subject,) = result.subjects
    html = AlgorithmCards().card(Report(result, presentation(result)), subject)
    assert "claimed μ = 0.5; 0.25-GDP (add/remove-one), audited on substitute-one" in html
    assert "(substitute-one), training sets of" in html


class BrokenRecipe(BaseEstimator):
    """A recipe whose every training fails."""

    def fit(self, X):
        raise RuntimeError("planted failure")


def test_a_failed_recipe_draws_no_point_and_says_so(monkeypatch):
    real = _algorithm.make_recipe

    def planted(name, **kwargs):
        return BrokenRecipe() if name == "wrong-noise-histogram" else real(name, **kwargs)

    monkeypatch.setattr(_algorithm, "make_recipe", planted)
    result = audit_algorithm(n_runs=20, verbose=False, on_error="report")
    broken = next(s for s in result.subjects if s.name == RECIPES["wrong-noise-histogram"])
    assert tradeoff_points(result, broken).empty
    assert empirical_mu(result, broken) == (pytest.approx(np.nan, nan_ok=True), None)
    ax, caption, points = _drawn(result, broken)
    assert points == {} and "every target failed" in ax.texts[0].get_text()
    assert "dashed curve" not in caption
    html = AlgorithmCards().card(Report(result, presentation(result)), broken)
    assert "μ: no target produced a certified point" in html and "Design:" not in html


def _largest_mu_on_the_curve(claim):
    """Ground truth by brute force: the largest μ of any point of the claim's curve (a
    log grid near FPR = 0, a fine one elsewhere)."""
    alpha = np.concatenate([np.logspace(-300, 0, 300_001), np.linspace(0.1, 1 - 1e-9, 200_001)])
    fnr = claim.tradeoff(alpha)
    keep = fnr > 0
    return np.max(norm.isf(alpha[keep]) + norm.isf(fnr[keep]))


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 2.0, 4.0])
def test_the_mu_an_epsilon_claim_implies_is_its_curves_largest(epsilon):
    """ε-DP implies μ-GDP for the μ of the ε curve's symmetric point: no point of the curve
    has a larger μ (so the curve lies on or above G_μ), and the grid comes within 1e-3."""
    claim = PrivacyClaim.pure(epsilon)
    mu, grid = implied_mu(claim), _largest_mu_on_the_curve(claim)
    assert grid <= mu + 1e-9 and grid == pytest.approx(mu, abs=1e-3)
    alpha = np.linspace(1e-6, 1 - 1e-6, 10_001)
    assert np.all(claim.tradeoff(alpha) >= norm.cdf(norm.isf(alpha) - mu) - 1e-12)


def test_a_claim_with_delta_implies_no_mu():
    assert implied_mu(PrivacyClaim.approximate(1.0, 1e-5)) == np.inf
    assert implied_mu(PrivacyClaim.gaussian(0.3)) == 0.3
    # a pure pair among others: the curve is at least that pair's, so its μ holds
    claim = PrivacyClaim.from_epsilons([1.0, 0.5], [0.0, 1e-3])
    mu = implied_mu(claim)
    assert mu == implied_mu(PrivacyClaim.pure(1.0))
    assert _largest_mu_on_the_curve(claim) <= mu + 1e-9
