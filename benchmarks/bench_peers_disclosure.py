"""Singling out, linkability and pooled inference: ours against anonymeter 1.1.0 (issue #29).

The tables and releases of ``bench_disclosure.py`` (Adult from mglearn when installed, else
its Adult-like table; 1000 members, 1000 control, four releases of 5000 rows: ``leaky``,
``halfcopy`` = 500 members verbatim + 4500 independent-marginal rows, ``marginals``,
``population``). For each release, one row per analysis:

* singling out, univariate and multivariate (ours: :class:`SinglingOutRisk`, 500 predicates,
  3 columns; anonymeter: ``SinglingOutEvaluator``, ``n_attacks=500``, ``n_cols=3``);
* linkability, first half of the columns | the rest, 1 and 5 neighbours (ours with ties kept,
  the default, and with anonymeter's rule ``ties="random"``; anonymeter's
  ``LinkabilityEvaluator``);
* attribute inference pooled over the columns (ours only: one random secret per record).

Truth for ``halfcopy``: a share q = 0.5 of the members is in the release, so linkability
(and inference) risk 0.5 for an attacker who finds a copied member's own row.

    python benchmarks/bench_peers_disclosure.py [--anonymeter-python /work/venvs/peers/bin/python]
    python benchmarks/bench_peers_disclosure.py --quick
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_disclosure import adult_like, load_adult, releases  # noqa: E402

from sklearn_mace.disclosure import (  # noqa: E402
    AttributeInferenceRisk,
    LinkabilityRisk,
    SinglingOutRisk,
)

ANONYMETER_SCRIPT = r"""
import json, sys, warnings
import pandas as pd
from anonymeter.evaluators import LinkabilityEvaluator, SinglingOutEvaluator
warnings.simplefilter("ignore")
folder, names = sys.argv[1], sys.argv[2].split(",")
members = pd.read_csv(f"{folder}/members.csv")
control = pd.read_csv(f"{folder}/control.csv")
columns = list(members.columns)
half = (len(columns) + 1) // 2
out = []

def row(name, analysis, target, evaluator, seconds):
    res, risk = evaluator.results(), evaluator.risk()
    return dict(release=name, analysis=analysis, target=target, attack=res.attack_rate.value,
                control=res.control_rate.value, risk=risk.value, risk_low=risk.ci[0],
                risk_high=risk.ci[1], seconds=seconds)

import time
for name in names:
    release = pd.read_csv(f"{folder}/{name}.csv")
    for mode in ("univariate", "multivariate"):
        start = time.perf_counter()
        try:
            ev = SinglingOutEvaluator(ori=members, syn=release, control=control, n_attacks=500,
                                      n_cols=3).evaluate(mode=mode)
            out.append(row(name, "singling out", mode, ev, time.perf_counter() - start))
        except Exception as exc:  # anonymeter raises when it finds too few predicates
            out.append(dict(release=name, analysis="singling out", target=mode,
                            error=str(exc)[:80]))
    for k in (1, 5):
        start = time.perf_counter()
        ev = LinkabilityEvaluator(ori=members, syn=release, control=control,
                                  n_attacks=len(members), aux_cols=(columns[:half], columns[half:]),
                                  n_neighbors=k).evaluate(n_jobs=1)
        out.append(row(name, "linkability", f"k={k}", ev, time.perf_counter() - start))
print(json.dumps(out))
"""


def ours(members, control, tables, seed):
    rows, start = [], time.perf_counter()
    for name, release in tables.items():
        for mode in ("univariate", "multivariate"):
            risk = SinglingOutRisk(mode=mode, n_queries=500, random_state=seed).fit(release)
            rows.append(("singling out", mode, risk.evaluate(members, control).iloc[0]))
            rows[-1] = (name, *rows[-1])
        for k in (1, 5):
            for ties in ("keep", "random"):
                risk = LinkabilityRisk(n_neighbors=k, ties=ties, random_state=seed).fit(release)
                result = risk.evaluate(members, control).iloc[0]
                rows.append(
                    (name, "linkability", f"k={k}" + ("" if ties == "keep" else " random"), result)
                )
        pooled = AttributeInferenceRisk(random_state=seed).fit(release)
        rows.append(
            (name, "inference (pooled)", "-", pooled.evaluate_pooled(members, control).iloc[0])
        )
    frame = pd.DataFrame(
        [
            {
                "release": name,
                "analysis": analysis,
                "target": target,
                "attack": r["attack_rate"],
                "control": r["control_rate"],
                "risk": r["risk"],
                "interval": f"[{r['risk_low']:.2f}, {r['risk_high']:.2f}]",
            }
            for name, analysis, target, r in rows
        ]
    )
    return frame, time.perf_counter() - start


def anonymeter(python, folder, names):
    start = time.perf_counter()
    completed = subprocess.run(
        [python, "-c", ANONYMETER_SCRIPT, folder, ",".join(names)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"anonymeter failed:\n{completed.stderr[-3000:]}")
    frame = pd.DataFrame(json.loads(completed.stdout.strip().splitlines()[-1]))
    if "risk_low" in frame:
        frame["anon interval"] = [
            f"[{lo:.2f}, {hi:.2f}]" if np.isfinite(lo) else ""
            for lo, hi in frame[["risk_low", "risk_high"]].to_numpy(dtype=float)
        ]
    keep = ["release", "analysis", "target", "attack", "control", "risk", "anon interval"]
    frame = frame[[c for c in keep if c in frame]]
    frame = frame.rename(columns={c: f"anon {c}" for c in ("attack", "control", "risk")})
    return frame, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--adult", help="path of adult.data (default: mglearn's, if installed)")
    parser.add_argument("--anonymeter-python", help="a Python with anonymeter==1.1.0")
    parser.add_argument("--quick", action="store_true", help="300 members, 1500-row releases")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    n_members, n_release = (300, 1500) if args.quick else (1000, 5000)
    table = load_adult(args.adult)
    source = "Adult (mglearn adult.data, duplicates removed)"
    if table is None:
        table, source = adult_like(3 * n_members + n_release, rng), "Adult-like table (made)"
    table = table.iloc[rng.permutation(len(table))].reset_index(drop=True)
    members, control = table.iloc[:n_members], table.iloc[n_members : 2 * n_members]
    pool = table.iloc[2 * n_members :].reset_index(drop=True)
    tables = releases(members.reset_index(drop=True), pool, n_release, rng)
    print(f"{source}: {n_members} members, {n_members} control, releases of {n_release} rows")
    with tempfile.TemporaryDirectory() as folder:  # both sides read the same CSV files
        members.to_csv(f"{folder}/members.csv", index=False)
        control.to_csv(f"{folder}/control.csv", index=False)
        for name, release in tables.items():
            release.to_csv(f"{folder}/{name}.csv", index=False)
        members = pd.read_csv(f"{folder}/members.csv")
        control = pd.read_csv(f"{folder}/control.csv")
        tables = {name: pd.read_csv(f"{folder}/{name}.csv") for name in tables}
        mine, seconds = ours(members, control, tables, args.seed)
        theirs = None
        if args.anonymeter_python:
            theirs, their_seconds = anonymeter(args.anonymeter_python, folder, list(tables))
    shown = (
        mine
        if theirs is None
        else mine.merge(theirs, on=["release", "analysis", "target"], how="left")
    )
    with pd.option_context("display.width", 250, "display.max_rows", 500):
        print(shown.round(3).to_string(index=False))
    print(f"\nours: {seconds:.1f} s for {len(tables)} releases")
    if theirs is not None:
        print(f"anonymeter 1.1.0: {their_seconds:.1f} s")


if __name__ == "__main__":
    main()
