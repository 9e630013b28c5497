"""Do independent kernel passes, or audit subjects, gain from running concurrently? (issue #28)

Two tables, one process, wall and CPU seconds (user + sys of the process, threads included),
median of ``--repeats``:

* **passes** — three passes a release audit runs on the same targets and release (nearest
  distances, MC's ball count at the median distance, DOMIAS-style KDE sums), one after the
  other, then as joblib tasks on the threading backend (``n_jobs=2`` and ``3``). Each pass
  chooses its own torch threads (``utils/_threads.pass_threads``): concurrent passes share
  one ceiling, so together they never take more threads than one pass alone would;
* **subjects** — ``audit_release`` on two releases, serially, with ``n_jobs=2`` on joblib's
  threading backend, and with ``n_jobs=2`` on its default (loky, processes).

The answers are compared with the serial ones (they must be equal). The load average of the
machine is printed before and after: on a shared machine it decides the outcome.

    python benchmarks/bench_concurrency.py --scale 0.2 --repeats 1   # a smoke run
"""

import argparse
import os
import statistics
import time

import numpy as np
import pandas as pd
import torch
from joblib import Parallel, delayed, parallel_config

from sklearn_mace.density._kde import gaussian_log_kernel_sum
from sklearn_mace.utils import _neighbors
from sklearn_mace.utils._neighbors import count_within_radius, nearest_sq_distances


def timed(function, repeats):
    """``(median wall s, median CPU s, last output)``."""
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        _neighbors._RECENT.clear()
        wall, cpu = time.perf_counter(), time.process_time()
        out = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), out


def pass_tasks(n_rows, n_queries, rng):
    """Three independent passes over one release (functions of no argument)."""
    Y, X = rng.normal(size=(n_rows, 8)), rng.normal(size=(n_queries, 8))
    radius = float(np.sqrt(np.median(nearest_sq_distances(X[:200], Y, device="cpu"))))
    return [
        lambda: nearest_sq_distances(X, Y, device="cpu")[:, 0],
        lambda: count_within_radius(X, Y, radius, device="cpu"),
        lambda: gaussian_log_kernel_sum(X / 0.5, Y / 0.5, device="cpu"),
    ]


def run_passes(tasks, n_jobs):
    if n_jobs == 1:
        return [task() for task in tasks]
    return Parallel(n_jobs=n_jobs, backend="threading")(delayed(task)() for task in tasks)


def passes_table(scale, repeats):
    tasks = pass_tasks(int(100_000 * scale), 2_000, np.random.default_rng(0))
    print(f"Passes: nearest + ball count + KDE sums, 8-D, {int(100_000 * scale):,} x 2,000")
    print("| schedule | wall s | CPU s | speed-up (wall) | same answers |")
    print("|---|---|---|---|---|")
    base = None
    for n_jobs in (1, 2, 3):
        wall, cpu, out = timed(lambda n_jobs=n_jobs: run_passes(tasks, n_jobs), repeats)
        base = base or (wall, out)
        same = all(np.array_equal(a, b) for a, b in zip(out, base[1], strict=True))
        label = "serial" if n_jobs == 1 else f"joblib threads, n_jobs={n_jobs}"
        print(f"| {label} | {wall:.2f} | {cpu:.2f} | {base[0] / wall:.2f}x | {same} |")


def release_tables(scale, rng):
    def table(n):
        return pd.DataFrame(rng.normal(size=(n, 6)), columns=[f"x{i}" for i in range(6)])

    n = max(200, int(2_000 * scale))
    members, non_members = table(n), table(n)
    releases = {"a": table(5 * n), "b": pd.concat([members, table(4 * n)], ignore_index=True)}
    return members, non_members, releases


def subjects_table(scale, repeats):
    from sklearn_mace.report import audit_release

    members, non_members, releases = release_tables(scale, np.random.default_rng(1))
    kwargs = {"random_state": 0, "disclosure": False, "verbose": False, "device": "cpu"}
    print()
    print(f"Subjects: audit_release on 2 releases of {len(releases['a']):,} rows, 6 columns")
    print("| schedule | wall s | CPU s (this process) | speed-up (wall) | same summary |")
    print("|---|---|---|---|---|")
    base = None
    for label, n_jobs, backend in (
        ("serial", None, None),
        ("joblib threads, n_jobs=2", 2, "threading"),
        ("joblib processes (loky), n_jobs=2", 2, "loky"),
    ):

        def audit(n_jobs=n_jobs, backend=backend):
            with parallel_config(backend=backend) if backend else _nothing():
                return audit_release(members, non_members, releases, n_jobs=n_jobs, **kwargs)

        wall, cpu, out = timed(audit, repeats)
        base = base or (wall, out.summary)
        same = out.summary.equals(base[1])
        print(f"| {label} | {wall:.2f} | {cpu:.2f} | {base[0] / wall:.2f}x | {same} |")


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the data rows")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-subjects", action="store_true", help="skip the audit table")
    args = parser.parse_args(argv)
    print(f"CPU: {os.cpu_count()} cores, torch threads {torch.get_num_threads()}; load average")
    print(f"{os.getloadavg()[0]:.1f}; median of {args.repeats}; scale {args.scale}")
    print()
    passes_table(args.scale, args.repeats)
    if not args.no_subjects:
        subjects_table(args.scale, args.repeats)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
