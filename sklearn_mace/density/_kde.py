"""Gaussian kernel density estimation in log space: the exact, pointwise path.

Densities of members, non-members, synthetic and reference data are all estimated here.
Every value is a log density computed with ``logsumexp``, so nothing underflows to 0 even
in 64 dimensions, and far-out records (the ones most at risk) keep their relative accuracy.
"""

from numbers import Real

import numpy as np
from scipy.linalg import LinAlgError, cholesky, solve_triangular
from scipy.stats import norm
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_prior
from ..utils._chunks import chunk_rows, device_chunk_bytes, row_chunks
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ..utils._threads import pass_threads
from ..utils._torch import TorchDevice, resolve_device, row_sq_norms, to_numpy, to_tensor
from ._covariance import sample_covariance
from ._grid import binned_gaussian_kde

__all__ = [
    "GaussianKDE",
    "bandwidth_matrix",
    "gaussian_kernel_squared_integral",
    "gaussian_log_kernel_sum",
]

# Bandwidth factors c(n, d) applied to the data covariance, as in scipy.stats.gaussian_kde.
BANDWIDTH_RULES = {
    "scott": lambda n, d: n ** (-1.0 / (d + 4)),
    "silverman": lambda n, d: (n * (d + 2) / 4.0) ** (-1.0 / (d + 4)),
}


def bandwidth_matrix(X, bandwidth):
    """The kernel covariance ``H`` (d × d) that ``bandwidth`` means for data ``X``.

    * float ``h`` → ``h² I`` (the same data units as ``sklearn.neighbors.KernelDensity``);
    * array of ``d`` floats → ``diag(h_j²)``;
    * a ``d × d`` symmetric positive-definite array → ``H`` itself (the kernel covariance,
      e.g. a rule's factor times a regularised covariance);
    * ``"scott"`` / ``"silverman"`` → ``c(n, d)² · Σ̂`` with the full data covariance
      (``ddof=1``), exactly as ``scipy.stats.gaussian_kde``.

    Raises a ``ValueError`` naming ``bandwidth`` for non-positive values, a wrong length, or
    a rule applied to data whose covariance is singular (e.g. a constant column).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The data the bandwidth refers to (used by the rules).
    bandwidth : float, array-like of shape (n_features,) or {"scott", "silverman"}
        The bandwidth as :class:`GaussianKDE` takes it.

    Returns
    -------
    H : ndarray of shape (n_features, n_features)
        The kernel covariance.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.density._kde import bandwidth_matrix
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> bandwidth_matrix(X, 0.5).tolist()
    [[0.25, 0.0], [0.0, 0.25]]
    >>> bandwidth_matrix(X, [1.0, 2.0]).tolist()
    [[1.0, 0.0], [0.0, 4.0]]
    """
    n, d = X.shape
    if isinstance(bandwidth, str):
        if bandwidth not in BANDWIDTH_RULES:
            raise ValueError(
                f"bandwidth must be one of {sorted(BANDWIDTH_RULES)}, a float > 0 "
                f"or {d} floats > 0; got {bandwidth!r}."
            )
        covariance = sample_covariance(X)
        H = BANDWIDTH_RULES[bandwidth](n, d) ** 2 * covariance
        if not np.all(np.isfinite(H)) or np.linalg.matrix_rank(H) < d:
            raise ValueError(
                f"bandwidth={bandwidth!r} needs a non-singular data covariance, but the {n} "
                f"rows in {d} dimensions have a singular one (a constant or duplicated column, "
                "or fewer rows than dimensions); pass a float or per-dimension bandwidth."
            )
        return H
    h = np.asarray(bandwidth, dtype=float)
    if h.ndim == 2:
        if h.shape != (d, d) or not np.all(np.isfinite(h)) or not np.allclose(h, h.T):
            raise ValueError(
                f"bandwidth as a kernel covariance must be a finite symmetric {d}×{d} "
                f"matrix; got shape {h.shape}."
            )
        return h
    if h.ndim == 0:
        h = np.full(d, float(h))
    if h.shape != (d,) or not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise ValueError(
            f"bandwidth must be a float > 0, {d} floats > 0 (one per feature) or a rule "
            f"name; got {bandwidth!r}."
        )
    return np.diag(h**2)


def gaussian_kernel_squared_integral(n_features):
    """``μ_K = ∫ K²(u) du = (2√π)^(−d)`` for the standard Gaussian kernel (MACE Lemma 4).

    Parameters
    ----------
    n_features : int
        The dimension ``d``.

    Returns
    -------
    mu_K : float
        The integral of the squared kernel.

    Examples
    --------
    >>> from sklearn_mace.density._kde import gaussian_kernel_squared_integral
    >>> round(float(gaussian_kernel_squared_integral(1)), 6)  # 1 / (2·sqrt(pi))
    0.282095
    """
    return (2.0 * np.sqrt(np.pi)) ** (-n_features)


# Pairwise blocks on CPU stay cache-sized: the kernel sum is memory-bound, and 4 MiB blocks
# ran 1.9-3.8x faster than 64 MiB ones on a 2-core machine (d = 1, 8, 64; the table of
# ``benchmarks/bench_advantage.py --kernel``). CUDA prefers large blocks.
CPU_BLOCK_BYTES = 4 * 2**20
# Rows of the whitening product per block (8 MiB of centred rows).
_WHITEN_BLOCK_BYTES = 8 * 2**20
# Query rows per block when the data do not fit a block of this many rows whole: the data
# then run in tiles, so both the block's query rows and the data tile stay cache-sized.
_TILE_ROWS = 512


def gaussian_log_kernel_sum(Z_query, Z_data, *, whiten=None, device="cpu", max_chunk_bytes=None):
    """``log Σ_i exp(−½‖z − z_i‖²)`` for every query row ``z`` (whitened coordinates).

    One tiled pass with a running log-sum-exp (Milakov & Gimelshein, *Online normalizer
    calculation for softmax*, 2018): for each tile of data rows and each block of query
    rows, one matrix product gives ``a_i = z·z_i − ½‖z_i‖²``; the query rows' running
    maximum ``M`` and sum ``S = Σ exp(a_i − M)`` are updated as ``M′ = max(M, max_i a_i)``,
    ``S′ = S·exp(M − M′) + Σ_i exp(a_i − M′)``, and the log sum is ``log S + M − ½‖z‖²``
    (the row constant added after the reduction). Every step is a tensor operation on the
    device: no value comes back to the host inside the loop (no ``.item()``, no branch on a
    tensor), so CUDA never waits for the host between tiles; the queries go to the device
    once and the sums come back once, after the last tile. In float64 throughout: the
    result equals a direct float64 ``logsumexp`` of ``−½‖z − z_i‖²`` to within the
    expansion's rounding, ``4·d·2⁻⁵³·(‖z‖ + max‖z_i‖)²`` absolute plus ``1e-13`` relative,
    whatever the tiling (tested against scipy, far-out queries included).

    With ``whiten=(c, W)`` the data rows are raw and each tile is whitened on the way,
    ``z_i = (x_i − c) W``, so no whitened copy of the data exists (a KDE on a
    10-million-row, 6-column release held one of 458 MiB, issue #28); the data tile, not the
    query block, is the outer loop, so each data row is whitened once per call.

    Blocks (query rows × data tile) of at most ``max_chunk_bytes`` (default: 4 MiB on CPU,
    cache-sized; on CUDA an eighth of the free device memory, 64 MiB to 2 GiB:
    ``utils._chunks.device_chunk_bytes``): all data rows in one tile when that leaves at
    least 512 query rows per block, else tiles sized for blocks of 512 query rows.

    Parameters
    ----------
    Z_query : ndarray of shape (n_queries, n_features)
        Query points, whitened.
    Z_data : ndarray of shape (n_data, n_features)
        Data points, whitened the same way (or raw, with ``whiten``).
    whiten : tuple (centre, matrix) or None, default=None
        ``centre`` of shape (n_features,) and ``matrix`` (n_features × n_features) that
        whiten a raw data row ``x`` as ``(x − centre) @ matrix``; None: ``Z_data`` is whitened.
    device : {"auto", "cpu", "cuda"} or torch.device, default="cpu"
        Where the sums run; the result is a NumPy array either way.
    max_chunk_bytes : int, default=None
        Largest pairwise block; ``None`` picks 4 MiB on CPU, 64 MiB to 2 GiB on CUDA.

    Returns
    -------
    log_sums : ndarray of shape (n_queries,)
        ``log Σ_i exp(−½‖z − z_i‖²)`` for each query row.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.density._kde import gaussian_log_kernel_sum
    >>> data = np.array([[0.0], [2.0]])
    >>> out = gaussian_log_kernel_sum(np.array([[0.0]]), data)
    >>> bool(np.isclose(out[0], np.log(1 + np.exp(-2.0))))
    True
    >>> raw = gaussian_log_kernel_sum(np.array([[0.0]]), 2 * data + 1, whiten=(1.0, [[0.5]]))
    >>> bool(np.isclose(raw[0], out[0]))
    True
    """
    import torch

    dev = resolve_device(device)
    if max_chunk_bytes is None:
        max_chunk_bytes = CPU_BLOCK_BYTES if dev.type == "cpu" else device_chunk_bytes(dev)
    n, m = len(Z_query), len(Z_data)
    if n == 0 or m == 0:
        return np.full(n, -np.inf)
    # the queries go to the device once and the sums stay there until the end: no host
    # round trip (a synchronisation on CUDA) per block; on the CPU both are views, no copy
    queries, data = to_tensor(Z_query, dev), to_tensor(Z_data, dev)
    if whiten is not None:
        whiten = tuple(torch.as_tensor(np.asarray(a, dtype=float), device=dev) for a in whiten)
    tile = min(m, chunk_rows(min(n, _TILE_ROWS), max_bytes=max_chunk_bytes))
    step = chunk_rows(tile, max_bytes=max_chunk_bytes)
    buffer = torch.empty(min(n, step) * tile, dtype=torch.float64, device=dev)
    with pass_threads(n * m, device=dev):
        log_sum = _running_log_sums(queries, data, whiten, tile, step, buffer)
        log_sum.sub_(row_sq_norms(queries).mul_(0.5))
    return to_numpy(log_sum)


def _running_log_sums(queries, data, whiten, tile, step, buffer):
    """``log Σ_i exp(z·z_i − ½‖z_i‖²)`` per query row by a running (max, sum) over data
    tiles of ``tile`` rows, each whitened by ``whiten`` (``(c, W)`` tensors, or None) and
    met by blocks of ``step`` query rows (see :func:`gaussian_log_kernel_sum`); ``buffer``
    holds one block.
    """
    import torch

    running_max = torch.full(
        (len(queries),), -torch.inf, dtype=queries.dtype, device=queries.device
    )
    running_sum = torch.zeros(len(queries), dtype=queries.dtype, device=queries.device)
    for start in range(0, len(data), tile):
        z_data = data[start : start + tile]
        if whiten is not None:
            z_data = (z_data - whiten[0]) @ whiten[1]
        half_sq = row_sq_norms(z_data).mul_(-0.5)
        for first in range(0, len(queries), step):
            rows = slice(first, first + step)
            z = queries[rows]
            block = buffer[: len(z) * len(z_data)].view(len(z), len(z_data))
            torch.addmm(half_sq, z, z_data.T, out=block)
            old_max = running_max[rows]
            new_max = torch.maximum(old_max, block.amax(dim=1))
            running_sum[rows].mul_(old_max.sub_(new_max).exp_())
            running_sum[rows].add_(block.sub_(new_max.unsqueeze(1)).exp_().sum(dim=1))
            old_max.copy_(new_max)
    return running_sum.log_().add_(running_max)


class GaussianKDE(DensityMixin, BaseEstimator):
    """Gaussian kernel density estimate with log densities that never underflow.

    ``f̂(x) = (1/n) Σ_i φ_H(x − X_i)`` with kernel covariance ``H`` (see
    :func:`bandwidth_matrix`). Data are whitened by the Cholesky factor of ``H`` and
    centred, so each log density is a ``logsumexp`` of ``−½‖z − z_i‖²`` plus a constant.

    Parameters
    ----------
    bandwidth : float, array-like of shape (n_features,) or (n_features, n_features), \
or {"scott", "silverman"}, default="scott"
        A float is ``h`` in data units (kernel covariance ``h² I``), a 1-D array one ``h``
        per feature, a 2-D array the kernel covariance ``H`` itself; the rules scale the
        full data covariance as ``scipy.stats.gaussian_kde``.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where the pairwise sums run; results are NumPy arrays either way. On the CPU,
        threads are chosen per pass (docs/design.md, "Devices and threads").

    Attributes
    ----------
    bandwidth_matrix_ : ndarray of shape (n_features, n_features)
        The kernel covariance ``H``.
    data_ : ndarray of shape (n_samples_fit_, n_features)
        The rows the density was fitted on (the kernel centres).
    n_samples_fit_ : int
        Number of rows the density was fitted on (``n`` in the CIs of MACE Thm 3).
    n_features_in_ : int

    See Also
    --------
    scipy.stats.gaussian_kde, sklearn.neighbors.KernelDensity : the same estimate, in
        plain (underflowing) densities and with a scalar bandwidth respectively.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.density import GaussianKDE
    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> kde = GaussianKDE(bandwidth="scott", device="cpu").fit(X)
    >>> log_f = kde.score_samples(np.array([[0.0, 0.0], [50.0, 50.0]]))
    >>> round(float(log_f[0]), 2), round(float(log_f[1]))  # scipy: -2.07, -12961 (exp: 0.0)
    (-2.07, -12961)
    """

    _parameter_constraints = {
        "bandwidth": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions(set(BANDWIDTH_RULES)),
            "array-like",
        ],
        "device": [str, TorchDevice],
    }

    def __init__(self, *, bandwidth="scott", device="auto"):
        self.bandwidth = bandwidth
        self.device = device

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the density on the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The sample whose density is estimated (at least 2 rows).
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : GaussianKDE
            The fitted density.
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        n, d = X.shape
        self.bandwidth_matrix_ = bandwidth_matrix(X, self.bandwidth)
        try:
            self._cholesky = cholesky(self.bandwidth_matrix_, lower=True)
        except LinAlgError as exc:
            raise ValueError(f"bandwidth={self.bandwidth!r} gives a singular kernel.") from exc
        self._inverse_cholesky = solve_triangular(self._cholesky, np.eye(d), lower=True)
        self._centre = X.mean(axis=0)
        # no whitened copy of the data: the kernel sums whiten each tile on the way
        self.data_ = X
        self._log_norm = (
            -np.log(n) - np.log(np.diag(self._cholesky)).sum() - 0.5 * d * np.log(2 * np.pi)
        )
        self.n_samples_fit_ = n
        return self

    def _whiten(self, X):
        # One matrix product with L⁻¹ (d × d, computed once in fit): a BLAS call, 1.3-3x
        # faster than a triangular solve on 1e6 rows (bench_advantage.py --kernel). In blocks
        # of rows, so no centred copy as large as X exists beside the result.
        out = np.empty(X.shape)
        for rows in row_chunks(len(X), X.shape[1], max_bytes=_WHITEN_BLOCK_BYTES):
            out[rows] = (X[rows] - self._centre) @ self._inverse_cholesky.T
        return out

    def score_samples(self, X):
        """Log density ``log f̂(x)`` of each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to evaluate.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            Natural log of the density at each point; finite however far the point is.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        # one pass for the whitening product too: left to itself, NumPy's BLAS would run it
        # on every core and then spin-wait for ~0.1 s (docs/design.md, "Devices and threads")
        with pass_threads(len(X) * self.n_samples_fit_, device=self.device):
            Z = self._whiten(X)
            whiten = (self._centre, self._inverse_cholesky.T)
            log_sum = gaussian_log_kernel_sum(Z, self.data_, whiten=whiten, device=self.device)
        return log_sum + self._log_norm

    def score_samples_interval(self, X, confidence=0.95):
        """Log density with the pointwise confidence bounds of Chen (2017) (MACE Lemma 4).

        ``f̂(x) ± z_{(1+c)/2} · sqrt(μ_K f̂(x) / (n h^d))`` with ``μ_K = (2√π)^(−d)``, this
        density's own ``n`` and ``h^d = sqrt(det H)`` (the kernel covariance ``H = h² I``
        of Eq. 17 generalised to a matrix). MACE Thm 3 calls it at ``c = 1 − δ/2`` per
        class, which gives the ``z_{1−δ/4}`` of Lemma 4. The bounds are formed in log
        space: ``log f̂ + log(1 ± e^t)`` with ``t`` the log relative half-width, so far-out
        points keep their relative accuracy; a lower bound at or below 0 is ``-inf``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to evaluate.
        confidence : float in (0, 1), default=0.95
            Pointwise coverage ``c`` of the two-sided interval.

        Returns
        -------
        log_density, log_lower, log_upper : ndarrays of shape (n_samples,)
            Log density and the log bounds of its interval at each point.
        """
        confidence = check_prior(confidence, name="confidence")
        log_density = self.score_samples(X)
        d = self.n_features_in_
        log_h_d = np.log(np.diag(self._cholesky)).sum()
        log_half_width_scale = np.log(norm.ppf(0.5 + confidence / 2)) + 0.5 * (
            np.log(gaussian_kernel_squared_integral(d)) - np.log(self.n_samples_fit_) - log_h_d
        )
        t = log_half_width_scale - 0.5 * log_density  # log(half-width / f̂)
        log_upper = log_density + np.logaddexp(0.0, t)
        with np.errstate(divide="ignore"):
            log_lower = np.where(
                t < 0, log_density + np.log1p(-np.exp(np.minimum(t, 0.0))), -np.inf
            )
        return log_density, log_lower, log_upper

    def density_on_grid(self, axes):
        """The density on the grid ``axes`` (d ≤ 2) by linear binning and FFT convolution.

        The fast path for integrals such as MACE's U_N; see
        :func:`sklearn_mace.density.binned_gaussian_kde`.

        Parameters
        ----------
        axes : list of 1-D arrays
            One equally spaced axis per feature, e.g. from
            :func:`~sklearn_mace.density.kde_grid_axes`.

        Returns
        -------
        density : ndarray of shape ``tuple(len(a) for a in axes)``
            Densities (not logs) at the grid nodes.
        """
        check_is_fitted(self)
        return binned_gaussian_kde(self.data_, self.bandwidth_matrix_, axes)

    def score(self, X, y=None):
        """Total log-likelihood of ``X``: what ``GridSearchCV`` maximizes over bandwidths.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to evaluate.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        log_likelihood : float
            Sum of :meth:`score_samples` over the rows.
        """
        return float(self.score_samples(X).sum())

    def sample(self, n_samples=1, random_state=None):
        """Draw ``n_samples`` rows from the estimated density (a data row plus kernel noise).

        Parameters
        ----------
        n_samples : int, default=1
            Number of rows to draw.
        random_state : int, RandomState instance or None, default=None
            Seed of the draw.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            The drawn rows.
        """
        check_is_fitted(self)
        rng = check_random_state(random_state)
        rows = self.data_[rng.randint(len(self.data_), size=n_samples)]
        return rows + rng.standard_normal((n_samples, self.n_features_in_)) @ self._cholesky.T
