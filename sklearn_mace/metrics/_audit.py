"""Certified ε lower bounds from any attack's membership scores (DP auditing).

Two audits:

* :func:`audit_epsilon` — member and non-member scores, one threshold rule, exact
  (Clopper–Pearson) bounds on its FPR and FNR, and the hypothesis-testing form of
  (ε, δ)-DP (Jagielski, Ullman & Oprea 2020; Nasr et al. 2023). Threshold strategies follow
  DeepMind jax_privacy's ``CanaryScoreAuditor`` (Split / Bonferroni / Explicit).
* :func:`one_run_epsilon` — canaries each inserted with probability ½ into one training run
  (Steinke, Nasr & Jagielski 2023).

And one bound from above: :func:`advantage_upper_bound` — the membership advantage of
*every* threshold rule on the scores is at most the sample's best plus one rule's Hoeffding
deviation (what a "leakage bounded" verdict needs).
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.special import expit, logit
from scipy.stats import beta, binom, norm
from sklearn.utils import check_random_state

from ._dp import _check_delta, epsilon_from_advantage

__all__ = [
    "AdvantageUpperBound",
    "EpsilonAudit",
    "OneRunAudit",
    "advantage_deviation",
    "advantage_upper_bound",
    "audit_epsilon",
    "one_run_epsilon",
]


@dataclass(frozen=True)
class EpsilonAudit:
    """Result of :func:`audit_epsilon`: a certified ε lower bound and its operating point.

    Attributes
    ----------
    epsilon_lower_bound : float
        (1 − α) lower confidence bound on the ε of any (ε, δ)-DP guarantee the scored
        mechanism could have, ``α = 1 − confidence``; 0 when nothing is shown.
    threshold : float
        The rule audited: "member" iff ``score >= threshold``.
    fpr, fnr : float
        Empirical false-positive and false-negative rates of that rule on the rows used for
        the bound.
    fpr_upper, fnr_upper : float
        One-sided Clopper–Pearson upper bounds on the true FPR and FNR, each at level α/2
        (for ``strategy="bonferroni"``: α/(2·n_nonmembers) and α/(2·n_members)).
    advantage_lower_bound : float
        Certified membership advantage of this rule at ``prior``:
        ``max(|2p − 1|, 1 − 2·(p·fnr_upper + (1 − p)·fpr_upper))`` (MACE Def. 1).
    advantage_epsilon_lower_bound : float
        ``epsilon_from_advantage(advantage_lower_bound, prior, delta)``: the ε implied by the
        certified advantage alone; never above ``epsilon_lower_bound``, which uses both error rates.
    strategy : {"split", "bonferroni", "explicit"}
    n_members, n_nonmembers : int
        Rows the bound was computed on (with ``"split"``, the second part only).
    prior, delta, confidence : float
        As given.
    """

    epsilon_lower_bound: float
    threshold: float
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    advantage_lower_bound: float
    advantage_epsilon_lower_bound: float
    strategy: str
    n_members: int
    n_nonmembers: int
    prior: float
    delta: float
    confidence: float


@dataclass(frozen=True)
class OneRunAudit:
    """Result of :func:`one_run_epsilon`.

    Attributes
    ----------
    epsilon_lower_bound : float
        (1 − α) lower confidence bound on ε; 0 when nothing is shown.
    p_value : float
        p-value of "the mechanism is (0, δ)-DP" (for δ = 0: leaks nothing about the canaries).
    n_guesses : int
        ``r``, the guesses made (the rest abstain).
    n_correct : int
        ``v``, the correct guesses.
    n_canaries : int
        ``m``.
    delta, confidence : float
        As given.
    """

    epsilon_lower_bound: float
    p_value: float
    n_guesses: int
    n_correct: int
    n_canaries: int
    delta: float
    confidence: float


# --- validation -----------------------------------------------------------------------------


def _check_scores(scores, name):
    try:
        values = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers; got {scores!r}.") from exc
    if values.ndim != 1:
        values = np.squeeze(values)
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional; got shape {np.shape(scores)}.")
    if values.size == 0:
        raise ValueError(f"{name} is empty; at least one score is needed.")
    if not np.isfinite(values).all():
        raise ValueError(f"{name} contains NaN or infinite values; scores must be finite.")
    return values


def _check_open_unit(value, name):
    if isinstance(value, bool) or not isinstance(value, Real | np.number):
        raise TypeError(f"{name} must be a float in (0, 1); got {value!r}.")
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be in the open interval (0, 1); got {value!r}.")
    return float(value)


def _check_count(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int >= {minimum}; got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}; got {value!r}.")
    return int(value)


# --- the bound ------------------------------------------------------------------------------


def _cp_upper(k, n, level):
    """One-sided Clopper–Pearson upper bound on a proportion: P(Bin(n, u) <= k) = level.

    ``k`` may be fractional (used only to predict a bound when choosing a threshold).
    """
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        upper = beta.ppf(1.0 - level, k + 1.0, np.maximum(n - k, 1e-300))
    return np.where(k < n, upper, 1.0)


def _epsilon_from_error_bounds(fpr_upper, fnr_upper, delta):
    """Smallest ε consistent with FPR + e^ε·FNR >= 1 − δ and FNR + e^ε·FPR >= 1 − δ.

    Solving each for ε at the upper bounds (the weakest rates the data certify) gives
    ``max(0, log((1 − δ − fnr_u)/fpr_u), log((1 − δ − fpr_u)/fnr_u))``; a non-positive
    numerator contributes nothing.
    """
    fpr_upper, fnr_upper = np.asarray(fpr_upper), np.asarray(fnr_upper)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.maximum(1.0 - delta - fnr_upper, 0.0) / fpr_upper)
        two = np.log(np.maximum(1.0 - delta - fpr_upper, 0.0) / fnr_upper)
    return np.maximum(
        0.0,
        np.maximum(
            np.nan_to_num(one, nan=0.0, neginf=0.0), np.nan_to_num(two, nan=0.0, neginf=0.0)
        ),
    )


def _error_counts(members_sorted, nonmembers_sorted, thresholds):
    """False negatives (members below t) and false positives (non-members at or above t)."""
    fn = np.searchsorted(members_sorted, thresholds, side="left")
    fp = nonmembers_sorted.size - np.searchsorted(nonmembers_sorted, thresholds, side="left")
    return fn, fp


def _candidate_thresholds(members, nonmembers, max_thresholds):
    pooled = np.concatenate([members, nonmembers])
    if max_thresholds is None:
        return np.unique(pooled)
    return np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, max_thresholds)))


def _result(
    members, nonmembers, threshold, fpr_level, fnr_level, strategy, prior, delta, confidence
):
    fn, fp = _error_counts(np.sort(members), np.sort(nonmembers), np.array([threshold]))
    n1, n0 = members.size, nonmembers.size
    fnr_upper = float(_cp_upper(fn, n1, fnr_level)[0])
    fpr_upper = float(_cp_upper(fp, n0, fpr_level)[0])
    epsilon = float(_epsilon_from_error_bounds(fpr_upper, fnr_upper, delta))
    advantage = max(abs(2 * prior - 1), 1.0 - 2.0 * (prior * fnr_upper + (1 - prior) * fpr_upper))
    return EpsilonAudit(
        epsilon_lower_bound=epsilon,
        threshold=float(threshold),
        fpr=float(fp[0] / n0),
        fnr=float(fn[0] / n1),
        fpr_upper=fpr_upper,
        fnr_upper=fnr_upper,
        advantage_lower_bound=float(advantage),
        advantage_epsilon_lower_bound=float(epsilon_from_advantage(advantage, prior, delta)),
        strategy=strategy,
        n_members=int(n1),
        n_nonmembers=int(n0),
        prior=prior,
        delta=delta,
        confidence=confidence,
    )


def _wilson_upper(k, n, level):
    """Wilson score upper bound: a cheap, close stand-in for Clopper–Pearson, for ranking only."""
    z = norm.isf(level)
    p_hat = np.asarray(k, dtype=float) / n
    spread = z * np.sqrt(p_hat * (1 - p_hat) / n + z**2 / (4 * n**2))
    return (p_hat + z**2 / (2 * n) + spread) / (1 + z**2 / n)


def _gain(fpr_upper, fnr_upper, *, delta, objective, prior):
    if objective == "epsilon":
        return _epsilon_from_error_bounds(fpr_upper, fnr_upper, delta)
    return -(prior * fnr_upper + (1 - prior) * fpr_upper)


def _best_threshold(
    members,
    nonmembers,
    thresholds,
    fpr_level,
    fnr_level,
    *,
    delta,
    objective,
    prior,
    n_members=None,
    n_nonmembers=None,
    n_exact=256,
):
    """The candidate threshold whose certified ε (or advantage at ``prior``) is largest.

    With ``n_members``/``n_nonmembers`` given (the split strategy), the bound is predicted
    for a sample of that size with the rates seen here, so the choice favours thresholds
    that stay strong on the held-out part rather than those that win by a handful of rows.
    Candidates are ranked with Wilson bounds and only the best ``n_exact`` get exact
    Clopper–Pearson bounds (the costly part). Which threshold is chosen never affects
    validity: the split bounds come from rows the choice did not see, and the Bonferroni
    bounds hold for every threshold at once.
    """
    fn, fp = _error_counts(np.sort(members), np.sort(nonmembers), thresholds)
    n1 = members.size if n_members is None else n_members
    n0 = nonmembers.size if n_nonmembers is None else n_nonmembers
    fp = fp * (n0 / nonmembers.size)
    fn = fn * (n1 / members.size)
    criteria = dict(delta=delta, objective=objective, prior=prior)
    if thresholds.size > n_exact:
        with np.errstate(invalid="ignore", divide="ignore"):
            rough = _gain(
                _wilson_upper(fp, n0, fpr_level), _wilson_upper(fn, n1, fnr_level), **criteria
            )
        keep = np.argpartition(-rough, n_exact - 1)[:n_exact]
        thresholds, fp, fn = thresholds[keep], fp[keep], fn[keep]
    gain = _gain(_cp_upper(fp, n0, fpr_level), _cp_upper(fn, n1, fnr_level), **criteria)
    return thresholds[int(np.argmax(gain))]


def _stratified_split(values, fraction, rng, name):
    n_first = int(round(fraction * values.size))
    if not 1 <= n_first <= values.size - 1:
        raise ValueError(
            f"threshold='split' needs at least one row of {name} in each part; "
            f"{values.size} row(s) with split_fraction={fraction} leave {n_first} and "
            f"{values.size - n_first}. Use more rows, another split_fraction, or "
            f"threshold='bonferroni'."
        )
    order = rng.permutation(values.size)
    return values[order[:n_first]], values[order[n_first:]]


def audit_epsilon(
    member_scores,
    nonmember_scores,
    *,
    delta=0.0,
    confidence=0.95,
    threshold="split",
    prior=0.5,
    split_fraction=0.5,
    max_thresholds=None,
    objective="epsilon",
    random_state=None,
):
    """Certified lower bound on ε from membership scores of members and non-members.

    Any attack's scores will do (``decision_function``, log-likelihood ratios, negative losses):
    larger means more likely a member. A query whose smaller values mean member (a distance to
    the release, a loss) declares it; take its scores with
    :func:`~sklearn_mace.metrics.membership_scores`, which turns them the right way up. A
    threshold rule "member iff ``score >= t``" is a membership test, and under (ε, δ)-DP every
    test satisfies ``FPR + e^ε·FNR >= 1 − δ`` and ``FNR + e^ε·FPR >= 1 − δ`` (Kairouz, Oh &
    Viswanath 2015, Thm 2.1). With exact one-sided Clopper–Pearson upper bounds ``fpr_u``,
    ``fnr_u`` on the rule's error rates, any ε below

    ``ε_lo = max(0, log((1 − δ − fnr_u)/fpr_u), log((1 − δ − fpr_u)/fnr_u))``

    is ruled out (Jagielski, Ullman & Oprea 2020, §3; Nasr et al. 2023). The FPR and FNR
    bounds each fail with probability at most α/2, ``α = 1 − confidence``, so the claim
    ``ε >= ε_lo`` holds with probability at least ``1 − α`` (familywise, over both rates
    and, for ``"bonferroni"``, every threshold). It is valid at low FPR, where tight audits
    live: a threshold that flags half the members and no non-member certifies a large ε.

    The same bounds certify the rule's membership advantage at ``prior`` (MACE Def. 1),
    reported with the ε it implies (:func:`~sklearn_mace.metrics.epsilon_from_advantage`).

    The Clopper–Pearson bounds treat each score as an independent draw from its class's
    score distribution: exact for repeated training runs with one canary each (Jagielski et
    al.), and for a fixed release in MACE's experiment (a random training record vs a fresh
    one). For many members of one training run, :func:`one_run_epsilon` with randomized
    canaries is the audit whose guarantee needs no such assumption.

    **Which neighbour relation the bound refutes.** It refutes DP for the neighbouring
    datasets that the two score samples come from. Members of one training set against
    fresh records of the population (MACE's experiment, the audits of
    :mod:`sklearn_mace.report`) is the *substitute-one* relation: the datasets differ in
    one record replaced by another. With one canary trained in or left out (Jagielski et
    al.) it is *add/remove-one*. Guarantees of DP-SGD accountants (opacus) and DP
    synthesizers (smartnoise) are usually stated for add/remove-one; an (ε, δ) guarantee
    there implies (2ε, (1 + e^ε)·δ) for substitute-one (group privacy over the two
    changes), so a certified substitute-one bound ``E`` at δ = 0 refutes a pure
    add/remove-one ε below ``E/2``, and nothing above it.

    Threshold strategies (as in jax_privacy's ``CanaryScoreAuditor``):

    * ``"split"`` (default): a seeded random split of each class; the threshold with the
      largest bound is chosen on the first part (``split_fraction`` of the rows) and the
      bound is computed on the other part only, at α/2 per rate.
    * ``"bonferroni"``: every candidate threshold on all rows, the largest bound taken. Each
      FPR bound is at level α/(2·n_nonmembers) and each FNR bound at α/(2·n_members). This
      union bound runs over the error *counts*, not the thresholds: for a count k, the
      thresholds whose true FPR exceeds the bound for k form one interval, and the count
      falls monotonically with the threshold, so "some threshold with count <= k is under-
      covered" is one event, of probability at most its level; a class of n rows has n
      counts with a non-trivial bound. So the claim holds simultaneously for every
      threshold, including thresholds read off the data, which a correction by the number
      of distinct scores would not guarantee. ``max_thresholds`` only saves time.
    * a float: that threshold on all rows, no correction ("explicit"). Choose it before
      seeing these scores, or the confidence is void.

    Parameters
    ----------
    member_scores : array-like of shape (n_members,)
        Attack scores of members (records in the training set).
    nonmember_scores : array-like of shape (n_nonmembers,)
        Attack scores of non-members.
    delta : float in [0, 1), default=0.0
        The δ of the (ε, δ)-DP claim being audited.
    confidence : float in (0, 1), default=0.95
        ``1 − α``.
    threshold : {"split", "bonferroni"} or float, default="split"
        How the threshold is chosen (above).
    prior : float in (0, 1), default=0.5
        Membership prior for ``advantage_lower_bound`` and ``advantage_epsilon_lower_bound``.
    split_fraction : float in (0, 1), default=0.5
        Fraction of each class used to choose the threshold with ``"split"``.
    max_thresholds : int >= 2, default=None
        Try only this many thresholds (quantiles of the pooled scores) instead of every
        distinct score. Never affects validity.
    objective : {"epsilon", "advantage"}, default="epsilon"
        What the chosen threshold maximizes: the ε bound (usually a low-FPR threshold, where
        the likelihood ratio is largest) or the certified advantage at ``prior`` (a central
        threshold). Both results are valid; they answer different questions. Ignored for
        an explicit threshold.
    random_state : int, RandomState instance or None, default=None
        Seeds the split.

    Returns
    -------
    audit : EpsilonAudit
        ``epsilon_lower_bound`` first, then the operating point and its bounds.

    See Also
    --------
    one_run_epsilon : the one-training-run audit with canaries.
    sklearn_mace.metrics.advantage_bound : the (ε, δ) bound on the advantage.

    References
    ----------
    Jagielski, Ullman & Oprea (2020), "Auditing Differentially Private Machine Learning: How
    Private is Private SGD?", §3. Nasr et al. (2023), "Tight Auditing of Differentially
    Private Machine Learning". Kairouz, Oh & Viswanath (2015), Thm 2.1.

    Examples
    --------
    Half of 1000 members are found at no false positive among 1000 non-members:

    >>> import numpy as np
    >>> from sklearn_mace.metrics import audit_epsilon
    >>> members = np.r_[np.ones(500), np.zeros(500)]
    >>> nonmembers = np.zeros(1000)
    >>> audit = audit_epsilon(members, nonmembers, threshold=1.0)
    >>> round(audit.epsilon_lower_bound, 2), audit.fpr, audit.fnr
    (4.85, 0.0, 0.5)
    >>> audit_epsilon(members, nonmembers, random_state=0).epsilon_lower_bound > 3
    True
    """
    members = _check_scores(member_scores, "member_scores")
    nonmembers = _check_scores(nonmember_scores, "nonmember_scores")
    delta = _check_delta(delta)
    confidence = _check_open_unit(confidence, "confidence")
    prior = _check_open_unit(prior, "prior")
    split_fraction = _check_open_unit(split_fraction, "split_fraction")
    if max_thresholds is not None:
        max_thresholds = _check_count(max_thresholds, "max_thresholds", 2)
    if objective not in ("epsilon", "advantage"):
        raise ValueError(f"objective must be 'epsilon' or 'advantage'; got {objective!r}.")
    alpha = 1.0 - confidence
    choice = dict(delta=delta, objective=objective, prior=prior)
    common = dict(prior=prior, delta=delta, confidence=confidence)

    if isinstance(threshold, str):
        if threshold == "bonferroni":
            fpr_level = alpha / (2 * nonmembers.size)
            fnr_level = alpha / (2 * members.size)
            candidates = _candidate_thresholds(members, nonmembers, max_thresholds)
            best = _best_threshold(members, nonmembers, candidates, fpr_level, fnr_level, **choice)
            return _result(members, nonmembers, best, fpr_level, fnr_level, "bonferroni", **common)
        if threshold == "split":
            rng = check_random_state(random_state)
            members_a, members_b = _stratified_split(members, split_fraction, rng, "member_scores")
            nonmembers_a, nonmembers_b = _stratified_split(
                nonmembers, split_fraction, rng, "nonmember_scores"
            )
            candidates = _candidate_thresholds(members_a, nonmembers_a, max_thresholds)
            best = _best_threshold(
                members_a,
                nonmembers_a,
                candidates,
                alpha / 2,
                alpha / 2,
                n_members=members_b.size,
                n_nonmembers=nonmembers_b.size,
                **choice,
            )
            return _result(members_b, nonmembers_b, best, alpha / 2, alpha / 2, "split", **common)
        raise ValueError(
            f"threshold must be 'split', 'bonferroni' or a finite number; got {threshold!r}."
        )
    if isinstance(threshold, bool) or not isinstance(threshold, Real | np.number):
        raise TypeError(
            f"threshold must be 'split', 'bonferroni' or a finite number; got {threshold!r}."
        )
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be finite; got {threshold!r}.")
    return _result(
        members, nonmembers, float(threshold), alpha / 2, alpha / 2, "explicit", **common
    )


# --- the bound from above -------------------------------------------------------------------


@dataclass(frozen=True)
class AdvantageUpperBound:
    """Result of :func:`advantage_upper_bound`: how far any threshold rule can separate.

    Attributes
    ----------
    advantage_upper_bound : float
        (1 − α) upper confidence bound, ``α = 1 − confidence``, on the largest membership
        advantage at ``prior`` (MACE Def. 1) of any threshold rule on the scores, in either
        direction ("member iff score >= t" or "member iff score < t", randomized ones
        included). Never below ``trivial_advantage``; at most 1.
    advantage_epsilon_upper_bound : float
        ``epsilon_from_advantage(advantage_upper_bound, prior, delta)``: no threshold rule on
        these scores could certify an advantage implying a larger ε. It bounds the advantage
        route only: the tails of the score distributions may still refute a larger ε (a
        low-FPR rule), which no finite sample rules out.
    advantage_estimate : float
        The largest advantage of a threshold rule on the sample itself (plug-in, biased
        upwards by the choice of the threshold).
    trivial_advantage : float
        ``|2p − 1|``, the advantage of always guessing the likelier side.
    deviation : float
        What the bound adds to ``advantage_estimate``: Hoeffding's one-sided deviation of one
        rule's empirical advantage, at level α/2 per direction.
    n_members, n_nonmembers : int
        Rows the bound was computed on.
    prior, delta, confidence : float
        As given.
    """

    advantage_upper_bound: float
    advantage_epsilon_upper_bound: float
    advantage_estimate: float
    trivial_advantage: float
    deviation: float
    n_members: int
    n_nonmembers: int
    prior: float
    delta: float
    confidence: float


def advantage_deviation(n_members, n_nonmembers, prior, level):
    """``c`` with ``P(A(t) − A_n(t) >= c) <= level`` for any one threshold ``t`` fixed in advance.

    ``A_n(t) = 2·(p·(1 − F1n(t−)) + (1 − p)·F0n(t−)) − 1`` averages independent indicators,
    ``n1`` of range ``2p/n1`` and ``n0`` of range ``2(1 − p)/n0``, so by Hoeffding's
    inequality (1963, Thm 2) ``c = sqrt(ln(1/level)·(4p²/n1 + 4(1 − p)²/n0)/2)``, whatever
    the score distributions (continuous, discrete, tied). :func:`advantage_upper_bound` adds
    it to the sample's best threshold advantage.

    Parameters
    ----------
    n_members, n_nonmembers : int >= 1
        Scores of each class.
    prior : float in (0, 1)
        Membership prior of the advantage.
    level : float in (0, 1)
        The probability that one rule's advantage exceeds its empirical value by ``c`` or
        more.

    Returns
    -------
    deviation : float
        ``c``.

    See Also
    --------
    advantage_upper_bound : the bound that adds it.

    References
    ----------
    Hoeffding (1963), "Probability inequalities for sums of bounded random variables",
    Thm 2.

    Examples
    --------
    >>> from sklearn_mace.metrics import advantage_deviation
    >>> round(advantage_deviation(1000, 1000, 0.5, 0.025), 4)
    0.0607
    """
    spread = 4 * prior**2 / n_members + 4 * (1 - prior) ** 2 / n_nonmembers
    return float(np.sqrt(np.log(1.0 / level) * spread / 2.0))


def _threshold_rates(members, nonmembers):
    """``F1(t−)`` and ``F0(t−)`` at every threshold that makes a different rule (and +∞)."""
    members, nonmembers = np.sort(members), np.sort(nonmembers)
    thresholds = np.unique(np.concatenate([members, nonmembers]))
    below_1 = np.searchsorted(members, thresholds, side="left") / members.size
    below_0 = np.searchsorted(nonmembers, thresholds, side="left") / nonmembers.size
    return np.r_[below_1, 1.0], np.r_[below_0, 1.0]


def advantage_upper_bound(
    member_scores, nonmember_scores, *, prior=0.5, delta=0.0, confidence=0.95
):
    """Certified upper bound on the membership advantage of every threshold rule on scores.

    The counterpart of :func:`audit_epsilon`'s lower bounds: where those say "this rule
    separates members from non-members by *at least* so much", this says "no threshold on
    these scores separates them by *more* than so much". A threshold rule "member iff
    ``score >= t``" has advantage ``A(t) = 2·(p·TPR(t) + (1 − p)·TNR(t)) − 1`` at prior
    ``p`` (MACE Def. 1); with ``F1``, ``F0`` the member and non-member score distributions,
    ``TPR(t) = 1 − F1(t−)`` and ``TNR(t) = F0(t−)``, and the reversed rule ("member iff
    ``score < t``") has advantage ``−A(t)``. So the best threshold rule in either direction
    — randomized ones are mixtures, no better — has advantage ``sup_t |A(t)|``, at least the
    trivial ``|2p − 1|`` (``t = ±∞``).

    The bound is the sample's best, ``sup_t |A_n(t)|``, plus a deviation ``c``. It holds
    because the sample's best is at least the sample's value at the *true* best threshold
    ``t*`` (of each direction), which is fixed before the data are drawn: ``sup_t A(t) >
    sup_t A_n(t) + c`` implies ``A(t*) − A_n(t*) > c``, one rule's deviation, which
    Hoeffding's inequality bounds (:func:`advantage_deviation`, at α/2 per direction) for any
    score distributions, continuous, discrete or tied. No band over every threshold is
    needed, which makes the bound tighter than two simultaneous Kolmogorov–Smirnov bands
    on ``F1`` and ``F0`` (about two thirds of their width at equal sizes and levels).

    Why every threshold rather than one rule: a card's "leakage bounded" must mean that no
    reading of the analysis's scores separates members from non-members by more than the
    bound, not only the rule its lower bound happened to certify (a low-FPR rule chosen for
    its ε has a small advantage by construction). The bound concerns the scores given — an
    attack's held-out scores — not every attack: a stronger attack may separate more.

    The deviation treats each score as an independent draw from its class's distribution, as
    :func:`audit_epsilon` does; cross-fitted (held-out) scores satisfy this approximately.

    Parameters
    ----------
    member_scores : array-like of shape (n_members,)
        Scores of members (larger or smaller may mean member: both directions are bounded).
    nonmember_scores : array-like of shape (n_nonmembers,)
        Scores of non-members.
    prior : float in (0, 1), default=0.5
        Membership prior of the advantage.
    delta : float in [0, 1), default=0.0
        The δ of ``advantage_epsilon_upper_bound``.
    confidence : float in (0, 1), default=0.95
        ``1 − α``.

    Returns
    -------
    bound : AdvantageUpperBound
        ``advantage_upper_bound`` first, then the ε it corresponds to, the sample's best
        advantage and the deviation.

    See Also
    --------
    audit_epsilon : the certified lower bounds.
    sklearn_mace.metrics.bounded_sample_size : the sample that bounds a null audit.

    References
    ----------
    Hoeffding (1963), "Probability inequalities for sums of bounded random variables",
    Thm 2; MACE (TMLR 2023), Def. 1.

    Examples
    --------
    Scores that carry no membership information, 2000 of each:

    >>> import numpy as np
    >>> from sklearn_mace.metrics import advantage_upper_bound
    >>> rng = np.random.default_rng(0)
    >>> bound = advantage_upper_bound(rng.normal(size=2000), rng.normal(size=2000))
    >>> round(bound.advantage_upper_bound, 3), round(bound.deviation, 3)
    (0.061, 0.043)
    """
    members = _check_scores(member_scores, "member_scores")
    nonmembers = _check_scores(nonmember_scores, "nonmember_scores")
    prior = _check_open_unit(prior, "prior")
    delta = _check_delta(delta)
    confidence = _check_open_unit(confidence, "confidence")
    deviation = advantage_deviation(members.size, nonmembers.size, prior, (1 - confidence) / 2)
    below_1, below_0 = _threshold_rates(members, nonmembers)
    advantage = 2.0 * (prior * (1.0 - below_1) + (1.0 - prior) * below_0) - 1.0
    estimate = float(np.max(np.abs(advantage)))
    trivial = abs(2 * prior - 1)
    upper = float(min(max(estimate + deviation, trivial), 1.0))
    return AdvantageUpperBound(
        advantage_upper_bound=upper,
        advantage_epsilon_upper_bound=float(epsilon_from_advantage(upper, prior, delta)),
        advantage_estimate=estimate,
        trivial_advantage=trivial,
        deviation=deviation,
        n_members=int(members.size),
        n_nonmembers=int(nonmembers.size),
        prior=prior,
        delta=delta,
        confidence=confidence,
    )


# --- one training run -----------------------------------------------------------------------


def _one_run_p_value(epsilon, n_canaries, n_guesses, n_correct, delta):
    """P[W >= v] bound for an (ε, δ)-DP mechanism (Steinke, Nasr & Jagielski 2023).

    Pure DP (their Thm 3.1): the number of correct guesses W is stochastically dominated by
    ``Binomial(r, e^ε/(1 + e^ε))``, so ``P[W >= v] <= f(v) = P[Bin(r, q) >= v]``. For δ > 0
    their bound adds ``2·m·δ·max_{1<=i<=v} (f(v − i) − f(v))/i`` (the p-value of their
    audit algorithm, Algorithm 2).
    """
    q = expit(epsilon)
    tail = binom.sf(n_correct - 1, n_guesses, q)
    if delta == 0.0 or n_correct == 0:
        return min(float(tail), 1.0)
    i = np.arange(1, n_correct + 1)
    between = binom.sf(n_correct - i - 1, n_guesses, q) - tail  # P[v − i <= Bin < v]
    return min(float(tail + 2.0 * n_canaries * delta * np.max(between / i)), 1.0)


def _one_run_p_values(epsilons, n_canaries, n_guesses, n_correct, delta):
    """:func:`_one_run_p_value` at every ε of ``epsilons`` at once (the same numbers: one
    vectorized call of the binomial's tail instead of two per ε)."""
    q = expit(np.asarray(epsilons, dtype=float))
    tail = binom.sf(n_correct - 1, n_guesses, q)
    if delta == 0.0 or n_correct == 0:
        return np.minimum(tail, 1.0)
    i = np.arange(1, n_correct + 1)
    between = binom.sf(n_correct - i[:, None] - 1, n_guesses, q[None, :]) - tail
    return np.minimum(tail + 2.0 * n_canaries * delta * np.max(between / i[:, None], axis=0), 1.0)


def one_run_epsilon(
    scores,
    included,
    *,
    n_positive_guesses,
    n_negative_guesses=0,
    delta=0.0,
    confidence=0.95,
    random_state=None,
):
    """Certified ε lower bound from canaries inserted into one training run.

    Steinke, Nasr & Jagielski (2023), "Privacy Auditing with One (1) Training Run": each of
    ``m`` canaries is included in the training set independently with probability ½. The
    auditor guesses "in" for the ``n_positive_guesses`` highest scores and "out" for the
    ``n_negative_guesses`` lowest, abstaining on the rest; ``v`` of the ``r`` guesses are
    right. Under ε-DP, ``v`` is stochastically dominated by ``Binomial(r, e^ε/(1 + e^ε))``
    (their Thm 3.1), so ε-DP is rejected at level α when ``P[Bin(r, e^ε/(1+e^ε)) >= v] <= α``.
    With δ = 0 the largest such ε is exact: ``logit`` of the one-sided Clopper–Pearson lower
    bound on the guessing accuracy ``v/r``. With δ > 0 the p-value gains their δ term
    (``2·m·δ·max_i (f(v − i) − f(v))/i``, see their Algorithm 2) and the largest rejected ε is
    found on a grid refined by bisection. Any ε whose p-value is at most α is a valid
    (1 − α) lower bound: the tail bound holds at every ε above the true one.

    Ties in the scores are broken at random (``random_state``), never by position, so
    canaries listed in membership order cannot leak through the ranking.

    Each canary is either in the training run or not, so the bound refutes *add/remove-one*
    (ε, δ)-DP, the relation DP-SGD accountants state (see :func:`audit_epsilon` for the
    substitute-one relation of member-vs-fresh-record audits).

    Parameters
    ----------
    scores : array-like of shape (m,)
        Attack scores of the canaries, larger = more likely included.
    included : array-like of bool of shape (m,)
        Whether each canary was in the training run (drawn with probability ½ each; the
        guarantee needs that randomization).
    n_positive_guesses : int >= 0
        Guess "in" for this many top-scored canaries.
    n_negative_guesses : int >= 0, default=0
        Guess "out" for this many bottom-scored canaries. At least one guess in all.
    delta : float in [0, 1), default=0.0
        The δ of the (ε, δ)-DP claim being audited.
    confidence : float in (0, 1), default=0.95
        ``1 − α``.
    random_state : int, RandomState instance or None, default=None
        Breaks ties in the scores.

    Returns
    -------
    audit : OneRunAudit
        ``epsilon_lower_bound``, the p-value of "(0, δ)-DP", and the guess counts.

    See Also
    --------
    audit_epsilon : the audit from separate member and non-member scores.

    Examples
    --------
    1000 canaries, the top 100 guessed "in" and 95 of them right:

    >>> import numpy as np
    >>> from sklearn_mace.metrics import one_run_epsilon
    >>> scores = np.arange(1000.0)[::-1]
    >>> included = np.r_[np.ones(95), np.zeros(5), np.arange(900) % 2].astype(bool)
    >>> audit = one_run_epsilon(scores, included, n_positive_guesses=100)
    >>> audit.n_correct, round(audit.epsilon_lower_bound, 2)
    (95, 2.17)
    """
    values = _check_scores(scores, "scores")
    flags = np.asarray(included)
    if flags.shape != values.shape:
        raise ValueError(
            f"included must have one entry per score: got shape {flags.shape} for "
            f"{values.size} scores."
        )
    if flags.dtype != bool:
        if not np.isin(flags, [0, 1]).all():
            raise ValueError("included must hold booleans (or 0/1): True = in the training run.")
        flags = flags.astype(bool)
    m = values.size
    n_pos = _check_count(n_positive_guesses, "n_positive_guesses", 0)
    n_neg = _check_count(n_negative_guesses, "n_negative_guesses", 0)
    if not 1 <= n_pos + n_neg <= m:
        raise ValueError(
            f"n_positive_guesses + n_negative_guesses must be between 1 and the number of "
            f"canaries ({m}); got {n_pos} + {n_neg}."
        )
    delta = _check_delta(delta)
    alpha = 1.0 - _check_open_unit(confidence, "confidence")
    rng = check_random_state(random_state)

    order = np.lexsort((rng.random_sample(m), -values))  # by score descending, ties at random
    v = int(flags[order[:n_pos]].sum() + (~flags[order[m - n_neg :]]).sum())
    r = n_pos + n_neg

    p_value = _one_run_p_value(0.0, m, r, v, delta)
    # pure DP: P[Bin(r, q) >= v] <= α  ⟺  q <= Beta⁻¹(α; v, r − v + 1)
    q_low = beta.ppf(alpha, v, r - v + 1) if v > 0 else 0.0
    eps_pure = float(logit(q_low)) if q_low > 0.5 else 0.0
    epsilon = eps_pure if delta == 0.0 else _largest_rejected(m, r, v, delta, alpha, eps_pure)
    return OneRunAudit(
        epsilon_lower_bound=max(epsilon, 0.0),
        p_value=p_value,
        n_guesses=r,
        n_correct=v,
        n_canaries=m,
        delta=delta,
        confidence=1.0 - alpha,
    )


def _largest_rejected(m, r, v, delta, alpha, eps_pure, n_grid=200, n_bisect=40):
    """Largest ε in [0, eps_pure] with p-value <= α (the δ term only raises the p-value)."""
    if eps_pure <= 0.0:
        return 0.0
    grid = np.linspace(0.0, eps_pure, n_grid)
    rejected = _one_run_p_values(grid, m, r, v, delta) <= alpha
    if not rejected.any():
        return 0.0
    last = int(np.flatnonzero(rejected)[-1])
    if last == n_grid - 1:
        return eps_pure
    low, high = grid[last], grid[last + 1]
    for _ in range(n_bisect):
        mid = 0.5 * (low + high)
        if _one_run_p_value(mid, m, r, v, delta) <= alpha:
            low = mid
        else:
            high = mid
    return float(low)
