"""One-run audits read against a claimed trade-off curve (Mahloujifar, Melis & Chaudhuri 2025).

Steinke, Nasr & Jagielski (2023) insert ``m`` canaries, each independently with probability
½, train once, and bound the number of correct guesses among ``r`` guesses under (ε, δ)-DP by
a binomial tail plus a δ term (:func:`~sklearn_mace.metrics.one_run_epsilon`). Mahloujifar,
Melis & Chaudhuri ("Auditing f-differential privacy in one run", ICML 2025) bound the same
count under an f-DP claim directly from the curve ``f``: a recursion over the number of
correct guesses that propagates the claim's "blow-up" ``B(x) = 1 − f(x)``; its inverse,
for a symmetric curve, is ``B⁻¹(y) = f(1 − y)``. A claim is rejected at level α when the
recursion started from α's share of the observed correct and wrong guesses cannot stay below
the guess rate ``r/m`` (their Algorithm "audit_rh_with_cap"; the structure follows the public
implementation in DeepMind's ``jax_privacy.auditing``, written here for any curve).

Validity is argued in the paper (their Thm 9 and its proof) and checked here by simulation
(``tests/algorithm/test_algorithm_one_run.py``): a mechanism exactly μ-GDP, audited against
its own μ, is rejected in at most α of the audits.
"""

import math

import numpy as np
from scipy.special import ndtr, ndtri

__all__ = []


def fdp_statistic(blow_up_inverse, n_canaries, n_guesses, n_correct, alpha):
    """Positive when ``n_correct`` of ``n_guesses`` guesses rejects the f-DP claim at α.

    ``blow_up_inverse(y)`` is ``B⁻¹(y) = f(1 − y)`` for the claimed (symmetric) curve ``f``,
    a scalar function (it runs once per correct guess).
    """
    m, r, v = int(n_canaries), int(n_guesses), int(n_correct)
    correct = alpha * v / m
    wrong = alpha * (r - v) / m
    for i in range(v - 1, -1, -1):
        # the wrong-guess mass the claim forces beside the correct-guess mass
        pushed = max(wrong, blow_up_inverse(correct))
        if pushed == wrong:  # nothing moves any more
            break
        correct = min(correct + i / (r - i) * (pushed - wrong), 1.0)
        wrong = pushed
    return correct + wrong - r / m


def gaussian_blow_up_inverse(mu):
    """``B⁻¹(y) = G_μ(1 − y) = Φ(Φ⁻¹(y) − μ)``, scalar and fast."""
    return lambda y: float(ndtr(ndtri(y) - mu))


def approximate_blow_up_inverse(epsilon, delta):
    """``B⁻¹(y) = f_{ε,δ}(1 − y) = max(0, 1 − δ − e^ε·(1 − y), e^−ε·(y − δ))``."""
    grow, shrink = math.exp(epsilon), math.exp(-epsilon)
    return lambda y: max(0.0, 1.0 - delta - grow * (1.0 - y), shrink * (y - delta))


def claim_blow_up_inverse(tradeoff):
    """``B⁻¹(y) = f(1 − y)`` of any vectorised curve (slower: one array call per step)."""
    return lambda y: float(tradeoff(1.0 - y))


def _largest_rejected(statistic, high, n_bisect=40):
    """Largest parameter in [0, high] whose claim ``statistic`` rejects (> 0), the rejection
    region being an interval starting at 0 (a stronger claim is easier to reject)."""
    if statistic(0.0) <= 0:
        return 0.0
    if statistic(high) > 0:
        return float(high)
    low = 0.0
    for _ in range(n_bisect):
        mid = 0.5 * (low + high)
        if statistic(mid) > 0:
            low = mid
        else:
            high = mid
    return float(low)


def one_run_mu_lower_bound(n_canaries, n_guesses, n_correct, alpha, max_mu=20.0):
    """Largest μ for which the guesses reject μ-GDP at level α (0 if none)."""

    def statistic(mu):
        inverse = gaussian_blow_up_inverse(mu)
        return fdp_statistic(inverse, n_canaries, n_guesses, n_correct, alpha)

    return _largest_rejected(statistic, max_mu)


def one_run_epsilon_lower_bound(n_canaries, n_guesses, n_correct, alpha, delta, max_epsilon=30.0):
    """Largest ε for which the guesses reject (ε, δ)-DP (its own curve) at level α."""

    def statistic(epsilon):
        inverse = approximate_blow_up_inverse(epsilon, delta)
        return fdp_statistic(inverse, n_canaries, n_guesses, n_correct, alpha)

    return _largest_rejected(statistic, max_epsilon)


def guess_counts(scores, included, n_positive, n_negative, rng):
    """``(r, v)``: guesses "in" for the ``n_positive`` highest scores, "out" for the
    ``n_negative`` lowest (ties broken at random by ``rng``, a ``RandomState``, as
    :func:`~sklearn_mace.metrics.one_run_epsilon` does), and how many are right."""
    scores = np.asarray(scores, dtype=float)
    included = np.asarray(included, dtype=bool)
    order = np.lexsort((rng.random_sample(scores.size), -scores))
    m = scores.size
    v = int(included[order[:n_positive]].sum() + (~included[order[m - n_negative :]]).sum())
    return n_positive + n_negative, v
