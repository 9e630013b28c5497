"""Success rates with exact binomial intervals, anonymeter's residual risk, the correction."""

import warnings

import numpy as np
from scipy.stats.contingency import odds_ratio

from ..density._histogram import clopper_pearson_interval

__all__ = [
    "RESULT_COLUMNS",
    "clopper_pearson",
    "family_confidence",
    "residual_risk",
    "risk_row",
]

RESULT_COLUMNS = [
    "n_targets",
    "attack_rate",
    "attack_low",
    "attack_high",
    "n_control",
    "control_rate",
    "control_low",
    "control_high",
    "baseline_rate",
    "risk",
    "risk_low",
    "risk_high",
]


def clopper_pearson(k, n, confidence):
    """Exact two-sided interval for ``k / n`` as two floats (see
    :func:`~sklearn_mace.density.clopper_pearson_interval`, which it calls)."""
    low, high = clopper_pearson_interval(k, n, confidence)
    return float(low), float(high)


def _risk_at(psi, q):
    """The risk ``1 − q_a/q`` of a failure odds ratio ``psi`` at the control's failure rate ``q``.

    ``q_a = psi·q / (1 − q + psi·q)`` is the targets' failure rate with odds ratio ``psi``;
    ``psi = inf`` is ``q_a = 1`` and ``psi = 0`` is ``q_a = 0``."""
    if psi == 0.0:
        return 1.0
    if q == 0.0:
        return -np.inf if np.isinf(psi) else 1.0 - psi
    if np.isinf(psi):
        return 1.0 - 1.0 / q
    return 1.0 - psi / (1.0 - q + psi * q)


def _odds_ratio_interval(f_attack, n_attack, f_control, n_control, alpha):
    """The risk's interval through the failures' odds ratio, at level ``1 − alpha``.

    Fisher's exact conditional interval on the odds ratio ``psi`` of failing (targets against
    controls) at ``1 − 0.9·alpha``, and the control's Clopper–Pearson interval on its failure
    rate ``q`` at ``1 − 0.1·alpha``: the risk ``_risk_at(psi, q)`` is monotone in each, so
    its extremes over the two intervals bound it whenever both hold."""
    table = [[f_attack, n_attack - f_attack], [f_control, n_control - f_control]]
    psi = odds_ratio(table, kind="conditional").confidence_interval(1.0 - 0.9 * alpha)
    q_lo, q_hi = clopper_pearson(f_control, n_control, 1.0 - 0.1 * alpha)
    low = min(_risk_at(float(psi.high), q) for q in (q_lo, q_hi))
    high = max(_risk_at(float(psi.low), q) for q in (q_lo, q_hi))
    return low, high


def _rates_interval(k_attack, n_attack, k_control, n_control, alpha):
    """The risk's interval from the two rates' Clopper–Pearson intervals at ``1 − alpha/2``."""
    a_lo, a_hi = clopper_pearson(k_attack, n_attack, 1.0 - alpha / 2.0)
    c_lo, c_hi = clopper_pearson(k_control, n_control, 1.0 - alpha / 2.0)
    low = -np.inf if c_hi == 1.0 else (a_lo - c_hi) / (1.0 - c_hi)
    return low, (a_hi - c_lo) / (1.0 - c_lo)


def family_confidence(confidence, n_rows):
    """Level of each of ``n_rows`` intervals so that all of them hold together at ``confidence``.

    Bonferroni, ``1 − (1 − confidence) / n_rows``: the rule by which the audit report
    corrects every certified number of a card (``AuditEngine.claim_confidence``), applied
    to the disclosure rows of one release (:func:`disclosure_summary`).

    Parameters
    ----------
    confidence : float in (0, 1)
        Level of the family.
    n_rows : int
        Intervals in the family (at least 1).

    Returns
    -------
    level : float

    Examples
    --------
    >>> round(family_confidence(0.95, 20), 6)
    0.9975
    """
    return 1.0 - (1.0 - confidence) / max(int(n_rows), 1)


def residual_risk(k_attack, n_attack, k_control, n_control, confidence, odds_share=0.0):
    """anonymeter's risk ``(a − c) / (1 − c)`` and an exact interval at level ``confidence``.

    ``a`` is the attack's success rate on the targets (records the generator was trained on),
    ``c`` the same attack's rate on control records (same population, not trained on):
    the share of the control's failures that the targets' extra success makes up
    (Giomi et al., "A Unified Framework for Quantifying Privacy Risk in Synthetic Data",
    PoPETs 2023(2), arXiv:2211.10459: the privacy risk from the "residual success rate";
    anonymeter 1.1.0, ``stats.confidence.residual_success``). In failure rates ``q_a = 1 −
    a`` and ``q = 1 − c`` the risk is ``1 − q_a / q``: one minus the ratio of the failure
    rates. anonymeter uses Wilson rates, a delta-method error and clips the risk to [0, 1];
    this risk is not clipped (a negative value means the control was attacked more
    successfully than the targets).

    The interval (α = 1 − confidence) is exact; with ``odds_share = s > 0`` it is the
    intersection of two exact intervals:

    * at level ``1 − s·α``, through the odds ratio ``ψ`` of failing (targets against
      controls): Fisher's exact conditional interval on ``ψ`` (Cornfield 1956; scipy's
      ``odds_ratio(kind="conditional")``) at ``1 − 0.9·s·α`` and the Clopper–Pearson
      interval on ``q`` at ``1 − 0.1·s·α``. The risk ``1 − ψ / (1 − q + ψ·q)`` is
      monotone in ``ψ`` and in ``q``, so its extremes over the two intervals bound it when
      both hold. Where the control almost always succeeds (``q`` small) the risk is nearly
      ``1 − ψ`` whatever ``q``, and this interval is up to half as wide as the second (a
      third as wide at a few hundred trials and ``c`` = 0.99);
    * at level ``1 − (1 − s)·α``, from the rates' Clopper–Pearson intervals ``[a_lo,
      a_hi]`` and ``[c_lo, c_hi]``, each at ``1 − (1 − s)·α/2``: ``[(a_lo − c_hi)/(1 −
      c_hi), (a_hi − c_lo)/(1 − c_lo)]`` (the risk increases in ``a`` and decreases in
      ``c``), the narrower one where the control rarely succeeds.

    Both hold with probability ≥ ``1 − α`` (Bonferroni), and the true risk is then in their
    intersection: coverage ≥ ``confidence`` for every ``a``, ``c`` and sample size
    (``tests/disclosure/test_rates.py`` computes it exactly, by enumeration). The share is
    fixed by the analysis before any data is seen (attribute inference, whose controls are
    often right: 0.7; linkability and singling out, whose controls rarely succeed: 0).

    Parameters
    ----------
    k_attack, n_attack : int
        Successful attacks and attacks on the targets.
    k_control, n_control : int
        The same on the control records.
    confidence : float in (0, 1)
    odds_share : float in [0, 1), default=0.0
        Share of ``1 − confidence`` spent on the odds-ratio interval.

    Returns
    -------
    risk, low, high : float
        ``risk`` is NaN (with a warning) when every control attack succeeds; ``low`` is
        ``-inf`` when the control's failure rate may be 0.

    Examples
    --------
    A control guessed right 90 % of the time, the targets 96 % (the rates' intervals alone
    would give [0.30, 0.78]):

    >>> risk, low, high = residual_risk(960, 1000, 900, 1000, 0.95, odds_share=0.7)
    >>> print(f"{risk:.2f} [{low:.2f}, {high:.2f}]")
    0.60 [0.39, 0.74]
    >>> risk, low, high = residual_risk(960, 1000, 900, 1000, 0.95)
    >>> print(f"{risk:.2f} [{low:.2f}, {high:.2f}]")
    0.60 [0.30, 0.78]
    """
    alpha = 1.0 - confidence
    a, c = k_attack / n_attack, k_control / n_control
    if c == 1.0:
        warnings.warn(
            "Every control attack succeeded: the residual risk (a − c)/(1 − c) is undefined "
            "(NaN); the secret follows from the known columns for everyone, so a release "
            "can add nothing measurable.",
            RuntimeWarning,
            stacklevel=3,
        )
        risk = np.nan
    else:
        risk = (a - c) / (1.0 - c)
    f_attack, f_control = n_attack - k_attack, n_control - k_control
    low, high = _rates_interval(k_attack, n_attack, k_control, n_control, (1 - odds_share) * alpha)
    if odds_share > 0:
        odds = _odds_ratio_interval(f_attack, n_attack, f_control, n_control, odds_share * alpha)
        low, high = max(low, odds[0]), min(high, odds[1])
    return float(risk), float(low), float(high)


def risk_row(success, control_success, baseline_rate, confidence, odds_share=0.0):
    """The result columns (``RESULT_COLUMNS``) for per-record successes of one attack
    (``odds_share``: see :func:`residual_risk`)."""
    k_a, n_a = int(np.sum(success)), len(success)
    k_c, n_c = int(np.sum(control_success)), len(control_success)
    a_lo, a_hi = clopper_pearson(k_a, n_a, confidence)
    c_lo, c_hi = clopper_pearson(k_c, n_c, confidence)
    risk, low, high = residual_risk(k_a, n_a, k_c, n_c, confidence, odds_share)
    values = [n_a, k_a / n_a, a_lo, a_hi, n_c, k_c / n_c, c_lo, c_hi, baseline_rate]
    return dict(zip(RESULT_COLUMNS, [*values, risk, low, high], strict=True))
