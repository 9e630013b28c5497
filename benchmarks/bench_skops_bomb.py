"""The skops zip bomb of issue #25: how long its refusal takes and how much memory it needs.

A fitted random forest is saved with ``skops.io.dump(..., compression=ZIP_DEFLATED)``, and a
deflated ``.npy`` member of zeros is appended to the archive, written a MiB at a time (the
issue's case: a 3 MB ``.skops`` file holding a 3.2 GB array). Each file is then loaded with
``sklearn_mace.report.load_model`` in a fresh interpreter run under ``/usr/bin/time -v``:
its wall time and peak resident memory ("Maximum resident set size") are those of the whole
process — Python, NumPy, scikit-learn and the library imported, the archive's declared sizes
read and the file refused. Before the check, the same file took more than 6 GiB
(``skops.io.get_untrusted_types`` inflates every array to list the types).

Run::

    python benchmarks/bench_skops_bomb.py            # 32 MiB (loads), 600 MiB and 3.2 GB arrays
    python benchmarks/bench_skops_bomb.py --sizes 3200e6

Done when (issue #25): the refusal ends in < 60 s at a peak below 500 MiB.
"""

import argparse
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

CHILD = (
    "import sys\n"
    "from sklearn_mace.report import AuditInputError\n"
    "from sklearn_mace.report._kinds.model._io import load_model\n"
    "try:\n"
    "    load_model(sys.argv[1])\n"
    "    print('loaded')\n"
    "except AuditInputError as exc:\n"
    "    print('refused:', str(exc)[:160])\n"
)


def build(path, n_bytes):
    """A skops forest with a deflated member of ``n_bytes`` zeros; returns seconds taken."""
    import skops.io as sio
    from sklearn.ensemble import RandomForestClassifier

    start = time.perf_counter()
    rng = np.random.default_rng(0)
    forest = RandomForestClassifier(10, random_state=0).fit(
        rng.normal(size=(200, 5)), rng.integers(0, 3, 200)
    )
    sio.dump(forest, path, compression=zipfile.ZIP_DEFLATED)
    chunk = bytes(2**20)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("bomb.npy", "w", force_zip64=True) as member:
            for at in range(0, n_bytes, len(chunk)):
                member.write(chunk[: min(len(chunk), n_bytes - at)])
    return time.perf_counter() - start


def refuse(path):
    """(outcome, wall seconds, peak MiB) of loading ``path`` under /usr/bin/time -v."""
    start = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    seconds = time.perf_counter() - start
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return done.stdout.strip(), seconds, peak / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[32 * 2**20, 600 * 2**20, 3.2e9])
    args = parser.parse_args()
    header = ("declared", "on disk", "build s", "load s", "peak MiB")
    print("{:>10} {:>9} {:>8} {:>10} {:>9}  outcome".format(*header))
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            path = Path(folder) / "bomb.skops"
            path.unlink(missing_ok=True)
            built = build(path, int(size))
            outcome, seconds, peak = refuse(path)
            print(
                f"{size / 2**20:>7.0f} MiB {path.stat().st_size / 2**20:>5.2f} MiB {built:>8.1f} "
                f"{seconds:>10.1f} {peak:>9.0f}  {outcome[:90]}"
            )


if __name__ == "__main__":
    main()
