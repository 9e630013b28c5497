"""The report's figures, drawn with the library's displays (matplotlib's Agg back-end)."""

import re

from ..metrics import AdvantageDisplay, IndividualRiskDisplay, MembershipRocDisplay
from ._battery import MACE_NAME

__all__ = ["draw_figures", "slug"]


def slug(name):
    """A file-name-safe version of a release name."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "release"


def _figure(height=4.6):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, height), dpi=110, layout="constrained")
    return fig, fig.add_subplot()


def _legend_below(ax, ncols=1):
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


def _note(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)


def draw_figures(result):
    """All figures of an audit, keyed by file name, with their captions.

    Returns
    -------
    figures : dict of str -> (matplotlib Figure, str)
    """
    figures = {}
    n_mem = int(result.membership.sum())
    n_non = int(len(result.membership) - n_mem)
    is_member = result.membership == 1
    groups = None if result.target_group is None else result.target_group[is_member]
    ids = result.target_row[is_member]
    for release in result.releases:
        fig, ax = _figure(height=5.6)
        for name, score in release.scores.items():
            MembershipRocDisplay.from_predictions(result.membership, score, name=name, ax=ax)
        if release.scores:
            _legend_below(ax)
        else:
            _note(ax, "every analysis failed on this release (see Failed analyses)")
        ax.set_title(f"'{release.name}': membership attacks ({n_mem} members, {n_non} non-members)")
        figures[f"roc_{slug(release.name)}.png"] = (
            fig,
            (
                f"ROC curves of the attacks on release '{release.name}', false-positive rate on a "
                "log scale; the dot marks each attack's true-positive rate at 1 % FPR. The MACE "
                "curve is the cross-fitted Bayes-optimal attack on the nearest-synthetic "
                "distance (each record scored by densities fitted without it)."
            ),
        )
        by = "" if groups is None else f", coloured by {result.group_by}"
        figures[f"risk_{slug(release.name)}.png"] = (
            _risk_figure(result, release, groups, ids),
            (
                f"Held-out individual privacy risk |f_p| of the members (training rows) of release "
                f"'{release.name}' whose held-out posterior calls them members, most exposed "
                f"first{by}; the ten most exposed are circled, and the box names their rows in "
                "the members file (0-based). Pointwise estimates, not certified."
            ),
        )
    fig, ax = _figure(height=5.2)
    drawn = [release for release in result.releases if len(release.size_curve)]
    for release in drawn:
        curve = release.size_curve
        last = release is drawn[-1]
        display = AdvantageDisplay.from_predictions(
            curve["synthetic_rows"],
            curve["advantage_estimate"],
            lower=curve["estimate_lower"],
            upper=curve["estimate_upper"],
            param_name="number of released synthetic rows",
            epsilon=result.epsilon if last else None,
            prior=result.prior,
            name=f"'{release.name}': U_N (estimate)",
            ax=ax,
            log_x=True,
            show_baseline=last,
            linestyle=":",
        )
        ax.plot(
            curve["synthetic_rows"],
            curve["advantage_at_least"],
            marker="s",
            color=display.line_.get_color(),
            label=f"'{release.name}': certified lower bound",
        )
    if drawn:
        _legend_below(ax, ncols=2)
    else:
        _note(ax, "MACE failed on every release (see Failed analyses)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("MACE optimal advantage (nearest-synthetic distance) vs release size")
    figures["advantage_vs_synthetic_size.png"] = (
        fig,
        (
            "Solid lines: the certified lower bound on MACE's optimal membership advantage "
            f"(each point at {result.claim_confidence:.0%}) when only a random part of each "
            "release is published; dotted lines and bands: the plug-in estimate U_N with its "
            "McDiarmid interval (sampling spread only, not the estimator's bias). The dashed "
            f"red line is the largest advantage an ε = {result.epsilon:g} differentially "
            "private generator allows: a certified bound above it refutes that ε."
        ),
    )
    return figures


def _risk_figure(result, release, groups, ids):
    """The members the held-out posterior calls members, by held-out risk."""
    fig, ax = _figure()
    is_member = result.membership == 1
    called = release.posterior_points_to[is_member] == "member"
    title = (
        f"'{release.name}': held-out risk of the {int(called.sum())} of "
        f"{int(is_member.sum())} members called members, prior {result.prior:.3g}"
    )
    if not called.any():  # nothing to rank: say so instead of an empty axis
        _note(
            ax,
            "the held-out posterior calls no member a member"
            if MACE_NAME in release.scores
            else "MACE failed on this release: no held-out risk (see Failed analyses)",
        )
        ax.set_title(title)
        return fig
    # translucent, unfilled-looking dots: where groups interleave, neither hides the other
    IndividualRiskDisplay.from_predictions(
        release.risk[is_member][called],
        groups=None if groups is None else groups[called],
        record_ids=ids[called],
        ax=ax,
        top_k=10,
        name=title,
        alpha=0.55,
        linewidths=0,
    )
    if groups is not None:
        # the smaller groups on top, so the largest cannot bury them
        dots = [c for c in ax.collections if c.get_label() in set(map(str, groups[called]))]
        for z, dots_of_group in enumerate(sorted(dots, key=lambda c: -len(c.get_offsets()))):
            dots_of_group.set_zorder(2 + 0.1 * z)
    _legend_below(ax, ncols=4)
    return fig
