"""`audit_algorithm(certificate="rank_test")` and `--certificate rank-test` (issue #30).

The rank test itself (validity on null data, tightness) is tested in
``tests/metrics/`` and ``tests/algorithm/``; here: the option reaches every recipe's
``AlgorithmAudit``, the report prints the audit's own numbers, the verdict also counts a
certified ε above the claim, and the default report is as it was. 40 runs per side keep the
rank test to a fraction of a second per target.
"""

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.cli import main
from sklearn_mace.report import AuditInputError
from sklearn_mace.report._engine import keyed_seed
from sklearn_mace.report._kinds.algorithm._audit import RECIPES, RUNS, audit_algorithm

N_RUNS = 40
RANK_COLUMNS = ["certificate", "rank_epsilon_lower_bound", "rank_k_high", "rank_k_low"]


def _cli(out, *extra):
    argv = ["audit-algorithm", "--n-runs", str(N_RUNS), "--out", str(out), "--quiet", *extra]
    return main(argv)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The demo through the CLI, with the default certificate and with the rank test."""
    root = tmp_path_factory.mktemp("rank")
    assert _cli(root / "threshold") == 0
    assert _cli(root / "rank", "--certificate", "rank-test") == 0
    return root / "threshold", root / "rank"


def test_the_flag_reaches_the_audit_and_the_summary_says_so(runs):
    threshold, rank = (pd.read_csv(out / "summary.csv") for out in runs)
    assert list(rank.columns[-len(RANK_COLUMNS) :]) == RANK_COLUMNS
    assert (rank["certificate"] == "rank_test").all()
    # the reported ε is the larger of the rank test's and the point's
    assert (rank["epsilon_lower_bound"] >= rank["rank_epsilon_lower_bound"]).all()
    # measured on this demo (fixed seeds): the rank test certifies more for every recipe,
    # although its point is certified at half the level
    for subject in rank["subject"].unique():
        assert (
            rank.loc[rank["subject"] == subject, "epsilon_lower_bound"].max()
            > threshold.loc[threshold["subject"] == subject, "epsilon_lower_bound"].max()
        )
    # one certified point per target, the same runs: the point is wider at α/2, never tighter
    assert (rank["fpr_upper"] >= threshold["fpr_upper"]).all()
    assert (rank["fnr_upper"] >= threshold["fnr_upper"]).all()


def test_the_default_summary_has_no_rank_columns(runs):
    threshold, _ = runs
    summary = pd.read_csv(threshold / "summary.csv")
    assert not set(RANK_COLUMNS) & set(summary.columns)
    assert summary.columns[-1] == "mu_lower_bound"
    assert "Certificate:" not in (threshold / "report.html").read_text(encoding="utf-8")


def test_the_report_gives_the_audits_own_rank_numbers(runs):
    from sklearn_mace.algorithm import (
        AlgorithmAudit,
        ReleaseFeatures,
        WrongNoiseHistogramSynthesizer,
    )
    from sklearn_mace.datasets import make_categorical_population

    _, rank = runs
    summary = pd.read_csv(rank / "summary.csv")
    name = RECIPES["wrong-noise-histogram"]
    rows = summary[summary["subject"] == name]
    demo = make_categorical_population()
    audit = AlgorithmAudit(
        WrongNoiseHistogramSynthesizer(1.0, categories=[np.arange(k) for k in demo.categories]),
        targets=demo.targets,
        n_runs=N_RUNS,
        train_size=demo.train_size,
        datasets="fixed",
        featurizer=ReleaseFeatures(None, n_neighbors=(), radii=(0.0,), bandwidth=None),
        claimed_epsilon=1.0,
        certificate="rank_test",
        random_state=keyed_seed(0, name, RUNS, "scores"),
    ).fit(demo.data)
    np.testing.assert_allclose(rows["epsilon_lower_bound"], audit.epsilon_lower_bounds_)
    np.testing.assert_allclose(rows["rank_epsilon_lower_bound"], audit.rank_epsilon_lower_bounds_)
    np.testing.assert_allclose(rows["mu_lower_bound"], audit.mu_lower_bounds_)
    assert rows["contradicted"].tolist() == audit.contradicted_.tolist()
    pairs = [
        tuple(None if pd.isna(k) else int(k) for k in pair)
        for pair in zip(rows["rank_k_high"], rows["rank_k_low"], strict=True)
    ]
    assert pairs == list(audit.rank_pairs_)


def test_a_certified_epsilon_above_the_claim_contradicts_it(runs):
    """The engine's rule is the audit's: the point below the claimed curve, or the certified
    ε above the claim's ε. On this demo the wrong-noise histogram's most common record is
    contradicted by its rank test alone (its point lies above the curve)."""
    from sklearn_mace.algorithm import PrivacyClaim

    _, rank = runs
    summary = pd.read_csv(rank / "summary.csv")
    claim = PrivacyClaim.pure(1.0)
    point = claim.contradicted_by(summary["fpr_upper"], summary["fnr_upper"])
    expected = point | (summary["epsilon_lower_bound"] > summary["claimed_epsilon"])
    assert summary["contradicted"].tolist() == expected.tolist()
    assert (summary["contradicted"] & ~point).any()
    page = (rank / "report.html").read_text(encoding="utf-8")
    assert page.count('class="card leak"') == 1  # the wrong-noise recipe only


def test_the_card_says_which_certificate_gave_the_epsilon(runs):
    _, rank = runs
    page = (rank / "report.html").read_text(encoding="utf-8")
    words = "ε from a rank test of both tails (no selection split), the point at α/2"
    assert page.count(words) == 2  # one card per recipe
    assert "rank-test ε ≥" in page and "both tails (k = " in page
    assert "Rank test</b>" in page  # how to read it


def test_the_card_states_the_joint_coverage_of_epsilon_and_mu(runs):
    # three events at alpha/2 (point, epsilon rank test, mu rank test): at 95 % the epsilon
    # and mu bounds hold all together at 92.5 %, and the card must not claim 95 % for both
    threshold, rank = runs
    page = (rank / "report.html").read_text(encoding="utf-8")
    assert page.count("the ε and μ bounds all together hold at 92.5%") == 2
    default = (threshold / "report.html").read_text(encoding="utf-8")
    assert "all together hold at" not in default


def test_a_bad_certificate_exits_2_naming_the_flag(capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        _cli(tmp_path / "out", "--certificate", "pooled")
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--certificate" in err and "invalid choice: 'pooled'" in err
    assert not (tmp_path / "out").exists()


def test_the_one_run_design_refuses_the_rank_test(capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        _cli(tmp_path / "out", "--certificate", "rank-test", "--design", "one-run")
    assert stop.value.code == 2
    assert "--certificate rank-test certifies the multi-run design" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("certificate", ["rank-test", "pooled", None])
def test_a_bad_certificate_in_python_names_the_parameter(certificate):
    with pytest.raises(AuditInputError, match="certificate must be 'threshold'"):
        audit_algorithm(["dp-histogram"], n_runs=20, certificate=certificate, verbose=False)


def test_a_gaussian_claim_reads_the_mu_rank_test(tmp_path):
    """Under a μ-GDP claim the report's μ and verdict are the audit's: μ the larger of the
    point's and the μ rank test's, contradicted by the point or by that test (not the ε
    test). Measured on this demo (fixed seeds): the wrong-noise histogram's first target has
    point μ 0.81 and μ test 1.05, so the claim μ = 1 is contradicted by the test alone."""
    from sklearn_mace.algorithm import (
        AlgorithmAudit,
        PrivacyClaim,
        ReleaseFeatures,
        WrongNoiseHistogramSynthesizer,
    )
    from sklearn_mace.datasets import make_categorical_population

    assert _cli(tmp_path, "--certificate", "rank-test", "--claim", "gaussian:1") == 0
    summary = pd.read_csv(tmp_path / "summary.csv")
    name = RECIPES["wrong-noise-histogram"]
    rows = summary[summary["subject"] == name]
    demo = make_categorical_population()
    audit = AlgorithmAudit(
        WrongNoiseHistogramSynthesizer(1.0, categories=[np.arange(k) for k in demo.categories]),
        targets=demo.targets,
        n_runs=N_RUNS,
        train_size=demo.train_size,
        datasets="fixed",
        featurizer=ReleaseFeatures(None, n_neighbors=(), radii=(0.0,), bandwidth=None),
        claim=PrivacyClaim.gaussian(1.0),
        certificate="rank_test",
        random_state=keyed_seed(0, name, RUNS, "scores"),
    ).fit(demo.data)
    np.testing.assert_allclose(rows["mu_lower_bound"], audit.mu_lower_bounds_)
    assert rows["contradicted"].tolist() == audit.contradicted_.tolist()
    point = PrivacyClaim.gaussian(1.0).contradicted_by(rows["fpr_upper"], rows["fnr_upper"])
    by_test = audit.rank_mu_lower_bounds_ > 1.0
    assert rows["contradicted"].tolist() == (point | by_test).tolist()
    assert (by_test & ~point).any()  # the case this test is about occurs
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "μ rank test, which reads all its certifying runs" in page  # the figure's caption
