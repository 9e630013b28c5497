"""Time to estimate U_N (MACE Thm 6): the library's U_N vs scipy and scikit-learn.

Data: Experiment 2 at p = 0.5, members N(δ·e₁, I), non-members N(0, I), δ = 1
(truth 2Φ(1/2) − 1 = 0.3829). Each class gets its own Scott bandwidth matrix (scipy's
default), so all three implementations estimate the same U_N — MACE's original estimator,
``BayesOptimalMIA(bandwidth="scott")`` + ``kde_advantage``; ``KDEAdvantageEstimator``'s
default adds normal scores, a cross-validated bandwidth and the certified bound, whose
cost ``benchmarks/bench_certified.py --cost`` measures:

* 1-D: ``∫ |p r̂ − (1−p) q̂|`` on a grid. Ours bins the data and convolves by FFT
  (16 nodes per kernel SD). The baselines evaluate the exact KDEs at the nodes of a grid
  with 4 nodes per SD (a smooth integrand, so the Riemann sum is already accurate to
  ~1e-5; a 4× coarser grid than ours, in the baselines' favour).
* 8-D: Monte Carlo ``U_N = E_{x∼pooled} |f̂(x)|`` (Alg. 1) with M points drawn from the
  pooled KDE. The baselines evaluate the exact log densities at the *same* M points, so
  the three estimates agree to rounding.

scikit-learn's ``KernelDensity`` only has a scalar bandwidth; it is given the data
whitened by each class's bandwidth matrix (bandwidth 1) and the log-determinant is added
back, which is the same estimator.

A baseline whose predicted time exceeds ``--cap`` seconds is not run: its time is
extrapolated from its last measured size by its cost model (N·G kernel evaluations in 1-D,
G grid nodes; N·M in 8-D), marked "extrap.", and its estimate is shown as nan. Our time is
the best of ``--repeats`` runs, a baseline's the best of 2 when under 10 s, else 1 run:
the machine may be shared, which inflates single runs.

A second table (``--kernel``) backs two choices inside ``GaussianKDE``: pairwise blocks of
4 MiB on CPU (baseline: the 64 MiB default of ``row_chunks``) and whitening by one matrix
product with ``L⁻¹`` (baseline: a triangular solve per call).

Run: ``python benchmarks/bench_advantage.py`` (add ``--quick`` for a smoke run,
``--kernel`` for the second table only).
"""

import argparse
import os
import time
from types import SimpleNamespace

import numpy as np
import torch
from scipy.linalg import cholesky, solve_triangular
from scipy.stats import gaussian_kde, norm
from sklearn.neighbors import KernelDensity

from sklearn_mace import BayesOptimalMIA
from sklearn_mace.density._grid import kde_grid_axes
from sklearn_mace.density._kde import gaussian_log_kernel_sum
from sklearn_mace.estimation import kde_advantage
from sklearn_mace.utils._chunks import DEFAULT_CHUNK_BYTES

PRIOR = 0.5


def experiment_2(n, d, rng):
    n1 = int(PRIOR * n)
    members = rng.normal(size=(n1, d))
    members[:, 0] += 1.0
    Q = np.r_[members, rng.normal(size=(n - n1, d))]
    return Q, np.r_[np.ones(n1, int), np.zeros(n - n1, int)]


def best_time(fn, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


# --- baselines ----------------------------------------------------------------------------


def scipy_log_densities(X, Y, points):
    r, q = gaussian_kde(X.T), gaussian_kde(Y.T)
    return r.logpdf(points.T), q.logpdf(points.T)


def sklearn_log_densities(X, Y, points):
    out = []
    for data in (X, Y):
        H = np.atleast_2d(gaussian_kde(data.T).covariance)  # Scott, as scipy and ours
        L = np.linalg.cholesky(H)
        kde = KernelDensity(bandwidth=1.0).fit(np.linalg.solve(L, data.T).T)
        out.append(kde.score_samples(np.linalg.solve(L, points.T).T) - np.log(np.diag(L)).sum())
    return out


def grid_u_n(log_densities, X, Y):
    """U_N on a grid with 4 nodes per kernel SD, from exact log densities at the nodes."""
    H = [np.atleast_2d(gaussian_kde(Z.T).covariance) for Z in (X, Y)]
    axes = kde_grid_axes([X, Y], H, points_per_bandwidth=4)
    nodes = axes[0][:, None]
    log_r, log_q = log_densities(X, Y, nodes)
    cell = axes[0][1] - axes[0][0]
    u_n = np.abs(PRIOR * np.exp(log_r) - (1 - PRIOR) * np.exp(log_q)).sum() * cell
    return float(u_n), len(nodes)


def mace_u_n(Q, m, n_mc=10_000, random_state=None):
    """MACE's U_N: per-class Scott KDEs, grid (d <= 2) or Monte Carlo integration."""
    mia = BayesOptimalMIA(bandwidth="scott", device="cpu").fit(Q, m)
    advantage, method, _ = kde_advantage(
        mia.member_density_,
        mia.nonmember_density_,
        PRIOR,
        n_mc_samples=n_mc,
        random_state=random_state,
    )
    return SimpleNamespace(advantage_estimate_=advantage, integration_=method, classifier_=mia)


def same_mc_points(estimator, n_mc, random_state):
    """The M points ``mace_u_n`` drew (same generator, same order)."""
    rng = np.random.RandomState(random_state)
    r = estimator.classifier_.member_density_
    q = estimator.classifier_.nonmember_density_
    n_r = int(np.clip(round(n_mc * PRIOR), 1, n_mc - 1))
    return r.sample(n_r, random_state=rng), q.sample(n_mc - n_r, random_state=rng)


def mc_u_n(log_densities, X, Y, samples):
    parts = []
    for x in samples:
        log_r, log_q = log_densities(X, Y, x)
        parts.append(np.abs(np.tanh((log_r - log_q + np.log(PRIOR / (1 - PRIOR))) / 2)))
    return PRIOR * parts[0].mean() + (1 - PRIOR) * parts[1].mean()


# --- GaussianKDE internals ------------------------------------------------------------------


def kernel_table(repeats):
    """Block size of the pairwise log-kernel sum, and whitening by matmul vs solve."""
    rng = np.random.default_rng(0)
    print(f"{'what':<34} {'d':>3} {'ours s':>8} {'baseline s':>11} {'ratio':>6}")

    def row(what, d, ours_fn, base_fn):
        ours, _ = best_time(ours_fn, repeats)
        base, _ = best_time(base_fn, repeats)
        print(f"{what:<34} {d:>3} {ours:8.3f} {base:11.3f} {base / ours:6.2f}")

    # whitening first: torch's idle OpenMP threads would slow the BLAS product after it
    for d in (1, 8, 64):
        X = rng.normal(size=(1_000_000, d))
        L = cholesky(np.atleast_2d(np.cov(X[:1000], rowvar=False)) * 0.1, lower=True)
        L_inv, Xc = solve_triangular(L, np.eye(d), lower=True), X - X.mean(axis=0)
        row(
            "whiten 1e6 rows, matmul vs solve",
            d,
            lambda Xc=Xc, L_inv=L_inv: Xc @ L_inv.T,
            lambda Xc=Xc, L=L: solve_triangular(L, Xc.T, lower=True).T,
        )

    for d in (1, 8, 64):
        Zq, Zd = rng.normal(size=(5_000, d)), rng.normal(size=(20_000, d))
        row(
            "kernel sum 5e3x2e4, 4 vs 64 MiB",
            d,
            lambda Zq=Zq, Zd=Zd: gaussian_log_kernel_sum(Zq, Zd, device="cpu"),
            lambda Zq=Zq, Zd=Zd: gaussian_log_kernel_sum(
                Zq, Zd, device="cpu", max_chunk_bytes=DEFAULT_CHUNK_BYTES
            ),
        )


# --- the table ------------------------------------------------------------------------------


def run_baseline(name, fn, cost, cap, measured):
    """Time ``fn`` (best of 2 when cheap), or extrapolate when its cost would exceed ``cap``.

    ``measured[name]`` keeps ``(seconds per cost unit, N)`` of the last real measurement;
    a run predicted to take longer than ``cap`` is not run but extrapolated from it.
    """
    per_unit = measured.get(name)
    if per_unit is not None and per_unit[0] * cost > cap:
        return per_unit[0] * cost, None, f"extrap. from N={per_unit[1]}"
    repeats = 2 if per_unit is not None and per_unit[0] * cost < 10 else 1
    seconds, value = best_time(fn, repeats)
    return seconds, value, "measured"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--cap", type=float, default=60.0, help="max seconds per baseline run")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of our timing (best)")
    parser.add_argument("--mc", type=int, default=10_000, help="Monte Carlo points (8-D)")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads (default: torch's choice); on an oversubscribed "
        "machine 1 thread avoids OpenMP threads waiting",
    )
    parser.add_argument(
        "--kernel", action="store_true", help="only the GaussianKDE block-size / whitening table"
    )
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.kernel:
        print(f"torch threads: {torch.get_num_threads()}, CPUs: {os.cpu_count()}")
        kernel_table(args.repeats)
        return
    sizes_1d = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    sizes_8d = [2_000] if args.quick else [10_000, 30_000]
    n_mc = 2_000 if args.quick else args.mc
    print(
        f"torch threads: {torch.get_num_threads()}, CPUs: {os.cpu_count()}, p = {PRIOR}, "
        f"truth 2Φ(1/2) − 1 = {2 * norm.cdf(0.5) - 1:.4f}"
    )
    header = (
        f"{'d':>2} {'N':>9} {'method':<22} {'seconds':>9} {'ratio':>8} "
        f"{'U_N':>10} {'|Δ| vs ours':>12}  note"
    )
    print(header)
    print("-" * len(header))
    rng = np.random.default_rng(0)

    measured = {}
    for n in sizes_1d:
        Q, m = experiment_2(n, 1, rng)
        ours_s, est = best_time(lambda Q=Q, m=m: mace_u_n(Q, m), args.repeats)
        print(
            f"{1:>2} {n:>9} {'ours (bin+FFT grid)':<22} {ours_s:9.3f} {1.0:8.1f} "
            f"{est.advantage_estimate_:10.6f} {'':>12}  {est.integration_}"
        )
        X, Y = Q[m == 1], Q[m == 0]
        H = [np.atleast_2d(gaussian_kde(Z.T).covariance) for Z in (X, Y)]
        nodes = len(kde_grid_axes([X, Y], H, points_per_bandwidth=4)[0])
        for name, dens in BASELINES:
            seconds, value, note = run_baseline(
                name + " 1d",
                lambda dens=dens, X=X, Y=Y: grid_u_n(dens, X, Y)[0],
                n * nodes,
                args.cap,
                measured,
            )
            if note == "measured":
                measured[name + " 1d"] = (seconds / (n * nodes), n)
            _row(
                1,
                n,
                name,
                seconds,
                ours_s,
                value,
                est.advantage_estimate_,
                f"{note}, {nodes} nodes",
            )

    for n in sizes_8d:
        Q, m = experiment_2(n, 8, rng)
        ours_s, est = best_time(
            lambda Q=Q, m=m: mace_u_n(Q, m, n_mc=n_mc, random_state=0),
            args.repeats,
        )
        print(
            f"{8:>2} {n:>9} {'ours (exact, torch)':<22} {ours_s:9.3f} {1.0:8.1f} "
            f"{est.advantage_estimate_:10.6f} {'':>12}  {est.integration_}, M={n_mc}"
        )
        samples = same_mc_points(est, n_mc, 0)
        X, Y = Q[m == 1], Q[m == 0]
        for name, dens in BASELINES:
            seconds, value, note = run_baseline(
                name + " 8d",
                lambda dens=dens, X=X, Y=Y, s=samples: mc_u_n(dens, X, Y, s),
                n * n_mc,
                args.cap,
                measured,
            )
            if note == "measured":
                measured[name + " 8d"] = (seconds / (n * n_mc), n)
            _row(
                8,
                n,
                name,
                seconds,
                ours_s,
                value,
                est.advantage_estimate_,
                f"{note}, relative |Δ|",
                relative=True,
            )


BASELINES = (
    ("scipy gaussian_kde", scipy_log_densities),
    ("sklearn KernelDensity", sklearn_log_densities),
)


def _row(d, n, name, seconds, ours_s, value, ours_value, note, relative=False):
    if value is None:
        shown, delta = float("nan"), float("nan")
    else:
        shown = value
        delta = abs(value - ours_value) / (abs(ours_value) if relative else 1.0)
    print(
        f"{d:>2} {n:>9} {name:<22} {seconds:9.3f} {seconds / ours_s:8.1f} "
        f"{shown:10.6f} {delta:12.2e}  {note}"
    )


if __name__ == "__main__":
    main()
