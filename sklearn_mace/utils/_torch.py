"""torch plumbing shared by every torch-backed part: device choice and NumPy round trips.

torch is imported inside the functions, never at module import, so that numpy-usable
estimators (``GaussianKDE``, ``BayesOptimalMIA``) can be imported without it
(``docs/design.md``, "Imports").
"""

import numpy as np
from sklearn.utils._param_validation import _Constraint

__all__ = ["TorchDevice", "resolve_device", "to_numpy", "to_tensor"]


class TorchDevice(_Constraint):
    """Parameter constraint: an instance of ``torch.device``, checked without importing torch.

    Used as ``"device": [str, TorchDevice()]`` in ``_parameter_constraints``: a
    ``torch.device`` can only exist once torch was imported, so its type is matched by name.
    """

    def is_satisfied_by(self, val):
        cls = type(val)
        return cls.__name__ == "device" and cls.__module__.split(".")[0] == "torch"

    def __str__(self):
        return "an instance of 'torch.device'"


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

    ``dtype=None`` means ``torch.float64``.
    """
    import torch

    dtype = torch.float64 if dtype is None else dtype
    return torch.as_tensor(np.ascontiguousarray(X), dtype=dtype, device=device)


def to_numpy(tensor):
    """A tensor back on the CPU as a NumPy array."""
    return tensor.detach().cpu().numpy()
