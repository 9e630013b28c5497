"""Encoding wide tables (issue #25): time per column, and the refusal above ``max_columns``.

Three tables (members, non-members, one release) of ``ROWS`` rows and a growing number of
columns: three of every five numeric (normal, rounded), one binary (0/1) and one text column
of four categories. Each size is encoded once by ``encode_tables`` (with ``max_columns``
raised so that every size runs), and the table shows wall and CPU seconds, CPU milliseconds
per column, and the ratio of that to the smallest size measured in the same run (1.0 is
linear in the columns; the pairwise dependence check it replaced grew with the square). The
last line times the default refusal of a table wider than ``MAX_COLUMNS``.

    python benchmarks/bench_wide_tables.py            # 1 000 rows; 1 000 to 10 000 columns
    python benchmarks/bench_wide_tables.py --quick    # 200 rows; 500 and 1 000 columns

Before this change (issue #25): 10 000 columns × 30 rows took 45 s and then stalled for more
than 150 s (the pairwise check: 10⁸ correlations); 100 000 columns were killed at 300 s.

Measured on the 2 shared cores of the development machine (load average 8-12 from other
work, so wall time is 3-6 times the CPU time; the CPU seconds are the comparable number):

     columns   rows   wall s    CPU s  CPU ms/col  ratio
        1000   1000     11.1      3.9        3.88   1.00
        2500   1000     42.4     10.9        4.36   1.12
        5000   1000    125.9     23.4        4.69   1.21
       10000   1000    234.9     53.2        5.32   1.37
    10000 columns refused in 0.13 s (the default max_columns, 5 000)

Ten times the columns cost 13.7 times the CPU (1.37 per column; quadratic would be 10):
close to linear. 10 000 × 1 000 needs 53 s of CPU, at the 60 s target only on a quiet
machine, hence the default refusal above 5 000 columns (23 s of CPU); ``max_columns`` /
``--max-columns`` raises it. Through the CLI, three 10 000-column CSV files of 1 000 rows
are read and refused (exit 2) in 24 s of wall time at the same load.
"""

import sys
import time

import numpy as np
import pandas as pd

from sklearn_mace.report import AuditInputError, encode_tables
from sklearn_mace.report._encode import MAX_COLUMNS


def wide(n_rows, n_columns, seed):
    rng = np.random.default_rng(seed)
    data = {}
    for j in range(n_columns):
        kind = j % 5
        if kind < 3:
            data[f"x{j}"] = rng.normal(size=n_rows).round(3)
        elif kind == 3:
            data[f"x{j}"] = rng.integers(0, 2, n_rows)
        else:
            data[f"x{j}"] = rng.choice(["a", "b", "c", "d"], n_rows)
    return pd.DataFrame(data)


def frames(n_rows, n_columns):
    return {
        "members": wide(n_rows, n_columns, 0),
        "non-members": wide(n_rows, n_columns, 1),
        "synthetic 'x'": wide(n_rows, n_columns, 2),
    }


def main(quick=False):
    n_rows = 200 if quick else 1000
    sizes = (500, 1000) if quick else (1000, 2500, 5000, 10_000)
    print(f"{'columns':>8} {'rows':>6} {'wall s':>8} {'CPU s':>8} {'CPU ms/col':>11} {'ratio':>6}")
    first = None
    for n_columns in sizes:
        tables = frames(n_rows, n_columns)
        wall, cpu = time.perf_counter(), time.process_time()
        encode_tables(tables, max_columns=max(sizes))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        per_column = 1000 * cpu / n_columns
        first = first or per_column
        print(
            f"{n_columns:>8} {n_rows:>6} {wall:>8.1f} {cpu:>8.1f} {per_column:>11.2f} "
            f"{per_column / first:>6.2f}"
        )
    tables = frames(20, 2 * MAX_COLUMNS)
    wall = time.perf_counter()
    try:
        encode_tables(tables)
    except AuditInputError as exc:
        print(f"{2 * MAX_COLUMNS} columns refused in {time.perf_counter() - wall:.2f} s: {exc}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
