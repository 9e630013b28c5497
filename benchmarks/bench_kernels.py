"""The CPU kernels of issue #28 against the plain float64 pass and the previous code, one process.

Rows (median of ``--repeats``; wall and CPU seconds of the process, user + sys):

* ``nearest`` — ``nearest_sq_distances`` (k = 1, float32 screen over tiles of Y + exact
  float64 re-check) against *float64*: the plain float64 pass the screen replaces (the
  shifted expansion ``‖x‖² + ‖y‖² − 2·x·y`` by ``sq_distance_blocks``, 64 MiB blocks, and
  its row minimum), against *previous*: ``utils/_neighbors.py`` as of ``--ref`` (a
  float32 screen over all of Y at once, loaded from git), when git is there, and against
  *screen, every row*: as of ``--screen-ref`` (the tiled screen and exact re-check, before
  tie-heavy releases were screened as their distinct rows). The tie-heavy rows use integer
  codes ("2 levels": 3 binary columns, every query tied with ~25 000 rows; 20 binary columns,
  too many distinct rows to group, where the exact integer screen spares the re-check);
* ``ball count`` — ``count_within_radius`` at the median nearest distance against the
  previous one (a float64 pass over a shifted copy of Y) and the screen of every row;
* ``KDE sums`` — ``gaussian_log_kernel_sum`` (running log-sum-exp over data tiles)
  against the previous one (per-tile ``logsumexp`` into a table, then one more);
* ``KDE fit + score`` — ``GaussianKDE.fit`` (Scott's rule) and ``score_samples``, which
  whitens the data tile by tile inside the sums, against ``--kde-ref`` (a whitened copy of
  the data made in ``fit``, ``np.cov``'s centred copy for the rule);
* ``covariance`` — ``density._covariance.sample_covariance`` (cross-products summed over
  1 MiB blocks of centred rows) against ``np.cov(Y, rowvar=False)`` (one centred copy);
* ``kernel table`` — the certificate's ``grouped_log_kernel_sums`` (float32; 11
  bandwidths on the √2 grid, 10 groups; data tiles with a running shift) against the
  previous one (every data row in each block).

Each answer is compared with the float64 / previous one (``max |Δ|``; the nearest and ball
counts must be equal, see ``tests/utils/test_neighbors_exact.py``). ``--memory`` adds the
peak resident memory of one nearest pass and one ball count against a 1e6-row release
(6 columns, 2 000 queries), previous and new, each in a fresh interpreter
(``ru_maxrss`` less the resident memory once the data are loaded).

    python benchmarks/bench_kernels.py --scale 0.1 --repeats 1     # a smoke run
    python benchmarks/bench_kernels.py --memory                      # issue #28's sizes

Measured on the shared 2-core machine (load average in the output), 2026-11-27: see the
CHANGELOG entry of issue #28 for the table.
"""

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from sklearn_mace.density import _covariance, _grid, _kde
from sklearn_mace.utils import _neighbors

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REF = "ec63e51"  # the commit before issue #28's kernels
DEFAULT_SCREEN_REF = "5a55e81"  # issue #28's screen before the tie-heavy pass
DEFAULT_KDE_REF = "0763084"  # the KDE that kept a whitened copy of its data
# (pass, data, dimensions, data rows, queries); data: "normal", or integer codes of
# "2 levels" / "4 levels" (tie-heavy: equal rows and equal distances everywhere)
CASES = [
    ("nearest", "normal", 16, 100_000, 10_000),
    ("nearest", "normal", 64, 200_000, 10_000),
    ("nearest", "2 levels", 3, 200_000, 1_000),
    ("nearest", "4 levels", 6, 200_000, 2_000),
    ("nearest", "2 levels", 20, 200_000, 1_000),
    ("ball count", "normal", 16, 100_000, 10_000),
    ("ball count", "2 levels", 3, 200_000, 1_000),
    ("KDE sums", "normal", 8, 100_000, 2_000),
    ("KDE sums", "normal", 64, 100_000, 2_000),
    ("KDE fit + score", "normal", 6, 1_000_000, 1_200),
    ("KDE fit + score", "normal", 64, 100_000, 2_000),
    ("covariance", "normal", 6, 4_000_000, 0),
    ("kernel table", "normal", 8, 100_000, 2_000),
]


def previous(module, ref):
    """``module`` (dotted, under sklearn_mace) as of git ``ref``, or None without git."""
    path = module.replace(".", "/") + ".py"
    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:{path}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    name = f"{module}_previous"
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = module.rsplit(".", 1)[0]
    exec(compile(source, f"{ref}:{path}", "exec"), mod.__dict__)  # noqa: S102 - our own file
    return mod


def timed(function, repeats):
    """``(median wall s, median CPU s, last output)``."""
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        for module in (_neighbors, *PREVIOUS.values()):
            if module is not None and hasattr(module, "_RECENT"):
                module._RECENT.clear()
        wall, cpu = time.perf_counter(), time.process_time()
        out = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), out


def fp64_nearest(X, Y):
    """The plain float64 pass: shifted expansion with exact near-copies, row minimum."""
    out = np.empty(len(X))
    for rows, d2 in _neighbors.sq_distance_blocks(X, Y, device="cpu"):
        out[rows] = d2.amin(dim=1).numpy()
    return out


PREVIOUS = {}


def make_data(data, d, n, n_queries, rng):
    """``(Y, X)``: normal, or integer codes of ``data`` (e.g. "2 levels") as floats."""
    if data == "normal":
        return rng.normal(size=(n, d)), rng.normal(size=(n_queries, d))
    levels = int(data.split()[0])
    Y = rng.integers(0, levels, size=(n, d)).astype(float)
    return Y, rng.integers(0, levels, size=(n_queries, d)).astype(float)


def _neighbour_variants():
    """``[(label, module)]``: the git references of ``utils/_neighbors.py`` that loaded."""
    labels = {"neighbors": "previous", "neighbors_screen": "screen, every row"}
    return [(labels[key], PREVIOUS[key]) for key in labels if PREVIOUS.get(key) is not None]


def runs(name, data, d, n, n_queries, rng):
    """``[(label, function)]`` for one case: the reference first, the new kernel last."""
    Y, X = make_data(data, d, n, n_queries, rng)
    old_kde, old_grid = PREVIOUS["kde"], PREVIOUS["grid"]
    if name == "nearest":
        out = [("float64", lambda: fp64_nearest(X, Y))]
        for label, mod in _neighbour_variants():
            out.append((label, lambda mod=mod: mod.nearest_sq_distances(X, Y, device="cpu")[:, 0]))
        return [*out, ("new", lambda: _neighbors.nearest_sq_distances(X, Y, device="cpu")[:, 0])]
    if name == "ball count":
        radius = float(np.sqrt(np.median(_neighbors.nearest_sq_distances(X[:500], Y))))
        out = []
        for label, mod in _neighbour_variants():
            out.append((label, lambda mod=mod: mod.count_within_radius(X, Y, radius, device="cpu")))
        return [*out, ("new", lambda: _neighbors.count_within_radius(X, Y, radius, device="cpu"))]
    if name == "kernel table":
        groups, h = rng.integers(0, 10, n), 0.3 * 2.0 ** (-0.5 * np.arange(11))
        out = []
        if old_grid is not None:
            out.append(("previous", lambda: old_grid.grouped_log_kernel_sums(X, Y, groups, 10, h)))
        return [*out, ("new", lambda: _grid.grouped_log_kernel_sums(X, Y, groups, 10, h))]
    if name == "KDE fit + score":
        return _kde_fit_and_score(X, Y)
    if name == "covariance":
        return [
            ("np.cov", lambda: np.cov(Y, rowvar=False)),
            ("blocked", lambda: _covariance.sample_covariance(Y)),
        ]
    out = []
    if old_kde is not None:
        out.append(("previous", lambda: old_kde.gaussian_log_kernel_sum(X, Y)))
    return [*out, ("new", lambda: _kde.gaussian_log_kernel_sum(X, Y))]


def _kde_fit_and_score(X, Y):
    def fit_and_score(module):
        return module.GaussianKDE(bandwidth="scott", device="cpu").fit(Y).score_samples(X)

    out = []
    if PREVIOUS.get("kde_whitened") is not None:
        out.append(("whitened copy", lambda: fit_and_score(PREVIOUS["kde_whitened"])))
    return [*out, ("new", lambda: fit_and_score(_kde))]


def speed_table(scale, repeats, only=None):
    print("| pass | size | variant | wall s | CPU s | speed-up (wall) | max abs diff |")
    print("|---|---|---|---|---|---|---|")
    for name, data, d, n, n_queries in CASES:
        if only and name not in only and f"{name}/{data}" not in only:
            continue
        n = max(1000, int(n * scale))
        variants = runs(name, data, d, n, n_queries, np.random.default_rng(0))
        results = [(label, *timed(f, repeats)) for label, f in variants]
        base_wall, base_out = results[0][1], np.asarray(results[0][3], dtype=float)
        for label, wall, cpu, out in results:
            diff = float(np.max(np.abs(np.asarray(out, dtype=float) - base_out)))
            size = f"{d}-D{'' if data == 'normal' else ' ' + data}, {n:,} x {n_queries:,}"
            print(
                f"| {name} | {size} | {label} | {wall:.2f} | {cpu:.2f} "
                f"| {base_wall / wall:.2f}x | {diff:.1e} |"
            )


def memory_child(variant, which):
    """Run in a fresh interpreter: one pass, print resident MiB after loading and at peak."""
    rng = np.random.default_rng(0)
    Y, X = rng.normal(size=(1_000_000, 6)), rng.normal(size=(2_000, 6))
    module = _neighbors if variant == "new" else previous("sklearn_mace.utils._neighbors", variant)
    torch.set_num_threads(1)
    module.nearest_sq_distances(X[:10], Y[:1000], device="cpu")  # torch's own start-up
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if which == "nearest":
        module.nearest_sq_distances(X, Y, device="cpu")
    else:
        module.count_within_radius(X, Y, 1.0, device="cpu")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{base:.0f} {peak:.0f}")


def memory_table(ref):
    print()
    print("Peak resident memory of one pass, 1e6 x 6 release (45.8 MiB), 2 000 queries")
    print("| pass | variant | MiB after loading | peak MiB | peak - loaded MiB |")
    print("|---|---|---|---|---|")
    for which in ("nearest", "ball count"):
        for variant in (ref, "new"):
            out = subprocess.run(
                [sys.executable, __file__, "--memory-child", variant, which],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            ).stdout.split()
            base, peak = float(out[0]), float(out[1])
            label = "new" if variant == "new" else f"previous ({ref})"
            print(f"| {which} | {label} | {base:.0f} | {peak:.0f} | {peak - base:.0f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the data rows")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ref", default=DEFAULT_REF, help="git commit of the previous code")
    parser.add_argument(
        "--screen-ref",
        default=DEFAULT_SCREEN_REF,
        help="git commit of the float32 screen before the tie-heavy pass ('' to skip)",
    )
    parser.add_argument(
        "--kde-ref", default=DEFAULT_KDE_REF, help="git commit of the KDE with a whitened copy"
    )
    parser.add_argument("--memory", action="store_true", help="add the peak-memory table")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed table")
    parser.add_argument(
        "--only", help="comma-separated passes or pass/data, e.g. 'KDE sums,nearest/2 levels'"
    )
    parser.add_argument("--memory-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(*args.memory_child)
        return
    PREVIOUS["neighbors"] = previous("sklearn_mace.utils._neighbors", args.ref)
    if args.screen_ref:
        PREVIOUS["neighbors_screen"] = previous("sklearn_mace.utils._neighbors", args.screen_ref)
    PREVIOUS["kde"] = previous("sklearn_mace.density._kde", args.ref)
    PREVIOUS["grid"] = previous("sklearn_mace.density._grid", args.ref)
    PREVIOUS["kde_whitened"] = previous("sklearn_mace.density._kde", args.kde_ref)
    print(f"CPU: {os.cpu_count()} cores, torch threads {torch.get_num_threads()}; load average ")
    print(f"{os.getloadavg()[0]:.1f}; median of {args.repeats}; scale {args.scale}; ref {args.ref}")
    print()
    if not args.no_speed:
        speed_table(args.scale, args.repeats, args.only and args.only.split(","))
    if args.memory:
        memory_table(args.ref)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
