"""Shared utilities: chunked neighbour primitives and the torch device choice."""

from unittest import mock

import numpy as np
import pytest
import torch

from sklearn_mace.utils._chunks import row_chunks
from sklearn_mace.utils._neighbors import count_within_radius, nearest_sq_distances
from sklearn_mace.utils._torch import resolve_device


def pairwise_sq(X, Y):
    return ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)


@pytest.mark.parametrize("chunk_bytes", [8 * 50 * 3, 64 * 2**20])
def test_nearest_sq_distances_equal_brute_force(rng, chunk_bytes):
    X, Y = rng.normal(size=(40, 5)) + 100.0, rng.normal(size=(50, 5)) + 100.0
    ours = nearest_sq_distances(X, Y, k=3, device="cpu", max_chunk_bytes=chunk_bytes)
    # Centring at Y's mean keeps cancellation small even with an offset of 100.
    np.testing.assert_allclose(ours, np.sort(pairwise_sq(X, Y), axis=1)[:, :3], rtol=1e-10)


def test_count_within_radius_equals_brute_force(rng):
    X, Y = rng.normal(size=(40, 3)), rng.normal(size=(70, 3))
    radius = rng.uniform(0.5, 2.0, size=40)
    expected = (pairwise_sq(X, Y) <= radius[:, None] ** 2).sum(axis=1)
    np.testing.assert_array_equal(
        count_within_radius(X, Y, radius, max_chunk_bytes=8 * 70 * 7), expected
    )


@pytest.mark.parametrize("radius", [0.0, 1e-9])
def test_count_within_radius_counts_copies_at_any_radius(rng, radius):
    # Every row of Y is within radius 0 of itself. The ||x||^2 + ||y||^2 - 2 x.y expansion
    # alone left some copies at d^2 ~ +1e-15 and missed them (count 0 instead of 1), which
    # made the DCR baseline's "own" counts (count - 1) negative.
    Y = rng.normal(loc=3.0, size=(200, 4))
    counts = count_within_radius(Y, Y, radius, max_chunk_bytes=8 * 200 * 7)
    np.testing.assert_array_equal(counts, 1)


def test_count_within_radius_tiles_of_y_count_the_same(rng):
    # Large Y runs in tiles of Y (fewer than 64 rows of X per full-width block): every d² is
    # the same float64 value as in a full-width block, so the counts are identical, copies
    # and near-copies (exact direct differences) included.
    X = rng.normal(loc=2.0, size=(90, 5))
    Y = np.vstack([X[:20], X[20:40] + 1e-9, rng.normal(loc=2.0, size=(600, 5))])
    radius = np.r_[np.zeros(20), np.full(20, 1e-8), rng.uniform(0.5, 3.0, size=50)]
    tiled = count_within_radius(X, Y, radius, max_chunk_bytes=8 * len(Y) * 3)
    full_width = count_within_radius(X, Y, radius, max_chunk_bytes=8 * len(Y) * 90)
    np.testing.assert_array_equal(tiled, full_width)
    expected = (pairwise_sq(X, Y) <= radius[:, None] ** 2).sum(axis=1)
    np.testing.assert_array_equal(tiled[40:], expected[40:])
    assert np.all(tiled[:40] >= 1)


def test_neighbour_primitives_reject_bad_input(rng):
    with pytest.raises(ValueError, match="equal columns"):
        nearest_sq_distances(np.ones((3, 2)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="k must be between 1 and len"):
        nearest_sq_distances(np.ones((3, 2)), np.ones((4, 2)), k=5)
    with pytest.raises(ValueError, match="radius must be finite"):
        count_within_radius(np.ones((3, 2)), np.ones((4, 2)), -1.0)


def test_row_chunks_cover_every_row_once():
    slices = list(row_chunks(103, 10, max_bytes=8 * 10 * 7))
    assert [s.stop - s.start for s in slices] == [7] * 14 + [5]


def test_device_auto_falls_back_to_cpu():
    with mock.patch.object(torch.cuda, "is_available", return_value=False):
        assert resolve_device("auto") == torch.device("cpu")
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("tpu")
    with pytest.raises(TypeError, match="device must be"):
        resolve_device(3)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_neighbours_on_cuda_match_cpu(rng):
    X, Y = rng.normal(size=(30, 4)), rng.normal(size=(60, 4))
    np.testing.assert_allclose(
        nearest_sq_distances(X, Y, device="cuda"),
        nearest_sq_distances(X, Y, device="cpu"),
        rtol=1e-10,
    )


def test_gpu_blocks_are_sized_from_free_device_memory(monkeypatch):
    """Issue #28: on CUDA a pairwise block takes an eighth of the free memory, 64 MiB to
    2 GiB; elsewhere the default. No GPU needed: the memory query is replaced."""
    from sklearn_mace.utils import _chunks

    free = {"bytes": 40 * 2**30}
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (free["bytes"], 80 * 2**30))
    cuda = torch.device("cuda")
    assert _chunks.device_chunk_bytes("cpu") == _chunks.DEFAULT_CHUNK_BYTES
    assert _chunks.device_chunk_bytes(cuda) == _chunks.GPU_MAX_CHUNK_BYTES  # 5 GiB capped
    free["bytes"] = 8 * 2**30
    assert _chunks.device_chunk_bytes(cuda) == 2**30
    free["bytes"] = 100 * 2**20  # a nearly full GPU still gets the default block
    assert _chunks.device_chunk_bytes(cuda) == _chunks.DEFAULT_CHUNK_BYTES
