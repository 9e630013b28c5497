"""The three verdicts: red needs a certified leak (or members verbatim beyond chance), green
needs every analysis bounded, anything else is inconclusive.

Cheap planted analyses through the engine (scores of known law), and real audits where the
rule is about the audit's own facts (verbatim copies).
"""

import io

import numpy as np
import pandas as pd
import pytest

from sklearn_mace.report import AuditResult, audit_release
from sklearn_mace.report._engine import Analysis, AuditEngine, Scores, Subject, Targets
from sklearn_mace.report._html import Cards
from sklearn_mace.report._kinds.algorithm._audit import CLAIM_RULES
from sklearn_mace.report._kinds.algorithm._view import power_text
from sklearn_mace.report._kinds.release import _audit as release_module
from sklearn_mace.report._present import Presentation
from sklearn_mace.report._section import Report
from sklearn_mace.report._summary import print_summary
from sklearn_mace.report._verdict import ClaimRules, check_margin, disclosure, explanation


def _noise(engine, subject, seed):
    """Scores independent of membership."""
    n = len(engine.targets.membership)
    return Scores(score=np.random.default_rng(seed).normal(size=n))


def _weak_signal(engine, subject, seed):
    """Members shifted by 0.4 standard deviations: best advantage 2Φ(0.2) − 1 ≈ 0.16."""
    m = engine.targets.membership
    return Scores(score=np.random.default_rng(seed).normal(size=m.size) + 0.4 * m)


def _tested(p_value):
    def compute(engine, subject, seed):
        scores = _noise(engine, subject, seed)
        scores.estimates = {"p_value": p_value}
        return scores

    return compute


def _boom(engine, subject, seed):
    raise RuntimeError("planted failure")


class _Engine(AuditEngine):
    kind = "test"

    def __init__(self, analyses, n, **kwargs):
        m = np.r_[np.ones(n, dtype=int), np.zeros(n, dtype=int)]
        targets = Targets(
            membership=m,
            source=np.where(m == 1, "members", "non-members"),
            row=np.r_[np.arange(n), np.arange(n)],
            prior=0.5,
        )
        super().__init__(targets, confidence=0.95, delta=0.0, random_state=0, **kwargs)
        self._analyses = list(analyses)

    def analyses(self, subject):
        return self._analyses


def _audit(analyses, n, names=("x",), margin=0.2, claim_rules=None, on_error="raise"):
    engine = _Engine(analyses, n, on_error=on_error)
    subjects = engine.run([Subject(name, {}) for name in names])
    return AuditResult(
        kind="test",
        subjects=subjects,
        targets=engine.targets,
        confidence=0.95,
        delta=0.0,
        claimed_epsilon=1.0,
        n_rows={"members": n, "non-members": n},
        claim_rules=ClaimRules() if claim_rules is None else claim_rules,
        bounded_margin=margin,
    )


def _printed(result):
    out = io.StringIO()
    print_summary(result, Presentation(), {"report": "report.html"}, file=out)
    return out.getvalue()


def card(result, subject):
    """The common card of ``subject``."""
    return Cards().card(Report(result, Presentation()), subject)


# ----------------------------------------------------------------------------- green
def test_a_big_clean_audit_is_green_with_its_bounds():
    # two null analyses, 2500 targets a side: bounds of about 0.07 at 1 − 0.05/2 each
    result = _audit([Analysis("noise", _noise), Analysis("noise, fixed", _noise, 0.0)], 2500)
    (subject,) = result.subjects
    assert result.verdict(subject) == "bounded" and result.headline(subject) == "leakage bounded"
    assert subject.advantage_upper_bound <= result.bounded_margin
    summary = result.summary
    assert (summary["advantage_upper_bound"] <= 0.2).all()
    assert (summary["advantage_upper_bound"] >= summary["advantage_lower_bound"]).all()
    assert np.isfinite(summary["advantage_epsilon_upper_bound"]).all()
    page = card(result, subject)
    assert '<div class="card bounded">' in page and "<b>at most" in page
    assert "leakage bounded: no threshold on any analysis" in page
    printed = _printed(result)
    assert "x: [leakage bounded]" in printed and "adv. ≤" in printed
    assert f"{subject.advantage_upper_bound:.3f}" in printed


def test_a_big_clean_model_audit_is_green_with_printed_bounds(tmp_path):
    # a model trained on other rows of the population: members and non-members exchangeable;
    # 3000 of each bound every analysis below 0.1 (bounded_sample_size: 2176 for 80 %)
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    from sklearn_mace.report import audit_model, write_report

    X, y = make_classification(n_samples=9000, n_features=5, n_informative=3, random_state=0)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)]).assign(y=y)
    train, members, non_members = (frame.iloc[i : i + 3000] for i in (0, 3000, 6000))
    model = LogisticRegression(max_iter=500).fit(train.drop(columns="y"), train["y"])
    result = audit_model(
        {"null": model},
        members.reset_index(drop=True),
        non_members.reset_index(drop=True),
        label="y",
        verbose=False,
    )
    (subject,) = result.subjects
    assert result.verdict(subject) == "bounded" and subject.advantage_upper_bound <= 0.1
    paths = write_report(result, tmp_path / "out")
    summary = pd.read_csv(paths["summary"])
    assert (summary["advantage_upper_bound"] <= 0.1).all()
    page = paths["report"].read_text(encoding="utf-8")
    assert '<div class="card bounded">' in page and "leakage bounded" in page
    printed = _printed(result)
    assert "null: [leakage bounded]" in printed
    assert f"{subject.advantage_upper_bound:.3f} at prior 0.5" in printed


def test_the_margin_decides_between_green_and_inconclusive():
    result = _audit([Analysis("noise", _noise)], 2500, margin=0.2)
    (subject,) = result.subjects
    upper = subject.advantage_upper_bound
    assert result.verdict(subject) == "bounded"
    result.bounded_margin = upper * 0.99
    assert result.verdict(subject) == "inconclusive"
    text = " ".join(explanation(result, subject))
    assert f"could not bound the advantage of any threshold below {upper:.3f}" in text
    assert "members and" in text and "non-members would bound every analysis" in text


# ----------------------------------------------------------------------------- inconclusive
def test_a_leaky_but_small_audit_is_inconclusive_not_green():
    # a true advantage of about 0.16, above the margin: no card may be green, and with 40
    # targets a side most cards certify nothing, so they say how many records would decide
    analyses = [Analysis("weak", _weak_signal), Analysis("weak, fixed", _weak_signal, 0.0)]
    result = _audit(analyses, 40, names=[f"s{i}" for i in range(30)], margin=0.1)
    verdicts = [result.verdict(s) for s in result.subjects]
    assert "bounded" not in verdicts
    grey = [s for s, v in zip(result.subjects, verdicts, strict=True) if v == "inconclusive"]
    assert len(grey) >= 20
    page = card(result, grey[0])
    assert '<div class="card inconclusive">' in page and "could not bound" in page
    assert "would bound every analysis within the margin (80 % power)" in page
    assert "inconclusive: no leakage certified" in result.headline(grey[0])


def test_a_failed_analysis_leaves_the_card_unbounded():
    result = _audit([Analysis("noise", _noise), Analysis("boom", _boom)], 2500, on_error="report")
    (subject,) = result.subjects
    assert np.isnan(subject.advantage_upper_bound) and subject.bound_source is None
    assert result.verdict(subject) == "inconclusive"
    assert "1 analysis(es) failed" in " ".join(explanation(result, subject))
    assert "not bounded (an analysis failed)" in card(result, subject)


def test_a_significant_p_value_is_never_beside_green():
    # bounded scores, but an exact "no leak" test rejecting at α/K = 0.025
    for p_value, expected in [(1e-6, "inconclusive"), (0.02, "inconclusive"), (0.5, "bounded")]:
        analyses = [Analysis("MACE", _tested(p_value)), Analysis("noise", _noise, 0.0)]
        result = _audit(analyses, 2500)
        (subject,) = result.subjects
        assert result.verdict(subject) == expected, p_value
        text = " ".join(explanation(result, subject))
        assert ('"no leak" test of MACE rejects' in text) == (expected == "inconclusive")


def test_an_algorithm_card_is_never_green_and_states_its_power():
    result = _audit([Analysis("noise", _noise)], 2500, claim_rules=CLAIM_RULES)
    (subject,) = result.subjects
    assert subject.advantage_upper_bound <= 0.2  # it would be green on a release card
    assert result.verdict(subject) == "inconclusive"
    assert result.headline(subject).startswith("inconclusive: the claim is not contradicted: ε = 1")
    subject.facts["n_certify_runs"] = 500
    text = power_text(result, subject)
    assert "with 500 certifying runs per side" in text and "true ε is at least 1." in text
    subject.facts["n_certify_runs"] = 3
    assert "cannot contradict the claim" in power_text(result, subject)


def test_bounded_margin_is_checked():
    assert check_margin(0.05) == 0.05
    for bad in (0, 1, -0.1, float("nan")):
        with pytest.raises(ValueError, match="bounded_margin"):
            check_margin(bad)
    with pytest.raises(TypeError, match="bounded_margin"):
        check_margin("0.1")


# ----------------------------------------------------------------------------- verbatim
def _population(rng, n):
    return pd.DataFrame(
        {
            "age": rng.normal(50, 12, n).round(2),
            "income": rng.lognormal(3, 0.6, n).round(2),
            "score": rng.normal(0, 1, n).round(3),
        }
    )


def test_a_planted_verbatim_copy_is_red(monkeypatch):
    # the case: 20 of 200 members verbatim among 980 other rows, no reference
    # (so about 93 non-member targets): the ε claims alone certify nothing here
    monkeypatch.setattr(release_module, "SIZE_FRACTIONS", ())
    rng = np.random.default_rng(7)
    members, non_members = _population(rng, 200), _population(rng, 186)
    copied = rng.choice(200, 20, replace=False)
    release = pd.concat([members.iloc[copied], _population(rng, 980)], ignore_index=True)
    result = audit_release(
        members, non_members, {"copies": release}, disclosure=False, verbose=False
    )
    (subject,) = result.subjects
    assert subject.facts["member_exact_copies"] == 20
    assert subject.facts["nonmember_exact_copies"] == 0
    k1, n1, k0, n0, p = disclosure(subject)
    assert (k1, n1, k0) == (20, 200, 0) and p <= 1 - subject.claim_confidence
    assert result.verdict(subject) == "leak"
    assert "disclosure: 20 members appear verbatim" in result.headline(subject)
    text = " ".join(explanation(result, subject))
    named = sorted(int(r) for r in copied)[:10]
    assert f"rows {', '.join(map(str, named))}, … of the members file" in text
    page = card(result, subject)
    assert '<div class="card leak">' in page and "disclosure: 20 of 200 members" in page


def test_verbatim_copies_of_members_and_non_members_alike_are_no_disclosure():
    # copies that do not depend on membership (both sides copied at one rate): no red
    subject = type("S", (), {})()
    subject.claim_confidence = 1 - 0.05 / 9
    subject.facts = {
        "member_exact_copies": 30,
        "member_targets": 100,
        "nonmember_exact_copies": 28,
        "nonmember_targets": 100,
    }
    assert disclosure(subject) is None
    subject.facts["nonmember_exact_copies"] = 0
    assert disclosure(subject) is not None
    subject.facts["member_exact_copies"] = 1  # one copy, a member: chance, p = 1/2
    assert disclosure(subject) is None


# ----------------------------------------------------------------------------- the CLI
@pytest.mark.parametrize("command", ["audit", "audit-model"])
def test_bounded_margin_is_an_option_of_both_audits(command, capsys):
    from sklearn_mace.cli import build_parser
    from sklearn_mace.report._arguments import claim_kwargs

    extra = ["--label", "y"] if command == "audit-model" else []
    args = build_parser().parse_args([command, *extra, "--bounded-margin", "0.05"])
    assert claim_kwargs(args)["bounded_margin"] == 0.05
    assert build_parser().parse_args([command, *extra]).bounded_margin == 0.1
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, *extra, "--bounded-margin", "1.5"])
    assert "--bounded-margin must be" in capsys.readouterr().err
