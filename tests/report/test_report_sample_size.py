"""The reports' sample-size line: the planner's answer for the strongest analysis, at the
level its claim is made, and what that answer means when the engine certifies."""

import html
import io

import numpy as np
import pytest
from scipy.stats import binom

from sklearn_mace.metrics import audit_epsilon, audit_sample_size
from sklearn_mace.report import write_report
from sklearn_mace.report._engine import BAYES_RULE, Analysis
from sklearn_mace.report._present import Presentation
from sklearn_mace.report._sample_size import planning_analysis, sample_size_line
from sklearn_mace.report._show import presentation_of
from sklearn_mace.report._summary import print_summary
from tests.report.test_report_comparisons import _audit, _boom_on, _by_subject, _shifted
from tests.report.test_report_engine import N


def _planned(result, subject, epsilon):
    m = result.membership
    return audit_sample_size(
        epsilon=epsilon,
        confidence=subject.claim_confidence,
        nonmember_ratio=(m.size - m.sum()) / m.sum(),
    )


def test_the_line_plans_for_the_strongest_analysis_at_its_claim_level():
    shifts = {"weak": 1.0, "strong": 4.0}
    result = _audit(
        [
            Analysis("Bayes rule", _by_subject(shifts), threshold=BAYES_RULE),
            Analysis("noise", _shifted(0.0), threshold=BAYES_RULE),
        ],
        list(shifts),
    )
    subject, analysis = planning_analysis(result)
    assert (subject.name, analysis.name) == ("strong", "Bayes rule")
    plan = _planned(result, subject, 1.0)
    line = sample_size_line(result, Presentation())
    assert f"would need about {plan.n_members} members and {plan.n_nonmembers} non-members" in line
    assert f"Bayes rule at its claim's level ({100 * subject.claim_confidence:.2f} %)" in line
    assert f"this audit has {N} and {N}." in line and "leaked ε = 1 " in line


def test_a_split_rule_needs_twice_the_planned_count_and_claimed_zero_plans_for_one():
    result = _audit([Analysis("split", _shifted(4.0))], ["only"])
    result.claimed_epsilon = 0.0
    (subject,) = result.subjects
    plan = _planned(result, subject, 1.0)
    line = sample_size_line(result, Presentation())
    assert f"at least {2 * plan.n_members} members and {2 * plan.n_nonmembers} non-members" in line
    assert "leaked ε = 1 " in line and "hence twice the planned count" in line


def test_the_algorithm_audit_counts_the_runs_that_certify():
    # its attack is fitted on half of the runs of each side and certified on the other
    # half: the line compares the need with the certifying runs, as its card does (it said
    # "this audit has 30 and 30" where the card says "15 runs per side certify")
    from sklearn_mace.report._kinds.algorithm._audit import audit_algorithm

    result = audit_algorithm(["dp-histogram"], n_runs=30, verbose=False)
    certify = int(result.summary["n_certify_runs"].iloc[0])
    assert certify < 30
    line = sample_size_line(result, presentation_of(result))
    assert f"this audit certifies on {certify} and {certify} (of its 30 and 30)." in line
    assert "certified on every target" not in line


def test_no_line_when_every_analysis_failed(tmp_path):
    result = _audit(
        [Analysis("fails", _boom_on("only"), threshold=BAYES_RULE)], ["only"], on_error="report"
    )
    assert planning_analysis(result) is None and sample_size_line(result, Presentation()) == ""
    paths = write_report(result, tmp_path / "out", presentation=Presentation())
    assert "Sample size:" not in paths["report"].read_text(encoding="utf-8")


def test_the_report_and_the_summary_print_the_line(tmp_path):
    result = _audit([Analysis("Bayes rule", _shifted(2.0), threshold=BAYES_RULE)], ["a", "b"])
    paths = write_report(result, tmp_path / "out", presentation=Presentation())
    assert html.escape(sample_size_line(result, Presentation())) in paths["report"].read_text(
        encoding="utf-8"
    )
    printed = io.StringIO()
    print_summary(result, Presentation(), paths, file=printed)
    assert sample_size_line(result, Presentation()) in printed.getvalue()


@pytest.mark.parametrize("epsilon, n_claims", [(1.0, 9), (2.0, 4)])
def test_at_the_planned_size_the_engines_claim_certifies_as_often_as_planned(epsilon, n_claims):
    # the engine's claim for a rule fixed in advance: audit_epsilon at 1 − α/K on every
    # target. An attack that errs like randomized response at ε, at the planned size, must
    # certify ε > 0 in at least 80 % of 400 audits (fails with probability < 0.001 when the
    # plan's power is at least 80 %: the binomial 0.001 quantile of Bin(400, 0.8) is 295)
    level = 1 - 0.05 / n_claims
    plan = audit_sample_size(epsilon=epsilon, confidence=level)
    error = 1 / (1 + np.exp(epsilon))
    rng = np.random.default_rng(0)
    certified = 0
    for _ in range(400):
        members = (rng.random(plan.n_members) >= error).astype(float)  # 1 = called member
        others = (rng.random(plan.n_nonmembers) < error).astype(float)
        claim = audit_epsilon(members, others, confidence=level, threshold=1.0)
        certified += claim.epsilon_lower_bound > 0
    assert certified >= binom.ppf(0.001, 400, 0.8)


def test_a_report_without_figure_points_does_not_mention_them(tmp_path):
    # the model and algorithm reports have no figure points: "figure points included" was
    # copied onto them from the release report
    result = _audit([Analysis("Bayes rule", _shifted(2.0), threshold=BAYES_RULE)], ["a"])
    page = write_report(result, tmp_path / "out", presentation=Presentation())["report"].read_text(
        encoding="utf-8"
    )
    assert "figure point" not in page


@pytest.mark.parametrize(
    "value, shown", [(-1e-17, "0.000"), (-0.0, "0.000"), (-0.0004, "0.000"), (-0.0006, "-0.001")]
)
def test_a_number_that_rounds_to_zero_prints_unsigned(value, shown):
    from sklearn_mace.report._format import fmt

    assert fmt(value) == shown
