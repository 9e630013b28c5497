"""The heavy passes on the GPU and on the CPU, in one process, and the audit end to end (issue #28).

One command measures issue #28's table where it runs: each pass on CUDA (when torch sees a
GPU) and on the CPU (the library's thread choice, "Devices and threads" in docs/design.md),
against the peer a user would otherwise call where one exists, in the same process, median
of ``--repeats`` runs; then ``sklearn-mace audit`` end to end (``bench_audit_load.py
--mixed``: 30 mixed columns, 5 000 + 5 000 rows and a 50 000-row release) in a fresh
interpreter with the GPU visible and with ``CUDA_VISIBLE_DEVICES=""``. Without a GPU the
GPU columns stay empty ("-"). ``max |GPU − CPU|`` compares the two devices' outputs.

Passes (rows and targets as issue #28; ``--scale`` multiplies the data rows):

* ``DOMIAS (Scott)`` — ``DOMIASQuery(bandwidth="scott")`` fit + transform of 2 000 targets,
  synthetic and reference rows drawn from a Gaussian; peer (the 10 000-row case): two
  ``scipy.stats.gaussian_kde``;
* ``nearest`` — ``nearest_sq_distances`` (GAN-leaks' exact nearest distance: float32
  screen over tiles of the data, TF32 where the user allowed it on CUDA, and the exact
  float64 re-check of the pairs that can decide it); peer (16-D):
  ``sklearn.neighbors.NearestNeighbors(n_jobs=-1)``;
* ``nearest (float64)`` — the plain float64 pass the float32 screen replaces
  (``sq_distance_blocks`` and a row minimum), for the screen's speed-up on each device;
* ``ball count`` — ``count_within_radius`` at the median nearest distance (the Monte-Carlo
  query's ε-ball; float32 screen, exact re-check of the pairs within its bound);
* ``nearest + ball count`` — a nearest pass (k = 2) and a ball count (radius 1) over the
  same targets and data, as an audit runs them; ``nearest + ball count, kept on device`` —
  the same inside ``utils._device.keep_on_device`` (the arrays go to the device once, not
  per pass; the same on the CPU, where nothing is copied);
* ``certificate`` — ``KDEAdvantageEstimator().fit`` on a Gaussian shift (members shifted by
  0.2 per column): cross-fit, bandwidth selection, U_N.

The first GPU run of each pass is a warm-up (CUDA's context and kernels), not timed; the
nearest-distance cache (``utils._neighbors``) is emptied before every run.

Measured without a GPU (2 shared cores, load average about 8, ``--scale 0.05 --repeats 3
--cli-rows 10000``, 2026-11-27): the GPU columns are empty, as they must be here; no GPU
figure has been measured with this script yet.

    | pass | size | GPU s | CPU s | peer s |
    |---|---|---|---|---|
    | DOMIAS (Scott) | 8-D, 1,000 + 1,000, 2,000 targets | - | 0.159 | 0.561 |
    | DOMIAS (Scott) | 8-D, 50,000 + 50,000, 2,000 targets | - | 2.787 | - |
    | DOMIAS (Scott) | 64-D, 5,000 + 5,000, 2,000 targets | - | 0.894 | - |
    | nearest | 16-D, 5,000, 10,000 targets | - | 0.768 | 0.705 |
    | nearest | 64-D, 50,000, 10,000 targets | - | 7.777 | - |
    | certificate | 8-D, 2,500 + 2,500 | - | 0.857 | - |
    | certificate | 1-D, 5,000 + 5,000 | - | 0.098 | - |

    audit, mixed tables, 10 000-row release, CPU only: wall 26.9 s, CPU 12.1 s, 650 MiB

The rows ``nearest (float64)`` and ``ball count`` came with the float32 screen (issue #28
kernels). A smoke run without a GPU (``--scale 0.01 --cli-rows 0 --repeats 1``, load
average 9.6, 2026-11-28): nearest 16-D 0.067 s against 0.187 s for the float64 pass,
64-D 0.776 s against 2.117 s; ball count 16-D 0.163 s. CPU speed-ups at full size:
``benchmarks/bench_kernels.py``.

    python benchmarks/bench_gpu.py                       # issue #28's sizes (GPU machine)
    python benchmarks/bench_gpu.py --scale 0.01 --cli-rows 5000 --repeats 1   # a smoke run
"""

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

from sklearn_mace import KDEAdvantageEstimator
from sklearn_mace.queries import DOMIASQuery
from sklearn_mace.utils import _neighbors
from sklearn_mace.utils._device import keep_on_device
from sklearn_mace.utils._neighbors import (
    count_within_radius,
    nearest_sq_distances,
    sq_distance_blocks,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_audit_load, bench_encode

# (pass, dimensions, data rows, second set's rows, targets, with a peer)
CASES = [
    ("DOMIAS (Scott)", 8, 10_000, 10_000, 2000, True),
    ("DOMIAS (Scott)", 8, 1_000_000, 1_000_000, 2000, False),
    ("DOMIAS (Scott)", 64, 100_000, 100_000, 2000, False),
    ("nearest", 16, 100_000, 0, 10_000, True),
    ("nearest", 64, 1_000_000, 0, 10_000, False),
    ("nearest (float64)", 16, 100_000, 0, 10_000, False),
    ("nearest (float64)", 64, 1_000_000, 0, 10_000, False),
    ("ball count", 16, 100_000, 0, 10_000, False),
    ("nearest + ball count", 16, 1_000_000, 0, 10_000, False),
    ("nearest + ball count, kept on device", 16, 1_000_000, 0, 10_000, False),
    ("certificate", 8, 50_000, 50_000, 0, False),
    ("certificate", 1, 100_000, 100_000, 0, False),
]


def make_case(name, d, n, n_other, n_targets, rng):
    """The inputs of one pass: ``(run(device) -> ndarray, peer() -> None or None)``."""
    if name.startswith("DOMIAS"):
        synthetic, reference = rng.normal(size=(n, d)), rng.normal(size=(n_other, d))
        targets = rng.normal(size=(n_targets, d))

        def run(device):
            query = DOMIASQuery(synthetic, reference, bandwidth="scott", device=device)
            return query.fit_transform(targets)[:, 0]

        def peer():
            from scipy.stats import gaussian_kde

            kde_g, kde_r = gaussian_kde(synthetic.T), gaussian_kde(reference.T)
            return kde_g.logpdf(targets.T) - kde_r.logpdf(targets.T)

        return run, peer
    if name == "nearest (float64)":
        data, queries = rng.normal(size=(n, d)), rng.normal(size=(n_targets, d))

        def run(device):
            out = torch.empty(len(queries), dtype=torch.float64)
            for rows, d2 in sq_distance_blocks(queries, data, device=device):
                out[rows] = d2.amin(dim=1).cpu()
            return out.numpy()

        return run, None
    if name == "ball count":
        data, queries = rng.normal(size=(n, d)), rng.normal(size=(n_targets, d))
        radius = float(np.sqrt(np.median(nearest_sq_distances(queries[:500], data))))

        def run(device):
            return count_within_radius(queries, data, radius, device=device)

        return run, None
    if name.startswith("nearest + ball count"):
        data, queries = rng.normal(size=(n, d)), rng.normal(size=(n_targets, d))
        scope = keep_on_device if name.endswith("kept on device") else _no_scope

        def run(device):
            with scope(device):  # the targets and the data go to the device once, or twice each
                _neighbors._RECENT.clear()
                d2 = nearest_sq_distances(queries, data, k=2, device=device)
                return np.c_[d2, count_within_radius(queries, data, 1.0, device=device)]

        return run, None
    if name == "nearest":
        data, queries = rng.normal(size=(n, d)), rng.normal(size=(n_targets, d))

        def run(device):
            with _neighbors._RECENT_LOCK:  # each run computes: no answer from the cache
                _neighbors._RECENT.clear()
            return nearest_sq_distances(queries, data, device=device)[:, 0]

        def peer():
            from sklearn.neighbors import NearestNeighbors

            return NearestNeighbors(n_neighbors=1, n_jobs=-1).fit(data).kneighbors(queries)[0]

        return run, peer
    X = np.vstack([rng.normal(size=(n_other, d)), rng.normal(0.2, 1.0, size=(n, d))])
    y = np.r_[np.zeros(n_other, int), np.ones(n, int)]

    def run(device):
        estimator = KDEAdvantageEstimator(device=device, random_state=0).fit(X, y)
        return np.array([estimator.advantage_lower_bound_, estimator.advantage_estimate_])

    return run, None


@contextlib.contextmanager
def _no_scope(device):
    yield


def timed(function, repeats):
    """``(median seconds, last output)`` of ``repeats`` calls."""
    seconds, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = function()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), out


def passes(scale, repeats, peers):
    gpu = torch.cuda.is_available()
    rows = []
    for name, d, n, n_other, n_targets, has_peer in CASES:
        n, n_other = max(1000, int(n * scale)), max(1000, int(n_other * scale)) if n_other else 0
        run, peer = make_case(name, d, n, n_other, n_targets, np.random.default_rng(0))
        cpu_s, cpu_out = timed(lambda run=run: run("cpu"), repeats)
        gpu_s = diff = None
        if gpu:
            run("cuda")  # warm-up
            gpu_s, gpu_out = timed(lambda run=run: run("cuda"), repeats)
            diff = float(np.max(np.abs(np.asarray(gpu_out) - np.asarray(cpu_out))))
        peer_s = timed(peer, repeats)[0] if (has_peer and peers and peer is not None) else None
        size = f"{n:,} + {n_other:,}" if n_other else f"{n:,}"
        size += f", {n_targets:,} targets" if n_targets else ""
        rows.append((name, f"{d}-D, {size}", gpu_s, cpu_s, peer_s, diff))
    return rows


def cli_rows(n_release, gpu):
    """``sklearn-mace audit`` on the mixed tables, GPU visible and hidden: (mode, wall, CPU,
    peak MiB)."""
    from bench_audit_load import bench

    modes = [("GPU visible", None)] if gpu else []
    modes.append(("CPU only", ""))
    out = []
    for mode, visible in modes:
        old = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            os.environ["CUDA_VISIBLE_DEVICES"] = visible
        try:
            wall, cpu, _, peak, summary = bench(n_release, mixed=True)
        finally:
            if visible is not None and old is None:
                del os.environ["CUDA_VISIBLE_DEVICES"]
            elif visible is not None:
                os.environ["CUDA_VISIBLE_DEVICES"] = old
        failed = summary.loc[summary["status"] == "failed", "analysis"].tolist()
        out.append((mode, wall, cpu, peak, failed))
    return out


def _s(value, style=".3f"):
    return "-" if value is None else format(value, style)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the data rows")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-peers", action="store_true", help="skip scipy and scikit-learn")
    parser.add_argument("--cli-rows", type=int, default=50_000, help="release rows; 0 skips it")
    args = parser.parse_args(argv)
    gpu = torch.cuda.is_available()
    device = torch.cuda.get_device_name(0) if gpu else "none"
    print(f"GPU: {device}; CPU: {os.cpu_count()} cores, torch ceiling {torch.get_num_threads()}")
    print(f"load average {os.getloadavg()[0]:.1f}; median of {args.repeats}; scale {args.scale}")
    print()
    print("| pass | size | GPU s | CPU s | peer s | max abs GPU - CPU |")
    print("|---|---|---|---|---|---|")
    for name, size, gpu_s, cpu_s, peer_s, diff in passes(
        args.scale, args.repeats, not args.no_peers
    ):
        print(f"| {name} | {size} | {_s(gpu_s)} | {_s(cpu_s)} | {_s(peer_s)} | {_s(diff, '.1e')} |")
    if args.cli_rows:
        print()
        print(f"sklearn-mace audit, mixed tables, 5 000 + 5 000 rows, {args.cli_rows:,} released")
        print("| mode | wall s | CPU s | peak MiB | failed analyses |")
        print("|---|---|---|---|---|")
        for mode, wall, cpu, peak, failed in cli_rows(args.cli_rows, gpu):
            print(f"| {mode} | {wall:.1f} | {cpu:.1f} | {peak:.0f} | {failed or '-'} |")
        print("(peak MiB: the largest child so far, runs in this order)")


if __name__ == "__main__":
    main()
