"""The report's figures, drawn with the library's displays (matplotlib's Agg back-end)."""

import re

import numpy as np

from ..metrics import AdvantageDisplay, IndividualRiskDisplay, MembershipRocDisplay

__all__ = ["draw_figures", "slug"]


def slug(name):
    """A file-name-safe version of a release name."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "release"


def _figure():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.6), dpi=110, layout="constrained")
    return fig, fig.add_subplot()


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
        fig, ax = _figure()
        for name, score in release.scores.items():
            MembershipRocDisplay.from_predictions(result.membership, score, name=name, ax=ax)
        ax.set_title(f"'{release.name}': membership attacks ({n_mem} members, "
                     f"{n_non} non-members)")
        figures[f"roc_{slug(release.name)}.png"] = (fig, (
            f"ROC curves of the attacks on release '{release.name}', false-positive rate on a "
            "log scale; the dot marks each attack's true-positive rate at 1 % FPR. The MACE "
            "curve is the 5-fold cross-validated Bayes-optimal attack on the "
            "nearest-synthetic distance."
        ))
        fig, ax = _figure()
        has_interval = bool(np.isfinite(release.risk_lower).all())
        IndividualRiskDisplay.from_predictions(
            release.risk[is_member],
            lower=release.risk_lower[is_member] if has_interval else None,
            upper=release.risk_upper[is_member] if has_interval else None, groups=groups,
            record_ids=ids, ax=ax, top_k=10,
            name=f"'{release.name}': members' individual privacy risk at prior "
                 f"{result.prior:.3g}",
        )
        by = "" if groups is None else f", coloured by {result.group_by}"
        figures[f"risk_{slug(release.name)}.png"] = (fig, (
            f"Individual privacy risk |f_p| of every member (training row) for release "
            f"'{release.name}', most exposed first{by}"
            + (f", with {result.confidence:.0%} intervals" if has_interval else "")
            + "; the ten most exposed are circled, and the box names their rows in the "
            "members file (0-based)."
        ))
    fig, ax = _figure()
    for release in result.releases:
        curve = release.size_curve
        AdvantageDisplay.from_predictions(
            curve["synthetic_rows"], curve["advantage"], lower=curve["lower"],
            upper=curve["upper"], param_name="number of released synthetic rows",
            epsilon=result.epsilon if release is result.releases[-1] else None,
            prior=result.prior, name=f"'{release.name}'", ax=ax, log_x=True,
            show_baseline=release is result.releases[-1],
        )
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("MACE optimal advantage (nearest-synthetic distance) vs release size")
    figures["advantage_vs_synthetic_size.png"] = (fig, (
        "MACE's optimal membership advantage with its interval when only a random part of "
        "each release is published, against the largest advantage an "
        f"ε = {result.epsilon:g} differentially private generator allows (dashed red line). "
        "An interval entirely above the line refutes that ε."
    ))
    return figures
