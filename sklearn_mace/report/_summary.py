"""The summary that ``sklearn-mace audit`` (and its demo) prints: certified claims first."""

import sys

__all__ = ["print_summary"]


def print_summary(result, paths, file=None):
    """The printed summary: certified claims per analysis, then each release's verdict."""
    file = sys.stdout if file is None else file
    rows = [
        (
            row["release"],
            row["analysis"],
            f"{row['epsilon_at_least']:.2f}",
            f"{row['fpr_upper']:.3f}",
            f"{row['fnr_upper']:.3f}",
            f"{row['auc']:.3f}",
            f"{row['tpr_at_1pct_fpr']:.3f}",
            f"{row['tpr_at_0.1pct_fpr']:.3f}",
        )
        for _, row in result.summary.iterrows()
    ]
    header = ("release", "analysis", "ε ≥", "at FPR ≤", "FNR ≤", "AUC", "TPR@1%FPR", "TPR@0.1%FPR")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    n_mem = int(result.membership.sum())
    print(
        f"sklearn-mace audit: {n_mem} members, {len(result.membership) - n_mem} "
        f"non-members, prior {result.prior:.3g}, δ = {result.delta:g}; the certified claims "
        f"of a release hold together at {result.confidence:.0%} (each at "
        f"{result.claim_confidence:.2%})",
        file=file,
    )
    for r in [header, *rows]:
        print(
            "  ".join(
                str(v).ljust(w) if i < 2 else str(v).rjust(w)
                for i, (v, w) in enumerate(zip(r, widths, strict=True))
            ),
            file=file,
        )
    for release in result.releases:
        mace = release.mace
        source = f" ({release.strongest_analysis})" if release.strongest_epsilon > 0 else ""
        print(
            f"{release.name}: [{result.headline(release)}] — optimal advantage at "
            f"least {mace['optimal_advantage_at_least']:.3f} at prior {result.prior:.3g} "
            f"(trivial {abs(2 * result.prior - 1):.3f}, p = {mace['p_value']:.2g}), ε at "
            f"least {release.strongest_epsilon:.2f}{source}; estimate U_N "
            f"{mace['advantage_estimate']:.3f} [{mace['estimate_lower']:.3f}, "
            f"{mace['estimate_upper']:.3f}] (interval: sampling spread only)",
            file=file,
        )
    for note in result.notes:
        print(f"note: {note}", file=file)
    dropped = result.column_report[result.column_report["features"] == 0]
    for row in dropped.itertuples(index=False):
        print(f"column {row.column!r} {row.treatment}", file=file)
    print(f"report: {paths['report']}  (summary.csv, records.csv, figures/ beside it)", file=file)
