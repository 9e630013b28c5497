"""Cross-fitted plug-in Bayes classifiers and the cross-validated KDE bandwidth.

Both rest on one table: for every row ``z``, every fold ``a``, every class ``c`` and every
candidate bandwidth ``h``, the log kernel sum ``log Σ_{i ∈ a, c} exp(−‖z − z_i‖² / 2h²)``.
A KDE fitted on any union of folds is a ``logsumexp`` over that table, so the ordinary
k-fold criterion, the nested selection (one per outer fold, never seeing it) and the
held-out log posterior odds all come from a single ``O(N² · n_bandwidths)`` pass.

The data are *sphered* first (pooled, label-free: centred and multiplied by the inverse
square root of the pooled covariance), so one scalar ``h`` is the kernel covariance
``h² Σ̂_pooled`` in the original coordinates: Scott's shape, shared by both classes (per-class
rules gave one class a kernel variance 10⁷ times smaller than the other's on an overfit
model's loss), with its size chosen on held-out data.
"""

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..utils._chunks import row_chunks
from ..utils._torch import resolve_device, to_numpy, to_tensor

__all__ = [
    "Sphering",
    "bandwidth_grid",
    "fold_log_kernel_sums",
    "heldout_log_odds",
    "select_bandwidth",
]

# Candidate bandwidths, as multiples of Scott's factor n^(−1/(d+4)) in sphered coordinates.
# The grid reaches 4x Scott so that a query that carries nothing can be smoothed flat.
BANDWIDTH_FACTORS = np.geomspace(1 / 8, 4, 11)


class Sphering(TransformerMixin, BaseEstimator):
    """Centre and whiten by the pooled covariance; drop directions with no variance.

    Eigen-directions whose variance is below ``rtol`` times the largest are dropped, so
    exactly collinear query columns (a probability vector, a duplicated feature) reduce to
    their ``k`` informative coordinates instead of failing with a singular covariance. The
    map is affine and injective on the data's span, so it changes no advantage.
    """

    def __init__(self, *, rtol=1e-9):
        self.rtol = rtol

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        self.mean_ = X.mean(axis=0)
        covariance = np.atleast_2d(np.cov(X, rowvar=False)) if len(X) > 1 else None
        if covariance is None or not np.any(covariance > 0):
            self.components_ = np.eye(X.shape[1])[:, :0]
            return self
        eigenvalues, eigenvectors = np.linalg.eigh(covariance)
        keep = eigenvalues > self.rtol * eigenvalues.max()
        self.components_ = eigenvectors[:, keep] / np.sqrt(eigenvalues[keep])
        return self

    def transform(self, X):
        check_is_fitted(self)
        return (np.asarray(X, dtype=float) - self.mean_) @ self.components_


def bandwidth_grid(n_train_per_class, n_features):
    """Candidate ``h`` (sphered units) around Scott's factor for the training-fold size."""
    scott = max(n_train_per_class, 2) ** (-1.0 / (n_features + 4))
    return scott * BANDWIDTH_FACTORS


def fold_log_kernel_sums(Z, m, folds, bandwidths, *, device="cpu"):
    """``S[g, a, c, i] = log Σ_{j ∈ fold a, class c} exp(−‖z_i − z_j‖² / 2h_g²)``.

    ``-inf`` where fold ``a`` holds no row of class ``c``. Shape
    ``(n_bandwidths, n_folds, 2, n_samples)``. The data are sorted by (fold, class) so each
    group is a contiguous slab of one pairwise block: one matrix product per block and
    bandwidth, then a max-shifted ``log Σ exp`` per slab, rather than a kernel call per
    group (``2k`` small calls per bandwidth).
    """
    import torch

    dev = resolve_device(device)
    n_folds = int(folds.max()) + 1
    group = folds * 2 + m
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(2 * n_folds + 1))
    sums = np.full((len(bandwidths), n_folds, 2, len(Z)), -np.inf)
    for g, h in enumerate(bandwidths):
        data = to_tensor(Z[order] / h, dev)
        half_data_sq = (data * data).sum(dim=1, keepdim=True).mul_(-0.5)
        for rows in row_chunks(len(Z), len(Z)):
            query = to_tensor(Z[rows] / h, dev)
            # data-major block: each group is a contiguous slab of rows
            exponent = torch.addmm(half_data_sq, data, query.T)
            exponent.sub_((query * query).sum(dim=1).mul_(0.5))
            for k in range(2 * n_folds):
                if bounds[k + 1] > bounds[k]:
                    slab = exponent[bounds[k] : bounds[k + 1]]
                    top = slab.amax(dim=0)
                    log_sum = (slab - top).exp_().sum(dim=0).log_().add_(top)
                    sums[g, k // 2, k % 2, rows] = to_numpy(log_sum)
    return sums


def heldout_log_odds(sums, counts, excluded, log_prior_odds):
    """Log posterior odds of each row from KDEs fitted on the folds it does not exclude.

    Parameters
    ----------
    sums : ndarray of shape (..., n_folds, 2, n_samples)
        From :func:`fold_log_kernel_sums` (one bandwidth or all of them).
    counts : ndarray of shape (n_folds, 2)
        Rows of each class in each fold.
    excluded : ndarray of bool of shape (n_samples, n_folds)
        The folds left out of the KDEs that score each row (at least its own).
    log_prior_odds : float

    Returns
    -------
    log_odds : ndarray of shape (..., n_samples)
        ``log r̂(z) − log q̂(z) + log(p/(1−p))``; both KDEs share ``h``, so the kernel's
        normalising constant cancels.
    """
    masked = np.where(excluded.T[:, None, :], -np.inf, sums)
    log_sum = logsumexp(masked, axis=-3)  # (..., 2, n_samples)
    n_train = (~excluded).astype(float) @ counts  # (n_samples, 2)
    with np.errstate(divide="ignore"):
        log_density = log_sum - np.log(n_train).T
    return log_density[..., 1, :] - log_density[..., 0, :] + log_prior_odds


def _weighted_log_loss(log_odds, m, prior):
    """Per-row log loss of the posterior, weighted so both classes count at the prior."""
    loss = np.where(m == 1, np.logaddexp(0.0, -log_odds), np.logaddexp(0.0, log_odds))
    n_members = max(np.sum(m == 1), 1)
    n_nonmembers = max(np.sum(m == 0), 1)
    weights = np.where(m == 1, prior / n_members, (1 - prior) / n_nonmembers)
    return loss, weights / weights.sum()


def select_bandwidth(log_odds, m, prior):
    """Index of the chosen bandwidth: the largest within one standard error of the best.

    The criterion is the held-out log loss of the plug-in posterior at ``prior``, a proper
    score: it rewards a bandwidth whose posterior generalises, and on a query that carries
    nothing it is smallest for the flattest posterior. Among bandwidths whose mean loss is
    within one (paired) standard error of the minimum, the largest is taken — the
    one-standard-error rule, which keeps near-ties from flipping the choice and leans
    towards less noise in ``U_N``.

    Parameters
    ----------
    log_odds : ndarray of shape (n_bandwidths, n_rows)
        Held-out log posterior odds per candidate (bandwidths in increasing order).
    m : ndarray of shape (n_rows,)
    prior : float
    """
    loss, weights = _weighted_log_loss(log_odds, m, prior)
    mean = loss @ weights
    best = int(np.argmin(mean))
    diff = loss - loss[best]
    diff_mean = diff @ weights
    diff_se = np.sqrt(((diff - diff_mean[:, None]) ** 2) @ weights**2)
    eligible = np.flatnonzero(diff_mean <= diff_se)
    return int(eligible.max())
