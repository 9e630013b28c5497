"""The one-run design's algorithm card: figure, numbers and words read from the fitted audits.

The real cases: issue #30's command, the correct DP-SGD logistic regression and its noise bug
(σ/4, the same accountant's curve claimed at ε = 4), one training each with 1 000 Dirac
canaries (opacus, about 7 s for both). The correct recipe's card is grey, the bug's red; every
drawn curve is one the guesses refute at the card's per-number level, checked with the f-DP
statistic of ``metrics/_one_run_fdp.py`` on the audit's own guess counts.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.algorithm import PrivacyClaim
from sklearn_mace.algorithm._one_run import claim_contradicted, claim_inverse
from sklearn_mace.cli import main
from sklearn_mace.metrics._fdp import (
    approximate_tradeoff,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_tradeoff,
)
from sklearn_mace.metrics._one_run_fdp import (
    approximate_blow_up_inverse,
    fdp_statistic,
    gaussian_blow_up_inverse,
)
from sklearn_mace.report._format import fmt
from sklearn_mace.report._kinds.algorithm._audit import RECIPES, audit_algorithm_one_run
from sklearn_mace.report._kinds.algorithm._one_run_view import (
    NOT_REFUTED,
    card_numbers,
    gaussian_keeping,
    most_certifiable,
    one_run_lines,
    tradeoff_figure,
)
from sklearn_mace.report._kinds.algorithm._view import CONTRADICTED

DPSGD = ["dpsgd-logreg", "dpsgd-logreg-noise-bug"]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Issue #30's command through the CLI: the files, and the same audit in Python."""
    pytest.importorskip("opacus")
    out = tmp_path_factory.mktemp("one_run") / "report"
    argv = ["audit-algorithm", "--recipe", *DPSGD, "--design", "one-run"]
    assert main([*argv, "--claimed-epsilon", "4", "--out", str(out), "--quiet"]) == 0
    result = audit_algorithm_one_run(DPSGD, n_canaries=1000, claimed_epsilon=4.0)
    return out, result


def _cards(page):
    """Each card of the page, in order: its class and its HTML."""
    return re.findall(r'<div class="card (\w+)">(.*?)\n</div>', page, flags=re.S)


def test_the_files_are_written_listed_and_embedded(written):
    out, result = written
    manifest = json.loads((out / ".sklearn-mace-files.json").read_text(encoding="utf-8"))
    names = [tradeoff_figure(r, i)[0] for i, r in enumerate(result.recipes, 1)]
    assert sorted(manifest["files"]) == sorted(
        ["report.html", "summary.csv", "guesses.csv", *(f"figures/{n}" for n in names)]
    )
    page = (out / "report.html").read_text(encoding="utf-8")
    for name in names:
        assert (out / "figures" / name).stat().st_size > 10_000
        assert f'data-file="figures/{name}"' in page


def test_the_command_line_and_python_give_the_same_audit(written):
    out, result = written
    summary = pd.read_csv(out / "summary.csv")
    assert summary["recipe"].tolist() == [RECIPES[k] for k in DPSGD]
    for row, recipe in zip(summary.itertuples(), result.recipes, strict=True):
        audit = recipe.audit
        assert row.epsilon_lower_bound == pytest.approx(audit.epsilon_lower_bounds_[0])
        assert row.fdp_epsilon_lower_bound == pytest.approx(audit.fdp_epsilon_lower_bounds_[0])
        assert row.mu_lower_bound == pytest.approx(audit.mu_lower_bounds_[0])
        assert bool(row.contradicted) == bool(audit.contradicted_[0])
    guesses = pd.read_csv(out / "guesses.csv")
    for recipe in result.recipes:
        own = guesses[guesses["recipe"] == recipe.name]
        for column, values in recipe.audit.guesses_.items():
            np.testing.assert_allclose(own[column].to_numpy(float), values, rtol=1e-12)


def test_the_correct_recipe_is_grey_and_the_bug_red(written):
    out, result = written
    correct, bug = (r.audit for r in result.recipes)
    assert correct.contradicted_.tolist() == [False] and bug.contradicted_.tolist() == [True]
    page = (out / "report.html").read_text(encoding="utf-8")
    (grey, grey_html), (red, red_html) = _cards(page)
    assert (grey, red) == ("inconclusive", "leak")
    assert "inconclusive: the claim is not contradicted" in grey_html
    assert "the claim is contradicted: " in red_html and "its claim is false" in red_html


def test_every_number_of_a_card_is_the_audits_own(written):
    out, result = written
    page = (out / "report.html").read_text(encoding="utf-8")
    for (_, card), recipe in zip(_cards(page), result.recipes, strict=True):
        audit, n = recipe.audit, card_numbers(recipe.audit)
        assert n["steinke_epsilon"] == audit.epsilon_lower_bounds_[0]
        assert n["fdp_epsilon"] == audit.fdp_epsilon_lower_bounds_[0]
        assert n["mu"] == audit.mu_lower_bounds_[0]
        assert n["claimed_epsilon"] == audit.claim_.epsilon_at(audit.delta_)
        assert f"ε <b>at least {fmt(audit.epsilon_lower_bounds_[0], 2)}</b>" in card
        assert f"f-DP ε at least <b>{fmt(audit.fdp_epsilon_lower_bounds_[0], 2)}</b>" in card
        assert f"empirical μ <b>at least {fmt(audit.mu_lower_bounds_[0], 2)}</b>" in card
        best = int(np.argmax(audit.guesses_["fdp_mu"]))
        g = audit.guesses_
        assert f"{g['n_correct'][best]} of {g['n_guesses'][best]} guesses right" in card
        keeping = gaussian_keeping(audit.claim_)
        assert f"a Gaussian mechanism keeps the claim up to μ = {fmt(keeping, 2)}" in card
        # the guess table: one row per guess count, its counts and bounds
        cells = re.sub(r'<td class="[^"]*">', "<td>", card)
        for r, v, mu in zip(g["n_guesses"], g["n_correct"], g["fdp_mu"], strict=True):
            assert f"<td>{r}</td><td>{v}</td>" in cells and f"<td>{fmt(mu)}</td>" in cells
        level = g["confidence"][0]
        assert f"holds together at 95% (each at {level:.2%}, Bonferroni)" in card


def test_the_design_is_said_in_words_from_the_audit(written):
    out, result = written
    page = (out / "report.html").read_text(encoding="utf-8")
    for (_, card), recipe in zip(_cards(page), result.recipes, strict=True):
        audit = recipe.audit
        m, scored = len(audit.canary_included_), int(audit.certify_mask_.sum())
        assert m == 1000
        assert (
            f"one training with {m} canaries, each included independently with probability ½"
            in card
        )
        assert f"{int(audit.canary_included_.sum())} were in" in card
        assert f"learns on {m - scored} canaries" in card and f"the other {scored}" in card


def _curve(ax, starts):
    (line,) = [line for line in ax.get_lines() if line.get_label().startswith(starts)]
    return line


def test_the_figure_draws_the_claim_and_the_refuted_curves(written):
    _, result = written
    for index, recipe in enumerate(result.recipes, 1):
        audit = recipe.audit
        _, (fig, caption) = tradeoff_figure(recipe, index)
        (ax,) = fig.axes
        claimed = _curve(ax, "claimed:")
        x = claimed.get_xdata()
        np.testing.assert_allclose(claimed.get_ydata(), audit.claim_.tradeoff(x))
        contradicted = bool(audit.contradicted_[0])
        assert claimed.get_color() == (CONTRADICTED if contradicted else NOT_REFUTED)
        mu = _curve(ax, "Gaussian curve at the empirical μ")
        np.testing.assert_allclose(mu.get_ydata(), gaussian_tradeoff(x, audit.mu_lower_bounds_[0]))
        eps = _curve(ax, f"(ε = {audit.fdp_epsilon_lower_bounds_[0]:.2f}")
        expected = approximate_tradeoff(x, audit.fdp_epsilon_lower_bounds_[0], audit.delta_)
        np.testing.assert_allclose(eps.get_ydata(), expected)
        assert f"empirical μ = {audit.mu_lower_bounds_[0]:.2f}" in caption
        assert ("refute the claimed curve (red)" in caption) == contradicted


def _refuted(audit, inverse):
    """Whether some guess count of the audit rejects the curve ``B⁻¹ = inverse`` at the
    card's per-number level (the f-DP statistic on the audit's own counts)."""
    g, m = audit.guesses_, int(audit.certify_mask_.sum())
    alpha = 1.0 - g["confidence"][0]
    return any(
        fdp_statistic(inverse, m, int(r), int(v), alpha) > 0
        for r, v in zip(g["n_guesses"], g["n_correct"], strict=True)
    )


def test_every_drawn_curve_is_certified_refuted_and_red_only_when_certified(written):
    """The dashed and dash-dotted curves are rejected by the guesses at the card's level (and
    a slightly larger μ, a weaker claim, is not: the empirical μ is the largest). The claimed
    curve is red exactly when some certified test rejects it: the claim's own recursion, or
    a certified ε above its ε at δ."""
    _, result = written
    for recipe in result.recipes:
        audit = recipe.audit
        mu, eps = audit.mu_lower_bounds_[0], audit.fdp_epsilon_lower_bounds_[0]
        assert mu > 0 and eps > 0
        assert _refuted(audit, gaussian_blow_up_inverse(mu))
        assert _refuted(audit, approximate_blow_up_inverse(eps, audit.delta_))
        assert not _refuted(audit, gaussian_blow_up_inverse(mu + 1e-3))
        by_curve = _refuted(audit, claim_inverse(audit.claim_))
        by_epsilon = max(eps, audit.epsilon_lower_bounds_[0]) > audit.claim_.epsilon_at(
            audit.delta_
        )
        assert bool(audit.contradicted_[0]) == (by_curve or by_epsilon)
    bug = result.recipes[1].audit
    assert _refuted(bug, claim_inverse(bug.claim_))  # the bug: the claimed curve itself


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        (PrivacyClaim.gaussian(0.7), 0.7),
        (PrivacyClaim.pure(1.0), 0.0),  # no Gaussian mechanism is (ε, 0)-DP
        (PrivacyClaim.from_epsilons([1.0, 8.0], [1e-5, 0.0]), 0.0),
    ],
)
def test_the_gaussian_mechanism_keeping_a_claim_closed_cases(claim, expected):
    assert gaussian_keeping(claim) == expected


def test_the_gaussian_mechanism_keeping_an_epsilon_delta_claim():
    """Dong, Roth & Su's δ(ε) of μ-GDP (Cor. 2.13, the analytic Gaussian mechanism of Balle &
    Wang 2018): at the returned μ the binding pair holds with equality, the others with room;
    (1, 1e-5) gives μ ≈ 0.27, the Gaussian count of issue #30."""
    mu = gaussian_keeping(PrivacyClaim.approximate(1.0, 1e-5))
    assert gaussian_delta(mu, 1.0) == pytest.approx(1e-5, rel=1e-6)
    assert round(mu, 2) == 0.27
    curve = PrivacyClaim.from_epsilons([4.0, 2.0], [1e-5, 1e-2])
    mu = gaussian_keeping(curve)
    slack = [gaussian_epsilon(mu, d) - e for e, d in zip(curve.epsilons, curve.deltas, strict=True)]
    assert max(slack) == pytest.approx(0.0, abs=1e-6) and min(slack) < -1e-3


def test_the_printed_lines_name_the_numbers(written):
    _, result = written
    lines = one_run_lines(result)
    assert "one training each" in lines[0]
    for line, recipe in zip(lines[1:], result.recipes, strict=True):
        audit = recipe.audit
        assert line.startswith(recipe.name)
        assert f"Steinke ε at least {audit.epsilon_lower_bounds_[0]:.2f}" in line
        assert f"μ at least {audit.mu_lower_bounds_[0]:.2f}" in line
        assert ("[the claim is contradicted" in line) == bool(audit.contradicted_[0])


def test_a_grey_card_says_how_much_the_run_could_certify(written):
    """The power line: every guess right at the largest count, the same recursion and level:
    above the correct recipe's bounds, and above the claimed ε (the run could contradict)."""
    out, result = written
    audit = result.recipes[0].audit
    epsilon, mu = most_certifiable(audit)
    assert epsilon >= audit.fdp_epsilon_lower_bounds_[0] and mu >= audit.mu_lower_bounds_[0]
    assert epsilon > audit.claim_.epsilon_at(audit.delta_)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f"at most ε = {fmt(epsilon, 2)} (f-DP) and μ = {fmt(mu, 2)}" in page


def test_the_histograms_one_run_card_without_opacus(tmp_path):
    """The default recipes (no extra package): a card per recipe, the claim pure ε = 1."""
    out = tmp_path / "out"
    argv = ["audit-algorithm", "--design", "one-run", "--canaries", "400", "--claim", "pure:1"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert len(_cards(page)) == 2
    summary = pd.read_csv(out / "summary.csv")
    colours = [c for c, _ in _cards(page)]
    assert colours == ["leak" if c else "inconclusive" for c in summary["contradicted"]]


def test_a_run_that_refutes_nothing_draws_no_refuted_curve_and_stays_grey():
    """Null guesses (every canary scored alike: ties broken by chance) under a pure ε = 1
    claim: the table certifies nothing, so the card is grey, the claimed curve dark and no
    refuted curve is drawn; the caption says so instead of naming a μ of 0."""
    from types import SimpleNamespace

    from sklearn_mace.algorithm._one_run import guess_table
    from sklearn_mace.report._kinds.algorithm._one_run_view import _card
    from sklearn_mace.report._kinds.algorithm._types import OneRunRecipe

    rng = np.random.default_rng(0)
    m, claim = 400, PrivacyClaim.pure(1.0)
    included = rng.random(2 * m) < 0.5
    scored = np.arange(2 * m) >= m  # the first half "trained the attack"
    table = guess_table(np.zeros(m), included[scored], claim=claim, delta=0.0, alpha=0.05, seed=1)
    assert table["fdp_mu"].max() == 0 and table["fdp_epsilon"].max() == 0
    audit = SimpleNamespace(
        guesses_=table,
        claim_=claim,
        delta_=0.0,
        epsilon_lower_bounds_=np.array([table["steinke_epsilon"].max()]),
        fdp_epsilon_lower_bounds_=np.array([table["fdp_epsilon"].max()]),
        mu_lower_bounds_=np.array([table["fdp_mu"].max()]),
        contradicted_=np.array([claim_contradicted(claim, table, 0.0)]),
        canary_included_=included,
        certify_mask_=scored,
        n_train_=1000,
    )
    assert audit.contradicted_.tolist() == [False]
    recipe = OneRunRecipe("dp-histogram", "null", audit)
    _, (fig, caption) = tradeoff_figure(recipe, 1)
    (ax,) = fig.axes
    labels = [line.get_label() for line in ax.get_lines()]
    assert not any(label.startswith(("Gaussian curve", "(ε =")) for label in labels)
    assert _curve(ax, "claimed:").get_color() == NOT_REFUTED
    assert "no Gaussian curve; no (ε, δ) curve" in caption
    card = _card(recipe, 0.95)
    assert "inconclusive: the claim is not contradicted" in card and 'class="card leak"' not in card
    assert "no Gaussian curve is refuted" in card
