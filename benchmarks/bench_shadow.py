"""Shadow models in parallel (n_jobs, Dask), and LiRA against the shadow-model attack and BTTA.

Three tables, on scikit-learn's digits (1797 images, pixels scaled to [0, 1]):

1. Wall time of 16 shadow models (``HistGradientBoostingClassifier(max_iter=50)``, each on a
   random half, ``ShadowModels(split="balanced")``): serially, with ``n_jobs=2`` (joblib's
   loky processes), and through a Dask ``LocalCluster`` of 2 worker processes x 1 thread.
   Every row runs one BLAS/OpenMP thread per task (serially through ``threadpool_limits``;
   loky and Dask workers limit themselves), so the speed-up is that of the processes alone.
   "cold" includes starting the workers (and their ``import sklearn_mace``); "warm" reuses
   them. The per-task overhead of each backend is measured on 64 no-op tasks. The queries of
   every run are checked equal to the serial run.
2. LiRA's TPR at 0.1 % and 1 % FPR against the number of shadow models (4, 8, 16, 32), on
   ``--targets`` MLP targets (each trained on a random half of digits; scores and labels of
   all targets pooled, as Carlini et al. do, so that 0.1 % FPR is several non-members).
3. The same targets attacked by the shadow-model attack (Shokri), BTTA and CBTTA (true-label
   confidence partition) fitted on 16 shadows, and by a global threshold on the target's
   logit confidence (no shadows), next to LiRA with 16 shadows.

The machine's load average is printed: other processes sharing the cores slow every row.

    python benchmarks/bench_shadow.py            # full run (several minutes on 2 cores)
    python benchmarks/bench_shadow.py --quick    # smaller, for a smoke run
"""

import argparse
import logging
import os
import time
import warnings

import numpy as np
from joblib import Parallel, delayed, parallel_config
from sklearn.datasets import load_digits
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.neural_network import MLPClassifier
from threadpoolctl import threadpool_limits

from sklearn_mace.attacks import (
    BTTAttack,
    LiRAAttack,
    ShadowModelAttack,
    ShadowModels,
    logit_confidence,
)
from sklearn_mace.metrics import tpr_at_fpr
from sklearn_mace.queries import ClassifierQuery


def _noop(i):
    return i


def _load():
    avg = os.getloadavg()
    return f"load average {avg[0]:.1f} / {avg[1]:.1f} / {avg[2]:.1f} (1 / 5 / 15 min)"


def _timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def _per_task_overhead(n_tasks=64, n_jobs=None):
    elapsed, _ = _timed(lambda: Parallel(n_jobs=n_jobs)(delayed(_noop)(i) for i in range(n_tasks)))
    return 1e3 * elapsed / n_tasks


def timing_table(X, y, n_models, repeats):
    template = HistGradientBoostingClassifier(max_iter=50)

    def shadows(n_jobs=None):
        model = ShadowModels(
            template, n_reference_models=n_models, split="balanced", n_jobs=n_jobs, random_state=0
        )
        return model.fit(X, y).queries_

    from dask.distributed import Client, LocalCluster

    start = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    client = Client(cluster)
    cluster_start = time.perf_counter() - start

    def serial():
        with threadpool_limits(1):
            return shadows()

    def on_dask():
        with parallel_config(backend="dask"):
            return shadows()

    runs = {
        "serial (n_jobs=1)": serial,
        "n_jobs=2 (loky)": lambda: shadows(n_jobs=2),
        "Dask, 2 workers x 1 thread": on_dask,
    }
    times = {name: [] for name in runs}
    cold = {}
    loads = [os.getloadavg()[0]]
    try:
        reference = None
        for repeat in range(repeats + 1):  # the first round starts the workers: "cold"
            for name, run in runs.items():
                elapsed, queries = _timed(run)
                reference = queries if reference is None else reference
                assert np.array_equal(queries, reference), f"{name} changed the shadows"
                if repeat:
                    times[name].append(elapsed)
                else:
                    cold[name] = elapsed
                loads.append(os.getloadavg()[0])
        overhead = {
            "serial (n_jobs=1)": _per_task_overhead(),
            "n_jobs=2 (loky)": _per_task_overhead(n_jobs=2),
        }
        with parallel_config(backend="dask"):
            overhead["Dask, 2 workers x 1 thread"] = _per_task_overhead()
    finally:
        client.close()
        cluster.close()

    base = float(np.median(times["serial (n_jobs=1)"]))
    print(
        f"\n## {n_models} shadow models, HistGradientBoostingClassifier(max_iter=50), "
        f"digits ({len(y)} records, each shadow on a random half)"
    )
    print(
        f"(median of {repeats} interleaved rounds after a cold one; 1-min load average "
        f"during the runs {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores; "
        f"Dask LocalCluster start {cluster_start:.1f} s, in no row)\n"
    )
    print(
        "| run | cold (s) | warm, median (s) | warm, min (s) | speed-up vs serial "
        "| per shadow (s) | no-op task (ms) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in runs:
        median = float(np.median(times[name]))
        print(
            f"| {name} | {cold[name]:.1f} | {median:.1f} | {min(times[name]):.1f} | "
            f"{base / median:.2f}x | {median / n_models:.2f} | "
            f"{overhead[name]:.2f} |"
        )
    dask_extra = np.median(times["Dask, 2 workers x 1 thread"]) - np.median(
        times["n_jobs=2 (loky)"]
    )
    print(
        f"\nDask minus loky (warm medians), per shadow task: {dask_extra / n_models:+.3f} s; "
        f"ideal 2-core time {base / 2:.1f} s."
    )


def _targets(X, y, n_targets, template):
    records = np.column_stack([X, y])
    out = []
    for seed in range(n_targets):
        member = np.random.default_rng(1000 + seed).random(len(y)) < 0.5
        model = MLPClassifier(**template.get_params()).set_params(random_state=seed)
        out.append((model.fit(X[member], y[member]), member))
    return records, out


def _pooled(scores_and_members, fprs=(0.001, 0.01)):
    scores = np.concatenate([s for s, _ in scores_and_members])
    member = np.concatenate([m for _, m in scores_and_members])
    return [tpr_at_fpr(member, scores, fpr=f) for f in fprs] + [roc_auc_score(member, scores)]


def lira_tables(X, y, n_targets, shadow_counts, n_jobs):
    template = MLPClassifier(hidden_layer_sizes=(64,), max_iter=300)
    records, targets = _targets(X, y, n_targets, template)
    gaps = [(t.score(X[m], y[m]), t.score(X[~m], y[~m])) for t, m in targets]
    n_non = sum(int((~m).sum()) for _, m in targets)
    print(
        f"\n## LiRA on digits: {n_targets} MLP(64) targets, train / test accuracy "
        f"{np.mean([g[0] for g in gaps]):.3f} / {np.mean([g[1] for g in gaps]):.3f}; "
        f"{n_non} non-members pooled, so 0.1 % FPR = {n_non // 1000} false positives"
    )
    print(f"({_load()}; shadows trained with n_jobs={n_jobs})\n")
    variants = {
        "online": {},
        "online, fixed variance": {"fix_variance": True},
        "offline, fixed variance": {"online": False, "fix_variance": True},
    }
    print("| shadows | variant | TPR @ 0.1 % FPR | TPR @ 1 % FPR | AUC | fit (s) |")
    print("|---|---|---|---|---|---|")
    first_target, first_member = targets[0]
    for n_models in shadow_counts:
        for name, params in variants.items():
            attack = LiRAAttack(
                first_target,
                template,
                n_reference_models=n_models,
                n_jobs=n_jobs,
                random_state=n_models,
                **params,
            )
            elapsed, _ = _timed(lambda: attack.fit(records, first_member))  # noqa: B023
            scored = []
            for target, member in targets:
                attack.target = target  # same shadows, another target
                scored.append((attack.score_samples(records), member))
            tpr_001, tpr_01, auc = _pooled(scored)
            print(
                f"| {n_models} | {name} | {tpr_001:.3f} | {tpr_01:.3f} | {auc:.3f} | "
                f"{elapsed:.1f} |"
            )
    return template, records, targets


def baseline_table(X, y, template, records, targets, n_models, n_jobs):
    print(f"\n## Other attacks on the same targets ({n_models} shadows where they use any)\n")
    rows = {}
    scored = [(logit_confidence(t, records), m) for t, m in targets]
    rows["global threshold on the logit confidence (no shadows)"] = _pooled(scored)

    sma_shadows = ShadowModels(
        template,
        n_reference_models=n_models,
        split="balanced",
        outputs=("true_label", "proba"),
        n_jobs=n_jobs,
        random_state=1,
    ).fit(X, y)
    sma = ShadowModelAttack(random_state=0).fit(sma_shadows.queries_, sma_shadows.membership_)
    btta_shadows = ShadowModels(
        template, n_reference_models=n_models, split="balanced", n_jobs=n_jobs, random_state=1
    ).fit(X, y)
    btta = BTTAttack().fit(btta_shadows.queries_, btta_shadows.membership_)
    cbtta = BTTAttack(partition="true_label_confidence").fit(
        btta_shadows.queries_, btta_shadows.membership_
    )
    for name, attack, outputs in (
        ("shadow-model attack (Shokri, MLP per class)", sma, ("true_label", "proba")),
        ("BTTA (generalization gap)", btta, None),
        ("CBTTA (true-label confidence, 10 bins)", cbtta, None),
    ):
        scored = []
        for target, member in targets:
            query = (
                ClassifierQuery(target)
                if outputs is None
                else ClassifierQuery(target, outputs=outputs)
            )
            scored.append((attack.decision_function(query.fit_transform(records)), member))
        rows[name] = _pooled(scored)

    attack = LiRAAttack(
        targets[0][0],
        template,
        n_reference_models=n_models,
        n_jobs=n_jobs,
        fix_variance=True,
        random_state=n_models,
    )
    attack.fit(records, targets[0][1])
    scored = []
    for target, member in targets:
        attack.target = target
        scored.append((attack.score_samples(records), member))
    rows["LiRA online, fixed variance"] = _pooled(scored)

    print("| attack | TPR @ 0.1 % FPR | TPR @ 1 % FPR | AUC |")
    print("|---|---|---|---|")
    for name, (tpr_001, tpr_01, auc) in rows.items():
        print(f"| {name} | {tpr_001:.3f} | {tpr_01:.3f} | {auc:.3f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer shadows and targets")
    parser.add_argument("--targets", type=int, default=8, help="MLP targets for LiRA")
    parser.add_argument("--skip-timing", action="store_true", help="only the LiRA tables")
    parser.add_argument("--skip-lira", action="store_true", help="only the timing table")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    # worker processes do not inherit the filter; ConvergenceWarning is a UserWarning
    os.environ.setdefault("PYTHONWARNINGS", "ignore::UserWarning")
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    if not args.skip_timing:
        timing_table(X, y, n_models=4 if args.quick else 16, repeats=1 if args.quick else 3)
    if args.skip_lira:
        return
    counts = (4, 8) if args.quick else (4, 8, 16, 32)
    n_targets = 2 if args.quick else args.targets
    template, records, targets = lira_tables(X, y, n_targets, counts, n_jobs=2)
    baseline_table(X, y, template, records, targets, 4 if args.quick else 16, n_jobs=2)


if __name__ == "__main__":
    main()
