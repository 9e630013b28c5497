"""Paired comparisons of the audited subjects: does release 2 leak less than release 1?

When an audit has several releases (or models), every subject is scored on the *same* target
records, so two subjects can be compared record by record. For every analysis whose certified
rule is fixed before the data is seen (a threshold given in advance: MACE's Bayes rule, the
exact-copy test), each pair of subjects is compared by
:func:`~sklearn_mace.metrics.advantage_difference_test`: the difference of the held-out
advantages, at the prior, of the two rules the cards certify (McNemar's exact test weighted
by the advantage's weights, and a conservative interval). Analyses whose threshold is chosen
on a random half of the targets (``"split"``) are not compared: each subject's half is
drawn apart, so the two rules are not held out on the same records.

The comparisons are a family of their own, apart from the cards' claims: the p-values are
Holm-adjusted over every test of the table, the intervals are simultaneous (Bonferroni, each
at ``1 − α/K``), and a reading "'b' leaks less than 'a'" is printed only where the adjusted
p-value is at most ``α``. The difference is that of the two *held-out rules'* advantages,
not of the optimal ones, which no audit bounds from above.
"""

import html
from itertools import combinations

import numpy as np
import pandas as pd

from ..metrics._paired import advantage_difference_test, holm_adjust
from ._format import fmt, fmt_p, table
from ._section import Section

__all__ = [
    "COMPARISON_COLUMNS",
    "Comparisons",
    "comparison_lines",
    "comparison_table",
    "comparisons_section",
]

COMPARISON_COLUMNS = (
    "analysis",
    "subject_a",
    "subject_b",
    "heldout_advantage_a",
    "heldout_advantage_b",
    "advantage_lower_bound_a",
    "advantage_lower_bound_b",
    "difference",
    "difference_low",
    "difference_high",
    "p_value",
    "p_value_holm",
    "family_size",
    "interval_confidence",
    "reading",
    "method",
)


def compared_analyses(subjects):
    """Names of the table analyses whose certified rule is fixed in advance, in report order."""
    names = []
    for subject in subjects:
        for result in subject.claims:
            fixed = result.claim.strategy == "explicit"
            if fixed and not result.figure and result.name not in names:
                names.append(result.name)
    return names


def _pairs(result):
    """``(analysis, a, b)`` of every test, and a note per pair that cannot be compared."""
    tests, skipped = [], []
    for name in compared_analyses(result.subjects):
        for a, b in combinations(result.subjects, 2):
            failed = [s.name for s in (a, b) if not _has_claim(s, name)]
            if failed:
                skipped.append(f"{name}: '{a.name}' against '{b.name}' ('{failed[0]}' failed)")
            else:
                tests.append((name, a, b))
    return tests, skipped


def _has_claim(subject, name):
    return any(r.name == name for r in subject.claims)


def _reading(row, alpha):
    if row["p_value_holm"] > alpha:
        return "no difference shown"
    better, worse = (
        (row["subject_b"], row["subject_a"])
        if row["difference"] > 0
        else (row["subject_a"], row["subject_b"])
    )
    return f"'{better}' leaks less than '{worse}'"


def _held_out(subject, n_targets):
    """The targets a subject's rules never saw: every target, or the runs its attacks did
    not fit on (an algorithm audit's ``certifying_run`` column); a comparison uses the
    targets held out for both subjects."""
    mask = subject.record_columns.get("certifying_run")
    if mask is None:
        return np.ones(n_targets, dtype=bool)
    return np.asarray(mask, dtype=bool)


def comparison_table(result):
    """Every paired comparison of the audit's subjects (empty with fewer than two).

    Parameters
    ----------
    result : AuditResult
        An audit of several releases or models on the same targets.

    Returns
    -------
    table : pandas.DataFrame
        One row per (analysis, pair of subjects), columns :data:`COMPARISON_COLUMNS`;
        ``table.attrs["skipped"]`` lists the pairs that could not be compared.
    """
    tests, skipped = _pairs(result)
    frame = pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    frame.attrs["skipped"] = skipped
    if not tests:
        return frame
    alpha = 1.0 - result.confidence
    level = 1.0 - alpha / len(tests)
    rows = []
    for name, a, b in tests:
        first, second = a.analysis(name), b.analysis(name)
        n = len(result.membership)
        keep = _held_out(a, n) & _held_out(b, n)
        test = advantage_difference_test(
            result.membership[keep],
            first.flags()[keep],
            second.flags()[keep],
            prior=result.prior,
            confidence=level,
        )
        rows.append(
            {
                "analysis": name,
                "subject_a": a.name,
                "subject_b": b.name,
                "heldout_advantage_a": test.value_a,
                "heldout_advantage_b": test.value_b,
                "advantage_lower_bound_a": first.claim.advantage_lower_bound,
                "advantage_lower_bound_b": second.claim.advantage_lower_bound,
                "difference": test.difference,
                "difference_low": test.ci_low,
                "difference_high": test.ci_high,
                "p_value": test.p_value,
                "method": test.method,
            }
        )
    frame = pd.DataFrame(rows)
    frame["p_value_holm"] = holm_adjust(frame["p_value"])
    frame["family_size"] = len(frame)
    frame["interval_confidence"] = level
    frame["reading"] = [_reading(row, alpha) for _, row in frame.iterrows()]
    frame = frame[list(COMPARISON_COLUMNS)]
    frame.attrs["skipped"] = skipped
    return frame


class Comparisons(Section):
    """The paired comparisons of the subjects: a section of the page, lines when printed."""

    def html(self, report):
        """The comparisons' table and how to read it; nothing with one subject."""
        return comparisons_section(report.result, report.comparisons, report.presentation)

    def lines(self, report):
        """The family, then each difference the tests show."""
        return comparison_lines(report.result, report.comparisons)


def comparisons_section(result, comparisons, presentation):
    """The report's "Comparisons" section; empty when nothing was compared."""
    if comparisons.empty:
        return ""
    noun = presentation.noun
    shown = pd.DataFrame(
        {
            "analysis": comparisons["analysis"],
            f"{noun} a": comparisons["subject_a"],
            f"{noun} b": comparisons["subject_b"],
            "advantage a (held out)": comparisons["heldout_advantage_a"],
            "advantage b (held out)": comparisons["heldout_advantage_b"],
            "a − b [interval]": [
                f"{fmt(d)} [{fmt(lo)}, {fmt(hi)}]"
                for d, lo, hi in comparisons[
                    ["difference", "difference_low", "difference_high"]
                ].to_numpy()
            ],
            "p": comparisons["p_value"].map(fmt_p),
            "p (Holm)": comparisons["p_value_holm"].map(fmt_p),
            "reading": comparisons["reading"],
        }
    )
    k, level = len(comparisons), comparisons["interval_confidence"].iloc[0]
    skipped = comparisons.attrs.get("skipped", [])
    not_compared = (
        f" Not compared (an analysis failed): {html.escape('; '.join(skipped))}." if skipped else ""
    )
    records = "target records" if presentation.record_targets else "runs"
    tests = "This test is a family of its own" if k == 1 else f"These {k} tests are a family"
    tests += "" if k == 1 else " of their own"
    intervals = "The interval holds" if k == 1 else f"The {k} intervals hold together"
    return f"""<h2>Comparisons of the {noun}s</h2>
{table(shown, text_columns=tuple(c for c in shown.columns if not c.startswith("advantage")))}
<p class="muted">Every {noun} is scored on the same {records}, so two of them are
compared one by one: for each analysis whose certified rule is fixed in advance, the
difference of the held-out advantages at prior {fmt(result.prior)} of the two rules the cards
certify (McNemar's exact test, weighted; its p-value assumes that, under "no difference", the
two rules have the same TPR and TNR). {tests}, apart from
the cards' claims: p (Holm) is adjusted over all of them, and a {noun} is said to leak less
only where p (Holm) ≤ {1 - result.confidence:.2g} (familywise {result.confidence:.0%}); "no
difference shown" is not a proof that they leak alike. {intervals} at
{result.confidence:.0%} (each at {level:.2%}, Bonferroni). This compares the two audited
rules, not the {noun}s' optimal advantages, which no audit bounds from above. Analyses whose
threshold is chosen on a random half of the targets are not compared (each {noun}'s half is
drawn apart).{not_compared} Written to comparisons.csv.</p>"""


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
