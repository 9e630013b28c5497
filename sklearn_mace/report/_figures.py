"""The figures every report has, drawn with the library's displays (matplotlib's Agg back-end).

* ROC curves of every analysis of a subject on one log-FPR axis with **one** floor for FPR = 0
  (half of 1/n_non-members, or of the 1 % mark when smaller): every curve's zero-false-
  positive step is drawn at the same place, so the curves compare.
* The members' held-out risk (the ranking analysis's ``|f̂_p|``): pointwise estimates, so no
  record is named in the figure; names live in "Exposed records", under the claim rules.
"""

import re

import numpy as np

from ..metrics import IndividualRiskDisplay, MembershipRocDisplay
from ._section import Section

#: the legend of a risk figure's dots (when no group colours them)
MEMBER_CALLED = "member called a member by the held-out posterior"

__all__ = [
    "Figures",
    "common_figures",
    "figure",
    "figure_file",
    "legend_below",
    "note",
    "same_scores",
    "slug",
]


def slug(name):
    """A file-name-safe version of a subject name (not unique: see :func:`figure_file`)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:60] or "subject"


def figure_file(kind, result, subject):
    """The file name of a subject's figure: ``<kind>_<n>_<slug>.png``.

    ``n`` is the subject's place in the audit (1, 2, …), so two subjects whose names have
    the same slug (``α`` and ``β``, ``v1.0`` and ``v1-0``) never share a file.
    """
    names = [s.name for s in result.subjects]
    return f"{kind}_{names.index(subject.name) + 1}_{slug(subject.name)}.png"


def figure(height=4.6):
    """A new figure and its axes, sized for the report."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, height), dpi=110, layout="constrained")
    return fig, fig.add_subplot()


def legend_below(ax, ncols=1):
    """Move the axes' legend under the axes, so it covers no curve."""
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.16),
        ncols=ncols,
        fontsize="small",
        frameon=False,
    )


def note(ax, text):
    """Text in the middle of an empty axes."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)


def same_scores(scores):
    """``[(names, score), …]``: each set of identical scores once, with every analysis name
    it stands for, in first-seen order.

    Two analyses can share their scores (MACE's Bayes rule and its best-ε threshold score the
    records alike and differ only in the threshold): drawn twice, one curve would hide the
    other exactly. Scores are compared by value (``np.array_equal``, NaN equal to NaN), not by
    identity, so copies made on the way (a worker's pickled result) still count as the same.
    """
    groups = []
    for name, score in scores.items():
        score = np.asarray(score)
        for names, kept in groups:
            if score is kept or (
                score.shape == kept.shape and np.array_equal(score, kept, equal_nan=True)
            ):
                names.append(name)
                break
        else:
            groups.append(([name], score))
    return groups


def roc_figure(result, subject, noun):
    """Every table analysis's ROC curve, with one FPR floor for all of them (``noun``: what
    a subject is called)."""
    m = result.membership
    n_mem, n_non = int(m.sum()), int(len(m) - m.sum())
    floor = min(0.5 / n_non, 0.005)
    fig, ax = figure(height=5.6)
    for names, score in same_scores(subject.scores):
        label = names[0] if len(names) == 1 else " = ".join(names) + " (same scores)"
        MembershipRocDisplay.from_predictions(m, score, name=label, ax=ax, min_fpr=floor)
    if subject.scores:
        legend_below(ax)
    else:
        note(ax, "every analysis failed (see Failed analyses)")
    ax.set_title(
        f"{noun} '{subject.name}': membership attacks ({n_mem} members, {n_non} non-members)"
    )
    caption = (
        f"ROC curves of the analyses on {noun} '{subject.name}', false-positive rate on a log "
        f"scale; FPR = 0 is drawn at {floor:.3g} for every curve; the dot marks each "
        "analysis's TPR at 1 % FPR. Every curve uses held-out scores (cross-fitting, shadow "
        "models, or no labels at all)."
    )
    return fig, caption


def risk_figure(result, subject):
    """The held-out risk of the members the held-out posterior calls members."""
    fig, ax = figure()
    targets, ranking = result.targets, subject.ranking_result()
    is_member = targets.membership == 1
    title = (
        f"'{subject.name}': held-out risk of the members called members, prior {result.prior:.3g}"
    )
    called = np.zeros(is_member.sum(), dtype=bool)
    if ranking is not None and ranking.scores.risk is not None:
        called = ranking.scores.score[is_member] > 0
    if not called.any():  # nothing to rank: say so instead of an empty axis
        note(
            ax,
            "no held-out risk to show (the posterior calls no member a member, "
            "or the ranking analysis failed)",
        )
        ax.set_title(title)
        return fig
    groups = None if targets.group is None else targets.group[is_member][called]
    # every group of the targets, sorted: a group keeps its colour in every subject's figure
    # even where none of its members is called a member (or the most exposed one changes)
    order = None if groups is None else sorted(set(targets.group.tolist()), key=str)
    IndividualRiskDisplay.from_predictions(
        ranking.scores.risk[is_member][called],
        groups=groups,
        group_order=order,
        label=MEMBER_CALLED,  # what a dot is, when there are no groups to name
        ax=ax,
        top_k=0,  # a figure names no record: exposure is a certified claim, shown apart
        name=title,
        alpha=0.55,
        linewidths=0,
    )
    if groups is not None:  # the smaller groups on top, so the largest cannot bury them
        dots = [c for c in ax.collections if c.get_label() in set(map(str, groups))]
        for z, dots_of_group in enumerate(sorted(dots, key=lambda c: -len(c.get_offsets()))):
            dots_of_group.set_zorder(2 + 0.1 * z)
    legend_below(ax, ncols=4)
    return fig


class Figures(Section):
    """ "Figures": the figures of each of ``makers``, in order, as the writer drew them.

    Parameters
    ----------
    makers : tuple of callable
        ``maker(report) -> {file name: (Figure, caption)}`` (:func:`common_figures`: the ROC
        and risk figures of records of a table).
    """

    def __init__(self, makers):
        self.makers = tuple(makers)

    def figures(self, report):
        """Every maker's figures, keyed by file name."""
        return {name: drawn for make in self.makers for name, drawn in make(report).items()}

    def html(self, report):
        """The drawn figures, embedded."""
        return "<h2>Figures</h2>" + "".join(report.figures)


def common_figures(report):
    """The ROC and risk figures of every subject, keyed by file name, with captions."""
    result, noun = report.result, report.presentation.noun
    figures = {}
    by = "" if result.targets.group_by is None else f", coloured by {result.targets.group_by}"
    for subject in result.subjects:
        figures[figure_file("roc", result, subject)] = roc_figure(result, subject, noun)
        ranking = subject.ranking or "the ranking analysis"
        figures[figure_file("risk", result, subject)] = (
            risk_figure(result, subject),
            f"Held-out individual privacy risk |f_p| (MACE Def. 3) of the members of "
            f"'{subject.name}' whose held-out posterior ({ranking}) calls them members, most "
            f"exposed first{by}. Pointwise estimates, not certified: no record is named here.",
        )
    return figures
