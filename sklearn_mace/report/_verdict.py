"""The card's verdict: red when leakage is certified, green when it is bounded, else grey.

Three verdicts, the same for releases and models (``docs/design.md``, "One card, one set of
claim rules"):

* **red** (``"leak"``, "leakage certified"): some claim of the card certifies leakage — a
  certified ε > 0 or a certified advantage above the trivial ``|2p − 1|`` — or members
  appear verbatim in a release more often than chance explains (a *disclosure*, with the
  rows named). The words say whether the certified ε is above the claimed ε. The old amber
  ("leakage certified, not above the claim") is red: certified leakage is leakage.
* **green** (``"bounded"``, "leakage bounded"): every analysis of the card has a certified
  upper bound on the advantage of every threshold rule on its scores
  (:func:`~sklearn_mace.metrics.advantage_upper_bound`) at most ``|2p − 1| + margin``
  (default margin 0.1), no analysis failed, and no exact "no leak" test of the card rejects
  after the card's correction (p ≤ α/K).
* **grey** (``"inconclusive"``): neither. The card says why, how far the audit bounded the
  advantage, and how many members and non-members would bound a leak-free subject within the
  margin (:func:`~sklearn_mace.metrics.bounded_sample_size`).

Why each colour is wrong with probability at most α (whatever the truth): the ``K`` lower
bounds of a card hold together at ``1 − α``, so a wrong red needs that family to fail; the
``K`` upper bounds, a family of their own at the same levels, hold together at ``1 − α``,
so a wrong green needs *that* family to fail. The verbatim rule adds one exact test
(hypergeometric, conditional on the copies: are members verbatim more often than
non-members?) at ``α/K``, so a release card's wrong red is bounded by ``α + α/K``.
A rejecting "no leak" p-value makes a card grey, not red: it shows that the query carries
membership information without certifying how much, and making it red would spend α twice.
An algorithm card (a claimed ε tested by shadow runs) is red only when the claim is
contradicted and never green: no finite number of runs proves a DP claim.
"""

from dataclasses import dataclass, field
from functools import lru_cache
from numbers import Real

import numpy as np
from scipy.stats import hypergeom

from .._validation import check_prior
from ..metrics import bounded_sample_size

__all__ = [
    "VERDICTS",
    "ClaimRules",
    "check_claim_options",
    "check_margin",
    "disclosure",
    "explanation",
    "headline",
    "verdict",
]

VERDICTS = {  # the headline of each case; {epsilon}: the claimed ε
    "above": "leakage certified above ε = {epsilon:g}",
    "leak": "leakage certified (not above the claimed ε = {epsilon:g})",
    "disclosure": "leakage certified",
    "inconclusive": "inconclusive: no leakage certified, and none bounded",
    "bounded": "leakage bounded",
}
COLOURS = {"above": "leak", "leak": "leak", "disclosure": "leak"}
POWER = 0.8
_TOLERANCE = 1e-12


@dataclass(frozen=True)
class ClaimRules:
    """The rules that turn a card's claims into its verdict: plain data, set by the audit.

    Attributes
    ----------
    can_bound : bool, default=True
        Whether a card may be green ("leakage bounded"). An algorithm card, which tests a
        claimed ε with finitely many runs, never proves it: False.
    red_needs_claim : bool, default=False
        Whether only a contradicted claim turns a card red (some analysis's
        ``contradicted``, decided by the engine): a DP recipe may leak up to its claim.
        Its card is then red or grey.
    headlines : dict, default=VERDICTS
        The card's headline per case (``"above"``, ``"leak"``, ``"disclosure"``,
        ``"inconclusive"``, ``"bounded"``): text with ``{epsilon}`` (the claimed ε) and
        ``{claim}`` (the claim in words).
    """

    can_bound: bool = True
    red_needs_claim: bool = False
    headlines: dict = field(default_factory=lambda: dict(VERDICTS))


def check_claim_options(*, confidence, prior, delta, claimed_epsilon):
    """The claim options every audit shares, checked before any work."""
    if isinstance(confidence, bool) or not isinstance(confidence, Real):
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}.")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}.")
    if prior is not None:
        check_prior(prior)
    if isinstance(delta, bool) or not isinstance(delta, Real) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1); got {delta!r}.")
    if (
        isinstance(claimed_epsilon, bool)
        or not isinstance(claimed_epsilon, Real)
        or not claimed_epsilon >= 0
    ):
        raise ValueError(f"claimed_epsilon must be >= 0 (inf allowed); got {claimed_epsilon!r}.")


def check_margin(bounded_margin):
    """``bounded_margin`` as a float in (0, 1), or a ``ValueError`` naming it."""
    if isinstance(bounded_margin, bool) or not isinstance(bounded_margin, int | float):
        raise TypeError(f"bounded_margin must be a float in (0, 1); got {bounded_margin!r}.")
    if not 0 < bounded_margin < 1:
        raise ValueError(f"bounded_margin must be in (0, 1); got {bounded_margin!r}.")
    return float(bounded_margin)


def _alpha(subject):
    return 1.0 - subject.claim_confidence


def disclosure(subject):
    """``(k1, n1, k0, n0, p)`` when members appear verbatim beyond chance, else None.

    ``k1`` of ``n1`` members and ``k0`` of ``n0`` non-members are verbatim in the release;
    ``p`` is the one-sided exact (hypergeometric) p-value of "members are verbatim no more
    often than non-members", given the ``k1 + k0`` copies; it must be at most ``α/K``.
    """
    f = subject.facts
    counts = [f.get(key) for key in ("member_exact_copies", "member_targets")]
    counts += [f.get(key) for key in ("nonmember_exact_copies", "nonmember_targets")]
    if any(c is None or not np.isfinite(c) for c in counts) or counts[0] < 1:
        return None
    k1, n1, k0, n0 = (int(c) for c in counts)
    p = float(hypergeom.sf(k1 - 1, n1 + n0, k1 + k0, n1))
    return (k1, n1, k0, n0, p) if p <= _alpha(subject) else None


def unparsed_columns(result, subject):
    """A release's columns accepted as mostly not numbers (``allow_unparsed=``): the audit
    never saw those values, so it cannot bound what they leak (a copy of the members written
    ``"14.25 cm"`` and accepted so read as a leak-free release)."""
    return list(result.inputs.unparsed_columns.get(subject.name, []))


def significant_tests(subject):
    """``(analysis, p)`` of the exact "no leak" tests that reject at ``α/K``."""
    return [(name, p) for name, p in subject.p_values if p <= _alpha(subject)]


def _bounded(result, subject):
    upper = subject.advantage_upper_bound
    limit = abs(2 * result.prior - 1) + result.bounded_margin
    return bool(np.isfinite(upper) and upper <= limit + _TOLERANCE)


def case(result, subject):
    """``"above"``, ``"leak"``, ``"disclosure"``, ``"inconclusive"`` or ``"bounded"``."""
    rules = result.claim_rules
    if rules.red_needs_claim:  # an algorithm card: red iff contradicted
        return "above" if subject.contradicted else "inconclusive"
    above = subject.epsilon_lower_bound > result.claimed_epsilon
    if above:
        return "above"
    if subject.certified_leak:
        return "leak"
    if disclosure(subject) is not None:
        return "disclosure"
    if not rules.can_bound or significant_tests(subject):
        return "inconclusive"
    if unparsed_columns(result, subject):
        return "inconclusive"
    return "bounded" if _bounded(result, subject) else "inconclusive"


def verdict(result, subject):
    """The card's colour: ``"leak"`` (red), ``"bounded"`` (green) or ``"inconclusive"``."""
    kind = case(result, subject)
    return COLOURS.get(kind, kind)


def headline(result, subject):
    """The card's first line: the case in words, and any verbatim disclosure."""
    verdicts = result.claim_rules.headlines
    claim = result.inputs.claim  # an algorithm audit's claim, in words
    words = claim.describe() if claim is not None else f"ε = {result.claimed_epsilon:g}"
    line = verdicts[case(result, subject)].format(epsilon=result.claimed_epsilon, claim=words)
    found = disclosure(subject)
    if found is not None:
        line += f" — disclosure: {found[0]} members appear verbatim"
    return line


def verbatim_rows(result, subject, limit=10):
    """Rows (in the members file) of the members verbatim in the release, at most ``limit``."""
    flags = subject.record_columns.get("verbatim_in_release")
    if flags is None:
        return []
    rows = result.targets.row[(np.asarray(flags, dtype=bool)) & (result.membership == 1)]
    return [int(r) for r in rows[:limit]]


@lru_cache(maxsize=64)
def _plan(margin, n_analyses, prior, confidence, ratio):
    try:
        return bounded_sample_size(
            margin,
            n_analyses=n_analyses,
            prior=prior,
            confidence=confidence,
            power=POWER,
            nonmember_ratio=ratio,
        )
    except ValueError:
        return None


def bound_plan(result, subject):
    """The members and non-members that would bound a leak-free subject within the margin."""
    m = result.membership
    n1, n0 = int(m.sum()), int(m.size - m.sum())
    return _plan(
        result.bounded_margin,
        subject.n_claims,
        float(result.prior),
        float(result.confidence),
        round(n0 / n1, 6),
    )


def _disclosure_text(result, subject):
    k1, n1, k0, n0, p = disclosure(subject)
    rows = verbatim_rows(result, subject)
    more = ", …" if k1 > len(rows) else ""
    return (
        f"disclosure: {k1} of {n1} members appear verbatim in the release (rows "
        f"{', '.join(map(str, rows))}{more} of the members file), {k0} of {n0} non-members; "
        f"exact test that members are copied no more often than non-members: p = {p:.2g} ≤ "
        f"α/K = {_alpha(subject):.2g}; a verbatim member is disclosed whatever the ε"
    )


def _bound_text(result, subject):
    source = subject.bound_source
    b = source.bound
    return (
        f"{b.advantage_upper_bound:.3f} at prior {result.prior:.3g} (the largest certified "
        f"upper bound of the {subject.n_claims} analyses, from {source.name}; the ε an "
        f"advantage that large implies: {b.advantage_epsilon_upper_bound:.2f})"
    )


def _inconclusive_texts(result, subject):
    texts = [
        f'the exact "no leak" test of {name} rejects (p = {p:.2g} ≤ α/K = '
        f"{_alpha(subject):.2g}): the query carries membership information, though no claim "
        "certifies how much"
        for name, p in significant_tests(subject)
    ]
    unseen = unparsed_columns(result, subject)
    if unseen:
        texts.append(
            f"the values of {', '.join(map(repr, unseen))} in this release are mostly not "
            "numbers and were audited as missing (allow_unparsed=), so what they hold is not "
            "bounded"
        )
    failed = len(subject.failures)
    if failed:
        texts.append(f"{failed} analysis(es) failed, so their leakage is not bounded")
    elif not _bounded(result, subject):
        limit = abs(2 * result.prior - 1) + result.bounded_margin
        texts.append(
            f"this audit could not bound the advantage of any threshold below "
            f"{_bound_text(result, subject)}; green needs at most {limit:.3f} (the trivial "
            f"{abs(2 * result.prior - 1):.3f} + margin {result.bounded_margin:g})"
        )
    plan = bound_plan(result, subject)
    if plan is not None and (failed or not _bounded(result, subject)):
        texts.append(
            f"with no leakage, {plan.n_members} members and {plan.n_nonmembers} non-members "
            f"would bound every analysis within the margin ({100 * POWER:.0f} % power)"
        )
    return texts


def explanation(result, subject):
    """Which rule gave the card its colour, in sentences (the card's and the summary's)."""
    kind = case(result, subject)
    texts = [_disclosure_text(result, subject)] if disclosure(subject) is not None else []
    if kind == "bounded":
        texts.append(
            f"leakage bounded: no threshold on any analysis's scores has an advantage above "
            f"{_bound_text(result, subject)}, within the margin {result.bounded_margin:g} "
            f"above the trivial {abs(2 * result.prior - 1):.3f}, and no exact test rejects; "
            "this bounds these analyses, not every attack"
        )
    elif kind == "inconclusive" and result.claim_rules.can_bound:
        texts.append("inconclusive: " + "; ".join(_inconclusive_texts(result, subject)))
    return texts
