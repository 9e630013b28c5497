"""Bounded-memory chunking for pairwise work: never an N × M matrix for large inputs."""

__all__ = [
    "DEFAULT_CHUNK_BYTES",
    "GPU_MAX_CHUNK_BYTES",
    "chunk_rows",
    "device_chunk_bytes",
    "row_chunks",
]

# 64 MiB of float64 per pairwise block: small enough for 2-core CI machines, large enough
# that BLAS/torch kernels run at full speed.
DEFAULT_CHUNK_BYTES = 64 * 2**20
# On a GPU a 64 MiB block is too small: against 10^6 data rows it holds 16 query rows in
# float32, so the GPU runs hundreds of small products and waits on each launch (issue #28).
# Blocks there take an eighth of the free device memory, at most this.
GPU_MAX_CHUNK_BYTES = 2 * 2**30


def device_chunk_bytes(device, default=DEFAULT_CHUNK_BYTES):
    """The pairwise block budget on ``device``.

    ``default`` off CUDA; on CUDA an eighth of the device's free memory
    (``torch.cuda.mem_get_info``), at least ``default`` and at most ``GPU_MAX_CHUNK_BYTES``.
    """
    import torch

    device = torch.device(device)
    if device.type != "cuda":
        return default
    free, _ = torch.cuda.mem_get_info(device)
    return int(min(GPU_MAX_CHUNK_BYTES, max(default, free // 8)))


def chunk_rows(n_columns, *, itemsize=8, max_bytes=DEFAULT_CHUNK_BYTES):
    """How many query rows fit in one ``rows × n_columns`` block of at most ``max_bytes``."""
    return max(1, int(max_bytes // (itemsize * max(1, n_columns))))


def row_chunks(n_rows, n_columns, *, itemsize=8, max_bytes=DEFAULT_CHUNK_BYTES):
    """Yield ``slice`` objects covering ``range(n_rows)`` in bounded blocks."""
    step = chunk_rows(n_columns, itemsize=itemsize, max_bytes=max_bytes)
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))
