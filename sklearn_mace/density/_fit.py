"""The densities behind DOMIAS and the Eq. 1 ablation, built from one spec.

``density`` is ``"kde"`` (:class:`~sklearn_mace.density.GaussianKDE`), ``"bnaf"``
(:class:`~sklearn_mace.density.BNAFDensity`), ``"gaussian"`` (a KDE for ``p_G`` and the
prior-only Gaussian of DOMIAS App. C for ``p_R``) or any estimator with ``fit`` and
``score_samples`` returning log densities (``KernelDensity``, ``GaussianMixture``).
``bandwidth`` is a rule (``"scott"``, ``"silverman"``: the factor times the covariance,
regularised when singular, see :mod:`~sklearn_mace.density._covariance`), ``"cv"``
(:class:`~sklearn_mace.density._cv.CVBandwidthKDE`) or a float.
"""

from sklearn.base import clone

from ._covariance import regularized_covariance
from ._cv import CVBandwidthKDE
from ._kde import BANDWIDTH_RULES, GaussianKDE
from ._prior import GaussianPrior

__all__ = ["DENSITY_OPTIONS", "fit_log_density"]

DENSITY_OPTIONS = {"kde", "bnaf", "gaussian"}


def _rule_kernel(X, rule):
    """Kernel covariance ``c(n, d)² Σ̂`` of a rule, with ``Σ̂`` regularised when singular."""
    n, d = X.shape
    return BANDWIDTH_RULES[rule](n, d) ** 2 * regularized_covariance(X)[0]


def fit_log_density(
    X,
    *,
    density="kde",
    bandwidth="scott",
    cv=5,
    device="auto",
    random_state=None,
    verbose=0,
    role="synthetic",
    population_mean=None,
    population_cov=None,
):
    """Fit the density ``density`` names on ``X``; ``role`` is "synthetic" or "reference".

    ``density="gaussian"`` fits the App. C prior (``population_mean`` / ``population_cov``)
    for the reference role and a KDE for the synthetic role. A ``ValueError`` raised while
    fitting says which rows caused it.

    Returns
    -------
    density : fitted estimator
        Its ``score_samples`` returns log densities.
    """
    try:
        if density == "gaussian" and role == "reference":
            return GaussianPrior(mean=population_mean, covariance=population_cov).fit(X)
        if density in ("kde", "gaussian"):
            if len(X) < 2:
                raise ValueError(f"a KDE needs at least 2 rows; got {len(X)}.")
            if bandwidth == "cv":
                return CVBandwidthKDE(cv=cv, device=device, random_state=random_state).fit(X)
            if isinstance(bandwidth, str):
                bandwidth = _rule_kernel(X, bandwidth)
            return GaussianKDE(bandwidth=bandwidth, device=device).fit(X)
        if density == "bnaf":
            from ._bnaf import BNAFDensity

            estimator = BNAFDensity(device=device, random_state=random_state, verbose=verbose)
        else:
            estimator = clone(density)
        return estimator.fit(X)
    except ValueError as exc:
        raise ValueError(f"fitting the density of the {role} rows: {exc}") from exc
