"""Covariances for real tables: constant columns and singular covariances, handled by rule.

A released table is rarely in general position. A generator drops a rare category (its
one-hot column is constant 0 in the synthetic rows), rounding leaves a column with variance
7e-31, and derived columns (``education-num`` from ``education``) make the covariance exactly
singular. Scott's rule and the whitening of the cross-validated bandwidth need a
positive-definite covariance, so two documented rules apply:

* **constant columns** (:func:`constant_columns`): a column whose spread is at the rounding
  level of its own values, ``max − min ≤ 1e-9 · max|x|``, carries no density in its own
  direction (a point mass). Callers drop it from the densities they compare and name it.
* **singular or ill-conditioned covariances** (:func:`regularized_covariance`): when the
  correlation matrix has an eigenvalue below ``1e-8`` (an exact or numerical dependency,
  or fewer rows than features), the correlation matrix is shrunk toward the identity by
  the Ledoit–Wolf coefficient (Ledoit & Wolf 2004, as ``sklearn.covariance.LedoitWolf``,
  computed on the standardised columns, so the rule does not depend on the units), then
  scaled back. A well-conditioned covariance is used as it is, so Scott's rule stays
  exactly ``scipy.stats.gaussian_kde``'s.
"""

import numpy as np
from sklearn.covariance import ledoit_wolf_shrinkage

from ..utils._chunks import row_chunks

__all__ = [
    "CONSTANT_RTOL",
    "constant_columns",
    "regularized_covariance",
    "sample_covariance",
]

# A column is constant when its range is below this fraction of its largest magnitude.
CONSTANT_RTOL = 1e-9
# A correlation matrix with an eigenvalue below this is treated as singular and shrunk.
MIN_CORRELATION_EIGENVALUE = 1e-8
# Rows of centred data per block of the covariance's cross-products (1 MiB of float64; the
# product copies its operand; 2.85x np.cov on 4e6 × 6 rows: bench_kernels.py --only covariance).
_COVARIANCE_BLOCK_BYTES = 2**20


def constant_columns(X):
    """Boolean mask of the columns of ``X`` that are constant up to rounding.

    ``max − min ≤ 1e-9 · max|x|`` (so an all-zero column, and a column of 0.1 with rounding
    noise of variance 7e-31, are constant; a column of legitimately tiny values is not).
    """
    X = np.asarray(X, dtype=float)
    high, low = X.max(axis=0), X.min(axis=0)
    # max|x| from the extremes, not from |X| (a copy as large as X: 458 MiB for a
    # 10-million-row, 6-column release, issue #28); the same value, NaN included
    return high - low <= CONSTANT_RTOL * np.maximum(np.abs(high), np.abs(low))


def sample_covariance(X):
    """The sample covariance of the columns of ``X`` (``ddof=1``), as ``np.cov(X, rowvar=False)``.

    The centred cross-products are summed over blocks of rows, so no centred copy as large
    as ``X`` exists (``np.cov`` makes one: 458 MiB for a 10-million-row, 6-column release,
    issue #28). Equal to ``np.cov`` up to the summation order (tested to 1e-12 relative).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        At least two rows.

    Returns
    -------
    covariance : ndarray of shape (n_features, n_features)
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    centre = X.mean(axis=0)
    cross = np.zeros((d, d))
    for rows in row_chunks(n, d, max_bytes=_COVARIANCE_BLOCK_BYTES):
        block = X[rows] - centre
        cross += block.T @ block
    return cross / (n - 1)


def regularized_covariance(X):
    """``(covariance, shrinkage)``: the sample covariance, or its Ledoit–Wolf shrinkage.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        At least two rows, no constant column (see :func:`constant_columns`).

    Returns
    -------
    covariance : ndarray of shape (n_features, n_features)
        Positive definite.
    shrinkage : float
        0.0 when the sample covariance (``ddof=1``) is well conditioned and is returned as
        it is; else the Ledoit–Wolf coefficient ``s`` of ``(1 − s)·R + s·I`` applied to the
        correlation matrix ``R``.
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    covariance = sample_covariance(X)
    scale = np.sqrt(np.diag(covariance))
    if np.any(scale == 0) or not np.all(np.isfinite(scale)):
        raise ValueError(
            "a covariance needs finite, non-constant columns; drop the constant columns first."
        )
    correlation = covariance / np.outer(scale, scale)
    if np.linalg.eigvalsh(correlation)[0] >= MIN_CORRELATION_EIGENVALUE:
        return covariance, 0.0
    Z = X - X.mean(axis=0)
    Z /= scale  # in place: one temporary as large as X, not two
    shrinkage = float(ledoit_wolf_shrinkage(Z, assume_centered=True))
    # An exact dependency needs s > 0; the floor keeps the smallest eigenvalue >= 1e-6.
    shrinkage = min(max(shrinkage, 1e-6), 1.0)
    shrunk = (1.0 - shrinkage) * correlation + shrinkage * np.eye(d)
    return shrunk * np.outer(scale, scale), shrinkage
