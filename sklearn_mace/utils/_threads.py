"""How many CPU threads a kernel pass uses: its size and the cores other processes leave free.

Why this exists. torch and BLAS start one thread per core and split every operation among
them; each operation ends at a barrier that waits for the slowest thread. When another
process occupies a core, one of our threads shares it, so every barrier waits for a time
slice of the scheduler: on 2 cores beside one busy process, DOMIAS's kernel sums took 1.80 s
with torch's default 2 threads and 0.13 s with 1 (issue #18). A thread that finished first
also spins (busy-waits) for the next operation — libgomp for a few milliseconds, OpenBLAS for
up to ~0.1 s — taking the core from whoever else needs it.

So every kernel pass (pairwise kernel sums, nearest-neighbour screens) runs under
:func:`pass_threads`, which picks ``n`` threads for torch and for the BLAS that NumPy uses
(through :mod:`threadpoolctl`) and restores the previous settings afterwards:

* ``n = 1`` for a pass of fewer than :data:`MIN_PARALLEL_WORK` pairwise terms (a few
  milliseconds of work, where threads cannot pay for their start and barriers) — without
  looking at the machine at all;
* otherwise ``n = min(ceiling, work / MIN_WORK_PER_THREAD, free cores)``, where ``ceiling``
  is what torch allows now (``torch.set_num_threads``, ``OMP_NUM_THREADS``, threadpoolctl)
  and the free cores are the usable ones (:func:`usable_cores`: affinity and cgroup quota)
  minus the load of *other* processes (:func:`other_processes_load`), rounded down with a
  margin of :data:`FREE_CORE_MARGIN`: a core shared with a busy process costs far more than
  an idle one saves.

With one thread no worker thread is woken, so nothing of ours spins beside a busy process;
with more, the cores were free when the pass began. ``SKLEARN_MACE_NUM_THREADS=n`` in the
environment fixes ``n`` for every pass (benchmarks, or a machine whose load the probe cannot
see). torch's thread count is per Python thread but new threads start from the last count set, and
BLAS's is process-wide: passes that overlap in several Python threads share one ceiling and
one restore (:class:`_ProcessThreads`, under a lock; the nesting guard is per thread).
"""

import contextlib
import math
import os
import threading
import time

__all__ = [
    "FREE_CORE_MARGIN",
    "MIN_PARALLEL_WORK",
    "MIN_WORK_PER_THREAD",
    "choose_threads",
    "other_processes_load",
    "pass_threads",
    "usable_cores",
]

# Pairwise terms (one exp, or one multiply-add per feature) below which a pass runs on one
# thread: ~4e6 terms are 10-30 ms on one core, where a second thread saves at most half of
# that and a straggling one costs a scheduler slice per operation.
MIN_PARALLEL_WORK = 2**22
# Each extra thread needs at least this much work of its own.
MIN_WORK_PER_THREAD = 2**21
# A core counts as free when other processes use at most 1 - margin of it: with 2 cores and a
# neighbour busy 30 % of the time, 2 threads already straggle at every barrier it interrupts.
FREE_CORE_MARGIN = 0.2
# The load of other processes is averaged since the previous probe when that is between these
# many seconds ago (long enough for /proc/stat's 10 ms ticks, short enough to be current);
# otherwise the runnable threads are counted now.
_MIN_INTERVAL, _MAX_INTERVAL = 0.25, 5.0
_ENV_OVERRIDE = "SKLEARN_MACE_NUM_THREADS"


def usable_cores():
    """Cores this process may run on: CPU affinity and cgroup CPU quota (joblib's count).

    Returns
    -------
    n_cores : int
    """
    from joblib import cpu_count

    return max(1, int(cpu_count()))


def _allowed_cpus():
    try:
        return {f"cpu{c}" for c in os.sched_getaffinity(0)}
    except (AttributeError, OSError):
        return None


def _busy_seconds(cpus):
    """CPU seconds spent busy on ``cpus`` since boot (``/proc/stat``); None off Linux."""
    try:
        with open("/proc/stat") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    busy = 0
    for line in lines[1:]:
        if not line.startswith("cpu"):
            break
        name, *fields = line.split()
        if cpus is None or name in cpus:
            # user nice system idle iowait irq softirq steal (guest is inside user)
            values = [int(v) for v in fields[:8]]
            busy += sum(values) - values[3] - values[4]
    return busy / ticks


def _own_running_threads():
    n = 0
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        n += stat[stat.rfind(")") + 2] == "R"
    return max(n, 1)


def _runnable_now():
    """Threads of other processes runnable right now (``/proc/loadavg``), or None."""
    counts = []
    for _ in range(3):  # three looks 1 ms apart; the largest is kept (conservative)
        try:
            with open("/proc/loadavg") as f:
                running = int(f.read().split()[3].split("/")[0])
        except (OSError, IndexError, ValueError):
            return None
        counts.append(running - _own_running_threads())
        time.sleep(0.001)
    return float(max(0, max(counts)))


class _LoadProbe:
    """Cores used by other processes: busy time on our CPUs minus our own CPU time."""

    def __init__(self):
        self._lock = threading.Lock()
        self._last = None  # (wall, busy seconds on our CPUs, our CPU seconds)
        self._recent = None  # the last answer, reused within _MIN_INTERVAL

    def load(self):
        busy = _busy_seconds(_allowed_cpus())
        if busy is None:
            return None
        now, own = time.monotonic(), time.process_time()
        with self._lock:
            last, recent = self._last, self._recent
            if last is not None and now - last[0] < _MIN_INTERVAL and recent is not None:
                return recent
            self._last = (now, busy, own)
        if last is not None and now - last[0] <= _MAX_INTERVAL:
            others = max(0.0, ((busy - last[1]) - (own - last[2])) / (now - last[0]))
        else:
            others = _runnable_now()
        with self._lock:
            self._recent = others
        return others


_PROBE = _LoadProbe()


def other_processes_load():
    """Cores' worth of CPU that other processes used lately, or None where it cannot be seen.

    On Linux: the busy time of the CPUs this process may use (``/proc/stat``) minus this
    process's own CPU time, averaged since the previous look when that was 0.25-5 s ago
    (a look less than 0.25 s after the previous one gets the previous answer); otherwise
    (first look, or a stale one) the number of other threads runnable right now
    (``/proc/loadavg``, the largest of three looks 1 ms apart). None on other systems. In
    a container held to a CPU quota rather than a CPU set, ``/proc`` shows the whole host,
    so the answer errs high (fewer threads, never oversubscription).

    Returns
    -------
    load : float or None
        E.g. about 1.0 beside one process spinning on one core.
    """
    return _PROBE.load()


def choose_threads(work, *, ceiling, cores=None, load=None):
    """Threads for a pass of ``work`` pairwise terms (see the module docstring).

    Parameters
    ----------
    work : int
        Pairwise terms the pass computes (query rows × data rows).
    ceiling : int
        The most threads allowed (``torch.get_num_threads()`` when the pass begins).
    cores : int, default=None
        Usable cores; None asks :func:`usable_cores`.
    load : float, default=None
        Cores used by other processes; None asks :func:`other_processes_load` (which may
        itself answer None, and then only the size and the ceiling count).

    Returns
    -------
    n_threads : int >= 1
    """
    fixed = os.environ.get(_ENV_OVERRIDE)
    if fixed:
        try:
            return max(1, int(fixed))
        except ValueError as exc:
            raise ValueError(f"{_ENV_OVERRIDE} must be a positive integer; got {fixed!r}.") from exc
    if work < MIN_PARALLEL_WORK or ceiling <= 1:
        return 1
    n = min(ceiling, max(1, int(work // MIN_WORK_PER_THREAD)))
    cores = usable_cores() if cores is None else cores
    n = min(n, cores)
    if n > 1:
        load = other_processes_load() if load is None else load
        if load is not None:
            n = min(n, math.floor(cores - load + FREE_CORE_MARGIN))
    return max(1, n)


_BLAS = None
_STATE = threading.local()  # the nesting guard: a pass inside a pass of the same thread


class _ProcessThreads:
    """The passes in flight in this process, and the counts to restore when the last ends.

    torch's thread count is per Python thread, and a thread's first torch call starts from
    the count set last anywhere in the process; NumPy's BLAS count is process-wide. So
    overlapping passes in several Python threads share one book, under one lock: the first
    pass to begin reads the ceiling (torch's count in its thread) and saves BLAS's counts;
    a pass that begins while others run takes its ceiling from that saved one, less the
    threads the passes in flight hold; every pass puts its own thread back at the saved
    ceiling when it ends; the last one also restores BLAS.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.in_flight = 0  # passes running now
        self.held = 0  # torch threads they hold
        self.ceiling = None  # torch's count before the first of them
        self.blas = None  # threadpoolctl's limiter that restores BLAS's counts

    def begin(self, work, torch):
        with self.lock:
            if self.in_flight == 0:
                self.ceiling = torch.get_num_threads()
            ceiling = self.ceiling
            n = choose_threads(work, ceiling=max(1, ceiling - self.held))
            blas = _blas_controller().select(user_api="blas")
            blas_n = min([n, *(lib.num_threads for lib in blas.lib_controllers)])
            if self.blas is None:
                self.blas = blas.limit(limits=blas_n)
            elif any(lib.num_threads > blas_n for lib in blas.lib_controllers):
                blas.limit(limits=blas_n)  # lowered only: the first pass's limiter restores
            if torch.get_num_threads() != n:
                torch.set_num_threads(n)
            self.in_flight += 1  # counted once everything above has succeeded
            self.held += n
        return n, ceiling

    def end(self, n, ceiling, torch):
        with self.lock:
            self.in_flight -= 1
            self.held -= n
            if torch.get_num_threads() != ceiling:
                torch.set_num_threads(ceiling)
            if self.in_flight == 0:
                self.blas.restore_original_limits()
                self.blas = None
                self.ceiling = None


_PROCESS = _ProcessThreads()


def _blas_controller():
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()  # found once: a fresh lookup costs ~2 ms
    return _BLAS


@contextlib.contextmanager
def pass_threads(work, *, device="cpu"):
    """Run the body of a kernel pass on :func:`choose_threads` threads (torch and BLAS).

    A no-op on CUDA and inside another pass of the same thread (the outer pass chose
    already); the previous torch and BLAS thread counts are restored on exit. BLAS is never
    raised above what it had. Passes that overlap in several Python threads share torch's
    ceiling (each gets at most what the others leave) and leave torch and BLAS as they
    found them, whatever order they end in.

    Parameters
    ----------
    work : int
        Pairwise terms the pass computes.
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="cpu"
        The device the pass runs on.

    Yields
    ------
    n_threads : int or None
        The threads chosen (None on CUDA or when nested).
    """
    import torch

    from ._torch import resolve_device

    on_cpu = (device if isinstance(device, torch.device) else resolve_device(device)).type == "cpu"
    if not on_cpu or getattr(_STATE, "active", False):
        yield None
        return
    n, ceiling = _PROCESS.begin(work, torch)
    _STATE.active = True
    try:
        yield n
    finally:
        _STATE.active = False
        _PROCESS.end(n, ceiling, torch)
