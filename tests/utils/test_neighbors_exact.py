"""Float32 screen + exact float64 re-check (issue #28): answers identical to brute force.

The reference is a brute-force float64 pass by direct differences of the raw rows, the
columns summed left to right (``np.cumsum(..., axis=2)[..., -1]``), ranked by (distance,
index): the k nearest with the lower index first among exact ties. ``nearest_sq_distances``
and ``count_within_radius`` must return exactly that — ``assert_array_equal``, no
tolerance — on the cases a float32 screen gets wrong: duplicates and exact ties, near-ties
below float32's resolution, data far from the origin, wide and one-column data,
integer-coded and binary columns, repeated rows, signed zeros, and tiny blocks and tiles;
both over every row of ``Y`` and over its distinct rows (the tie-heavy pass).
"""

import numpy as np
import pytest
import torch

from sklearn_mace.utils import _neighbors
from sklearn_mace.utils._neighbors import (
    count_within_radius,
    nearest_sq_distances,
    sq_distance_blocks,
)


def brute_sq(X, Y):
    return np.cumsum((X[:, None, :] - Y[None, :, :]) ** 2, axis=2)[..., -1]


def brute_nearest(X, Y, k):
    D = brute_sq(X, Y)
    index = np.broadcast_to(np.arange(len(Y)), D.shape)
    order = np.lexsort((index, D), axis=1)[:, :k]  # by distance, then by index
    return np.take_along_axis(D, order, axis=1), order


def _case(name, seed=0):
    rng = np.random.default_rng(seed)
    if name == "gaussian":
        return rng.normal(size=(150, 7)), rng.normal(size=(900, 7))
    if name == "far from the origin":  # a 1e6 offset: the unshifted expansion loses ~1e-4
        return rng.normal(size=(120, 5)) + 1e6, rng.normal(size=(800, 5)) + 1e6
    if name == "integer-coded":  # many exact ties and duplicated rows
        Y = rng.integers(0, 4, size=(1200, 6)).astype(float)
        return np.vstack([Y[:40], rng.integers(0, 4, size=(80, 6))]).astype(float), Y
    if name == "duplicates and near-ties":
        # 40 rows repeated 25 times, far out, and queries 1e-6 from them: the candidates'
        # squared distances differ by ~1e-12, far below the float32 screen's resolution
        Y = np.repeat(rng.normal(size=(40, 5)), 25, axis=0) + 1e4
        Y[1::25] += 1e-7 * rng.normal(size=(40, 5))  # near-copies beside the copies
        return np.vstack([Y[::37] + 1e-6, Y[::50], rng.normal(size=(10, 5)) + 1e4]), Y
    if name == "binary columns":  # tie-heavy: 8 distinct rows, each query ties with ~375
        Y = rng.integers(0, 2, size=(3000, 3)).astype(float)
        return rng.integers(0, 2, size=(90, 3)).astype(float), Y
    if name == "repeated rows far out":  # few distinct rows, near-ties between them
        base = rng.normal(size=(12, 4)) + 1e6
        base[1::3] = base[::3] + 1e-9 * rng.normal(size=(4, 4))
        Y = base[rng.integers(0, 12, size=2000)]
        return np.vstack([base + 1e-10, rng.normal(size=(20, 4)) + 1e6]), Y
    if name == "signed zeros":  # -0.0 and 0.0 are equal values: one distinct row
        Y = np.zeros((600, 3))
        Y[rng.random(Y.shape) < 0.5] = -0.0
        Y[::7] = 1.0
        return np.vstack([np.zeros((5, 3)), -np.ones((5, 3)), rng.normal(size=(20, 3))]), Y
    if name == "integers up to the float32 bound":  # exact screens: 2(‖x′‖² + ‖y′‖²) ≤ 2²⁴
        return rng.integers(-1400, 1401, size=(150, 2)).astype(float), rng.integers(
            -1400, 1401, size=(900, 2)
        ).astype(float)
    if name == "integers past the float32 bound":  # too large to screen exactly: re-checked
        Y = rng.integers(-(10**6), 10**6, size=(900, 3)).astype(float)
        return np.vstack([Y[:30] + 1, rng.integers(-(10**6), 10**6, size=(90, 3))]), Y
    if name == "half-integers":  # not integers: the bound, not an exact screen
        return rng.integers(0, 6, size=(120, 3)) / 2.0, rng.integers(0, 6, size=(1100, 3)) / 2.0
    if name == "tiny values":  # subnormal squared distances: the bound β underflows to 0
        Y = rng.normal(size=(700, 3)) * 5e-161
        return np.vstack([Y[:20], rng.normal(size=(40, 3)) * 5e-161]), Y
    if name == "64 columns":
        return rng.normal(size=(60, 64)), rng.normal(size=(700, 64))
    if name == "one column":  # coarse values: exact ties at equal |x − y|
        return rng.normal(size=(150, 1)).round(1), rng.normal(size=(900, 1)).round(1)
    raise ValueError(name)


CASES = [
    "gaussian",
    "far from the origin",
    "integer-coded",
    "duplicates and near-ties",
    "64 columns",
    "one column",
    "binary columns",
    "repeated rows far out",
    "signed zeros",
    "integers up to the float32 bound",
    "integers past the float32 bound",
    "half-integers",
    "tiny values",
]


@pytest.fixture(params=["distinct rows", "every row"])
def path(request, monkeypatch):
    """Both passes: over Y's distinct rows when it repeats itself (the default), and over
    every row of Y (``_DISTINCT_SHARE = 0``: never collapsed)."""
    if request.param == "every row":
        monkeypatch.setattr(_neighbors, "_DISTINCT_SHARE", 0.0)
    return request.param


@pytest.mark.parametrize("chunk_bytes", [_neighbors.DEFAULT_CHUNK_BYTES, 20_000, 1])
@pytest.mark.parametrize("k", [1, 4])
@pytest.mark.parametrize("case", CASES)
def test_nearest_equals_brute_force_exactly(case, k, chunk_bytes, path):
    X, Y = _case(case)
    _neighbors._RECENT.clear()
    got_d, got_i = nearest_sq_distances(
        X, Y, k=k, device="cpu", max_chunk_bytes=chunk_bytes, return_indices=True
    )
    want_d, want_i = brute_nearest(X, Y, k)
    np.testing.assert_array_equal(got_d, want_d)
    np.testing.assert_array_equal(got_i, want_i)
    # without indices: the same distances (and the cache keeps them by content)
    np.testing.assert_array_equal(nearest_sq_distances(X, Y, k=k, device="cpu"), want_d)


def test_ties_go_to_the_lowest_index():
    Y = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [0.0, 0.0], [0.0, 0.0]])
    d2, idx = nearest_sq_distances(np.zeros((1, 2)), Y, k=4, return_indices=True)
    assert d2.tolist() == [[0.0, 0.0, 1.0, 1.0]]
    assert idx.tolist() == [[4, 5, 0, 1]]


def test_the_screen_would_be_wrong_without_the_re_check():
    # Guards the test cases themselves: on "duplicates and near-ties" the float32 screen's
    # own ranking differs from the exact one, so exact answers above come from the re-check.
    X, Y = _case("duplicates and near-ties")
    shift = Y.mean(axis=0)
    x, y = (X - shift).astype(np.float32), (Y - shift).astype(np.float32)
    screened = (y * y).sum(axis=1)[None, :] - 2.0 * x @ y.T
    _, want = brute_nearest(X, Y, 1)
    assert np.any(np.argmin(screened, axis=1) != want[:, 0])


@pytest.mark.parametrize("case", CASES)
def test_counts_equal_brute_force_exactly(case, path):
    X, Y = _case(case, seed=1)
    D = brute_sq(X, Y)
    nearest = np.sort(D, axis=1)
    # radii exactly at a pair's distance (ties at the boundary), at 0 (copies only), at
    # the median nearest distance, and per row
    for radius in (
        0.0,
        float(np.sqrt(np.median(nearest[:, 0]))),
        np.sqrt(nearest[:, 3]),
        np.sqrt(nearest[:, 0]) * (1 + 1e-12),
    ):
        r = np.broadcast_to(radius, (len(X),))
        for chunk_bytes in (_neighbors.DEFAULT_CHUNK_BYTES, 5_000):
            got = count_within_radius(X, Y, radius, device="cpu", max_chunk_bytes=chunk_bytes)
            np.testing.assert_array_equal(got, (D <= r[:, None] ** 2).sum(axis=1))


@pytest.mark.parametrize(
    ("case", "n_distinct"),
    [("binary columns", 8), ("repeated rows far out", 12), ("signed zeros", 2), ("gaussian", None)],
)
def test_a_repeating_release_is_screened_as_its_distinct_rows(case, n_distinct, monkeypatch):
    """The tie-heavy pass (issue #28): Y with few distinct rows is screened as those rows,
    numbered by first occurrence, and the answers still equal brute force (above)."""
    X, Y = _case(case)
    screened = []
    inner = _neighbors._nearest_screened

    def spy(X, Y, *args):
        screened.append(len(Y))
        return inner(X, Y, *args)

    monkeypatch.setattr(_neighbors, "_nearest_screened", spy)
    _neighbors._RECENT.clear()
    nearest_sq_distances(X, Y, k=3, device="cpu")
    assert screened == [len(Y) if n_distinct is None else n_distinct]
    distinct = _neighbors._distinct_rows(Y)
    if n_distinct is not None:
        assert np.all(np.diff(distinct.first) > 0) and distinct.sizes.sum() == len(Y)
        np.testing.assert_array_equal(distinct.rows, Y[distinct.first])


@pytest.mark.parametrize(
    ("case", "exact_rows"),
    [
        ("binary columns", "all"),
        ("integer-coded", "all"),
        ("integers up to the float32 bound", "all"),
        ("integers past the float32 bound", "none"),
        ("half-integers", "none"),
        ("gaussian", "none"),
    ],
)
def test_integer_rows_within_the_bound_are_screened_exactly(case, exact_rows):
    """β = 0 exactly for the rows the module docstring proves exact (integers, each at most
    1/u_in, 2(‖x′‖² + max‖y′‖²) ≤ 2²⁴), and the float32 screen then equals the float64
    brute force to the last bit."""
    X, Y = _case(case)
    screen = _neighbors._Screen(Y, torch.device("cpu"), 2**24, len(X))  # one block of queries
    x32, beta, x_sq = screen.prepare(torch.as_tensor(X))
    assert bool((beta == 0).all()) if exact_rows == "all" else bool((beta > 0).all())
    if exact_rows == "all":
        screened = np.concatenate([s.numpy().copy() for _, s in screen.tiles(x32)], axis=1)
        np.testing.assert_array_equal(screened + x_sq.numpy()[:, None], brute_sq(X, Y))


def test_the_exact_screen_stops_at_its_bound():
    # one query row just inside 2(‖x′‖² + max‖y′‖²) ≤ 2²⁴, one just outside
    Y = np.array([[0.0, 0.0], [1000.0, 0.0], [-1000.0, 0.0]])
    inside = (2**23 - 1000**2) ** 0.5 // 1
    X = np.array([[inside, 0.0], [inside + 1, 0.0]])
    screen = _neighbors._Screen(Y, torch.device("cpu"), 2**20, len(X))
    _, beta, _ = screen.prepare(torch.as_tensor(X))
    assert beta[0] == 0 and beta[1] > 0


def test_exact_ties_need_no_second_screen(monkeypatch):
    """k = 1 on integer codes, every row of Y screened: each query ties with hundreds of
    rows, and none is re-checked (torch.min's first index is the lowest among equals)."""
    monkeypatch.setattr(_neighbors, "_DISTINCT_SHARE", 0.0)
    calls = []
    inner = _neighbors._all_within
    monkeypatch.setattr(_neighbors, "_all_within", lambda *a: calls.append(1) or inner(*a))
    X, Y = _case("binary columns")
    _neighbors._RECENT.clear()
    got_d, got_i = nearest_sq_distances(
        X, Y, device="cpu", max_chunk_bytes=20_000, return_indices=True
    )
    want_d, want_i = brute_nearest(X, Y, 1)
    np.testing.assert_array_equal(got_d, want_d)
    np.testing.assert_array_equal(got_i, want_i)
    assert calls == []
    _neighbors._RECENT.clear()
    nearest_sq_distances(X + 0.5, Y, device="cpu")  # not integers: ties are re-checked
    assert calls


def test_a_hash_collision_falls_back_to_every_row(monkeypatch):
    """Rows are compared with their group's first row: a hash that puts different rows in
    one group (here: every row the same hash) means no grouping, never a wrong one."""
    X, Y = _case("binary columns")
    monkeypatch.setattr(_neighbors, "_row_hashes", lambda Y: np.zeros(len(Y), np.uint64))
    assert _neighbors._distinct_rows(Y) is None
    _neighbors._RECENT.clear()
    got_d, got_i = nearest_sq_distances(X, Y, k=2, device="cpu", return_indices=True)
    want_d, want_i = brute_nearest(X, Y, 2)
    np.testing.assert_array_equal(got_d, want_d)
    np.testing.assert_array_equal(got_i, want_i)


def test_only_a_sample_is_hashed_when_it_does_not_repeat(monkeypatch):
    rng = np.random.default_rng(5)
    hashed = []
    inner = _neighbors._row_hashes
    monkeypatch.setattr(_neighbors, "_row_hashes", lambda Y: hashed.append(len(Y)) or inner(Y))
    assert _neighbors._distinct_rows(rng.normal(size=(50_000, 3))) is None
    assert hashed == [len(range(0, 50_000, 50_000 // _neighbors._SAMPLE_ROWS))]
    hashed.clear()
    Y = rng.integers(0, 3, size=(50_000, 3)).astype(float)
    assert len(_neighbors._distinct_rows(Y).rows) == 27
    assert hashed[-1] == 50_000


def test_sq_distance_blocks_exact_for_copies_without_a_shifted_copy_of_y():
    rng = np.random.default_rng(3)
    Y = rng.normal(loc=5e3, size=(500, 6))
    X = np.vstack([Y[:30], rng.normal(loc=5e3, size=(20, 6))])
    D = brute_sq(X, Y)
    for rows, d2 in sq_distance_blocks(X, Y, device="cpu", max_chunk_bytes=8 * 500 * 7):
        got = d2.numpy()
        copies = D[rows] == 0
        np.testing.assert_array_equal(got[copies], 0.0)
        np.testing.assert_allclose(got, D[rows], rtol=1e-9)


def test_tf32_widens_the_screen_bound(monkeypatch):
    # Under a lower matmul precision the screen's inputs are rounded more coarsely: the
    # bound must grow with them (bfloat16: 2**-8), and answers stay exact.
    assert _neighbors._input_roundoff(torch) == 2.0**-24
    monkeypatch.setattr(torch, "get_float32_matmul_precision", lambda: "medium")
    assert _neighbors._input_roundoff(torch) == 2.0**-8
    # integers above 2**8 are not read exactly by a bfloat16 product: no exact screen
    X, Y = _case("integers up to the float32 bound")
    assert _neighbors._Screen(Y, torch.device("cpu"), 2**20, 1).exact_input is None
    got = nearest_sq_distances(X, Y, k=2, device="cpu")
    np.testing.assert_array_equal(got, brute_nearest(X, Y, 2)[0])
    X, Y = _case("binary columns")
    assert _neighbors._Screen(Y, torch.device("cpu"), 2**20, 1).exact_input == 2.0**8
    X, Y = _case("far from the origin")
    got = nearest_sq_distances(X, Y, k=2, device="cpu", max_chunk_bytes=20_001)
    np.testing.assert_array_equal(got, brute_nearest(X, Y, 2)[0])


def test_large_y_is_never_shifted_whole(monkeypatch):
    # Above _CPU_KEEP_BYTES the shifted float32 Y is not kept: tiles are shifted when taken.
    monkeypatch.setattr(_neighbors, "_CPU_KEEP_BYTES", 0)
    X, Y = _case("far from the origin")
    screen = _neighbors._Screen(Y, torch.device("cpu"), 2_560, len(X))
    assert screen.y32 is None and screen.tile < len(Y)
    got = nearest_sq_distances(X, Y, k=3, device="cpu", max_chunk_bytes=2_560)
    np.testing.assert_array_equal(got, brute_nearest(X, Y, 3)[0])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("case", CASES)
def test_cuda_answers_equal_the_cpu_ones(case):
    X, Y = _case(case)
    for k in (1, 4):
        cuda = nearest_sq_distances(X, Y, k=k, device="cuda", return_indices=True)
        cpu = nearest_sq_distances(X, Y, k=k, device="cpu", return_indices=True)
        np.testing.assert_array_equal(cuda[0], cpu[0])
        np.testing.assert_array_equal(cuda[1], cpu[1])
    radius = np.sqrt(np.median(cpu[0][:, 0]))
    np.testing.assert_array_equal(
        count_within_radius(X, Y, radius, device="cuda"),
        count_within_radius(X, Y, radius, device="cpu"),
    )


class _FlatL2:
    """A stand-in for ``faiss.IndexFlatL2`` (float32 brute force, as faiss computes it:
    ``‖x‖² + ‖y‖² − 2·x·y``), so the faiss path runs where faiss is not installed."""

    def __init__(self, d):
        self.rows = np.empty((0, d), dtype=np.float32)

    def add(self, rows):
        assert rows.dtype == np.float32
        self.rows = np.vstack([self.rows, rows])

    def search(self, queries, k):
        y = self.rows
        d2 = (queries * queries).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2 * queries @ y.T
        index = np.argsort(d2, axis=1, kind="stable")[:, :k]
        return np.take_along_axis(d2, index, axis=1), index.astype(np.int64)


@pytest.mark.parametrize("case", CASES)
def test_faiss_path_equals_brute_force_for_k_above_one(case, monkeypatch):
    import sys
    import types

    monkeypatch.setitem(sys.modules, "faiss", types.SimpleNamespace(IndexFlatL2=_FlatL2))
    X, Y = _case(case)
    got_d, got_i = nearest_sq_distances(X, Y, k=3, backend="faiss", return_indices=True)
    want_d, want_i = brute_nearest(X, Y, 3)
    np.testing.assert_array_equal(got_d, want_d)
    np.testing.assert_array_equal(got_i, want_i)
    if case == "gaussian":  # k = 1 has no certificate; without near-ties it is exact
        np.testing.assert_array_equal(
            nearest_sq_distances(X, Y, k=1, backend="faiss"), want_d[:, :1]
        )
