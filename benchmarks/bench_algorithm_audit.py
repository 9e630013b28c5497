"""Speed of the algorithm audit: 2 × 1 000 runs of the DP histogram recipe (issue #19).

One :class:`~sklearn_mace.algorithm.AlgorithmAudit` of the correct DP histogram synthesizer on
the embedded demo population (one target, 1 000 runs with it and 1 000 without, one fixed
1 000-row training set, the expanded-histogram release and its count of the target's cell), timed

* serially (``n_jobs=1``) and on two loky workers (``n_jobs=2``; the target: ≤ 60 s), the
  first time with the workers' start-up (a few seconds of imports each), then warm;
* on a 2-worker Dask ``LocalCluster`` (``joblib.parallel_config(backend="dask")``), whose
  runs and certified ε must be identical to the serial ones (seeds are drawn up front);

against the baseline measured in the same process: the bare recipe, the same 2 000
``fit`` + ``sample()`` calls on the same training sets with nothing else (no featurizing, no
cloning, no attack). The ratio audit / bare is the audit's overhead.

Run: ``python benchmarks/bench_algorithm_audit.py`` (``--runs 200`` for a quick look,
``--no-dask`` to skip the cluster).
"""

import argparse
import logging
import time

import numpy as np
from joblib import parallel_config

from sklearn_mace.algorithm import AlgorithmAudit, DPHistogramSynthesizer, ReleaseFeatures
from sklearn_mace.algorithm._runs import training_set
from sklearn_mace.datasets import make_categorical_population

DEMO = make_categorical_population()  # the embedded demo population (seed 0)


def make_audit(n_runs, n_jobs, target):
    recipe = DPHistogramSynthesizer(1.0, categories=[np.arange(k) for k in DEMO.categories])
    return AlgorithmAudit(
        recipe,
        targets=[target],
        n_runs=n_runs,
        train_size=DEMO.train_size,
        datasets="fixed",
        featurizer=ReleaseFeatures(None, n_neighbors=(), radii=(0.0,), bandwidth=None),
        n_jobs=n_jobs,
        random_state=0,
    )


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def bare_recipe(audit, population, target):
    """The same fits on the same training sets, nothing else: the baseline."""
    from sklearn_mace.algorithm._runs import RunPlan

    pool = np.delete(population, audit.target_indices_[0], axis=0)
    plan = RunPlan(
        recipe=audit.recipe,
        kind="generator",
        featurizer=None,
        output_parameter="synthetic",
        pool=pool,
        targets=target[None],
        relation="add_remove",
        n_train=DEMO.train_size,
        n_runs=audit.n_runs,
        n_synthetic=None,
        fixed_seed=None,
    )
    datasets = [
        training_set(plan, plan.side(run), 1000 + run)[0] for run in range(2 * audit.n_runs)
    ]
    recipe = audit.recipe

    def fit_all():
        for seed, data in enumerate(datasets):
            recipe.set_params(random_state=seed).fit(data).sample()

    return timed(fit_all)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs per side")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    population, targets = DEMO.data, DEMO.targets
    target = targets[0]

    rows = []
    audits = {}
    for n_jobs, label in ((1, ""), (2, " (cold: starts the workers)"), (2, " (warm)")):
        audit = make_audit(args.runs, n_jobs, target)
        seconds, audits[n_jobs] = timed(lambda a=audit: a.fit(population))
        rows.append((f"AlgorithmAudit, n_jobs={n_jobs}{label}", seconds))
    if not args.no_dask:
        from distributed import Client, LocalCluster

        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            ) as cluster,
            Client(cluster),
        ):
            for label in (" (cold)", " (warm)"):
                audit = make_audit(args.runs, None, target)
                with parallel_config(backend="dask"):
                    seconds, audits["dask"] = timed(lambda a=audit: a.fit(population))
                rows.append((f"AlgorithmAudit, Dask LocalCluster (2 workers){label}", seconds))
    bare = bare_recipe(audits[1], population, target)

    print(f"\n2 × {args.runs} runs of the DP histogram recipe (1 000-row training sets, 60 cells)")
    print(f"{'':62} {'seconds':>8} {'/ bare':>7}")
    print(f"{'bare recipe: fit + sample() only, serial':62} {bare:8.2f} {1.0:7.2f}")
    for name, seconds in rows:
        print(f"{name:62} {seconds:8.2f} {seconds / bare:7.2f}")
    serial = audits[1]
    for key, other in audits.items():
        same = np.array_equal(other.run_features_, serial.run_features_) and np.array_equal(
            other.epsilon_lower_bounds_, serial.epsilon_lower_bounds_
        )
        print(
            f"n_jobs/backend {key!s:>5}: certified ε = {other.epsilon_lower_bounds_[0]:.6f}, "
            f"identical to serial runs and bound: {same}"
        )


if __name__ == "__main__":
    main()
