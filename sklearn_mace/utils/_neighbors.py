"""Chunked k-nearest squared Euclidean distances on torch (CPU or CUDA)."""

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from ._chunks import DEFAULT_CHUNK_BYTES, chunk_rows, device_chunk_bytes, row_chunks
from ._threads import pass_threads
from ._torch import resolve_device, row_sq_norms, to_numpy, to_tensor

__all__ = [
    "NEAREST_BACKENDS",
    "count_within_radius",
    "nearest_sq_distances",
    "sq_distance_blocks",
]


# Float32 has a 24-bit significand: unit roundoff 2**-24.
_FLOAT32_ROUNDOFF = 2.0**-24
# Candidates beyond k kept from a float32 screen; more makes the exactness certificate
# succeed for more rows (near-ties), fewer makes the exact re-ranking cheaper.
_EXTRA_CANDIDATES = 8
NEAREST_BACKENDS = ("torch", "faiss")
# Pairs with d² below this fraction of (‖x‖ + max‖y‖)² get exact distances in
# sq_distance_blocks (near-copies, where the expansion's rounding is all there is).
_NEAR_FRACTION = 1e-6
# The last few nearest-distance passes, by content: an audit asks for the same targets'
# distances to the same release several times (the MACE query, GAN-leaks CAL, MC's median
# radius), each a full pass over the release. Values are (n, k) arrays, so this stays small.
_RECENT = OrderedDict()
_RECENT_SIZE = 4
_RECENT_LOCK = threading.Lock()
# count_within_radius: when fewer than _MIN_BLOCK_ROWS rows of X fit a full-width block (Y
# of more than 131 072 rows at 64 MiB), it runs over tiles of Y against blocks of _TILE_ROWS
# rows of X, each block at most _TILE_BYTES (cache-sized): a full-width block of a few rows
# streams all of Y from memory (200 000 x 93: 6.2 s against 3.1 s for 1 500 rows of X).
_MIN_BLOCK_ROWS = 64
_TILE_ROWS = 512
_TILE_BYTES = 4 * 2**20


def _digest(array):
    """A content key for a float64 C-contiguous array (shape included)."""
    hasher = hashlib.blake2b(repr(array.shape).encode(), digest_size=16)
    hasher.update(memoryview(array).cast("B"))
    return hasher.digest()


def nearest_sq_distances(
    X, Y, *, k=1, device="auto", max_chunk_bytes=DEFAULT_CHUNK_BYTES, backend="torch"
):
    """Squared Euclidean distances from each row of ``X`` to its ``k`` nearest rows of ``Y``.

    Exact in float64, at float32 matrix-product speed, on data centred at the mean of ``Y``:

    1. *screen* — float32 squared distances (up to a per-row constant) to all of ``Y``:
       ``backend="torch"`` by one matrix product per block of rows of ``X`` (BLAS on CPU,
       cuBLAS on GPU; at most ``max_chunk_bytes`` per ``rows × len(Y)`` block, so memory stays
       bounded for any ``len(X) × len(Y)``); ``backend="faiss"`` by ``faiss.IndexFlatL2``
       (optional dependency), keeping the ``k + 8`` smallest as candidates;
    2. *re-rank* — ``‖x − y‖²`` for the candidates only, in float64 by direct differences
       (no cancellation);
    3. *certify* (``backend="torch"``, or ``k >= 2``) — the screen is off by at most
       ``β = 2·(d + 8)·u·(‖x‖ + max‖y‖)²`` with ``u = 2⁻²⁴`` (float32 rounding of inputs,
       products and sums). A row is exact when the
       last candidate's screened value exceeds the ``k``-th one's by more than ``2β``: then no
       row of ``Y`` left out can be nearer. Rows without that certificate (near-ties) are
       recomputed against all of ``Y`` by the float64 expansion ``‖x‖² + ‖y‖² − 2·x·y``
       (absolute error of order ``d·2⁻⁵³·(‖x‖ + max‖y‖)²`` in centred coordinates).
       For ``k = 1`` on torch the screen keeps just the minimum and the runner-up (two cheap
       passes instead of ``topk``), and re-ranks everything within ``2β`` of the minimum,
       by direct differences, when the runner-up is that close.

    The last few results are kept by content (a hash of ``X`` and ``Y`` and the arguments):
    asking again for the same distances, as an audit does for the MACE query, GAN-leaks CAL
    and MC's radius, returns a copy of the same values without another pass.

    With ``backend="faiss"`` and ``k = 1`` there is no runner-up to certify with (asking faiss
    for two neighbours cost 17 times more than for one at d = 16, 1e4 × 1e5, though about
    the same at d = 64: row ``faiss k=2`` of ``benchmarks/bench_queries.py``): the result is
    the exact float64 distance to faiss's nearest candidate, which is the minimum unless
    another row of ``Y`` is within ``2β`` of it (a near-tie), and then exceeds the minimum by
    at most ``2β``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (m, d), m >= k
    k : int, default=1
    device : {"auto", "cpu", "cuda"}, default="auto"
    max_chunk_bytes : int, default=64 MiB
        Largest screen block; the default on CUDA is sized from the free device memory
        (``utils._chunks.device_chunk_bytes``: 64 MiB to 2 GiB).
    backend : {"torch", "faiss"}, default="torch"

    Returns
    -------
    sq_distances : ndarray of shape (n, k), ascending along axis 1
    """
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y must be 2-D with equal columns; got {X.shape} and {Y.shape}.")
    if not 1 <= k <= len(Y):
        raise ValueError(f"k must be between 1 and len(Y)={len(Y)}; got {k}.")
    if backend not in NEAREST_BACKENDS:
        raise ValueError(f"backend must be one of {NEAREST_BACKENDS}; got {backend!r}.")
    dev = resolve_device(device)
    X, Y = np.ascontiguousarray(X), np.ascontiguousarray(Y)
    key = (_digest(X), _digest(Y), k, str(dev), max_chunk_bytes, backend)
    with _RECENT_LOCK:
        if key in _RECENT:
            _RECENT.move_to_end(key)
            return _RECENT[key].copy()
    out = _nearest_sq_distances(X, Y, k, dev, max_chunk_bytes, backend)
    with _RECENT_LOCK:
        _RECENT[key] = out.copy()
        while len(_RECENT) > _RECENT_SIZE:
            _RECENT.popitem(last=False)
    return out


class _Centred:
    """``Y − centre`` (float64) without a centred copy of ``Y``: rows are centred when taken.

    ``Y[i] − centre`` is one correctly rounded subtraction per entry, so a row taken here is
    bit-identical to the same row of a centred copy; only the rare full recomputation
    (:func:`_exact_nearest`) builds the whole centred matrix, for as long as it runs.
    """

    def __init__(self, Y, centre, device):
        self.data = to_tensor(Y, device)  # no copy on the CPU
        self.centre = to_tensor(centre, device)
        self.shape, self.device = self.data.shape, self.data.device

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return self.data[index] - self.centre

    def blocks(self):
        """``(rows, centred rows)`` in blocks of a few MiB."""
        for rows in row_chunks(len(self.data), self.shape[1], max_bytes=8 * 2**20):
            yield rows, self[rows]

    def dense(self):
        return self.data - self.centre


def _nearest_sq_distances(X, Y, k, dev, max_chunk_bytes, backend):
    import torch

    if max_chunk_bytes == DEFAULT_CHUNK_BYTES:  # the default: sized from a GPU's memory
        max_chunk_bytes = device_chunk_bytes(dev)

    centre = Y.mean(axis=0)
    y64 = _Centred(Y, centre, dev)
    y_sq = torch.cat([block.square().sum(dim=1) for _, block in y64.blocks()])
    y_norm_max = float(y_sq.max()) ** 0.5
    slack = 2.0 * (X.shape[1] + 8) * _FLOAT32_ROUNDOFF
    # faiss has a fast path for k = 1 only (k >= 2 keeps a heap per query: 17x slower at d = 16
    # in benchmarks/bench_queries.py, row "faiss k=2"): for k = 1 it screens one candidate,
    # for k >= 2 the k + 8 needed by the certificate.
    n_cand = min(len(Y), k if backend == "faiss" and k == 1 else k + _EXTRA_CANDIDATES)
    if backend == "faiss":
        screen_rows = _faiss_screen(Y - centre, n_cand)
        chunks = row_chunks(len(X), n_cand * X.shape[1], max_bytes=max_chunk_bytes)
    else:
        screen_rows = _torch_screen(y64, y_sq, len(X), max_chunk_bytes)
        chunks = row_chunks(len(X), len(Y), itemsize=4, max_bytes=max_chunk_bytes)
    # the answers stay on the device until the last chunk (one copy back, not one per chunk)
    out = torch.empty((len(X), k), dtype=torch.float64, device=dev)
    with pass_threads(len(X) * len(Y), device=dev):
        for rows in chunks:
            x = to_tensor(X[rows] - centre, dev)
            bound = slack * (x.square().sum(dim=1).sqrt_() + y_norm_max).square_()
            screen = screen_rows(x)
            if backend == "torch" and k == 1:
                nearest = _nearest_certified(screen, bound.float(), x, y64, y_sq)
            else:
                if backend == "torch":
                    screen = torch.topk(screen, n_cand, dim=1, largest=False, sorted=True)
                nearest = _rerank(*screen, bound, x, y64, y_sq, k)
            out[rows] = nearest
    return to_numpy(out)


def _torch_screen(y, y_sq, n_rows, max_chunk_bytes):
    """``x ↦ ‖y‖² − 2·x·y`` (float32) for all of ``y``, in one reused block.

    One product of ``[x, 1]`` with ``[−2y, ‖y‖²]`` (no bias copy); reusing the block matters:
    allocating a fresh one per chunk costs as much as the product itself (page faults).
    """
    import torch

    # Built in float32 directly: no float64 ``-2y`` or concatenated copy of ``y`` (each as
    # large as the release). Bit-identical to casting ``-2y`` (float64) to float32, since
    # scaling by 2 commutes with rounding.
    y_aug = torch.empty((len(y), y.shape[1] + 1), dtype=torch.float32, device=y.device)
    for rows, block in y.blocks():
        y_aug[rows, :-1] = block
    y_aug[:, :-1].mul_(-2.0)
    y_aug[:, -1] = y_sq
    rows = min(n_rows, chunk_rows(len(y), itemsize=4, max_bytes=max_chunk_bytes))
    block = torch.empty((rows, len(y)), dtype=torch.float32, device=y.device)

    def screen(x):
        ones = torch.ones((len(x), 1), dtype=torch.float32, device=x.device)
        return torch.mm(torch.cat([x.float(), ones], dim=1), y_aug.T, out=block[: len(x)])

    return screen


def _faiss_screen(Y_centred, n_cand):
    """``x ↦ (squared distances, indices)`` of the ``n_cand`` nearest by ``faiss.IndexFlatL2``."""
    import torch

    try:
        import faiss
    except ImportError as exc:
        raise ImportError(
            "backend='faiss' needs the optional dependency faiss-cpu "
            "(pip install 'sklearn-mace[faiss]')."
        ) from exc
    index = faiss.IndexFlatL2(Y_centred.shape[1])
    index.add(np.ascontiguousarray(Y_centred, dtype=np.float32))

    def screen(x):
        dist, ind = index.search(np.ascontiguousarray(to_numpy(x), dtype=np.float32), n_cand)
        return torch.as_tensor(dist, device=x.device), torch.as_tensor(ind, device=x.device)

    return screen


def _rerank(screened, cand, bound, x, y, y_sq, k):
    """Exact float64 distances to the candidates; uncertified rows recomputed against all ``y``."""
    import torch

    exact = (y[cand] - x.unsqueeze(1)).square_().sum(dim=2)
    nearest = torch.sort(exact, dim=1).values[:, :k]
    if k < cand.shape[1] < len(y):  # no certificate for faiss at k = 1 (see the docstring)
        gap = screened[:, -1].double() - screened[:, k - 1].double()
        uncertain = torch.nonzero(gap <= 2.0 * bound).flatten()
        if len(uncertain):
            nearest[uncertain] = _exact_nearest(x[uncertain], y, y_sq, k)
    return nearest


def _nearest_certified(screen, bound, x, y, y_sq):
    """k = 1: re-rank the screened minimum in float64; certified when the runner-up is far.

    Two cheap passes (``min``, then ``amin`` with the minimum masked) instead of ``topk``.
    Rows whose runner-up lies within ``2·bound`` of the minimum go to
    :func:`_nearest_within_bound`.
    """
    import torch

    lowest, arg = screen.min(dim=1)
    nearest = (y[arg] - x).square_().sum(dim=1)
    screen.scatter_(1, arg.unsqueeze(1), torch.inf)
    uncertain = torch.nonzero(screen.amin(dim=1) - lowest <= 2.0 * bound).flatten()
    if len(uncertain):
        screen.scatter_(1, arg.unsqueeze(1), lowest.unsqueeze(1))
        nearest[uncertain] = _nearest_within_bound(
            screen[uncertain], bound[uncertain], x[uncertain], y, y_sq
        )
    return nearest.unsqueeze(1)


def _nearest_within_bound(screen, bound, x, y, y_sq):
    """k = 1: the float64 minimum over every row of ``y`` screened within ``2·bound`` of the
    screened minimum — all rows that can be the nearest, so the result is exact."""
    import torch

    threshold = screen.amin(dim=1).add_(2.0 * bound)
    row, col = torch.nonzero(screen <= threshold.unsqueeze(1), as_tuple=True)
    if len(row) > 64 * len(x):  # massive near-ties: plain float64 for these rows
        return _exact_nearest(x, y, y_sq, 1)[:, 0]
    pair_sq = (y[col] - x[row]).square_().sum(dim=1)
    nearest = torch.full((len(x),), torch.inf, dtype=x.dtype, device=x.device)
    return nearest.scatter_reduce_(0, row, pair_sq, reduce="amin")


def _exact_nearest(x, y, y_sq, k):
    """The float64 expansion against all of ``y`` (for the few rows the screen cannot certify)."""
    import torch

    if isinstance(y, _Centred):
        y = y.dense()

    d2 = torch.addmm(y_sq, x, y.T, alpha=-2.0).add_(x.square().sum(dim=1, keepdim=True))
    return torch.topk(d2, k, dim=1, largest=False).values.clamp_(min=0.0)


def count_within_radius(X, Y, radius, *, device="auto", max_chunk_bytes=DEFAULT_CHUNK_BYTES):
    """Number of rows of ``Y`` within squared Euclidean distance ``radius²`` of each row of ``X``.

    ``radius`` may be a scalar or one value per row of ``X`` (the ε-ball of Hilprecht et
    al.'s Monte-Carlo query, MACE Eq. 1). Chunked by :func:`sq_distance_blocks`, so a row of
    ``X`` that is a copy of a row of ``Y`` counts it even for a tiny (or zero) radius.

    Returns
    -------
    counts : ndarray of shape (n,), int64
    """
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y must be 2-D with equal columns; got {X.shape} and {Y.shape}.")
    radius = np.broadcast_to(np.asarray(radius, dtype=np.float64), (len(X),))
    if not np.all(np.isfinite(radius)) or np.any(radius < 0):
        raise ValueError("radius must be finite and >= 0.")
    out = np.empty(len(X), dtype=np.int64)
    with pass_threads(len(X) * len(Y), device=device):
        # Counts are integers, so summing them over tiles of Y changes nothing; tiles keep
        # blocks of many rows of X cache-sized when Y is large (see _sq_distance_tiles).
        tile, block_bytes = None, max_chunk_bytes
        if chunk_rows(len(Y), max_bytes=max_chunk_bytes) < _MIN_BLOCK_ROWS:
            block_bytes = min(max_chunk_bytes, _TILE_BYTES)
            tile = chunk_rows(_TILE_ROWS, max_bytes=block_bytes)
        out[:] = 0
        tiles = _sq_distance_tiles(X, Y, device, block_bytes, tile)
        for rows, _, d2 in tiles:
            r2 = to_tensor(radius[rows] ** 2, d2.device).unsqueeze(1)
            out[rows] += to_numpy((d2 <= r2).sum(dim=1))
    return out


def sq_distance_blocks(X, Y, *, device="auto", max_chunk_bytes=DEFAULT_CHUNK_BYTES):
    """Yield ``(rows, d2)``: float64 squared distances from ``X[rows]`` to every row of ``Y``.

    Blocks of at most ``max_chunk_bytes``, on ``device``, from the expansion
    ``‖x‖² + ‖y‖² − 2·x·y`` on data centred at the mean of ``Y`` (one matrix product per
    block). Its absolute error, about ``d·2⁻⁵³·(‖x‖ + max‖y‖)²``, is all there is for a
    near-copy, so pairs with ``d²`` below ``_NEAR_FRACTION`` of that scale are recomputed by
    direct differences: a copy gets exactly 0, and every other pair a relative error below
    ``d·2⁻⁵³ / _NEAR_FRACTION``.
    """
    # The consumer's work on each block runs inside the same pass (and thread choice).
    with pass_threads(len(X) * len(Y), device=device):
        for rows, _, d2 in _sq_distance_tiles(X, Y, device, max_chunk_bytes, None):
            yield rows, d2


def _sq_distance_tiles(X, Y, device, max_chunk_bytes, tile):
    """Yield ``(rows, cols, d2)`` as :func:`sq_distance_blocks`, for ``Y[cols]`` in tiles of
    ``tile`` rows (``None``: all of ``Y`` at once, ``cols`` a full slice).

    Each entry of ``d2`` is the same float64 value whatever the tiling (one product entry,
    plus the row norms, and the direct differences for near pairs, whose scale uses the
    largest norm of all of ``Y``).
    """
    import torch

    dev = resolve_device(device)
    centre = Y.mean(axis=0)
    y = to_tensor(Y - centre, dev)
    y_sq = row_sq_norms(y)
    y_norm_max = float(y_sq.max()) ** 0.5
    width = len(Y) if tile is None else tile
    for rows in row_chunks(len(X), width, max_bytes=max_chunk_bytes):
        x = to_tensor(X[rows] - centre, dev)
        x_sq = x.square().sum(dim=1, keepdim=True)
        near_sq = _NEAR_FRACTION * (x_sq.sqrt() + y_norm_max).square()
        for start in range(0, len(Y), width):
            cols = slice(start, min(start + width, len(Y)))
            yt = y[cols]
            d2 = torch.addmm(y_sq[cols], x, yt.T, alpha=-2.0).add_(x_sq)
            row, col = torch.nonzero(d2 <= near_sq, as_tuple=True)
            for pairs in row_chunks(len(row), X.shape[1], max_bytes=max_chunk_bytes):
                r, c = row[pairs], col[pairs]
                d2[r, c] = (yt[c] - x[r]).square().sum(dim=1)
            yield rows, cols, d2
