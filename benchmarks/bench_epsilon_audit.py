"""Tightness and cost of the ε auditors on mechanisms whose ε is known.

Table 1 — randomized response (RR) at ε ∈ {0.5, 1, 2}: each record reports its membership
bit, kept with probability e^ε/(1 + e^ε), so the mechanism is exactly ε-DP and no test does
better. For n records per class the scores are the 0/1 reports and we print the certified
95 % lower bound (mean over ``--seeds`` runs) and its ratio to the true ε for

* ``audit_epsilon(threshold="split")`` — half of each class chooses the threshold;
* ``audit_epsilon(threshold="bonferroni")`` — every threshold, FPR/FNR bounds at α/(2n);
* ``one_run_epsilon`` — m = n canaries, each included with probability ½, every canary
  guessed (top half "in", bottom half "out").

Table 2 — cost on continuous scores (Gaussian shift, μ = 1, every score distinct, so
Bonferroni tries 2n thresholds): time of each auditor against the baseline every report
already pays, ``tpr_at_fpr`` (one ``roc_curve``) on the same scores, measured in the same
process; the ratio is auditor time / baseline time. Times are the best of ``--repeats``
runs (the machine may be shared).

Run: ``python benchmarks/bench_epsilon_audit.py`` (``--quick`` for a smoke run).
"""

import argparse
import time

import numpy as np
from scipy.special import expit

from sklearn_mace.metrics import audit_epsilon, one_run_epsilon, tpr_at_fpr


def randomized_response(epsilon, n, rng):
    keep = expit(epsilon)
    return (rng.random(n) < keep).astype(float), (rng.random(n) < 1 - keep).astype(float)


def rr_canaries(epsilon, m, rng):
    included = rng.random(m) < 0.5
    kept = rng.random(m) < expit(epsilon)
    return np.where(kept, included, ~included).astype(float), included


def best_time(repeats, fn, *args, **kwargs):
    best, result = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result


def tightness_table(sizes, epsilons, seeds):
    print(
        "Table 1 - randomized response: certified 95 % lower bound on ε (mean over "
        f"{seeds} seeds) and its ratio to the true ε"
    )
    header = (
        f"{'n/class':>8} {'ε':>4} | {'split':>6} {'ratio':>5} | {'bonf.':>6} {'ratio':>5}"
        f" | {'1-run':>6} {'ratio':>5} | {'t split':>8} {'t bonf.':>8} {'t 1-run':>8}"
    )
    print(header)
    print("-" * len(header))
    for n in sizes:
        for eps in epsilons:
            bounds = {"split": [], "bonferroni": [], "one-run": []}
            times = {"split": np.inf, "bonferroni": np.inf, "one-run": np.inf}
            for seed in range(seeds):
                rng = np.random.default_rng(seed)
                members, nonmembers = randomized_response(eps, n, rng)
                for strategy in ("split", "bonferroni"):
                    t, audit = best_time(
                        1, audit_epsilon, members, nonmembers, threshold=strategy, random_state=seed
                    )
                    bounds[strategy].append(audit.epsilon_lower_bound)
                    times[strategy] = min(times[strategy], t)
                reports, included = rr_canaries(eps, n, rng)
                t, audit = best_time(
                    1,
                    one_run_epsilon,
                    reports,
                    included,
                    n_positive_guesses=n // 2,
                    n_negative_guesses=n - n // 2,
                    random_state=seed,
                )
                bounds["one-run"].append(audit.epsilon_lower_bound)
                times["one-run"] = min(times["one-run"], t)
            cells = " | ".join(
                f"{np.mean(bounds[k]):6.3f} {np.mean(bounds[k]) / eps:5.2f}"
                for k in ("split", "bonferroni", "one-run")
            )
            ms = " ".join(f"{1e3 * times[k]:6.1f}ms" for k in ("split", "bonferroni", "one-run"))
            print(f"{n:>8} {eps:>4} | {cells} | {ms}")
    print()


def cost_table(sizes, repeats):
    print(
        "Table 2 - cost on continuous scores (N(1, 1) vs N(0, 1), all scores distinct); "
        "baseline: tpr_at_fpr on the same scores"
    )
    header = (
        f"{'n/class':>8} | {'baseline':>9} | {'split':>9} {'ratio':>6} | "
        f"{'bonf.':>9} {'ratio':>6} | {'ε split':>7} {'ε bonf.':>7}"
    )
    print(header)
    print("-" * len(header))
    for n in sizes:
        rng = np.random.default_rng(0)
        members, nonmembers = rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n)
        labels = np.r_[np.ones(n), np.zeros(n)]
        scores = np.r_[members, nonmembers]
        base, _ = best_time(repeats, tpr_at_fpr, labels, scores, fpr=0.01)
        t_split, split = best_time(repeats, audit_epsilon, members, nonmembers, random_state=0)
        t_bonf, bonf = best_time(
            repeats, audit_epsilon, members, nonmembers, threshold="bonferroni"
        )
        print(
            f"{n:>8} | {1e3 * base:7.1f}ms | {1e3 * t_split:7.1f}ms {t_split / base:6.1f} | "
            f"{1e3 * t_bonf:7.1f}ms {t_bonf / base:6.1f} | {split.epsilon_lower_bound:7.3f} "
            f"{bonf.epsilon_lower_bound:7.3f}"
        )
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 2 seeds")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    seeds = 2 if args.quick else args.seeds
    tightness_table(sizes, [0.5, 1.0, 2.0], seeds)
    cost_table(sizes, args.repeats)


if __name__ == "__main__":
    main()
