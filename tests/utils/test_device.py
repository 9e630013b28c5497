"""Arrays kept on the device between the passes of one audit (issue #28, utils/_device.py).

No GPU here: the CPU is made to stand for a device (``_HOST_TYPES = ()``) and the one
conversion, ``utils._torch.host_to_device``, makes a real copy and counts it. On the CPU
itself the scope keeps nothing and copies nothing.
"""

import contextlib
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import torch

from sklearn_mace.report import audit_release
from sklearn_mace.utils import _device, _neighbors, _torch
from sklearn_mace.utils._device import keep_on_device
from sklearn_mace.utils._neighbors import count_within_radius, nearest_sq_distances
from tests.audit_data import audit_tables


class _Copies:
    """``host_to_device`` that copies (as to a GPU) and keeps every array it was given."""

    def __init__(self):
        self.arrays = []  # held, so that no two of them share an id during a test

    def __call__(self, X, device, dtype):
        self.arrays.append(X)
        return torch.tensor(np.ascontiguousarray(X), dtype=dtype, device=device)

    def per_array(self):
        return Counter(id(a) for a in self.arrays)


@pytest.fixture
def copies(monkeypatch):
    """The CPU as a device that needs copies, and a count of them."""
    counter = _Copies()
    monkeypatch.setattr(_device, "_HOST_TYPES", ())
    monkeypatch.setattr(_torch, "host_to_device", counter)
    return counter


def _passes(X, Y, device="cpu"):
    _neighbors._RECENT.clear()  # so that every pass really runs
    radius = np.sqrt(np.median(nearest_sq_distances(X, Y, device=device)))
    return (
        nearest_sq_distances(X, Y, k=3, device=device),
        count_within_radius(X, Y, radius, device=device),
        count_within_radius(X, Y, 2 * radius, device=device),
    )


def test_one_copy_per_array_inside_the_scope_and_the_same_answers(copies, rng):
    X, Y = rng.normal(size=(50, 4)), rng.normal(size=(400, 4))
    without = _passes(X, Y)
    per_pass = copies.per_array()
    assert per_pass[id(X)] == 4 and per_pass[id(Y)] == 4  # each pass copied both
    copies.arrays.clear()
    with keep_on_device("cpu"):
        within = _passes(X, Y)
        assert not X.flags.writeable and not Y.flags.writeable  # kept: read-only
    per_scope = copies.per_array()
    assert per_scope[id(X)] == 1 and per_scope[id(Y)] == 1
    assert X.flags.writeable and Y.flags.writeable  # put back when the scope ends
    assert not _device.ARRAYS._copies  # and nothing is kept after it
    for a, b in zip(without, within, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_kept_array_cannot_be_modified_in_place(copies, rng):
    X = rng.normal(size=(20, 3))
    with keep_on_device("cpu"):
        nearest_sq_distances(X, X + 1.0, device="cpu")
        with pytest.raises(ValueError, match="read-only"):
            X[0, 0] = 5.0  # a stale device copy would be read by the next pass
    X[0, 0] = 5.0


def test_copies_are_dropped_with_their_array_and_beyond_the_budget(copies, rng):
    with keep_on_device("cpu", max_bytes=3 * 8 * 100 * 2):
        arrays = _device.ARRAYS
        A, B, C = (rng.normal(size=(100, 2)) for _ in range(3))
        for array in (A, B):
            _torch.to_tensor(array, "cpu")
        assert len(arrays._copies) == 2
        copies.arrays.clear()  # the counter's references
        del A, array  # A's host array is gone: so is its copy
        assert len(arrays._copies) == 1
        _torch.to_tensor(C, "cpu")
        _torch.to_tensor(rng.normal(size=(100, 2)) + 0.0, "cpu")  # a temporary, gone at once
        assert arrays._bytes <= arrays.max_bytes
        _torch.to_tensor(rng.normal(size=(1000, 2)), "cpu")  # above the budget: not kept
        assert {entry[2] for entry in arrays._copies.values()} == {1600}


def test_on_the_cpu_the_scope_keeps_and_copies_nothing(monkeypatch, rng):
    calls = []
    convert = _torch.host_to_device
    monkeypatch.setattr(_torch, "host_to_device", lambda *a: calls.append(1) or convert(*a))
    X = rng.normal(size=(30, 3))
    with keep_on_device("cpu"):
        tensor = _torch.to_tensor(X, "cpu")
        assert np.shares_memory(tensor.numpy(), X)  # a view, as outside the scope
        assert not _device.ARRAYS._copies and X.flags.writeable
    assert calls == [1]


def test_a_release_audit_copies_each_array_once(copies, monkeypatch):
    """The hook in the release audit: with the scope each array goes to the device once
    (without it some went once per pass), and the report is the same."""
    from sklearn_mace.report._kinds.release import _audit

    members, non_members, releases = audit_tables()
    kwargs = {"random_state": 3, "disclosure": False, "verbose": False, "device": "cpu"}
    _neighbors._RECENT.clear()
    with_scope = audit_release(members, non_members, {"safe": releases["safe"]}, **kwargs)
    kept = copies.per_array()
    copies.arrays.clear()
    monkeypatch.setattr(_audit, "keep_on_device", lambda device: contextlib.nullcontext())
    _neighbors._RECENT.clear()
    without_scope = audit_release(members, non_members, {"safe": releases["safe"]}, **kwargs)
    again = copies.per_array()
    assert max(kept.values()) == 1
    assert max(again.values()) > 1  # some array went to the device more than once
    assert sum(kept.values()) < sum(again.values())
    pd.testing.assert_frame_equal(with_scope.summary, without_scope.summary)
    pd.testing.assert_frame_equal(with_scope.records, without_scope.records)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_on_cuda_each_array_goes_to_the_device_once(monkeypatch, rng):
    calls = []
    convert = _torch.host_to_device
    monkeypatch.setattr(_torch, "host_to_device", lambda X, *a: calls.append(X) or convert(X, *a))
    X, Y = rng.normal(size=(50, 4)), rng.normal(size=(400, 4))
    without = _passes(X, Y, "cuda")
    assert sum(a is X for a in calls) == 4
    calls.clear()
    with keep_on_device("cuda"):
        within = _passes(X, Y, "cuda")
    assert sum(a is X for a in calls) == 1 and sum(a is Y for a in calls) == 1
    for a, b in zip(without, within, strict=True):
        np.testing.assert_array_equal(a, b)
