"""The fast path for Gaussian KDE integrals in d ≤ 2: linear binning + FFT convolution.

Integrals over the query space such as MACE's U_N (Thm 6) need the density everywhere,
not at the data points. On an equally spaced grid, a Gaussian KDE is a discrete
convolution of binned data weights with the kernel sampled at grid offsets; with linear
binning (each point splits its unit weight between its two neighbouring grid nodes per
axis, preserving its mass and mean) the result differs from the exact KDE only by adding
at most ``δ²/4`` of variance per axis, so ``spacing = h_min / points_per_bandwidth`` bounds
the error (Wand & Jones, 1995, §D; Fan & Marron, 1994). The grid spans the data plus
``tail`` kernel standard deviations so the mass outside it is below ``1e-14``.
"""

import numpy as np
from scipy import fft
from scipy.signal import fftconvolve

from ..utils._chunks import device_chunk_bytes
from ..utils._threads import pass_threads
from ..utils._torch import resolve_device, to_numpy, to_tensor

__all__ = [
    "BinnedKernelSums1D",
    "binned_gaussian_kde",
    "binned_log_kernel_sums_1d",
    "grouped_log_kernel_sums",
    "kde_grid_axes",
    "linear_binning",
]

MAX_GRID_POINTS = {1: 2**21, 2: 2**22}
# Kernel-table blocks: 2 MiB of float32 pairs stays in cache (bench_certified.py --kernel).
TABLE_BLOCK_BYTES = 2 * 2**20
# Query rows per kernel-table block when the data do not fit such a block whole (data tiles).
TABLE_TILE_ROWS = 512
# Exponents are clamped here before exp (see grouped_log_kernel_sums).
EXP_FLOOR = -80.0
EXP_FLOOR_VALUE = float(np.exp(EXP_FLOOR))
# Binned 1-D sums below this (every data row > 6 bandwidths away) are recomputed exactly:
# the FFT's absolute rounding (~1e-16 of the total) would dominate them.
BINNED_TAIL_FLOOR = 1e-8


def kde_grid_axes(datasets, bandwidth_matrices, *, points_per_bandwidth=16, tail=8.0):
    """Equally spaced axes covering every dataset plus ``tail`` kernel SDs on each side.

    The spacing along each axis is ``sqrt(λ_min(H)) / points_per_bandwidth`` for the
    narrowest kernel among ``bandwidth_matrices`` (its narrowest direction, so a
    correlated 2-D kernel is resolved too). Returns ``None`` when the grid would exceed
    ``MAX_GRID_POINTS`` (e.g. extreme outliers); callers then use Monte Carlo instead.

    Parameters
    ----------
    datasets : list of ndarray of shape (n_i, d)
        The data sets the grid must cover.
    bandwidth_matrices : list of ndarray of shape (d, d)
        Kernel covariances of the densities evaluated on the grid.
    points_per_bandwidth : int, default=16
        Grid nodes per standard deviation of the narrowest kernel.
    tail : float, default=8.0
        Margin beyond the data, in standard deviations of the widest kernel.

    Returns
    -------
    axes : list of d 1-D arrays or None
        Equally spaced axes, or ``None`` when the grid would be too large (or d > 2).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.density._grid import kde_grid_axes
    >>> (axis,) = kde_grid_axes([np.array([[0.0], [1.0]])], [np.array([[0.25]])])
    >>> float(axis[1] - axis[0]), bool(axis[0] <= -4.0 and axis[-1] >= 5.0)
    (0.03125, True)
    """
    d = datasets[0].shape[1]
    if d not in MAX_GRID_POINTS:
        return None
    narrowest = min(np.sqrt(np.linalg.eigvalsh(np.atleast_2d(H)).min()) for H in bandwidth_matrices)
    spacing = narrowest / points_per_bandwidth
    widest_sd = np.max([np.sqrt(np.diag(np.atleast_2d(H))) for H in bandwidth_matrices], axis=0)
    lo = np.min([X.min(axis=0) for X in datasets], axis=0) - tail * widest_sd
    hi = np.max([X.max(axis=0) for X in datasets], axis=0) + tail * widest_sd
    sizes = np.ceil((hi - lo) / spacing).astype(float) + 1
    if not np.all(np.isfinite(sizes)) or np.prod(sizes) > MAX_GRID_POINTS[d]:
        return None
    return [lo[j] + spacing * np.arange(int(sizes[j])) for j in range(d)]


def linear_binning(X, axes):
    """Grid weights (summing to 1) from linear binning of the rows of ``X`` onto ``axes``.

    Each coordinate is split between its two neighbouring nodes in proportion to its
    distance from them; in 2-D the weights are the products (bilinear binning).

    Parameters
    ----------
    X : ndarray of shape (n_samples, d)
        Points, inside the grid.
    axes : list of d equally spaced 1-D arrays
        The grid.

    Returns
    -------
    weights : ndarray of shape ``tuple(len(a) for a in axes)``
        Share of the points at each node; sums to 1.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.density._grid import linear_binning
    >>> linear_binning(np.array([[0.25], [2.0]]), [np.arange(4.0)]).tolist()
    [0.375, 0.125, 0.5, 0.0]
    """
    shape = tuple(len(a) for a in axes)
    if len(axes) == 1:  # the hot path for U_N at N = 1e6: one weighted bincount
        u = (X[:, 0] - axes[0][0]) * (1.0 / (axes[0][1] - axes[0][0]))
        np.clip(u, 0, shape[0] - 1 - 1e-9, out=u)
        below = u.astype(np.int64)
        frac = u - below
        upper_share = np.bincount(below, weights=frac, minlength=shape[0])
        grid = np.bincount(below, minlength=shape[0]) - upper_share
        grid[1:] += upper_share[:-1]
        return grid / len(X)
    lower, upper = [], []  # per axis: (flat offset, weight) of the node below / above
    for j, axis in enumerate(axes):
        u = (X[:, j] - axis[0]) * (1.0 / (axis[1] - axis[0]))
        np.clip(u, 0, len(axis) - 1 - 1e-9, out=u)
        below = u.astype(np.int64)  # floor, as u >= 0
        frac = u - below
        stride = int(np.prod(shape[j + 1 :]))
        lower.append((below * stride, 1.0 - frac))
        upper.append(((below + 1) * stride, frac))
    size = int(np.prod(shape))
    grid = np.zeros(size)
    for corner in np.ndindex(*(2,) * len(axes)):
        index, weight = 0, 1.0
        for j, side in enumerate(corner):
            offset, w = (upper if side else lower)[j]
            index, weight = index + offset, weight * w
        grid += np.bincount(index, weights=weight, minlength=size)
    return grid.reshape(shape) / len(X)


def binned_gaussian_kde(X, H, axes, *, tail=8.0):
    """Gaussian KDE with kernel covariance ``H`` evaluated on ``axes`` (d ≤ 2) via FFT.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Data, inside the grid.
    H : ndarray of shape (d, d)
        Kernel covariance (see :func:`~sklearn_mace.density.bandwidth_matrix`).
    axes : list of d equally spaced 1-D arrays
        The grid, e.g. from :func:`~sklearn_mace.density.kde_grid_axes`.
    tail : float, default=8.0
        The kernel is truncated beyond ``tail`` standard deviations per axis.

    Returns
    -------
    density : ndarray of shape ``tuple(len(a) for a in axes)``
        The KDE (densities, not logs) at the grid nodes.

    Examples
    --------
    One point at 0 with ``H = 1``: the grid holds the standard normal density.

    >>> import numpy as np
    >>> from sklearn_mace.density._grid import binned_gaussian_kde
    >>> axis = np.linspace(-5.0, 5.0, 101)
    >>> density = binned_gaussian_kde(np.array([[0.0]]), np.array([[1.0]]), [axis])
    >>> round(float(density[50]), 4), round(float(density.sum() * 0.1), 4)
    (0.3989, 1.0)
    """
    H = np.atleast_2d(np.asarray(H, dtype=float))
    weights = linear_binning(np.asarray(X, dtype=float), axes)
    spacing = np.array([a[1] - a[0] for a in axes])
    half = [
        min(int(np.ceil(tail * np.sqrt(H[j, j]) / spacing[j])), len(a) - 1)
        for j, a in enumerate(axes)
    ]
    offsets = np.meshgrid(
        *[spacing[j] * np.arange(-k, k + 1) for j, k in enumerate(half)], indexing="ij"
    )
    U = np.stack([o.ravel() for o in offsets], axis=1)
    quad = np.einsum("ij,jk,ik->i", U, np.linalg.inv(H), U)
    log_norm = -0.5 * (len(axes) * np.log(2 * np.pi) + np.linalg.slogdet(H)[1])
    kernel = np.exp(log_norm - 0.5 * quad).reshape(offsets[0].shape)
    return np.maximum(fftconvolve(weights, kernel, mode="same"), 0.0)


def grouped_log_kernel_sums(Z_query, Z_data, data_groups, n_groups, bandwidths, *, device="cpu"):
    """``S[g, k, i] = log Σ_{j in group k} exp(−‖z_i − z_j‖² / 2h_g²)``; ``-inf`` if empty.

    One pass over the ``n_query × n_data`` pairs for all candidate bandwidths at once,
    in cache-sized blocks (``TABLE_BLOCK_BYTES``) of query rows × a tile of data rows,
    float32 on torch:

    * the squared distances of a block are computed once (one matrix product) and shifted
      per (query row, group) by the group's smallest one so far, so each group's largest
      term is ``exp(0) = 1`` and no sum underflows, however far the row; when a later tile
      holds a smaller one, the group's running sums are rescaled (a running log-sum-exp,
      :func:`_running_group_sums`), so tiles of data keep ``TABLE_TILE_ROWS`` query rows
      per block however large the data;
    * exponents are clamped at ``EXP_FLOOR`` before ``exp``: a term that small changes a
      sum whose largest term is 1 by less than ``n_data · e^-80`` (relative), and float32
      ``exp`` of very negative arguments is an order of magnitude slower;
    * the candidates are visited from the widest kernel down; where the next ``h`` is
      ``1/√2`` times the last (``BANDWIDTH_FACTORS`` are), its kernel is the square of the
      last one (``exp(−2a) = exp(−a)²``), a multiplication instead of an ``exp``;
    * on CUDA the blocks are larger (``utils._chunks.device_chunk_bytes``: a cache-sized
      block leaves the GPU idle between small kernels); on every device the table stays
      where the sums run until the last block, and nothing inside the loop reads a value
      back to the host (no synchronisation per tile, block or bandwidth).

    The squared distances are float32 expansions ``‖x‖² + ‖y‖² − 2x·y`` after centring on
    the data's mean: their rounding is about ``1e-7·‖z‖²``, divided by ``2h²`` in the
    exponent — about 1e-3 in a log sum for sphered, normal-scored queries (norms of a few
    units; tested against float64). That changes which bandwidth or guess is chosen at most
    in near-ties and never the validity of anything certified from the sums: any classifier
    fitted without the held-out labels will do. Each group's sums depend on that group's
    rows only.

    Parameters
    ----------
    Z_query : ndarray of shape (n_query, d)
    Z_data : ndarray of shape (n_data, d)
    data_groups : ndarray of int of shape (n_data,)
        Group ``0 … n_groups − 1`` of each data row (e.g. ``2 · fold + class``).
    n_groups : int
    bandwidths : sequence of float
    device : str or torch.device, default="cpu"

    Returns
    -------
    sums : ndarray of shape (n_bandwidths, n_groups, n_query)
    """
    import torch

    dev = resolve_device(device)
    data_groups = np.asarray(data_groups)
    order = np.argsort(data_groups, kind="stable")
    bounds = np.searchsorted(data_groups[order], np.arange(n_groups + 1))
    groups = [(k, bounds[k], bounds[k + 1]) for k in range(n_groups) if bounds[k + 1] > bounds[k]]
    bandwidths = np.asarray(bandwidths, dtype=float)
    widest_first = np.argsort(-bandwidths, kind="stable")
    coef = -0.5 / bandwidths[widest_first] ** 2
    squares = np.r_[False, np.isclose(coef[1:] / coef[:-1], 2.0, rtol=1e-9, atol=0.0)]
    sums = np.full((len(bandwidths), n_groups, len(Z_query)), -np.inf)
    if not groups or len(Z_query) == 0:
        return sums
    block_bytes = TABLE_BLOCK_BYTES if dev.type == "cpu" else device_chunk_bytes(dev)
    present_index = torch.as_tensor([k for k, _, _ in groups], device=dev).unsqueeze(0)
    bandwidth_index = torch.as_tensor(widest_first, device=dev).unsqueeze(1)
    table = torch.full(sums.shape, -torch.inf, dtype=torch.float64, device=dev)
    # tiles of data rows, so that a block holds TABLE_TILE_ROWS' worth of query rows: with
    # every data row in one block, 10^5 data rows left 5 query rows per 2 MiB block, and
    # every block streamed all the data from memory
    tile = min(len(Z_data), max(1, block_bytes // (4 * min(len(Z_query), TABLE_TILE_ROWS))))
    block = max(1, block_bytes // (4 * tile))
    # per tile, the (group index, columns in the tile) of the groups it meets: plain Python
    tiles = []
    for start in range(0, len(Z_data), tile):
        stop = min(start + tile, len(Z_data))
        parts = [
            (i, slice(max(lo, start) - start, min(hi, stop) - start))
            for i, (_, lo, hi) in enumerate(groups)
            if lo < stop and hi > start
        ]
        tiles.append((start, stop, parts))
    # one thread choice for the whole table (docs/design.md, "Devices and threads")
    with pass_threads(len(Z_query) * len(Z_data) * len(bandwidths), device=dev):
        centre = Z_data.mean(axis=0)  # centring keeps float32's ‖z‖² small
        data = to_tensor(Z_data[order] - centre, dev, dtype=torch.float32)
        data_sq = (data * data).sum(dim=1).unsqueeze(0)
        queries = to_tensor(Z_query - centre, dev, dtype=torch.float32)
        buffers = torch.empty(2 * min(block, len(Z_query)) * tile, dtype=torch.float32, device=dev)
        for start in range(0, len(Z_query), block):
            rows = slice(start, min(start + block, len(Z_query)))
            log_sums = _running_group_sums(
                queries[rows], data, data_sq, tiles, len(groups), coef, squares, buffers
            )
            table[bandwidth_index, present_index, rows] = log_sums
    return to_numpy(table)


def _running_group_sums(query, data, data_sq, tiles, n_groups, coef, squares, buffers):
    """``(n_bandwidths, n_groups, rows)`` log sums of one block of query rows, widest
    bandwidth first, by a running (shift, sum) per group over the data tiles.

    Per tile and group, the shift ``m`` (the smallest squared distance so far, so the
    largest term is ``exp(0) = 1``) moves to ``m′ = min(m, tile's smallest)``; the running
    sums are rescaled by ``exp(c·(m − m′))`` and the tile's terms ``exp(c·(d² − m′))`` added
    (clamped at ``EXP_FLOOR``; squares along the √2 grid). Tensor operations only: no value
    comes back to the host inside the loop.
    """
    import torch

    width = len(query)
    query_sq = (query * query).sum(dim=1, keepdim=True)
    shift = torch.full((n_groups, width), torch.inf, dtype=torch.float32, device=query.device)
    sums = torch.zeros((len(coef), n_groups, width), dtype=torch.float32, device=query.device)
    moved = torch.zeros_like(shift)
    seen = set()  # groups met in an earlier tile (Python bookkeeping, not tensor values)
    for start, stop, parts in tiles:
        size = width * (stop - start)
        d2 = buffers[:size].view(width, stop - start)
        work = buffers[size : 2 * size].view(width, stop - start)
        torch.addmm(data_sq[:, start:stop], query, data[start:stop].T, alpha=-2.0, out=d2)
        d2.add_(query_sq).clamp_(min=0.0)
        again = [i for i, _ in parts if i in seen]
        for i, columns in parts:
            new_shift = torch.amin(d2[:, columns], dim=1)
            if i in seen:
                torch.minimum(shift[i], new_shift, out=new_shift)
                torch.sub(shift[i], new_shift, out=moved[i])
            shift[i] = new_shift
            d2[:, columns].sub_(new_shift.unsqueeze(1))
        for g, c in enumerate(coef):
            if squares[g]:  # max(k², e^-80) = max(exp(2a), e^-80) for k = max(exp(a), e^-80)
                work.mul_(work).clamp_(min=EXP_FLOOR_VALUE)
            else:
                torch.mul(d2, float(c), out=work)
                work.clamp_(min=EXP_FLOOR).exp_()
            if again:  # exp(c·(m − m′)) for the groups met before (1 for the others)
                sums[g].mul_(torch.mul(moved, float(c)).exp_())
            for i, columns in parts:
                sums[g, i].add_(work[:, columns].sum(dim=1))
        if again:
            moved.zero_()
        seen.update(i for i, _ in parts)
    coef64 = torch.as_tensor(coef, dtype=torch.float64, device=query.device)
    return torch.log(sums.double()).add_(coef64[:, None, None] * shift.double())


def binned_log_kernel_sums_1d(
    z_query, z_data, data_groups, n_groups, bandwidths, *, points_per_bandwidth=2
):
    """1-D :func:`grouped_log_kernel_sums` by linear binning, FFT and interpolation.

    :class:`BinnedKernelSums1D` on a grid spanning the query and the data rows, read at the
    query rows (see there for the method and its error).

    Parameters
    ----------
    z_query : ndarray of shape (n_query,) or (n_query, 1)
    z_data : ndarray of shape (n_data,) or (n_data, 1)
    data_groups : ndarray of int of shape (n_data,)
    n_groups : int
    bandwidths : sequence of float
    points_per_bandwidth : float, default=2

    Returns
    -------
    sums : ndarray of shape (n_bandwidths, n_groups, n_query)
        ``log Σ_{j in group k} exp(−(z_i − z_j)² / 2h_g²)``; ``-inf`` for empty groups.
    """
    zq = np.asarray(z_query, dtype=float).reshape(-1)
    table = BinnedKernelSums1D(
        z_data,
        data_groups,
        n_groups,
        bandwidths,
        span=(zq.min(initial=np.inf), zq.max(initial=-np.inf)),
        points_per_bandwidth=points_per_bandwidth,
    )
    return table.log_sums(zq)


class BinnedKernelSums1D:
    """1-D grouped log kernel sums at any query row, from one grid and one FFT pass.

    One grid for every group and bandwidth, spaced ``min(bandwidths) /
    points_per_bandwidth`` and spanning the data and ``span``: the data of each group are
    linearly binned on it (Wand & Jones 1995, §D), one real FFT per group, one inverse FFT
    per (bandwidth, group) with the Gaussian's transfer function ``s√(2π)·exp(−2π²s²f²)``
    (``s = h/spacing``; zero padding of 8 of the widest kernels keeps the circular
    convolution from wrapping). :meth:`log_sums` reads query rows off the grid by linear
    interpolation, so the grid is built once and read by every pass of a cross-fit. At 2
    grid points per bandwidth the binned sums differ from the exact ones by a few per cent
    (binning and interpolation each add ``spacing²/4`` of variance), which moves a bandwidth
    choice or a guess only in a near-tie and never the validity of anything certified from
    them. Each group's grid depends on that group's rows only (and on the grid, which
    depends on the rows' positions, never on their groups).

    Sums below ``BINNED_TAIL_FLOOR`` (every row of the group more than ~6 bandwidths away,
    where the FFT's rounding would dominate) are recomputed exactly in float64 from that
    group's rows within reach (:meth:`_exact_tails`) — a few per cent of the values, in the
    tails, at the smallest bandwidths. (Flooring them instead changed the chosen bandwidth
    and lowered the certified bound on shifted and Pareto queries.)

    Parameters
    ----------
    z_data : ndarray of shape (n_data,) or (n_data, 1)
    data_groups : ndarray of int of shape (n_data,)
    n_groups : int
    bandwidths : sequence of float
    span : (float, float), default=None
        Lowest and highest query row to be read (the grid covers them and the data).
    points_per_bandwidth : float, default=2
    """

    def __init__(
        self, z_data, data_groups, n_groups, bandwidths, *, span=None, points_per_bandwidth=2
    ):
        zd = np.asarray(z_data, dtype=float).reshape(-1)
        groups = np.asarray(data_groups, dtype=np.int64)
        h = np.asarray(bandwidths, dtype=float)
        low, high = (np.inf, -np.inf) if span is None else span
        self.spacing = spacing = h.min() / points_per_bandwidth
        self.lo = lo = min(zd.min(), low)
        self.size = size = int(np.ceil((max(zd.max(), high) - lo) / spacing)) + 2
        self.bandwidths, self.n_groups = h, n_groups
        u = (zd - lo) / spacing
        below = np.minimum(u.astype(np.int64), size - 2)
        frac = u - below
        index = groups * size + below
        weights = np.bincount(index, weights=1.0 - frac, minlength=n_groups * size)
        weights += np.bincount(index + 1, weights=frac, minlength=n_groups * size)
        padded = fft.next_fast_len(size + int(np.ceil(8 * h.max() / spacing)), real=True)
        spectrum = fft.rfft(weights.reshape(n_groups, size), n=padded, axis=1)
        s = (h / spacing)[:, None]
        frequency = np.arange(spectrum.shape[1]) / padded
        transfer = s * np.sqrt(2 * np.pi) * np.exp(-2 * (np.pi * s * frequency) ** 2)
        self.grid = fft.irfft(spectrum[None] * transfer[:, None], n=padded, axis=2)[..., :size]
        # node-major copy: a query row reads two whole rows of it (a gather of contiguous
        # rows, several times faster than gathering single values from each grid)
        self._nodes = np.ascontiguousarray(self.grid.transpose(2, 0, 1))
        # every group's rows, sorted, one segment per group (for the exact tails)
        order = np.lexsort((zd, groups))
        self.data = zd[order]
        self.starts = np.searchsorted(groups[order], np.arange(n_groups + 1))
        self.empty = self.starts[1:] == self.starts[:-1]

    def log_sums(self, z_query, which=None):
        """``log Σ_{j in group k} exp(−(z_i − z_j)² / 2h_g²)`` at the query rows.

        Parameters
        ----------
        z_query : ndarray of shape (n_query,) or (n_query, 1)
            Rows inside the grid's span.
        which : sequence of int, default=None
            Indices of the bandwidths wanted (all when None).

        Returns
        -------
        sums : ndarray of shape (n_which, n_groups, n_query)
            ``-inf`` for empty groups.
        """
        zq = np.asarray(z_query, dtype=float).reshape(-1)
        all_bandwidths = which is None
        which = np.arange(len(self.bandwidths)) if all_bandwidths else np.asarray(which)
        uq = (zq - self.lo) / self.spacing
        j = np.clip(uq.astype(np.int64), 0, self.size - 2)
        t = uq - j
        nodes = self._nodes if all_bandwidths else self._nodes[:, which]
        low, high = nodes[j], nodes[j + 1]  # (n_query, n_which, n_groups)
        low *= (1.0 - t)[:, None, None]
        high *= t[:, None, None]
        low += high  # the sums, node-major; their logs in place, then laid out per group
        tail = (low < BINNED_TAIL_FLOOR) & ~self.empty[None, None, :]
        with np.errstate(divide="ignore"):
            np.log(np.maximum(low, 0.0, out=low), out=low)
        out = np.ascontiguousarray(low.transpose(1, 2, 0))
        out[:, self.empty] = -np.inf
        # whether a value is redone depends on that group's own sums only, so a group's
        # values never depend on another group's rows (the cross-fit relies on it)
        flagged = np.flatnonzero(tail.transpose(1, 2, 0))  # (bandwidth, group, row) order
        flagged_g, flagged_k, flagged_i = np.unravel_index(flagged, out.shape)
        if flagged_k.size:
            self._exact_tails(out, flagged_g, flagged_k, flagged_i, zq, self.bandwidths[which])
        return out

    def _exact_tails(self, out, g, k, i, zq, h):
        """Overwrite the flagged values ``out[g, k, i]`` with exact float64 log sums.

        Only group ``k``'s rows within ``√(d_min² + 2·80·h²)`` of the query row count
        (``d_min`` the distance to its nearest): every other term is below ``e^-80`` times
        the largest one. Each value's terms are padded with zeros to the power of two at or
        above their number and summed as one row of a matrix of such rows (every group at
        once), so a value's rounding depends on its own terms only — never on another
        value's, hence never on another group's rows.
        """
        z, width2 = zq[i], h[g] ** 2
        nearest = np.empty(z.size)
        first = np.empty(z.size, dtype=np.int64)
        stop = np.empty(z.size, dtype=np.int64)
        by_group = np.argsort(k, kind="stable")
        bounds = np.searchsorted(k[by_group], np.arange(self.n_groups + 1))
        for group in np.flatnonzero(bounds[1:] > bounds[:-1]):  # its sorted rows: searches
            mine = by_group[bounds[group] : bounds[group + 1]]
            begin, end = self.starts[group], self.starts[group + 1]
            data, zk = self.data[begin:end], z[mine]
            at = np.clip(np.searchsorted(data, zk), 1, data.size) - 1
            nearest[mine] = np.minimum(
                np.abs(zk - data[at]), np.abs(zk - data[np.minimum(at + 1, data.size - 1)])
            )
            reach = np.sqrt(nearest[mine] ** 2 + 160.0 * width2[mine])
            first[mine] = begin + np.searchsorted(data, zk - reach, side="left")
            stop[mine] = begin + np.searchsorted(data, zk + reach, side="right")
        count = np.maximum(stop - first, 1)
        padded = 2 ** np.ceil(np.log2(count)).astype(np.int64)
        last = self.data.size - 1
        for width in np.unique(padded):
            rows = np.flatnonzero(padded == width)
            step = max(1, 2**14 // int(width))  # at most 2^14 terms at once (one if wider)
            for start in range(0, rows.size, step):
                part = rows[start : start + step]
                offsets = first[part, None] + np.arange(int(width))
                inside = offsets < stop[part, None]
                d2 = (z[part, None] - self.data[np.minimum(offsets, last)]) ** 2
                excess = np.where(inside, d2 - nearest[part, None] ** 2, np.inf)
                with np.errstate(divide="ignore"):
                    logs = np.log(np.exp(-excess / (2.0 * width2[part, None])).sum(axis=1))
                out[g[part], k[part], i[part]] = logs - nearest[part] ** 2 / (2.0 * width2[part])
