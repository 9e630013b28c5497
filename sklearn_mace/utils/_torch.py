"""torch plumbing shared by every torch-backed part: device choice and NumPy round trips."""

import numpy as np
import torch

__all__ = ["resolve_device", "to_numpy", "to_tensor"]


def resolve_device(device="auto"):
    """``"auto"`` → CUDA when available, else CPU; otherwise the named device, checked.

    Raises a ``ValueError`` naming ``device`` when CUDA is asked for but absent.
    """
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


def to_tensor(X, device, dtype=torch.float64):
    """A NumPy array as a tensor on ``device`` (no copy on CPU when the dtype matches)."""
    return torch.as_tensor(np.ascontiguousarray(X), dtype=dtype, device=device)


def to_numpy(tensor):
    """A tensor back on the CPU as a NumPy array."""
    return tensor.detach().cpu().numpy()
