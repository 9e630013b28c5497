"""What the synthetic-data report adds to the common one: copies, columns, disclosure, size."""

import html
from pathlib import Path

import numpy as np

from ....metrics import AdvantageDisplay
from ..._figures import Figures, common_figures, figure, legend_below, note
from ..._format import fmt, table
from ..._html import (
    Cards,
    Claims,
    Comparisons,
    Estimates,
    Exposed,
    Failed,
    HowToRead,
    Notes,
    common_reading,
)
from ..._output import write_csv
from ..._present import Presentation
from ..._sample_size import SampleSize
from ..._section import Section
from ._inputs import EXACT_NAME, MAX_DISCLOSURE_RECORDS, NEAR_COPY_DISTANCE

__all__ = ["Columns", "Disclosure", "ReleaseCards", "presentation"]


def _count(k, n):
    return "—" if k is None or not np.isfinite(k) else f"{int(k)} of {int(n)}"


def _grouped_columns(report):
    """The column report with columns of the same treatment on one row."""
    grouped = report.groupby("treatment", sort=False).agg(
        columns=("column", lambda c: ", ".join(map(str, c))), features=("features", "sum")
    )
    return grouped.reset_index()[["columns", "treatment", "features"]]


def _size_points(subject):
    """``(rows, U_N, low, high, certified advantage)`` per published size, smallest first."""
    points = []
    for result in subject.claims:
        if result.figure or result.name == subject.ranking:  # the whole release
            e = result.scores.estimates
            rows = e.get("synthetic_rows", subject.facts.get("synthetic_rows"))
            points.append(
                (
                    rows,
                    e["advantage_estimate"],
                    e["advantage_estimate_low"],
                    e["advantage_estimate_high"],
                    result.claim.advantage_lower_bound,
                )
            )
    return np.array(sorted(points), dtype=float).reshape(-1, 5)


def size_figure(result):
    """MACE's advantage when only part of each release is published: U_N and certified."""
    fig, ax = figure(height=5.2)
    curves = [(s, _size_points(s)) for s in result.subjects]
    curves = [(s, c) for s, c in curves if len(c)]
    for subject, curve in curves:
        last = subject is curves[-1][0]
        display = AdvantageDisplay.from_predictions(
            curve[:, 0],
            curve[:, 1],
            lower=curve[:, 2],
            upper=curve[:, 3],
            param_name="number of released synthetic rows",
            epsilon=result.claimed_epsilon if last else None,
            prior=result.prior,
            name=f"'{subject.name}': U_N (estimate)",
            ax=ax,
            log_x=True,
            show_baseline=last,
            linestyle=":",
        )
        color = display.line_.get_color()
        label = f"'{subject.name}': certified lower bound"
        ax.plot(curve[:, 0], curve[:, 4], marker="s", color=color, label=label)
    if curves:
        legend_below(ax, ncols=2)
    else:
        note(ax, "MACE failed on every release (see Failed analyses)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("MACE optimal advantage (nearest-synthetic distance) vs release size")
    return fig


class ReleaseCards(Cards):
    """The common card, with the release's rows after its name and its copy counts."""

    def facts(self, report, subject):
        """The release's number of rows."""
        return f" · {subject.facts.get('synthetic_rows', '?')} synthetic rows"

    def details(self, report, subject):
        """How many members and non-members the release copies, verbatim and nearly."""
        c = subject.facts
        n1, n0 = c["member_targets"], c["nonmember_targets"]
        return f"""<div>{_count(c["member_exact_copies"], n1)} members appear verbatim in the
    release; {_count(c["nonmember_exact_copies"], n0)} non-members</div>
  <div class="muted">near copies (nearest synthetic row within {NEAR_COPY_DISTANCE:g} in
    the encoded space, exact ones included): {_count(c["member_near_copies"], n1)} members,
    {_count(c["nonmember_near_copies"], n0)} non-members</div>"""


class Disclosure(Section):
    """Attribute inference, linkability and singling out, when they were run: a section of
    the page and disclosure.csv."""

    def html(self, report):
        """The risks' table; nothing when the disclosure analyses did not run."""
        disclosure = report.result.tables.get("disclosure")
        return "" if disclosure is None else _disclosure_section(report.result, disclosure)

    def files(self, report, out):
        """disclosure.csv, when the disclosure analyses ran."""
        disclosure = report.result.tables.get("disclosure")
        if disclosure is None:
            return {}
        path = Path(out) / "disclosure.csv"
        write_csv(disclosure, path)  # text cells escaped (formula injection)
        return {"disclosure": path}


class Columns(Section):
    """How each input column was encoded, or why it was dropped; printed: the dropped ones."""

    def html(self, report):
        """The columns grouped by treatment."""
        grouped = _grouped_columns(report.result.inputs.column_report)
        return f"""<h2>Columns</h2>
{table(grouped, text_columns=("columns", "treatment"))}
<p class="muted">Numeric columns are centred on the median and divided by the interquartile
range / 1.349; text columns with few values are one-hot encoded (scaled so that a different
category counts like one standard deviation), rare categories and those absent from a table
merged into &lt;other&gt;; identifier-like, date/time, constant and exactly dependent columns
are dropped (the treatment says why).</p>"""

    def lines(self, report):
        """The dropped columns, one line each."""
        column_report = report.result.inputs.column_report
        dropped = column_report[column_report["features"] == 0]
        return [f"column {row.column!r} {row.treatment}" for row in dropped.itertuples(index=False)]


def release_reading(report):
    """Copies, MACE's query and the release-size figure."""
    result = report.result
    return [
        "<li><b>MACE</b> queries the nearest-synthetic distance (MACE Eq. 2); its Bayes "
        "rule is the cross-fitted plug-in classifier (each record scored by densities "
        "fitted without it).</li>",
        "<li><b>MACE best-ε threshold</b>: the same held-out scores as MACE's Bayes rule, "
        "with the threshold that gives the largest ε on a random half of the targets, "
        'certified on the other half. "Best" is on the half that chooses: certified on half '
        "as many targets, it often certifies less than the Bayes rule, whose rule is fixed "
        "in advance and certified on every target; it can win when a low-FPR operating "
        "point refutes a larger ε.</li>",
        "<li><b>Copies</b>: a record appears <b>verbatim</b> in the release when some "
        "synthetic row equals it on every audited column (numbers compared as numbers); a "
        f"<b>near copy</b> has its nearest synthetic row within {NEAR_COPY_DISTANCE:g} in "
        "the encoded space. Members and non-members are counted apart: copies of "
        f'non-members happen by chance. "{html.escape(EXACT_NAME)}" calls a record a '
        "member iff it is verbatim in the release, a rule fixed in advance, so its claim "
        "uses every target with no split.</li>",
        "<li><b>The release-size figure</b> shows MACE's Bayes rule when only 10 %, 25 % "
        "or 50 % of the release is published; its certified points are claims of the card, "
        "counted in its correction. Its dashed line is the largest advantage at the prior "
        f"that ε = {result.claimed_epsilon:g} allows: a red card's ε can come from a "
        "low-FPR operating point while the advantage stays below that line.</li>",
    ]


def size_figures(report):
    """MACE's advantage against the published size of each release."""
    result = report.result
    level = max((s.claim_confidence for s in result.subjects), default=result.confidence)
    caption = (
        "Solid lines: the certified lower bound on MACE's optimal membership advantage "
        f"(each point a claim of its card, at {level:.2%}) when only a random part of "
        "each release is published; dotted lines and bands: the plug-in estimate U_N with "
        "its McDiarmid interval (sampling spread only, not the estimator's bias). The "
        "dashed red line is the largest advantage an ε = "
        f"{result.claimed_epsilon:g} (substitute-one) DP generator allows at the prior."
    )
    return {"advantage_vs_synthetic_size.png": (size_figure(result), caption)}


def _risk_text(risk, low, high):
    if not np.isfinite(risk):
        return "undefined (every control guess right)"
    return f"{fmt(risk)} [{fmt(low)}, {fmt(high)}]"


def _family_text(result, disclosure):
    """The correction of the disclosure rows, in words, from the table's own columns."""
    sizes = sorted({int(k) for k in disclosure["family_size"]})
    levels = sorted({float(c) for c in disclosure["confidence"]})
    if sizes == [1]:
        return f"at {result.confidence:.0%} per row (not corrected across rows)"
    k = sizes[0] if len(sizes) == 1 else f"{sizes[0]}–{sizes[-1]}"
    level = f"{levels[0]:.3%}" if len(levels) == 1 else f"{levels[0]:.3%}–{levels[-1]:.3%}"
    return (
        f"each at {level}: corrected over the K = {k} rows of a release (Bonferroni, "
        f"the rule of the card's claims), so that all rows of a release hold together at "
        f"{result.confidence:.0%}"
    )


def _disclosure_section(result, disclosure):
    """Attribute inference, linkability and singling out (what anonymeter reports)."""
    bounds = disclosure[["risk", "risk_low", "risk_high"]].to_numpy(dtype=float)
    shown = disclosure.assign(
        risk=[_risk_text(*row) for row in bounds],
        flagged=np.where(disclosure["flagged"].astype(bool), "flagged", ""),
    )[
        [
            "subject",
            "analysis",
            "target",
            "attack_rate",
            "control_rate",
            "baseline_rate",
            "risk",
            "flagged",
        ]
    ]
    shown = shown.rename(
        columns={
            "subject": "release",
            "attack_rate": "attack success",
            "control_rate": "control success",
            "baseline_rate": "random guess",
            "risk": "risk [interval]",
        }
    )
    n_flagged = int(disclosure["flagged"].astype(bool).sum())
    text_columns = ("release", "analysis", "target", "risk [interval]", "flagged")
    return f"""<h2>Beyond membership: attribute inference, linkability and singling out</h2>
<p>{n_flagged} of {len(disclosure)} rows flagged (the corrected interval lies above 0: the
release discloses more about its members than about the controls).</p>
{table(shown, text_columns=text_columns)}
<p class="muted">Attribute inference: an attacker who knows a member's other columns guesses
the target column from its nearest release row (numbers within 5 %; the pooled row attacks
one random column per record); linkability: the two halves of a member's columns are linked
when their sets of nearest release rows (ties kept) share a row; singling out: predicates
built from the release that isolate one of its rows, tried on members and controls. All are
compared with the same attack on control records (population rows the generator never saw;
at most {MAX_DISCLOSURE_RECORDS} of each, drawn at random):
risk = (attack − control) / (1 − control), as in anonymeter (Giomi et al. 2023), with an
exact interval {_family_text(result, disclosure)}. A row is flagged when its corrected lower
bound is above 0. These are estimates, not part of the certified claims (their family is
corrected on its own). Written to disclosure.csv, with each row's level (confidence) and
family size (family_size).</p>"""


def presentation(result):
    """The release report: the common sections with the release's card, its disclosure
    risks, release-size figure and columns."""
    return Presentation(
        noun="release",
        command="sklearn-mace audit",
        exposed_columns=("nearest_synthetic_distance", "verbatim_in_release"),
        subtitle=f" · {len(result.inputs.feature_names)} encoded features",
        sections=(
            ReleaseCards(),
            Failed(),
            Claims(),
            Estimates(),
            Comparisons(),
            SampleSize(),
            Disclosure(),
            Figures((common_figures, size_figures)),
            Exposed(),
            HowToRead((common_reading, release_reading)),
            Columns(),
            Notes(),
        ),
    )
