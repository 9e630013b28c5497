"""Success rates with exact binomial intervals, and anonymeter's residual risk."""

import warnings

import numpy as np

from ..density._histogram import clopper_pearson_interval

__all__ = ["RESULT_COLUMNS", "clopper_pearson", "residual_risk", "risk_row"]

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


def residual_risk(k_attack, n_attack, k_control, n_control, confidence):
    """anonymeter's risk ``(a − c) / (1 − c)`` and an interval at level ``confidence``.

    ``a`` is the attack's success rate on the targets (records the generator was trained on),
    ``c`` the same attack's rate on control records (same population, not trained on):
    the share of the control's failures that the targets' extra success makes up
    (Giomi et al., "A Unified Framework for Quantifying Privacy Risk in Synthetic Data",
    PoPETs 2023(2), arXiv:2211.10459: the privacy risk from the "residual success rate";
    anonymeter 1.1.0, ``stats.confidence.residual_success``). The risk increases in
    ``a`` and decreases in ``c``, so the Clopper–Pearson intervals ``[a_lo, a_hi]`` and
    ``[c_lo, c_hi]``, each at level ``1 − α/2`` (Bonferroni), give the interval
    ``[(a_lo − c_hi)/(1 − c_hi), (a_hi − c_lo)/(1 − c_lo)]``, which covers the true risk with
    probability ≥ ``1 − α`` (α = 1 − confidence). anonymeter instead uses Wilson rates, a
    delta-method error and clips the risk to [0, 1]; this risk is not clipped (a negative
    value means the control was attacked more successfully than the targets).

    Parameters
    ----------
    k_attack, n_attack : int
        Successful attacks and attacks on the targets.
    k_control, n_control : int
        The same on the control records.
    confidence : float in (0, 1)

    Returns
    -------
    risk, low, high : float
        ``risk`` is NaN (with a warning) when every control attack succeeds; ``low`` is
        ``-inf`` when the control's upper bound is 1.

    Examples
    --------
    >>> risk, low, high = residual_risk(60, 100, 20, 100, 0.95)
    >>> print(f"{risk:.2f} [{low:.2f}, {high:.2f}]")
    0.50 [0.26, 0.67]
    """
    alpha_each = (1.0 - confidence) / 2.0
    a_lo, a_hi = clopper_pearson(k_attack, n_attack, 1.0 - alpha_each)
    c_lo, c_hi = clopper_pearson(k_control, n_control, 1.0 - alpha_each)
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
    low = -np.inf if c_hi == 1.0 else (a_lo - c_hi) / (1.0 - c_hi)
    high = (a_hi - c_lo) / (1.0 - c_lo)
    return float(risk), float(low), float(high)


def risk_row(success, control_success, baseline_rate, confidence):
    """The result columns (``RESULT_COLUMNS``) for per-record successes of one attack."""
    k_a, n_a = int(np.sum(success)), len(success)
    k_c, n_c = int(np.sum(control_success)), len(control_success)
    a_lo, a_hi = clopper_pearson(k_a, n_a, confidence)
    c_lo, c_hi = clopper_pearson(k_c, n_c, confidence)
    risk, low, high = residual_risk(k_a, n_a, k_c, n_c, confidence)
    values = [n_a, k_a / n_a, a_lo, a_hi, n_c, k_c / n_c, c_lo, c_hi, baseline_rate]
    return dict(zip(RESULT_COLUMNS, [*values, risk, low, high], strict=True))
