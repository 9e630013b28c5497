"""The thread count of kernel passes: size, free cores, the probe and the context manager."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_info, threadpool_limits

from sklearn_mace.density._kde import gaussian_log_kernel_sum
from sklearn_mace.utils import _threads
from sklearn_mace.utils._neighbors import nearest_sq_distances
from sklearn_mace.utils._threads import (
    MIN_PARALLEL_WORK,
    MIN_WORK_PER_THREAD,
    choose_threads,
    pass_threads,
)

BIG = 64 * MIN_WORK_PER_THREAD  # enough work for 64 threads


@pytest.fixture
def no_override(monkeypatch):
    monkeypatch.delenv("SKLEARN_MACE_NUM_THREADS", raising=False)


@pytest.fixture
def two_torch_threads():
    """torch's and BLAS's ceiling at 2 for the test (the suite runs on one, conftest.py)."""
    old = torch.get_num_threads()
    torch.set_num_threads(2)
    with threadpool_limits(2, user_api="blas"):
        yield
    torch.set_num_threads(old)


def test_small_passes_run_on_one_thread_without_probing(no_override, monkeypatch):
    def probe():
        raise AssertionError("a small pass must not look at the machine")

    monkeypatch.setattr(_threads, "other_processes_load", probe)
    assert choose_threads(MIN_PARALLEL_WORK - 1, ceiling=16, cores=16) == 1


@pytest.mark.parametrize(
    ("cores", "load", "ceiling", "expected"),
    [
        (2, 0.0, 2, 2),  # idle: every core
        (2, 0.15, 2, 2),  # background noise below the margin
        (2, 0.3, 2, 1),  # a neighbour busy 30 % of the time: one thread
        (2, 1.0, 2, 1),  # one busy process on two cores (issue #18)
        (2, 2.0, 2, 1),  # saturated: still one
        (16, 3.6, 16, 12),  # floor(16 - 3.6 + 0.2)
        (16, 0.0, 4, 4),  # the ceiling (torch.set_num_threads) wins
        (16, None, 8, 8),  # load unknown (no /proc): size, cores and ceiling only
    ],
)
def test_threads_follow_free_cores_and_ceiling(
    no_override, monkeypatch, cores, load, ceiling, expected
):
    monkeypatch.setattr(_threads, "other_processes_load", lambda: load)
    assert choose_threads(BIG, ceiling=ceiling, cores=cores) == expected


def test_threads_follow_work_size(no_override):
    assert choose_threads(MIN_PARALLEL_WORK, ceiling=16, cores=16, load=0.0) == 2
    assert choose_threads(5 * MIN_WORK_PER_THREAD, ceiling=16, cores=16, load=0.0) == 5


def test_environment_fixes_the_count(monkeypatch):
    monkeypatch.setenv("SKLEARN_MACE_NUM_THREADS", "3")
    assert choose_threads(1, ceiling=1, cores=1, load=5.0) == 3
    monkeypatch.setenv("SKLEARN_MACE_NUM_THREADS", "many")
    with pytest.raises(ValueError, match="SKLEARN_MACE_NUM_THREADS"):
        choose_threads(1, ceiling=1)


def test_probe_subtracts_own_cpu_time(monkeypatch):
    """Busy time on the CPUs minus this process's CPU time, per second of wall time."""
    clock = {"wall": 100.0, "busy": 1000.0, "own": 10.0}
    monkeypatch.setattr(_threads, "_busy_seconds", lambda cpus: clock["busy"])
    monkeypatch.setattr(_threads.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(_threads.time, "process_time", lambda: clock["own"])
    monkeypatch.setattr(_threads, "_runnable_now", lambda: 7.0)
    probe = _threads._LoadProbe()
    assert probe.load() == 7.0  # first look: runnable threads now
    # 1 s later: 1.8 CPU-seconds busy, 1.5 of them ours -> others used 0.3 core
    clock.update(wall=101.0, busy=1001.8, own=11.5)
    assert probe.load() == pytest.approx(0.3)
    clock.update(wall=101.1, busy=1010.0, own=11.5)  # within 0.25 s: the previous answer
    assert probe.load() == pytest.approx(0.3)
    clock.update(wall=200.0)  # stale (> 5 s): runnable threads now
    assert probe.load() == 7.0


def _cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@pytest.mark.skipif(
    not (os.path.exists("/proc/stat") and hasattr(os, "sched_setaffinity")),
    reason="the load probe reads /proc (Linux)",
)
def test_probe_sees_a_busy_process():
    """Ground truth: the probe counts the CPU a spinning child process actually got.

    The child's own CPU time over the window (from ``/proc/<pid>/stat``) is the truth; other
    processes may load the machine too, so the probe must read *at least* that, less 0.15
    core for ``/proc``'s 10 ms ticks over a 1 s window (two CPUs: ±0.02 each reading).
    """
    core = max(os.sched_getaffinity(0))
    code = f"import os; os.sched_setaffinity(0, {{{core}}})\nwhile True: pass"
    spinner = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 30
        while _cpu_seconds(spinner.pid) < 0.2 and time.monotonic() < deadline:
            time.sleep(0.05)  # until it really spins
        probe = _threads._LoadProbe()
        probe.load()
        start, spun = time.monotonic(), _cpu_seconds(spinner.pid)
        time.sleep(1.0)
        load = probe.load()
        share = (_cpu_seconds(spinner.pid) - spun) / (time.monotonic() - start)
    finally:
        spinner.kill()
        spinner.wait(timeout=10)
    if share < 0.3:
        pytest.skip(f"the spinner got only {share:.2f} of a core: machine too loaded")
    assert load >= share - 0.15


def _blas_threads():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_pass_sets_and_restores_threads(two_torch_threads, no_override, monkeypatch):
    # one core of two busy, whatever the machine's own core count
    monkeypatch.setattr(_threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(_threads, "other_processes_load", lambda: 1.0)
    blas_before = _blas_threads()
    assert blas_before and all(t == 2 for t in blas_before)
    with pass_threads(BIG) as n:
        assert n == 1
        assert torch.get_num_threads() == 1
        assert all(t == 1 for t in _blas_threads())
        with pass_threads(BIG) as inner:  # nested: the outer pass chose
            assert inner is None
            assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    assert _blas_threads() == blas_before


def test_pass_restores_threads_after_an_error(two_torch_threads, no_override, monkeypatch):
    monkeypatch.setattr(_threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(_threads, "other_processes_load", lambda: 1.0)
    with pytest.raises(RuntimeError, match="boom"), pass_threads(BIG):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == 2
    with pass_threads(BIG) as n:  # the nesting flag was reset too
        assert n == 1


def _in_a_new_thread(function):
    """``function()`` run in a fresh Python thread (torch's per-thread count starts there)."""
    out = []
    worker = threading.Thread(target=lambda: out.append(function()))
    worker.start()
    worker.join(timeout=60)
    return out[0]


@pytest.mark.parametrize(("b_wants", "b_gets"), [(2, 2), (6, 5)])
def test_overlapping_passes_in_two_threads_restore_the_count(
    no_override, monkeypatch, b_wants, b_gets
):
    """Issue #28: two passes overlapping in two Python threads left torch at the wrong count.

    The choice is fixed (a pass of ``work`` terms asks for ``work`` threads, up to its
    ceiling) so that only the bookkeeping is tested. torch's count is per thread, and a
    thread's first call starts from the last count set anywhere in the process. Pass A
    (3 threads) begins; pass B begins while A runs; A ends first, then B. Afterwards torch is
    back at the 8 it had, in this thread and in a fresh one; B saw a ceiling of 8 less A's 3
    (the old code read A's 3 as B's ceiling, and B's restore left 3 for every new thread).
    """
    monkeypatch.setattr(_threads, "choose_threads", lambda work, *, ceiling: min(work, ceiling))
    old = torch.get_num_threads()
    torch.set_num_threads(8)
    a_inside, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def pass_a():
        with pass_threads(3) as n:
            seen["a"] = (n, torch.get_num_threads())
            a_inside.set()
            b_inside.wait(timeout=30)
        a_done.set()

    def pass_b():
        a_inside.wait(timeout=30)
        with pass_threads(b_wants) as n:
            seen["b"] = (n, torch.get_num_threads())
            b_inside.set()
            a_done.wait(timeout=30)

    try:
        workers = [threading.Thread(target=pass_a), threading.Thread(target=pass_b)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        after = (torch.get_num_threads(), _in_a_new_thread(torch.get_num_threads))
    finally:
        torch.set_num_threads(old)
    assert after == (8, 8)
    assert seen == {"a": (3, 3), "b": (b_gets, b_gets)}


def test_pass_is_a_no_op_off_the_cpu(two_torch_threads):
    with pass_threads(BIG, device=torch.device("cuda")) as n:
        assert n is None
        assert torch.get_num_threads() == 2


def test_kernels_agree_whatever_the_thread_count(monkeypatch, rng):
    """The thread count changes only the summation order: results agree to rounding."""
    Z, data = rng.normal(size=(700, 3)), rng.normal(size=(6000, 3))
    results = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("SKLEARN_MACE_NUM_THREADS", threads)
        results[threads] = (
            gaussian_log_kernel_sum(Z, data),
            nearest_sq_distances(Z, data, device="cpu"),
        )
    np.testing.assert_allclose(results["2"][0], results["1"][0], rtol=1e-12)
    np.testing.assert_array_equal(results["2"][1], results["1"][1])
