"""The certified advantage bound of KDEAdvantageEstimator: bias, tightness and cost.

Three tables (run all, or one with ``--null``, ``--rr`` or ``--cost``):

* ``--null`` — U_N when nothing leaks: members and non-members from one standard Gaussian in
  d dimensions, n per class, prior ½ (truth 0). The default estimator (normal scores, shared
  cross-validated bandwidth) beside MACE's original per-class Scott KDEs on the raw query,
  with the certified bound's claim rate (bound above 0) over the seeds.
* ``--rr`` — randomized response at ε ∈ {0.5, 1, 2} (a member reports 1 with probability
  e^ε/(1+e^ε); optimal advantage tanh(ε/2), so the certified ε can reach ε) at n = 1e3, 1e4,
  1e5 per class: the certified ε and its ratio to the true ε, and the cost of the whole fit
  relative to W_N alone (fitting the two histograms and summing, MACE Thm 5), timed in
  the same process.
* ``--cost`` — the KDE path on a Gaussian shift (truth 0.383) in 1, 8 and 16 dimensions at
  N = 2 000 and 10 000: the whole default fit (normal scores, the cross-fit that selects the
  bandwidth and certifies, the forward chain of the exact p-value, U_N) relative to MACE's U_N
  alone (per-class Scott KDEs and U_N, no cross-fit), both timed in this process, best of
  ``--repeats`` (the target: at most 2×); ``--dims`` picks the dimensions, ``--cpu-time``
  times CPU seconds (load-independent with one thread) instead of wall time.
* ``--kernel`` — the kernel table (``density._grid.grouped_log_kernel_sums``, all 11
  bandwidth candidates at once) per pair and candidate, by block size, against one pass of
  the exact float64 kernel that U_N's Monte Carlo uses (``gaussian_log_kernel_sum``).

Timings depend on the machine's load (printed) and torch's threads (``--threads``, default 1:
on a shared 2-core machine two threads spin against other processes). Ratios are taken in
one process, so they stand where absolute times do not.

Run: ``python benchmarks/bench_certified.py`` (``--quick`` for a smoke run).
"""

import argparse
import os
import time

import numpy as np
import torch
from scipy.stats import norm

from sklearn_mace import BayesOptimalMIA, KDEAdvantageEstimator
from sklearn_mace.estimation import histogram_advantage, kde_advantage

CLOCK = time.perf_counter  # --cpu-time: time.process_time (this process's CPU seconds)


def timed(fn, *args):
    start = CLOCK()
    out = fn(*args)
    return out, CLOCK() - start


def best_of(repeats, fn, *args):
    """The result and the smallest wall time of ``repeats`` calls (load only adds time)."""
    runs = [timed(fn, *args) for _ in range(repeats)]
    return runs[0][0], min(t for _, t in runs)


def null_table(dims, sizes, seeds):
    print("U_N on null data (truth 0), mean over seeds; 'claims' = runs whose certified")
    print("bound exceeds 0 (at 95 %).")
    print(
        f"{'d':>3} {'n/class':>8} {'U_N default':>12} {'U_N MACE Scott':>15} "
        f"{'bound':>7} {'claims':>7} {'fit s':>7}"
    )
    for d in dims:
        for n in sizes:
            default, scott, bounds, claims, seconds = [], [], [], 0, []
            for seed in range(seeds):
                rng = np.random.default_rng(seed)
                Q, m = rng.normal(size=(2 * n, d)), np.r_[np.ones(n, int), np.zeros(n, int)]
                est, t = timed(KDEAdvantageEstimator(random_state=seed).fit, Q, m)
                seconds.append(t)
                default.append(est.advantage_estimate_)
                bounds.append(est.advantage_lower_bound_)
                claims += est.advantage_lower_bound_ > 0
                mace = BayesOptimalMIA(bandwidth="scott").fit(Q, m)
                scott.append(
                    kde_advantage(
                        mace.member_density_, mace.nonmember_density_, 0.5, random_state=seed
                    )[0]
                )
            print(
                f"{d:>3} {n:>8} {np.mean(default):>12.3f} {np.mean(scott):>15.3f} "
                f"{np.mean(bounds):>7.3f} {claims:>4}/{seeds:<2} {np.mean(seconds):>7.2f}",
                flush=True,
            )


def w_n_alone(Q, m):
    """MACE's W_N only: two histograms and the sum of Thm 5."""
    mia = BayesOptimalMIA(density="histogram", bins="discrete").fit(Q, m)
    return histogram_advantage(mia.member_density_, mia.nonmember_density_, 0.5)


def u_n_alone(Q, m):
    """MACE's U_N only: per-class Scott KDEs and Thm 6's integral."""
    mia = BayesOptimalMIA(bandwidth="scott").fit(Q, m)
    return kde_advantage(mia.member_density_, mia.nonmember_density_, 0.5, random_state=0)[0]


def randomized_response(rng, n, eps):
    m = np.r_[np.ones(n, int), np.zeros(n, int)]
    keep = rng.random(2 * n) < np.exp(eps) / (1 + np.exp(eps))
    return np.where(keep, m, 1 - m).astype(float)[:, None], m


def rr_table(sizes, epsilons, seeds):
    print("Randomized response: certified ε (95 %) vs the true ε; cost vs W_N alone.")
    print(
        f"{'n/class':>8} {'ε':>5} {'certified ε':>12} {'ratio':>6} {'fit s':>8} "
        f"{'W_N s':>8} {'cost ratio':>10}"
    )
    for n in sizes:
        for eps in epsilons:
            certified, fit_s, wn_s = [], [], []
            for seed in range(seeds):
                Q, m = randomized_response(np.random.default_rng(seed), n, eps)
                est, t = timed(KDEAdvantageEstimator(discrete=True, random_state=seed).fit, Q, m)
                certified.append(est.epsilon_lower_bound_)
                fit_s.append(t)

                _, t = timed(w_n_alone, Q, m)
                wn_s.append(t)
            ratio = np.mean(fit_s) / np.mean(wn_s)
            print(
                f"{n:>8} {eps:>5} {np.mean(certified):>12.3f} "
                f"{np.mean(certified) / eps:>6.2f} {np.mean(fit_s):>8.3f} "
                f"{np.mean(wn_s):>8.3f} {ratio:>9.1f}x",
                flush=True,
            )


def cost_table(cases, repeats):
    truth = 2 * norm.cdf(0.5) - 1
    print(f"Gaussian shift (truth {truth:.3f}): the whole default fit vs MACE's U_N alone.")
    print(
        f"{'d':>3} {'N':>7} {'bound':>7} {'p-value':>9} {'U_N':>7} {'fit s':>8} "
        f"{'U_N alone':>10} {'MACE U_N':>9} {'cost ratio':>10}"
    )
    for d, n_total in cases:
        rng = np.random.default_rng(0)
        n = n_total // 2
        members = rng.normal(size=(n, d))
        members[:, 0] += 1
        Q, m = np.r_[members, rng.normal(size=(n, d))], np.r_[np.ones(n, int), np.zeros(n, int)]
        estimator = KDEAdvantageEstimator(random_state=0, device="cpu")
        # interleaved, so that both see the same spells of load; the best of each
        fits, alones = [], []
        for _ in range(repeats):
            fits.append(timed(estimator.fit, Q, m))
            alones.append(timed(u_n_alone, Q, m))
        est, t_fit = fits[0][0], min(t for _, t in fits)
        u_n, t_alone = alones[0][0], min(t for _, t in alones)
        print(
            f"{d:>3} {n_total:>7} {est.advantage_lower_bound_:>7.3f} {est.p_value_:>9.1e} "
            f"{est.advantage_estimate_:>7.3f} {t_fit:>8.3f} {t_alone:>10.3f} {u_n:>9.3f} "
            f"{t_fit / t_alone:>9.2f}x",
            flush=True,
        )


def kernel_table(repeats):
    from sklearn_mace.density import _grid
    from sklearn_mace.density._kde import gaussian_log_kernel_sum

    print("Kernel table: ns per (pair, candidate); exact float64 kernel: ns per pair.")
    print(f"{'d':>3} {'n':>6} {'block MiB':>10} {'table ns':>9} {'exact ns':>9}")
    rng = np.random.default_rng(0)
    default = _grid.TABLE_BLOCK_BYTES
    for d in (1, 8, 16):
        n = 4000
        Z, groups = rng.normal(size=(n, d)), rng.integers(0, 10, n)
        h = np.geomspace(1 / 8, 4, 11) * n ** (-1 / (d + 4))
        _, t_exact = best_of(repeats, gaussian_log_kernel_sum, Z / h[6], Z / h[6])
        for block in (0.5, 2, 8):
            _grid.TABLE_BLOCK_BYTES = int(block * 2**20)
            _, t = best_of(repeats, _grid.grouped_log_kernel_sums, Z, Z, groups, 10, h)
            print(
                f"{d:>3} {n:>6} {block:>10} {t / (n * n * len(h)) * 1e9:>9.2f} "
                f"{t_exact / (n * n) * 1e9:>9.2f}",
                flush=True,
            )
    _grid.TABLE_BLOCK_BYTES = default


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--null", action="store_true")
    parser.add_argument("--rr", action="store_true")
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--kernel", action="store_true")
    parser.add_argument("--quick", action="store_true", help="small sizes, one seed")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--repeats", type=int, default=3, help="timings: best of this many")
    parser.add_argument("--dims", type=int, nargs="+", default=[1, 8, 16], help="--cost: d")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time this process's CPU seconds instead of wall time (with one thread, what a "
        "busy machine does not inflate)",
    )
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.cpu_time else time.perf_counter
    torch.set_num_threads(args.threads)
    clock = "CPU" if args.cpu_time else "wall"
    print(
        f"torch threads: {torch.get_num_threads()}, load average: {os.getloadavg()[0]:.1f}, "
        f"{clock} time"
    )
    everything = not (args.null or args.rr or args.cost or args.kernel)
    if args.null or everything:
        if args.quick:
            null_table([1, 8], [200], 1)
        else:
            null_table([1, 2, 4, 8, 16], [200, 1000, 5000], 3)
        print()
    if args.rr or everything:
        rr_table(
            [1000] if args.quick else [1000, 10_000, 100_000],
            [0.5, 1.0, 2.0],
            1 if args.quick else 3,
        )
        print()
    if args.cost or everything:
        cases = [(d, n) for d in args.dims for n in (2000, 10_000)]
        cost_table(cases[:1] if args.quick else cases, 1 if args.quick else args.repeats)
        print()
    if args.kernel or everything:
        kernel_table(1 if args.quick else args.repeats)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
