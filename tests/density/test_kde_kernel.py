"""The KDE sums' running log-sum-exp (issue #28): tiled, no host synchronisation per tile.

``gaussian_log_kernel_sum`` must equal a direct float64 ``logsumexp`` of
``−½‖z − z_i‖²`` (direct differences, scipy's ``logsumexp``) to within the expansion's
rounding, ``4·d·2⁻⁵³·(‖z‖ + max‖z_i‖)²`` absolute plus 1e-13 relative, whatever the
tiling — including far-out queries whose largest term sits in a late tile, where a plain
``Σ exp`` underflows to 0 — and ``GaussianKDE`` must still match
``scipy.stats.gaussian_kde``.
"""

import numpy as np
import pytest
import torch
from scipy.special import logsumexp
from scipy.stats import gaussian_kde

from sklearn_mace.density import GaussianKDE, _kde
from sklearn_mace.density._kde import _running_log_sums, gaussian_log_kernel_sum


def direct_log_sum(Zq, Zd):
    return logsumexp(-0.5 * ((Zq[:, None, :] - Zd[None, :, :]) ** 2).sum(axis=2), axis=1)


def assert_close_to_direct(got, Zq, Zd):
    want = direct_log_sum(Zq, Zd)
    scale = (np.linalg.norm(Zq, axis=1) + np.linalg.norm(Zd, axis=1).max()) ** 2
    tolerance = 4 * Zq.shape[1] * 2.0**-53 * scale + 1e-13 * np.abs(want)
    assert np.all(np.abs(got - want) <= tolerance)


def _queries_and_data(rng, d):
    Zd = rng.normal(size=(2500, d))
    Zd[-1] += 40.0  # the only data row near the far query comes last: in the last tile
    far = Zd[-1:] + 0.5
    Zq = np.vstack([rng.normal(size=(70, d)), far, np.full((1, d), -35.0)])
    return Zq, Zd


@pytest.mark.parametrize("d", [1, 8, 64])
@pytest.mark.parametrize("chunk_bytes", [None, 8 * 2500 * 3, 8 * 64 * 70, 8 * 70])
def test_running_log_sum_equals_direct_float64(rng, d, chunk_bytes):
    Zq, Zd = _queries_and_data(rng, d)
    got = gaussian_log_kernel_sum(Zq, Zd, max_chunk_bytes=chunk_bytes)
    assert np.all(np.isfinite(got))  # exp of the far rows' terms underflows: logs do not
    assert_close_to_direct(got, Zq, Zd)


@pytest.mark.parametrize("raw", [False, True])
def test_no_value_comes_back_to_the_host_inside_the_loop(rng, monkeypatch, raw):
    # A host synchronisation needs a tensor's value in Python: .item(), float(), int(),
    # bool() (a branch), .tolist(), .numpy(). Any of them inside the tile loop fails here,
    # the tiles' whitening included.
    Zq, Zd = _queries_and_data(rng, 4)
    z, data = torch.as_tensor(Zq), torch.as_tensor(Zd)
    whiten = None
    if raw:  # raw rows x = 2 z + 1: whitened by (x - 1) @ (I / 2)
        data, whiten = 2 * data + 1, (torch.ones(4, dtype=torch.float64), torch.eye(4) / 2)
        whiten = (whiten[0], whiten[1].double())
    buffer = torch.empty(30 * 100, dtype=torch.float64)
    want = _running_log_sums(z, data, whiten, 100, 30, buffer).clone()

    def refuse(*args, **kwargs):
        raise AssertionError("host synchronisation inside the loop")

    for name in ("item", "__float__", "__int__", "__bool__", "tolist", "numpy", "cpu"):
        monkeypatch.setattr(torch.Tensor, name, refuse)
    got = _running_log_sums(z, data, whiten, 100, 30, buffer)
    monkeypatch.undo()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert_close_to_direct(got.numpy() - 0.5 * (Zq**2).sum(axis=1), Zq, Zd)


@pytest.mark.parametrize("d", [1, 8])
@pytest.mark.parametrize("chunk_bytes", [None, 8 * 64 * 70, 8 * 70])
def test_raw_data_whitened_tile_by_tile_equal_the_whitened_data(rng, d, chunk_bytes):
    # Raw rows x = z L^T + c far from the origin: whitening each tile on the way gives the
    # sums of the whitened rows, to the direct float64 sums' stated rounding.
    Zq, Zd = _queries_and_data(rng, d)
    L = np.linalg.cholesky(np.cov(rng.normal(size=(50, d)), rowvar=False) + np.eye(d))
    centre = rng.normal(size=d) * 1e3
    X = Zd @ L.T + centre
    whiten = (centre, np.linalg.inv(L).T)
    Z_back = (X - centre) @ whiten[1]  # the whitened rows the tiles should produce
    got = gaussian_log_kernel_sum(Zq, X, whiten=whiten, max_chunk_bytes=chunk_bytes)
    assert_close_to_direct(got, Zq, Z_back)


def test_no_whitened_copy_of_the_data_is_made(rng, monkeypatch):
    # Every squared-norm pass of the kernel sums sees one data tile (or the queries), never
    # a whitened array as long as the data: the KDE of a 10-million-row release held one.
    X = rng.normal(size=(20_000, 3))
    Q = rng.normal(size=(600, 3))
    seen = []

    def recording(tensor):
        seen.append(len(tensor))
        return real(tensor)

    real = _kde.row_sq_norms
    monkeypatch.setattr(_kde, "row_sq_norms", recording)
    kde = GaussianKDE(bandwidth=0.3, device="cpu").fit(X)
    got = kde.score_samples(Q)
    monkeypatch.undo()
    assert not hasattr(kde, "_whitened")
    assert max(seen) <= max(len(Q), _kde.chunk_rows(512, max_bytes=_kde.CPU_BLOCK_BYTES))
    want = GaussianKDE(bandwidth=0.3, device="cpu").fit(X).score_samples(Q)
    np.testing.assert_array_equal(got, want)  # the recording changes nothing
    direct = logsumexp(-0.5 * ((Q[:, None] - X[None]) ** 2).sum(-1) / 0.09, axis=1)
    log_norm = -np.log(len(X)) - 3 * np.log(0.3) - 1.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(got, direct + log_norm, rtol=1e-11)


@pytest.mark.parametrize("d", [1, 3])
def test_kde_log_density_matches_scipy(rng, d):
    X = rng.normal(size=(3000, d))
    Q = np.vstack([rng.normal(size=(50, d)), np.full((1, d), 6.0)])
    ours = GaussianKDE(bandwidth="scott", device="cpu").fit(X).score_samples(Q)
    np.testing.assert_allclose(ours, gaussian_kde(X.T).logpdf(Q.T), rtol=1e-10)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_log_sums_equal_the_cpu_ones(rng):
    Zq, Zd = _queries_and_data(rng, 8)
    np.testing.assert_allclose(
        gaussian_log_kernel_sum(Zq, Zd, device="cuda"),
        gaussian_log_kernel_sum(Zq, Zd, device="cpu"),
        rtol=1e-12,
    )


def exact_group_sums(Zq, Zd, groups, n_groups, bandwidths):
    d2 = ((Zq[:, None, :] - Zd[None, :, :]) ** 2).sum(-1)
    out = np.full((len(bandwidths), n_groups, len(Zq)), -np.inf)
    for g, h in enumerate(bandwidths):
        for k in range(n_groups):
            if np.any(groups == k):
                out[g, k] = logsumexp(-d2[:, groups == k] / (2 * h * h), axis=1)
    return out


@pytest.mark.parametrize("d", [1, 8])
def test_kernel_table_in_data_tiles_equals_one_block(rng, d, monkeypatch):
    # The certificate's table (float32) with data tiles of 37 rows: groups cut across
    # tiles, far rows whose nearest data row sits in a late tile (the running shift moves
    # and the sums are rescaled). Same table as one block to float32 summation rounding,
    # and the float64 logsumexp to the table's stated accuracy (tests/density/
    # test_kernel_table.py: 2e-3 plus float32 rounding of ‖z‖² over 2h²).
    from sklearn_mace.density import _grid

    Z = rng.normal(size=(600, d))
    Z[-3:] *= 40  # far rows at the end of the data: their own terms come last
    groups = rng.integers(0, 6, 600)
    groups[groups == 5] = 4  # group 5 empty
    h = np.geomspace(1 / 8, 4, 11) * 600 ** (-1 / (d + 4))
    queries = np.vstack([Z[:40], Z[-3:]])
    whole = _grid.grouped_log_kernel_sums(queries, Z, groups, 6, h)
    monkeypatch.setattr(_grid, "TABLE_BLOCK_BYTES", 4 * 43 * 37)  # 43 query rows x 37
    tiled = _grid.grouped_log_kernel_sums(queries, Z, groups, 6, h)
    assert np.all(np.isneginf(tiled[:, 5])) and np.all(np.isfinite(tiled[:, :5]))
    np.testing.assert_allclose(tiled[:, :5], whole[:, :5], rtol=1e-5, atol=1e-5)
    want = exact_group_sums(queries, Z, groups, 6, h)
    scale = 1e-6 * (1 + (queries**2).sum(1)) / (2 * h[:, None, None] ** 2)
    assert np.all(np.abs(tiled[:, :5] - want[:, :5]) <= 2e-3 + scale)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_kernel_table_equals_the_cpu_one(rng):
    # float32 on both devices: each within the table's stated accuracy of float64, so
    # within twice that of each other
    from sklearn_mace.density._grid import grouped_log_kernel_sums

    Z, groups = rng.normal(size=(3000, 8)), rng.integers(0, 6, 3000)
    h = np.geomspace(1 / 8, 4, 11) * 3000 ** (-1 / 12)
    cuda = grouped_log_kernel_sums(Z[:200], Z, groups, 6, h, device="cuda")
    cpu = grouped_log_kernel_sums(Z[:200], Z, groups, 6, h, device="cpu")
    scale = 1e-6 * (1 + (Z[:200] ** 2).sum(1)) / (2 * h[:, None, None] ** 2)
    assert np.all(np.abs(cuda - cpu) <= 4e-3 + 2 * scale)


def test_kernel_table_loop_reads_nothing_back_to_the_host(rng, monkeypatch):
    from sklearn_mace.density._grid import _running_group_sums

    data = torch.as_tensor(rng.normal(size=(300, 3)), dtype=torch.float32)
    query = data[:50].clone()
    data_sq = (data * data).sum(dim=1).unsqueeze(0)
    # two groups, cut across tiles of 64 rows
    tiles = []
    for start in range(0, 300, 64):
        stop = min(start + 64, 300)
        parts = [
            (i, slice(max(lo, start) - start, min(hi, stop) - start))
            for i, (lo, hi) in enumerate([(0, 170), (170, 300)])
            if lo < stop and hi > start
        ]
        tiles.append((start, stop, parts))
    coef = -0.5 / np.array([1.0, 0.5**0.5, 0.5]) ** 2
    squares = np.array([False, True, True])
    buffers = torch.empty(2 * 50 * 64, dtype=torch.float32)

    def refuse(*args, **kwargs):
        raise AssertionError("host synchronisation inside the loop")

    for name in ("item", "__float__", "__int__", "__bool__", "tolist", "numpy", "cpu"):
        monkeypatch.setattr(torch.Tensor, name, refuse)
    got = _running_group_sums(query, data, data_sq, tiles, 2, coef, squares, buffers)
    monkeypatch.undo()
    Zq, Zd = query.double().numpy(), data.double().numpy()
    for g, c in enumerate(coef):
        for i, (lo, hi) in enumerate([(0, 170), (170, 300)]):
            d2 = ((Zq[:, None] - Zd[None, lo:hi]) ** 2).sum(-1)
            np.testing.assert_allclose(got[g, i].numpy(), logsumexp(c * d2, axis=1), atol=1e-4)
