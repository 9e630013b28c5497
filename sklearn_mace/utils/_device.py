"""Arrays kept on the torch device between the passes of one audit (issue #28).

An audit runs several heavy passes over the same arrays (the targets and a release: the
nearest-synthetic distances, MC's ball counts, GAN-leaks CAL's two nearest passes), and each
pass moves what it needs to its device through :func:`utils._torch.to_tensor`. On CUDA that
is a host-to-device copy per pass; inside :func:`keep_on_device` it is one copy per array
and audit:

* the copy is kept by the *array object* (its ``id``, checked with a weak reference, and the
  dtype and device asked for): the same NumPy array asked for again gets the same tensor;
* an array kept on the device is made read-only until the scope ends (then its flag is put
  back), so that a pass that would modify it in place fails loudly instead of reading a
  stale device copy;
* a copy is dropped as soon as its host array is freed (the weak reference's callback), the
  oldest first beyond ``max_bytes`` (half the device's free memory when the scope begins),
  and all of them when the outermost scope ends;
* on the CPU nothing is kept: ``to_tensor`` returns a view of the NumPy array (no copy at
  all), as outside the scope.

The scope is process-wide (a depth count under a lock), so passes run by threads inside
the audit share it; worker *processes* (joblib's default backend) have their own, empty
one and copy as before.
"""

import contextlib
import threading
import weakref
from collections import OrderedDict

__all__ = ["DeviceArrays", "keep_on_device"]

# The share of the device's free memory (when the scope begins) kept copies may take.
_FREE_SHARE = 0.5
# Device types whose tensors can be views of NumPy arrays: nothing to keep there.
_HOST_TYPES = ("cpu",)


class DeviceArrays:
    """Device copies of host arrays, by array object, for one audit (see the module)."""

    def __init__(self):
        self._lock = threading.RLock()
        self._depth = 0
        self._copies = OrderedDict()  # (id, dtype, device) -> (weakref, tensor, bytes)
        self._readonly = {}  # id -> (weakref, writeable flag before)
        self._bytes = 0
        self.max_bytes = None

    @property
    def active(self):
        """Whether an audit's scope is open."""
        return self._depth > 0

    def enter(self, device, max_bytes):
        """Open a scope (scopes nest; the outermost one sets the budget)."""
        with self._lock:
            if self._depth == 0:
                self.max_bytes = _budget(device) if max_bytes is None else max_bytes
            self._depth += 1

    def exit(self):
        """Close a scope; the outermost one drops every copy and restores the flags."""
        with self._lock:
            self._depth -= 1
            if self._depth > 0:
                return
            self._copies.clear()
            self._bytes = 0
            for ref, writeable in self._readonly.values():
                array = ref()
                if array is not None and writeable:
                    with contextlib.suppress(ValueError):  # a view whose base became read-only
                        array.flags.writeable = True
            self._readonly.clear()

    def get(self, array, dtype, device, convert):
        """The device copy of ``array`` as ``dtype`` on ``device``: kept, or made by
        ``convert()`` and kept (outside a scope, or on a host device, just ``convert()``)."""
        if not self.active or device.type in _HOST_TYPES or not _weakrefable(array):
            return convert()
        key = (id(array), str(dtype), str(device))
        with self._lock:
            entry = self._copies.get(key)
            if entry is not None and entry[0]() is array:
                self._copies.move_to_end(key)
                return entry[1]
        tensor = convert()
        size = tensor.element_size() * tensor.nelement()
        with self._lock:
            if not self.active or size > self.max_bytes:
                return tensor
            self._freeze(array)
            ref = weakref.ref(array, lambda _, key=key: self._drop(key))
            self._copies[key] = (ref, tensor, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                self._drop(next(iter(self._copies)))
        return tensor

    def _freeze(self, array):
        entry = self._readonly.get(id(array))
        if entry is None or entry[0]() is not array:
            self._readonly[id(array)] = (weakref.ref(array), array.flags.writeable)
            array.flags.writeable = False

    def _drop(self, key):
        with self._lock:
            entry = self._copies.pop(key, None)
            if entry is not None:
                self._bytes -= entry[2]


def _weakrefable(array):
    try:
        weakref.ref(array)
    except TypeError:
        return False
    return True


def _budget(device):
    """Bytes the copies may take: ``_FREE_SHARE`` of the free memory of a CUDA device."""
    import torch

    if isinstance(device, str) and device == "auto":  # as utils._torch.resolve_device
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(_FREE_SHARE * free)
    return 2**62


ARRAYS = DeviceArrays()


@contextlib.contextmanager
def keep_on_device(device="auto", *, max_bytes=None):
    """Keep the device copies of host arrays made inside, for the passes that follow.

    Use around one audit: each NumPy array moved to a CUDA device by the kernel passes
    inside is copied once, not once per pass (see the module docstring). A no-op on the CPU.

    Parameters
    ----------
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        The audit's device; it sets the memory budget.
    max_bytes : int, default=None
        The most bytes of copies kept; None means half the device's free memory now.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.utils._device import keep_on_device
    >>> from sklearn_mace.utils._neighbors import nearest_sq_distances
    >>> with keep_on_device("cpu"):
    ...     d2 = nearest_sq_distances([[0.0]], np.array([[1.0], [3.0]]), device="cpu")
    >>> d2.tolist()
    [[1.0]]
    """
    ARRAYS.enter(device, max_bytes)
    try:
        yield ARRAYS
    finally:
        ARRAYS.exit()
