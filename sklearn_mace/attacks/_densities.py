"""The density estimators behind DOMIAS and the Eq. 1 ablation, built from one spec.

``density`` is ``"kde"`` (:class:`~sklearn_mace.density.GaussianKDE`), ``"bnaf"``
(:class:`~sklearn_mace.density.BNAFDensity`), ``"gaussian"`` (a KDE for ``p_G`` and the
prior-only Gaussian of DOMIAS App. C for ``p_R``) or any estimator with ``fit`` and
``score_samples`` returning log densities (``KernelDensity``, ``GaussianMixture``).
``bandwidth="cv"`` picks each KDE bandwidth by cross-validated held-out log-likelihood.
"""

import numpy as np
from scipy.linalg import LinAlgError, cholesky, solve_triangular
from sklearn.base import BaseEstimator, DensityMixin, clone
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..density import GaussianKDE
from ..density._kde import BANDWIDTH_RULES

__all__ = ["CV_BANDWIDTH_FACTORS", "CVBandwidthKDE", "GaussianPrior", "fit_log_density"]

# ``bandwidth="cv"`` searches h = factor × Scott's factor in coordinates whitened by the
# data's own covariance (so Scott's rule itself is factor 1 of the grid).
CV_BANDWIDTH_FACTORS = np.geomspace(1 / 8, 2.0, 9)
# Held-out rows scored per bandwidth, over all folds together: the held-out log-likelihood of
# 2 000 rows separates the candidates (√2 apart) clearly and keeps the search ~O(2000·n).
CV_MAX_HELD_OUT = 2000


def _capped_folds(n, cv, random_state):
    """K-fold splits whose held-out parts hold at most ``CV_MAX_HELD_OUT`` rows in all."""
    rng = check_random_state(random_state)
    per_fold = max(1, CV_MAX_HELD_OUT // cv)
    for train, test in KFold(cv, shuffle=True, random_state=rng).split(np.empty((n, 1))):
        if len(test) > per_fold:
            test = np.sort(rng.choice(test, per_fold, replace=False))
        yield train, test


def _need_rows(X, name, why):
    n, d = X.shape
    if n <= d:
        raise ValueError(
            f"{why} needs a covariance of the {name} rows, but there are only {n} {name} rows "
            f"for {d} features (more rows than features are needed); pass a float bandwidth, "
            "another density, or more rows."
        )


class CVBandwidthKDE:
    """A Gaussian KDE whose bandwidth maximizes the ``cv``-fold held-out log-likelihood.

    Likelihood cross-validation (Silverman 1986, §3.4.4): ``GridSearchCV`` over
    :class:`~sklearn_mace.density.GaussianKDE`, whose ``score`` is the total log-likelihood.
    At most ``CV_MAX_HELD_OUT`` held-out rows are scored per candidate.

    The rows are whitened by their own covariance, ``z = L⁻¹(x − μ)``, and a scalar
    bandwidth ``h`` is searched there (``h = factor × Scott's factor``, so Scott's rule is in
    the grid); in data units the kernel covariance is ``h² Σ̂``, the shape scipy's rules use.
    ``score_samples`` returns log densities in data units (the Jacobian ``−log|L|`` added).
    """

    def __init__(self, X, *, cv, device, random_state):
        n, d = X.shape
        _need_rows(X, "fitted", 'bandwidth="cv"')
        if n < 2 * cv:
            raise ValueError(f'bandwidth="cv" with cv={cv} needs at least {2 * cv} rows; got {n}.')
        self.mean = X.mean(axis=0)
        try:
            self.chol = cholesky(np.atleast_2d(np.cov(X, rowvar=False)), lower=True)
        except LinAlgError as exc:
            raise ValueError(
                'bandwidth="cv" needs a non-singular covariance (no constant or '
                "duplicated column); pass a float bandwidth."
            ) from exc
        scott = BANDWIDTH_RULES["scott"](n * (cv - 1) / cv, d)
        search = GridSearchCV(
            GaussianKDE(device=device),
            {"bandwidth": list(scott * CV_BANDWIDTH_FACTORS)},
            cv=list(_capped_folds(n, cv, random_state)),
        )
        search.fit(self._whiten(X))
        self.kde = search.best_estimator_
        self.bandwidth = float(search.best_params_["bandwidth"])
        self.bandwidth_factor = self.bandwidth / scott
        self._log_jacobian = np.log(np.diag(self.chol)).sum()

    def _whiten(self, X):
        return solve_triangular(self.chol, (X - self.mean).T, lower=True).T

    def score_samples(self, X):
        return self.kde.score_samples(self._whiten(X)) - self._log_jacobian


class GaussianPrior(DensityMixin, BaseEstimator):
    """Prior-only reference density of DOMIAS App. C: a Gaussian from population statistics.

    ``mean`` and ``covariance`` are the attacker's high-level knowledge; ``None`` estimates
    them from the rows passed to ``fit``. A 1-D ``covariance`` holds per-feature variances,
    where ``np.inf`` marks a feature nothing is known about: its factor is a flat (improper,
    "uniform") prior that cancels from every ratio, as in App. C.
    """

    def __init__(self, mean=None, covariance=None):
        self.mean = mean
        self.covariance = covariance

    def fit(self, X, y=None):
        """Fix the Gaussian: the given statistics, or the moments of ``X``; ``y`` is ignored."""
        # Estimating a covariance needs two rows; given statistics need none beyond the shape.
        min_rows = 2 if self.covariance is None else 1
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=min_rows)
        d = X.shape[1]
        mean = X.mean(axis=0) if self.mean is None else np.asarray(self.mean, dtype=float)
        if mean.shape != (d,) or not np.all(np.isfinite(mean)):
            raise ValueError(f"population_mean must hold {d} finite values; got {self.mean!r}.")
        known = np.ones(d, dtype=bool)
        if self.covariance is None:
            _need_rows(X, "reference", 'density="gaussian" without population_cov')
            cov = np.atleast_2d(np.cov(X, rowvar=False))
        else:
            cov = np.asarray(self.covariance, dtype=float)
            if cov.ndim == 1:
                if cov.shape != (d,) or np.any(np.isnan(cov)) or np.any(cov <= 0):
                    raise ValueError(
                        f"population_cov as variances must hold {d} values > 0 "
                        f"(np.inf = unknown); got {self.covariance!r}."
                    )
                known = np.isfinite(cov)
                cov = np.diag(np.where(known, cov, 1.0))
            elif cov.shape != (d, d) or not np.all(np.isfinite(cov)):
                raise ValueError(
                    f"population_cov must be {d} variances or a {d}×{d} matrix; "
                    f"got shape {cov.shape}."
                )
        try:
            chol = cholesky(cov[np.ix_(known, known)], lower=True) if known.any() else None
        except LinAlgError as exc:
            raise ValueError(
                "the population covariance is singular; it must be positive definite."
            ) from exc
        self.known_, self.chol_ = known, chol
        self.mean_ = mean
        return self

    def score_samples(self, X):
        """``log N(x; μ, Σ)`` over the known features (flat in the unknown ones)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        k = self.known_
        if self.chol_ is None:
            return np.zeros(len(X))
        z = solve_triangular(self.chol_, (X[:, k] - self.mean_[k]).T, lower=True).T
        log_det = np.log(np.diag(self.chol_)).sum()
        return -0.5 * (z * z).sum(axis=1) - log_det - 0.5 * k.sum() * np.log(2 * np.pi)

    def score(self, X, y=None):
        """Total log-likelihood of ``X`` (``DensityMixin.score`` would return None)."""
        return float(self.score_samples(X).sum())


def _fit_naming_role(estimator, X, role):
    """``estimator.fit(X)``; a ValueError (e.g. a constant column) says which rows caused it."""
    try:
        return estimator.fit(X)
    except ValueError as exc:
        raise ValueError(f"fitting the density of the {role} rows: {exc}") from exc


def fit_log_density(attack, X, *, role):
    """Fit the density ``attack.density`` names on ``X``; ``role`` is "synthetic"/"reference".

    Reads ``density``, ``bandwidth``, ``cv``, ``device``, ``random_state``, ``verbose`` and,
    for ``density="gaussian"`` (DOMIASAttack only), ``population_mean`` / ``population_cov``
    from ``attack``.
    """
    density, bandwidth = attack.density, attack.bandwidth
    if density == "gaussian" and role == "reference":
        return _fit_naming_role(
            GaussianPrior(attack.population_mean, attack.population_cov), X, role
        )
    if density in ("kde", "gaussian"):
        if bandwidth == "cv":
            return CVBandwidthKDE(
                X, cv=attack.cv, device=attack.device, random_state=attack.random_state
            )
        if isinstance(bandwidth, str):
            _need_rows(X, role, f"bandwidth={bandwidth!r}")
        return _fit_naming_role(GaussianKDE(bandwidth, device=attack.device), X, role)
    if density == "bnaf":
        from ..density import BNAFDensity

        estimator = BNAFDensity(
            device=attack.device, random_state=attack.random_state, verbose=attack.verbose
        )
    else:
        estimator = clone(density)
    return estimator.fit(X)
