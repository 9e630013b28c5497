"""Bounded-memory chunking for pairwise work: never an N × M matrix for large inputs."""

__all__ = ["DEFAULT_CHUNK_BYTES", "chunk_rows", "row_chunks"]

# 64 MiB of float64 per pairwise block: small enough for 2-core CI machines, large enough
# that BLAS/torch kernels run at full speed.
DEFAULT_CHUNK_BYTES = 64 * 2**20


def chunk_rows(n_columns, *, itemsize=8, max_bytes=DEFAULT_CHUNK_BYTES):
    """How many query rows fit in one ``rows × n_columns`` block of at most ``max_bytes``."""
    return max(1, int(max_bytes // (itemsize * max(1, n_columns))))


def row_chunks(n_rows, n_columns, *, itemsize=8, max_bytes=DEFAULT_CHUNK_BYTES):
    """Yield ``slice`` objects covering ``range(n_rows)`` in bounded blocks."""
    step = chunk_rows(n_columns, itemsize=itemsize, max_bytes=max_bytes)
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))
