"""Writing the audit to a folder: report.html (self-contained), summary.csv, records.csv,
figures/*.png. Nothing is written anywhere else."""

import base64
import html
import io
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ._battery import (
    EXACT_NAME,
    MACE_NAME,
    MAX_DISCLOSURE_RECORDS,
    N_CLAIMS,
    NEAR_COPY_DISTANCE,
)
from ._figures import draw_figures
from ._output import check_output_dir, relocate, staged_output

__all__ = ["write_report"]

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#222;line-height:1.45;padding:0 1rem}
h1{margin-bottom:.2rem}h2{border-bottom:2px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #ccc;padding:.25rem .55rem;text-align:right}
th{background:#f3f3f3}td.text,th.text{text-align:left}
.cards{display:flex;gap:1rem;flex-wrap:wrap}
.card{border:1px solid #ccc;border-radius:8px;padding:.8rem 1rem;min-width:300px;flex:1}
.card .big{font-size:1.6rem;font-weight:600}
.high{border-left:6px solid #c0392b}.mid{border-left:6px solid #e67e22}
.low{border-left:6px solid #27ae60}.verdict{font-weight:600;margin:.2rem 0}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.9rem;color:#555}.muted{color:#666;font-size:.9rem}
.failed{color:#c0392b;font-size:.9rem}
"""


def fmt(value, digits=3):
    """A number as the report shows it (and as the tests look for it)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "—"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if np.isinf(value):
        return "∞"
    return f"{value:.{digits}f}"


def _table(frame, text_columns=()):
    head = "".join(
        f'<th class="{"text" if c in text_columns else ""}">{html.escape(str(c))}</th>'
        for c in frame.columns
    )
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            is_text = column in text_columns or isinstance(value, str)
            shown = html.escape(str(value)) if isinstance(value, str) else fmt(value)
            cells.append(f'<td class="{"text" if is_text else ""}">{shown}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _grouped_columns(report):
    """The column report with columns of the same treatment on one row."""
    grouped = report.groupby("treatment", sort=False).agg(
        columns=("column", lambda c: ", ".join(map(str, c))), features=("features", "sum")
    )
    return grouped.reset_index()[["columns", "treatment", "features"]]


def _png_bytes(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def fmt_p(value):
    """A p-value: two significant digits, scientific below 0.001."""
    if value is None or not np.isfinite(value):
        return "—"
    return f"{value:.2g}" if value >= 1e-3 else f"{value:.1e}"


MEANINGS = {  # what each verdict (AuditResult.verdict) means, under the card's headline
    "high": "the release is not ({eps:g}, {delta:g})-DP with respect to its members, with the "
    "stated confidence",
    "mid": "some membership leakage is certified, though not enough to refute ε = {eps:g}",
    "low": "no analysis separates members from non-members beyond chance at this "
    "confidence; this is not a proof of privacy (a stronger attack or more records "
    "may show leakage)",
}


def _most_exposed(result, release, kind):
    """The card's line naming the top-ranked member, only when its ranking is certified.

    The ranking is MACE's held-out posterior; a member is named only when the release's
    verdict certifies leakage *and* MACE's own advantage bound is above the trivial
    ``|2p − 1|`` (else the member's risk is an uncertified estimate whose interval is
    [0, 1]), and only a member the held-out posterior calls a member.
    """
    if kind == "low":
        return (
            '<div class="muted">no member is named: with nothing certified, the '
            "ranking of records may be noise</div>"
        )
    if not result.ranking_certified(release):
        return (
            '<div class="muted">no member is named: MACE\'s ranking of the records is not '
            "certified for this release (its advantage bound is trivial)</div>"
        )
    member_rows = np.flatnonzero(result.membership == 1)
    top = member_rows[int(np.argmax(release.scores[MACE_NAME][member_rows]))]
    if release.posterior_points_to[top] != "member":
        return (
            '<div class="muted">no member is named: the held-out posterior calls '
            "no member a member</div>"
        )
    return (
        f"<div>most exposed member: row {int(result.target_row[top])} of the members file"
        f' <span class="muted">(held-out risk {fmt(release.risk[top])}, an estimate)'
        "</span></div>"
    )


def _count(k, n):
    return "—" if k is None or not np.isfinite(k) else f"{int(k)} of {int(n)}"


def _copies(release):
    """The card's lines counting members and non-members copied into the release."""
    c = release.copies
    if not c:
        return ""
    n1, n0 = c["member_targets"], c["nonmember_targets"]
    return f"""<div>{_count(c["member_exact_copies"], n1)} members appear verbatim in the
    release; {_count(c["nonmember_exact_copies"], n0)} non-members</div>
  <div class="muted">near copies (nearest synthetic row within {NEAR_COPY_DISTANCE:g} in
    the encoded space, exact ones included): {_count(c["member_near_copies"], n1)} members,
    {_count(c["nonmember_near_copies"], n0)} non-members</div>"""


def _failed_note(release):
    if not release.failures:
        return ""
    names = ", ".join(html.escape(analysis) for analysis, _ in release.failures)
    return f'<div class="failed">failed, not in these numbers: {names} (see Failed analyses)</div>'


def failed_section(result):
    """The "Failed analyses" section: each analysis that failed, on which release, why."""
    failures = result.failures
    if failures.empty:
        return ""
    return (
        "<h2>Failed analyses</h2>\n<p>These analyses failed; the report shows everything "
        "else, and summary.csv marks their rows <code>status = failed</code> with the "
        "reason. The Bonferroni correction still counts them, so the other claims keep "
        "their stated confidence.</p>\n" + _table(failures, text_columns=tuple(failures.columns))
    )


def _card(result, release):
    mace, kind = release.mace, result.verdict(release)
    trivial = abs(2 * result.prior - 1)
    headline = result.headline(release)
    meaning = MEANINGS[kind].format(eps=result.epsilon, delta=result.delta)
    strongest = release.summary.set_index("analysis")
    where = ""
    if release.strongest_epsilon > 0 and release.strongest_analysis in strongest.index:
        row = strongest.loc[release.strongest_analysis]
        where = f" at FPR ≤ {fmt(row['fpr_upper'])}, FNR ≤ {fmt(row['fnr_upper'])}"
    source = (
        f"from {html.escape(release.strongest_analysis)}{where}"
        if release.strongest_epsilon > 0
        else "no analysis certifies ε > 0"
    )
    return f"""
<div class="card {kind}">
  <div class="muted">release <b>{html.escape(release.name)}</b> ·
    {release.n_synthetic} synthetic rows</div>
  <div class="verdict">{headline}</div>
  <div>optimal advantage at prior {fmt(result.prior)}, certified
    <span class="muted">(trivial |2p − 1| = {fmt(trivial)})</span></div>
  <div class="big">at least {fmt(mace["optimal_advantage_at_least"])}</div>
  <div class="muted">p = {fmt_p(mace["p_value"])} for "no leak" (exact, this test alone)</div>
  <div>ε <b>at least {fmt(release.strongest_epsilon, 2)}</b>
    <span class="muted">(δ = {result.delta:g}; {source})</span></div>
  <div class="muted">estimate, not certified: U_N = {fmt(mace["advantage_estimate"])}
    [{fmt(mace["estimate_lower"])}, {fmt(mace["estimate_upper"])}] (the interval covers
    sampling spread only, not the estimator's bias) · best attack AUC
    {fmt(release.summary["auc"].max())}</div>
  {_copies(release)}
  {_most_exposed(result, release, kind)}
  {_failed_note(release)}
  <div class="muted">{meaning}.</div>
</div>"""


def _disclosure_section(result):
    """Attribute inference and linkability (what anonymeter reports), when it was run."""
    if result.disclosure is None:
        return ""
    table = result.disclosure.assign(
        risk=[
            "undefined (every control guess right)"
            if not np.isfinite(r)
            else f"{fmt(r)} [{fmt(lo)}, {fmt(hi)}]"
            for r, lo, hi in result.disclosure[["risk", "risk_low", "risk_high"]].to_numpy()
        ]
    )[["release", "analysis", "target", "attack_rate", "control_rate", "baseline_rate", "risk"]]
    table = table.rename(
        columns={
            "attack_rate": "attack success",
            "control_rate": "control success",
            "baseline_rate": "random guess",
            "risk": "risk [interval]",
        }
    )
    return f"""<h2>Beyond membership: attribute inference and linkability</h2>
{_table(table, text_columns=("release", "analysis", "target", "risk [interval]"))}
<p class="muted">Attribute inference: an attacker who knows a member's other columns guesses
the target column from its nearest release row (numbers within 5 %); linkability: the two
halves of a member's columns are linked when their nearest release rows coincide. Both are
compared with the same attack on control records (population rows the generator never saw;
at most {MAX_DISCLOSURE_RECORDS} of each, drawn at random):
risk = (attack − control) / (1 − control), as in anonymeter (Giomi et al. 2023), with an
interval from the two rates' exact intervals at {result.confidence:.0%}, per row (not
corrected across rows; these are estimates, not part of the certified claims). Written to
disclosure.csv.</p>"""


def _how_to_read(result):
    trivial = fmt(abs(2 * result.prior - 1))
    return f"""
<h2>How to read the numbers</h2>
<ul>
<li><b>Certified</b> ("at least"): the ε lower bound of every analysis and MACE's optimal
advantage lower bound. All the certified claims of one release hold together
with probability {result.confidence:.0%} (each is computed at {result.claim_confidence:.2%},
Bonferroni over the {N_CLAIMS} claims), assuming only that the members and the non-member
targets are independent draws from the same population and that the release depends on the
members alone. The card's colour uses these claims only.</li>
<li><b>ε at least</b> (hypothesis-testing form of (ε, δ)-differential privacy, δ =
{result.delta:g}): an (ε, δ)-DP generator forces every attack to have FPR + e^ε·FNR ≥ 1 − δ
(and the same with FPR and FNR swapped). Each analysis's operating point (a score threshold,
chosen on a random half of the targets) is evaluated on the other half with exact
Clopper–Pearson upper bounds on its FPR and FNR, and the smallest ε those bounds allow is
reported. The release is not (ε', δ)-DP for any ε' below it. It says nothing the other way:
a stronger attack could show more leakage, and no audit can prove a generator is DP.</li>
<li><b>Optimal advantage at least</b> (MACE Def. 2, at prior p = {fmt(result.prior)}):
2·P(correct) − 1 of the best attacker who sees the nearest-synthetic distance is at least the
advantage of the cross-fitted plug-in Bayes classifier, whose held-out true-positive and
true-negative rates are bounded with exact Clopper–Pearson bounds. It is never below the
trivial |2p − 1| = {trivial} of always guessing the majority. The <b>p-value</b> of "no leak"
is exact: the folds are chained (each ranked by the classifier fitted on the earlier folds
only), and the statistic adds up the members in each fold's top third minus those in its
bottom third, weighted by the folds its classifier saw; each fold's count has a law fixed by
the design whatever the earlier folds held,
so the sum's null law is the convolution of those laws. It is the probability of a result at
least as strong if the distance carried no membership information. A small p-value points to
a leak through this query; a large one does not say it is safe.</li>
<li><b>Estimated</b>: U_N (MACE Thm 6), the plug-in estimate of the optimal advantage, with
its McDiarmid interval. The interval covers the sampling spread of U_N around its own mean,
not the estimator's bias, so it is no lower bound; it is shown for comparison, never for the
verdict.</li>
<li><b>Individual risk</b> |f̂_p| (MACE Def. 3) is held out: each record is scored by
densities fitted without it. It is a pointwise estimate with no interval, not simultaneous
over records, and it also counts confident "non-member" calls; which way the posterior
points is in records.csv. No member is named when nothing is certified.</li>
<li><b>Copies</b>: a record appears <b>verbatim</b> in the release when some synthetic row
equals it on every audited column (numbers compared as numbers); a <b>near copy</b> has its
nearest synthetic row within {NEAR_COPY_DISTANCE:g} in the encoded space (numeric columns in
standard deviations, a differing category counts 1). Members and non-members are counted
apart: copies of non-members happen by chance. The analysis "{html.escape(EXACT_NAME)}"
calls a record a member iff it is verbatim in the release, a rule fixed before seeing the
data, so its ε bound is computed on all targets, with no split.</li>
<li><b>AUC and TPR at 1 % / 0.1 % FPR</b> compare attacks; TPR at low FPR says how many
members an attacker identifies while almost never accusing a non-member.</li>
</ul>"""


def html_page(title, n_rows, subtitle, body):
    """A self-contained report page: the title, a line on when and from what, the body."""
    inputs = ", ".join(f"{html.escape(k)}: {v} rows" for k, v in n_rows.items())
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{STYLE}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="muted">Generated {stamp} by sklearn-mace · inputs — {inputs} · {subtitle}</p>
{body}
</body></html>
"""


def write_tables_and_figures(out, summary, records, figures):
    """Write ``summary.csv``, ``records.csv`` and ``figures/*.png`` under ``out``.

    ``figures`` maps a file name to ``(matplotlib figure, caption)``. Returns the paths
    (``report`` included, for the caller to write) and each figure as an embedded
    ``<figure>`` element. ``out`` should be the staging folder of
    :func:`~sklearn_mace.report._output.staged_output`, so that the files reach the report
    folder together, or not at all.
    """
    out = Path(out)
    for name in figures:
        if Path(name).name != name or not name.endswith(".png"):
            raise ValueError(f"figure names are plain .png file names; got {name!r}.")
    (out / "figures").mkdir(parents=True, exist_ok=True)
    paths = {
        "report": out / "report.html",
        "summary": out / "summary.csv",
        "records": out / "records.csv",
    }
    summary.to_csv(paths["summary"], index=False)
    records.to_csv(paths["records"], index=False)
    figure_html = []
    for name, (fig, caption) in figures.items():
        png = _png_bytes(fig)
        (out / "figures" / name).write_bytes(png)
        paths[name] = out / "figures" / name
        data = base64.b64encode(png).decode("ascii")
        figure_html.append(
            f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(caption)}" '
            f'data-file="figures/{name}"><figcaption>{html.escape(caption)}</figcaption>'
            "</figure>"
        )
    return paths, figure_html


def write_report(result, out, *, title="sklearn-mace privacy audit"):
    """Write the audit to the folder ``out`` (created if needed).

    Writes ``report.html`` (figures embedded as base64 PNG, no external resources),
    ``summary.csv`` (one row per release and analysis: certified ε and advantage with the
    operating point, AUC, TPR at low FPR; MACE's certified bound, p-value and estimate),
    ``records.csv`` (every target's held-out risk, members first, most exposed first) and
    ``figures/*.png``. Nothing is written outside ``out``.

    The folder is checked before anything is drawn, the files are written into a staging
    folder and moved into ``out`` at the end (:mod:`~sklearn_mace.report._output`): a
    failure leaves the previous report intact, and the report's own files from an earlier
    run (these names and ``figures/*.png``) are replaced, never mixed with the new ones.
    Other files in ``out`` are left alone.

    Parameters
    ----------
    result : AuditResult
        What :func:`audit` returned.
    out : str or Path
        The output folder.
    title : str, default="sklearn-mace privacy audit"
        Title of the HTML page.

    Returns
    -------
    paths : dict of str -> Path
        ``report``, ``summary``, ``records`` and one entry per figure.

    Examples
    --------
    Drawing the figures takes a few seconds, so this example is not run as a doctest:

    >>> import tempfile
    >>> import numpy as np, pandas as pd
    >>> from sklearn_mace.report import audit, write_report
    >>> rng = np.random.default_rng(0)
    >>> members = pd.DataFrame({"x": rng.normal(size=30), "y": rng.normal(size=30)})
    >>> non_members = pd.DataFrame({"x": rng.normal(size=30), "y": rng.normal(size=30)})
    >>> result = audit(members, non_members, members, verbose=False)  # doctest: +SKIP
    >>> with tempfile.TemporaryDirectory() as out:  # doctest: +SKIP
    ...     paths = write_report(result, out)
    ...     print(paths["report"].name, paths["summary"].name)
    report.html summary.csv
    """
    check_output_dir(out, option="the output folder")
    with staged_output(out) as stage:
        paths = _write_report_files(result, stage, title)
    return relocate(paths, stage, out)


def _write_report_files(result, out, title):
    """The body of :func:`write_report`, writing into the (staging) folder ``out``."""
    summary, records = result.summary, result.records
    paths, figure_html = write_tables_and_figures(out, summary, records, draw_figures(result))
    if result.disclosure is not None:
        paths["disclosure"] = Path(out) / "disclosure.csv"
        result.disclosure.to_csv(paths["disclosure"], index=False)

    certified = summary[
        [
            "release",
            "analysis",
            "epsilon_at_least",
            "advantage_at_least",
            "threshold",
            "fpr",
            "fnr",
            "fpr_upper",
            "fnr_upper",
            "auc",
            "tpr_at_1pct_fpr",
            "tpr_at_0.1pct_fpr",
        ]
    ].rename(
        columns={
            "epsilon_at_least": "ε ≥",
            "advantage_at_least": "advantage ≥",
            "fpr": "FPR",
            "fnr": "FNR",
            "fpr_upper": "FPR ≤",
            "fnr_upper": "FNR ≤",
            "auc": "AUC",
            "tpr_at_1pct_fpr": "TPR @ 1% FPR",
            "tpr_at_0.1pct_fpr": "TPR @ 0.1% FPR",
        }
    )
    mace = summary[summary["analysis"] == MACE_NAME][
        [
            "release",
            "optimal_advantage_at_least",
            "optimal_epsilon_at_least",
            "p_value",
            "advantage_estimate",
            "estimate_lower",
            "estimate_upper",
            "epsilon_estimate",
        ]
    ]
    mace = mace.assign(p_value=mace["p_value"].map(fmt_p)).rename(
        columns={
            "optimal_advantage_at_least": "advantage ≥ (certified)",
            "optimal_epsilon_at_least": "ε ≥ (certified)",
            "p_value": "p-value (no leak, exact)",
            "advantage_estimate": "U_N (estimate)",
            "estimate_lower": "interval lower",
            "estimate_upper": "interval upper",
            "epsilon_estimate": "ε implied by U_N",
        }
    )
    top_tables = []
    group_columns = [] if result.group_by is None else [result.group_by]
    for release in result.releases:
        mine = records[(records["release"] == release.name) & (records["member"] == 1)]
        top = mine.head(10)[
            [
                "row",
                *group_columns,
                "nearest_synthetic_distance",
                "heldout_risk",
                "posterior_points_to",
            ]
        ].rename(
            columns={
                "nearest_synthetic_distance": "nearest-synthetic distance",
                "heldout_risk": "held-out risk",
                "posterior_points_to": "posterior points to",
            }
        )
        top.insert(0, "rank", np.arange(1, len(top) + 1))
        caveat = (
            ""
            if result.verdict(release) != "low"
            else (
                ' <span class="muted">(nothing is certified for this release: this ranking may '
                "be noise)</span>"
            )
        )
        top_tables.append(
            f"<h3>Release '{html.escape(release.name)}': the ten highest-ranked members"
            f"{caveat}</h3>" + _table(top, text_columns=(*group_columns, "posterior points to"))
        )
        if group_columns:
            # risk toward "member" only: |f̂_p| of a member called non-member is no exposure
            called = mine.assign(
                exposure=mine["heldout_risk"].where(mine["posterior_points_to"] == "member")
            )
            by_group = called.groupby(result.group_by).agg(
                members=("member", "size"),
                called_member=("exposure", "count"),
                mean_risk=("exposure", "mean"),
                max_risk=("exposure", "max"),
            )
            by_group = by_group.reset_index().rename(
                columns={
                    "called_member": "called member",
                    "mean_risk": "mean held-out risk",
                    "max_risk": "max held-out risk",
                }
            )
            top_tables.append(
                f"<p>Members by {html.escape(result.group_by)}; the risks are of the members "
                "the held-out posterior calls members:</p>"
                + _table(by_group, text_columns=tuple(group_columns))
            )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in result.notes)
    subtitle = (
        f"{len(result.feature_names)} encoded features · prior p = "
        f"{fmt(result.prior)} · certified claims at {result.confidence:.0%} per "
        f"release · δ = {result.delta:g}"
    )
    body = f"""<div class="cards">{"".join(_card(result, r) for r in result.releases)}</div>
{failed_section(result)}
<h2>Certified claims of every analysis</h2>
{_table(certified, text_columns=("release", "analysis"))}
<p class="muted">ε ≥ and advantage ≥ (at prior p = {fmt(result.prior)}) are certified lower
bounds from each analysis's scores on the targets: the operating point (score threshold,
chosen on a random half) has observed FPR and FNR on the other half, and FPR ≤ and FNR ≤ are
their exact Clopper–Pearson upper bounds. The certified claims of a release hold together at
{result.confidence:.0%} (each at {result.claim_confidence:.2%}). Written to summary.csv.</p>
<h2>MACE on the nearest-synthetic distance: certified bound and estimate</h2>
{_table(mace, text_columns=("release", "p-value (no leak, exact)"))}
<p class="muted">advantage ≥ is certified (cross-fitted plug-in Bayes classifier, exact
bounds on its held-out outcomes); U_N is MACE's plug-in estimate, and its
{result.claim_confidence:.0%} McDiarmid interval covers only the sampling spread of U_N,
not its bias.</p>
{_disclosure_section(result)}
<h2>Figures</h2>
{"".join(figure_html)}
<h2>Most exposed records</h2>
{"".join(top_tables)}
<p class="muted">row: the member's row in the members file (0-based, header excluded).
Members are ranked by the held-out log posterior odds of MACE's cross-fitted attack, so
those the posterior calls "member" come first, most confident first; held-out risk is
|f̂_p| from densities fitted without the record (pointwise, an estimate).
All target records (members first, then the hold-out rows not used as the reference), with
every attack's score: records.csv.</p>
{_how_to_read(result)}
<h2>Columns</h2>
{_table(_grouped_columns(result.column_report), text_columns=("columns", "treatment"))}
<p class="muted">Numeric columns are centred on the median and divided by the interquartile
range / 1.349; text columns with few values are one-hot encoded (scaled so that a different
category counts like one standard deviation), rare categories and those absent from a table
merged into &lt;other&gt;; identifier-like, date/time, constant and exactly dependent columns
are dropped (the treatment says why).</p>
{f"<h2>Notes</h2><ul>{notes}</ul>" if notes else ""}
"""
    document = html_page(title, result.n_rows, subtitle, body)
    paths["report"].write_text(document, encoding="utf-8")
    return paths
