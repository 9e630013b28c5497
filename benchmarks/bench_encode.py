"""Reading and encoding a large release: 200 000 rows × 30 mixed columns with a free-text id.

Issue #22: the table encoder matched text values to categories with ``np.isin`` on object
arrays, quadratic in the rows of a text column (5k rows 1.5 s, 20k 19 s, 40k 78 s), so a
200 000-row release with an identifier column printed nothing for ten minutes. Values are now
matched by hashing (pandas), and every step is linear or ``n log n`` in the rows.

The tables (written as CSV in a temporary folder): 10 000 members, 10 000 non-members and
20 000 reference rows from one population, and a release of ``--rows`` rows (default
200 000). Each table has 30 columns: a free-text record id (``"R<random digits>"``), 14
numeric columns (Gaussian, log-normal, integer counts, a mostly-zero column, one with 1 %
missing cells), 12 categorical columns (2 to 40 categories, some rare, a ``?`` category, one
boolean) and 3 numbers-as-text columns. The table shows, per phase, the wall time of

* ``pandas.read_csv`` of the same files (the baseline, run in the same process first);
* :func:`~sklearn_mace.report.read_table` of the files (sniffing, decimal detection);
* :func:`~sklearn_mace.report.encode_tables` of the tables read;

and the ratio of read + encode to the baseline. Target: read + encode of the 200 000-row
release and its real tables in at most 10 s on 2 cores.

    python benchmarks/bench_encode.py               # 200 000 release rows
    python benchmarks/bench_encode.py --rows 20000  # a smoke run

Measured on 2 shared cores (load average 6-7, so about a third of the machine):

    release rows  rows in all  pandas.read_csv s  read_table s  encode_tables s  ratio
           20000        60000               0.21          0.40             4.20   21.7
           50000        90000               0.32          0.64             4.78   17.1
          200000       240000               0.94          1.33             7.13    9.0

The encoding grows linearly on top of a fixed cost per column (planning, scikit-learn's
transformers); before issue #22 a 40 000-row text column alone took 78 s.
"""

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from sklearn_mace.report import encode_tables, read_table


def make_table(n, rng):
    """``n`` rows of the 30-column population described in the module docstring."""
    columns = {"record_id": [f"R{v}" for v in rng.integers(10**11, size=n)]}
    base = rng.normal(size=(n, 4))
    for j in range(6):
        columns[f"measure_{j}"] = (base @ rng.normal(size=4) + rng.normal(size=n)).round(3)
    for j in range(3):
        columns[f"amount_{j}"] = rng.lognormal(8, 1, size=n).round(2)
    for j in range(3):
        columns[f"count_{j}"] = rng.poisson(3 + 4 * j, size=n)
    columns["gain"] = np.where(rng.random(n) < 0.92, 0, rng.integers(1000, 99999, size=n))
    gappy = rng.normal(50, 10, size=n).round(1)
    gappy[rng.random(n) < 0.01] = np.nan
    columns["gappy"] = gappy
    for j, k in enumerate([2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 40]):
        p = rng.dirichlet(np.ones(k) * 0.7)
        labels = np.array([f"cat{j}_{i}" for i in range(k)], dtype=object)
        values = labels[rng.choice(k, size=n, p=p)]
        if j == 3:
            values[rng.random(n) < 0.05] = "?"
        columns[f"category_{j}"] = values
    columns["flag"] = rng.random(n) < 0.3
    for j in range(3):
        columns[f"coded_{j}"] = rng.integers(0, 50, size=n).astype(str)
    return pd.DataFrame(columns)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000, help="release rows")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    sizes = {"members": 10_000, "non-members": 10_000, "reference": 20_000}
    sizes["synthetic 'release'"] = args.rows
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, n in sizes.items():
            paths[name] = Path(tmp) / f"{name.split()[0].strip(chr(39))}_{n}.csv"
            make_table(n, rng).to_csv(paths[name], index=False)
        start = time.perf_counter()
        for path in paths.values():
            pd.read_csv(path)
        t_pandas = time.perf_counter() - start
        start = time.perf_counter()
        tables = {name: read_table(path, role=name) for name, path in paths.items()}
        t_read = time.perf_counter() - start
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arrays, names, report = encode_tables(tables)
        t_encode = time.perf_counter() - start
    total = t_read + t_encode
    n_rows = sum(sizes.values())
    print(f"{n_rows} rows in all ({args.rows} release rows), 30 columns; {len(names)} features")
    print(report[report["features"] == 0][["column", "treatment"]].to_string(index=False))
    print()
    print(f"{'phase':<28}{'seconds':>10}")
    print(f"{'pandas.read_csv (baseline)':<28}{t_pandas:>10.2f}")
    print(f"{'read_table':<28}{t_read:>10.2f}")
    print(f"{'encode_tables':<28}{t_encode:>10.2f}")
    print(f"{'read + encode':<28}{total:>10.2f}")
    print(f"ratio (read + encode) / pandas.read_csv: {total / t_pandas:.1f}")
    print(f"target: read + encode <= 10 s: {'met' if total <= 10 else 'MISSED'}")


if __name__ == "__main__":
    main()
