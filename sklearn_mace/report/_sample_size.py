"""The reports' sample-size line: how many targets would certify a leak of the claimed size.

"Would this audit have seen a leak as large as the claim allows?" For the strongest analysis
of the audit (the source of the largest certified ε; MACE's Bayes rule when nothing is
certified) at the level its claim is made (``1 − α/K``, the card's Bonferroni share),
:func:`~sklearn_mace.metrics.audit_sample_size` gives the members and non-members (at the
audit's ratio) that certify ε > 0 with 80 % power if the audited object leaked
``ε = claimed_epsilon`` and the attack erred like randomized response at that ε — the best
any attack can do, so the answer is a minimum. A split-threshold rule is certified on half
of the targets (the other half chooses the threshold), so it needs at least twice as many.
"""

from ..metrics import audit_sample_size
from ._section import Section

__all__ = ["POWER", "SampleSize", "planning_analysis", "sample_size_line"]

POWER = 0.8
FALLBACK_EPSILON = 1.0  # planned for when the claimed ε is 0 (nothing to plan against)


def planning_analysis(result):
    """``(subject, analysis)`` the line plans for, or None when no analysis succeeded."""
    sources = [(s, s.epsilon_source) for s in result.subjects if s.epsilon_source is not None]
    if sources:
        return max(sources, key=lambda pair: pair[1].claim.epsilon_lower_bound)
    for subject in result.subjects:
        ranking = subject.ranking_result()
        if ranking is not None:
            return subject, ranking
    for subject in result.subjects:
        if subject.claims:
            return subject, subject.claims[0]
    return None


class SampleSize(Section):
    """The plan's line in the printed summary (after the comparisons); on the page it stands
    under the cards (:class:`~._html.Cards`)."""

    def lines(self, report):
        """The sentence, when some analysis has a claim."""
        line = sample_size_line(report.result, report.presentation)
        return [line] if line else []


def sample_size_line(result, presentation):
    """One sentence for the card page and the printed summary ("" without any claim).

    Parameters
    ----------
    result : AuditResult
        The audit.
    presentation : Presentation
        What a subject and the targets of each side are called, and the neighbour relation.

    Returns
    -------
    line : str
        What ε is planned for, from which analysis and level, the members and non-members
        it needs, and how many this audit has.
    """
    found = planning_analysis(result)
    if found is None:
        return ""
    subject, analysis = found
    m = result.membership
    n1, n0 = int(m.sum()), int(m.size - m.sum())
    epsilon = result.claimed_epsilon if result.claimed_epsilon > 0 else FALLBACK_EPSILON
    split = analysis.claim.strategy == "split"
    try:
        plan = audit_sample_size(
            epsilon=min(epsilon, 49.0),
            delta=result.delta,
            confidence=subject.claim_confidence,
            power=POWER,
            nonmember_ratio=n0 / n1,
        )
    except ValueError as exc:
        return f"Sample size: not planned ({exc})"
    factor, how = (2, "at least ") if split else (1, "about ")
    ones, zeros = presentation.target_nouns
    need = f"{how}{factor * plan.n_members} {ones} and {factor * plan.n_nonmembers} {zeros}"
    return (
        f"Sample size: to certify ε > 0 with {100 * POWER:.0f} % power if a "
        f"{presentation.noun} leaked ε = {epsilon:g} "
        f"({presentation.relation}, δ = "
        f"{result.delta:g}), {analysis.name} at its claim's level "
        f"({100 * subject.claim_confidence:.2f} %) would need {need} "
        f"({_rule(analysis.claim, n1, n0)}; the attack assumed to err like randomized response "
        f"at that ε, so this is a minimum); {_has(analysis.claim, n1, n0)}."
    )


def _certifying(claim, n1, n0):
    """The targets of each side a fixed rule's claim is certified on (all, or fewer when
    the rule was fitted on the others, as the algorithm audit's attack is)."""
    return min(claim.n_members, n1), min(claim.n_nonmembers, n0)


def _rule(claim, n1, n0):
    if claim.strategy == "split":
        return (
            "its threshold is chosen on half of the targets and certified on the other half, "
            "hence twice the planned count"
        )
    c1, c0 = _certifying(claim, n1, n0)
    if (c1, c0) == (n1, n0):
        return "a rule fixed in advance, certified on every target"
    return "a rule fixed on part of the targets and certified on the rest, which the count is for"


def _has(claim, n1, n0):
    """How many targets this audit has, or certifies on, to compare with the need."""
    c1, c0 = _certifying(claim, n1, n0)
    if claim.strategy == "split" or (c1, c0) == (n1, n0):
        return f"this audit has {n1} and {n0}"
    return f"this audit certifies on {c1} and {c0} (of its {n1} and {n0})"
