"""Internal utilities shared across subpackages; not public API.

Import from the private modules: ``_chunks`` (row chunking under a memory budget),
``_neighbors`` (chunked nearest-neighbour distances), ``_torch`` (device choice, NumPy round
trips, the ``device`` parameter constraint), ``_threads`` (the CPU threads of each kernel
pass) and ``_testing``.
"""

__all__ = []
