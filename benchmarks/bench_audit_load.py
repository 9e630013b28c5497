"""`sklearn-mace audit` under load: 5 000 members, 5 000 non-members, up to 200 000 synthetic rows.

The load case of issue #12: 20 numeric columns, 5 000 members and 5 000 non-members (half of
them become the population reference, as when no reference file is given), and one release
of 50 000 or 200 000 rows. The release is leaky in a realistic way: 1 % of its rows are
noisy copies of members, the rest population draws. Each size runs the CLI once in a fresh
interpreter on CSV files in a temporary folder, and the table shows its wall time, the peak
resident memory of that interpreter (``ru_maxrss`` of the child), and the ratio to a
baseline run in the same process: a fresh interpreter that only reads and encodes the same
files. Target: 200 000 synthetic rows in at most 2 minutes on 2 cores, at most 1 GiB.

    python benchmarks/bench_audit_load.py            # 50 000 and 200 000 synthetic rows
    python benchmarks/bench_audit_load.py --quick    # 5 000 and 20 000 (a smoke run)
    python benchmarks/bench_audit_load.py --mixed    # issue #22: 30 mixed columns

``--mixed`` (issue #22) audits tables of 30 mixed columns instead: the population of
``bench_encode.py`` (a free-text record id, 14 numeric columns, 12 categorical ones with 2 to
40 categories, a boolean, 3 numbers-as-text columns), 5 000 members, 5 000 non-members and a
release whose rows are population draws and 1 % member rows verbatim (with their own ids).
Target: the 200 000-row release in at most 3 minutes at at most 1 GiB.

Measured with ``--mixed`` on 2 shared cores (load average 6-8 from other work, so about a
third of the machine), before the release was encoded in blocks:

    synthetic rows   wall s  encode-only s  ratio  peak MiB
             50000    149.2            9.2   16.3       874
            200000    629.7           10.5   59.9      1284

Both targets are missed on this machine. Where the 200 000-row run spends its time and
memory (an in-process profile of the same run, same load): reading and encoding 20 s (peak
683 MiB, now lower: the release is encoded in blocks), the nearest-synthetic distances 35 s
(peak 1179 MiB: importing torch and its float32 screen), DOMIAS 270 s (peak 1251 MiB), MC
98 s, GAN-leaks CAL 18 s, the three figure points 17 s, attribute inference and linkability
143 s; 604 s in all. The 93 encoded features (against 20 above) make every pairwise pass
about 4.6 times dearer.

With the release encoded in blocks, the same 200 000-row audit under ``/usr/bin/time -v``
(load average about 5): wall 379 s, CPU 191 s (user 178 + system 12), peak 1285 MiB. The
peak is set after the encoding (the nearest-synthetic distances and the analyses after
them), so encoding in blocks does not lower it.

After the pairwise passes were reworked (issue #22: DOMIAS's kernel sums and MC's ball
counts over cache-sized tiles of the release, one nearest-synthetic pass shared by the MACE
query, GAN-leaks CAL and MC's radius, no release-sized float64 temporaries), the same
200 000-row file under ``/usr/bin/time -v`` (load average about 2), against the code
before, run on the same files minutes apart:

    code     wall s  CPU s  peak MiB
    before    204.8  204.3      1276
    after      97.5   97.2      1082

and this script with ``--mixed`` right after (load average about 1.3):

    synthetic rows   wall s    CPU s  encode-only s  ratio  peak MiB
             50000     26.4     36.9            3.6    7.4       912
            200000     78.9     98.4            3.4   23.1      1081

The merged code (the nearest-neighbour screen no longer keeps a centred float64 copy of the
release either) with the machine otherwise quiet (load average about 1), 2026-11-26:

    synthetic rows   wall s    CPU s  encode-only s  ratio  peak MiB
             50000     31.6     42.2            3.8    8.4       779
            200000     96.1    119.8            3.9   24.8       964

Both targets are met (3 min, 1 GiB); ``/usr/bin/time -v`` on the 200 000-row CLI run alone:
92 s wall, 965 MiB. An in-process trace of that run: about 560 MiB after reading and
encoding, 883 MiB in the nearest-synthetic pass, 910 in DOMIAS, 970 in the 50 % figure point
and the disclosure risks after it. The certified numbers
of the 200 000-row audit are identical before and after; only DOMIAS's scores move, by at
most 9e-11 (the tiled kernel sums round differently), and its threshold by 5e-13.

Measured on 2 idle cores (every analysis ran, disclosure included):

    synthetic rows   wall s  encode-only s  ratio  peak MiB
             50000     25.3            2.1   12.0       657
            200000     58.3            2.9   20.0       815

Issue #28 (the disclosure risks' passes: singling out, attribute inference), ``--mixed
--rows 200000 --against <the code before>`` on 2 shared cores, load average 2.2-3.4:

    synthetic rows   wall s    CPU s  peak MiB  against s  its CPU s  its MiB  speed-up
            200000     76.3     75.4       954      158.8      177.6     1119      2.08

with identical summaries (exact).

Issue #28, second step (MC skips the ball count of the targets whose nearest synthetic row
lies beyond its radius; attribute inference and linkability search the release with
pruning), against the merged code before it, load average 8-12:

    synthetic rows   wall s    CPU s  peak MiB  against s  its CPU s  its MiB  speed-up
            200000    139.5     60.1       938      214.5       82.4      980      1.54

and on main after the kernels merge (float32 screens with exact re-checks), this step
applied on top of it against main itself, load average about 6 (both summaries exact):

    synthetic rows   wall s    CPU s  peak MiB  against s  its CPU s  its MiB  speed-up
            200000     96.5     60.5       975      188.3       87.0      941      1.95

Summaries identical (exact); an in-process run of both trees side by side (load 9-15) wrote
byte-identical summary.csv, disclosure.csv and records.csv, and gave these CPU s per step:

    step                         before  after      step                   before  after
    reading, encoding, checks       4.7    4.8      MC (Hilprecht)           12.5    6.9
    nearest-synthetic distances     7.8    8.0      figure points (3)         6.9    6.4
    DOMIAS                         13.9   13.8      attribute inference      15.0    4.0
    GAN-leaks CAL                   0.6    0.7      linkability              11.4    6.0
    singling out                    8.8    9.5      whole run                86.3   64.9

What is left is mostly the kernel passes (DOMIAS's kernel sums, the four nearest-synthetic
passes, MC's count on half the targets: about 35 CPU s) and singling out. Before this step,
``--against`` run from a worktree imported that worktree in both children (``python -m``
puts the working folder ahead of ``PYTHONPATH``); each child now runs in its source tree.
All of issue #28's steps merged (the two above, the kernels' float32 screens with exact
re-checks, the block reads and keys), on main, load average 2.0-3.1 (one other job):

    synthetic rows   wall s    CPU s  encode-only s  ratio  peak MiB
            200000     52.4     51.4            2.7   19.1       986

Issue #28, a large release (``--columns 6``: 6 Gaussian columns, 5 000 members and 5 000
non-members): the tables of ``make_tables(..., n_features=6)`` written once, each run the
CLI under ``/usr/bin/time`` (the same ``ru_maxrss`` as this script's), 2 cores shared with
other work (load average 7-14). Reading, encoding and keying a 10-million-row release
(an in-process trace, the interpreter without torch: 213 MiB):

    code     wall s  CPU s  peak MiB   where
    before    257.8   53.2      2910   the row keys (pooled copies) and the duplicate notes
    after      75.1   15.2      1324   the sorted copy of the keys for the duplicate notes

after which 1 249 MiB are held: the table (458), its encoding (458), the keys (76). The
whole 10-million-row audit with ``--no-disclosure`` (after): 2 100 MiB, 3 139 s wall, 997
CPU s, every analysis ok; in-process: 405 MiB the interpreter with torch, 1 517 the input
preparation's peak, then nearest-synthetic distances 2 024, DOMIAS 2 100, MC 2 043. The
1-million-row audit with every analysis, before / after: 1 816 / 1 827 MiB, 166.6 / 167.2
CPU s (940 / 835 s wall at load 7-14), summary.csv, records.csv and disclosure.csv
identical (exact): its peak is in the disclosure risks (singling out's univariate
predicates, one Python object per value held once: 1 070 MiB traced at 1 million rows).

Issue #28, the 10-million-row release within 1.5 GiB (the figure points search their
subset in blocks, the disclosure attacks keep their shuffle as an order and search in
blocks, the audit lets go of the encoded release before the disclosure risks, of the row
keys before the analyses, of the raw release before them when the disclosure risks are off):

``--columns 6 --rows 10000000 --no-disclosure`` on 2 shared cores (load average 2.4 at the
start, 6-12 during the run), against the 2 100 MiB / 997 CPU s measured before:

    synthetic rows   wall s    CPU s  encode-only s  ratio  peak MiB
          10000000   2722.0    639.1           32.5   83.8      1869   (load 6.24)

The 1.5 GiB target is missed, in DOMIAS alone. An in-process trace (the same release, 600
members and 600 non-members, VmHWM reset before each step): the input preparation peaks at
1 516 MiB (the raw table, its encoding, the keys and their sorted copy), after which 922 MiB
are held without the disclosure risks (the interpreter 405, the encoding 458, the rest);
the nearest-synthetic distances peak at 1 102, MC at 1 102, the figure points at 1 096
(they peaked above 1 900 before), and DOMIAS at 1 586 in one run and about 1 900 in others
(the bench above): its KDE keeps a whitened copy of the release (458 MiB) and its squared
row norms (76), `np.cov` copies the release once more for the bandwidth (458, briefly), and
some runs hold a further release-sized array during the scoring that was not traced down
(density/_kde.py, density/_cv.py). A standalone 10-million-row DOMIAS pass peaks at 624 MiB
above what it is given.

With the disclosure risks (the same in-process trace, 600 + 600 targets; summary.csv and
records.csv identical to the run without them): the raw table (458) is held through the
analyses, so DOMIAS peaks at 2 349 MiB; the disclosure risks after them peak at 1 588
(attribute inference: the raw table, the attack's encoding 458 and order 38, a sorted
column) and 1 742 (singling out: its encoding and order plus the univariate candidates'
sorted copy, masks and values held once). 2 056 s wall, 479 CPU s at load 8-12.

Issue #28, after DOMIAS's KDE stopped copying the release (tiles whitened inside the kernel
sums, the covariance in blocks), the disclosure attacks read the release's own columns, and
the CLI reads a release again for the disclosure risks instead of holding it, on 2 cores
(load average 0 at the start; the runs shared the machine with the test suite):

    synthetic rows   wall s    CPU s  encode-only s  ratio  peak MiB
          10000000    620.5    506.9           12.8   48.3      1529   (--no-disclosure)
          10000000   1077.2    775.6           15.3   70.5      1524   (every analysis)

Both within 1.5 GiB (1 536 MiB), by 7-12 MiB: the peak is now the input preparation's (the
raw table, its encoding, the keys and their sorted copy for the duplicate notes). The
200 000-row ``--mixed`` audit on the same code, 2 idle cores: 32.8 s wall, 45.6 CPU s,
802 MiB.

Before issue #12 the same audit took 61 s / 671 MiB at 50 000 rows and 11 min 12 s / 842 MiB
at 200 000: MC and GAN-leaks CAL fitted a threshold by an O(n²) pass over the synthetic
rows. As query transformers they cost one nearest-neighbour pass per target; the remaining
pairwise work (DOMIAS's KDE sums, MC's ball counts, the disclosure attacks) is linear in
the synthetic rows at a fixed number of targets, and chunked (bounded memory).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

N_FEATURES = 20
ENCODE_ONLY = """
import sys
from sklearn_mace.report import encode_tables, read_table
paths = dict(arg.split("=", 1) for arg in sys.argv[1:])
encode_tables({name: read_table(path) for name, path in paths.items()})
"""


def make_tables(n_members, n_non_members, n_synthetic, seed=0, n_features=N_FEATURES):
    """Correlated Gaussian population; a release with 1 % noisy member copies."""
    rng = np.random.default_rng(seed)
    mixing = rng.normal(size=(n_features, n_features)) / np.sqrt(n_features)

    def population(n):
        return rng.normal(size=(n, n_features)) @ mixing

    members, non_members = population(n_members), population(n_non_members)
    n_copies = n_synthetic // 100
    copies = members[rng.integers(n_members, size=n_copies)]
    copies = copies + 0.05 * rng.normal(size=copies.shape)
    synthetic = np.vstack([population(n_synthetic - n_copies), copies])
    columns = [f"x{j}" for j in range(n_features)]
    return {
        name: pd.DataFrame(values, columns=columns)
        for name, values in (
            ("members", members),
            ("non-members", non_members),
            ("synthetic", rng.permutation(synthetic)),
        )
    }


def make_mixed_tables(n_members, n_non_members, n_synthetic, seed=0):
    """The 30-column population of ``bench_encode.py``; 1 % of the release copies members."""
    from bench_encode import make_table

    rng = np.random.default_rng(seed)
    members, non_members = make_table(n_members, rng), make_table(n_non_members, rng)
    n_copies = n_synthetic // 100
    release = make_table(n_synthetic, rng)
    copied = members.sample(n_copies, replace=True, random_state=seed).reset_index(drop=True)
    copied["record_id"] = release["record_id"].iloc[:n_copies].to_numpy()
    release = pd.concat([release.iloc[n_copies:], copied], ignore_index=True)
    release = release.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return {"members": members, "non-members": non_members, "synthetic": release}


def _run(argv, source=None):
    """``(wall s, CPU s, peak MiB)`` of a child interpreter: CPU is user + system over all
    its threads, the peak its own ``ru_maxrss`` (``os.wait4``).

    ``source`` is the source tree whose ``sklearn_mace`` it imports (default: this one). The
    child runs in that folder: ``python -m`` and ``-c`` put the working folder ahead of
    ``PYTHONPATH``, so run from another tree it would import that tree's package instead."""
    source = Path(__file__).resolve().parents[1] if source is None else Path(source)
    env = {**os.environ, "PYTHONPATH": str(source)}
    start = time.perf_counter()
    child = subprocess.Popen(
        argv,
        env=env,
        cwd=source,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    _, _, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = 0  # reaped by wait4
    # ru_maxrss is in KiB on Linux
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def bench(
    n_synthetic,
    *,
    n_members=5000,
    n_non_members=5000,
    seed=0,
    mixed=False,
    against=None,
    n_features=N_FEATURES,
    disclosure=True,
):
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        paths = {}
        if mixed:
            tables = make_mixed_tables(n_members, n_non_members, n_synthetic, seed)
        else:
            tables = make_tables(n_members, n_non_members, n_synthetic, seed, n_features)
        for name, frame in tables.items():
            paths[name] = folder / f"{name}.csv"
            frame.to_csv(paths[name], index=False)
        del tables
        baseline = _run(
            [sys.executable, "-c", ENCODE_ONLY, *(f"{k}={v}" for k, v in paths.items())]
        )[0]
        argv = [
            sys.executable,
            "-m",
            "sklearn_mace",
            "audit",
            "--members",
            str(paths["members"]),
            "--non-members",
            str(paths["non-members"]),
            "--synthetic",
            f"release={paths['synthetic']}",
            "--out",
            str(folder / "out"),
            "--quiet",
            *([] if disclosure else ["--no-disclosure"]),
        ]
        other = None
        if against is not None:  # the same audit on another source tree, first
            other_argv = [*argv[: argv.index("--out")], "--out", str(folder / "against")]
            other_argv += argv[argv.index("--quiet") :]
            other = (*_run(other_argv, against), pd.read_csv(folder / "against" / "summary.csv"))
        wall, cpu, peak = _run(argv)
        summary = pd.read_csv(folder / "out" / "summary.csv")
    return wall, cpu, baseline, peak, summary, other


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 000 and 20 000 rows")
    parser.add_argument(
        "--mixed", action="store_true", help="30 mixed columns with a free-text id (issue #22)"
    )
    parser.add_argument(
        "--against",
        metavar="SOURCE",
        help="another source tree (e.g. a worktree of main): its audit of the same files runs "
        "first, and the table adds its wall s and peak, the speed-up and whether the "
        "summaries agree",
    )
    parser.add_argument("--rows", type=int, nargs="+", help="synthetic row counts to run")
    parser.add_argument(
        "--columns",
        type=int,
        default=N_FEATURES,
        help=f"numeric columns of the Gaussian tables (default {N_FEATURES}; issue #28's large "
        "release: --columns 6 --rows 10000000)",
    )
    parser.add_argument(
        "--no-disclosure",
        action="store_true",
        help="audit without the disclosure risks (the CLI's --no-disclosure)",
    )
    args = parser.parse_args(argv)
    sizes = (5_000, 20_000) if args.quick else (50_000, 200_000)
    sizes = args.rows or sizes
    header = ["synthetic rows", "wall s", "CPU s", "encode-only s", "ratio", "peak MiB"]
    widths = [14, 8, 8, 14, 6, 9]
    if args.against:
        header += ["against s", "its CPU s", "its MiB", "speed-up", "same summary"]
        widths += [10, 9, 8, 9, 13]
    print(f"load average {os.getloadavg()[0]:.2f} at start")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, widths, strict=True)))
    for n in sizes:
        wall, cpu, baseline, peak, summary, other = bench(
            n,
            mixed=args.mixed,
            against=args.against,
            n_features=args.columns,
            disclosure=not args.no_disclosure,
        )
        line = (
            f"{n:>14} {wall:>8.1f} {cpu:>8.1f} {baseline:>14.1f} {wall / baseline:>6.1f} "
            f"{peak:>9.0f}"
        )
        if other is not None:
            same = _same_summary(summary, other[3])
            line += (
                f" {other[0]:>10.1f} {other[1]:>9.1f} {other[2]:>8.0f} {other[0] / wall:>9.2f}"
                f" {same:>13}"
            )
        print(f"{line}   (load {os.getloadavg()[0]:.2f})")
        failed = summary.loc[summary["status"] == "failed", "analysis"].tolist()
        if failed:
            print(f"{'':>14} failed analyses: {failed}")
    print(
        "peak MiB: the audit child's own ru_maxrss; CPU s is the audit's user + system time "
        "(all threads): on a shared machine, wall s grows with the other load, CPU s much less."
    )


def _same_summary(a, b):
    """``"exact"`` when the two summaries are equal cell for cell, else ``"NO"``."""
    try:
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    except AssertionError:
        return "NO"
    return "exact"


if __name__ == "__main__":
    main()
