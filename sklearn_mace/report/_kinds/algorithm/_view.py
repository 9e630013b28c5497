"""What the algorithm report adds to the common one: the claim per target, the trade-off
figure, the runs' ROC.

The common card (headline ε, advantage, failures) stays; the presentation says which DP claim
the numbers test — the claim, the design and the neighbour relation of the runs, the empirical
μ, the targets and the correction over them — and drops what is about records of a table
(exposed records, held-out risks): the targets here are the audited records, named in the
card's table, and the engine's "records" are shadow runs. The trade-off figure draws each
target's certified point ``(fpr_upper, fnr_upper)`` against the claimed curve (f-DP, Dong,
Roth & Su 2022): a point below it is what "contradicted" means.
"""

import html

import numpy as np
import pandas as pd
from scipy.stats import norm

from ....metrics import MembershipRocDisplay, detectable_epsilon
from ....metrics._fdp import gaussian_tradeoff, mu_from_error_bounds
from ..._figures import Figures, figure, figure_file, legend_below, note
from ..._format import fmt, table
from ..._html import Cards, Claims, Comparisons, Estimates, Failed, HowToRead, Notes
from ..._present import Presentation
from ..._sample_size import SampleSize

__all__ = [
    "AlgorithmCards",
    "certificate_line",
    "empirical_mu",
    "implied_mu",
    "power_text",
    "presentation",
    "rank_detectable_epsilon",
    "tradeoff_figures",
    "tradeoff_points",
]

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


def tradeoff_points(result, subject):
    """Each target's certified point in the trade-off plane, as the figure draws it.

    Parameters
    ----------
    result : AuditResult
        The algorithm audit; ``result.inputs.claim`` is the claim on the audited relation.
    subject : SubjectResult
        One recipe.

    Returns
    -------
    points : DataFrame
        One row per target that did not fail: ``target``, ``fpr_upper`` and ``fnr_upper``
        (the exact upper bounds of its attack's error rates on the certifying runs),
        ``claimed_fnr`` (the claimed curve at ``fpr_upper``), ``mu_lower_bound`` (the
        largest μ whose Gaussian curve the point lies below) and ``contradicted`` (the
        engine's verdict: the point below the claimed curve).
    """
    claim = result.inputs.claim
    rows = []
    for analysis in subject.claims:
        fpr, fnr = float(analysis.claim.fpr_upper), float(analysis.claim.fnr_upper)
        rows.append(
            {
                "target": analysis.name,
                "fpr_upper": fpr,
                "fnr_upper": fnr,
                "claimed_fnr": float(claim.tradeoff(fpr)),
                "mu_lower_bound": float(mu_from_error_bounds(fpr, fnr)),
                "contradicted": bool(analysis.contradicted),
            }
        )
    columns = ["target", "fpr_upper", "fnr_upper", "claimed_fnr", "mu_lower_bound"]
    return pd.DataFrame(rows, columns=[*columns, "contradicted"])


def empirical_mu(result, subject):
    """``(μ, target)``: the recipe's largest certified μ and the target it comes from
    (``(nan, None)`` when every target failed).

    The recipe is certified *not* μ-GDP for any μ below it: its targets' points hold
    together at the audit's confidence (Bonferroni), so their largest μ does too. The same
    numbers as ``summary.csv``'s ``mu_lower_bound`` (``metrics._fdp.mu_from_error_bounds``;
    with ``certificate="rank_test"`` each target's is the larger of its point's and its μ
    rank test's, each at half the target's level, so their largest holds at the audit's
    confidence again).
    """
    mus = _target_mus(result, subject)
    if mus.empty:
        return np.nan, None
    best = mus.loc[mus["mu"].idxmax()]
    return float(best["mu"]), str(best["target"])


def _target_mus(result, subject):
    """Per target that did not fail: ``target``, ``mu`` (its certified μ), ``point_mu`` (its
    point's alone)."""
    points = tradeoff_points(result, subject)
    mu = points["mu_lower_bound"].to_numpy(dtype=float)
    if result.inputs.certificate == "rank_test" and len(points):
        mu = np.maximum(mu, [a.scores.rank_mu for a in subject.claims])
    return pd.DataFrame(
        {"target": points["target"], "mu": mu, "point_mu": points["mu_lower_bound"]}
    )


def implied_mu(claim):
    """The μ of μ-GDP that ``claim`` implies (inf when it implies none).

    A Gaussian claim's own μ; a claim with a pure pair ε (δ = 0) implies μ-GDP with
    ``μ = 2·Φ⁻¹(e^ε / (1 + e^ε))`` for its smallest such ε: every point of the ε curve has
    ``Φ⁻¹(1 − FPR) + Φ⁻¹(1 − FNR)`` at most that, reached at its symmetric point
    ``FPR = FNR = 1 / (1 + e^ε)`` (randomized response), so the curve lies on or above that
    Gaussian curve — tight for a pure claim. A claim whose pairs all have δ > 0 implies no
    μ: its curve reaches FNR = 0 at FPR = 1 − δ, where every Gaussian curve is positive.

    Parameters
    ----------
    claim : PrivacyClaim
        The claim on the audited relation.

    Returns
    -------
    mu : float
        A recipe that keeps the claim is μ-GDP for this μ.
    """
    if claim.kind == "gaussian":
        return float(claim.mu)
    pure = [e for e, d in zip(claim.epsilons, claim.deltas, strict=True) if d == 0.0]
    if not pure:
        return float("inf")
    return float(2.0 * norm.ppf(1.0 / (1.0 + np.exp(-min(pure)))))


def _claim_mu_words(claim):
    """HTML: the claim's μ beside the empirical one, and how to compare them."""
    mu, words = implied_mu(claim), html.escape(claim.describe())
    if claim.kind == "gaussian":
        converted = "" if claim.stated is None else f"; {words}"
        return f"claimed μ = {mu:.3g}{converted}"
    if not np.isfinite(mu):
        return (
            f"the claim, {words}, implies no μ-GDP (δ > 0): μ compares recipes, and with a "
            "Gaussian mechanism of noise σ = sensitivity/μ"
        )
    return (
        f"the claim, {words}, implies μ-GDP for μ = {mu:.2f}: an empirical μ above "
        f"{mu:.2f} contradicts it, and a point below its curve contradicts it at a smaller "
        "μ too"
    )


def mu_line(result, subject):
    """HTML: the recipe's empirical μ (certified: not μ-GDP for any μ below it) beside the
    claim's μ (a Gaussian claim's, or the μ an ε claim implies)."""
    mu, source = empirical_mu(result, subject)
    if source is None:
        return '<div class="muted">μ: no target produced a certified point.</div>'
    words = (
        f"certified: not μ-GDP for any μ below {fmt(mu, 2)}"
        if mu > 0
        else "no Gaussian curve is refuted"
    )
    return (
        f"<div>empirical μ <b>at least {fmt(mu, 2)}</b> ({words}; from "
        f'{html.escape(source)}) <span class="muted">— '
        f"{_claim_mu_words(result.inputs.claim)}</span></div>"
    )


def design_line(subject):
    """HTML: the multi-run design in words (the one-run design's card is
    ``_one_run_view.py``'s)."""
    f = subject.facts
    if "n_certify_runs" not in f:
        return ""
    n, m = int(f["n_runs"]), int(f["n_certify_runs"])
    return (
        f'<div class="muted">Design: multi-run — {n} trainings without any target and {n} '
        f"with each target ({RELATION_WORDS[f['relation']][0]}), training sets of "
        f"{f['train_size']} rows; per target an attack learns on {n - m} per side and "
        f"{m} per side certify.</div>"
    )


def _target_table(result, subject):
    """Per target: claimed ε beside the certified lower bounds (ε and μ), and the verdict
    (the engine's ``contradicted``: the certified point below the claimed curve)."""
    true = subject.facts.get("true_epsilon", np.nan)
    rows = []
    for analysis in subject.analyses:
        row = {"target": analysis.name, "claimed ε": result.claimed_epsilon}
        if analysis.ok:
            c = analysis.claim
            row["certified ε ≥"] = c.epsilon_lower_bound
            row["certified μ ≥"] = float(mu_from_error_bounds(c.fpr_upper, c.fnr_upper))
            if result.inputs.certificate == "rank_test":  # the point's or the μ test's
                row["certified μ ≥"] = max(row["certified μ ≥"], analysis.scores.rank_mu)
            row["claim"] = "contradicted" if analysis.contradicted else "not contradicted"
            row["AUC"] = analysis.metrics.get("auc", np.nan)
        else:
            failed = {"certified ε ≥": np.nan, "certified μ ≥": np.nan, "claim": "failed"}
            row.update({**failed, "AUC": np.nan})
        if np.isfinite(true):
            row["true ε (known)"] = true
        if result.inputs.certificate == "rank_test":
            row.update(_rank_cells(analysis))
        rows.append(row)
    return table(pd.DataFrame(rows), text_columns=("target", "claim", "rank test's tails"))


def tails_words(pair):
    """The rank pair ``(k_high, k_low)`` whose test gave a target's ε, in words."""
    k_high, k_low = pair
    if k_high is None and k_low is None:
        return "none certified"
    if k_low is None:
        return f"upper tail only (k = {k_high})"
    if k_high is None:
        return f"lower tail only (k = {k_low})"
    return f"both tails (k = {k_high}, {k_low})"


def _rank_cells(analysis):
    """A target's rank test on the card (``certificate="rank_test"``): its ε, its tails."""
    if not analysis.ok:
        return {"rank-test ε ≥": np.nan, "rank test's tails": ""}
    scores = analysis.scores
    tails = tails_words(scores.rank_pair)
    return {"rank-test ε ≥": scores.rank_epsilon, "rank test's tails": tails}


def _joint_rank_coverage(result):
    """Under ``certificate="rank_test"`` the ε and the μ bounds each hold at the card's
    level, but they come from three events at α/2 (the point, the ε rank test, the μ rank
    test): together they hold at 1 − 3α/2 only, and the card says so."""
    if getattr(result.inputs, "certificate", "threshold") != "rank_test":
        return ""
    joint = 1.0 - 1.5 * (1.0 - result.confidence)
    return (
        f" Under the rank certificate the ε bounds hold together at {result.confidence:.0%} "
        f"and so do the μ bounds; the ε and μ bounds all together hold at {joint:.1%} "
        "(the point and two rank tests, each at α/2)."
    )


def certificate_line(result, subject):
    """HTML: which certificate gave the ε (``certificate="rank_test"`` only; the threshold's
    card is as it was)."""
    if result.inputs.certificate != "rank_test":
        return ""
    half = 1.0 - (1.0 - subject.claim_confidence) / 2
    return (
        '<div class="muted">Certificate: ε from a rank test of both tails (no selection '
        "split), the point at α/2 — per target the attack's certified point (the "
        f"trade-off figure and the curve test read it) holds at {half:.2%} and a rank test of "
        f"the certifying runs at {half:.2%} (members above the non-members' (k+1)-th highest "
        "score plus non-members below the members' (k+1)-th lowest, at pre-registered ranks, "
        "calibrated on the claim's worst case); the certified ε is the larger of the two, at "
        f"{subject.claim_confidence:.2%}, and so is μ (the point's, or a rank test calibrated "
        f"on the Gaussian pair at {half:.2%}).</div>"
    )


THRESHOLDS = (  # every rule here is fixed on the attack's fitting runs
    '"explicit": the attack\'s threshold was chosen on the runs it was trained on '
    "and is certified on the other runs only, which it never saw."
)


class AlgorithmCards(Cards):
    """The card of a recipe: the claim it tests, its runs, the targets' table and the runs'
    power; no exposed record (the targets are named in its table)."""

    def facts(self, report, subject):
        """The design behind the card, in words: multi-run, its trainings per side, how
        many certify."""
        f = subject.facts
        if "train_size" not in f:
            return ""
        return (
            f" · multi-run: {f['n_runs']} trainings per side, {f['n_certify_runs']} certify "
            f"(training sets of {f['train_size']} rows)"
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
        """The empirical μ beside the claim's, the design, then claimed ε beside the
        certified bounds per target, and the correction."""
        result, k = report.result, len(subject.analyses)
        return (
            f"{mu_line(result, subject)}{design_line(subject)}"
            f"{certificate_line(result, subject)}{_target_table(result, subject)}"
            f'<div class="muted">Multiplicity: the {k} targets\' bounds of this recipe hold '
            f"together at {result.confidence:.0%} (each at {subject.claim_confidence:.2%}, "
            "Bonferroni over the targets); each recipe is a separate claim. A claim is "
            "contradicted only when a target's certified point lies below the claimed "
            "trade-off curve (see the trade-off figure); for an ε or (ε, δ) claim, when its "
            f"certified ε exceeds the claimed ε.{_joint_rank_coverage(result)}</div>"
        )

    def exposure(self, report, subject):
        """No record is 'exposed' here: the targets are named in the card's table."""
        return ""

    def meaning(self, report, subject, kind):
        """What the verdict says about the recipe's claim."""
        result = report.result
        name, _ = _relation(result)
        claimed = _claim_words(result)
        if kind == "above":
            return (
                f"the recipe is not {claimed} for {name} neighbours, with the "
                "stated confidence: its claim is false (or its implementation is)"
            )
        return (
            f"the runs do not refute {claimed}; this is not a proof of "
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
        mu, mu_source = empirical_mu(result, subject)
        mu_text = "" if mu_source is None else f", μ at least {mu:.2f} ({mu_source})"
        power = "" if result.verdict(subject) == "leak" else f"; {power_text(result, subject)}"
        return (
            f"{subject.name}: [{result.headline(subject)}] — claimed ε = "
            f"{result.claimed_epsilon:g}, certified ε at least {subject.epsilon_lower_bound:.2f}"
            f"{where}{mu_text}{power}"
        )


def _claim_words(result):
    """The audited claim in a few words: (ε, δ)-DP, μ-GDP, or its ε(δ) curve."""
    claim = result.inputs.claim
    if claim.kind == "gaussian":
        return f"{claim.mu:.3g}-GDP"
    if claim.kind == "curve":
        return "its claimed (ε, δ) curve"
    return f"({result.claimed_epsilon:g}, {result.delta:g})-DP"


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
        *_rank_reading(result),
        "<li><b>Trade-off figure</b>: a DP claim is a curve f (f-DP): every test of a "
        "recipe that keeps it has FNR at least f(FPR). Each target's certified point "
        "(FPR ≤, FNR ≤) is drawn against the claimed curve; a point below it is a test "
        "the claim forbids: it contradicts the claim.</li>",
        "<li><b>Empirical μ</b>: the largest μ whose Gaussian-DP curve a certified point "
        "lies below: the recipe is not μ-GDP for any smaller μ (μ = sensitivity/σ of the "
        "Gaussian mechanism that leaks as much; the dashed curve of the figure).</li>",
        f"<li><b>Verdict</b>: a claim is contradicted only when a certified point lies "
        "below its curve (for an ε claim: a certified ε above it); all bounds of a recipe "
        f"hold together at {result.confidence:.0%}. "
        "With n certifying runs per side no audit certifies much more than log(n/3): "
        "a claim above that cannot be contradicted by this many runs.</li>",
        "<li><b>AUC</b> of the attack on the certifying runs describes how well the "
        "runs separate (not certified).</li>",
    ]


def _rank_reading(result):
    """The rank test in a line (``certificate="rank_test"`` only)."""
    if result.inputs.certificate != "rank_test":
        return []
    return [
        '<li><b>Rank test</b> (<code>certificate="rank_test"</code>): the point above is '
        "certified at half the target's level; at the other half, the members above the "
        "non-members' (k+1)-th highest score plus the non-members below the members' "
        "(k+1)-th lowest, at ranks fixed in advance (3, 10 and 25 % of the runs; both tails "
        "and each alone, Bonferroni over them), is compared with its law on the claim's "
        "worst case, the randomized-response pair, simulated; all certifying runs serve, "
        "none choose a threshold. The certified ε is the larger of the two, and a claim is "
        "also contradicted when it exceeds the claimed ε. The same test against the Gaussian "
        "pair N(μ, 1) / N(0, 1), the worst case of μ-GDP, gives a μ at the same level: the "
        "empirical μ is the larger of it and the point's, and a μ-GDP claim is contradicted "
        "when it exceeds the claimed μ.</li>"
    ]


#: the trade-off figure's point colours: below the claimed curve (contradicted) or not
CONTRADICTED, NOT_CONTRADICTED = "#c0392b", "#2c3e50"
#: one marker per target, in the targets' order (the colour says contradicted or not)
MARKERS = ("o", "s", "^", "D", "v", "P", "*", "X")


def tradeoff_figures(report):
    """Per recipe: the claimed trade-off curve and every target's certified point."""
    result = report.result
    return {
        figure_file("tradeoff", result, s): _tradeoff_figure(result, s) for s in result.subjects
    }


def _tradeoff_figure(result, subject):
    """The trade-off plane (FPR, FNR) of one recipe: the claimed curve, the region below it,
    the no-leakage diagonal, the Gaussian curve at the empirical μ and the targets' points
    (each labelled with its target's name first)."""
    claim, points = result.inputs.claim, tradeoff_points(result, subject)
    mu, source = empirical_mu(result, subject)
    fig, ax = figure(height=7.6)
    alpha = np.linspace(0.0, 1.0, 2001)
    curve = claim.tradeoff(alpha)
    forbidden = "below the claimed curve: a test the claim forbids"
    ax.fill_between(alpha, 0.0, curve, color="#c0392b", alpha=0.08, lw=0, label=forbidden)
    ax.plot(alpha, curve, color="black", lw=2, label=f"claimed: {claim.describe()}")
    ax.plot(alpha, 1.0 - alpha, color="grey", ls=":", label="no leakage: FNR = 1 − FPR")
    if source is not None and mu > 0:
        label = f"Gaussian curve at the empirical μ = {mu:.2f} (not μ-GDP for any smaller μ)"
        ax.plot(alpha, gaussian_tradeoff(alpha, mu), color="#2980b9", ls="--", label=label)
    for i, row in enumerate(points.itertuples(index=False)):
        where = "below the curve: contradicted" if row.contradicted else "not below the curve"
        ax.scatter(
            [row.fpr_upper],
            [row.fnr_upper],
            label=f"{row.target}: FPR ≤ {row.fpr_upper:.3f}, FNR ≤ {row.fnr_upper:.3f}, {where}",
            marker=MARKERS[i % len(MARKERS)],
            s=80,
            color=CONTRADICTED if row.contradicted else NOT_CONTRADICTED,
            edgecolors="white",
            zorder=5,
        )
    if points.empty:
        note(ax, "every target failed (see Failed analyses)")
    ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal")
    ax.set_xlabel("false-positive rate (runs without the target called 'with it')")
    ax.set_ylabel("false-negative rate (runs with the target missed)")
    ax.set_title(f"recipe '{subject.name}'\ncertified points against the claimed curve")
    legend_below(ax)
    return fig, _tradeoff_caption(result, subject, mu, source)


def _tradeoff_caption(result, subject, mu, source):
    """What the trade-off figure shows, and what a point below the curve means."""
    mus = _target_mus(result, subject)
    from_point = source is None or bool(
        (mus.loc[mus["target"] == source, "point_mu"] >= mu - 1e-12).any()
    )
    through = (
        "it passes through that target's point"
        if from_point
        else "it comes from that target's μ rank test, which reads all its certifying runs "
        "against the Gaussian pair, not from one point"
    )
    empirical = (
        ""
        if source is None
        else f" The dashed curve is the Gaussian-DP curve at the recipe's empirical μ = "
        f"{mu:.2f} (from {source}): {through}, and the recipe is "
        f"certified not μ-GDP for any μ below {mu:.2f}."
    )
    return (
        f"Recipe '{subject.name}' in the trade-off plane (f-DP): the claimed curve "
        f"({result.inputs.claim.describe()}) and each target's certified point, the exact "
        "upper bounds of its attack's false-positive and false-negative rates on the runs "
        f"that certify, all of them holding together at {result.confidence:.0%}. Every test "
        "of a recipe that keeps its claim lies on or above the curve, so a point below it "
        "(red, in the shaded region) contradicts the claim; a point on or above it "
        f"contradicts nothing, which is no proof of privacy.{empirical}"
    )


def runs_figures(report):
    """Per recipe: every target's ROC on the certifying runs."""
    result = report.result
    return {figure_file("roc", result, s): _roc_figure(result, s) for s in result.subjects}


def power_text(result, subject):
    """The smallest ε above the claim that this many certifying runs contradict with 80 %
    power (an attack erring like randomized response, the best possible: a minimum).
    ``certificate="rank_test"``: the point at α/2 and the rank test at α/2
    (:func:`rank_detectable_epsilon`)."""
    n = subject.facts.get("n_certify_runs")
    if not n:
        return "the runs' power is unknown (the shadow runs failed)"
    if not np.isfinite(result.claimed_epsilon):
        # a μ-GDP claim at δ = 0 has no finite ε to exceed: it is tested through μ only
        return (
            "the claim states no finite ε at this δ, so no power in ε applies: it is tested "
            "as a curve, through the certified μ"
        )
    ranked = getattr(result.inputs, "certificate", "threshold") == "rank_test"
    if ranked:
        return _rank_power_text(result, subject, int(n))
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


def rank_detectable_epsilon(
    n, *, at_least, delta, confidence, power=POWER, seed=0, n_simulations=None
):
    """``(ε_low, ε_high)``: the true ε at which the rank-test certificate's power against
    the claim ``at_least`` reaches ``power`` lies in ``(ε_low, ε_high]`` — for any ε-DP
    mechanism with ε ≤ ``ε_low`` the power is below ``power`` (ε_high: inf when no ε up to
    49 reaches it).

    The claim is contradicted when the point (at ``α/2``) or the rank test (at ``α/2``)
    certifies ε above it, ``α = 1 − confidence``. On the randomized-response pair the
    probability of that union is simulated jointly
    (:func:`~sklearn_mace.metrics._rank_test.rank_grid_power` with the point's rule at the
    pair's knee): an upper bound on any ε-DP mechanism's for the rank test, and for the
    point under :func:`~sklearn_mace.metrics.detectable_epsilon`'s model (an attack erring
    like randomized response, the best possible). ``ε_low`` is the largest point of a grid
    where it is still below ``power``; the grid ends past where the point alone at ``α/2``
    reaches ``power``. ``n_simulations``: the rank test's calibration draws (None: the
    audit's own).
    """
    from ....metrics._rank_test import rank_grid_power

    half = (1.0 - confidence) / 2  # each certificate's α
    top = detectable_epsilon(n, n, at_least=at_least, delta=delta, confidence=1 - half, power=power)
    end = min(49.0, at_least + 1.3 * (top - at_least) + 0.05)
    grid = at_least + np.geomspace(1e-3, end - at_least, 80)
    joint = rank_grid_power(
        n, n, grid, at_least=at_least, delta=delta, alpha=half, point_level=half / 2,
        rng=np.random.default_rng(seed), n_simulations=n_simulations,
    )  # fmt: skip
    reached = np.flatnonzero(joint >= power)
    if reached.size == 0:
        return float(grid[-1]), float("inf")
    first = reached[0]
    return (float(grid[first - 1]) if first else float(at_least)), float(grid[first])


def _rank_power_text(result, subject, n):
    """The power sentence under ``certificate="rank_test"``: the point or the rank test,
    each at α/2 (:func:`rank_detectable_epsilon`)."""
    low, high = rank_detectable_epsilon(
        n, at_least=result.claimed_epsilon, delta=result.delta,
        confidence=subject.claim_confidence,
    )  # fmt: skip
    if not np.isfinite(high):
        return (
            f"{n} certifying runs per side cannot contradict the claim with "
            f"{100 * POWER:.0f} % power at any ε up to {low:.0f}"
        )
    return (
        f"with {n} certifying runs per side, a recipe is contradicted with "
        f"{100 * POWER:.0f} % power only if its true ε is above {low:.2f} (either of the "
        "point and the rank test, each at half the level, against the best possible attack, "
        "which errs like randomized response; simulated)"
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
    and plan, the trade-off figure and the runs' ROC curves, how to read a shadow-run
    audit, the notes; nothing about records of a table (exposed records, held-out risks):
    its targets are the audited records, named on the card, and the engine's "records" are
    shadow runs."""
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
            Figures((tradeoff_figures, runs_figures)),
            HowToRead((algorithm_reading,)),
            Notes(),
        ),
    )
