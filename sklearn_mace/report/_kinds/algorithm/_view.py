"""What the algorithm report adds to the common one: the claim per target, the runs' ROC.

The common card (headline ε, advantage, failures) stays; the presentation says which DP claim
the numbers test — the claimed ε, the neighbour relation of the runs, the targets and the
correction over them — and drops what is about records of a table (exposed records, held-out
risks): the targets here are the audited records, named in the card's table, and the
engine's "records" are shadow runs.
"""

import numpy as np
import pandas as pd

from ....metrics import MembershipRocDisplay, detectable_epsilon
from ..._figures import Figures, figure, figure_file, legend_below, note
from ..._format import fmt, table
from ..._html import Cards, Claims, Comparisons, Estimates, Failed, HowToRead, Notes
from ..._present import Presentation
from ..._sample_size import SampleSize

__all__ = ["AlgorithmCards", "power_text", "presentation"]

POWER = 0.8

RELATION_WORDS = {
    "add_remove": (
        "add/remove-one",
        "the runs' training sets hold the target or not, all else alike",
    ),
    "substitute": (
        "substitute-one",
        "the runs' training sets hold the target or another population record in its place",
    ),
}


def _relation(result):
    return RELATION_WORDS[result.inputs.relation]


def _target_table(result, subject):
    """Per target: claimed ε beside the certified lower bound, and the verdict (the
    engine's ``contradicted``: the certified point below the claimed curve)."""
    true = subject.facts.get("true_epsilon", np.nan)
    rows = []
    for analysis in subject.analyses:
        row = {"target": analysis.name, "claimed ε": result.claimed_epsilon}
        if analysis.ok:
            eps = analysis.claim.epsilon_lower_bound
            row["certified ε ≥"] = eps
            row["claim"] = "contradicted" if analysis.contradicted else "not contradicted"
            row["AUC"] = analysis.metrics.get("auc", np.nan)
        else:
            row.update({"certified ε ≥": np.nan, "claim": "failed", "AUC": np.nan})
        if np.isfinite(true):
            row["true ε (known)"] = true
        rows.append(row)
    return table(pd.DataFrame(rows), text_columns=("target", "claim"))


THRESHOLDS = (  # every rule here is fixed on the attack's fitting runs
    '"explicit": the attack\'s threshold was chosen on the runs it was trained on '
    "and is certified on the other runs only, which it never saw."
)


class AlgorithmCards(Cards):
    """The card of a recipe: the claim it tests, its runs, the targets' table and the runs'
    power; no exposed record (the targets are named in its table)."""

    def facts(self, report, subject):
        """The runs behind the card."""
        f = subject.facts
        if "train_size" not in f:
            return ""
        return (
            f" · {f['n_runs']} runs per side, training sets of {f['train_size']} rows; "
            f"{f['n_certify_runs']} runs per side certify"
        )

    def relation(self, report, subject):
        """Which guarantee the runs test: the relation of the runs, nothing converted."""
        name, how = _relation(report.result)
        eps = subject.epsilon_lower_bound
        refutes = (
            f"refutes {name} (ε, δ)-DP for every ε below {fmt(eps, 2)}"
            if eps > 0
            else "refutes no DP guarantee"
        )
        return f"Neighbour relation: {name} ({how}); the bound {refutes}."

    def details(self, report, subject):
        """Claimed ε beside the certified bound, per target, and the correction."""
        result, k = report.result, len(subject.analyses)
        return (
            f"{_target_table(result, subject)}"
            f'<div class="muted">Multiplicity: the {k} targets\' bounds of this recipe hold '
            f"together at {result.confidence:.0%} (each at {subject.claim_confidence:.2%}, "
            "Bonferroni over the targets); each recipe is a separate claim. A claim is "
            "contradicted only when its certified ε exceeds the claimed ε.</div>"
        )

    def exposure(self, report, subject):
        """No record is 'exposed' here: the targets are named in the card's table."""
        return ""

    def meaning(self, report, subject, kind):
        """What the verdict says about the recipe's claim."""
        result = report.result
        name, _ = _relation(result)
        eps, delta = result.claimed_epsilon, result.delta
        if kind == "above":
            return (
                f"the recipe is not ({eps:g}, {delta:g})-DP for {name} neighbours, with the "
                "stated confidence: its claim is false (or its implementation is)"
            )
        return (
            f"the runs do not refute ({eps:g}, {delta:g})-DP; this is not a proof of "
            f"privacy: {power_text(result, subject)}; more runs, a worse-case target or a "
            "stronger attack may certify more"
        )

    def header(self, report):
        """The run counts, the relation and the correction."""
        result = report.result
        name, _ = _relation(result)
        k = len(result.inputs.target_names)
        return (
            f"{report.presentation.command}: {len(result.subjects)} recipe(s), {k} target(s), "
            f"{result.inputs.n_runs} runs per side, {name} neighbours, δ = "
            f"{result.delta:g}; each recipe's {k} bounds hold together at "
            f"{result.confidence:.0%} (Bonferroni over the targets)"
        )

    def verdict_line(self, report, subject):
        """The verdict with the largest certified ε and its target, and the runs' power."""
        result, source = report.result, subject.epsilon_source
        where = "" if source is None else f" ({source.name})"
        power = "" if result.verdict(subject) == "leak" else f"; {power_text(result, subject)}"
        return (
            f"{subject.name}: [{result.headline(subject)}] — claimed ε = "
            f"{result.claimed_epsilon:g}, certified ε at least {subject.epsilon_lower_bound:.2f}"
            f"{where}{power}"
        )


def algorithm_reading(report):
    """The shadow-run audit in a few lines."""
    result = report.result
    name, how = _relation(result)
    return [
        "<li><b>Shadow runs</b>: each recipe is trained "
        f"{result.inputs.n_runs} times on datasets without any target and as many "
        f"times with each target ({name}: {how}); each output is featurized about the "
        "target (a DP histogram's release: its count of the target's cell).</li>",
        "<li><b>Certified ε at least</b>: per target an attack is trained on part of the "
        "runs of each side and its threshold chosen there (threshold "
        "<code>explicit</code> in the claims table: fixed before the other runs are "
        "looked at); exact Clopper–Pearson upper bounds on that rule's FPR and FNR on "
        "the other runs give the smallest ε an (ε, δ)-DP recipe allows, "
        f"FPR + e^ε·FNR ≥ 1 − δ (δ = {result.delta:g}). The runs are independent "
        "trainings, as the bounds assume (Jagielski et al. 2020).</li>",
        f"<li><b>Verdict</b>: a claimed ε is contradicted only when a certified bound "
        f"exceeds it; all bounds of a recipe hold together at {result.confidence:.0%}. "
        "With n certifying runs per side no audit certifies much more than log(n/3): "
        "a claim above that cannot be contradicted by this many runs.</li>",
        "<li><b>AUC</b> of the attack on the certifying runs describes how well the "
        "runs separate (not certified).</li>",
    ]


def runs_figures(report):
    """Per recipe: every target's ROC on the certifying runs."""
    result = report.result
    return {figure_file("roc", result, s): _roc_figure(result, s) for s in result.subjects}


def power_text(result, subject):
    """The smallest ε above the claim that this many certifying runs contradict with 80 %
    power (an attack erring like randomized response, the best possible: a minimum)."""
    n = subject.facts.get("n_certify_runs")
    if not n:
        return "the runs' power is unknown (the shadow runs failed)"
    epsilon = detectable_epsilon(
        int(n),
        int(n),
        at_least=result.claimed_epsilon,
        delta=result.delta,
        confidence=subject.claim_confidence,
        power=POWER,
    )
    if not np.isfinite(epsilon):
        return (
            f"{n} certifying runs per side cannot contradict the claim with "
            f"{100 * POWER:.0f} % power at any ε"
        )
    return (
        f"with {n} certifying runs per side, a recipe is contradicted with "
        f"{100 * POWER:.0f} % power only if its true ε is at least {epsilon:.2f} (an attack "
        "erring like randomized response, the best possible, at its claim's level)"
    )


def _roc_figure(result, subject):
    fig, ax = figure(height=5.2)
    m = result.membership
    for analysis in subject.claims:
        keep, score = analysis.scores.certify_mask, analysis.scores.score
        MembershipRocDisplay.from_predictions(m[keep], score[keep], name=analysis.name, ax=ax)
    if subject.claims:
        legend_below(ax)
    else:
        note(ax, "every target failed (see Failed analyses)")
    ax.set_title(f"recipe '{subject.name}': attacks on the certifying runs")
    caption = (
        f"ROC curve of each target's attack on the runs of recipe '{subject.name}' that "
        "certify its bound (the attack never saw them); false-positive rate on a log scale."
    )
    return fig, caption


def presentation(result):
    """The algorithm report: the recipe's card, the common claims, estimates, comparisons
    and plan, the runs' ROC curves, how to read a shadow-run audit, the notes; nothing about
    records of a table (exposed records, held-out risks): its targets are the audited
    records, named on the card, and the engine's "records" are shadow runs."""
    name, _ = _relation(result)
    return Presentation(
        noun="recipe",
        title="sklearn-mace algorithm privacy audit",
        command="sklearn-mace audit-algorithm",
        target_nouns=("runs with the target", "runs without it"),
        record_targets=False,
        relation=name,
        subtitle=(
            f" · {name} neighbours · {result.inputs.n_runs} runs per side · "
            f"{len(result.inputs.target_names)} targets"
        ),
        sections=(
            AlgorithmCards(),
            Failed(),
            Claims(THRESHOLDS),
            Estimates(),
            Comparisons(),
            SampleSize(),
            Figures((runs_figures,)),
            HowToRead((algorithm_reading,)),
            Notes(),
        ),
    )
