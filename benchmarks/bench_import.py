"""Import time of sklearn-mace against ``import sklearn.neighbors, scipy.stats``.

Each statement runs in a fresh interpreter (``python -c``), ``--repeat`` times, the
statements interleaved round-robin so that background load hits them alike. The table shows
the median wall time, the median net of an empty interpreter (``pass``), and the ratio of the
net time to the baseline's, measured in the same run. Target (issue #11): ``import
sklearn_mace`` at most 1.5× the baseline.

    python benchmarks/bench_import.py [--repeat 9]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = "import sklearn.neighbors, scipy.stats"
TARGET = 1.5
STATEMENTS = [
    ("empty interpreter", "pass"),
    ("baseline", BASELINE),
    ("import sklearn_mace", "import sklearn_mace"),
    ("import sklearn_mace.metrics, .attacks", "import sklearn_mace.metrics, sklearn_mace.attacks"),
    (
        "sklearn-mace --help",
        "from sklearn_mace.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass",
    ),
    (
        "numpy estimators",
        "from sklearn_mace import BayesOptimalMIA, KDEAdvantageEstimator, DOMIASAttack",
    ),
    ("a metric", "from sklearn_mace.metrics import tpr_at_fpr"),
    ("torch (for scale)", "import torch"),
    ("a torch model (GAN)", "from sklearn_mace.generative import JSGAN"),
]


def time_statement(code):
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs per statement")
    args = parser.parse_args(argv)
    for _, code in STATEMENTS:  # warm the file cache once
        time_statement(code)
    times = {label: [] for label, _ in STATEMENTS}
    for _ in range(args.repeat):
        for label, code in STATEMENTS:
            times[label].append(time_statement(code))
    median = {label: statistics.median(t) for label, t in times.items()}
    empty = median["empty interpreter"]
    base_net = median["baseline"] - empty
    print(f"{args.repeat} fresh interpreters per row, medians; {sys.executable}")
    print(f"{'statement':<36} {'wall s':>7} {'net s':>7} {'net / baseline':>15}")
    for label, _ in STATEMENTS:
        net = median[label] - empty
        ratio = "" if label == "empty interpreter" else f"{net / base_net:.3f}"
        print(f"{label:<36} {median[label]:7.3f} {net:7.3f} {ratio:>15}")
    ratio = (median["import sklearn_mace"] - empty) / base_net
    verdict = "meets" if ratio <= TARGET else "MISSES"
    print(f"`import sklearn_mace` = {ratio:.2f} x baseline ({BASELINE}): {verdict} ≤ {TARGET}x")


if __name__ == "__main__":
    main()
