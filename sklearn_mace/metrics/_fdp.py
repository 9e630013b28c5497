"""Trade-off curves (f-DP) and their certification from a membership test's error rates.

Dong, Roth & Su (2022), "Gaussian differential privacy": a mechanism is f-DP when every test
of "the output came from D" against "from D′" (neighbours) has type II error at least
``f(type I error)``. (ε, δ)-DP is f-DP for the piecewise-linear
``f_{ε,δ}(α) = max(0, 1 − δ − e^ε·α, e^−ε·(1 − δ − α))`` (their Prop. 2.5) and μ-GDP is
``G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)`` (their Def. 2.7). An audit that certifies upper bounds
``(fpr_u, fnr_u)`` on one test's error rates contradicts an f-DP claim when the point lies
below the curve: ``fnr_u < f(fpr_u)`` (or, the curves being symmetric, ``fpr_u < f(fnr_u)``).

These are the pure functions; :class:`~sklearn_mace.algorithm.PrivacyClaim` states a claim
as a curve and :class:`~sklearn_mace.algorithm.AlgorithmAudit` certifies it.
"""

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from ._audit import _cp_upper, _epsilon_from_error_bounds, _error_counts

__all__ = []


def gaussian_tradeoff(alpha, mu):
    """``G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)``: the least type II error of μ-GDP at type I ``α``."""
    return norm.cdf(norm.isf(np.asarray(alpha, dtype=float)) - mu)


def approximate_tradeoff(alpha, epsilon, delta):
    """``f_{ε,δ}(α) = max(0, 1 − δ − e^ε·α, e^−ε·(1 − δ − α))`` (Dong et al. Prop. 2.5)."""
    alpha = np.asarray(alpha, dtype=float)
    one = 1.0 - delta - np.exp(epsilon) * alpha
    two = np.exp(-epsilon) * (1.0 - delta - alpha)
    return np.maximum(0.0, np.maximum(one, two))


def mu_from_error_bounds(fpr_upper, fnr_upper):
    """Largest μ whose curve ``G_μ`` the point ``(fpr_u, fnr_u)`` lies below (0 if none).

    ``fnr_u < Φ(Φ⁻¹(1 − fpr_u) − μ)  ⟺  μ < Φ⁻¹(1 − fpr_u) − Φ⁻¹(fnr_u)``, which is
    symmetric in the two rates (``Φ⁻¹(1 − p) = −Φ⁻¹(p)``), so one formula covers the test
    and its reverse.
    """
    fpr_upper, fnr_upper = np.asarray(fpr_upper, float), np.asarray(fnr_upper, float)
    return np.maximum(0.0, norm.isf(fpr_upper) + norm.isf(fnr_upper))


def epsilon_from_error_bounds(fpr_upper, fnr_upper, delta):
    """Largest ε whose ``f_{ε,δ}`` the point lies below (either orientation; 0 if none)."""
    return _epsilon_from_error_bounds(fpr_upper, fnr_upper, delta)


def gaussian_delta(mu, epsilon):
    """δ(ε) of μ-GDP: ``Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2)`` (Dong et al. Cor. 2.13)."""
    if mu <= 0:
        return 0.0
    return float(
        norm.cdf(-epsilon / mu + mu / 2) - np.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)
    )


def gaussian_epsilon(mu, delta):
    """The ε at which μ-GDP implies (ε, δ)-DP (the inverse of :func:`gaussian_delta`)."""
    if mu <= 0 or gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    if delta <= 0.0:  # μ-GDP with μ > 0 is (ε, 0)-DP for no finite ε
        return float("inf")
    high = 1.0
    while gaussian_delta(mu, high) > delta:
        high *= 2.0
    return float(brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, high, xtol=1e-12))


def select_threshold(members, nonmembers, objective, *, n_members, n_nonmembers, level):
    """The threshold whose certified ``objective(fpr_u, fnr_u)`` is predicted largest.

    ``members``/``nonmembers`` are the selection runs' scores; the error counts of every
    candidate threshold (their unique scores) are scaled to a certifying sample of
    ``n_members``/``n_nonmembers`` and given Clopper–Pearson upper bounds at ``level``, as in
    :func:`~sklearn_mace.metrics.audit_epsilon`'s split strategy. The choice never affects
    validity: the certificate comes from runs the choice did not see.
    """
    members, nonmembers = np.asarray(members, float), np.asarray(nonmembers, float)
    thresholds = np.unique(np.concatenate([members, nonmembers]))
    fn, fp = _error_counts(np.sort(members), np.sort(nonmembers), thresholds)
    fn = fn * (n_members / members.size)
    fp = fp * (n_nonmembers / nonmembers.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = objective(_cp_upper(fp, n_nonmembers, level), _cp_upper(fn, n_members, level))
    gain = np.nan_to_num(np.asarray(gain, dtype=float), nan=-np.inf)
    return float(thresholds[int(np.argmax(gain))])


def equal_error_threshold(members, nonmembers):
    """The threshold whose error rates on these scores are closest to equal (FPR = FNR)."""
    members, nonmembers = (
        np.sort(np.asarray(members, float)),
        np.sort(np.asarray(nonmembers, float)),
    )
    thresholds = np.unique(np.concatenate([members, nonmembers]))
    fn, fp = _error_counts(members, nonmembers, thresholds)
    gap = np.abs(fn / members.size - fp / nonmembers.size)
    return float(thresholds[int(np.argmin(gap))])
