"""Chunked k-nearest squared Euclidean distances on torch (CPU or CUDA)."""

import numpy as np
import torch

from ._chunks import DEFAULT_CHUNK_BYTES, row_chunks
from ._torch import resolve_device, to_numpy, to_tensor

__all__ = ["count_within_radius", "nearest_sq_distances"]


def nearest_sq_distances(X, Y, *, k=1, device="auto", max_chunk_bytes=DEFAULT_CHUNK_BYTES):
    """Squared Euclidean distances from each row of ``X`` to its ``k`` nearest rows of ``Y``.

    Works in row blocks of at most ``max_chunk_bytes`` so that memory stays bounded for any
    ``len(X) × len(Y)``; the expansion ``‖x‖² + ‖y‖² − 2·x·y`` runs as one matrix product
    per block (BLAS on CPU, cuBLAS on GPU) on data centred at the mean of ``Y`` to limit
    cancellation.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (m, d), m >= k
    k : int, default=1
    device : {"auto", "cpu", "cuda"}, default="auto"
    max_chunk_bytes : int, default=64 MiB

    Returns
    -------
    sq_distances : ndarray of shape (n, k), ascending along axis 1
    """
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y must be 2-D with equal columns; got {X.shape} and {Y.shape}.")
    if not 1 <= k <= len(Y):
        raise ValueError(f"k must be between 1 and len(Y)={len(Y)}; got {k}.")
    dev = resolve_device(device)
    centre = Y.mean(axis=0)
    y = to_tensor(Y - centre, dev)
    y_sq = (y * y).sum(dim=1)
    out = np.empty((len(X), k))
    for rows in row_chunks(len(X), len(Y), max_bytes=max_chunk_bytes):
        x = to_tensor(X[rows] - centre, dev)
        d2 = torch.addmm(y_sq, x, y.T, alpha=-2.0).add_((x * x).sum(dim=1, keepdim=True))
        nearest = torch.topk(d2, k, dim=1, largest=False).values.clamp_(min=0.0)
        out[rows] = to_numpy(nearest)
    return out


def count_within_radius(X, Y, radius, *, device="auto", max_chunk_bytes=DEFAULT_CHUNK_BYTES):
    """Number of rows of ``Y`` within squared Euclidean distance ``radius²`` of each row of ``X``.

    ``radius`` may be a scalar or one value per row of ``X`` (the ε-ball of Hilprecht et
    al.'s Monte-Carlo query, MACE Eq. 1). Chunked like :func:`nearest_sq_distances`.

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
    dev = resolve_device(device)
    centre = Y.mean(axis=0)
    y = to_tensor(Y - centre, dev)
    y_sq = (y * y).sum(dim=1)
    out = np.empty(len(X), dtype=np.int64)
    for rows in row_chunks(len(X), len(Y), max_bytes=max_chunk_bytes):
        x = to_tensor(X[rows] - centre, dev)
        d2 = torch.addmm(y_sq, x, y.T, alpha=-2.0).add_((x * x).sum(dim=1, keepdim=True))
        r2 = to_tensor(radius[rows] ** 2, dev).unsqueeze(1)
        out[rows] = to_numpy((d2 <= r2).sum(dim=1))
    return out
