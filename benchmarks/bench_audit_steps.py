"""`sklearn-mace audit` traced step by step in-process: the peak resident memory of each step.

Writes the tables of ``bench_audit_load.make_tables`` (``--members`` members and as many
non-members, ``--rows`` synthetic rows, ``--columns`` Gaussian columns) as CSV under
``--folder`` (kept: a second run reuses them), then runs the CLI audit in this interpreter
with the disclosure risks on, ``/proc/self/clear_refs`` resetting VmHWM before each step:
reading, the input preparation, the let-go of the raw release, every shared step and
analysis of the engine, the second read of the release and the disclosure risks. Each row:
the step's peak (VmHWM), the resident memory after it (VmRSS), its CPU and wall seconds.
``--source`` names another source tree to trace (the code before), run in a child.

    python benchmarks/bench_audit_steps.py --rows 10000000 --folder /tmp/audit10m

Issue #28 (the CLI's release read again for the disclosure risks, so that the raw table is
let go before the analyses), 600 + 600 targets, 10 million rows × 6 columns, on 2 shared
cores (load average 0.7-2.2), the code before (a clean export of the same commit) / after:

    step                               before peak  after peak   after CPU s
    reading the tables                        927         927           4.1
    input preparation                        1520        1520           5.0
    let go (fingerprint of the table)           -        1444           0.2
    nearest-synthetic distances              1488        1030          16.6
    DOMIAS                                   2049        1551          25.3
    MC (Hilprecht)                           1500        1050          11.8
    figure points (10/25/50 %)          1447-1469   987-1022          13.6
    second read (and its fingerprint)           -         970           4.0
    disclosure risks                         1740        1766         277.2
    whole run (CPU s)                       357.3       360.5

summary.csv, disclosure.csv and records.csv byte for byte the same.
"""

import argparse
import functools
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
    return float("nan")


def _reset():
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")  # VmHWM back to the current resident memory


def _traced(rows, label_of, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        label = label_of(args)
        _reset()
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            rows.append((label, _status("VmHWM"), _status("VmRSS"), cpu, wall))
            _reset()

    return wrapper


def trace(folder, out):
    """Run the audit on ``folder``'s tables with every step traced; print the table."""
    from sklearn_mace.cli import main
    from sklearn_mace.report import _arguments
    from sklearn_mace.report._kinds.release import _audit

    rows = []
    _arguments.read_inputs = _traced(rows, lambda a: "reading the tables", _arguments.read_inputs)
    _audit.prepare_release_inputs = _traced(
        rows, lambda a: "input preparation", _audit.prepare_release_inputs
    )
    if hasattr(_audit, "_read_again"):  # the code before has neither
        _audit._let_go = _traced(rows, lambda a: "let go (fingerprint)", _audit._let_go)
        _audit._read_again = _traced(rows, lambda a: "second read", _audit._read_again)
    _audit.run_disclosure = _traced(rows, lambda a: "disclosure risks", _audit.run_disclosure)
    _audit.ReleaseAudit.run_step = _traced(rows, lambda a: a[3], _audit.ReleaseAudit.run_step)
    argv = ["audit", "--members", str(folder / "members.csv")]
    argv += ["--non-members", str(folder / "non-members.csv")]
    argv += ["--synthetic", f"release={folder / 'synthetic.csv'}", "--out", str(out)]
    cpu, wall = time.process_time(), time.perf_counter()
    code = main([*argv, "--quiet", "--device", "cpu"])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"exit {code}, {cpu:.1f} CPU s, {wall:.1f} s wall")
    print(f"{'step':52s} {'peak MiB':>9s} {'after MiB':>9s} {'CPU s':>7s} {'wall s':>7s}")
    for label, peak, rss, cpu, wall in rows:
        print(f"{label:52s} {peak:9.0f} {rss:9.0f} {cpu:7.1f} {wall:7.1f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="synthetic rows")
    parser.add_argument("--columns", type=int, default=6, help="Gaussian columns")
    parser.add_argument("--members", type=int, default=600, help="members (and non-members)")
    parser.add_argument("--folder", type=Path, required=True, help="where the CSV files go")
    parser.add_argument("--source", type=Path, default=None, help="another source tree")
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.traced:
        return trace(args.folder, args.folder / "out")
    if not (args.folder / "synthetic.csv").exists():
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_audit_load import make_tables

        args.folder.mkdir(parents=True, exist_ok=True)
        tables = make_tables(args.members, args.members, args.rows, 0, n_features=args.columns)
        for name, frame in tables.items():
            frame.to_csv(args.folder / f"{name}.csv", index=False)
        del tables
    source = ROOT if args.source is None else args.source.resolve()
    # a child in the traced tree: its own interpreter, nothing of this one's memory
    child = [sys.executable, str(Path(__file__).resolve()), "--folder", str(args.folder)]
    env = {**os.environ, "PYTHONPATH": str(source)}
    subprocess.run([*child, "--traced"], cwd=source, env=env, check=True)


if __name__ == "__main__":
    main()
