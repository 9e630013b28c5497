"""Nearest-synthetic distance (MACE Eq. 2): sklearn-mace vs scikit-learn and faiss.

1e4 query records against 1e5 synthetic records, in 16 and 64 dimensions. Every method runs
in the same process, interleaved, ``--repeats`` times; the table shows the median time and its
ratio to scikit-learn brute force and to raw faiss ``IndexFlatL2`` (when installed); the
row ``faiss k=2`` is raw faiss asked for two neighbours (the cost of a runner-up certificate).
All results are checked against each other (ours is exact in float64; faiss alone is float32).

A second table shows peak memory: for a growing synthetic set, each run in a fresh process,
the extra resident memory at peak over the inputs themselves, next to the size of the
``n × N`` distance matrix a naive computation would need.

    python benchmarks/bench_queries.py                # full sizes
    python benchmarks/bench_queries.py --quick        # 1e3 × 1e4, for a smoke run
    python benchmarks/bench_queries.py --threads 1    # torch / faiss / sklearn on one thread
"""

import argparse
import importlib.util
import json
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import threadpool_limits

from sklearn_mace.queries import NearestSyntheticDistance

HAS_FAISS = importlib.util.find_spec("faiss") is not None


def methods():
    table = {
        "sklearn auto": lambda X, Y: NearestNeighbors(n_neighbors=1).fit(Y).kneighbors(X)[0],
        "sklearn brute": lambda X, Y: (
            NearestNeighbors(n_neighbors=1, algorithm="brute").fit(Y).kneighbors(X)[0]
        ),
        "ours (torch)": lambda X, Y: (
            NearestSyntheticDistance(Y, backend="torch").fit(X[:1]).transform(X)
        ),
    }
    if HAS_FAISS:
        import faiss

        def raw_faiss(X, Y):
            index = faiss.IndexFlatL2(Y.shape[1])
            index.add(Y.astype(np.float32))
            return np.sqrt(index.search(X.astype(np.float32), 1)[0])

        table["faiss IndexFlatL2"] = raw_faiss

        def raw_faiss_two(X, Y):
            # what a runner-up certificate would cost on faiss (nearest_sq_distances skips it
            # for k = 1 because of this ratio); the first column is the k = 1 answer
            index = faiss.IndexFlatL2(Y.shape[1])
            index.add(Y.astype(np.float32))
            return np.sqrt(index.search(X.astype(np.float32), 2)[0][:, 0])

        table["faiss k=2"] = raw_faiss_two
        table["ours (faiss)"] = lambda X, Y: (
            NearestSyntheticDistance(Y, backend="faiss").fit(X[:1]).transform(X)
        )
    return table


def time_all(n, N, d, repeats, rng):
    X, Y = rng.normal(size=(n, d)), rng.normal(size=(N, d))
    times, results = {}, {}
    for _ in range(repeats):
        for name, run in methods().items():
            start = time.perf_counter()
            results[name] = np.asarray(run(X, Y)).reshape(-1)
            times.setdefault(name, []).append(time.perf_counter() - start)
    reference = results["sklearn brute"]
    for name, values in results.items():
        err = np.max(np.abs(values - reference) / np.maximum(reference, 1e-300))
        tol = 1e-3 if name.startswith("faiss") else 1e-9  # float32 alone vs exact float64
        assert err < tol, f"{name} disagrees with sklearn brute: max rel. error {err:.2e}"
    return {name: statistics.median(t) for name, t in times.items()}, {
        name: (min(t), max(t)) for name, t in times.items()
    }


def memory_probe(n, N, d):
    """Run in a fresh process: extra peak RSS (MiB) of one transform over the inputs."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(n, d)), rng.normal(size=(N, d))
    query = NearestSyntheticDistance(Y, backend="torch").fit(X[:1])
    query.transform(X[:10])  # warm up torch's allocator and thread pool
    with open("/proc/self/statm") as statm:
        before = int(statm.read().split()[1]) * resource.getpagesize() / 2**20
    query.transform(X)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    return max(0.0, peak - before)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--memory-probe", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_probe:
        print(json.dumps(memory_probe(*args.memory_probe)))
        return
    if args.threads:
        torch.set_num_threads(args.threads)
        if HAS_FAISS:
            import faiss

            faiss.omp_set_num_threads(args.threads)
    n, N = (1_000, 10_000) if args.quick else (10_000, 100_000)
    rng = np.random.default_rng(0)
    print(
        f"nearest-synthetic distance, {n} queries x {N} synthetic rows, median of "
        f"{args.repeats} interleaved runs; torch threads {torch.get_num_threads()}, "
        f"faiss {'installed' if HAS_FAISS else 'not installed'}"
    )
    header = f"{'d':>3}  {'method':<18} {'median s':>9} {'min-max s':>13} {'vs brute':>9}"
    print(header + (f" {'vs faiss':>9}" if HAS_FAISS else ""))
    with threadpool_limits(limits=args.threads):
        for d in (16, 64):
            median, spread = time_all(n, N, d, args.repeats, rng)
            for name, t in median.items():
                line = (
                    f"{d:>3}  {name:<18} {t:>9.3f} {spread[name][0]:>6.2f}-"
                    f"{spread[name][1]:<6.2f} {t / median['sklearn brute']:>9.2f}"
                )
                if HAS_FAISS:
                    line += f" {t / median['faiss IndexFlatL2']:>9.2f}"
                print(line)

    print("\npeak memory of ours (torch), each in a fresh process, d = 16")
    print(f"{'queries':>8} {'synthetic N':>12} {'extra peak MiB':>15} {'n x N matrix MiB':>17}")
    n_mem = 1_000 if args.quick else 2_000
    for N_mem in (10_000, 40_000) if args.quick else (25_000, 100_000, 400_000):
        probe = subprocess.run(
            [sys.executable, __file__, "--memory-probe", str(n_mem), str(N_mem), "16"],
            capture_output=True,
            text=True,
            check=True,
        )
        extra = json.loads(probe.stdout)
        print(f"{n_mem:>8} {N_mem:>12} {extra:>15.0f} {n_mem * N_mem * 8 / 2**20:>17.0f}")


if __name__ == "__main__":
    main()
