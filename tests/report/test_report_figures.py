"""The report's common figures (``report/_figures.py``): identical scores drawn once and named
by every analysis they stand for, group colours fixed across subjects, a risk legend that
says what a dot is."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from sklearn_mace.report._engine import Targets
from sklearn_mace.report._figures import MEMBER_CALLED, risk_figure, roc_figure, same_scores

pytest.importorskip("matplotlib")

N = 40  # members, then as many non-members


def _result(group=None):
    targets = Targets.two_tables(N, N)
    if group is not None:
        targets = replace(targets, group=np.asarray(group, dtype=object), group_by="g")
    return SimpleNamespace(
        targets=targets,
        membership=targets.membership,
        prior=targets.prior,
    )


def _subject(name, scores, risk=None, ranking_score=None):
    ranking = None
    if risk is not None:
        ranking = SimpleNamespace(scores=SimpleNamespace(risk=risk, score=ranking_score))
    return SimpleNamespace(name=name, scores=scores, ranking_result=lambda: ranking)


def _curve_labels(ax):
    return [
        line.get_label()
        for line in ax.get_lines()
        if not line.get_label().startswith("_") and line.get_label() != "random guess"
    ]


# ------------------------------------------------------------------ identical scores
def test_same_scores_groups_by_value_not_identity():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=2 * N), rng.normal(size=2 * N)
    nan = np.r_[np.nan, a[1:]]
    grouped = same_scores(
        {"bayes": a, "best": a, "copy": a.copy(), "other": b, "nan": nan, "nan copy": nan.copy()}
    )
    expected = [["bayes", "best", "copy"], ["other"], ["nan", "nan copy"]]
    assert [names for names, _ in grouped] == expected
    assert grouped[0][1] is a
    # a score equal up to its last bit is a different curve
    assert len(same_scores({"a": a, "a + ulp": np.nextafter(a, np.inf)})) == 2
    assert same_scores({}) == []


def test_identical_scores_are_one_curve_named_by_both():
    rng = np.random.default_rng(1)
    m = np.r_[np.ones(N), np.zeros(N)]
    bayes = rng.normal(size=2 * N) + m
    other = rng.normal(size=2 * N)
    scores = {"MACE Bayes rule (x)": bayes, "MACE best-ε threshold (x)": bayes, "DOMIAS": other}
    fig, caption = roc_figure(_result(), _subject("leaky", scores), "release")
    labels = _curve_labels(fig.axes[0])
    # before: three curves, the Bayes rule's drawn exactly under the best-ε threshold's
    assert len(labels) == 2
    assert labels[0].startswith(
        "MACE Bayes rule (x) = MACE best-ε threshold (x) (same scores) (AUC = "
    )
    assert labels[1].startswith("DOMIAS (AUC = ")
    assert "leaky" in caption


def test_different_scores_keep_their_own_curves():
    rng = np.random.default_rng(2)
    scores = {name: rng.normal(size=2 * N) for name in ("a", "b", "c")}
    fig, _ = roc_figure(_result(), _subject("s", scores), "release")
    assert [label.split(" (")[0] for label in _curve_labels(fig.axes[0])] == ["a", "b", "c"]
    assert not any("same scores" in label for label in _curve_labels(fig.axes[0]))


# ------------------------------------------------------------------ risk figure
def _dot_colours(fig):
    return {
        c.get_label(): tuple(c.get_facecolor()[0])
        for c in fig.axes[0].collections
        if c.get_label() in {"a", "b", "c", MEMBER_CALLED, "record"}
    }


def test_a_group_keeps_its_colour_in_every_subject():
    """Subject 1 calls members of groups a, b and c members; subject 2 only members of b and
    c. Sorted over the called members alone, b would be C1 in the first figure and C0 in the
    second; over every target's group it is C1 in both."""
    group = np.array(["a", "b", "c", "c"] * (N // 4) + ["a"] * N, dtype=object)
    result = _result(group)
    risk = np.linspace(0.05, 0.95, 2 * N)
    everyone = np.ones(2 * N)
    not_a = np.where(group == "a", -1.0, 1.0)
    colours = [
        _dot_colours(risk_figure(result, _subject(name, {}, risk, score)))
        for name, score in (("all", everyone), ("no a", not_a))
    ]
    assert set(colours[0]) == {"a", "b", "c"} and set(colours[1]) == {"b", "c"}
    for name, colour in zip("abc", ("C0", "C1", "C2"), strict=True):
        for drawn in colours:
            if name in drawn:
                assert drawn[name] == pytest.approx(to_rgba(colour, alpha=0.55)), name


def test_risk_dots_say_what_they_are_without_groups():
    risk = np.linspace(0.05, 0.95, 2 * N)
    score = np.r_[np.ones(N), -np.ones(N)]
    fig = risk_figure(_result(), _subject("model", {}, risk, score))
    assert list(_dot_colours(fig)) == [MEMBER_CALLED]
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == [MEMBER_CALLED]
