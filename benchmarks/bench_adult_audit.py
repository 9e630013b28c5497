"""`sklearn-mace audit` end to end on Adult: four releases, all 15 columns, default options.

Adult is the copy shipped in mglearn's wheel (``mglearn/data/adult.data``, 32 561 rows, 15
columns), duplicates removed, shuffled, and split into 1000 members, 1000 non-members, 5000
reference rows and a disjoint population pool. Four releases of 5000 rows each:

* ``leaky`` — each member 5 times, with Gaussian noise of 5 % of the column's standard
  deviation on the numeric columns and each categorical cell replaced, with probability 5 %,
  by a category drawn from the members' marginal;
* ``halfcopy`` — 500 members verbatim and 4500 rows of the ``marginals`` generator;
* ``resample`` (safe) — 5000 rows drawn from the population pool, disjoint from the members:
  what a perfect generator of the population would release;
* ``marginals`` (safe) — independent marginals fitted on the members: every column drawn on
  its own from the members' values (no row is a member's row, joint structure is lost).

The script writes the tables as CSV into a temporary folder, runs
``python -m sklearn_mace audit --members … --non-members … --reference … --synthetic …`` once
for the four releases (a fresh interpreter, default options), and records its wall time
beside a baseline timed in the same run: a fresh interpreter that reads the same CSV files
and encodes them (``sklearn_mace.report.encode_tables``) and nothing more. It prints, per
release: the strongest certified ε and the analysis that gives it, the exact and near copies
of members and non-members, the verdict, and the analyses that failed (the CLI exits 3 then).

Get the data (never committed)::

    pip download mglearn --no-deps -d /tmp/mg
    unzip -o /tmp/mg/mglearn-*.whl 'mglearn/data/adult.data' -d /tmp/mg
    python benchmarks/bench_adult_audit.py --data /tmp/mg/mglearn/data/adult.data

(or ``pip install --no-deps mglearn``, which the script finds by itself). Without the data
it says so and exits 0. Target (issue #12): the four releases in under 60 s on 2 cores.
``--quick`` shrinks every size by 5 (a smoke run).

Measured on branch ``battery`` before the encoder rewrite (2 cores shared with other jobs,
load average 5-7, so the times are upper bounds): all 15 columns, CLI 63.7 s vs 10.4 s for
the baseline (exit 3: DOMIAS fails on every release with a singular covariance, the other
analyses run). ε ≥ 4.23 leaky (MACE), 4.43 halfcopy (exact copy, 500 / 0 copies), 0 for
resample and marginals. With 12 columns (education-num, occupation, native-country left out)
DOMIAS still fails on three releases; CLI 118 s at load 7.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "gender",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
SIZES = dict(n_members=1000, n_non_members=1000, n_reference=5000, n_synthetic=5000)
NOISE = 0.05  # leaky: noise sd as a fraction of each numeric column's sd; category flip rate
HOW_TO_GET = (
    "Adult is not here. Get it (it is never committed):\n"
    "  pip download mglearn --no-deps -d /tmp/mg\n"
    "  unzip -o /tmp/mg/mglearn-*.whl 'mglearn/data/adult.data' -d /tmp/mg\n"
    "  python benchmarks/bench_adult_audit.py --data /tmp/mg/mglearn/data/adult.data"
)
ENCODE_ONLY = """
import sys
from sklearn_mace.report import encode_tables, read_table
paths = sys.argv[1:]
encode_tables({p: read_table(p) for p in paths})
"""


def find_adult(path=None):
    """The path of ``adult.data``: the one given, an installed mglearn's, or /tmp/mg's."""
    candidates = [] if path is None else [Path(path)]
    if path is None:
        spec = importlib.util.find_spec("mglearn")
        if spec is not None and spec.submodule_search_locations:
            candidates.append(Path(spec.submodule_search_locations[0]) / "data" / "adult.data")
        candidates.append(Path("/tmp/mg/mglearn/data/adult.data"))
    return next((p for p in candidates if p.is_file()), None)


def load_adult(path):
    """Adult's 15 columns, duplicates removed."""
    frame = pd.read_csv(path, header=None, names=COLUMNS, skipinitialspace=True)
    return frame.drop_duplicates(ignore_index=True)


def make_tables(population, *, n_members, n_non_members, n_reference, n_synthetic, seed=0):
    """Members, non-members, reference and the four releases (see the module docstring)."""
    rng = np.random.default_rng(seed)
    n_needed = n_members + n_non_members + n_reference + n_synthetic
    if len(population) < n_needed:
        raise ValueError(f"need {n_needed} distinct rows; the population has {len(population)}")
    order = rng.permutation(len(population))
    cuts = np.cumsum([n_members, n_non_members, n_reference, n_synthetic])
    members, non_members, reference, pool = (
        population.iloc[idx].reset_index(drop=True)
        for idx in np.split(order[: cuts[-1]], cuts[:-1])
    )
    numeric = [c for c in population.columns if pd.api.types.is_numeric_dtype(population[c])]
    categorical = [c for c in population.columns if c not in numeric]

    def marginals(n):
        return pd.DataFrame(
            {c: rng.choice(members[c].to_numpy(), size=n) for c in population.columns}
        )

    copies = n_synthetic // n_members
    leaky = pd.concat([members] * copies, ignore_index=True)
    for c in numeric:
        leaky[c] = leaky[c] + NOISE * members[c].std() * rng.normal(size=len(leaky))
    for c in categorical:
        flip = rng.random(len(leaky)) < NOISE
        leaky.loc[flip, c] = rng.choice(members[c].to_numpy(), size=int(flip.sum()))
    n_half = n_members // 2
    halfcopy = pd.concat(
        [members.iloc[:n_half], marginals(n_synthetic - n_half)], ignore_index=True
    )
    halfcopy = halfcopy.iloc[rng.permutation(len(halfcopy))].reset_index(drop=True)
    releases = {
        "leaky": leaky,
        "halfcopy": halfcopy,
        "resample": pool,
        "marginals": marginals(n_synthetic),
    }
    return members, non_members, reference, releases


def _write(folder, members, non_members, reference, releases):
    paths = {
        "members": folder / "members.csv",
        "non-members": folder / "non_members.csv",
        "reference": folder / "reference.csv",
    }
    members.to_csv(paths["members"], index=False)
    non_members.to_csv(paths["non-members"], index=False)
    reference.to_csv(paths["reference"], index=False)
    for name, frame in releases.items():
        paths[name] = folder / f"synthetic_{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def _env():
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def summarize(summary, printed, names):
    """Per release: strongest certified ε and its analysis, copies, verdict, failures."""
    rows = []
    for name in names:
        block = summary[summary["subject"] == name]
        claims = dict(zip(block["analysis"], block["epsilon_lower_bound"], strict=True))
        claims = {k: v for k, v in claims.items() if np.isfinite(v)}
        best = max(claims, key=claims.get) if claims else "—"
        copies = block[block["analysis"].str.startswith("Exact copy")]
        verdict = next(
            (
                line.split("[", 1)[1].split("]", 1)[0]
                for line in printed.splitlines()
                if line.startswith(f"{name}: [")
            ),
            "?",
        )

        def count(column, copies=copies):
            value = copies[column].iloc[0] if len(copies) else np.nan
            return "—" if pd.isna(value) else str(int(value))

        rows.append(
            {
                "release": name,
                "strongest ε": round(claims.get(best, 0.0), 2),
                "from": best if claims.get(best, 0) > 0 else "—",
                "exact copies m / nm": f"{count('member_exact_copies')} / "
                f"{count('nonmember_exact_copies')}",
                "near copies m / nm": f"{count('member_near_copies')} / "
                f"{count('nonmember_near_copies')}",
                "verdict": verdict,
                "failed": ", ".join(block.loc[block["status"] == "failed", "analysis"]) or "—",
            }
        )
    return pd.DataFrame(rows)


def bench(population, *, columns=None, seed=0, python=sys.executable, **sizes):
    """Run the CLI on the four releases made from ``population``; time it and the baseline.

    Returns
    -------
    table : DataFrame
        One row per release (see :func:`summarize`).
    info : dict
        ``wall_s`` (the CLI), ``baseline_s`` (read + encode in a fresh interpreter),
        ``ratio``, ``returncode``, ``stdout``, ``stderr``, ``summary`` (summary.csv).
    """
    sizes = {**SIZES, **sizes}
    members, non_members, reference, releases = make_tables(population, seed=seed, **sizes)
    with tempfile.TemporaryDirectory(prefix="bench-adult-") as tmp:
        folder = Path(tmp)
        paths = _write(folder, members, non_members, reference, releases)
        start = time.perf_counter()
        subprocess.run(
            [python, "-c", ENCODE_ONLY, *(str(p) for p in paths.values())],
            check=True,
            env=_env(),
        )
        baseline = time.perf_counter() - start
        argv = [
            python,
            "-m",
            "sklearn_mace",
            "audit",
            "--members",
            str(paths["members"]),
            "--non-members",
            str(paths["non-members"]),
            "--reference",
            str(paths["reference"]),
            "--synthetic",
            *(f"{name}={paths[name]}" for name in releases),
            "--out",
            str(folder / "out"),
            "--quiet",
        ]
        if columns:
            argv += ["--columns", ",".join(columns)]
        start = time.perf_counter()
        run = subprocess.run(argv, capture_output=True, text=True, env=_env())
        wall = time.perf_counter() - start
        summary_path = folder / "out" / "summary.csv"
        summary = pd.read_csv(summary_path) if summary_path.exists() else None
    info = dict(
        wall_s=wall,
        baseline_s=baseline,
        ratio=wall / baseline,
        returncode=run.returncode,
        stdout=run.stdout,
        stderr=run.stderr,
        summary=summary,
    )
    table = None if summary is None else summarize(summary, run.stdout, list(releases))
    return table, info


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="path of adult.data (default: mglearn's, or /tmp/mg's)")
    parser.add_argument("--columns", help="comma-separated subset (default: all 15)")
    parser.add_argument("--quick", action="store_true", help="every size divided by 5")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = find_adult(args.data)
    if path is None:
        print(HOW_TO_GET)
        return 0
    population = load_adult(path)
    sizes = {k: v // 5 for k, v in SIZES.items()} if args.quick else SIZES
    columns = None if args.columns is None else args.columns.split(",")
    print(
        f"Adult: {len(population)} distinct rows of {population.shape[1]} columns; "
        f"{sizes['n_members']} members, {sizes['n_non_members']} non-members, "
        f"{sizes['n_reference']} reference, 4 releases of {sizes['n_synthetic']} rows; "
        f"columns: {'all' if columns is None else ', '.join(columns)}; "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, {os.cpu_count()} CPUs"
    )
    table, info = bench(population, columns=columns, seed=args.seed, **sizes)
    if table is None:
        print(f"the audit wrote no summary (exit {info['returncode']}):\n{info['stderr']}")
        return 1
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(table.to_string(index=False))
    summary = info["summary"]
    failed = summary[summary["status"] == "failed"]
    for (analysis, reason), block in failed.groupby(["analysis", "reason"], sort=False):
        print(f"failed on {', '.join(block['release'])}: {analysis}: {reason[:300]}")
    print(
        f"CLI wall {info['wall_s']:.1f} s (exit {info['returncode']}); baseline (fresh "
        f"interpreter, read + encode only) {info['baseline_s']:.1f} s; ratio "
        f"{info['ratio']:.1f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
