"""The reports' comparisons of subjects: paired tests of the certified rules' held-out
advantages, Holm-adjusted, read as "'b' leaks less than 'a'" only when the test says so.

Cheap planted analyses through the engine (as in ``test_report_engine.py``): subjects drawn
the same way must be told apart in at most α of the audits (the level), a planted
difference must be found, and the numbers must be those of the cards' certified rules.
"""

import io

import numpy as np
import pytest
from scipy.stats import binom

from sklearn_mace.report import AuditResult, write_report
from sklearn_mace.report._engine import BAYES_RULE, Analysis, AuditEngine, Scores, Subject
from sklearn_mace.report._html import render_report
from sklearn_mace.report._present import Presentation
from sklearn_mace.report._section import Report
from sklearn_mace.report._summary import print_summary
from tests.report.test_report_engine import N, _targets

ALPHA = 0.05


def _shifted(shift):
    """Held-out log-odds-like scores: members shifted by ``shift`` sd, centred on 0."""

    def compute(engine, subject, seed):
        rng = np.random.default_rng(seed)
        m = engine.targets.membership
        return Scores(score=rng.normal(size=2 * N) + shift * (m - 0.5))

    return compute


def _by_subject(shifts):
    """Scores whose shift depends on the subject (``shifts``: name -> shift)."""

    def compute(engine, subject, seed):
        return _shifted(shifts[subject.name])(engine, subject, seed)

    return compute


def _boom_on(name):
    def compute(engine, subject, seed):
        if subject.name == name:
            raise RuntimeError("planted failure")
        return _shifted(1.0)(engine, subject, seed)

    return compute


class _Engine(AuditEngine):
    kind = "test"

    def __init__(self, analyses, random_state=0, on_error="raise"):
        super().__init__(
            _targets(),
            confidence=1 - ALPHA,
            delta=0.0,
            random_state=random_state,
            on_error=on_error,
        )
        self._analyses = list(analyses)

    def analyses(self, subject):
        return self._analyses


def _audit(analyses, names, random_state=0, on_error="raise"):
    engine = _Engine(analyses, random_state=random_state, on_error=on_error)
    subjects = engine.run([Subject(name, {}) for name in names])
    return AuditResult(
        kind="test",
        subjects=subjects,
        targets=engine.targets,
        confidence=engine.confidence,
        delta=engine.delta,
        claimed_epsilon=1.0,
        n_rows={"members": N, "non-members": N},
    )


def test_a_planted_difference_is_read_with_its_direction():
    shifts = {"leaky": 3.0, "safe": 0.0}
    result = _audit(
        [
            Analysis("Bayes rule", _by_subject(shifts), threshold=BAYES_RULE),
            Analysis("split rule", _by_subject(shifts)),  # chosen on each subject's own half
            Analysis("figure", _by_subject(shifts), threshold=BAYES_RULE, figure=True),
        ],
        ["leaky", "safe"],
    )
    table = result.comparisons
    (row,) = table.itertuples(index=False)  # only the table analysis with a fixed rule
    assert row.analysis == "Bayes rule" and (row.subject_a, row.subject_b) == ("leaky", "safe")
    assert row.reading == "'safe' leaks less than 'leaky'"
    assert row.p_value_holm <= ALPHA and row.difference_low > 0 and row.family_size == 1
    # the held-out advantages are those of the rules the cards certify (all targets)
    for subject, value in zip(
        result.subjects, (row.heldout_advantage_a, row.heldout_advantage_b), strict=True
    ):
        c = subject.analysis("Bayes rule").claim
        assert c.strategy == "explicit" and c.n_members == N
        assert value == pytest.approx(1 - 2 * (0.5 * c.fnr + 0.5 * c.fpr), abs=1e-12)
        assert c.advantage_lower_bound <= max(value, 0.0)  # floored at the trivial |2p − 1|
    leaky = result.subjects[0].analysis("Bayes rule").claim
    assert row.advantage_lower_bound_a == leaky.advantage_lower_bound


def test_every_pair_is_one_test_of_one_holm_family():
    shifts = {"r1": 3.0, "r2": 3.0, "r3": 0.0}
    result = _audit(
        [
            Analysis("A", _by_subject(shifts), threshold=BAYES_RULE),
            Analysis("B", _by_subject(shifts), threshold=0.5),
        ],
        list(shifts),
    )
    table = result.comparisons
    assert len(table) == 6 and (table["family_size"] == 6).all()
    assert table["interval_confidence"].iloc[0] == pytest.approx(1 - ALPHA / 6)
    assert (table["p_value_holm"] >= table["p_value"]).all()
    found = table[table["reading"] != "no difference shown"]
    assert set(found["reading"]) == {"'r3' leaks less than 'r1'", "'r3' leaks less than 'r2'"}
    assert (found["p_value_holm"] <= ALPHA).all()
    shown = table[table["reading"] == "no difference shown"]
    assert (shown["p_value_holm"] > ALPHA).all()
    assert set(zip(shown["subject_a"], shown["subject_b"], strict=True)) == {("r1", "r2")}


def _null_rejections(n_audits, shift):
    """Audits of two subjects drawn the same way: how many read a difference."""
    rejected = 0
    for seed in range(n_audits):
        result = _audit(
            [Analysis("Bayes rule", _shifted(shift), threshold=BAYES_RULE)],
            ["release 1", "release 2"],
            random_state=seed,
        )
        rejected += (result.comparisons["reading"] != "no difference shown").sum()
    return int(rejected)


@pytest.mark.parametrize("shift", [0.0, 1.0])
def test_subjects_drawn_the_same_way_are_told_apart_in_at_most_alpha(shift):
    # 300 null pairs per setting (no leak; a leak of the same size in both): a valid
    # 5 % test exceeds Bin(300, 0.05)'s 0.999 quantile (27) with probability below 0.001
    n = 300
    assert _null_rejections(n, shift) <= binom.ppf(0.999, n, ALPHA)


@pytest.mark.slow
@pytest.mark.parametrize("shift", [0.0, 1.0, 2.0])
def test_subjects_drawn_the_same_way_hold_the_level_on_1000_pairs(shift):
    n = 1000
    assert _null_rejections(n, shift) <= binom.ppf(0.999, n, ALPHA)


def test_a_failed_analysis_skips_its_pairs_and_says_so():
    result = _audit(
        [
            Analysis("fails on s2", _boom_on("s2"), threshold=BAYES_RULE),
            Analysis("ok", _shifted(1.0), threshold=BAYES_RULE),
        ],
        ["s1", "s2", "s3"],
        on_error="report",
    )
    table = result.comparisons
    assert set(table["analysis"]) == {"fails on s2", "ok"}
    pairs = set(zip(table["analysis"], table["subject_a"], table["subject_b"], strict=True))
    assert ("fails on s2", "s1", "s3") in pairs and len(table) == 4  # 1 + 3 pairs
    skipped = table.attrs["skipped"]
    assert len(skipped) == 2 and all("'s2' failed" in s for s in skipped)
    report = Report(result, Presentation())
    report.comparisons = table
    page = render_report(report, "t")
    assert "Not compared (an analysis failed)" in page


def test_one_subject_has_no_comparisons_and_no_file(tmp_path):
    two = _audit([Analysis("Bayes rule", _shifted(3.0), threshold=BAYES_RULE)], ["a", "b"])
    assert (
        write_report(two, tmp_path / "out", presentation=Presentation())["comparisons"]
    ).exists()
    result = _audit([Analysis("Bayes rule", _shifted(3.0), threshold=BAYES_RULE)], ["only"])
    assert result.comparisons.empty
    # the same folder: the earlier run's comparisons.csv goes (a folder never mixes runs)
    paths = write_report(result, tmp_path / "out", presentation=Presentation())
    assert "comparisons" not in paths and not (tmp_path / "out" / "comparisons.csv").exists()
    assert "Comparisons of the" not in paths["report"].read_text(encoding="utf-8")


def test_the_report_and_the_summary_show_the_comparisons(tmp_path):
    shifts = {"release 1": 3.0, "release 2": 0.0}
    result = _audit(
        [Analysis("Bayes rule", _by_subject(shifts), threshold=BAYES_RULE)], list(shifts)
    )
    paths = write_report(result, tmp_path / "out", presentation=Presentation())
    written = paths["comparisons"].read_text(encoding="utf-8").splitlines()
    assert written[0].startswith("analysis,subject_a,subject_b,heldout_advantage_a")
    page = paths["report"].read_text(encoding="utf-8")
    assert "Comparisons of the subjects" in page
    assert "&#x27;release 2&#x27; leaks less than &#x27;release 1&#x27;" in page
    assert "This test is a family of its own" in page  # one test: singular
    printed = io.StringIO()
    print_summary(result, Presentation(), paths, file=printed)
    text = printed.getvalue()
    assert "comparisons: 1 paired test of held-out advantages" in text
    assert "'release 2' leaks less than 'release 1' (Bayes rule" in text
