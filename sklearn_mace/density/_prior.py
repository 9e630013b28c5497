"""The prior-only reference density of DOMIAS App. C: a Gaussian from population statistics."""

import numpy as np
from scipy.linalg import LinAlgError, cholesky, solve_triangular
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._sklearn_compat import _fit_context
from ._covariance import constant_columns, regularized_covariance

__all__ = ["GaussianPrior"]


class GaussianPrior(DensityMixin, BaseEstimator):
    """Prior-only reference density of DOMIAS App. C: a Gaussian from population statistics.

    ``mean`` and ``covariance`` are the attacker's high-level knowledge; ``None`` estimates
    them from the rows passed to ``fit`` (a singular sample covariance is shrunk, see
    :func:`~sklearn_mace.density._covariance.regularized_covariance`). A 1-D
    ``covariance`` holds per-feature variances, where ``np.inf`` marks a feature nothing is
    known about: its factor is a flat (improper, "uniform") prior that cancels from every
    ratio, as in App. C.

    Parameters
    ----------
    mean : array-like of shape (n_features,), default=None
        Population mean; ``None``: the mean of the rows passed to ``fit``.
    covariance : array-like of shape (n_features,) or (n_features, n_features), default=None
        Population variances (``np.inf`` = unknown) or covariance matrix; ``None``: the
        (regularised) covariance of the rows passed to ``fit``.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
    known_ : ndarray of bool, shape (n_features,)
        Features with a finite variance (the others are flat).
    chol_ : ndarray or None
        Cholesky factor of the covariance of the known features.
    n_features_in_ : int

    References
    ----------
    van Breugel et al., AISTATS 2023, App. C.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.density._prior import GaussianPrior
    >>> prior = GaussianPrior(mean=[0.0, 0.0], covariance=[1.0, np.inf]).fit(np.zeros((1, 2)))
    >>> round(float(prior.score_samples([[0.0, 5.0]])[0]), 4)  # log N(0; 0, 1), flat in x_1
    -0.9189
    """

    _parameter_constraints = {"mean": ["array-like", None], "covariance": ["array-like", None]}

    def __init__(self, *, mean=None, covariance=None):
        self.mean = mean
        self.covariance = covariance

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fix the Gaussian: the given statistics, or the moments of ``X``; ``y`` is ignored.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : object
        """
        # Estimating a covariance needs two rows; given statistics need none beyond the shape.
        min_rows = 2 if self.covariance is None else 1
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=min_rows)
        d = X.shape[1]
        mean = X.mean(axis=0) if self.mean is None else np.asarray(self.mean, dtype=float)
        if mean.shape != (d,) or not np.all(np.isfinite(mean)):
            raise ValueError(f"population_mean must hold {d} finite values; got {self.mean!r}.")
        known = np.ones(d, dtype=bool)
        if self.covariance is None:
            constant = constant_columns(X)
            if constant.any():
                raise ValueError(
                    f"the reference rows are constant in column(s) "
                    f"{np.flatnonzero(constant).tolist()}: no Gaussian can be fitted there."
                )
            cov = regularized_covariance(X)[0]
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
        """``log N(x; μ, Σ)`` over the known features (flat in the unknown ones).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        k = self.known_
        if self.chol_ is None:
            return np.zeros(len(X))
        z = solve_triangular(self.chol_, (X[:, k] - self.mean_[k]).T, lower=True).T
        log_det = np.log(np.diag(self.chol_)).sum()
        return -0.5 * (z * z).sum(axis=1) - log_det - 0.5 * k.sum() * np.log(2 * np.pi)

    def score(self, X, y=None):
        """Total log-likelihood of ``X`` (``DensityMixin.score`` would return None).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        log_likelihood : float
        """
        return float(self.score_samples(X).sum())
