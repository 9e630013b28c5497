"""The link between membership advantage and ε-differential privacy (MACE Thm 1.4)."""

import numpy as np

__all__ = ["advantage_bound", "epsilon_lower_bound"]


def _log_prior_odds(prior):
    from ..base import check_prior

    p = check_prior(prior)
    return np.log(p / (1.0 - p))


def advantage_bound(epsilon, prior=0.5):
    """Largest membership advantage an ε-DP mechanism allows at membership prior ``prior``.

    MACE Thm 1.4: ``Adv_p <= max{|tanh((ε + λ)/2)|, |tanh((−ε + λ)/2)|}`` with
    ``λ = log(p / (1 − p))``. The same bound holds for every individual privacy risk. At
    ``ε = 0`` it is the trivial advantage ``|2p − 1|`` of always guessing the majority.

    Parameters
    ----------
    epsilon : float or array-like of floats >= 0
        Privacy parameter(s).
    prior : float in (0, 1), default=0.5
        P(member) in the membership experiment.

    Returns
    -------
    bound : float or ndarray
        Same shape as ``epsilon``.

    Examples
    --------
    >>> from sklearn_mace.metrics import advantage_bound
    >>> round(advantage_bound(1.0), 4)
    0.4621
    """
    lam = _log_prior_odds(prior)
    eps = np.asarray(epsilon, dtype=float)
    if np.isnan(eps).any() or (eps < 0).any():
        raise ValueError(f"epsilon must be >= 0 (inf allowed); got {epsilon!r}.")
    bound = np.maximum(np.abs(np.tanh((eps + lam) / 2)), np.abs(np.tanh((lam - eps) / 2)))
    return float(bound) if bound.ndim == 0 else bound


def epsilon_lower_bound(advantage, prior=0.5):
    """Smallest ε whose Thm 1.4 bound reaches ``advantage``: ε-DP fails for every smaller ε.

    Inverts :func:`advantage_bound`. For ε >= 0 the bound equals ``tanh((ε + |λ|)/2)``, so
    ``ε = 2·artanh(advantage) − |λ|``; an advantage at or below the trivial ``|2p − 1|``
    implies nothing (0), an advantage of 1 implies no finite ε (``inf``).

    It is only a lower bound: a mechanism that leaks this much is not ε'-DP for any
    ε' < ε, but nothing says it is ε-DP.

    Parameters
    ----------
    advantage : float or array-like of floats in [-1, 1]
        Measured (optimal) membership advantage(s).
    prior : float in (0, 1), default=0.5
        P(member) at which the advantage was measured.

    Returns
    -------
    epsilon : float or ndarray, >= 0

    Examples
    --------
    >>> from sklearn_mace.metrics import epsilon_lower_bound
    >>> round(epsilon_lower_bound(0.46211715726000974), 6)
    1.0
    """
    lam = abs(_log_prior_odds(prior))
    adv = np.asarray(advantage, dtype=float)
    if np.isnan(adv).any() or (np.abs(adv) > 1).any():
        raise ValueError(f"advantage must be in [-1, 1]; got {advantage!r}.")
    # |2p − 1| and tanh(|λ|/2) are equal in exact arithmetic; either rounding is "trivial".
    trivial = max(abs(2 * float(prior) - 1), np.tanh(lam / 2))
    with np.errstate(divide="ignore"):
        eps = np.where(adv <= trivial, 0.0, 2.0 * np.arctanh(adv) - lam)
    eps = np.maximum(eps, 0.0)
    return float(eps) if eps.ndim == 0 else eps
