"""torch plumbing shared by every torch-backed part: device choice and NumPy round trips.

torch is imported inside the functions, never at module import, so that numpy-usable
estimators (``GaussianKDE``, ``BayesOptimalMIA``) can be imported without it
(``docs/design.md``, "Imports").
"""

import numpy as np

from ._device import ARRAYS

__all__ = [
    "TorchDevice",
    "host_to_device",
    "resolve_device",
    "row_sq_norms",
    "to_numpy",
    "to_tensor",
]

# Rows per block of row_sq_norms: a few MiB of temporary, whatever the data size.
_SQ_NORM_ROWS = 8192


class _NamedTypeCheck(type):
    """``isinstance`` by the type's module and name, so the checked type need not be imported."""

    def __instancecheck__(cls, obj):
        return any(
            t.__name__ == cls.__qualname__ and t.__module__ == cls.__module__
            for t in type(obj).__mro__
        )


class TorchDevice(metaclass=_NamedTypeCheck):
    """Stand-in for ``torch.device`` in ``_parameter_constraints``, without importing torch.

    ``"device": [str, TorchDevice]`` accepts a ``torch.device`` (which can only exist once
    torch was imported), and scikit-learn's error message names ``torch.device``.
    """


TorchDevice.__module__ = "torch"
TorchDevice.__qualname__ = TorchDevice.__name__ = "device"


def resolve_device(device="auto"):
    """``"auto"`` → CUDA when available, else CPU; otherwise the named device, checked.

    Raises a ``ValueError`` naming ``device`` when CUDA is asked for but absent.
    """
    import torch

    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise TypeError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N'; got {device!r}.")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was requested but CUDA is not available; use 'auto'.")
    try:
        return torch.device(device)
    except RuntimeError as exc:
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:N]'; got {device!r}.") from exc


def to_tensor(X, device, dtype=None):
    """A NumPy array as a tensor on ``device`` (no copy on CPU when the dtype matches).

    ``dtype=None`` means ``torch.float64``. Inside :func:`utils._device.keep_on_device` (one
    audit) the copy of an array on a CUDA device is kept and given again to the next pass
    that asks for the same array object (:func:`host_to_device` runs once per array).
    """
    import torch

    dtype = torch.float64 if dtype is None else dtype
    device = torch.device(device)
    return ARRAYS.get(X, dtype, device, lambda: host_to_device(X, device, dtype))


def host_to_device(X, device, dtype):
    """The one conversion of a host array to a tensor on ``device`` (a view on the CPU when
    the dtype matches, a copy otherwise)."""
    import torch

    return torch.as_tensor(np.ascontiguousarray(X), dtype=dtype, device=device)


def to_numpy(tensor):
    """A tensor back on the CPU as a NumPy array."""
    return tensor.detach().cpu().numpy()


def row_sq_norms(tensor):
    """``‖row‖²`` of each row of a 2-D tensor, in blocks of rows (no full-size temporary).

    Each row's sum is the same reduction as ``tensor.square().sum(dim=1)`` (bit-identical),
    without that call's temporary as large as ``tensor`` (150 MB for 200 000 × 93 float64).
    """
    import torch

    return torch.cat([block.square().sum(dim=1) for block in tensor.split(_SQ_NORM_ROWS)])
