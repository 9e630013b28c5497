"""The link between membership advantage and (ε, δ)-differential privacy.

Two bounds, for two different quantities:

* :func:`advantage_bound` — the largest *membership advantage* (MACE Def. 1) any attacker can
  reach against an (ε, δ)-DP mechanism. It comes from the hypothesis-testing form of DP
  (Wasserman & Zhou 2010; Kairouz, Oh & Viswanath 2015, Thm 2.1): every membership test has
  ``FPR + e^ε·FNR >= 1 − δ`` and ``FNR + e^ε·FPR >= 1 − δ``. It is tight at every prior.
* :func:`individual_risk_bound` — MACE Thm 1.4's ``max |tanh((±ε + λ)/2)|``, which bounds the
  *individual risk* ``|f_p(z)|`` of every record under pure ε-DP (the posterior log-odds move
  by at most ε). As an advantage bound it is loose when the prior is not ½.

:func:`epsilon_from_advantage` inverts :func:`advantage_bound`.
"""

from numbers import Real

import numpy as np

from .._validation import check_prior

__all__ = ["advantage_bound", "epsilon_from_advantage", "individual_risk_bound"]


def _check_delta(delta):
    if isinstance(delta, bool) or not isinstance(delta, Real | np.number):
        raise TypeError(f"delta must be a float in [0, 1); got {delta!r}.")
    if not 0.0 <= float(delta) < 1.0:  # NaN fails too
        raise ValueError(f"delta must be in [0, 1); got {delta!r}.")
    return float(delta)


def _check_epsilon(epsilon):
    eps = np.asarray(epsilon, dtype=float)
    if np.isnan(eps).any() or (eps < 0).any():
        raise ValueError(f"epsilon must be >= 0 (inf allowed); got {epsilon!r}.")
    return eps


def _scalar_or_array(values):
    return float(values) if values.ndim == 0 else values


def advantage_bound(epsilon, prior=0.5, delta=0.0):
    """Largest membership advantage an (ε, δ)-DP mechanism allows at membership prior ``prior``.

    By the hypothesis-testing form of (ε, δ)-DP (Kairouz, Oh & Viswanath 2015, Thm 2.1),
    every membership test's error rates satisfy ``FPR + e^ε·FNR >= 1 − δ`` and
    ``FNR + e^ε·FPR >= 1 − δ``. The advantage ``2·P(correct) − 1 =
    1 − 2·(p·FNR + (1 − p)·FPR)`` (MACE Def. 1) is largest at a vertex of that region: the
    symmetric point ``FPR = FNR = (1 − δ)/(1 + e^ε)`` or the one-sided points
    ``(FPR, FNR) = (0, 1 − δ)`` and ``(1 − δ, 0)``. Hence

    ``Adv_p <= 1 − 2·(1 − δ)·min(p, 1 − p, 1/(1 + e^ε))``.

    The bound is tight: randomized response (plus, for δ > 0, revealing membership with
    probability δ) reaches it. At ``p = ½`` it is ``(e^ε − 1 + 2δ)/(e^ε + 1)``, which at
    ``δ = 0`` is MACE Thm 1.4's ``tanh(ε/2)``. At ``p ≠ ½`` it is tighter than Thm 1.4's
    ``tanh((ε + |λ|)/2)``, which bounds each record's individual risk rather than the
    advantage (see :func:`individual_risk_bound`): at ``p = 0.1, ε = 1`` no attacker beats
    the trivial advantage 0.8, while Thm 1.4 allows 0.921. With ``δ = 0`` and ``ε = 0`` the
    bound is the trivial advantage ``|2p − 1|`` of always guessing the majority.

    Parameters
    ----------
    epsilon : float or array-like of floats >= 0
        Privacy parameter(s); ``inf`` allowed.
    prior : float in (0, 1), default=0.5
        P(member) in the membership experiment.
    delta : float in [0, 1), default=0.0
        The δ of (ε, δ)-DP.

    Returns
    -------
    bound : float or ndarray
        Same shape as ``epsilon``, in ``[|2p − 1|, 1]``.

    See Also
    --------
    epsilon_from_advantage : its inverse.
    individual_risk_bound : MACE Thm 1.4, the bound on each record's risk ``|f_p|``.

    References
    ----------
    Kairouz, Oh & Viswanath (2015), "The Composition Theorem for Differential Privacy",
    Thm 2.1. MACE (TMLR 2023) Def. 1 and Thm 1.4.

    Examples
    --------
    >>> from sklearn_mace.metrics import advantage_bound
    >>> round(advantage_bound(1.0), 4)  # tanh(1/2)
    0.4621
    >>> round(advantage_bound(1.0, prior=0.1), 4)  # the trivial 0.8: no attacker does better
    0.8
    >>> round(advantage_bound(1.0, delta=1e-2), 4)  # (e − 1 + 0.02)/(e + 1)
    0.4675
    """
    p = check_prior(prior)
    d = _check_delta(delta)
    eps = _check_epsilon(epsilon)
    # 1/(1 + e^ε) without overflow at ε = inf: expit(−ε)
    symmetric_error = 0.5 * (1.0 - np.tanh(eps / 2))
    bound = 1.0 - 2.0 * (1.0 - d) * np.minimum(min(p, 1.0 - p), symmetric_error)
    return _scalar_or_array(bound)


def epsilon_from_advantage(advantage, prior=0.5, delta=0.0):
    """Smallest ε whose (ε, δ) bound reaches ``advantage``: (ε', δ)-DP fails for every ε' < ε.

    The exact inverse of :func:`advantage_bound`. An advantage at or below
    ``advantage_bound(0, prior, delta) = 1 − 2·(1 − δ)·min(p, 1 − p)`` (the trivial
    ``|2p − 1|`` when δ = 0) implies nothing (0). Above it only the symmetric vertex can
    reach the advantage, so ``1 − 2·(1 − δ)/(1 + e^ε) = advantage`` gives

    ``ε = log(2·(1 − δ)/(1 − advantage) − 1)``,

    ``inf`` for an advantage of 1. Above the ε = 0 level the answer does not depend on the
    prior, so at ``p ≠ ½`` it jumps: with δ = 0, any advantage above ``|2p − 1|`` implies
    ``ε >= |λ| = |log(p/(1 − p))|`` (beating the majority guess needs the posterior odds to
    cross 1, which ε-DP allows only when ``e^ε`` exceeds the prior odds).

    It is only a lower bound: a mechanism that leaks this much is not (ε', δ)-DP for any
    ε' < ε, but nothing says it is (ε, δ)-DP. It is as trustworthy as the advantage given
    to it: pass a certified lower confidence bound on the advantage, not a plug-in estimate,
    to obtain an ε that holds at that confidence. A plug-in estimate biased upwards (MACE's
    ``U_N`` on null data) turns into a large spurious ε, most of all at ``p ≠ ½``. The ε is
    for the neighbour relation of the experiment behind the advantage: substitute-one for
    MACE's member-vs-fresh-record experiment (see :func:`audit_epsilon` for how to read it
    against an add/remove-one guarantee: pure add/remove-one ε implies substitute-one 2ε).

    Parameters
    ----------
    advantage : float or array-like of floats in [-1, 1]
        Measured (optimal) membership advantage(s).
    prior : float in (0, 1), default=0.5
        P(member) at which the advantage was measured.
    delta : float in [0, 1), default=0.0
        The δ of the (ε, δ)-DP claim being tested.

    Returns
    -------
    epsilon : float or ndarray, >= 0
        Smallest ε whose (ε, δ)-DP bound allows ``advantage``; same shape as ``advantage``.

    See Also
    --------
    advantage_bound : the bound this inverts.

    Examples
    --------
    >>> from sklearn_mace.metrics import epsilon_from_advantage
    >>> round(epsilon_from_advantage(0.46211715726000974), 6)  # 2·artanh(tanh(1/2))
    1.0
    >>> epsilon_from_advantage(0.8, prior=0.1)  # the trivial advantage implies nothing
    0.0
    >>> epsilon_from_advantage(1.0)
    inf
    """
    p = check_prior(prior)
    d = _check_delta(delta)
    adv = np.asarray(advantage, dtype=float)
    if np.isnan(adv).any() or (np.abs(adv) > 1).any():
        raise ValueError(f"advantage must be in [-1, 1]; got {advantage!r}.")
    no_claim = adv <= 1.0 - 2.0 * (1.0 - d) * min(p, 1.0 - p)
    with np.errstate(divide="ignore", invalid="ignore"):  # masked by no_claim below
        eps = np.log(2.0 * (1.0 - d) / (1.0 - adv) - 1.0)
    eps = np.where(no_claim, 0.0, np.maximum(eps, 0.0))
    return _scalar_or_array(eps)


def individual_risk_bound(epsilon, prior=0.5):
    """Largest individual privacy risk ``|f_p(z)|`` of any record under pure ε-DP (MACE Thm 1.4).

    ``|f_p(z)| <= max{|tanh((ε + λ)/2)|, |tanh((−ε + λ)/2)|} = tanh((ε + |λ|)/2)`` with
    ``λ = log(p / (1 − p))``: ``f_p(z) = tanh((log(r(z)/q(z)) + λ)/2)`` (MACE Def. 3) and
    ε-DP keeps ``|log(r/q)| <= ε``. This is a pointwise bound on each record's risk, so it
    needs pure ε-DP (with δ > 0 the likelihood ratio is unbounded on a set of mass δ and no
    pointwise bound holds). It also bounds the advantage, but loosely at ``p ≠ ½``; use
    :func:`advantage_bound` for the advantage.

    Parameters
    ----------
    epsilon : float or array-like of floats >= 0
        Privacy parameter(s); ``inf`` allowed.
    prior : float in (0, 1), default=0.5
        P(member) in the membership experiment.

    Returns
    -------
    bound : float or ndarray
        Same shape as ``epsilon``, in ``[|2p − 1|, 1]``.

    See Also
    --------
    advantage_bound : the tight bound on the membership advantage.

    Examples
    --------
    >>> from sklearn_mace.metrics import individual_risk_bound
    >>> round(individual_risk_bound(1.0), 4)
    0.4621
    >>> round(individual_risk_bound(1.0, prior=0.1), 4)  # tanh((1 + log 9)/2)
    0.9215
    """
    p = check_prior(prior)
    eps = _check_epsilon(epsilon)
    lam = abs(np.log(p / (1.0 - p)))
    return _scalar_or_array(np.tanh((eps + lam) / 2))
