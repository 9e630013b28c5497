"""Writing the audit to a folder: report.html (self-contained), summary.csv, records.csv,
figures/*.png. Nothing is written anywhere else."""

import base64
import html
import io
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ._figures import draw_figures

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
.high{border-left:6px solid #c0392b}.low{border-left:6px solid #27ae60}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.9rem;color:#555}.muted{color:#666;font-size:.9rem}
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
        columns=("column", lambda c: ", ".join(map(str, c))), features=("features", "sum"))
    return grouped.reset_index()[["columns", "treatment", "features"]]


def _png_bytes(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _card(result, release):
    mace = release.summary.iloc[0]
    member_rows = np.flatnonzero(result.membership == 1)
    top = member_rows[int(np.argmax(release.risk[member_rows]))]
    # leakage = the interval's lower end clears the trivial |2p − 1| by 5 % of the room
    # above it (1 − |2p − 1|, which is only 2p at a low prior p)
    trivial = abs(2 * result.prior - 1)
    leaky = mace["advantage_lower"] > trivial + 0.05 * (1 - trivial)
    verdict = ("measurable membership leakage" if leaky else
               "no leakage distinguishable from the interval")
    return f"""
<div class="card {'high' if leaky else 'low'}">
  <div class="muted">release <b>{html.escape(release.name)}</b> ·
    {release.n_synthetic} synthetic rows</div>
  <div>optimal advantage at prior {fmt(result.prior)}
    <span class="muted">(trivial |2p − 1| = {fmt(trivial)})</span></div>
  <div class="big">{fmt(mace['advantage'])}
    <span class="muted">[{fmt(mace['advantage_lower'])}, {fmt(mace['advantage_upper'])}]</span>
  </div>
  <div>implied ε ≥ <b>{fmt(mace['epsilon_lower_bound'], 2)}</b>
    <span class="muted">({fmt(mace['epsilon_at_lower'], 2)} at the interval's lower end)</span>
    · best attack AUC <b>{fmt(release.summary['auc'].max())}</b></div>
  <div>most exposed member: row {int(result.target_row[top])} of the members file
    (risk {fmt(release.risk[top])})</div>
  <div class="muted">{verdict}</div>
</div>"""


def _how_to_read(result):
    return f"""
<h2>How to read the numbers</h2>
<ul>
<li><b>Optimal advantage</b> (MACE Def. 2, Thm 6) is 2·P(correct) − 1 of the best attacker
who sees only the nearest-synthetic distance, at prior p = {fmt(result.prior)}. 0 means the
release tells such an attacker nothing about membership; 1 means perfect identification. At a
prior p ≠ 0.5 always guessing the majority already scores |2p − 1| = {fmt(abs(2 * result.prior
- 1))}.</li>
<li><b>Intervals</b> are {result.confidence:.0%} confidence intervals for sampling error in
the rows you supplied (McDiarmid for the advantage, MACE Thm 3 for each risk; the risk
intervals hold record by record, not for all records at once). They do not cover the
estimator's upward bias on small samples (a release that leaks nothing still shows some
advantage above the trivial one), a different query, or a stronger attacker.</li>
<li><b>ε ≥</b> is the smallest ε for which an ε-differentially-private generator could
produce this advantage (MACE Thm 1.4); "at lower" uses the interval's lower end, the statement
that holds with the stated confidence. It is only a lower bound: a query with more access could
show more leakage, and no audit can prove a generator is ε-DP.</li>
<li><b>AUC and TPR at 1 % / 0.1 % FPR</b> compare attacks; TPR at low FPR says how many
members an attacker identifies while almost never accusing a non-member.</li>
</ul>"""


def write_report(result, out, *, title="sklearn-mace privacy audit"):
    """Write the audit to the folder ``out`` (created if needed).

    Writes ``report.html`` (figures embedded as base64 PNG, no external resources),
    ``summary.csv``, ``records.csv`` (per-record risk with its interval, ranked within each
    release) and ``figures/*.png``. Nothing is written outside ``out``.

    Parameters
    ----------
    result : AuditResult
    out : str or Path
    title : str, default="sklearn-mace privacy audit"

    Returns
    -------
    paths : dict of str -> Path
        ``report``, ``summary``, ``records`` and one entry per figure.
    """
    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    paths = {"report": out / "report.html", "summary": out / "summary.csv",
             "records": out / "records.csv"}
    summary = result.summary
    summary.to_csv(paths["summary"], index=False)
    records = result.records
    records.to_csv(paths["records"], index=False)

    figure_html = []
    for name, (fig, caption) in draw_figures(result).items():
        png = _png_bytes(fig)
        (out / "figures" / name).write_bytes(png)
        paths[name] = out / "figures" / name
        data = base64.b64encode(png).decode("ascii")
        figure_html.append(
            f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(caption)}" '
            f'data-file="figures/{name}"><figcaption>{html.escape(caption)}</figcaption>'
            "</figure>"
        )

    shown = summary.rename(columns={
        "tpr_at_1pct_fpr": "TPR @ 1% FPR", "tpr_at_0.1pct_fpr": "TPR @ 0.1% FPR",
        "auc": "AUC", "advantage_lower": "lower", "advantage_upper": "upper",
        "epsilon_lower_bound": "ε ≥", "epsilon_at_lower": "ε ≥ (at lower)",
    })
    top_tables = []
    group_columns = [] if result.group_by is None else [result.group_by]
    for release in result.releases:
        mine = records[(records["release"] == release.name) & (records["member"] == 1)]
        top = mine.head(10)[["row", *group_columns, "nearest_synthetic_distance", "risk",
                             "risk_lower", "risk_upper"]]
        top.insert(0, "rank", np.arange(1, len(top) + 1))
        top_tables.append(
            f"<h3>Release '{html.escape(release.name)}': the ten most exposed members</h3>"
            + _table(top, text_columns=tuple(group_columns))
        )
        if group_columns:
            by_group = mine.groupby(result.group_by)["risk"].agg(["count", "mean", "max"])
            by_group = by_group.reset_index().rename(columns={
                "count": "members", "mean": "mean risk", "max": "max risk"})
            top_tables.append(f"<p>Members' risk by {html.escape(result.group_by)}:</p>"
                              + _table(by_group, text_columns=tuple(group_columns)))
    inputs = ", ".join(f"{html.escape(k)}: {v} rows" for k, v in result.n_rows.items())
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in result.notes)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    document = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{STYLE}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="muted">Generated {stamp} by sklearn-mace · inputs — {inputs} ·
{len(result.feature_names)} encoded features · prior p = {fmt(result.prior)} ·
{result.confidence:.0%} intervals</p>
<div class="cards">{''.join(_card(result, r) for r in result.releases)}</div>
<h2>Summary</h2>
{_table(shown, text_columns=("release", "analysis"))}
<p class="muted">Advantage, interval and ε are MACE's (optimal advantage U_N on the
nearest-synthetic distance); the attacks are compared by AUC and TPR at low FPR.
Written to summary.csv.</p>
<h2>Figures</h2>
{''.join(figure_html)}
<h2>Most exposed records</h2>
{''.join(top_tables)}
<p class="muted">row: the member's row in the members file (0-based, header excluded).
All target records (members and the hold-out rows not used as the reference), ranked by
risk with every attack's score: records.csv.</p>
{_how_to_read(result)}
<h2>Columns</h2>
{_table(_grouped_columns(result.column_report), text_columns=("columns", "treatment"))}
<p class="muted">Numeric columns are standardized; text columns with few values are one-hot
encoded (scaled so that a different category counts like one standard deviation);
identifier-like, date/time and constant columns are dropped.</p>
{f'<h2>Notes</h2><ul>{notes}</ul>' if notes else ''}
</body></html>
"""
    paths["report"].write_text(document, encoding="utf-8")
    return paths
