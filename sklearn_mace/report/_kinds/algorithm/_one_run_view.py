"""The one-run design's card: one training per recipe, m canaries, what the guesses refute.

A one-run audit (:class:`~sklearn_mace.algorithm.AlgorithmAudit` with ``design="one_run"``,
``audit_algorithm(..., design="one_run")``) trains each recipe once with ``m`` canaries,
each in the training set independently with probability ½, and guesses "in"/"out" for the
canaries an attack ranks highest/lowest. Unlike the multi-run design it certifies no single
test's error rates — there is no certified (FPR, FNR) point to draw — but it **refutes
curves**: Steinke, Nasr & Jagielski's theorem (2023) refutes (ε, δ)-DP for ε below its
bound, the f-DP recursion of Mahloujifar, Melis & Chaudhuri (2025) refutes (ε, δ) curves,
Gaussian curves up to the empirical μ, and the claimed curve itself. The card shows exactly
those, each read from the audit's fitted attributes: the claimed curve (red when refuted:
the audit's ``contradicted_``), the refuted Gaussian curve at the empirical μ
(``mu_lower_bounds_``) and the refuted (ε, δ) curve at the f-DP ε
(``fdp_epsilon_lower_bounds_``), Steinke's ε (``epsilon_lower_bounds_``), the guesses
(``guesses_``) and the design in words. Written by the algorithm kind's writer
(``_cli.write``), which :func:`~sklearn_mace.report.write_report` and ``--design one-run``
both reach through ``_show.write_staged``: report.html, summary.csv, guesses.csv and
``figures/tradeoff_<n>_<recipe>.png``.
"""

import html
import textwrap

import numpy as np
import pandas as pd

from ....metrics._fdp import approximate_tradeoff, gaussian_tradeoff
from ..._figures import figure, legend_below, slug
from ..._format import embed_figure, fmt, html_page, table
from ..._output import write_csv
from ._view import CONTRADICTED, _claim_mu_words

__all__ = [
    "card_numbers",
    "design_words",
    "gaussian_keeping",
    "guesses_frame",
    "most_certifiable",
    "one_run_lines",
    "one_run_page",
    "tradeoff_figure",
    "write_one_run",
]

TITLE = "sklearn-mace algorithm privacy audit — one run"
#: the claimed curve when the guesses do not refute it
NOT_REFUTED = "#2c3e50"
#: the refuted curves: the Gaussian curve at the empirical μ, the (ε, δ) curve at the f-DP ε
MU_COLOUR, EPSILON_COLOUR = "#2980b9", "#e67e22"
HEADLINES = {
    True: "the claim is contradicted: {claim}",
    False: "inconclusive: the claim is not contradicted: {claim}",
    None: "no claim tested",
}


def card_numbers(audit):
    """Every number of a recipe's one-run card, read from the fitted audit.

    Parameters
    ----------
    audit : AlgorithmAudit
        Fitted with ``design="one_run"``.

    Returns
    -------
    numbers : dict
        ``steinke_epsilon`` (``epsilon_lower_bounds_``), ``fdp_epsilon``
        (``fdp_epsilon_lower_bounds_``), ``mu`` (``mu_lower_bounds_``), ``contradicted``
        (``contradicted_``, None without a claim), ``claimed_epsilon`` (the claim's ε at
        ``delta_``), ``delta``, ``n_canaries``, ``n_included``, ``n_scored``, ``n_attack``,
        ``n_train``, the guesses behind each bound (``steinke_guesses``, ``steinke_correct``,
        ``mu_guesses``, ``mu_correct``), ``level`` (each number's own confidence) and
        ``n_counts`` (guess counts tried).
    """
    g = audit.guesses_
    best_eps, best_mu = int(np.argmax(g["steinke_epsilon"])), int(np.argmax(g["fdp_mu"]))
    claim = audit.claim_
    return {
        "steinke_epsilon": float(audit.epsilon_lower_bounds_[0]),
        "fdp_epsilon": float(audit.fdp_epsilon_lower_bounds_[0]),
        "mu": float(audit.mu_lower_bounds_[0]),
        "contradicted": None if audit.contradicted_ is None else bool(audit.contradicted_[0]),
        "claimed_epsilon": np.nan if claim is None else float(claim.epsilon_at(audit.delta_)),
        "delta": float(audit.delta_),
        "n_canaries": len(audit.canary_included_),
        "n_included": int(audit.canary_included_.sum()),
        "n_scored": int(audit.certify_mask_.sum()),
        "n_attack": int((~audit.certify_mask_).sum()),
        "n_train": int(audit.n_train_),
        "steinke_guesses": int(g["n_guesses"][best_eps]),
        "steinke_correct": int(g["n_correct"][best_eps]),
        "mu_guesses": int(g["n_guesses"][best_mu]),
        "mu_correct": int(g["n_correct"][best_mu]),
        "level": float(g["confidence"][0]),
        "n_counts": len(g["n_guesses"]),
    }


def design_words(audit):
    """The one-run design in words (HTML), from the fitted audit."""
    n = card_numbers(audit)
    counts = ", ".join(str(int(r)) for r in audit.guesses_["n_guesses"])
    return (
        f'<div class="muted">Design: <b>one run</b> — one training with {n["n_canaries"]} '
        "canaries, each included independently with probability ½ (add/remove-one: a "
        f"canary is in the training set or not; {n['n_included']} were in), beside "
        f"{n['n_train']} other training rows. An attack learns on {n['n_attack']} canaries "
        f"whose inclusion it is told and ranks the other {n['n_scored']}, which it never "
        f'saw; it guesses "in" for the highest-ranked half and "out" for the lowest-ranked '
        f"half of {counts} guesses, each count tested (Steinke, Nasr &amp; Jagielski 2023). "
        "One training instead of thousands: the canaries' coins replace the runs.</div>"
    )


def guesses_frame(result):
    """Every recipe's guess counts and what each certifies (``guesses.csv``): one row per
    (recipe, guess count), the columns of the audit's ``guesses_``."""
    frames = []
    for recipe in result.recipes:
        g = recipe.audit.guesses_
        frame = pd.DataFrame({k: np.asarray(v) for k, v in g.items()})
        frame.insert(0, "recipe", recipe.name)
        frame["claim_rejected"] = frame["claim_statistic"] > 0
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _guess_table(audit):
    """HTML: per guess count, the guesses, how many were right and what they certify."""
    g = audit.guesses_
    rejected = np.where(
        np.isnan(g["claim_statistic"]),
        "—",
        np.where(g["claim_statistic"] > 0, "rejected", "not rejected"),
    )
    frame = pd.DataFrame(
        {
            "guesses": g["n_guesses"].astype(int),
            "right": g["n_correct"].astype(int),
            "Steinke ε ≥": g["steinke_epsilon"],
            "f-DP ε ≥": g["fdp_epsilon"],
            "μ ≥": g["fdp_mu"],
            "claimed curve": rejected,
        }
    )
    return table(frame, text_columns=("claimed curve",))


def _epsilon_line(n):
    """HTML: Steinke et al.'s ε and the f-DP ε beside the claim's ε at δ."""
    claimed = (
        ""
        if not np.isfinite(n["claimed_epsilon"])
        else f" — the claim's ε at δ = {n['delta']:g} is {fmt(n['claimed_epsilon'], 2)}"
    )
    return (
        f"<div>ε <b>at least {fmt(n['steinke_epsilon'], 2)}</b> (Steinke et al.'s theorem; "
        f"{n['steinke_correct']} of {n['steinke_guesses']} guesses right) · f-DP ε at "
        f"least <b>{fmt(n['fdp_epsilon'], 2)}</b> (the (ε, δ) curve the guesses refute) "
        f'<span class="muted">at δ = {n["delta"]:g}; add/remove-one{claimed}</span></div>'
    )


def gaussian_keeping(claim):
    """The largest μ whose Gaussian mechanism keeps ``claim``: the claim's own μ, or for
    (ε, δ) pairs the smallest μ_i with ``δ_μ(ε_i) = δ_i`` (Dong, Roth & Su 2022, Cor. 2.13;
    0 with a pure pair: no Gaussian mechanism is (ε, 0)-DP).

    Parameters
    ----------
    claim : PrivacyClaim
        The claim on the audited relation.

    Returns
    -------
    mu : float
        A Gaussian mechanism with this μ or less keeps every pair of the claim; one with a
        larger μ breaks some pair.
    """
    from scipy.optimize import brentq

    from ....metrics._fdp import gaussian_delta

    if claim.kind == "gaussian":
        return float(claim.mu)
    mus = []
    for epsilon, delta in zip(claim.epsilons, claim.deltas, strict=True):
        if delta <= 0.0:
            return 0.0
        high = 1.0
        while gaussian_delta(high, epsilon) < delta:
            high *= 2.0
        mus.append(brentq(lambda mu, e=epsilon, d=delta: gaussian_delta(mu, e) - d, 1e-9, high))
    return float(min(mus))


def _mu_line(audit, n):
    """HTML: the empirical μ (the f-DP recursion on Gaussian curves) beside the claim's."""
    words = (
        f"certified: not μ-GDP for any μ up to {fmt(n['mu'], 2)}"
        if n["mu"] > 0
        else "no Gaussian curve is refuted"
    )
    claim = "" if audit.claim_ is None else f" — {_claim_mu_words(audit.claim_)}"
    if audit.claim_ is not None and audit.claim_.kind != "gaussian":
        keeping = gaussian_keeping(audit.claim_)
        claim += f"; a Gaussian mechanism keeps the claim up to μ = {fmt(keeping, 2)}"
    return (
        f"<div>empirical μ <b>at least {fmt(n['mu'], 2)}</b> ({words}; {n['mu_correct']} of "
        f'{n["mu_guesses"]} guesses right)<span class="muted">{claim}</span></div>'
    )


def most_certifiable(audit):
    """``(ε, μ)``: what this run's guesses could certify at most, every guess right at the
    largest guess count (the f-DP recursion at the card's per-number level): a claim above
    them cannot be contradicted by this many canaries."""
    from ....metrics._one_run_fdp import one_run_epsilon_lower_bound, one_run_mu_lower_bound

    n = card_numbers(audit)
    r, alpha = int(audit.guesses_["n_guesses"].max()), 1.0 - n["level"]
    epsilon = one_run_epsilon_lower_bound(n["n_scored"], r, r, alpha, n["delta"])
    return epsilon, one_run_mu_lower_bound(n["n_scored"], r, r, alpha)


def _meaning(audit, n):
    """What the verdict says, and how much this run could certify at most."""
    if n["contradicted"]:
        return (
            "the recipe is not what it claims for add/remove-one neighbours, with the stated "
            "confidence: its claim is false (or its implementation is)"
        )
    epsilon, mu = most_certifiable(audit)
    return (
        "the run does not refute the claim; this is not a proof of privacy: even every "
        f"guess right would certify at most ε = {fmt(epsilon, 2)} (f-DP) and μ = "
        f"{fmt(mu, 2)} from {n['n_scored']} scored canaries; more canaries, canaries that "
        "interfere less or a stronger attack may refute more"
    )


def _card(recipe, confidence):
    """One recipe's one-run card (HTML)."""
    audit, n = recipe.audit, card_numbers(recipe.audit)
    claim = "" if audit.claim_ is None else html.escape(audit.claim_.describe())
    colour = "leak" if n["contradicted"] else "inconclusive"
    return f"""
<div class="card {colour}">
  <div class="muted">recipe <b>{html.escape(recipe.name)}</b> · one run: {n["n_canaries"]}
  canaries, one training</div>
  <div class="verdict">{HEADLINES[n["contradicted"]].format(claim=claim)}</div>
  {_epsilon_line(n)}
  {_mu_line(audit, n)}
  {design_words(audit)}
  {_guess_table(audit)}
  <div class="muted">Multiplicity: every number of this card — {n["n_counts"]} guess counts,
  each with Steinke's ε, the f-DP ε and μ{"" if audit.claim_ is None else " and the claim's test"}
  — holds together at {confidence:.0%} (each at {n["level"]:.2%}, Bonferroni); each recipe is a
  separate claim. A claim is contradicted only when the guesses refute its curve, or certify
  an ε above its ε at δ = {n["delta"]:g}.</div>
  <div class="muted">{_meaning(audit, n)}.</div>
</div>"""


def tradeoff_figure(recipe, index):
    """The trade-off plane of one recipe's one run: the claimed curve (red when the guesses
    refute it), the Gaussian curve at the empirical μ and the (ε, δ) curve at the f-DP ε
    (both refuted), the no-leakage diagonal. Returns ``(file name, (figure, caption))``."""
    audit, n = recipe.audit, card_numbers(recipe.audit)
    fig, ax = figure(height=7.6)
    alpha = np.linspace(0.0, 1.0, 2001)
    if audit.claim_ is not None:
        curve = audit.claim_.tradeoff(alpha)
        forbidden = "below the claimed curve: tests the claim forbids"
        ax.fill_between(alpha, 0.0, curve, color=CONTRADICTED, alpha=0.08, lw=0, label=forbidden)
        verdict = "refuted: contradicted" if n["contradicted"] else "not refuted"
        colour = CONTRADICTED if n["contradicted"] else NOT_REFUTED
        label = f"claimed: {audit.claim_.describe()} — {verdict}"
        ax.plot(alpha, curve, color=colour, lw=2.4, label=label)
    ax.plot(alpha, 1.0 - alpha, color="grey", ls=":", label="no leakage: FNR = 1 − FPR")
    if n["mu"] > 0:
        label = f"Gaussian curve at the empirical μ = {n['mu']:.2f}: refuted (every μ up to it)"
        ax.plot(alpha, gaussian_tradeoff(alpha, n["mu"]), color=MU_COLOUR, ls="--", label=label)
    if n["fdp_epsilon"] > 0:
        eps, delta = n["fdp_epsilon"], n["delta"]
        label = f"(ε = {eps:.2f}, δ = {delta:g}) curve at the f-DP ε: refuted"
        curve = approximate_tradeoff(alpha, eps, delta)
        ax.plot(alpha, curve, color=EPSILON_COLOUR, ls="-.", label=label)
    ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal")
    ax.set_xlabel("false-positive rate (a canary left out called 'in')")
    ax.set_ylabel("false-negative rate (a canary trained on called 'out')")
    ax.set_title(
        f"{textwrap.shorten(recipe.name, 60)}\none run, {n['n_canaries']} canaries: the "
        "refuted curves against the claim"
    )
    for line in [*ax.get_lines(), *ax.collections]:  # long claims: wrapped, not cut
        line.set_label(textwrap.fill(line.get_label(), 80))
    legend_below(ax)
    name = f"tradeoff_{index}_{slug(recipe.name)}.png"
    return name, (fig, _caption(recipe, n))


def _caption(recipe, n):
    """What the one-run figure shows, and what a refuted curve means."""
    verdict = (
        "The guesses refute the claimed curve (red): the claim is contradicted."
        if n["contradicted"]
        else "The guesses do not refute the claimed curve, which is no proof of privacy."
    )
    refuted = [
        f"the dashed Gaussian curve at the empirical μ = {n['mu']:.2f} (and every Gaussian "
        "curve of a smaller μ, which lies above it)"
        if n["mu"] > 0
        else "no Gaussian curve",
        f"the dash-dotted (ε, δ) curve at the f-DP ε = {n['fdp_epsilon']:.2f}"
        if n["fdp_epsilon"] > 0
        else "no (ε, δ) curve",
    ]
    return (
        f"Recipe '{recipe.name}', one training with {n['n_canaries']} canaries. One run "
        "certifies no single test's error rates, so no point is drawn: it refutes curves, "
        "curves the recipe's own trade-off curve dips below somewhere. Refuted here: "
        f"{refuted[0]}; {refuted[1]}. Where a refuted curve lies on or below the claimed "
        "curve everywhere, the recipe's curve dips below the claimed one: a test the claim "
        f"forbids. All of it holds together at the card's confidence. {verdict}"
    )


def one_run_page(result, figures, notes=(), title=None):
    """The whole report.html of a one-run audit: the cards, the figures, how to read them,
    the notes. ``figures``: the embedded ``<figure>`` elements, in the recipes' order;
    ``title``: the page's (default :data:`TITLE`)."""
    cards = "".join(_card(r, result.confidence) for r in result.recipes)
    noted = "".join(f"<li>{html.escape(text)}</li>" for text in notes)
    body = (
        f'<div class="cards">{cards}</div>\n<h2>Figures</h2>{"".join(figures)}\n'
        f"<h2>How to read a one-run card</h2><ul>{''.join(_reading())}</ul>"
        + (f"\n<h2>Notes</h2><ul>{noted}</ul>" if noted else "")
    )
    subtitle = (
        f"one run per recipe · add/remove-one neighbours · each recipe's numbers hold "
        f"together at {result.confidence:.0%}"
    )
    return html_page(title or TITLE, result.n_rows, subtitle, body)


def _reading():
    """How to read a one-run card, in a few items."""
    return [
        "<li><b>One run</b>: each recipe is trained once; each canary is in its training "
        "set with probability ½, by a fair coin. An attack ranks the canaries it never saw, "
        "and the highest are guessed 'in', the lowest 'out'. Under a DP claim the number of "
        "right guesses cannot be large: too many right guesses refute it.</li>",
        "<li><b>ε</b>: Steinke, Nasr &amp; Jagielski (2023) bound the right guesses of an "
        "(ε, δ)-DP recipe by a binomial tail plus a δ term; the largest ε their test rejects "
        "is the card's ε. The <b>f-DP ε</b> reads the same guesses with the recursion of "
        "Mahloujifar, Melis &amp; Chaudhuri (2025) on the (ε, δ) curve, usually tighter.</li>",
        "<li><b>Empirical μ</b>: the same recursion on Gaussian-DP curves: the recipe is "
        "not μ-GDP for any μ up to it (μ = sensitivity/σ of the Gaussian mechanism that "
        "leaks as much).</li>",
        "<li><b>Verdict</b>: red when the recursion rejects the claimed curve itself, or a "
        "certified ε exceeds the claim's ε at the card's δ; grey otherwise (never green: "
        "one run proves no claim).</li>",
        "<li><b>Figure</b>: the claimed curve and the refuted curves in the trade-off plane. "
        "One run has no certified point; a refuted curve that lies below the claimed curve "
        "everywhere contradicts the claim.</li>",
    ]


def write_one_run(result, stage, caught=None, title=None):
    """Write a one-run audit into ``stage``: report.html, summary.csv, guesses.csv and one
    trade-off figure per recipe under ``figures/``. Returns ``{name: path}``.

    The body of :func:`~sklearn_mace.report.write_report` for a one-run result, and of the
    command line's writer (``_cli.write``): both stage, check and list the files alike.
    ``caught``: the run's warnings (the command line's), which become the page's notes;
    ``title``: the page's (default :data:`TITLE`)."""
    from ..._warnings import warning_notes

    (stage / "figures").mkdir(parents=True, exist_ok=True)
    paths = {"report": stage / "report.html", "summary": stage / "summary.csv"}
    paths["guesses"] = stage / "guesses.csv"
    write_csv(result.summary, paths["summary"])
    write_csv(guesses_frame(result), paths["guesses"])
    elements = []
    for index, recipe in enumerate(result.recipes, 1):
        name, (fig, caption) = tradeoff_figure(recipe, index)
        png, element = embed_figure(fig, name, caption)
        paths[name] = stage / "figures" / name
        paths[name].write_bytes(png)
        elements.append(element)
    ours, third_party, _ = warning_notes(caught or [], [])
    page = one_run_page(result, elements, [*ours, *third_party], title=title)
    paths["report"].write_text(page, encoding="utf-8")
    return paths


def one_run_lines(result):
    """The printed summary: a header, then each recipe's verdict with its numbers."""
    lines = [
        f"sklearn-mace audit-algorithm --design one-run: {len(result.recipes)} recipe(s), one "
        f"training each; each recipe's numbers hold together at {result.confidence:.0%}"
    ]
    for recipe in result.recipes:
        n = card_numbers(recipe.audit)
        claim = "" if recipe.audit.claim_ is None else recipe.audit.claim_.describe()
        lines.append(
            f"{recipe.name}: [{HEADLINES[n['contradicted']].format(claim=claim)}] — "
            f"{n['n_canaries']} canaries; Steinke ε at least {n['steinke_epsilon']:.2f}, f-DP ε "
            f"at least {n['fdp_epsilon']:.2f} (δ = {n['delta']:g}), μ at least {n['mu']:.2f} "
            f"({n['mu_correct']} of {n['mu_guesses']} guesses right)"
        )
    return lines
