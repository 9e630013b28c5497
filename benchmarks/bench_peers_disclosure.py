"""Singling out, linkability and inference on six releases: ours against anonymeter 1.1.0 (#29).

Data: Adult (mglearn's ``adult.data``, duplicates removed; ``--adult PATH``, or mglearn
installed in this Python or in ``--synth-python``), else the Adult-like table of
``bench_disclosure.py`` (said so). Shuffled and split into 1000 members (the generators'
training records), 1000 non-members (the controls of every attack), 5000 reference rows
(kept aside, as in the release audit; no disclosure risk reads them) and a disjoint
population pool. Six releases of ``--release-rows`` rows (default 5000):

* ``gaussiancopula``, ``ctgan``, ``tvae`` — sdv's ``GaussianCopulaSynthesizer``,
  ``CTGANSynthesizer`` and ``TVAESynthesizer`` fitted on the members (defaults; ``--epochs``
  for the two networks), and ``mst`` — smartnoise-synth's MST at ε = 1 (numeric columns
  binned by its preprocessor with their bounds taken from the members, i.e. not private
  bounds: the comparison is about the release, not MST's accounting). They run in
  ``--synth-python`` (a venv with the CPU torch, ``sdv`` and ``smartnoise-synth``), in a
  subprocess on the CSV files. With ``--stand-ins`` (and in the default test suite,
  ``tests/disclosure/test_peers_reduced.py``) they are replaced by ``GaussianMixture``
  stand-ins fitted on the members (one-hot categories, standardised numbers);
* ``halfcopy`` — half the members verbatim plus fresh population rows (truth: linkability
  and inference risk 0.5 for an attacker who finds a copied member's own row);
* ``fresh`` — a fresh population sample (truth: every risk 0).

Each release is written to CSV in a temporary folder (``--keep FOLDER`` to keep them), read
back, and attacked by both tools on the same files:

* ours — :class:`~sklearn_mace.disclosure.SinglingOutRisk` (multivariate, 500 predicates of
  3 columns), :class:`~sklearn_mace.disclosure.LinkabilityRisk` (first half of the columns |
  the rest; ties kept, our default; 1 and 5 neighbours) and
  :class:`~sklearn_mace.disclosure.AttributeInferenceRisk` per column and pooled (one random
  secret per record). Every interval is exact (Clopper–Pearson rates, Bonferroni over the
  two rates; attribute inference intersects it with the failures' odds-ratio interval,
  ``residual_risk(odds_share=0.7)``) and **corrected**: the K rows of one release (singling
  out, 2 linkability, one per column, pooled) are a family, each interval at level ``1 −
  α/K`` (α = 0.05; ``family_size`` and ``family_confidence`` of the library, the release
  card's rule); a row is flagged when its corrected lower bound is above 0;
* anonymeter 1.1.0 (``--anonymeter-python``, a venv with ``anonymeter``; it pins numpy <
  1.27) — ``SinglingOutEvaluator(mode="multivariate", n_attacks=500, n_cols=3)``,
  ``LinkabilityEvaluator`` (same views, 1 and 5 neighbours, every member attacked),
  ``InferenceEvaluator`` per column (every member attacked; ``regression`` for a numeric
  secret). Its intervals are its own (Wilson rates, delta method, 95 %, uncorrected).

The script prints one table (release × analysis × target: our risk [interval] beside
anonymeter's), the median width of the per-column inference intervals per release (ours with
the rates' interval alone, as before, and now; corrected and at 95 %; anonymeter's) with
the columns each flags, the checks of issue #29 (half-copy linkability ours ≥ anonymeter's;
the fresh sample's intervals cover 0), the wall times, and every part it could not run.

Measured (Adult, seed 0, 2 shared cores; CTGAN and TVAE at ``--epochs 50``: CTGAN at sdv's
300 epochs had not finished after 20 min at load 7 and was stopped; the analyses then ran
in one ``--reuse`` invocation on the saved files). Half-copy linkability: ours
0.482 [0.404, 0.551] (1 neighbour) and 0.480 [0.367, 0.574] (5), anonymeter 0.081 [0.064,
0.098] and 0.160 [0.134, 0.186] (truth 0.5). Univariate singling out, half-copy: ours 0.093
[0.017, 0.163], anonymeter 0.098 [0.066, 0.130] (truth 0.1: 500 of 5000 release rows are
members); multivariate flags nothing on either side (ours 0.021 [−0.099, 0.127], anonymeter
0.000). Half-copy inference: both ≈ 0.47 per column; ours pooled 0.526 [0.332, 0.667]; 3 of
our 20 corrected intervals cover 0 (multivariate singling out, capital-loss, income). Fresh
sample: 20 of 20 of ours cover 0. The four generators: no interval of ours excludes 0 (MST's
binned release has no univariate predicate: "no predicate"); anonymeter's uncorrected
intervals exclude 0 for TVAE education 0.076 [0.021, 0.130] and education-num, MST income
0.090 [0.001, 0.180], GaussianCopula native-country 0.158 [0.012, 0.305] and occupation —
ours are 2–6 times wider per column (exact, unclipped, Bonferroni over 20 rows). Ours are
the same from run to run; anonymeter's singling out is not seeded (half-copy univariate 0.092
and 0.098 in two runs). Wall time, same files, same run: ours 26.3 s, anonymeter 209.8 s
(8.0×; load average 2–4 on the 2 shared cores).

With the odds-ratio share (same files; anonymeter's rows from the run above), the median
per-column inference width, corrected, before → now: GaussianCopula 0.306 → 0.251, CTGAN
0.273 → 0.224, TVAE 0.347 → 0.274, MST 0.326 → 0.256, half-copy 0.514 → 0.399 (anonymeter
0.215, uncorrected; 13 → 14 of 15 columns flagged, anonymeter 15), fresh 0.803 → 0.580. At
95 % uncorrected ours flags TVAE education, education-num and occupation; corrected, nothing
on the four generators. ``--inference-neighbors 5`` (majority of 5) widens every release.

    python benchmarks/bench_peers_disclosure.py \
        --synth-python /work/venvs/synth/bin/python --anonymeter-python /work/venvs/peers/bin/python
    python benchmarks/bench_peers_disclosure.py --stand-ins --quick
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.mixture import GaussianMixture

sys.path.insert(0, str(Path(__file__).parent))
from bench_disclosure import adult_like, load_adult  # noqa: E402

from sklearn_mace.disclosure import (  # noqa: E402
    AttributeInferenceRisk,
    LinkabilityRisk,
    SinglingOutRisk,
)
from sklearn_mace.disclosure._rates import family_confidence, residual_risk  # noqa: E402
from sklearn_mace.disclosure._summary import family_size as summary_family_size  # noqa: E402

GENERATORS = ("gaussiancopula", "ctgan", "tvae", "mst")
RELEASES = (*GENERATORS, "halfcopy", "fresh")
NEIGHBOURS = (1, 5)
POOLED = "pooled (one random secret per record)"
COUNTS = ("n_targets", "attack_rate", "n_control", "control_rate")
# GaussianMixture stand-ins: (n_components, covariance_type) per generator
STAND_INS = {
    "gaussiancopula": (1, "full"),
    "ctgan": (10, "diag"),
    "tvae": (5, "full"),
    "mst": (20, "diag"),
}

GENERATE_SCRIPT = r"""
import json, sys, time, warnings
import numpy as np
import pandas as pd
warnings.simplefilter("ignore")
folder, n_rows, seed, epochs, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5].split(",")
members = pd.read_csv(f"{folder}/members.csv")
numeric = [c for c in members.columns if pd.api.types.is_numeric_dtype(members[c])]
categorical = [c for c in members.columns if c not in numeric]


def sdv(kind):
    import torch
    from sdv.metadata import Metadata
    from sdv import single_table
    torch.manual_seed(seed)
    metadata = Metadata.detect_from_dataframes({"adult": members})
    cls = getattr(single_table, kind + "Synthesizer")
    kwargs = {} if kind == "GaussianCopula" else {"epochs": epochs}
    model = cls(metadata, **kwargs)
    model.fit({"adult": members})  # sdv 2.0: tables by name, in and out
    return model.sample(n_rows)["adult"]


def mst():
    from snsynth import Synthesizer
    model = Synthesizer.create("mst", epsilon=1.0)
    bounds = {c: {"lower": int(members[c].min()), "upper": int(members[c].max())}
              for c in numeric}
    from snsynth.transform.table import TableTransformer
    from snsynth.transform import BinTransformer, LabelTransformer
    transformer = TableTransformer(
        [BinTransformer(bins=20, lower=bounds[c]["lower"], upper=bounds[c]["upper"])
         if c in numeric else LabelTransformer() for c in members.columns])
    model.fit(members, transformer=transformer, preprocessor_eps=0.0)
    return pd.DataFrame(model.sample(n_rows), columns=members.columns)


make = {"gaussiancopula": lambda: sdv("GaussianCopula"), "ctgan": lambda: sdv("CTGAN"),
        "tvae": lambda: sdv("TVAE"), "mst": mst}
for name in names:
    np.random.seed(seed)
    start = time.perf_counter()
    try:
        frame = make[name]()[list(members.columns)]
        for c in numeric:  # MST gives bin centres: back on the members' integer grid
            if pd.api.types.is_integer_dtype(members[c]):
                frame[c] = pd.to_numeric(frame[c]).round().astype(members[c].dtype)
        frame.to_csv(f"{folder}/{name}.csv", index=False)
        out = dict(name=name, ok=True, seconds=time.perf_counter() - start)
    except Exception as exc:
        out = dict(name=name, ok=False, error=f"{type(exc).__name__}: {exc}"[:400])
    print(json.dumps(out), flush=True)
"""

ANONYMETER_SCRIPT = r"""
import json, sys, time, warnings
import pandas as pd
from anonymeter.evaluators import (InferenceEvaluator, LinkabilityEvaluator,
                                   SinglingOutEvaluator)
warnings.simplefilter("ignore")
folder, names, ks, n_queries = sys.argv[1], sys.argv[2].split(","), \
    [int(k) for k in sys.argv[3].split(",")], int(sys.argv[4])
members = pd.read_csv(f"{folder}/members.csv")
control = pd.read_csv(f"{folder}/control.csv")
columns = list(members.columns)
half = (len(columns) + 1) // 2


def row(name, analysis, target, make):
    start = time.perf_counter()
    try:
        evaluator = make()
        risk = evaluator.risk()
        out = dict(release=name, analysis=analysis, target=target, anon_risk=risk.value,
                   anon_low=risk.ci[0], anon_high=risk.ci[1])
    except Exception as exc:  # e.g. too few singling-out predicates found
        out = dict(release=name, analysis=analysis, target=target,
                   anon_error=f"{type(exc).__name__}: {exc}"[:200])
    out["anon_seconds"] = time.perf_counter() - start
    print(json.dumps(out), flush=True)


for name in names:
    release = pd.read_csv(f"{folder}/{name}.csv")
    for mode in ("univariate", "multivariate"):
        row(name, "singling out", mode, lambda: SinglingOutEvaluator(
            ori=members, syn=release, control=control, n_attacks=n_queries, n_cols=3
        ).evaluate(mode=mode))
    for k in ks:
        row(name, "linkability", f"{k} neighbour(s)", lambda: LinkabilityEvaluator(
            ori=members, syn=release, control=control, n_attacks=len(members),
            aux_cols=(columns[:half], columns[half:]), n_neighbors=k).evaluate(n_jobs=1))
    for secret in columns:
        row(name, "inference", secret, lambda: InferenceEvaluator(
            ori=members, syn=release, control=control, secret=secret,
            aux_cols=[c for c in columns if c != secret], n_attacks=len(members),
            regression=bool(pd.api.types.is_numeric_dtype(members[secret]))
        ).evaluate(n_jobs=1))
"""


def find_adult(path, synth_python):
    """``(table, source)``: Adult from ``path``, this Python's mglearn or the synth venv's."""
    if path is None and importlib.util.find_spec("mglearn") is None and synth_python:
        found = subprocess.run(
            [synth_python, "-c", "import mglearn, os; print(os.path.dirname(mglearn.__file__))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if found.returncode == 0:
            path = os.path.join(found.stdout.strip(), "data", "adult.data")
    table = load_adult(path)
    return table, "Adult (mglearn adult.data, duplicates removed)"


def split(table, n_members, n_reference, n_release, rng):
    """Members, non-members, reference, the fresh release and the half-copy's fresh rows."""
    table = table.iloc[rng.permutation(len(table))].reset_index(drop=True)
    sizes = [n_members, n_members, n_reference, n_release, n_release - n_members // 2]
    if sum(sizes) > len(table):
        raise ValueError(f"the table has {len(table)} rows; the split needs {sum(sizes)}.")
    edges = np.cumsum([0, *sizes])
    parts = [
        table.iloc[a:b].reset_index(drop=True) for a, b in zip(edges[:-1], edges[1:], strict=True)
    ]
    return dict(zip(["members", "control", "reference", "fresh", "filler"], parts, strict=True))


def half_copy(members, filler, rng):
    """Half the members verbatim and fresh population rows, in a random order."""
    rows = pd.concat([members.iloc[: len(members) // 2], filler], ignore_index=True)
    return rows.iloc[rng.permutation(len(rows))].reset_index(drop=True)


def gaussian_mixture_release(members, n_rows, n_components, covariance_type, seed):
    """A ``GaussianMixture`` stand-in for a generator: one-hot categories, standardised numbers.

    Sampled numbers are put back on the members' scale, rounded for integer columns and
    clipped to the members' range; a category is the largest of its one-hot block.
    """
    numeric = [c for c in members.columns if pd.api.types.is_numeric_dtype(members[c])]
    categorical = [c for c in members.columns if c not in numeric]
    mean, sd = members[numeric].mean(), members[numeric].std().replace(0, 1)
    blocks = [pd.get_dummies(members[c], dtype=float) for c in categorical]
    encoded = np.hstack([((members[numeric] - mean) / sd).to_numpy(), *blocks])
    model = GaussianMixture(n_components, covariance_type=covariance_type, random_state=seed)
    sample, _ = model.fit(encoded).sample(n_rows)
    sample = sample[np.random.default_rng(seed).permutation(n_rows)]  # sample() sorts
    out, at = {}, len(numeric)
    for i, c in enumerate(numeric):
        values = np.clip(sample[:, i] * sd[c] + mean[c], members[c].min(), members[c].max())
        integer = pd.api.types.is_integer_dtype(members[c])
        out[c] = values.round().astype(members[c].dtype) if integer else values
    for c, block in zip(categorical, blocks, strict=True):
        out[c] = block.columns.to_numpy()[sample[:, at : at + block.shape[1]].argmax(axis=1)]
        at += block.shape[1]
    return pd.DataFrame(out)[list(members.columns)]


def stand_in_releases(parts, n_release, seed):
    return {
        name: gaussian_mixture_release(parts["members"], n_release, k, kind, seed)
        for name, (k, kind) in STAND_INS.items()
    }


def generated_releases(python, folder, n_release, seed, epochs, missing):
    """Run the four generators in ``python`` on ``folder/members.csv``; the tables made."""
    made, seconds = {}, {}
    completed = subprocess.run(
        [
            python,
            "-c",
            GENERATE_SCRIPT,
            folder,
            str(n_release),
            str(seed),
            str(epochs),
            ",".join(GENERATORS),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    for line in lines:
        report = json.loads(line)
        if report["ok"]:
            made[report["name"]] = pd.read_csv(f"{folder}/{report['name']}.csv")
            seconds[report["name"]] = report["seconds"]
        else:
            missing.append(f"{report['name']}: {report['error']}")
    if completed.returncode != 0:
        missing.append(
            f"generators ({python}) exited {completed.returncode}: "
            f"{completed.stderr.strip()[-400:]}"
        )
    return made, seconds


def family_size(n_columns, ks=NEIGHBOURS):
    """Rows of one release: singling out (2 modes), linkability per k, inference per column
    and pooled (the library's count, ``disclosure_summary``'s family with ``len(ks)``
    linkability rows)."""
    return summary_family_size(n_columns, n_linkability=len(ks))


def rates_interval(result, confidence):
    """The risk's interval from the two rates alone (every row's interval before issue #29's
    odds-ratio share), recomputed from a result row's counts."""
    n_a, n_c = int(result["n_targets"]), int(result["n_control"])
    k_a = int(round(result["attack_rate"] * n_a))
    k_c = int(round(result["control_rate"] * n_c))
    return residual_risk(k_a, n_a, k_c, n_c, confidence)[1:]


def ours(
    members,
    control,
    tables,
    *,
    alpha=0.05,
    n_queries=500,
    ks=NEIGHBOURS,
    seed=0,
    inference_neighbors=1,
):
    """Our risks, one row per release × analysis × target, each at level ``1 − α/K``
    (``family_confidence``, the release card's correction); ``flagged`` when the corrected
    lower bound is above 0; ``rates_low``/``rates_high``: the rates' interval alone."""
    confidence = family_confidence(1 - alpha, family_size(members.shape[1], ks))
    rows = []
    for name, release in tables.items():
        found = []
        for mode in ("univariate", "multivariate"):
            single = SinglingOutRisk(
                mode=mode, n_queries=n_queries, confidence=confidence, random_state=seed
            )
            try:
                result = single.fit(release).evaluate(members, control).iloc[0]
            except ValueError as exc:  # no predicate isolates a release row: nothing to try
                print(f"ours {name} singling out {mode}: {exc}")
                result = dict(risk=np.nan, risk_low=np.nan, risk_high=np.nan)
            found.append(("singling out", mode, result))
        for k in ks:
            link = LinkabilityRisk(n_neighbors=k, confidence=confidence, random_state=seed)
            result = link.fit(release).evaluate(members, control).iloc[0]
            found.append(("linkability", f"{k} neighbour(s)", result))
        inference = AttributeInferenceRisk(
            n_neighbors=inference_neighbors, confidence=confidence, random_state=seed
        ).fit(release)
        for secret, result in inference.evaluate(members, control).iterrows():
            found.append(("inference", secret, result))
        pooled = inference.evaluate_pooled(members, control).iloc[0]
        found.append(("inference", POOLED, pooled))
        rows += [
            dict(
                release=name,
                analysis=analysis,
                target=target,
                risk=r["risk"],
                risk_low=r["risk_low"],
                risk_high=r["risk_high"],
                confidence=confidence,
                flagged=bool(r["risk_low"] > 0),
                **{key: r.get(key, np.nan) for key in COUNTS},
                **dict(
                    zip(
                        ("rates_low", "rates_high"),
                        rates_interval(r, confidence)
                        if np.isfinite(r.get("n_targets", np.nan))
                        else (np.nan, np.nan),
                        strict=True,
                    )
                ),
            )
            for analysis, target, r in found
        ]
    return pd.DataFrame(rows)


def anonymeter(python, folder, names, ks=NEIGHBOURS, n_queries=500, missing=None):
    completed = subprocess.run(
        [
            python,
            "-c",
            ANONYMETER_SCRIPT,
            folder,
            ",".join(names),
            ",".join(map(str, ks)),
            str(n_queries),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    rows = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith("{")]
    if completed.returncode != 0 and missing is not None:
        missing.append(
            f"anonymeter exited {completed.returncode}: {completed.stderr.strip()[-400:]}"
        )
    for row in rows:
        if "anon_error" in row and missing is not None:
            missing.append(
                f"anonymeter {row['release']} {row['analysis']} {row['target']}: "
                f"{row['anon_error']}"
            )
    return pd.DataFrame(rows)


def _csv(frame):
    """``frame`` through CSV, as the files are read back."""
    import io

    return io.StringIO(frame.to_csv(index=False))


def interval(risk, low, high):
    if np.isnan(low):  # ours found no predicate to try (low is −inf when c's bound is 1)
        return "no predicate"
    if not np.isfinite(risk):  # every control guess right: (a − c)/(1 − c) undefined
        return f"undefined [{low:6.3f}, {high:6.3f}]"
    return f"{risk:6.3f} [{low:6.3f}, {high:6.3f}]"


def checks(mine, theirs):
    """The done-when lines of issue #29, measured."""
    lines = []
    half = mine[(mine.release == "halfcopy") & (mine.analysis == "linkability")]
    for _, row in half.iterrows():
        line = f"halfcopy linkability {row.target}: ours {row.risk:.3f} [{row.risk_low:.3f}, "
        line += f"{row.risk_high:.3f}]"
        if theirs is not None and "anon_risk" in theirs:
            match = theirs[
                (theirs.release == "halfcopy")
                & (theirs.analysis == "linkability")
                & (theirs.target == row.target)
            ]
            if len(match) and np.isfinite(match.anon_risk.iloc[0]):
                a = match.iloc[0]
                verdict = "ours >= anonymeter" if row.risk >= a.anon_risk else "ours BELOW"
                line += f" vs anonymeter {a.anon_risk:.3f} [{a.anon_low:.3f}, {a.anon_high:.3f}]"
                line += f" -> {verdict}"
        lines.append(line)
    for name in ("halfcopy", "fresh"):
        rows = mine[(mine.release == name) & mine.risk_low.notna()]
        if rows.empty:
            continue
        zero = (rows.risk_low <= 0) & (rows.risk_high >= 0)
        lines.append(
            f"{name}: {int(zero.sum())} of {len(rows)} intervals cover 0"
            + ("" if zero.all() else f" (not: {', '.join(rows.target[~zero])})")
        )
    return lines


def _median_width(group, low, high):
    w = (group[high] - group[low]).to_numpy(dtype=float)
    w = w[np.isfinite(w)]
    return float(np.median(w)) if len(w) else np.nan


def _interval_at(row, confidence, odds_share):
    n_a, n_c = int(row.n_targets), int(row.n_control)
    k_a, k_c = int(round(row.attack_rate * n_a)), int(round(row.control_rate * n_c))
    return residual_risk(k_a, n_a, k_c, n_c, confidence, odds_share)[1:]


def widths(mine, theirs):
    """Per release: the median width of the per-column inference intervals and the columns
    flagged (lower bound above 0) — ours before issue #29's odds-ratio share (the rates'
    interval alone) and now, corrected and at 95 % uncorrected, beside anonymeter's."""
    from sklearn_mace.disclosure._inference import ODDS_SHARE

    rows = mine[(mine.analysis == "inference") & (mine.target != POOLED)].copy()
    with np.errstate(all="ignore"):
        plain = [_interval_at(r, 0.95, ODDS_SHARE) for r in rows.itertuples()]
    rows["plain_low"], rows["plain_high"] = np.array(plain).T
    if theirs is not None and "anon_risk" in theirs:
        rows = rows.merge(theirs, on=["release", "analysis", "target"], how="left")
    else:
        rows["anon_low"] = rows["anon_high"] = np.nan
    out = []
    for name, group in rows.groupby("release", sort=False):
        median = partial(_median_width, group)
        out.append(
            dict(
                release=name,
                columns=len(group),
                before=median("rates_low", "rates_high"),
                now=median("risk_low", "risk_high"),
                now_95=median("plain_low", "plain_high"),
                anonymeter_95=median("anon_low", "anon_high"),
                flagged_before=int((group.rates_low > 0).sum()),
                flagged_now=int((group.risk_low > 0).sum()),
                flagged_now_95=int((group.plain_low > 0).sum()),
                flagged_anonymeter=int((group.anon_low > 0).sum())
                if group.anon_low.notna().any()
                else np.nan,
            )
        )
    table = pd.DataFrame(out)
    print(
        "per-column inference intervals, median width (before: the rates' interval alone; "
        "now: with the odds-ratio share; both corrected; _95: 95 % per row, uncorrected; "
        "anonymeter's clipped at 0), and columns flagged (lower bound > 0):"
    )
    print(table.round(3).to_string(index=False))
    return table


def show(mine, theirs):
    table = mine.copy()
    table["ours risk [interval]"] = [
        interval(*r) for r in table[["risk", "risk_low", "risk_high"]].to_numpy()
    ]
    keys = ["release", "analysis", "target"]
    if theirs is not None and "anon_risk" in theirs:
        table = table.merge(theirs, on=keys, how="left")
        offered = table.target != POOLED  # anonymeter has no pooled inference
        table["anonymeter risk [interval] (95 %, uncorrected)"] = [
            interval(*r) if np.isfinite(r[0]) else ("not run" if offer else "(none)")
            for r, offer in zip(
                table[["anon_risk", "anon_low", "anon_high"]].to_numpy(dtype=float),
                offered,
                strict=True,
            )
        ]
    shown = [c for c in table.columns if "[interval]" in c]
    with pd.option_context("display.width", 250, "display.max_rows", 500):
        print(table[keys + shown].to_string(index=False))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--adult", help="path of adult.data (default: mglearn's, if installed)")
    parser.add_argument("--synth-python", help="a Python with sdv and smartnoise-synth")
    parser.add_argument("--anonymeter-python", help="a Python with anonymeter==1.1.0")
    parser.add_argument("--stand-ins", action="store_true", help="GaussianMixture generators")
    parser.add_argument("--epochs", type=int, default=300, help="CTGAN and TVAE epochs")
    parser.add_argument("--release-rows", type=int, default=5000)
    parser.add_argument("--keep", help="write the CSV files here (default: a temporary folder)")
    parser.add_argument(
        "--reuse", action="store_true", help="read the generators' CSVs already in --keep"
    )
    parser.add_argument("--releases", nargs="+", choices=RELEASES, help="analyse only these")
    parser.add_argument("--quick", action="store_true", help="300 members, 1500-row releases")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--inference-neighbors", type=int, default=1, help="our inference attack's neighbours"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    n_members, n_reference = (300, 1500) if args.quick else (1000, 5000)
    n_release = 1500 if args.quick else args.release_rows
    missing = []
    table, source = find_adult(args.adult, args.synth_python)
    if table is None:
        table = adult_like(3 * n_members + n_reference + 2 * n_release, rng)
        source = "Adult-like table (made: mglearn's Adult not found)"
        missing.append("Adult: mglearn not installed here nor in --synth-python, no --adult")
    parts = split(table, n_members, n_reference, n_release, rng)
    print(
        f"{source}: {n_members} members, {n_members} non-members, {n_reference} reference, "
        f"releases of {n_release} rows"
    )
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or scratch
        os.makedirs(folder, exist_ok=True)
        if args.reuse:  # the same split: the seed and sizes of the earlier run
            same = pd.read_csv(f"{folder}/members.csv")
            if not same.equals(pd.read_csv(_csv(parts["members"]))):
                raise SystemExit(f"--reuse: {folder}/members.csv is not this run's members")
        for name in ("members", "control", "reference"):
            parts[name].to_csv(f"{folder}/{name}.csv", index=False)
        members = pd.read_csv(f"{folder}/members.csv")
        control = pd.read_csv(f"{folder}/control.csv")
        start = time.perf_counter()
        reused = {n: f"{folder}/{n}.csv" for n in GENERATORS if os.path.exists(f"{folder}/{n}.csv")}
        if args.reuse:  # the generators' files of an earlier run with --keep FOLDER
            tables = {n: pd.read_csv(path) for n, path in reused.items()}
            made = "read back: " + ", ".join(reused)
            missing += [f"{n}: no {folder}/{n}.csv" for n in GENERATORS if n not in reused]
        elif args.stand_ins:
            tables, made = stand_in_releases(parts, n_release, args.seed), "GaussianMixture"
        elif args.synth_python:
            tables, seconds = generated_releases(
                args.synth_python, folder, n_release, args.seed, args.epochs, missing
            )
            made = ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items())
        else:
            tables, made = {}, "none"
            missing.append("sdv / smartnoise generators: no --synth-python (or --stand-ins)")
        tables["halfcopy"] = half_copy(parts["members"], parts["filler"], rng)
        tables["fresh"] = parts["fresh"]
        if args.releases:  # analyse only these (e.g. the rest of an interrupted run)
            tables = {n: t for n, t in tables.items() if n in args.releases}
        print(f"releases made in {time.perf_counter() - start:.0f} s ({made})")
        for name, release in tables.items():
            release.to_csv(f"{folder}/{name}.csv", index=False)
        tables = {name: pd.read_csv(f"{folder}/{name}.csv") for name in tables}
        start = time.perf_counter()
        mine = ours(
            members, control, tables, seed=args.seed, inference_neighbors=args.inference_neighbors
        )
        our_seconds = time.perf_counter() - start
        theirs = None
        if args.anonymeter_python:
            start = time.perf_counter()
            theirs = anonymeter(args.anonymeter_python, folder, list(tables), missing=missing)
            their_seconds = time.perf_counter() - start
        else:
            missing.append("anonymeter: no --anonymeter-python")
    K = family_size(members.shape[1])
    print(
        f"\nours: exact intervals at {1 - 0.05 / K:.4f} each (Bonferroni over the {K} rows "
        f"of a release, family level 0.95)\n"
    )
    show(mine, theirs)
    print()
    widths(mine, theirs)
    print()
    for line in checks(mine, theirs):
        print(line)
    print(f"\nours: {our_seconds:.1f} s for {len(tables)} releases")
    if theirs is not None:
        print(f"anonymeter 1.1.0: {their_seconds:.1f} s")
    print("\nnot run: " + ("nothing" if not missing else ""))
    for line in missing:
        print(f"  - {line}")


if __name__ == "__main__":
    main()
