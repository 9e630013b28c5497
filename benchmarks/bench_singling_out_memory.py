"""Memory and CPU of singling out on a large release (issue #28: 10 million rows in 1.5 GiB).

The univariate search wrote one Python predicate (a list holding a tuple and a NumPy scalar,
about 180 bytes) per value held once in a column before drawing ``n_queries`` of them: 1 070
MiB traced at 1 million rows × 6 columns, linear in the rows. It now counts the candidates
per column (one sorted copy of the column at a time), draws the same ``rng.choice`` over
them and builds only the drawn predicates (the same predicates:
``tests/disclosure/test_singling_out_memory.py``). Writing the
predicates' readable values (``predicates_``) converted the whole release column once per
numeric term (500 conversions of a release column); it now converts each column once.

The release: ``--rows`` rows (default 1 000 000), 6 columns: ``--table gaussian`` (default)
6 correlated Gaussian columns, every value held once (the shape of ``bench_audit_load.py``'s
10-million-row release); ``--table mixed`` 3 continuous columns, 1 integer with ties, 2
categorical (a few rare levels). Each phase runs twice in this process: once under
``tracemalloc`` (peak of Python and NumPy allocations above the start of the phase), once
without it for the CPU seconds (``time.process_time``).

    python benchmarks/bench_singling_out_memory.py                # 1 000 000 rows
    python benchmarks/bench_singling_out_memory.py --rows 100000  # a smoke run

Measured on 2 shared cores (nice 5, load average 2–4), 1 000 000 rows, traced peak MiB and
CPU s, the code before this change (same script, its source tree) → this one:

    table     phase                 peak MiB before → after   CPU s before → after
    gaussian  univariate search         977.9 →  32.5           5.73 → 0.85
    gaussian  univariate fit           1069.4 → 124.1           6.10 → 1.02
    gaussian  univariate evaluate        32.0 →  32.0           0.40 → 0.45
    mixed     univariate search         310.4 →  24.9           1.82 → 0.42
    mixed     univariate fit            386.7 → 205.6           2.95 → 1.07
    mixed     univariate evaluate        32.0 →  32.0           0.48 → 0.51

The same 500 predicates before and after (compared at 1 000 000 rows, both tables). What
the fit holds now is the release's shuffled copy and its encoding
(``ReleaseMixin._fit_release``; the mixed table's text columns cost most), not the search.
The multivariate fit (``--multivariate``, mixed table: 205.6 MiB, 37 CPU s, 61 predicates
in its 100 000 attempts) is unchanged.
"""

import argparse
import time
import tracemalloc

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from sklearn_mace.disclosure import SinglingOutRisk


def make_table(n, seed, kind="gaussian"):
    """``n`` rows of the 6-column release described in the module docstring."""
    rng = np.random.default_rng(seed)
    if kind == "gaussian":
        mixing = rng.normal(size=(6, 6)) / np.sqrt(6)
        values = rng.normal(size=(n, 6)) @ mixing
        return pd.DataFrame(values, columns=[f"x{j}" for j in range(6)])
    return pd.DataFrame(
        {
            "income": rng.lognormal(10, 1, n).round(2),
            "height": rng.normal(170, 10, n).round(3),
            "score": rng.standard_t(2, n),
            "age": rng.integers(18, 90, n),
            "job": rng.choice(
                list("abcdefgh"), n, p=[0.4, 0.3, 0.2, 0.05, 0.04, 0.009, 0.0009, 0.0001]
            ),
            "town": rng.choice([f"t{i}" for i in range(50)], n),
        }
    )


def _phases(release, members, control, multivariate):
    def univariate_fit():
        return SinglingOutRisk(mode="univariate", random_state=0).fit(release)

    def multivariate_fit():
        return SinglingOutRisk(mode="multivariate", random_state=0).fit(release)

    fitted = univariate_fit()

    def univariate_search():  # the search alone, on the fitted release's encoding
        return fitted._univariate(check_random_state(0))

    def univariate_evaluate():
        return fitted.evaluate(members, control)

    phases = [
        ("univariate search", univariate_search),
        ("univariate fit", univariate_fit),
        ("univariate evaluate", univariate_evaluate),
    ]
    return phases + [("multivariate fit", multivariate_fit)] if multivariate else phases


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--targets", type=int, default=100_000)
    parser.add_argument("--table", choices=["gaussian", "mixed"], default="gaussian")
    parser.add_argument(
        "--multivariate", action="store_true", help="also the multivariate fit (slow)"
    )
    args = parser.parse_args(argv)
    release = make_table(args.rows, 0, args.table)
    members = make_table(args.targets, 1, args.table)
    control = make_table(args.targets, 2, args.table)
    print(
        f"{args.table} release {args.rows} rows x 6 columns; "
        f"targets and controls {args.targets} rows"
    )
    print(f"{'phase':<22} {'traced peak MiB':>16} {'CPU s':>8} {'predicates':>11}")
    for name, phase in _phases(release, members, control, args.multivariate):
        tracemalloc.start()
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        result = phase()
        peak = (tracemalloc.get_traced_memory()[1] - start) / 2**20
        tracemalloc.stop()
        del result
        cpu = time.process_time()
        result = phase()
        cpu = time.process_time() - cpu
        count = len(getattr(result, "predicates_", result))
        print(f"{name:<22} {peak:16.1f} {cpu:8.2f} {count:11d}")


if __name__ == "__main__":
    main()
