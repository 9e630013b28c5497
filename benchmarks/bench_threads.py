"""Kernel passes idle and beside a busy process: threads that fit the machine (issue #18).

Three passes, each timed against the library a user would otherwise call, in the same run:

* ``DOMIAS`` — ``DOMIASQuery`` with Scott's bandwidth (fit + transform) on the planted 8-D
  problem of issue #18 (10 000 synthetic and 10 000 reference rows, 500 + 500 targets),
  against ``scipy.stats.gaussian_kde`` (Scott) ``logpdf_G − logpdf_R`` on the same rows;
* ``certificate`` — ``KDEAdvantageEstimator().fit`` on a Gaussian shift in 8-D
  (1 000 + 1 000 rows; the cross-fit, bandwidth selection and U_N), against the plug-in
  Bayes classifier in scipy: two ``gaussian_kde`` (one per class) evaluated on every row;
* ``nearest`` — ``GANLeaksQuery(synthetic, reference)`` (the nearest synthetic and reference
  distance of every target, torch backend), against ``sklearn.neighbors.NearestNeighbors``
  (defaults, ``n_neighbors=1``) fitted on each and queried with the targets.

Each pass runs with the library's thread choice (``ours``), and with the count pinned
through ``SKLEARN_MACE_NUM_THREADS`` to every usable core (``all cores``: what torch did
before, its default) and to one (``1 thread``). Conditions: ``idle`` (nothing started by this
script; the load of other processes is printed, as the machine may be shared), ``busy``
(a pure-Python spinner pinned to one core, started here) and ``busy torch`` (a process
running torch kernels on its default threads, as a neighbour's test suite would). Every
measurement is the median of ``--repeats`` runs, the methods interleaved round by round.

Targets (issue #18): DOMIAS ``ours / scipy`` <= 1 busy and <= 0.65 idle.

    python benchmarks/bench_threads.py              # all passes and conditions (~3 min)
    python benchmarks/bench_threads.py --quick      # smaller problems, 3 repeats
"""

import argparse
import multiprocessing as mp
import os
import statistics
import time

import numpy as np
from scipy.stats import gaussian_kde
from sklearn.neighbors import NearestNeighbors

from sklearn_mace import KDEAdvantageEstimator
from sklearn_mace.datasets import make_planted_leak
from sklearn_mace.queries import DOMIASQuery, GANLeaksQuery
from sklearn_mace.utils._threads import (
    choose_threads,
    other_processes_load,
    usable_cores,
)

ENV = "SKLEARN_MACE_NUM_THREADS"


def python_spinner(stop, core):
    """Busy on one core until ``stop`` is set."""
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def torch_spinner(stop, core):
    """torch kernels on torch's default threads, as another process's test suite would run."""
    import torch

    a = torch.randn(300, 300, dtype=torch.float64)
    while not stop.is_set():
        for _ in range(10):
            torch.logsumexp(a @ a, dim=1)


def make_passes(quick):
    n, half = (2000, 250) if quick else (10_000, 500)
    data = make_planted_leak(
        half, half, n, n, n_features=8, leak_fraction=0.2, noise=0.6, random_state=0
    )
    X, syn, ref = data.X_test, data.synthetic, data.reference
    rng = np.random.default_rng(0)
    n_cert = 500 if quick else 1000
    Q = np.r_[rng.normal(size=(n_cert, 8)) + 0.25, rng.normal(size=(n_cert, 8))]
    m = np.r_[np.ones(n_cert, int), np.zeros(n_cert, int)]

    def scipy_domias():
        return gaussian_kde(syn.T).logpdf(X.T) - gaussian_kde(ref.T).logpdf(X.T)

    def scipy_plugin():
        return gaussian_kde(Q[m == 1].T).logpdf(Q.T) - gaussian_kde(Q[m == 0].T).logpdf(Q.T)

    def sklearn_nearest():
        d_syn = NearestNeighbors(n_neighbors=1).fit(syn).kneighbors(X)[0]
        d_ref = NearestNeighbors(n_neighbors=1).fit(ref).kneighbors(X)[0]
        return d_syn - d_ref

    return {
        "DOMIAS": (
            lambda: DOMIASQuery(syn, ref, device="cpu").fit_transform(X),
            scipy_domias,
            "scipy gaussian_kde",
            len(X) * n,
        ),
        "certificate": (
            lambda: KDEAdvantageEstimator(random_state=0, device="cpu").fit(Q, m),
            scipy_plugin,
            "scipy gaussian_kde plug-in",
            len(Q) ** 2,
        ),
        "nearest": (
            lambda: GANLeaksQuery(syn, ref, device="cpu").fit_transform(X),
            sklearn_nearest,
            "sklearn NearestNeighbors",
            len(X) * n,
        ),
    }


def with_threads(fn, n):
    """``fn`` with the thread count pinned to ``n`` (None: the library's choice)."""

    def run():
        old = os.environ.pop(ENV, None)
        if n is not None:
            os.environ[ENV] = str(n)
        try:
            return fn()
        finally:
            os.environ.pop(ENV, None)
            if old is not None:
                os.environ[ENV] = old

    return run


def timed_rounds(methods, repeats):
    """Median seconds of each method, interleaved round by round."""
    times = {name: [] for name in methods}
    for _ in range(repeats):
        for name, fn in methods.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def measure(condition, passes, repeats):
    cores = usable_cores()
    time.sleep(0.5)
    other_processes_load()
    time.sleep(0.5)
    load = other_processes_load()
    seen = "unknown" if load is None else f"{load:.2f}"
    print(f"\n## {condition}: other processes use {seen} of {cores} cores (probe)")
    print(
        f"{'pass':<12} {'baseline':<27} {'base s':>7} {'ours s':>7} {'ours/base':>9} "
        f"{'all cores s':>11} {'/base':>6} {'1 thread s':>10} {'/base':>6} {'chosen':>6}"
    )
    rows = []
    for name, (ours, baseline, base_name, work) in passes.items():
        chosen = choose_threads(work, ceiling=cores)
        ours()  # warm-up (torch's first call, imports)
        t = timed_rounds(
            {
                "base": baseline,
                "ours": with_threads(ours, None),
                "all": with_threads(ours, cores),
                "one": with_threads(ours, 1),
            },
            repeats,
        )
        print(
            f"{name:<12} {base_name:<27} {t['base']:7.3f} {t['ours']:7.3f} "
            f"{t['ours'] / t['base']:9.2f} {t['all']:11.3f} {t['all'] / t['base']:6.2f} "
            f"{t['one']:10.3f} {t['one'] / t['base']:6.2f} {chosen:>6}"
        )
        rows.append((condition, name, t))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller problems")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--conditions",
        nargs="+",
        default=["idle", "busy", "busy torch"],
        choices=["idle", "busy", "busy torch"],
    )
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 5)
    passes = make_passes(args.quick)
    cores = usable_cores()
    print(
        f"usable cores: {cores}; load average: {os.getloadavg()[0]:.2f}; "
        f"repeats: {repeats}; quick: {args.quick}"
    )
    ctx = mp.get_context("spawn")
    results = []
    for condition in args.conditions:
        spinner = {"busy": python_spinner, "busy torch": torch_spinner}.get(condition)
        stop, process = ctx.Event(), None
        if spinner is not None:
            process = ctx.Process(target=spinner, args=(stop, cores - 1), daemon=True)
            process.start()
            time.sleep(2.0)  # let it start (a torch import takes a while)
        try:
            results += measure(condition, passes, repeats)
        finally:
            if process is not None:
                stop.set()
                process.join(timeout=10)
    domias = {c: t["ours"] / t["base"] for c, name, t in results if name == "DOMIAS"}
    print("\nTargets (DOMIAS ours / scipy): idle <= 0.65, busy <= 1.")
    for condition, ratio in domias.items():
        target = 0.65 if condition == "idle" else 1.0
        print(f"  {condition:<11} {ratio:5.2f}  {'met' if ratio <= target else 'NOT met'}")


if __name__ == "__main__":
    main()
