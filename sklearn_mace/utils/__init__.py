"""Internal utilities shared across subpackages (not public API)."""

from ._chunks import DEFAULT_CHUNK_BYTES, chunk_rows, row_chunks
from ._neighbors import count_within_radius, nearest_sq_distances, sq_distance_blocks
from ._torch import resolve_device, to_numpy, to_tensor

__all__ = [
    "DEFAULT_CHUNK_BYTES",
    "chunk_rows",
    "count_within_radius",
    "nearest_sq_distances",
    "resolve_device",
    "row_chunks",
    "sq_distance_blocks",
    "to_numpy",
    "to_tensor",
]
