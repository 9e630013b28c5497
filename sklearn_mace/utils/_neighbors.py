"""Chunked k-nearest squared Euclidean distances on torch (CPU or CUDA).

Every pass here has the same two stages (issue #28):

1. *screen* — float32 (TF32 where the user allowed it on CUDA) squared distances through
   matrix products, tile by tile of ``Y``, on data shifted by the mean of ``Y``: the shift
   is subtracted from each tile as it is taken, so no centred copy of ``Y`` as large as the
   release is ever held (on CPU; on CUDA the float32 centred ``Y`` stays on the device);
2. *re-check* — the pairs whose screened value is within the screen's rounding bound of a
   decision (a nearest neighbour, a tie, a radius) get their distance recomputed exactly in
   float64 by direct differences of the *raw* rows, ``Σ_j (x_j − y_j)²`` summed left to
   right (:func:`_direct_sq`). Answers are therefore those of a brute-force float64 pass by
   direct differences, bit for bit, indices and ties (lowest index first) included.

The screen's bound: with ``u = 2⁻²⁴`` (float32), ``u_in`` the unit roundoff of the
product's inputs (``u``; ``2⁻¹¹`` under TF32, ``2⁻⁸`` under bfloat16) and ``x′, y′`` the
shifted rows, a screened ``‖y′‖² − 2·x′·y′`` (plus ``‖x′‖²`` for full distances) differs
from the exact one by at most ``(d + 7)·u·S + 2·u_in·S`` with ``S = (‖x′‖ + max‖y′‖)²``
(rounding of the inputs, of the ``d + 1``-term product sum and of the norms; Higham,
*Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1). The passes use twice
that, ``β = (2·(d + 8)·u + 4·u_in)·S``, which also covers the float64 shift and sums.

Exact screens. When ``Y`` and a query row hold integers only, the shift is the mean of
``Y`` rounded to integers, so ``x′`` and ``y′`` are integers; if each is at most ``1/u_in``
in magnitude (``2²⁴``, ``2¹¹`` under TF32, ``2⁸`` under bfloat16: the product reads them
exactly) and ``2·(‖x′‖² + max‖y′‖²) ≤ 2²⁴``, every partial sum the product and the norms
form, in any order or blocking (FMA included), is an integer of magnitude at most
``‖y′‖² + 2·Σ_j |x′_j·y′_j| ≤ (‖x′‖ + ‖y′‖)² ≤ 2·(‖x′‖² + ‖y′‖²) ≤ 2²⁴``, hence a float32,
so no operation rounds: the screened value *is* the exact distance (less ``‖x′‖²``), equal
to the direct float64 one (integer differences and squares below ``2⁵³`` are exact too).
Such rows get ``β = 0``: no re-check of their ties — the nearest is ``torch.min``'s
index, the first among equals, and a ball count compares the screened distance with the
radius directly (``tests/utils/test_neighbors_exact.py``: integer cases up to the bound and
past it). Not with faiss, whose arithmetic is its own.

Tie-heavy data. Integer codes, binary or few-category columns make every pair of a tie a
pair to re-check: 3 binary columns, 2·10⁵ rows, tie every query with ~25 000 of them. So
when ``Y`` repeats itself (an evenly spaced sample of 4 096 rows at most 98 % distinct, and
at most half of ``Y`` distinct) the passes run over ``Y``'s *distinct* rows, numbered by
first occurrence, and map the answers back (:class:`_DistinctRows`): equal rows have equal
exact distances, so the answers stay bit for bit those of the brute-force pass.
"""

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


# Float32 has a 24-bit significand: unit roundoff 2**-24; every integer up to 2**24 in
# magnitude is a float32.
_FLOAT32_ROUNDOFF = 2.0**-24
_EXACT_FLOAT32 = 2.0**24
# The smallest normal float64: a floor for the bound β, so that β = 0 means an exact screen.
_TINY = float(np.finfo(np.float64).tiny)
# Unit roundoff of the matrix product's inputs by torch.get_float32_matmul_precision().
_INPUT_ROUNDOFF = {"highest": 2.0**-24, "high": 2.0**-11, "medium": 2.0**-8}
# Candidates beyond k kept from a float32 screen; more makes the exactness certificate
# succeed for more rows (near-ties), fewer makes the exact re-ranking cheaper.
_EXTRA_CANDIDATES = 8
NEAREST_BACKENDS = ("torch", "faiss")
# The byte budget of one float32 screen block (query rows × tile of Y) on the CPU: cache-
# sized, so the product's output is still in cache when the minimum or the count reads it.
# On CUDA the budget is an eighth of the free device memory (utils._chunks.device_chunk_bytes).
CPU_SCREEN_BYTES = 4 * 2**20
# Rows of Y per screen tile: on the CPU the tile's float32 shifted copy is made again for
# every block of query rows (a few hundred rows per block, so it costs well under 1 % of the
# product); on CUDA the shifted float32 Y is kept on the device and tiles are wide.
_CPU_TILE_ROWS = 4096
_CUDA_TILE_ROWS = 65536
_MIN_TILE_ROWS = 64
# On the CPU a float32 shifted copy of Y up to this size is kept for the whole pass.
_CPU_KEEP_BYTES = 32 * 2**20
# Bytes of float64 temporaries per block of the exact re-check (pairs × d × 16).
_RECHECK_BYTES = 16 * 2**20
# Pairs with d² below this fraction of (‖x‖ + max‖y‖)² get exact distances in
# sq_distance_blocks (near-copies, where the expansion's rounding is all there is).
_NEAR_FRACTION = 1e-6
# The last few nearest-distance passes, by content: an audit asks for the same targets'
# distances to the same release several times (the MACE query, GAN-leaks CAL, MC's median
# radius), each a full pass over the release. Values are (n, k) arrays, so this stays small.
_RECENT = OrderedDict()
_RECENT_SIZE = 4
_RECENT_LOCK = threading.Lock()
# sq_distance_blocks: Y is shifted tile by tile (tiles of at most this many bytes).
_SHIFT_TILE_BYTES = 4 * 2**20
# Y is collapsed to its distinct rows when at most this share of its rows are distinct
# (tie-heavy data: integer codes, few categories); above it the hash costs more than the
# ties it removes.
_DISTINCT_SHARE = 0.5
# Fixed per-column offsets of the row hash (deterministic: the same grouping in every run).
_HASH_SEED = 0x6D616365
# Rows of the evenly spaced sample that decides whether the whole of Y is hashed: only a
# sample that repeats itself (large groups of equal rows, the ties that cost) does.
_SAMPLE_ROWS = 4096
# ... when at most this share of the sample is distinct: with groups of equal size, a sample of
# s rows from G groups is 98 % distinct at about G = 25·s, so Y is hashed whole when it has
# at most ~100 000 distinct rows (or repeats itself in any other way the sample sees).
_SAMPLE_SHARE = 0.98


def _digest(array):
    """A content key for a float64 C-contiguous array (shape included)."""
    hasher = hashlib.blake2b(repr(array.shape).encode(), digest_size=16)
    hasher.update(memoryview(array).cast("B"))
    return hasher.digest()


def _check_pair(X, Y):
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y must be 2-D with equal columns; got {X.shape} and {Y.shape}.")
    return np.ascontiguousarray(X), np.ascontiguousarray(Y)


class _DistinctRows:
    """``Y`` as its distinct rows, numbered by first occurrence, and who repeats whom.

    Rows equal value for value (``==``, so ``-0.0`` equals ``0.0``) have the same exact
    distance ``Σ_j (x_j − y_j)²`` to every query: ``x − (−0.0)`` and ``x − 0.0`` are equal
    and ``(−0.0)² = 0.0²``. So a pass over the distinct rows answers for all of ``Y``:

    * nearest, ``k = 1``: the distinct row ``g`` found first among equals (the passes break
      ties by the lower index) is the group whose first occurrence is lowest, because
      groups are numbered by first occurrence; the answer is that first occurrence;
    * nearest, ``k ≥ 2``: the ``k`` smallest ``(distance, index)`` of ``Y`` lie in the ``k``
      smallest ``(distance, first occurrence)`` groups (each group ranked before a row's own
      group has its first occurrence before that row, at a distance no larger), and within
      a group only its ``k`` first rows can be among them: ``members`` holds those
      (:meth:`expand`);
    * ball counts: each distinct row counts as many times as it occurs (``sizes``).
    """

    def __init__(self, Y, members, sizes):
        self.members, self.sizes, self.n_rows = members, sizes, len(Y)
        self.first = members[:, 0]
        self.rows = np.ascontiguousarray(Y[self.first])

    def expand(self, d2, groups, k):
        """``(n, k)`` distances and indices into ``Y`` from the ``(n, k′)`` nearest groups."""
        if k == 1:
            return d2, self.first[groups]
        index = self.members[groups].reshape(len(d2), -1)  # (n, k′·k), padded with n_rows
        dist = np.where(index < self.n_rows, np.repeat(d2, k, axis=1), np.inf)
        order = np.lexsort((index, dist), axis=1)[:, :k]  # by distance, then by index
        return np.take_along_axis(dist, order, axis=1), np.take_along_axis(index, order, axis=1)


def _mix64(z):
    """splitmix64's finaliser, in place on a uint64 array: every input bit moves every
    output bit (a float's value bits sit high, its low bits are often all zero)."""
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def _row_hashes(Y):
    """A 64-bit hash of each row's values, in blocks of rows (no copy of ``Y``)."""
    m, d = Y.shape
    # a different offset per column, so that equal values in two columns hash apart
    offsets = np.random.default_rng(_HASH_SEED).integers(0, 2**63, size=d, dtype=np.uint64)
    hashes = np.empty(m, dtype=np.uint64)
    for rows in row_chunks(m, d, max_bytes=_SHIFT_TILE_BYTES):
        bits = (Y[rows] + 0.0).view(np.uint64) + offsets  # + 0.0: -0.0 becomes 0.0
        hashes[rows] = _mix64(bits).sum(axis=1)  # products and sums wrap modulo 2**64
    return hashes


def _distinct_rows(Y, k=1):
    """:class:`_DistinctRows` of ``Y`` (keeping each group's ``k`` first rows) when at most
    ``_DISTINCT_SHARE`` of its rows are distinct, else None.

    An evenly spaced sample of ``_SAMPLE_ROWS`` rows is hashed first; only when at most
    ``_SAMPLE_SHARE`` of it is distinct is the whole of ``Y`` hashed (0.25 s for 10⁶ × 16,
    against 0.01 s for the sample). Rows are grouped by a 64-bit hash of their values (a
    stable sort: within a group, rows in order) and every row is then compared with its
    group's first row: a hash collision (or a NaN, which equals nothing) makes this answer
    None, never a wrong grouping. Memory: 22 bytes per row of ``Y`` at the peak of the
    grouping (the hashes, their order and the sort's buffer: NumPy's traced peak at 2·10⁶
    rows), blocks otherwise; nothing per row of ``Y`` is kept.
    """
    m, d = Y.shape
    if m < 2:
        return None
    sample = Y[:: max(1, m // _SAMPLE_ROWS)]
    if len(sample) < m and len(np.unique(_row_hashes(sample))) > _SAMPLE_SHARE * len(sample):
        return None  # an evenly spaced sample shows no heavy repetition
    hashes = _row_hashes(Y)
    order = np.argsort(hashes, kind="stable")  # equal hashes: rows in ascending order
    new = np.ones(m, dtype=bool)
    for rows in row_chunks(m - 1, 1, max_bytes=_SHIFT_TILE_BYTES):
        here = order[rows.start : rows.stop + 1]
        new[rows.start + 1 : rows.stop + 1] = hashes[here[1:]] != hashes[here[:-1]]
    del hashes
    starts = np.flatnonzero(new)
    del new
    if len(starts) > _DISTINCT_SHARE * m:
        return None
    sizes = np.diff(np.append(starts, m))
    by_first = np.argsort(order[starts])  # groups numbered by first occurrence
    take = np.minimum(starts[:, None] + np.arange(k), m - 1)
    members = np.where(np.arange(k) < sizes[:, None], order[take], m)
    distinct = _DistinctRows(Y, members[by_first], sizes[by_first])
    rank = np.empty_like(by_first)
    rank[by_first] = np.arange(len(by_first))
    for rows in row_chunks(m, d, max_bytes=_SHIFT_TILE_BYTES):
        group = rank[np.searchsorted(starts, np.arange(rows.start, rows.stop), side="right") - 1]
        if not np.array_equal(Y[order[rows]], distinct.rows[group]):
            return None
    return distinct


def nearest_sq_distances(
    X,
    Y,
    *,
    k=1,
    device="auto",
    max_chunk_bytes=DEFAULT_CHUNK_BYTES,
    backend="torch",
    return_indices=False,
):
    """Squared Euclidean distances from each row of ``X`` to its ``k`` nearest rows of ``Y``.

    Exactly the answer of a brute-force float64 pass by direct differences (each distance
    ``Σ_j (x_j − y_j)²`` of the raw rows, summed left to right; ties broken by the lower
    index of ``Y``), at float32 matrix-product speed (see the module docstring):

    1. *screen* — float32 ``‖y′‖² − 2·x′·y′`` (the squared distance less a per-row constant)
       of rows shifted by the mean of ``Y``, by matrix products over tiles of ``Y``
       (``backend="torch"``; BLAS on CPU, cuBLAS on GPU) keeping the running minimum and
       runner-up (``k = 1``) or the ``k + 8`` smallest (``k ≥ 2``); or
       ``faiss.IndexFlatL2`` (``backend="faiss"``, optional dependency);
    2. *certify* — with the screen's error bound ``β`` (module docstring), a row is decided
       when the runner-up (``k = 1``) or the last kept candidate lies more than ``2β`` above
       the ``k``-th screened value: no other row of ``Y`` can then be among the ``k``
       nearest or tie with them. The candidates' exact distances are computed and ranked;
    3. *re-check* — rows without that certificate (exact ties, duplicated rows of ``Y``,
       near-ties below float32's resolution) are screened again and every row of ``Y``
       within ``2β`` of their ``k``-th screened value gets its exact distance; the ``k``
       smallest (lowest index first among equals) are the answer.

    Rows of ``Y`` repeated many times are screened once (the pass runs over the distinct
    rows and maps the answers back), and integer rows within a proven bound are screened
    exactly (``β = 0``, ties not re-checked): module docstring, "Exact screens" and
    "Tie-heavy data".

    With ``backend="faiss"`` and ``k = 1`` there is no runner-up to certify with (asking
    faiss for two neighbours cost 17 times more than for one at d = 16, 1e4 × 1e5: row
    ``faiss k=2`` of ``benchmarks/bench_queries.py``): the result is the exact distance to
    faiss's candidate, the minimum unless another row of ``Y`` is within ``2β`` of it (a
    near-tie), and then at most ``2β`` above it.

    The last few results are kept by content (a hash of ``X`` and ``Y`` and the arguments):
    asking again for the same distances, as an audit does for the MACE query, GAN-leaks CAL
    and MC's radius, returns a copy of the same values without another pass.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (m, d), m >= k
    k : int, default=1
    device : {"auto", "cpu", "cuda"}, default="auto"
    max_chunk_bytes : int, default=64 MiB
        Largest float32 screen block; the default means ``CPU_SCREEN_BYTES`` (4 MiB) on the
        CPU and an eighth of the free device memory on CUDA (64 MiB to 2 GiB,
        ``utils._chunks.device_chunk_bytes``).
    backend : {"torch", "faiss"}, default="torch"
    return_indices : bool, default=False
        Also return the indices of the ``k`` nearest rows of ``Y``.

    Returns
    -------
    sq_distances : ndarray of shape (n, k), ascending along axis 1
    indices : ndarray of int64 of shape (n, k)
        Only with ``return_indices=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.utils._neighbors import nearest_sq_distances
    >>> Y = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 0.0]])
    >>> d2, idx = nearest_sq_distances([[0.0, 1.0]], Y, k=2, return_indices=True)
    >>> d2.tolist(), idx.tolist()  # the two copies tie: lower index first
    ([[1.0, 1.0]], [[0, 2]])
    """
    X, Y = _check_pair(X, Y)
    if not 1 <= k <= len(Y):
        raise ValueError(f"k must be between 1 and len(Y)={len(Y)}; got {k}.")
    if backend not in NEAREST_BACKENDS:
        raise ValueError(f"backend must be one of {NEAREST_BACKENDS}; got {backend!r}.")
    dev = resolve_device(device)
    key = (_digest(X), _digest(Y), k, str(dev), max_chunk_bytes, backend)
    with _RECENT_LOCK:
        if key in _RECENT:
            _RECENT.move_to_end(key)
            d2, idx = _RECENT[key]
            return (d2.copy(), idx.copy()) if return_indices else d2.copy()
    d2, idx = _nearest_sq_distances(X, Y, k, dev, max_chunk_bytes, backend, True)
    with _RECENT_LOCK:
        _RECENT[key] = (d2.copy(), idx.copy())
        while len(_RECENT) > _RECENT_SIZE:
            _RECENT.popitem(last=False)
    return (d2, idx) if return_indices else d2


def _direct_sq(a, b):
    """``Σ_j (a_j − b_j)²`` per row pair, float64, summed left to right (any device).

    A fixed order makes the value the same on every device and in NumPy
    (``np.cumsum(..., axis=1)[:, -1]``): torch's CPU ``cumsum`` is sequential; on CUDA
    (a parallel scan) the columns are added one by one.
    """
    import torch

    diff = (a - b).square_()
    if diff.shape[1] == 0:
        return diff.new_zeros(len(diff))
    if diff.device.type == "cpu":
        return torch.cumsum(diff, dim=1)[:, -1]
    out = diff[:, 0].clone()
    for j in range(1, diff.shape[1]):
        out.add_(diff[:, j])
    return out


def _input_roundoff(torch):
    """Unit roundoff of float32 matrix-product inputs under the user's precision setting."""
    precision = torch.get_float32_matmul_precision()
    u_in = _INPUT_ROUNDOFF.get(precision, _INPUT_ROUNDOFF["medium"])
    if torch.cuda.is_available() and torch.backends.cuda.matmul.allow_tf32:
        u_in = max(u_in, _INPUT_ROUNDOFF["high"])
    return u_in


class _Screen:
    """Float32 screens of query rows against ``Y`` in tiles, shifted by the mean of ``Y``.

    Holds the raw ``Y`` as a tensor (a view on the CPU, one copy on CUDA) for the exact
    re-check, the shifted rows' squared norms (float64, one value per row) and, on CUDA or
    when small, the shifted float32 ``Y``; otherwise each tile is shifted when taken.
    """

    def __init__(self, Y, dev, max_chunk_bytes, n_queries, exact=True):
        import torch

        self.torch, self.dev, self.d = torch, dev, Y.shape[1]
        self.y64 = to_tensor(Y, dev)
        integer = exact and _all_integers(Y)
        shift = Y.mean(axis=0)
        self.shift = to_tensor(np.round(shift) if integer else shift, dev)
        y_sq = torch.empty(len(Y), dtype=torch.float64, device=dev)
        y_abs = torch.zeros((), dtype=torch.float64, device=dev)  # read once, at the end
        for rows in row_chunks(len(Y), self.d, max_bytes=_SHIFT_TILE_BYTES):
            shifted = self.y64[rows] - self.shift
            if integer and shifted.numel():
                y_abs = torch.maximum(y_abs, shifted.abs().max())
            y_sq[rows] = shifted.square_().sum(dim=1)
        y_abs = float(y_abs)
        self.y_sq_max = float(y_sq.max())
        self.y_norm_max = self.y_sq_max**0.5
        self.y_sq32 = y_sq.float()
        del y_sq
        u_in = _input_roundoff(torch)
        self.beta_coef = 2.0 * (self.d + 8) * _FLOAT32_ROUNDOFF + 4.0 * u_in
        # integer inputs the product reads exactly (module docstring, "Exact screens")
        self.exact_input = 1.0 / u_in if integer and y_abs <= 1.0 / u_in else None
        on_cuda = dev.type == "cuda"
        if max_chunk_bytes == DEFAULT_CHUNK_BYTES:  # the default: CPU budget, or GPU memory
            max_chunk_bytes = device_chunk_bytes(dev) if on_cuda else CPU_SCREEN_BYTES
        tile = _CUDA_TILE_ROWS if on_cuda else _CPU_TILE_ROWS
        # at least 64 columns per tile, whatever the budget (a tile of one column per
        # product would spend everything on Python and launch overhead)
        self.tile = min(len(Y), tile, max(_MIN_TILE_ROWS, max_chunk_bytes // 4))
        rows = chunk_rows(self.tile, itemsize=4, max_bytes=max_chunk_bytes)
        self.rows = max(1, min(n_queries, rows))
        self.max_chunk_bytes = max_chunk_bytes
        self.y32 = None
        if on_cuda or 4 * Y.size <= _CPU_KEEP_BYTES:
            self.y32 = torch.empty((len(Y), self.d), dtype=torch.float32, device=dev)
            for rows in row_chunks(len(Y), self.d, max_bytes=_SHIFT_TILE_BYTES):
                self.y32[rows] = self.y64[rows] - self.shift
        self.block = torch.empty(self.rows * self.tile, dtype=torch.float32, device=dev)

    def __len__(self):
        return len(self.y64)

    def blocks(self, n_queries):
        """Slices of ``self.rows`` query rows covering ``range(n_queries)``."""
        for start in range(0, n_queries, self.rows):
            yield slice(start, min(start + self.rows, n_queries))

    def prepare(self, x64):
        """``(x32, beta, x_sq32)``: shifted float32 rows, their bound ``β``, ``‖x′‖²``.

        ``β = 0`` for the rows whose screen is exact (module docstring, "Exact screens").
        """
        x = x64 - self.shift
        x_sq = x.square().sum(dim=1)
        beta = (x_sq.sqrt() + self.y_norm_max).square_().mul_(self.beta_coef)
        # never 0 unless exact, even where the bound underflows (data near 1e-160 and below)
        beta.clamp_(min=_TINY)
        if self.exact_input is not None and x.shape[1]:
            exact = (x == x.round()).all(dim=1) & (x.abs().amax(dim=1) <= self.exact_input)
            exact &= 2.0 * (x_sq + self.y_sq_max) <= _EXACT_FLOAT32
            beta = beta.masked_fill(exact, 0.0)
        return x.float(), beta, x_sq.float()

    def tiles(self, x32):
        """Yield ``(start, s)``: ``s[i, j] = ‖y′‖² − 2·x′_i·y′_{start+j}`` (float32) per tile.

        ``s`` is a view of one reused buffer (allocating a block per tile costs as much as
        the product: page faults); it is overwritten by the next tile.
        """
        torch = self.torch
        for start in range(0, len(self), self.tile):
            stop = min(start + self.tile, len(self))
            if self.y32 is not None:
                y = self.y32[start:stop]
            else:
                y = (self.y64[start:stop] - self.shift).float()
            s = self.block[: len(x32) * (stop - start)].view(len(x32), stop - start)
            torch.addmm(self.y_sq32[start:stop], x32, y.T, alpha=-2.0, out=s)
            yield start, s

    def exact(self, x64, rows, cols):
        """Exact distances of the pairs ``(x64[rows], Y[cols])``, in bounded blocks."""
        out = self.torch.empty(len(rows), dtype=self.torch.float64, device=self.dev)
        step = max(1, _RECHECK_BYTES // (16 * max(1, self.d)))
        for start in range(0, len(rows), step):
            pairs = slice(start, start + step)
            out[pairs] = _direct_sq(x64[rows[pairs]], self.y64[cols[pairs]])
        return out


def _all_integers(Y):
    """Whether every value of ``Y`` is an integer (in blocks; stops at the first block that
    is not)."""
    for rows in row_chunks(len(Y), Y.shape[1], max_bytes=_SHIFT_TILE_BYTES):
        block = Y[rows]
        if not np.array_equal(block, np.round(block)):
            return False
    return True


def _round_up32(value, torch):
    """The smallest float32 ≥ ``value`` (float64), so a float32 comparison loses nothing."""
    up = value.float()
    return torch.where(up.double() < value, torch.nextafter(up, up.new_tensor(torch.inf)), up)


def _round_down32(value, torch):
    """The largest float32 ≤ ``value`` (float64)."""
    down = value.float()
    return torch.where(
        down.double() > value, torch.nextafter(down, down.new_tensor(-torch.inf)), down
    )


def _smallest_k(rows, values, cols, n_rows, k, fill_col):
    """Per row, the ``k`` smallest ``(value, col)`` pairs in that order: ``(n_rows, k)``
    tensors of values (``inf`` padded) and columns (``fill_col`` padded)."""
    import torch

    order = torch.sort(cols, stable=True).indices  # lexicographic by (row, value, col)
    order = order[torch.sort(values[order], stable=True).indices]
    order = order[torch.sort(rows[order], stable=True).indices]
    rows, values, cols = rows[order], values[order], cols[order]
    counts = torch.bincount(rows, minlength=n_rows)
    first = torch.cumsum(counts, 0) - counts
    position = torch.arange(len(rows), device=rows.device) - first[rows]
    keep = position < k
    out_v = torch.full((n_rows, k), torch.inf, dtype=values.dtype, device=values.device)
    out_c = torch.full((n_rows, k), fill_col, dtype=cols.dtype, device=cols.device)
    out_v[rows[keep], position[keep]] = values[keep]
    out_c[rows[keep], position[keep]] = cols[keep]
    return out_v, out_c


def _all_within(screen, x32, x64, threshold, k):
    """Exact ``k`` nearest for rows whose candidates are all rows of ``Y`` screened at or
    below ``threshold`` (float64, per row): a second screen collects them tile by tile."""
    import torch

    n_rows, fill = len(x32), len(screen)
    best_v = torch.full((n_rows, k), torch.inf, dtype=torch.float64, device=x64.device)
    best_c = torch.full((n_rows, k), fill, dtype=torch.int64, device=x64.device)
    slot_rows = torch.arange(n_rows, device=x64.device).repeat_interleave(k)
    limit = _round_up32(threshold, torch).unsqueeze(1)
    for start, s in screen.tiles(x32):
        row, col = torch.nonzero(s <= limit, as_tuple=True)
        col = col + start
        values = screen.exact(x64, row, col)
        best_v, best_c = _smallest_k(
            torch.cat([slot_rows, row]),
            torch.cat([best_v.flatten(), values]),
            torch.cat([best_c.flatten(), col]),
            n_rows,
            k,
            fill,
        )
    return best_v, best_c


def _nearest_one(screen, x32, x64, beta):
    """k = 1 for one block of query rows: running screened minimum and runner-up over the
    tiles (no top-k), the exact distance to the minimum, re-check where the runner-up is
    within ``2β``."""
    import torch

    n = len(x32)
    b1 = torch.full((n,), torch.inf, dtype=torch.float32, device=x32.device)
    b2 = b1.clone()
    arg = torch.zeros(n, dtype=torch.int64, device=x32.device)
    for start, s in screen.tiles(x32):
        m1, i1 = s.min(dim=1)
        s.scatter_(1, i1.unsqueeze(1), torch.inf)
        m2 = s.amin(dim=1)
        b2 = torch.minimum(torch.maximum(b1, m1), torch.minimum(b2, m2))
        arg = torch.where(m1 < b1, i1 + start, arg)
        b1 = torch.minimum(b1, m1)
    rows = torch.arange(n, device=x32.device)
    values = screen.exact(x64, rows, arg).unsqueeze(1)
    arg = arg.unsqueeze(1)
    # β = 0: an exact screen, whose minimum is the exact one and whose torch.min index the
    # lowest among ties (documented for torch.min(dim); across tiles `<` keeps the first)
    near = (b2.double() - b1.double() <= 2.0 * beta) & (beta > 0)
    uncertain = torch.nonzero(near).flatten()
    if len(uncertain):
        u = uncertain
        values[u], arg[u] = _all_within(screen, x32[u], x64[u], b1[u].double() + 2 * beta[u], 1)
    return values, arg


def _certify(screen, x32, x64, beta, kept_v, kept_c, k):
    """Exact ranking of the kept candidates (screened values ``kept_v``, ascending, columns
    ``kept_c``); rows whose last candidate is within ``2β`` of the ``k``-th go to
    :func:`_all_within`."""
    import torch

    n, n_cand = kept_c.shape
    rows = torch.arange(n, device=x64.device).repeat_interleave(n_cand)
    exact = screen.exact(x64, rows, kept_c.flatten())
    values, cols = _smallest_k(rows, exact, kept_c.flatten(), n, k, len(screen))
    if n_cand < len(screen):
        gap = kept_v[:, -1].double() - kept_v[:, k - 1].double()
        uncertain = torch.nonzero(gap <= 2.0 * beta).flatten()
        if len(uncertain):
            u = uncertain
            threshold = kept_v[u, k - 1].double() + 2.0 * beta[u]
            values[u], cols[u] = _all_within(screen, x32[u], x64[u], threshold, k)
    return values, cols


def _nearest_k(screen, x32, x64, beta, k):
    """k ≥ 2 for one block of query rows: the ``k + 8`` smallest screened values, kept over
    the tiles by merging each tile's smallest into the running set, then certified."""
    import torch

    n_cand = min(len(screen), k + _EXTRA_CANDIDATES)
    kept_v = torch.full((len(x32), n_cand), torch.inf, dtype=torch.float32, device=x32.device)
    kept_c = torch.zeros((len(x32), n_cand), dtype=torch.int64, device=x32.device)
    for start, s in screen.tiles(x32):
        tile_v, tile_c = torch.topk(s, min(n_cand, s.shape[1]), dim=1, largest=False)
        both_v = torch.cat([kept_v, tile_v], dim=1)
        kept_v, pick = torch.topk(both_v, n_cand, dim=1, largest=False, sorted=True)
        kept_c = torch.cat([kept_c, tile_c + start], dim=1).gather(1, pick)
    return _certify(screen, x32, x64, beta, kept_v, kept_c, k)


def _nearest_sq_distances(X, Y, k, dev, max_chunk_bytes, backend, with_indices=False):
    """The pass over ``Y``'s distinct rows when it repeats itself, else over ``Y``."""
    distinct = _distinct_rows(Y, k)
    if distinct is None:
        return _nearest_screened(X, Y, k, dev, max_chunk_bytes, backend, with_indices)
    k_groups = min(k, len(distinct.rows))
    d2, groups = _nearest_screened(X, distinct.rows, k_groups, dev, max_chunk_bytes, backend, True)
    d2, idx = distinct.expand(d2, groups, k)
    return (d2, idx) if with_indices else d2


def _nearest_screened(X, Y, k, dev, max_chunk_bytes, backend, with_indices=False):
    import torch

    n = len(X)
    out_d = torch.empty((n, k), dtype=torch.float64, device=dev)
    out_i = torch.empty((n, k), dtype=torch.int64, device=dev)
    with pass_threads(len(X) * len(Y), device=dev):
        screen = _Screen(Y, dev, max_chunk_bytes, n, exact=backend != "faiss")
        queries = to_tensor(X, dev)  # a view on the CPU, one copy on CUDA
        faiss_screen = _faiss_screen(screen, k) if backend == "faiss" else None
        for rows in screen.blocks(n):
            x64 = queries[rows]
            x32, beta, x_sq = screen.prepare(x64)
            if faiss_screen is not None:  # faiss's values are full distances: less ‖x′‖²
                kept_v, kept_c = faiss_screen(x32)
                kept_v = kept_v - x_sq.unsqueeze(1)
                if k == 1 and kept_c.shape[1] == 1:  # no certificate (see the docstring)
                    beta = beta.new_full(beta.shape, -torch.inf)
                values, cols = _certify(screen, x32, x64, beta, kept_v, kept_c, k)
            elif k == 1:
                values, cols = _nearest_one(screen, x32, x64, beta)
            else:
                values, cols = _nearest_k(screen, x32, x64, beta, k)
            out_d[rows], out_i[rows] = values, cols
    # the answers stay on the device until the last block (one copy back, not one per block)
    d2 = to_numpy(out_d)
    return (d2, to_numpy(out_i)) if with_indices else d2


def _faiss_screen(screen, k):
    """``x32 ↦ (screened values, columns)`` of faiss's nearest candidates (ascending).

    faiss has a fast path for k = 1 only (k >= 2 keeps a heap per query: 17x slower at
    d = 16 in benchmarks/bench_queries.py, row "faiss k=2"): for k = 1 it screens one
    candidate, for k >= 2 the k + 8 needed by the certificate. Its index holds the shifted
    float32 rows (built tile by tile, no float64 shifted copy); its values are full squared
    distances, so the certificate's gaps are the same as the torch screen's.
    """
    import torch

    try:
        import faiss
    except ImportError as exc:
        raise ImportError(
            "backend='faiss' needs the optional dependency faiss-cpu "
            "(pip install 'sklearn-mace[faiss]')."
        ) from exc
    n_cand = min(len(screen), 1 if k == 1 else k + _EXTRA_CANDIDATES)
    index = faiss.IndexFlatL2(screen.d)
    for rows in row_chunks(len(screen), screen.d, max_bytes=_SHIFT_TILE_BYTES):
        index.add(np.ascontiguousarray(to_numpy(screen.y64[rows] - screen.shift), np.float32))

    def search(x32):
        dist, ind = index.search(np.ascontiguousarray(to_numpy(x32)), n_cand)
        return torch.as_tensor(dist, device=x32.device), torch.as_tensor(ind, device=x32.device)

    return search


def count_within_radius(X, Y, radius, *, device="auto", max_chunk_bytes=DEFAULT_CHUNK_BYTES):
    """Number of rows of ``Y`` within squared Euclidean distance ``radius²`` of each row of ``X``.

    ``radius`` may be a scalar or one value per row of ``X`` (the ε-ball of Hilprecht et
    al.'s Monte-Carlo query, MACE Eq. 1). The counts are those of a brute-force float64
    pass by direct differences (``Σ_j (x_j − y_j)² ≤ radius²``): a float32 screen
    (module docstring) decides every pair farther than its bound ``β`` from ``radius²``
    and the pairs within ``β`` are re-checked exactly, so a copy of a row of ``Y`` counts
    it even at radius 0.

    Returns
    -------
    counts : ndarray of shape (n,), int64
    """

    X, Y = _check_pair(X, Y)
    radius = np.broadcast_to(np.asarray(radius, dtype=np.float64), (len(X),))
    if not np.all(np.isfinite(radius)) or np.any(radius < 0):
        raise ValueError("radius must be finite and >= 0.")
    dev = resolve_device(device)
    if len(Y) == 0:
        return np.zeros(len(X), dtype=np.int64)
    distinct = _distinct_rows(Y)
    if distinct is not None:  # each distinct row counts as often as it occurs
        return _count_screened(X, distinct.rows, radius, dev, max_chunk_bytes, distinct.sizes)
    return _count_screened(X, Y, radius, dev, max_chunk_bytes)


def _count_screened(X, Y, radius, dev, max_chunk_bytes, sizes=None):
    """The counts of :func:`count_within_radius`, row ``j`` of ``Y`` counting ``sizes[j]``
    times (once when ``sizes`` is None)."""
    import torch

    out = torch.zeros(len(X), dtype=torch.int64, device=dev)
    weight = None if sizes is None else to_tensor(sizes, dev, dtype=torch.int64)
    with pass_threads(len(X) * len(Y), device=dev):
        screen = _Screen(Y, dev, max_chunk_bytes, len(X))
        queries, r2_all = to_tensor(X, dev), to_tensor(radius**2, dev)
        for rows in screen.blocks(len(X)):
            x64, r2 = queries[rows], r2_all[rows]
            x32, beta, x_sq = screen.prepare(x64)
            low = _round_down32(r2 - beta, torch)
            high = _round_up32(r2 + beta, torch)
            # exact screens (β = 0): a float32 s ≤ r² iff s ≤ round_down32(r²), so count
            # s < the next float32 up and re-check nothing (high below low: no band)
            exact = beta == 0
            high = torch.where(exact, low, high).unsqueeze(1)
            low = torch.where(exact, torch.nextafter(low, low.new_tensor(torch.inf)), low)
            low = low.unsqueeze(1)
            count = out[rows]
            for start, s in screen.tiles(x32):
                s.add_(x_sq.unsqueeze(1))  # full squared distances
                row, col = torch.nonzero((s >= low) & (s <= high), as_tuple=True)
                col = col + start
                inside = screen.exact(x64, row, col) <= r2[row]
                row, col = row[inside], col[inside]
                if weight is None:
                    count += (s < low).sum(dim=1)
                    count += torch.bincount(row, minlength=len(count))
                else:
                    w = weight[start : start + s.shape[1]]
                    count += torch.where(s < low, w, 0).sum(dim=1)
                    count.index_add_(0, row, weight[col])
    return to_numpy(out)


def sq_distance_blocks(X, Y, *, device="auto", max_chunk_bytes=DEFAULT_CHUNK_BYTES):
    """Yield ``(rows, d2)``: float64 squared distances from ``X[rows]`` to every row of ``Y``.

    Blocks of at most ``max_chunk_bytes``, on ``device``, from the expansion
    ``‖x‖² + ‖y‖² − 2·x·y`` on data shifted by the mean of ``Y`` (one matrix product per
    tile of ``Y``; each tile is shifted when taken, no shifted copy of ``Y``). Its absolute
    error, about ``d·2⁻⁵³·(‖x‖ + max‖y‖)²``, is all there is for a near-copy, so pairs with
    ``d²`` below ``_NEAR_FRACTION`` of that scale are recomputed by direct differences
    (:func:`_direct_sq` of the raw rows): a copy gets exactly 0, and every other pair a
    relative error below ``d·2⁻⁵³ / _NEAR_FRACTION``.
    """
    # The consumer's work on each block runs inside the same pass (and thread choice).
    with pass_threads(len(X) * len(Y), device=device):
        yield from _sq_distance_tiles(X, Y, device, max_chunk_bytes)


def _sq_distance_tiles(X, Y, device, max_chunk_bytes):
    """The blocks of :func:`sq_distance_blocks`, filled tile by tile of ``Y``."""
    import torch

    X, Y = _check_pair(X, Y)
    dev = resolve_device(device)
    y64 = to_tensor(Y, dev)
    shift = to_tensor(Y.mean(axis=0), dev)
    y_sq = torch.empty(len(Y), dtype=torch.float64, device=dev)
    tile = chunk_rows(Y.shape[1], max_bytes=_SHIFT_TILE_BYTES)
    for start in range(0, len(Y), tile):
        y_sq[start : start + tile] = row_sq_norms(y64[start : start + tile] - shift)
    y_norm_max = float(y_sq.max()) ** 0.5 if len(Y) else 0.0
    queries = to_tensor(X, dev)
    for rows in row_chunks(len(X), len(Y), max_bytes=max_chunk_bytes):
        x = queries[rows] - shift
        x_sq = x.square().sum(dim=1, keepdim=True)
        near_sq = _NEAR_FRACTION * (x_sq.sqrt() + y_norm_max).square()
        d2 = torch.empty((len(x), len(Y)), dtype=torch.float64, device=dev)
        for start in range(0, len(Y), tile):
            cols = slice(start, min(start + tile, len(Y)))
            torch.addmm(y_sq[cols], x, (y64[cols] - shift).T, alpha=-2.0, out=d2[:, cols])
        d2.add_(x_sq)
        row, col = torch.nonzero(d2 <= near_sq, as_tuple=True)
        for pairs in row_chunks(len(row), X.shape[1], max_bytes=max_chunk_bytes):
            r, c = row[pairs], col[pairs]
            d2[r, c] = _direct_sq(queries[rows][r], y64[c])
        yield rows, d2
