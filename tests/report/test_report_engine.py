"""The audit engine on cheap, planted analyses: seeds, failures, the one correction, the
claim rules of every card, and the size of the report layer's functions."""

import ast
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from joblib import parallel_config
from scipy.stats import binom
from sklearn.metrics import roc_auc_score

import sklearn_mace
from sklearn_mace.metrics import advantage_upper_bound, audit_epsilon
from sklearn_mace.report import AuditResult
from sklearn_mace.report._engine import (
    BAYES_RULE,
    Analysis,
    AuditEngine,
    Scores,
    SharedStep,
    Subject,
    Targets,
)
from sklearn_mace.report._html import Cards
from sklearn_mace.report._present import Presentation
from sklearn_mace.report._section import Report

N = 60  # targets per class


def _targets(prior=None):
    m = np.r_[np.ones(N, dtype=int), np.zeros(N, dtype=int)]
    return Targets(
        membership=m,
        source=np.where(m == 1, "members", "non-members"),
        row=np.r_[np.arange(N), np.arange(N)],
        prior=0.5 if prior is None else prior,
    )


def _noise(engine, subject, seed):
    """Scores independent of membership, drawn from the step's own seed."""
    return Scores(score=np.random.default_rng(seed).normal(size=2 * N))


def _signal(engine, subject, seed):
    """Members shifted by 3 standard deviations: a leak every claim should certify."""
    rng = np.random.default_rng(seed)
    return Scores(score=rng.normal(size=2 * N) + 3.0 * engine.targets.membership)


def _boom(engine, subject, seed):
    raise RuntimeError("planted failure")


class _Engine(AuditEngine):
    kind = "test"
    ranking = "signal"

    def __init__(self, analyses, shared=(), **kwargs):
        kwargs = {"confidence": 0.95, "delta": 0.0, "random_state": 0} | kwargs
        super().__init__(_targets(), **kwargs)
        self._analyses, self._shared = list(analyses), list(shared)

    def shared_steps(self, subject):
        return self._shared

    def analyses(self, subject):
        return self._analyses


def _claims(results):
    return {
        (s.name, a.name): (a.claim.epsilon_lower_bound, a.claim.threshold)
        for s in results
        for a in s.claims
    }


def _subjects(*names):
    return [Subject(name, {}) for name in names]


# ----------------------------------------------------------------------------- seeds
def test_seeds_do_not_depend_on_order_failures_or_the_backend():
    analyses = [Analysis("a", _noise), Analysis("b", _noise), Analysis("c", _signal)]
    baseline = _claims(_Engine([*analyses, Analysis("d", _noise)]).run(_subjects("x", "y")))
    reordered = _claims(_Engine([Analysis("d", _noise), *analyses[::-1]]).run(_subjects("y", "x")))
    # "d" fails instead: the same family of four claims, the others' numbers unchanged
    failing = _Engine([*analyses, Analysis("d", _boom)], on_error="report")
    with_failure = _claims(failing.run(_subjects("x", "y")))
    with parallel_config(backend="threading"):
        engine = _Engine([*analyses, Analysis("d", _noise)], n_jobs=2)
        parallel = _claims(engine.run(_subjects("x", "y")))
    assert baseline == reordered == parallel
    assert {k: v for k, v in baseline.items() if k[1] != "d"} == with_failure
    assert len(with_failure) == 6
    # one seed per (subject, step, purpose), drawn before any step runs
    assert len(failing.seeds_) == 2 * 4 * 2
    assert len(set(failing.seeds_.values())) == len(failing.seeds_)


def test_seeds_are_drawn_before_any_step_runs():
    seen = []

    def spy(engine, subject, seed):
        seen.append(len(engine.seeds_))
        return _noise(engine, subject, seed)

    engine = _Engine([Analysis("spy", spy), Analysis("b", _noise)])
    engine.run(_subjects("x", "y"))
    assert seen == [len(engine.seeds_)] * 2 == [8, 8]


# ----------------------------------------------------------------------------- failures
def test_a_failure_is_isolated_and_still_counted_in_the_correction():
    engine = _Engine(
        [Analysis("signal", _signal), Analysis("broken", _boom), Analysis("noise", _noise)],
        on_error="report",
    )
    (subject,) = engine.run(_subjects("x"))
    assert subject.failures == [("broken", "RuntimeError: planted failure")]
    assert [a.name for a in subject.claims] == ["signal", "noise"]
    assert subject.n_claims == 3 and subject.claim_confidence == pytest.approx(1 - 0.05 / 3)
    # the claims are made at that level: exactly audit_epsilon at 1 − α/3 with the step's seed
    m = engine.targets.membership
    signal = subject.analysis("signal")
    again = audit_epsilon(
        signal.scores.score[m == 1],
        signal.scores.score[m == 0],
        confidence=1 - 0.05 / 3,
        random_state=engine.seed("x", "signal", "certify"),
    )
    assert signal.claim == again


@dataclass(frozen=True)
class _Shared:
    fit: object = None
    after: object = None


def test_a_failed_shared_step_fails_the_analyses_that_need_it():
    engine = _Engine(
        [Analysis("uses it", _noise, needs=("fit",)), Analysis("alone", _noise)],
        shared=[
            SharedStep("fit", _boom, key="fit"),
            SharedStep("after", _noise, needs=("fit",), key="after"),
        ],
        on_error="report",
    )
    given = Subject("x", {}, _Shared())
    (subject,) = engine.run([given])
    ((name, reason),) = subject.failures
    assert name == "uses it"
    assert reason == "needs fit, which failed: RuntimeError: planted failure"
    assert given.shared == _Shared()  # neither the failed step nor the one that needs it


def test_a_shared_result_is_stored_in_its_field_and_read_as_an_attribute():
    def reads_it(engine, subject, seed):
        return Scores(score=subject.shared.fit.score)

    engine = _Engine(
        [Analysis("reads it", reads_it, needs=("the fit",))],
        shared=[SharedStep("the fit", _signal, key="fit")],
    )
    given = Subject("x", {}, _Shared())
    (subject,) = engine.run([given])
    assert subject.failures == []
    assert given.shared.after is None
    np.testing.assert_array_equal(subject.analysis("reads it").scores.score, given.shared.fit.score)


def test_a_misspelt_shared_key_or_need_fails_before_anything_runs():
    ran = []

    def spy(engine, subject, seed):
        ran.append(subject.name)
        return _noise(engine, subject, seed)

    misspelt_key = _Engine([Analysis("a", spy)], shared=[SharedStep("fit", spy, key="fitt")])
    with pytest.raises(TypeError, match="'fitt', which is not a field of _Shared"):
        misspelt_key.run([Subject("x", {}, _Shared())])
    misspelt_need = _Engine(
        [Analysis("a", spy, needs=("fitt",))], shared=[SharedStep("fit", spy, key="fit")]
    )
    with pytest.raises(ValueError, match="'a' needs 'fitt', which is not a shared step"):
        misspelt_need.run([Subject("x", {}, _Shared())])
    untyped = _Engine([Analysis("a", spy)], shared=[SharedStep("fit", spy, key="fit")])
    with pytest.raises(TypeError, match="not a dataclass"):
        untyped.run([Subject("x", {}, {})])
    assert ran == []


def test_scores_that_are_not_one_finite_value_per_target_fail_the_analysis():
    def nan_scores(engine, subject, seed):
        return Scores(score=np.r_[np.zeros(2 * N - 1), np.nan])

    def short_scores(engine, subject, seed):
        return Scores(score=np.zeros(3))

    engine = _Engine(
        [Analysis("nan", nan_scores), Analysis("short", short_scores)], on_error="report"
    )
    (subject,) = engine.run(_subjects("x"))
    reasons = dict(subject.failures)
    assert "1 not finite" in reasons["nan"] and "shape (3,)" in reasons["short"]


def test_a_failure_raises_by_default_with_its_own_traceback():
    engine = _Engine([Analysis("signal", _signal), Analysis("broken", _boom)])
    with pytest.raises(RuntimeError, match="planted failure") as raised:
        engine.run(_subjects("x"))
    assert raised.traceback[-1].name == "_boom"
    with pytest.raises(ValueError, match="on_error must be 'raise'"):
        _Engine([Analysis("signal", _signal)], on_error="warn")


# ----------------------------------------------------------------------------- certify masks
def test_a_rule_given_with_the_scores_is_certified_on_its_mask_only():
    # the rule and the targets it never saw come with the scores (an algorithm audit's
    # attack): the claim, the upper bound and the metrics are all those of that part
    keep = np.r_[np.arange(2 * N) % 3 != 0]

    def fitted(engine, subject, seed):
        score = _signal(engine, subject, seed).score
        return Scores(score=score, threshold=1.5, certify_mask=keep)

    engine = _Engine([Analysis("fitted", fitted, threshold=None)])
    (subject,) = engine.run(_subjects("x"))
    result = subject.analysis("fitted")
    m, score = engine.targets.membership[keep], result.scores.score[keep]
    level = subject.claim_confidence
    expected = audit_epsilon(score[m == 1], score[m == 0], threshold=1.5, confidence=level)
    assert result.claim == expected and result.claim.n_members == (m == 1).sum()
    assert result.bound == advantage_upper_bound(score[m == 1], score[m == 0], confidence=level)
    assert result.metrics["auc"] == roc_auc_score(m, score)
    assert result.contradicted is None  # no privacy claim to contradict

    def no_rule(engine, subject, seed):
        return Scores(score=_noise(engine, subject, seed).score)

    with pytest.raises(ValueError, match="threshold=None, so its scores must give"):
        _Engine([Analysis("no rule", no_rule, threshold=None)]).run(_subjects("x"))


# ----------------------------------------------------------------------------- claim rules
def _result(subjects, engine, claimed_epsilon=1.0):
    return AuditResult(
        kind="test",
        subjects=subjects,
        targets=engine.targets,
        confidence=engine.confidence,
        delta=engine.delta,
        claimed_epsilon=claimed_epsilon,
        n_rows={"members": N, "non-members": N},
    )


def card(result, subject):
    """The common card of ``subject``."""
    return Cards().card(Report(result, Presentation()), subject)


def test_headline_advantage_and_exposure_follow_the_claims():
    engine = _Engine(
        [
            Analysis("signal", _signal, threshold=BAYES_RULE),
            Analysis("signal, split", _signal),
            Analysis("noise", _noise),
            Analysis("figure point", _signal, figure=True),
        ]
    )
    (subject,) = engine.run(_subjects("x"))
    result = _result([subject], engine)
    best = max(subject.claims, key=lambda a: a.claim.epsilon_lower_bound)
    assert subject.epsilon_source is best and subject.epsilon_lower_bound > 1
    assert result.verdict(subject) == "leak"
    # exposure comes from the strongest *table* claim, and flags exactly its rule's records
    source = subject.exposure_source
    assert not source.figure and source.leaks
    np.testing.assert_array_equal(
        subject.exposed(2 * N), source.scores.score >= source.claim.threshold
    )
    assert source.flagged_precision() > result.prior
    records = result.records
    members = records[records["member"] == 1]
    assert members["exposed"].iloc[: members["exposed"].sum()].all()  # exposed lead
    page = card(result, subject)
    assert "most exposed member: row" in page and "flagged by the certified rule" in page
    assert "the largest of the 4 certified numbers of this card" in page


def test_no_green_card_names_a_record():
    # 100 null subjects (scores independent of membership): whatever the verdict, a card
    # names a record only when a claim certifies leakage, and a card that is not red never
    # does
    engine = _Engine([Analysis("noise", _noise), Analysis("noise, Bayes", _noise, threshold=0.0)])
    subjects = engine.run(_subjects(*[f"s{i}" for i in range(100)]))
    result = _result(subjects, engine)
    report = Report(result, Presentation())  # records.csv's table once, for every card
    green = 0
    for subject in subjects:
        page = Cards().card(report, subject)
        named = "most exposed member: row" in page
        assert named <= subject.certified_leak
        if result.verdict(subject) != "leak":
            green += 1
            assert not named and not subject.exposed(2 * N).any()
            assert "no record is named: no claim certifies leakage" in page
    # two claims per card at 97.5 % each: at most α = 5 % of the cards claim anything
    assert 100 - green <= binom.ppf(0.999, 100, 0.05)


def test_a_card_says_which_value_is_the_headline_and_why():
    engine = _Engine([Analysis("split", _signal), Analysis("Bayes", _signal, threshold=0.0)])
    (subject,) = engine.run(_subjects("x"))
    page = card(_result([subject], engine), subject)
    assert f"from {subject.epsilon_source.name} at FPR ≤" in page
    assert "the largest of the 2 certified numbers" in page
    if subject.advantage_source is subject.epsilon_source:
        assert "the same claim as ε" in page
    else:
        assert "the largest certified advantage, another claim" in page
    assert "substitute-one" in page and "add/remove-one" in page


# ----------------------------------------------------------------------------- structure
def _long_functions(path, limit):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            # from the signature to the last line; the docstring does not count
            lines = node.end_lineno - node.lineno + 1
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                lines -= first.end_lineno - first.lineno + 1
            if lines > limit:
                found.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_of_the_report_layer_is_long():
    root = Path(sklearn_mace.__file__).parent
    paths = list((root / "report").rglob("*.py"))  # the kinds' folders too
    long = [f for p in [*paths, root / "cli.py"] for f in _long_functions(p, 60)]
    assert not long, long
