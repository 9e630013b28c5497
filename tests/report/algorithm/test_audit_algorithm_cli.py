"""`sklearn-mace audit-algorithm`: the demo's files, the audit's own numbers, clear errors.

Few runs per side keep each test to seconds; what the verdicts are worth at 1 000 runs is
measured by ``benchmarks/bench_algorithm_claims.py`` and ``tests/algorithm/test_algorithm_slow.py``.
"""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

from sklearn_mace.cli import main
from sklearn_mace.report import AuditInputError
from sklearn_mace.report._engine import keyed_seed
from sklearn_mace.report._kinds.algorithm._audit import (
    RECIPES,
    RUNS,
    audit_algorithm,
    available_recipes,
)

#: summary.csv starts with the columns of every audit; the claim's own come after them
COMMON = ["subject", "analysis", "role", "status", "reason", "epsilon_lower_bound"]
OWN = ["claimed_epsilon", "contradicted", "claim", "mu_lower_bound"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo through the CLI, 40 runs per side."""
    out = tmp_path_factory.mktemp("algorithm") / "report"
    status = main(["audit-algorithm", "--n-runs", "40", "--out", str(out), "--quiet"])
    return status, out


def test_demo_writes_the_summary_and_the_card(demo):
    status, out = demo
    assert status == 0
    assert sorted(p.name for p in out.iterdir()) == [
        ".sklearn-mace-files.json",  # the manifest of the files written
        "comparisons.csv",  # two recipes on the same targets: compared pairwise
        "figures",
        "records.csv",
        "report.html",
        "summary.csv",
    ]
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns[: len(COMMON)]) == COMMON
    assert list(summary.columns[-len(OWN) :]) == OWN
    assert "recipe" not in summary.columns and "target" not in summary.columns
    assert (
        summary["subject"].tolist()
        == [RECIPES["dp-histogram"]] * 2 + [RECIPES["wrong-noise-histogram"]] * 2
    )
    assert "wrong" in summary["subject"].iloc[2] and "wrong" not in summary["subject"].iloc[0]
    assert summary["analysis"].tolist() == ["most common record", "empty-cell canary"] * 2
    assert (summary["claimed_epsilon"] == 1.0).all()
    assert summary["true_epsilon"].tolist() == [1.0, 1.0, 2.0, 2.0]
    np.testing.assert_array_equal(
        summary["contradicted"], summary["epsilon_lower_bound"] > summary["claimed_epsilon"]
    )
    # two targets per recipe: each bound at 1 − 0.05/2
    assert np.allclose(summary["claim_confidence"], 0.975)
    page = (out / "report.html").read_text(encoding="utf-8")
    for text in ("claimed ε", "certified ε ≥", "Multiplicity", "add/remove-one", "Bonferroni"):
        assert text in page
    assert "Exposed records" not in page and "members file" not in page


def test_the_card_is_red_exactly_when_a_claim_is_contradicted(demo):
    _, out = demo
    summary = pd.read_csv(out / "summary.csv")
    page = (out / "report.html").read_text(encoding="utf-8")
    red = summary.groupby("subject", sort=False)["contradicted"].any()
    assert page.count('class="card leak"') == int(red.sum())
    assert page.count("the claim is contradicted") == int(red.sum())


def test_the_analyses_are_the_same_before_and_after_the_runs(monkeypatch):
    from sklearn_mace.report._kinds.algorithm._audit import AlgorithmReport

    seen, real = [], AlgorithmReport.analyses

    def spy(self, subject):
        analyses = real(self, subject)
        seen.append([(a.name, a.threshold, a.needs, a.figure) for a in analyses])
        return analyses

    monkeypatch.setattr(AlgorithmReport, "analyses", spy)
    audit_algorithm(["dp-histogram"], n_runs=20, verbose=False)
    assert len(seen) >= 2 and all(found == seen[0] for found in seen)


def test_the_card_the_summary_and_the_verdict_read_the_engines_verdict():
    # "contradicted" is decided once, by the engine (PrivacyClaim.contradicted_by), and
    # every reader takes it from the result
    from sklearn_mace.report._section import Report
    from sklearn_mace.report._show import presentation_of

    result = audit_algorithm(["dp-histogram"], n_runs=20, verbose=False)
    (subject,) = result.subjects
    claim = result.inputs.claim
    for analysis in subject.analyses:
        c = analysis.claim
        assert analysis.contradicted == bool(claim.contradicted_by(c.fpr_upper, c.fnr_upper))
    assert [a.contradicted for a in subject.analyses] == [False, False]
    assert result.verdict(subject) == "inconclusive"
    subject.analyses[1].contradicted = True  # as if the runs had contradicted the claim
    assert result.summary["contradicted"].tolist() == [False, True]
    assert result.verdict(subject) == "leak"
    assert result.headline(subject).startswith("the claim is contradicted")
    presentation = presentation_of(result)
    (cards,) = [s for s in presentation.sections if hasattr(s, "card")]
    assert '<td class="text">contradicted</td>' in cards.card(Report(result, presentation), subject)


def test_the_report_certifies_what_the_audit_certifies():
    # the engine re-certifies each target's rule on the held-out runs: it must give the
    # AlgorithmAudit's own bounds (same seed, same runs, same level 1 − α/K)
    from sklearn_mace.algorithm import AlgorithmAudit, DPHistogramSynthesizer, ReleaseFeatures
    from sklearn_mace.datasets import make_categorical_population

    result = audit_algorithm(["dp-histogram"], n_runs=30, claimed_epsilon=0.5, verbose=False)
    demo = make_categorical_population()
    population, targets = demo.data, demo.targets
    name = RECIPES["dp-histogram"]
    audit = AlgorithmAudit(
        DPHistogramSynthesizer(0.5, categories=[np.arange(k) for k in demo.categories]),
        targets=targets,
        n_runs=30,
        train_size=demo.train_size,
        datasets="fixed",
        featurizer=ReleaseFeatures(None, n_neighbors=(), radii=(0.0,), bandwidth=None),
        random_state=keyed_seed(0, name, RUNS, "scores"),
    ).fit(population)
    np.testing.assert_allclose(
        result.summary["epsilon_lower_bound"], audit.epsilon_lower_bounds_, rtol=1e-12
    )
    np.testing.assert_allclose(result.summary["auc"], audit.auc_, rtol=1e-12)


def test_a_population_file_and_the_substitute_relation(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"colour": rng.choice(["red", "green", "blue"], 400), "size": rng.integers(0, 4, 400)}
    )
    path = tmp_path / "population.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "out"
    status = main(
        [
            "audit-algorithm",
            "--population",
            str(path),
            "--recipe",
            "dp-histogram",
            "gaussian-mixture",
            "--targets",
            "1",
            "--neighbour",
            "substitute",
            "--claimed-epsilon",
            "2",
            "--n-runs",
            "20",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert status == 0
    summary = pd.read_csv(out / "summary.csv")
    assert summary["subject"].tolist() == [RECIPES["dp-histogram"], RECIPES["gaussian-mixture"]]
    assert (summary["relation"] == "substitute").all() and (summary["claimed_epsilon"] == 2).all()
    assert summary["analysis"].iloc[0].startswith("vulnerable record 1 (population row ")
    assert "substitute-one" in (out / "report.html").read_text(encoding="utf-8")


class BrokenRecipe(BaseEstimator):
    """A generator whose every training fails (to plant a failure)."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X):
        raise RuntimeError("planted failure")

    def sample(self, n_samples=None):
        raise RuntimeError("planted failure")


def test_a_failed_recipe_gives_a_partial_report_and_exit_3(tmp_path, monkeypatch):
    from sklearn_mace.report._kinds.algorithm import _audit as _algorithm

    real = _algorithm.make_recipe

    def planted(name, **kwargs):
        return BrokenRecipe() if name == "wrong-noise-histogram" else real(name, **kwargs)

    monkeypatch.setattr(_algorithm, "make_recipe", planted)
    out = tmp_path / "out"
    status = main(["audit-algorithm", "--n-runs", "20", "--out", str(out), "--quiet"])
    assert status == 3
    summary = pd.read_csv(out / "summary.csv")
    failed = summary[summary["status"] == "failed"]
    assert failed["subject"].eq(RECIPES["wrong-noise-histogram"]).all() and len(failed) == 2
    assert failed["reason"].str.contains("planted failure").all()
    assert failed["contradicted"].isna().all()
    assert (summary.loc[summary["status"] == "ok", "subject"] == RECIPES["dp-histogram"]).all()


def test_a_warning_of_the_audit_lands_in_the_report_notes(tmp_path, monkeypatch, capsys):
    """The algorithm audit runs through the command line's one path: a warning raised while
    it runs is a note of its report, and counted on the terminal."""
    import warnings

    from sklearn_mace.report._kinds.algorithm import _audit as _algorithm

    real = _algorithm.make_recipe

    def warning(name, **kwargs):
        warnings.warn(f"planted warning for {name}", UserWarning, stacklevel=1)
        return real(name, **kwargs)

    monkeypatch.setattr(_algorithm, "make_recipe", warning)
    out = tmp_path / "out"
    assert (
        main(["audit-algorithm", "--recipe", "dp-histogram", "--n-runs", "10", "--out", str(out)])
        == 0
    )
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "UserWarning: planted warning for dp-histogram" in page
    printed = capsys.readouterr().out
    assert (
        "1 warnings of NumPy, scikit-learn and other code, listed in the report's notes" in printed
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--n-runs", "5"], "--n-runs must be an integer >= 10"),
        (["--targets", "0"], "--targets must be an integer >= 1"),
        (["--claimed-epsilon", "-1"], "--claimed-epsilon must be in [0, inf)"),
        (["--delta", "1"], "--delta must be in [0, 1)"),
        (["--neighbour", "swap"], "invalid choice: 'swap'"),
        (["--recipe", "made-up"], "invalid choice: 'made-up'"),
        (["--claim", "gauss:1"], "--claim must be pure:EPS, approx:EPS,DELTA or gaussian:MU"),
        (["--claim", "approx:1"], "--claim approx takes 2 number(s)"),
        (["--claim", "gaussian:-1"], "--claim mu must be in [0, inf)"),
        (["--claim", "pure:1:swap"], "--claim relation must be add_remove or substitute"),
    ],
    ids=[
        "n-runs",
        "targets",
        "epsilon",
        "delta",
        "neighbour",
        "recipe",
        "claim-kind",
        "claim-count",
        "claim-mu",
        "claim-relation",
    ],
)
def test_bad_options_exit_2_naming_the_option(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        main(["audit-algorithm", *argv, "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_input_errors_exit_2_before_any_work(capsys, tmp_path):
    numeric = tmp_path / "numeric.csv"
    pd.DataFrame({"x": np.linspace(0, 1, 100)}).to_csv(numeric, index=False)
    afile = tmp_path / "a-file"
    afile.write_text("")
    cases = [
        (["--population", str(numeric)], "needs a categorical population"),
        (["--out", str(afile)], "is an existing file"),
        (["--recipe", "dp-histogram", "dp-histogram"], "names each recipe once"),
    ]
    if "ctgan" not in available_recipes():
        cases.append((["--recipe", "ctgan"], 'pip install "sklearn-mace[ctgan]"'))
    for argv, message in cases:
        with pytest.raises(SystemExit) as stop:
            main(["audit-algorithm", "--n-runs", "10", "--quiet", *argv])
        assert stop.value.code == 2
        assert message in capsys.readouterr().err


def test_a_gaussian_claim_on_the_cli_is_tested_as_a_curve(tmp_path):
    """``--claim gaussian:MU:add_remove`` audited on substitute-one runs: converted by group
    privacy (2 μ), said so in the summary; ``contradicted`` is the certified point below the
    claimed curve, ``mu_lower_bound`` read from the same point."""
    from sklearn_mace.algorithm import PrivacyClaim

    out = tmp_path / "out"
    argv = ["audit-algorithm", "--recipe", "wrong-noise-histogram", "--neighbour", "substitute"]
    argv += ["--claim", "gaussian:0.05:add_remove", "--n-runs", "30", "--out", str(out)]
    assert main([*argv, "--quiet"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert summary["claim"].str.contains("audited on substitute-one neighbours as 0.1-GDP").all()
    claim = PrivacyClaim.gaussian(0.1)
    below = claim.margin(summary["fpr_upper"].to_numpy(), summary["fnr_upper"].to_numpy()) > 0
    np.testing.assert_array_equal(summary["contradicted"].to_numpy(dtype=bool), below)
    from sklearn_mace.metrics._fdp import mu_from_error_bounds

    np.testing.assert_allclose(
        summary["mu_lower_bound"], mu_from_error_bounds(summary["fpr_upper"], summary["fnr_upper"])
    )
    # the card is red exactly when a target contradicts the curve (a Gaussian claim's ε at
    # δ = 0 is infinite: comparing ε would never turn it red), and it names the claim
    page = (out / "report.html").read_text(encoding="utf-8")
    assert summary["contradicted"].any()  # 0.1-GDP is far below the wrong-noise histogram
    assert page.count('class="card leak"') == 1
    assert "the claim is contradicted: 0.05-GDP (add/remove-one)" in page


def test_an_approximate_claim_on_the_cli_sets_the_delta():
    result = audit_algorithm(
        ["dp-histogram"],
        claim=__import__(
            "sklearn_mace.algorithm", fromlist=["PrivacyClaim"]
        ).PrivacyClaim.approximate(0.5, 1e-3),
        n_runs=20,
        verbose=False,
    )
    summary = result.summary
    assert (summary["delta"] == 1e-3).all() and (summary["claimed_epsilon"] == 0.5).all()
    assert (summary["contradicted"] == (summary["epsilon_lower_bound"] > 0.5)).all()


def test_the_one_run_design_on_the_cli(tmp_path, capsys):
    """``--design one-run --canaries m``: one training per recipe, its card written
    (``test_one_run_card.py`` reads it)."""
    out = tmp_path / "out"
    argv = ["audit-algorithm", "--design", "one-run", "--canaries", "400", "--claim", "pure:1"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert summary["recipe"].tolist() == [RECIPES["dp-histogram"], RECIPES["wrong-noise-histogram"]]
    assert (summary["design"] == "one_run").all() and (summary["n_canaries"] == 400).all()
    assert (summary["epsilon_lower_bound"] >= 0).all()
    assert "summary:" in capsys.readouterr().out
    # through the report's staging: the manifest lists every file written, nothing else
    manifest = json.loads((out / ".sklearn-mace-files.json").read_text(encoding="utf-8"))
    own = {".sklearn-mace-files.json", "figures", "guesses.csv", "report.html", "summary.csv"}
    assert {p.name for p in out.iterdir()} == own
    written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert set(manifest["files"]) == written - {".sklearn-mace-files.json"}
    assert sum(name.startswith("figures/tradeoff_") for name in manifest["files"]) == 2
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--neighbour", "substitute", "--out", str(tmp_path / "o2"), "--quiet"])
    assert stop.value.code == 2
    assert "--neighbour add-remove only" in capsys.readouterr().err


def test_comparisons_use_only_the_runs_no_attack_was_fitted_on(demo):
    """A recipe's rule is fitted on part of its runs: comparing two recipes on all runs would
    count those runs as held out. The comparison's advantages are the rules' TPR − FPR on
    the runs that both recipes certify on (``certifying_run`` in records.csv)."""
    _, out = demo
    comparisons = pd.read_csv(out / "comparisons.csv")
    records = pd.read_csv(out / "records.csv").sort_values(["subject", "source", "row"])
    summary = pd.read_csv(out / "summary.csv").set_index(["subject", "analysis"])
    runs = {s: frame for s, frame in records.groupby("subject", sort=False)}
    assert len(comparisons) > 0
    for _, row in comparisons.iterrows():
        a, b = runs[row["subject_a"]], runs[row["subject_b"]]
        both = a["certifying_run"].to_numpy(dtype=bool) & b["certifying_run"].to_numpy(dtype=bool)
        assert 0 < both.sum() < len(both)  # the fitting runs are left out
        for side, frame in (("a", a), ("b", b)):
            threshold = summary.loc[(frame["subject"].iloc[0], row["analysis"]), "threshold"]
            flags = frame[f"score: {row['analysis']}"].to_numpy()[both] >= threshold
            member = frame["member"].to_numpy()[both] == 1
            expected = flags[member].mean() - flags[~member].mean()
            assert row[f"heldout_advantage_{side}"] == pytest.approx(expected, abs=1e-12)


def test_dpsgd_recipes_in_one_run_keep_and_break_their_claim(tmp_path, capsys):
    # issue #30's command: the correct trainer keeps the accountant's curve, the noise bug
    # (σ/4, same claim) breaks it; one training each with 1 000 Dirac canaries
    pytest.importorskip("opacus")
    out = tmp_path / "out"
    argv = ["audit-algorithm", "--recipe", "dpsgd-logreg", "dpsgd-logreg-noise-bug"]
    argv += ["--design", "one-run", "--claimed-epsilon", "4", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert summary["contradicted"].tolist() == [False, True]
    assert summary["epsilon_lower_bound"].iloc[0] <= 4.0  # the claim's ε at δ = 1e-5
    assert summary["claim"].str.contains("curve").all()  # the accountant's, not ε alone


def test_dpsgd_recipes_are_refused_in_the_multi_run_design(tmp_path, capsys):
    pytest.importorskip("opacus")
    argv = ["audit-algorithm", "--recipe", "dpsgd-logreg", "--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert "add --design one-run" in capsys.readouterr().err
    with pytest.raises(AuditInputError, match="pass design=.one_run."):
        audit_algorithm(["dpsgd-logreg"], n_runs=10, verbose=False)


@pytest.mark.parametrize(
    "population, n_canaries, message",
    [
        (None, 100_000, "GiB table"),  # a column per canary: refused, not a MemoryError
        (pd.DataFrame({"y": [0, 1] * 50}), 20, "at least one"),  # a label and no feature
        (pd.DataFrame({"a": ["x", "y"] * 50, "y": [0, 1] * 50}), 20, "numeric features"),
    ],
    ids=["too-many-canaries", "label-only", "text-column"],
)
def test_dpsgd_one_run_refuses_populations_it_cannot_use(population, n_canaries, message):
    pytest.importorskip("opacus")
    from sklearn_mace.report._kinds.algorithm._audit import audit_algorithm_one_run

    with pytest.raises(AuditInputError, match=message):
        audit_algorithm_one_run(["dpsgd-logreg"], population, n_canaries=n_canaries)


def test_dpsgd_white_box_and_the_mlp_in_one_run(tmp_path, capsys):
    # issue #30 items 3 and 5: the white-box reading of the linear recipes (every canary
    # guessed on) keeps the true claim and breaks the bug's; the MLP recipe runs black-box
    pytest.importorskip("opacus")
    out = tmp_path / "out"
    argv = ["audit-algorithm", "--recipe", "dpsgd-logreg", "dpsgd-logreg-noise-bug"]
    argv += ["--design", "one-run", "--claimed-epsilon", "4", "--white-box"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert summary["contradicted"].tolist() == [False, True]
    assert summary["recipe"].str.contains("white-box").all()
    assert (summary["n_scored_canaries"] == 1000).all()  # no attack trained on a part
    assert summary["epsilon_lower_bound"].iloc[0] <= 4.0
    argv = ["audit-algorithm", "--recipe", "dpsgd-mlp", "--design", "one-run"]
    argv += ["--claimed-epsilon", "4", "--canaries", "200"]
    assert main([*argv, "--out", str(tmp_path / "mlp"), "--quiet"]) == 0
    summary = pd.read_csv(tmp_path / "mlp" / "summary.csv")
    assert summary["recipe"].str.contains("MLP").all() and not summary["contradicted"].iloc[0]
    with pytest.raises(SystemExit):
        main([*argv, "--white-box", "--out", str(tmp_path / "refused")])
    assert "--white-box reads the per-step gradients" in capsys.readouterr().err
    from sklearn_mace.report._kinds.algorithm._audit import audit_algorithm_one_run

    with pytest.raises(AuditInputError, match="white_box=True"):
        audit_algorithm_one_run(["dpsgd-mlp"], white_box=True)
