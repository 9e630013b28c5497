"""The summary the CLI prints: every section's lines, in the presentation's order (the claims
table and each subject's verdict with its sources first: :class:`~._html.Cards`), then where
the report is."""

import sys

from ._format import fmt, fmt_p
from ._section import Report

__all__ = ["claims_lines", "print_summary", "summary_header", "verdict_line"]

HEADER = (
    "subject",
    "analysis",
    "ε ≥",
    "adv. ≥",
    "adv. ≤",
    "FPR ≤",
    "FNR ≤",
    "AUC",
    "TPR@1%",
    "TPR@0.1%",
)


def _rows(summary):
    return [
        (
            row["subject"],
            row["analysis"] + (" (figure)" if row["role"] == "figure" else ""),
            *(
                (
                    fmt(row["epsilon_lower_bound"], 2),
                    fmt(row["advantage_lower_bound"]),
                    fmt(row["advantage_upper_bound"]),
                )
                if row["status"] == "ok"
                else ("failed", "", "")
            ),
            fmt(row["fpr_upper"]),
            fmt(row["fnr_upper"]),
            fmt(row["auc"]),
            fmt(row["tpr_at_1pct_fpr"]),
            fmt(row["tpr_at_0.1pct_fpr"]),
        )
        for _, row in summary.iterrows()
    ]


def _table_lines(summary):
    rows = [HEADER, *_rows(summary)]
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(HEADER))]
    return [
        "  ".join(
            str(v).ljust(w) if i < 2 else str(v).rjust(w)
            for i, (v, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]


def verdict_line(result, subject):
    """One subject's verdict with the sources of its headline numbers."""
    eps, eps_source = subject.epsilon_lower_bound, subject.epsilon_source
    adv_source = subject.advantage_source
    trivial = abs(2 * result.prior - 1)
    # names end in parentheses ("MACE Bayes rule (loss)"): they follow "from", never sit
    # inside another pair of parentheses
    where = "," if eps_source is None else f" from {eps_source.name},"
    same = adv_source is not None and adv_source is eps_source
    advantage = (
        f"no advantage above the trivial {fmt(trivial)} certified"
        if adv_source is None
        else f"advantage at least {fmt(adv_source.claim.advantage_lower_bound)} at prior "
        f"{result.prior:.3g}, trivial {fmt(trivial)}, from "
        + ("the same claim" if same else adv_source.name)
    )
    line = (
        f"{subject.name}: [{result.headline(subject)}] — ε at least {fmt(eps, 2)}{where} "
        f"substitute-one (add/remove-one: {fmt(eps / 2, 2)}); {advantage}"
    )
    ranking = subject.ranking_result()
    e = {} if ranking is None else ranking.scores.estimates
    if "advantage_estimate" in e:
        line += (
            f"; estimate U_N {fmt(e['advantage_estimate'])} [{fmt(e['advantage_estimate_low'])}, "
            f"{fmt(e['advantage_estimate_high'])}] (sampling spread only), p = "
            f"{fmt_p(e['p_value'])} for no leak (uncorrected)"
        )
    return line


def summary_header(report):
    """The printed summary's first line: the targets, the prior, δ and the family's level."""
    result, p = report.result, report.presentation
    n_mem = int(result.membership.sum())
    levels = sorted({(s.n_claims, s.claim_confidence) for s in result.subjects})
    each = ", ".join(f"{k} claims each at {level:.2%}" for k, level in levels)
    return (
        f"{p.command}: {n_mem} members, {len(result.membership) - n_mem} non-members, "
        f"prior {result.prior:.3g}, δ = {result.delta:g}; the certified numbers of a "
        f"{p.noun} hold together at {result.confidence:.0%} (Bonferroni: {each})"
    )


def claims_lines(report, header):
    """``header``, what adv. ≥ and adv. ≤ mean, and the claims table, one line per row."""
    trivial = abs(2 * report.result.prior - 1)
    return [
        header,
        f"(adv. ≥ / adv. ≤: certified advantage at the prior of the analysis's rule / upper "
        f"bound for any threshold on its scores; trivial |2p − 1| = {trivial:.3f})",
        *_table_lines(report.summary),
    ]


def print_summary(result, presentation, paths, file=None):
    """Print every section's lines (the claims, each verdict, the comparisons, the plan,
    the notes, …) and where the report is.

    Parameters
    ----------
    result : AuditResult
        The audit.
    presentation : Presentation
        Its sections, in the order they print.
    paths : dict
        What the writer wrote (``paths["report"]``: report.html).
    file : file-like, default=None
        Where to print; default: standard output.
    """
    file = sys.stdout if file is None else file
    report = Report(result, presentation)
    for section in presentation.sections:
        for line in section.lines(report):
            print(line, file=file)
    print(f"report: {paths['report']}  (summary.csv, records.csv, figures/ beside it)", file=file)


def comparison_lines(result, comparisons):
    """The printed summary's lines: the family, then each difference the tests show."""
    if comparisons.empty:
        return []
    found = comparisons[comparisons["reading"] != "no difference shown"]
    lines = [
        f"comparisons: {len(comparisons)} paired test{'' if len(comparisons) == 1 else 's'} "
        "of held-out advantages (Holm, "
        f"familywise {result.confidence:.0%}): {len(found)} difference(s) shown "
        "(comparisons.csv)"
    ]
    lines += [
        f"  {row.reading} ({row.analysis}: held-out advantage {row.heldout_advantage_a:.3f} "
        f"for '{row.subject_a}', {row.heldout_advantage_b:.3f} for '{row.subject_b}', "
        f"p (Holm) = {fmt_p(row.p_value_holm)})"
        for row in found.itertuples(index=False)
    ]
    return lines
