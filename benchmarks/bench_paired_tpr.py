"""Level and power of the paired TPR-at-fixed-FPR tests, against DeLong's AUC test.

Issue #27: the exact test (order-statistic thresholds, McNemar on the members) is valid but
nearly powerless. The default (``method="auto"``) is now a paired bootstrap. This script
draws the pairs of ``tests/metrics/test_paired.py`` (two attacks' scores of the same records:
members shifted by ``mu``, the attacks' noise correlated ``rho``) and prints, per design,
how many runs each test rejects at 5 %:

* null pairs (both attacks shifted by 1, so equally strong at every FPR): the rejection
  rate is the level, and ``binom.ppf(0.999, runs, 0.05)`` is the most a valid 5 % test
  reaches but with probability 1/1000;
* the planted case of the issue: TPR 0.40 against 0.30 at 10 % FPR (binormal shifts
  ``Φ⁻¹(0.9) + Φ⁻¹(TPR)``), 1 000 members and 1 000 non-members.

Run ``python benchmarks/bench_paired_tpr.py --runs 1000`` (about 0.3 s per bootstrap test
on one core); ``--runs 50`` for a quick look.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom, norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sklearn_mace.metrics import delong_test, tpr_at_fpr_test  # noqa: E402
from tests.metrics.test_paired import paired_scores  # noqa: E402

PLANTED = (norm.isf(0.1) + norm.ppf(0.4), norm.isf(0.1) + norm.ppf(0.3))


def _designs(runs):
    yield "null, normal", 1000, (1.0, 1.0), 0.5, "normal", 0.1, runs
    yield "null, normal", 1000, (1.0, 1.0), 0.5, "normal", 0.01, runs
    yield "null, cauchy", 500, (1.0, 1.0), 0.5, "cauchy", 0.1, runs
    yield "null, lognormal", 500, (1.0, 1.0), 0.5, "lognormal", 0.1, runs
    yield "null, ties (6 values)", 500, (1.0, 1.0), 0.5, "ties", 0.1, runs
    yield "planted 0.40 vs 0.30, rho 0.5", 1000, PLANTED, 0.5, "normal", 0.1, min(runs, 200)
    yield "planted 0.40 vs 0.30, rho 0", 1000, PLANTED, 0.0, "normal", 0.1, min(runs, 200)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="null pairs per design")
    parser.add_argument("--exact-runs", type=int, default=200, help="runs of the exact test")
    args = parser.parse_args()
    rng = np.random.default_rng(2027)
    header = (
        f"{'design':32} {'n1+n0':>11} {'fpr':>5} {'runs':>5} {'bootstrap':>10} "
        f"{'exact':>9} {'DeLong':>8} {'s/test':>7}"
    )
    print(header)
    print("-" * len(header))
    for name, n, mu, rho, noise, fpr, runs in _designs(args.runs):
        boot = exact = delong = 0
        exact_runs = min(runs, args.exact_runs)
        spent = 0.0
        for run in range(runs):
            pair = paired_scores(rng, n, n, *mu, rho=rho, noise=noise)
            start = time.perf_counter()
            boot += tpr_at_fpr_test(*pair, fpr=fpr).p_value <= 0.05
            spent += time.perf_counter() - start
            if run < exact_runs:
                exact += tpr_at_fpr_test(*pair, fpr=fpr, method="exact").p_value <= 0.05
            delong += delong_test(*pair).p_value <= 0.05
        print(
            f"{name:32} {f'{n}+{n}':>11} {fpr:>5g} {runs:>5} {f'{boot}/{runs}':>10} "
            f"{f'{exact}/{exact_runs}':>9} {f'{delong}/{runs}':>8} {spent / runs:>7.2f}",
            flush=True,
        )
    print(
        f"\nA valid 5 % test exceeds binom.ppf(0.999, runs, 0.05) = "
        f"{int(binom.ppf(0.999, args.runs, 0.05))} rejections of {args.runs} null pairs "
        "with probability 1/1000. 'bootstrap' is method='auto' (the paired bootstrap at "
        "these sizes); DeLong tests the AUC, not the TPR."
    )


if __name__ == "__main__":
    main()
