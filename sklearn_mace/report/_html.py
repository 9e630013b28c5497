"""report.html for every audit: cards, claims, estimates, exposed records, how to read.

One set of claim rules for every card (see ``_results.py``): the headline is the largest
certified ε with its source and the family-wise confidence it holds at; the largest certified
advantage stands beside it with the trivial ``|2p − 1|``; estimates are labelled estimates; a
record is named only when a certified rule flags it.
"""

import html

import numpy as np
import pandas as pd

from ._format import fmt, fmt_p, html_page, table
from ._sample_size import sample_size_line
from ._verdict import case, explanation

__all__ = ["render_report"]

MEANINGS = {  # what each case of the verdict means, under the card's headline
    "above": "the {noun} is not ({eps:g}, {delta:g})-DP for substitute-one neighbours (a "
    "training record replaced by a fresh one), with the stated confidence",
    "leak": "some membership leakage is certified, though not enough to refute ε = {eps:g}",
    "disclosure": "members of the training data are published verbatim",
    "inconclusive": "no analysis certifies leakage, but this audit cannot bound it either: "
    "this is not a proof of privacy (more records, or a stronger attack, decide)",
    "bounded": "no analysis of this audit separates members from non-members by more than "
    "its bound, with the stated confidence; a stronger attack may separate more",
}


def _source(analysis):
    c = analysis.claim
    return (
        f"from {html.escape(analysis.name)} at FPR ≤ {fmt(c.fpr_upper)}, FNR ≤ {fmt(c.fnr_upper)}"
    )


def _epsilon_lines(result, subject):
    """The headline ε with its source, level and neighbour relation."""
    eps, source = subject.epsilon_lower_bound, subject.epsilon_source
    level = (
        f"the largest of the {subject.n_claims} certified numbers of this card, which hold "
        f"together at {result.confidence:.0%} (each at {subject.claim_confidence:.2%}, "
        "Bonferroni)"
    )
    where = "no claim certifies ε > 0" if source is None else _source(source)
    relation = result.presentation.relation_line(result, subject)
    relation = (
        relation
        if relation is not None
        else (
            f"Refutes substitute-one (ε, δ)-DP for every ε below {fmt(eps, 2)}; an add/remove-one "
            f"guarantee (what DP-SGD accountants and DP synthesizers state) only below "
            f"{fmt(eps / 2, 2)}: add/remove-one ε implies substitute-one 2ε."
            if eps > 0
            else "Refutes no DP guarantee (substitute-one, nor add/remove-one)."
        )
    )
    return f"""<div>ε <b>at least {fmt(eps, 2)}</b> <span class="muted">(δ = {result.delta:g};
    {where}) — {level}</span></div>
  <div class="muted">{relation}</div>"""


def _advantage_line(result, subject):
    """The largest certified advantage, with the trivial one and its source."""
    source = subject.advantage_source
    trivial = fmt(abs(2 * result.prior - 1))
    if source is None:
        return (
            f"<div>advantage at prior {fmt(result.prior)}: no claim certifies more than the "
            f'trivial |2p − 1| = {trivial} <span class="muted">(always guessing the likelier '
            "side)</span></div>"
        )
    same = source is subject.epsilon_source
    why = "the same claim as ε" if same else "the largest certified advantage, another claim"
    return f"""<div>advantage at prior {fmt(result.prior)} <b>at least
    {fmt(source.claim.advantage_lower_bound)}</b> <span class="muted">(trivial |2p − 1| =
    {trivial}; {why}: {html.escape(source.name)})</span></div>"""


def _upper_line(result, subject):
    """The largest certified upper bound on the advantage, and why the card has its colour."""
    source = subject.bound_source
    bound = (
        '<div class="muted">advantage at most: not bounded (an analysis failed)</div>'
        if source is None
        else f"""<div>advantage at prior {fmt(result.prior)} <b>at most
    {fmt(source.bound.advantage_upper_bound)}</b> <span class="muted">(any threshold on any
    analysis's scores; certified upper bounds, a family of their own at the same levels;
    largest from {html.escape(source.name)})</span></div>"""
    )
    why = "".join(f'<div class="why">{html.escape(t)}.</div>' for t in explanation(result, subject))
    return bound + why


def _estimate_line(subject):
    ranking = subject.ranking_result()
    e = {} if ranking is None else ranking.scores.estimates
    if "advantage_estimate" not in e:
        return ""
    return f"""<div class="muted">estimate, not certified ({html.escape(ranking.name)}):
    U_N = {fmt(e["advantage_estimate"])} [{fmt(e["advantage_estimate_low"])},
    {fmt(e["advantage_estimate_high"])}] (sampling spread only, not the estimator's bias) ·
    p = {fmt_p(e["p_value"])} for "no leak" (exact; this test alone, uncorrected)</div>"""


def _exposure_line(result, subject, records):
    """The most exposed member, named only when a certified rule flags it."""
    source = subject.exposure_source
    if source is None:
        return '<div class="muted">no record is named: no claim certifies leakage</div>'
    first = records[(records["subject"] == subject.name) & (records["member"] == 1)].iloc[0]
    if not first["exposed"]:
        return (
            f'<div class="muted">no record is named: the certified rule of '
            f"{html.escape(source.name)} flags no member</div>"
        )
    risk = (
        ""
        if np.isnan(first["risk_estimate"])
        else f"; held-out risk estimate {fmt(first['risk_estimate'])}"
    )
    return f"""<div>most exposed member: row {int(first["row"])} of the members file
    <span class="muted">(flagged by the certified rule of {html.escape(source.name)}: at prior
    {fmt(result.prior)} a flagged record is a member with probability at least
    {fmt(source.flagged_precision())}{risk})</span></div>"""


def _failed_note(subject):
    if not subject.failures:
        return ""
    names = ", ".join(html.escape(analysis) for analysis, _ in subject.failures)
    return f'<div class="failed">failed, not in these numbers: {names} (see Failed analyses)</div>'


def card(result, subject, records):
    """One subject's card: verdict, headline ε, advantage, estimate, exposure, failures."""
    p, kind, colour = result.presentation, case(result, subject), result.verdict(subject)
    meaning = p.meaning(result, subject, kind)
    if meaning is None:
        meaning = MEANINGS[kind].format(noun=p.noun, eps=result.claimed_epsilon, delta=result.delta)
    exposure = p.exposure_line(result, subject, records)
    exposure = _exposure_line(result, subject, records) if exposure is None else exposure
    name = f"<b>{html.escape(subject.name)}</b>{p.facts_line(result, subject)}"
    return f"""
<div class="card {colour}">
  <div class="muted">{p.noun} {name}</div>
  <div class="verdict">{result.headline(subject)}</div>
  {_epsilon_lines(result, subject)}
  {_advantage_line(result, subject)}
  {_upper_line(result, subject) if p.can_bound else ""}
  {_estimate_line(subject)}
  {p.card_lines(result, subject)}
  {exposure}
  {_failed_note(subject)}
  <div class="muted">{meaning}.</div>
</div>"""


def failed_section(result):
    """The "Failed analyses" section: each failed step, on which subject, why."""
    failures = result.failures
    if failures.empty:
        return ""
    return (
        "<h2>Failed analyses</h2>\n<p>These analyses failed; the report shows everything "
        "else, and summary.csv marks their rows <code>status = failed</code> with the "
        "reason. The correction still counts them, so the other claims keep their stated "
        "confidence.</p>\n" + table(failures, text_columns=tuple(failures.columns))
    )


CLAIM_HEADERS = {
    "subject": "subject",
    "analysis": "analysis",
    "role": "role",
    "epsilon_lower_bound": "ε ≥",
    "advantage_lower_bound": "advantage ≥",
    "advantage_upper_bound": "advantage ≤ (any threshold)",
    "threshold_strategy": "threshold",
    "fpr_upper": "FPR ≤",
    "fnr_upper": "FNR ≤",
    "auc": "AUC",
    "tpr_at_1pct_fpr": "TPR @ 1% FPR",
    "tpr_at_0.1pct_fpr": "TPR @ 0.1% FPR",
    "detail": "how",
}


def _has_figure_points(summary):
    return bool((summary["role"] == "figure").any())


def _trivial_floor_note(summary):
    """Why an ``advantage ≥`` can exceed a rule's own advantage (it never goes below
    ``|2p − 1|``), said only when some row sits on that floor."""
    ok = summary[summary["status"] == "ok"]
    if not (ok["advantage_lower_bound"] <= ok["trivial_advantage"] + 1e-12).any():
        return ""
    return (
        " An advantage ≥ is never below the trivial |2p − 1|: it bounds the better of the "
        "rule and always answering the likelier side, which any attacker can do. A row that "
        "shows exactly the trivial value certifies nothing beyond it, and its rule alone may "
        "do worse (a rule that flags no one at a prior above ½ has advantage −|2p − 1|, the "
        "held-out advantage of comparisons.csv)."
    )


def claims_section(result, summary):
    """Every certified claim: one row per analysis, and per figure point if any."""
    trivial = fmt(abs(2 * result.prior - 1))
    headers = CLAIM_HEADERS | {"advantage_lower_bound": f"advantage ≥ (trivial {trivial})"}
    how = np.where(summary["status"] == "ok", summary["detail"], "failed: " + summary["reason"])
    shown = summary.assign(detail=how)[list(headers)].rename(columns=headers)
    thresholds = result.presentation.thresholds_note(result) or (
        '"split": the threshold was chosen on a random half of the targets and certified on the '
        'other half; "explicit": a rule fixed before seeing the data, certified on every target.'
    )
    figures = ", figure points included," if _has_figure_points(summary) else ""
    return f"""<h2>Certified claims of every analysis</h2>
{table(shown, text_columns=("subject", "analysis", "role", "threshold", "how"))}
<p class="muted">One row per claim, each from one operating point: ε ≥ and advantage ≥ (at
prior p = {fmt(result.prior)}; the trivial |2p − 1| is {trivial}) are certified lower bounds
from the analysis's held-out scores; advantage ≤ is the certified upper bound on the advantage
of every threshold rule on those scores, either direction (the best one's advantage plus
Hoeffding's deviation for one rule; summary.csv also gives the ε such an advantage
implies).{_trivial_floor_note(summary)} {thresholds} FPR ≤ and FNR ≤ are exact Clopper–Pearson
upper bounds. Every row of a {result.presentation.noun}{figures} holds together at
{result.confidence:.0%}. AUC and TPR at low FPR describe the scores (not certified). Written to
summary.csv.</p>"""


def estimates_section(summary):
    """The plug-in estimates (MACE's ``U_N``), apart from the claims."""
    rows = summary[summary["advantage_estimate"].notna() & (summary["role"] == "analysis")]
    if rows.empty:
        return ""
    shown = rows[
        [
            "subject",
            "analysis",
            "advantage_estimate",
            "advantage_estimate_low",
            "advantage_estimate_high",
            "epsilon_estimate",
            "p_value",
        ]
    ]
    shown = shown.assign(p_value=shown["p_value"].map(fmt_p)).rename(
        columns={
            "advantage_estimate": "U_N (estimate)",
            "advantage_estimate_low": "interval low",
            "advantage_estimate_high": "interval high",
            "epsilon_estimate": "ε implied by U_N",
            "p_value": "p-value (no leak, exact, this test alone)",
        }
    )
    return f"""<h2>Estimates (not certified)</h2>
{table(shown, text_columns=("subject", "analysis", "p-value (no leak, exact, this test alone)"))}
<p class="muted">U_N is MACE's plug-in estimate of the optimal advantage; its McDiarmid
interval covers the sampling spread of U_N around its own mean, not its bias, so neither the
interval nor the ε it implies is a lower bound. Never used for a verdict.</p>"""


def exposed_section(result, records):
    """The exposed members of every subject (only those a certified rule flags)."""
    group = [] if result.targets.group_by is None else [result.targets.group_by]
    columns = ["rank", "row", *group, "risk_estimate", *result.presentation.exposed_columns]
    parts = []
    for subject in result.subjects:
        mine = records[(records["subject"] == subject.name) & (records["member"] == 1)]
        exposed = mine[mine["exposed"]].head(10)
        title = f"<h3>{result.presentation.noun.capitalize()} '{html.escape(subject.name)}'</h3>"
        if exposed.empty:
            parts.append(title + '<p class="muted">no member is flagged by a certified rule.</p>')
            continue
        source = html.escape(subject.exposure_source.name)
        parts.append(
            f"{title}<p>{int(mine['exposed'].sum())} members flagged by the certified rule of "
            f"{source}; the first ten by held-out posterior:</p>"
            + table(exposed[columns], text_columns=tuple(group))
        )
    return f"""<h2>Exposed records</h2>{"".join(parts)}
<p class="muted">row: the member's row in the members file (0-based, header excluded). A
record is exposed when the certified rule of the strongest claim that certifies leakage flags
it (records.csv: <code>exposed</code>); risk_estimate is the held-out |f̂_p| (pointwise, an
estimate). Every target with every score, members first: records.csv.</p>"""


def how_to_read(result):
    """The common explanation, then the kind's own items."""
    p = result.presentation
    trivial = fmt(abs(2 * result.prior - 1))
    points = ", figure points" if _has_figure_points(result.summary) else ""
    items = [
        f'<li><b>Certified</b> ("at least"): every ε ≥ and advantage ≥ of a {p.noun} — table '
        f"rows, the card's headline{points} — holds together with probability "
        f"{result.confidence:.0%}: each is computed at 1 − α/K for the K certified numbers of "
        "that card (Bonferroni), assuming the members and non-member targets are independent "
        "draws from one population and that the audited object depends on the members "
        "alone. The card's colour uses these claims only.</li>",
        "<li><b>ε at least</b> (hypothesis-testing form of (ε, δ)-DP, δ = "
        f"{result.delta:g}): an (ε, δ)-DP mechanism forces every test to have FPR + e^ε·FNR ≥ "
        "1 − δ (and the same with FPR and FNR swapped); exact Clopper–Pearson bounds on one "
        "rule's error rates give the smallest ε they allow. Members against fresh records is "
        "the <b>substitute-one</b> relation: the bound refutes substitute-one DP. An "
        "add/remove-one guarantee ε implies substitute-one 2ε (and (ε, δ) implies (2ε, "
        "(1 + e^ε)·δ)), so read a certified E against add/remove-one claims as E/2.</li>",
        f"<li><b>Advantage</b> at prior p = {fmt(result.prior)}: 2·P(correct) − 1 of a rule; "
        f"always guessing the likelier side earns the trivial |2p − 1| = {trivial}, shown "
        "beside it. MACE's Bayes rule bounds the optimal advantage of its query: any "
        "classifier's advantage is at most the optimal one.</li>",
        "<li><b>Estimated</b>: U_N (MACE Thm 6), the ε it implies and the individual risks "
        "|f̂_p| (MACE Def. 3, held out: each record scored by densities fitted without it) are "
        "pointwise estimates, never used for a verdict.</li>",
        '<li><b>p-value</b> of "no leak" (MACE\'s Bayes rule): exact, not a claim of the card. '
        "The folds are chained (each ranked by the classifier fitted on the earlier folds "
        "only) and each fold's count of members in its top third minus its bottom third has a "
        "law fixed by the design, so their weighted sum's null law is the convolution of those "
        "laws. A small p-value points to a leak through this query; a large one does not say "
        "it is safe. It is not corrected with the card's claims.</li>",
        "<li><b>The colour</b>: <b>red</b> (leakage certified) when a claim certifies "
        "leakage, or members appear verbatim in a release more often than non-members "
        "(an exact test at α/K; the rows are named); <b>green</b> (leakage bounded) when "
        "every analysis's certified upper bound on the advantage is at most "
        f"|2p − 1| + {result.bounded_margin:g}, none failed and no exact 'no leak' test "
        "rejects at α/K; <b>grey</b> (inconclusive) otherwise, with the records that would "
        "decide. The upper bounds are a family of their own at the claims' levels, so a "
        "red and a green card are each wrong with probability at most α (plus α/K for the "
        "verbatim test).</li>",
        "<li><b>Exposed records</b>: a record is named only when the certified rule of a claim "
        "that certifies leakage flags it; that rule's flags are members with a certified "
        "probability above the prior. A card that certifies no leakage names no record.</li>",
        "<li><b>AUC and TPR at 1 % / 0.1 % FPR</b> compare attacks; TPR at low FPR says how "
        "many members an attacker identifies while almost never accusing a non-member."
        f"{low_fpr_note(result)}</li>",
    ]
    items = items if p.record_targets else []
    return f"<h2>How to read the numbers</h2>\n<ul>{''.join(items + p.how_to_read(result))}</ul>"


def low_fpr_note(result):
    """ " With N non-members, …": which FPR levels mean no false positive at all ("" when
    there are enough non-members for both levels to allow one)."""
    n0 = int(result.membership.size - result.membership.sum())
    zero = [level for level, share in (("1 %", 0.01), ("0.1 %", 0.001)) if n0 * share < 1]
    if not zero:
        return ""
    return (
        f" With {n0} non-member{'s' if n0 != 1 else ''}, {' and '.join(zero)} FPR "
        f"{'mean' if len(zero) > 1 else 'means'} zero false positives: the TPR there is the "
        "share of members scored above every non-member."
    )


def _sample_size_paragraph(result):
    line = sample_size_line(result)
    return f'<p class="muted">{html.escape(line)}</p>' if line else ""


def render_report(result, summary, records, figure_html, title, comparisons=None):
    """The whole report.html page (``comparisons``: :attr:`AuditResult.comparisons`)."""
    p = result.presentation
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in result.notes)
    cards = "".join(card(result, s, records) for s in result.subjects)
    subtitle = (
        f"prior p = {fmt(result.prior)} · δ = {result.delta:g} · certified claims at "
        f"{result.confidence:.0%} per {p.noun}{p.subtitle(result)}"
    )
    body = "\n".join(
        [
            f'<div class="cards">{cards}</div>',
            _sample_size_paragraph(result),
            failed_section(result),
            claims_section(result, summary),
            estimates_section(summary),
            comparisons_section(result, result.comparisons if comparisons is None else comparisons),
            *p.sections(result),
            "<h2>Figures</h2>" + "".join(figure_html),
            exposed_section(result, records) if p.record_targets else "",
            how_to_read(result),
            p.inputs_section(result),
            f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "",
        ]
    )
    return html_page(title, result.n_rows, subtitle, body)


def comparisons_section(result, comparisons):
    """The report's "Comparisons" section; empty when nothing was compared."""
    if comparisons.empty:
        return ""
    noun = result.presentation.noun
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
    records = "target records" if getattr(result.presentation, "record_targets", True) else "runs"
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
