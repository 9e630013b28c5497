"""Writing the model audit to a folder: report.html (self-contained), summary.csv,
records.csv, figures/*.png — the same contract as ``sklearn-mace audit``; nothing is written
anywhere else. Figures and HTML reuse the synthetic-data report's helpers."""

import html
import sys

import numpy as np

from ..metrics import IndividualRiskDisplay, MembershipRocDisplay
from ._figures import _figure, slug
from ._html import _table, fmt, html_page, write_tables_and_figures
from ._output import check_output_dir, relocate, staged_output

__all__ = ["draw_model_figures", "print_model_summary", "write_model_report"]


def draw_model_figures(result):
    """ROC curves, members' risk and the loss distributions, per model.

    Returns
    -------
    figures : dict of str -> (matplotlib Figure, str)
    """
    figures = {}
    m = result.membership
    n_mem, n_non = int(m.sum()), int(len(m) - m.sum())
    is_member = m == 1
    for model in result.models:
        fig, ax = _figure()
        for name, score in model.scores.items():
            MembershipRocDisplay.from_predictions(m, score, name=name, ax=ax)
        ax.set_title(f"'{model.name}': membership attacks ({n_mem} members, {n_non} non-members)")
        figures[f"roc_{slug(model.name)}.png"] = (
            fig,
            (
                f"ROC curves of the attacks on model '{model.name}', false-positive rate on a log "
                "scale; the dot marks each attack's TPR at 1 % FPR. Every curve uses held-out "
                "scores: cross-fitted (BTTA, CBTTA, MACE) or from shadow models."
            ),
        )
        fig, ax = _figure()
        IndividualRiskDisplay.from_predictions(
            model.risk[is_member],
            record_ids=result.target_row[is_member],
            ax=ax,
            top_k=10,
            name=f"'{model.name}': members' individual risk (loss) at prior {result.prior:.3g}",
        )
        figures[f"risk_{slug(model.name)}.png"] = (
            fig,
            (
                f"Individual privacy risk |f_p| (MACE Def. 3) of every member of model "
                f"'{model.name}' from its loss, each record scored by densities fitted without "
                "it; most exposed first, the ten most exposed circled with their rows in the "
                "members file (0-based)."
            ),
        )
        fig, ax = _figure()
        loss = np.log10(np.maximum(model.queries["loss"].to_numpy(), 1e-12))
        bins = np.linspace(loss.min(), loss.max() + 1e-9, 40)
        ax.hist(loss[is_member], bins=bins, alpha=0.6, label=f"members ({n_mem})")
        ax.hist(loss[~is_member], bins=bins, alpha=0.6, label=f"non-members ({n_non})")
        ax.set_xlabel("log10 of the per-record loss −log M_y(x)")
        ax.set_ylabel("records")
        ax.legend()
        ax.set_title(f"'{model.name}': loss of members and non-members")
        figures[f"loss_{slug(model.name)}.png"] = (
            fig,
            (
                f"Distribution of the per-record loss of model '{model.name}' (log scale; losses "
                "below 1e-12 are drawn at 1e-12). The further apart the two histograms, the more "
                "the loss tells about membership."
            ),
        )
    return figures


def _card(result, model):
    summary = model.summary.set_index("analysis")
    best = summary["auc"].idxmax()
    mace = summary.loc["MACE optimal (loss)"]
    trivial = abs(2 * result.prior - 1)
    eps = model.epsilon_all_attacks
    leaky = bool(np.nan_to_num(eps) > 0)
    member_rows = np.flatnonzero(result.membership == 1)
    top = member_rows[int(np.argmax(model.risk[member_rows]))]
    verdict = "certified membership leakage" if leaky else "no leakage certified at this confidence"
    return f"""
<div class="card {"high" if leaky else "low"}">
  <div class="muted">model <b>{html.escape(model.name)}</b> · {html.escape(model.format)} ·
    train accuracy {fmt(model.train_accuracy)}, test {fmt(model.test_accuracy)}</div>
  <div>certified ε lower bound, all {len(summary)} attacks at once
    <span class="muted">({result.confidence:.0%}, Bonferroni)</span></div>
  <div class="big">ε ≥ {fmt(eps, 2)}</div>
  <div>MACE advantage on the loss ≥ <b>{fmt(mace["advantage_lower_bound"])}</b> (certified;
    estimate U_N {fmt(mace["advantage_estimate"])}) at prior {fmt(result.prior)}
    <span class="muted">(trivial {fmt(trivial)})</span></div>
  <div>best AUC <b>{fmt(summary["auc"].max())}</b> ({html.escape(best)})</div>
  <div>most exposed member: row {int(result.target_row[top])} of the members file
    (risk {fmt(model.risk[top])})</div>
  <div class="muted">{verdict}</div>
</div>"""


def _how_to_read(result):
    return f"""
<h2>How to read the numbers</h2>
<ul>
<li><b>ε ≥</b> is a {result.confidence:.0%} lower confidence bound on the ε of any
(ε, 0)-differentially-private training procedure that could have produced these attack
scores (hypothesis-testing form of DP, exact Clopper–Pearson bounds on the attack's error
rates at a threshold chosen on a separate split), one per attack. The card's ε holds for
all k attacks at once: each attack is audited again at confidence 1 − α/k (Bonferroni,
α = {1 - result.confidence:.2g}) and the largest of those bounds is shown, which is why it can
be below the largest value of the table. It certifies leakage; it never proves privacy.</li>
<li><b>MACE advantage estimate</b> is the plug-in optimal advantage U_N (MACE Thm 6) of the
best attacker who sees only that query, an estimate; <b>certified</b> is a
{result.confidence:.0%} lower confidence bound on the optimal advantage from held-out
outcomes, never below the trivial |2p − 1| = {fmt(abs(2 * result.prior - 1))}; the
<b>p-value</b> tests "the query leaks nothing".</li>
<li><b>BTTA</b> uses only whether the model is right (Bentley et al. Alg. 1); <b>CBTTA</b>
the same inside categories (labels, confidence bins). The <b>shadow-model attack</b> and
<b>LiRA</b> imitate the training on population rows.</li>
<li><b>AUC and TPR at 1 % / 0.1 % FPR</b> compare attacks; TPR at low FPR says how many
members an attacker identifies while almost never accusing a non-member (with few
non-members, 0.1 % FPR means zero false positives).</li>
</ul>"""


def write_model_report(result, out, *, title="sklearn-mace model privacy audit"):
    """Write the model audit to the folder ``out`` (created if needed).

    Parameters
    ----------
    result : ModelAuditResult
    out : str or Path
    title : str, default="sklearn-mace model privacy audit"

    Returns
    -------
    paths : dict of str -> Path
        ``report``, ``summary``, ``records`` and one entry per figure.

    Notes
    -----
    Written as :func:`~sklearn_mace.report.write_report` writes: the folder is checked first,
    the files go to a staging folder and move into ``out`` together at the end, and the
    report's own files from an earlier run are replaced (:mod:`~sklearn_mace.report._output`).
    """
    check_output_dir(out, option="the output folder")
    with staged_output(out) as stage:
        paths = _write_model_report_files(result, stage, title)
    return relocate(paths, stage, out)


def _write_model_report_files(result, out, title):
    """The body of :func:`write_model_report`, writing into the (staging) folder ``out``."""
    summary, records = result.summary, result.records
    paths, figure_html = write_tables_and_figures(out, summary, records, draw_model_figures(result))
    shown = summary.rename(
        columns={
            "auc": "AUC",
            "tpr_at_1pct_fpr": "TPR @ 1% FPR",
            "tpr_at_0.1pct_fpr": "TPR @ 0.1% FPR",
            "epsilon_lower_bound": "ε ≥ (certified)",
            "advantage_estimate": "advantage (U_N)",
            "advantage_lower_bound": "advantage ≥ (certified)",
            "p_value": "p-value",
        }
    )
    top_tables = []
    for model in result.models:
        mine = records[(records["model"] == model.name) & (records["member"] == 1)]
        top = mine.head(10)[["row", result.label, "loss", "true_label_confidence", "risk"]]
        top.insert(0, "rank", np.arange(1, len(top) + 1))
        top_tables.append(
            f"<h3>Model '{html.escape(model.name)}': the ten most exposed "
            f"members</h3>" + _table(top)
        )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in result.notes)
    subtitle = (
        f"label column {html.escape(result.label)} · {len(result.feature_names)} "
        f"input columns · prior p = {fmt(result.prior)} · {result.confidence:.0%} bounds"
    )
    body = f"""<div class="cards">{"".join(_card(result, r) for r in result.models)}</div>
<h2>Summary</h2>
{_table(shown, text_columns=("model", "analysis", "detail"))}
<p class="muted">Written to summary.csv.</p>
<h2>Figures</h2>
{"".join(figure_html)}
<h2>Most exposed records</h2>
{"".join(top_tables)}
<p class="muted">row: the member's row in the members file (0-based, header excluded). Every
target record with its loss, risk and every attack's score, ranked by risk: records.csv.</p>
{_how_to_read(result)}
{f"<h2>Notes</h2><ul>{notes}</ul>" if notes else ""}
"""
    document = html_page(title, result.n_rows, subtitle, body)
    paths["report"].write_text(document, encoding="utf-8")
    return paths


def print_model_summary(result, paths, file=None):
    """The short table ``sklearn-mace audit-model`` prints."""
    file = sys.stdout if file is None else file
    header = ("model", "analysis", "AUC", "TPR@1%FPR", "TPR@0.1%FPR", "ε ≥", "adv. U_N", "adv. ≥")
    rows = [
        (
            r["model"],
            r["analysis"],
            fmt(r["auc"]),
            fmt(r["tpr_at_1pct_fpr"]),
            fmt(r["tpr_at_0.1pct_fpr"]),
            fmt(r["epsilon_lower_bound"], 2),
            fmt(r["advantage_estimate"]),
            fmt(r["advantage_lower_bound"]),
        )
        for _, r in result.summary.iterrows()
    ]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    n_mem = int(result.membership.sum())
    print(
        f"sklearn-mace audit-model: {n_mem} members, {len(result.membership) - n_mem} "
        f"non-members, prior {result.prior:.3g}, {result.confidence:.0%} certified bounds",
        file=file,
    )
    for model in result.models:
        print(
            f"  '{model.name}' ({model.format}): train accuracy {model.train_accuracy:.3f}, "
            f"test {model.test_accuracy:.3f}; ε ≥ {fmt(model.epsilon_all_attacks, 2)} "
            f"for all {len(model.scores)} attacks at once",
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
    for note in result.notes:
        print(f"note: {note}", file=file)
    print(f"report: {paths['report']}  (summary.csv, records.csv, figures/ beside it)", file=file)
