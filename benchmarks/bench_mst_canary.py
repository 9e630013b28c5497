"""smartnoise-synth's MST (and AIM) at (ε, δ) = (1, 1e-2) against a worst-case canary (#30).

Two datasets (``--design``), each fixed, with ``--rows`` records:

* ``rare`` — ``--columns`` categorical columns of ``--values`` values each, drawn uniformly
  from all values but the last; the canary is the record whose every value is the last one:
  a unique combination of values no other record has;
* ``select`` — a canary that moves MST's tree selection (3 binary columns,
  :func:`make_data`): every pair's candidate score (the L1 error of its 2-way marginal
  against the model fitted to the noisy 1-way marginals) ties, and adding the canary
  raises one pair's score by 1 (its cell is under-estimated by the model) and lowers the
  two others' by 1 (over-estimated). On ``rare`` the canary's cell is empty in every pair,
  so it raises every score by about 1 and barely moves the choice.

Each run fits ``snsynth``'s ``MSTSynthesizer(epsilon, delta)`` (``--synthesizer aim``:
``AIMSynthesizer``) on the dataset with the canary (member runs) or without it
(non-member runs), alternately, ``--runs`` times per side (add/remove-one). The runs
execute in ``--synth-python`` (a Python with ``smartnoise-synth`` 1.0.8), in a child process
that writes one line of features per run; this Python certifies them. snsynth draws its
Gaussian noise from OpenDP's generator, which takes no seed: the runs are independent but
not reproducible, and two invocations give different numbers (``--stream`` gives parallel
invocations distinct streams for the exponential mechanism's generator; ``--reuse --also``
certifies several kept folders of one setting together).

Two domains:

* ``public`` — the domain is given as public metadata: snsynth's ``TableTransformer`` is
  fitted on the list of values, not on the data (the correct use);
* ``data`` — snsynth's default (``transformer=None``): the categories are read from the
  training data, so the canary's values exist in the domain only when the canary is in the
  data. This is the metadata bug of Annamalai et al. (USENIX Security 2024): a value no
  other record has can only be released when the canary was there.

Features of a run (all about the canary):

* ``whitebox`` (MST, public domain, ``--features whitebox``) — the log-likelihood ratio of
  MST's whole transcript up to its last measurement, ``log p(run | D ∪ canary) − log p(run
  | D)``: by Neyman–Pearson the most powerful test of that pair. It is the sum of

  - ``gauss``, the Gaussian measurements' (the 1-way marginals before compression, and the
    2-way marginals of the selected tree on the compressed domain): ``Σ (y_c − x_c − ½)/σ²``
    over each measurement's canary cell ``c`` (``x_c`` that cell's count without the
    canary), from snsynth's own ``measure`` calls (a subclass records what they return).
    Under add/remove MST's two Gaussian steps (ρ/3 each) make it exactly
    ``N(±μ_G²/2, μ_G²)`` (members +) with ``μ_G = √(4ρ/3)``;
  - ``select``, the tree selection's (the third ρ/3): for each exponential-mechanism step,
    ``log P(chosen edge | D ∪ canary) − log P(chosen edge | D)``. The subclass records
    each step's scores ``q``, scale and choice from snsynth's own ``exponential_mechanism``
    call (``0.5·ε/sensitivity``, ε = √(8(ρ/3)/(r − 1)), sensitivity 1, as in
    ``MSTSynthesizer.select``); the other hypothesis's scores are recomputed with snsynth's
    own call (``mirror_descent`` on the same noisy 1-way measurements, 1 000 iterations, the
    other dataset's row count as ``known_total``), and the steps are replayed with snsynth's
    candidate rule (a replay that differs from the recorded scores stops the run; the
    first ``--verify`` pairs of runs also recompute the run's own scores and print the
    largest difference from snsynth's).

  Nothing of MST is changed; a run stops after the last measurement (the model fit and
  the release are post-processing). The script prints each part's mean and spread beside
  its derived law (:func:`selection_law`: the selection's exact law with ideal ties) and
  the mean exact KL divergence of the recorded steps.
* ``count`` — black box: rows of a release of ``--rows`` rows equal to the canary.
* ``rare`` — black box: release rows holding the canary's value in column 0.

The claim. MST and AIM spend ``ρ = cdp_rho(ε, δ)`` (snsynth's conversion; 0.1034 at
(1, 1e-2)). The μ it *implies* — the μ of Gaussian mechanisms with the same ρ, the figure
the 2026 "Tight auditing of DP in MST and AIM" study compares against (0.45) — is
``√(2ρ)`` = 0.455; MST's Gaussian measurements alone are ``√(4ρ/3)`` = 0.371-GDP (0.816 of
it), so a test of them can never show more than 0.816 of the implied μ. The runs of each
feature are certified by the library, three ways:

* ``split`` — :func:`sklearn_mace.algorithm._audit.certify_rule`, the rule
  ``AlgorithmAudit`` applies to each target (``attack_fraction=0.5``): half of each side
  chooses the threshold, the other half gets exact Clopper–Pearson bounds (95 %);
* ``fixed`` — a threshold fixed before any run (0 for the log-likelihood ratio, the equal
  error point of its two Gaussians; "appears at least once" for the counts), every run
  certifying (:func:`sklearn_mace.metrics.audit_epsilon` with an explicit threshold);
* ``rank`` — the library's rank test on every run (``certificate="rank_test"``'s grid of
  ranks fixed by the sample sizes, 95 %): ε at δ from ``rank_grid_epsilon``, μ from
  ``rank_grid_mu`` (the μ-GDP test of issue #30; NaN in a tree without it).

The certified point is read as a μ (``mu_from_error_bounds``, AlgorithmAudit's
``mu_lower_bounds_``; threshold at equal error rates, the μ-GDP claim's choice) and as an ε
at δ = 1e-2 against ``PrivacyClaim.approximate(1, 1e-2)`` (threshold chosen for that
claim). ``attainable μ`` is what one threshold attains on average at that many certifying
runs if the true μ is ``μ_G`` (``bench_algorithm_tightness.attainable_mu``).

Measured, ``select`` design (issue #30's MST item), 4 323 runs per side (three streams,
``nice -n 10``, 2 shared cores at load 4–12; 6 464 s CPU, 0.75 s per run with the
counterfactual selection scores; rank μ from ``rank_grid_mu`` as in the issue #30 rank-test
branch): whole-transcript LLR, fixed threshold 0: μ **0.386 = 0.849 of the implied 0.455**
(attainable 0.365 = 0.802); rank test μ **0.416 = 0.915**; AlgorithmAudit's split rule 0.359
= 0.790 (attainable 0.333); (1, 1e-2) kept by all. Parts: Gaussian measurements alone 0.322
fixed / 0.336 rank; selection alone 0.217 fixed / 0.221 rank. Statistic against its derived
law: members +0.0966 sd 0.426, non-members −0.1060 sd 0.446 (derived +0.0951 sd 0.433 /
−0.0963 sd 0.441); selection part +0.0260 / −0.0318 (derived +0.0262 / −0.0273); replayed
scores equal snsynth's (18 runs, difference 0). Derived population μ of the test 0.440 (0.967);
0.8 attainable with a fixed threshold needs about 4 259 certifying runs per side. Rank test
on 24 audits drawn from the derived law at 1 700 runs per side: mean μ 0.373 (0.82).
``--design total`` (15 runs per side): snsynth's selection scores move by up to 1.671 when
the canary is added (``known_total`` is the true row count), beyond the sensitivity 1 the
exponential mechanism is calibrated for under add/remove — a probe, not a certified audit.

Earlier, ``rare`` design (the ``whitebox`` rows below are the Gaussian part alone):

Measured (2 shared cores at load 5–14, ``nice -n 5``; 300 rows × 3 columns of 4 values;
runs/side, certifying runs/side; ε at δ = 1e-2 and its verdict on (1, 1e-2); μ and its
ratio to the implied 0.455; attainable μ at that many certifying runs):

    ========================  ======  =====  ====  =====  ======  =====  ==========
    setting, feature, rule    runs    cert.  ε     (1,δ)  μ       ratio  attainable
    ========================  ======  =====  ====  =====  ======  =====  ==========
    MST public, whitebox      1 478   739    0.14  kept   0.166   0.37   0.188
      split (AlgorithmAudit)
    MST public, whitebox      1 478   1 478  0.20  kept   0.269   0.59   0.242
      fixed threshold 0
    MST data, rare, split     100     50     2.25  contr. 1.95    4.29   —
    MST data, rare, fixed     100     100    2.99  contr. 2.41    5.30   —
    AIM data, rare, split     42      21     0.72  kept   0.58    1.27   —
    AIM data, rare, fixed     42      42     1.72  contr. 1.33    2.92   —
    ========================  ======  =====  ====  =====  ======  =====  ==========

* Cost: one MST run 0.47–0.49 s CPU up to the last measurement, 1.2–1.4 s with the model
  fit and a 300-row release; one AIM run 4.1 s. The table's runs: 1 447 s CPU (white-box,
  two streams of 1 003 and 475 pairs merged), 277 s (MST data), 347 s (AIM): 35 CPU-minutes,
  about 70 minutes of wall time at that load.
* MST, public domain, white-box: the statistic matches its closed form (members' mean
  +0.063, sd 0.377; non-members' −0.076, sd 0.366; closed form ±0.069, sd 0.371). Empirical
  μ 0.37 of the implied μ with AlgorithmAudit's split rule and 0.59 with the fixed
  threshold (attainable on average 0.41 and 0.53: the fixed figure is a lucky draw); the
  (1, 1e-2) claim is kept, as it should be. **Not** the issue's 0.8: by the attainable
  bound, reading only the Gaussian measurements needs about 400 000 certifying runs per
  side for 0.8 (0.792 at 200 000; the ceiling is 0.816), over 100 CPU-hours here; a test
  that also exploited the tree selection (true μ up to 0.455) would need about 3 000
  certifying runs per side (0.80 attainable) and a dataset on which the canary moves the
  candidate edges' scores in opposite directions — built since: the ``select`` design
  above (0.849 at 4 323 runs per side).
* The metadata bug (domain from the data, snsynth's default) reproduces in MST and AIM:
  the canary's value is never released without the canary (FPR 0) and often with it (82 %
  of MST's member releases, 64 % of AIM's); the (1, 1e-2) claim is contradicted, and the
  release is not μ-GDP for μ up to 2.41 (MST) and 1.33 (AIM), against the implied 0.455.
  The canary's exact combination is released in 8 % of MST's member runs (0 % without).

    python benchmarks/bench_mst_canary.py --synth-python /work/venvs/synth/bin/python \\
        --runs 1000 --features whitebox --keep runs/mst-public
    python benchmarks/bench_mst_canary.py --synth-python /work/venvs/synth/bin/python \\
        --runs 100 --domain data
    python benchmarks/bench_mst_canary.py --synth-python /work/venvs/synth/bin/python \\
        --synthesizer aim --runs 40 --domain data

(``--keep FOLDER --append`` adds runs to a kept setting; ``--reuse`` certifies them again.)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

CHILD = r'''
import contextlib, io, itertools, json, resource, sys, time, warnings
import numpy as np
import pandas as pd
from disjoint_set import DisjointSet
from mbi import Dataset
from scipy.special import logsumexp

warnings.filterwarnings("ignore")
from snsynth.aim import AIMSynthesizer
from snsynth.mst import MSTSynthesizer
from snsynth.mst import mst as snsynth_mst  # its own mirror_descent and marginal oracle
from snsynth.transform.table import TableTransformer
from snsynth.utils import cdp_rho

config = json.loads(open(sys.argv[1]).read())
out = open(sys.argv[2], "w")
data = np.asarray(config["data"], dtype=int)
canary = np.asarray(config["canary"], dtype=int)
n_values, names = config["values"], [f"c{j}" for j in range(data.shape[1])]
whitebox_only = config["features"] == "whitebox"


class Measured(Exception):
    """Raised after MST's last noisy measurement when only those are read."""


class RecordingMST(MSTSynthesizer):
    """snsynth's MST; records what its own measure/transform_data calls return."""

    def measure(self, data, cliques, sigma, weights=None):
        log = super().measure(data, cliques, sigma, weights)
        self.logs.append(log)
        if whitebox_only and len(self.logs) == 2:
            raise Measured  # the rest (mirror descent, sampling) is post-processing
        return log

    def transform_data(self, data, supports):
        self.supports = supports
        return super().transform_data(data, supports)

    def exponential_mechanism(self, q, eps, sensitivity, prng=np.random, monotonic=False):
        idx = super().exponential_mechanism(q, eps, sensitivity, prng, monotonic)
        coef = (1.0 if monotonic else 0.5) * eps / sensitivity  # snsynth's own scale
        self.steps.append((np.array(q, dtype=float), coef, int(idx)))
        return idx

    def select(self, data, rho, measurement_log, total, cliques=[]):
        self.steps = []
        edges = super().select(data, rho, measurement_log, total, cliques)
        if whitebox_only and not cliques:
            self.selection = selection_llr(self, data, measurement_log, total)
        return edges


def public_transformer():
    values = pd.DataFrame({name: np.arange(n_values) for name in names})
    transformer = TableTransformer.create(
        values, style="cube", categorical_columns=names, nullable=False
    )
    transformer.fit(values)
    return transformer


def compressed(codes, support):
    """MST's transform_data mapping of one column's codes."""
    rank = np.cumsum(support) - 1
    return np.where(support[codes], rank[codes], support.sum())


def whitebox(model):
    """LLR of the Gaussian measurements: Σ (y_c − x_c − ½)/σ² over the canary's cells."""
    score = 0.0
    for m in model.logs[0]:  # 1-way marginals, full domain (codes = values: public domain)
        j = int(m.clique[0].removeprefix("col"))  # MST names its columns col0, col1, …
        x = np.sum(data[:, j] == canary[j])
        score += (float(np.asarray(m.noisy_measurement)[canary[j]]) - x - 0.5) / m.stddev**2
    for m in model.logs[1]:  # 2-way marginals of the tree, compressed domain
        a, b = (int(c.removeprefix("col")) for c in m.clique)
        sa, sb = model.supports[m.clique[0]], model.supports[m.clique[1]]
        ca = compressed(canary[[a]], sa)[0]
        cb = compressed(canary[[b]], sb)[0]
        x = np.sum((compressed(data[:, a], sa) == ca) & (compressed(data[:, b], sb) == cb))
        size_b = sb.sum() + (sb.sum() < sb.size)
        y = float(np.asarray(m.noisy_measurement)[ca * size_b + cb])
        score += (y - x - 0.5) / m.stddev**2
    return score


def edge_scores(data, log, total):
    """snsynth's candidate scores (MSTSynthesizer.select): the L1 error of each pair's
    2-way marginal against the model fitted to the 1-way measurements, same call."""
    est = snsynth_mst.estimation.mirror_descent(
        data.domain, log, known_total=float(total), iters=1000,
        marginal_oracle=snsynth_mst.marginal_oracles.message_passing_stable,
    )
    return {
        (a, b): np.linalg.norm(
            data.project([a, b]).datavector() - est.project([a, b]).datavector(), 1
        )
        for a, b in itertools.combinations(data.domain.attrs, 2)
    }


def neighbour(model, data):
    """The compressed dataset of the other hypothesis: the canary added or removed."""
    codes = {
        f"col{j}": int(compressed(canary[[j]], model.supports[f"col{j}"])[0])
        for j in range(len(canary))
    }
    columns = {name: np.asarray(v) for name, v in data.to_dict().items()}
    if model.member:  # remove one copy of the canary
        hit = np.ones(len(next(iter(columns.values()))), dtype=bool)
        for name, code in codes.items():
            hit &= columns[name] == code
        keep = np.arange(hit.size) != np.flatnonzero(hit)[0]
        columns = {name: v[keep] for name, v in columns.items()}
    else:
        columns = {name: np.append(v, codes[name]) for name, v in columns.items()}
    return Dataset(columns, data.domain), (-1 if model.member else 1)


def selection_llr(model, data, log, total):
    """The tree selection's log-likelihood ratio log P(edges | D ∪ canary) − log P(edges | D),
    replaying snsynth's select loop on the recorded choices: the scores on the run's own
    data are the recorded ones; those of the other hypothesis are recomputed with the same
    noisy 1-way measurements (public in the transcript) and that dataset's own total (which
    snsynth passes as known_total)."""
    other, shift = neighbour(model, data)
    theirs = edge_scores(other, log, total + shift)
    candidates = list(itertools.combinations(data.domain.attrs, 2))
    ours = dict(zip(candidates, model.steps[0][0]))  # first step: every pair
    check = np.nan
    if model.verify:  # the replay's own scores equal snsynth's
        mine = edge_scores(data, log, total)
        check = max(abs(mine[e] - ours[e]) for e in candidates)
    ds, llr, kl_plus, kl_minus = DisjointSet(), 0.0, 0.0, 0.0
    for q, coef, idx in model.steps:
        candidates = [e for e in candidates if not ds.connected(*e)]
        assert np.array_equal(q, [ours[e] for e in candidates]), "replay differs from select"
        q_other = np.array([theirs[e] for e in candidates])
        own = coef * q - logsumexp(coef * q)
        alt = coef * q_other - logsumexp(coef * q_other)
        plus, minus = (own, alt) if model.member else (alt, own)
        llr += plus[idx] - minus[idx]
        kl_plus += float(np.sum(np.exp(plus) * (plus - minus)))
        kl_minus += float(np.sum(np.exp(minus) * (minus - plus)))
        ds.union(*candidates[idx])
    pairs = list(itertools.combinations(data.domain.attrs, 2))
    dq = [(ours[e] - theirs[e]) * (1 if model.member else -1) for e in pairs]
    return {
        "select": float(llr), "kl_plus": kl_plus, "kl_minus": kl_minus,
        "dq": [float(v) for v in dq], "verify": float(check),
    }


def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


rho = cdp_rho(config["epsilon"], config["delta"])
out.write(json.dumps({"rho": rho}) + "\n")
rng = np.random.default_rng([config["seed"], config["batch"], config.get("stream", 0)])
for run in range(2 * config["runs"]):
    member = run % 2 == 0
    rows = np.vstack([data, canary]) if member else data
    rows = rows[rng.permutation(len(rows))]
    frame = pd.DataFrame(rows, columns=names)
    np.random.seed(int(rng.integers(2**31)))  # the exponential mechanism's generator
    start, start_cpu = time.perf_counter(), cpu()
    if config["synthesizer"] == "aim":
        model = AIMSynthesizer(epsilon=config["epsilon"], delta=config["delta"])
    else:
        model = RecordingMST(epsilon=config["epsilon"], delta=config["delta"])
        model.logs, model.member = [], member
        model.verify = run < 2 * config.get("verify", 0)
    transformer = public_transformer() if config["domain"] == "public" else None
    row = {"member": int(member)}
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # AIM prints every round
            model.fit(frame, transformer=transformer, categorical_columns=names)
        release = np.asarray(model.sample(len(data)), dtype=float)
        row["count"] = int((release == canary).all(axis=1).sum())
        row["rare"] = int((release[:, 0] == canary[0]).sum())
    except Measured:
        pass
    if config["domain"] == "public" and config["synthesizer"] == "mst":
        row["gauss"] = whitebox(model)
        if whitebox_only:
            row.update(model.selection)
            row["whitebox"] = row["gauss"] + row["select"]  # the whole transcript's LLR
        else:
            row["whitebox"] = row["gauss"]
    row.update(wall=time.perf_counter() - start, cpu=cpu() - start_cpu)
    out.write(json.dumps(row) + "\n")
    out.flush()
'''


def make_data(n_rows, n_columns, n_values, seed, design="rare"):
    """The fixed dataset and the canary.

    ``rare``: values 0 … n_values − 2 drawn uniformly, the canary every value n_values − 1.
    ``select``: three binary columns, balanced, every pair equally correlated: in the
    coordinates ``(a, b, 1 − c)`` the patterns 000 and 111 appear ``A`` times each and the
    six others ``B`` times (``B = n_rows // 15``, ``A = (n_rows − 6B)/2``; 90 and 20 at 300
    rows). Every pair's 2-way marginal then has the same L1 error against the independence
    model, ``2|A − B|`` (MST's candidate scores tie), and with balanced margins the noise of
    the 1-way measurements moves it only to second order. The canary is ``(0, 0, 0)``,
    pattern 001 in those coordinates: its cell is under-estimated by the model in pair
    (0, 1) and over-estimated in pairs (0, 2) and (1, 2), so adding it raises the first
    score by 1 and lowers the two others by 1.

    ``total`` (a probe of the scores' sensitivity, not an audit): column 1 equals column 0
    (balanced over ``n_values`` values), column 2 never equals it; the canary is
    ``(0, 0, 0)``. snsynth's select fits its model with ``known_total=len(data)``, so the
    canary also rescales every model cell by about 1/N: the pairs' scores move by about
    ``±(1 + (1 − 2/n_values))``, beyond the sensitivity 1 the exponential mechanism is
    calibrated for (add/remove-one)."""
    rng = np.random.default_rng(seed)
    if design == "select":
        if (n_columns, n_values) != (3, 2):
            raise SystemExit("--design select: 3 columns of 2 values")
        b = n_rows // 15
        a = (n_rows - 6 * b) // 2
        patterns = np.array(list(np.ndindex(2, 2, 2)))
        counts = np.where(patterns.sum(axis=1) % 3 == 0, a, b)
        data = np.repeat(patterns, counts, axis=0)
        data[:, 2] = 1 - data[:, 2]
        return data[rng.permutation(len(data))], np.array([0, 0, 0])
    if design == "total":
        if n_columns != 3:
            raise SystemExit("--design total: 3 columns")
        first = np.arange(n_rows) % n_values  # balanced
        other = (first + 1 + rng.integers(0, n_values - 1, n_rows)) % n_values  # never first
        data = np.column_stack([first, first, other])
        return data[rng.permutation(n_rows)], np.zeros(3, dtype=int)
    data = rng.integers(0, n_values - 1, size=(n_rows, n_columns))
    return data, np.full(n_columns, n_values - 1)


def read_runs(path):
    """``(header, runs)`` of a runs file; an interrupted child leaves whole pairs only."""
    lines = path.read_text().splitlines()
    runs = [json.loads(line) for line in lines[1:]]
    return json.loads(lines[0]), runs[: len(runs) // 2 * 2]


def same_setting(a, b):
    """Two settings equal but for their random stream and verification count."""
    free = ("stream", "verify", "batch", "runs")
    return {k: v for k, v in a.items() if k not in free} == {
        k: v for k, v in b.items() if k not in free
    }


def kept_runs(folder, config):
    """``(header, runs)`` kept in ``folder``, with those of an interrupted child
    (``batch.jsonl``, not yet merged); the setting must be ``config``'s."""
    folder = Path(folder)
    header, runs = {}, []
    if (folder / "runs.jsonl").exists():
        header, runs = read_runs(folder / "runs.jsonl")
    setting = header.get("setting") or json.loads((folder / "config.json").read_text())
    if not same_setting(setting, config):
        raise SystemExit(f"{folder} holds runs of another setting")
    if (folder / "batch.jsonl").exists():
        batch_header, batch = read_runs(folder / "batch.jsonl")
        header, runs = header or batch_header, runs + batch
    return header, runs


def run_child(python, config, folder, append=False):
    """Run the runs in ``python``; ``(rho, runs)``. With ``append``, the new runs (a new
    random stream) are added to those of the same setting already in ``folder``."""
    folder = Path(folder)
    store, setting = folder / "runs.jsonl", {k: v for k, v in config.items() if k != "runs"}
    before = []
    if append and store.exists():
        header, before = read_runs(store)
        if not same_setting(header["setting"], setting):
            raise SystemExit(f"--append: {store} holds runs of another setting")
    config = {**config, "batch": len(before)}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "child.py").write_text(CHILD)
    lines = folder / "batch.jsonl"
    completed = subprocess.run(
        [python, str(folder / "child.py"), str(folder / "config.json"), str(lines)],
        capture_output=True,
        text=True,
    )
    if completed.returncode != 0:
        raise SystemExit(f"{python} exited {completed.returncode}: {completed.stderr[-2000:]}")
    header, new = read_runs(lines)
    header["setting"] = setting
    runs = before + new
    store.write_text("\n".join(json.dumps(row) for row in [header, *runs]) + "\n")
    lines.unlink()  # merged
    return header["rho"], runs


def certify(members, nonmembers, claim, seed, confidence=0.95):
    """The library's rule on one scalar feature: half of each side picks the threshold,
    the other half certifies (``AlgorithmAudit``'s ``attack_fraction=0.5``)."""
    from sklearn_mace.algorithm._audit import certify_rule
    from sklearn_mace.metrics._fdp import mu_from_error_bounds

    rng = np.random.default_rng(seed)
    m, n = rng.permutation(members), rng.permutation(nonmembers)
    hm, hn = len(m) // 2, len(n) // 2
    audit = certify_rule(
        (m[:hm], n[:hn]),
        (m[hm:], n[hn:]),
        claim=claim,
        delta=claim.delta,
        alpha=1.0 - confidence,
    )
    mu = float(mu_from_error_bounds(audit.fpr_upper, audit.fnr_upper))
    return audit, mu, bool(claim.contradicted_by(audit.fpr_upper, audit.fnr_upper))


def certify_fixed(members, nonmembers, threshold, claim, confidence=0.95):
    """Every run certifies the rule "member iff score ≥ ``threshold``", a threshold fixed
    before the runs (:func:`sklearn_mace.metrics.audit_epsilon` with an explicit threshold:
    Clopper–Pearson at α/2 per rate)."""
    from sklearn_mace.metrics import audit_epsilon
    from sklearn_mace.metrics._fdp import mu_from_error_bounds

    audit = audit_epsilon(
        members, nonmembers, threshold=threshold, delta=claim.delta, confidence=confidence
    )
    mu = float(mu_from_error_bounds(audit.fpr_upper, audit.fnr_upper))
    return audit, mu, bool(claim.contradicted_by(audit.fpr_upper, audit.fnr_upper))


#: Thresholds fixed before any run: the log-likelihood ratio's 0 (equal error rates of the
#: two Gaussians it follows), and "the canary's value or combination appears at all".
FIXED = {"whitebox": 0.0, "gauss": 0.0, "select": 0.0, "count": 1.0, "rare": 1.0}


def attainable_mu(mu, n_certify):
    """Mean μ bound of the best fixed threshold of a Gaussian test of true ``mu`` with
    ``n_certify`` certifying runs per side (``bench_algorithm_tightness.attainable_mu``)."""
    from bench_algorithm_tightness import attainable_mu as attainable

    return attainable(mu, n_certify)


def selection_law(rho, shift=(1.0, -1.0, -1.0)):
    """The tree selection's exact law on the ``select`` design, idealized (the three scores
    tie; the canary moves them by ``shift``): per path (first edge, second edge) its
    probability with the canary, without it, and its log-likelihood ratio. MST's select: 3
    columns, r − 1 = 2 exponential-mechanism steps of ε = √(8(ρ/3)/2), scale ε/2 per unit
    of score (sensitivity 1); after any first edge of the triangle both others remain."""
    from scipy.special import logsumexp

    shift = np.asarray(shift)
    coef = 0.5 * np.sqrt(8 * (rho / 3) / 2)

    def log_p(active, plus):
        q = coef * shift[active] * plus
        return q - logsumexp(q)

    paths = []
    for first in range(3):
        rest = [e for e in range(3) if e != first]
        for second in range(2):
            plus = log_p([0, 1, 2], 1)[first] + log_p(rest, 1)[second]
            minus = log_p([0, 1, 2], 0)[first] + log_p(rest, 0)[second]
            paths.append((np.exp(plus), np.exp(minus), plus - minus))
    return paths


def law_rates(rho, part, thresholds):
    """Population (FPR, FNR) of "member iff statistic ≥ t" for the derived law of ``part``:
    ``gauss`` N(±μ_G²/2, μ_G²); ``select`` the selection's discrete law; ``whitebox`` their
    sum (independent given the path: the measurements' noise is independent of the choice)."""
    from scipy.stats import norm

    mu_g = np.sqrt(4 * rho / 3)
    paths = selection_law(rho) if part != "gauss" else [(1.0, 1.0, 0.0)]
    sd = mu_g if part != "select" else 1e-12
    mean = mu_g**2 / 2 if part != "select" else 0.0
    rates = []
    for t in thresholds:
        fpr = sum(q * norm.sf(t, -mean + llr, sd) for _, q, llr in paths)
        fnr = sum(p * norm.cdf(t, mean + llr, sd) for p, _, llr in paths)
        rates.append((float(np.clip(fpr, 0, 1)), float(np.clip(fnr, 0, 1))))
    return rates


def attainable_law(rho, part, n_certify):
    """``bench_algorithm_tightness.attainable`` on the derived law of ``part``."""
    from bench_algorithm_tightness import attainable

    from sklearn_mace.metrics._fdp import mu_from_error_bounds

    grid = np.linspace(-1.2, 1.2, 49) if part != "select" else np.linspace(-0.6, 0.6, 25)
    return attainable(law_rates(rho, part, grid), n_certify, mu_from_error_bounds)


def certify_rank(members, nonmembers, epsilon, delta, seed, confidence=0.95):
    """The library's rank test on every run (ranks fixed by the sizes, no selection runs):
    ``(μ̂, ε̂ at δ, whether it contradicts the (ε, δ) claim)``; μ̂ is NaN where this tree
    has no μ rank test (``rank_grid_mu``, issue #30)."""
    from sklearn_mace.metrics import _rank_test

    alpha = 1.0 - confidence
    bound, _ = _rank_test.rank_grid_epsilon(
        members, nonmembers, delta=delta, alpha=alpha, rng=np.random.default_rng(seed)
    )
    mu = np.nan
    if hasattr(_rank_test, "rank_grid_mu"):
        mu, _ = _rank_test.rank_grid_mu(
            members, nonmembers, alpha=alpha, rng=np.random.default_rng(seed + 1)
        )
    return float(mu), float(bound), bool(bound > epsilon)


def table(runs, rho, args):
    """Per feature: the library's split rule (``AlgorithmAudit``'s), the fixed threshold and
    the rank test. FPR, FNR and the empirical μ are the μ-GDP test's (claim: μ-GDP at the
    implied μ); the certified ε at δ and the verdict are the (ε, δ) claim's (its own
    threshold). ``attainable μ``: one fixed threshold's mean bound at that many certifying
    runs, on the derived law of the statistic (``select`` design) or on N(±μ_G²/2, μ_G²)."""
    from sklearn_mace.algorithm import PrivacyClaim

    implied = float(np.sqrt(2 * rho))
    stated = PrivacyClaim.approximate(args.epsilon, args.delta)
    gaussian = PrivacyClaim.gaussian(implied)
    member = np.array([r["member"] for r in runs]) == 1
    rows = []
    for feature in ("whitebox", "gauss", "select", "count", "rare"):
        if feature not in runs[0]:
            continue
        values = np.array([r[feature] for r in runs], dtype=float)
        inside, outside = values[member], values[~member]
        part = feature if args.design == "select" else "gauss"
        for rule in ("split", "fixed", "rank"):
            fpr = fnr = np.nan
            if rule == "split":
                point, mu, _ = certify(inside, outside, gaussian, args.seed)
                audit, _, contradicted = certify(inside, outside, stated, args.seed)
                certifying, epsilon = len(inside) - len(inside) // 2, audit.epsilon_lower_bound
                fpr, fnr = point.fpr, point.fnr
            elif rule == "fixed":
                point, mu, _ = certify_fixed(inside, outside, FIXED[feature], gaussian)
                audit, _, contradicted = certify_fixed(inside, outside, FIXED[feature], stated)
                certifying, epsilon = len(inside), audit.epsilon_lower_bound
                fpr, fnr = point.fpr, point.fnr
            else:
                mu, epsilon, contradicted = certify_rank(
                    inside, outside, args.epsilon, args.delta, args.seed
                )
                certifying = len(inside)
            derived = args.design == "select" or feature == "gauss" or "select" not in runs[0]
            derived = derived and feature in ("whitebox", "gauss", "select")
            rows.append(
                {
                    "feature": feature,
                    "rule": rule,
                    "runs/side": len(inside),
                    "certifying/side": certifying,
                    "FPR": round(fpr, 3),
                    "FNR": round(fnr, 3),
                    f"certified ε @δ={args.delta:g}": round(epsilon, 3),
                    f"contradicts ({args.epsilon:g}, {args.delta:g})": contradicted,
                    "empirical μ": round(mu, 3),
                    "implied μ": round(implied, 3),
                    "ratio": round(mu / implied, 3),
                    "attainable μ": round(attainable_law(rho, part, certifying), 3)
                    if derived and rule != "rank"
                    else np.nan,
                }
            )
    return rows


def check_whitebox(runs, rho, design):
    """Each white-box statistic's mean and spread against its derived law: the Gaussian part
    N(±μ_G²/2, μ_G²) with μ_G = √(4ρ/3) (closed form); the selection part and the whole on
    the ``select`` design from :func:`selection_law` (ideal ties), beside the mean of the
    per-run exact KL divergences of the recorded steps (the runs' own scores)."""
    if "whitebox" not in runs[0]:
        return
    member = np.array([r["member"] for r in runs]) == 1
    mu_g = np.sqrt(4 * rho / 3)
    laws = {"gauss": ((mu_g**2 / 2, mu_g), (-(mu_g**2) / 2, mu_g))}
    if design == "select":
        paths = np.array(selection_law(rho))
        sel = []
        for weight in (paths[:, 0], paths[:, 1]):
            mean = float(np.sum(weight * paths[:, 2]))
            sel.append((mean, float(np.sqrt(np.sum(weight * paths[:, 2] ** 2) - mean**2))))
        laws["select"] = tuple(sel)
        laws["whitebox"] = tuple(
            (g[0] + s[0], float(np.hypot(g[1], s[1])))
            for g, s in zip(laws["gauss"], sel, strict=True)
        )
    for feature, ((m_in, s_in), (m_out, s_out)) in laws.items():
        values = np.array([r[feature] for r in runs])
        print(
            f"{feature:>8} LLR: members mean {values[member].mean():+.4f} "
            f"(± {values[member].std(ddof=1) / np.sqrt(member.sum()):.4f}) sd "
            f"{values[member].std(ddof=1):.4f}, non-members mean {values[~member].mean():+.4f} "
            f"sd {values[~member].std(ddof=1):.4f}; derived {m_in:+.4f} sd {s_in:.4f} / "
            f"{m_out:+.4f} sd {s_out:.4f}"
        )
    if "select" in runs[0]:
        kl_plus = np.mean([r["kl_plus"] for r in runs if r["member"]])
        kl_minus = np.mean([r["kl_minus"] for r in runs if not r["member"]])
        checked = [r["verify"] for r in runs if np.isfinite(r["verify"])]
        shifts = np.array([r["dq"] for r in runs])
        print(
            f"selection: mean exact KL of the recorded steps {kl_plus:.4f} (members, D+‖D−) / "
            f"{kl_minus:.4f} (non-members, D−‖D+), ρ/3 = {rho / 3:.4f}; score shifts per pair "
            f"(canary in − out) mean {np.round(shifts.mean(axis=0), 4).tolist()}, largest "
            f"|shift| {np.abs(shifts).max():.4f}; replayed scores vs snsynth's, "
            f"{len(checked)} runs: largest difference {max(checked, default=np.nan):.2g}"
        )
    print(
        f"Gaussian part √(4ρ/3) = {mu_g:.4f} = {mu_g / np.sqrt(2 * rho):.3f} of the implied μ "
        f"{np.sqrt(2 * rho):.4f}"
    )


def population(rho, n_runs):
    """What the whole-transcript test can show on the ``select`` design (derived law): its
    μ at the fixed threshold 0 with population error rates, and the attainable μ (one fixed
    threshold, Clopper–Pearson) at this run count and at others, against the implied μ."""
    from scipy.stats import norm

    implied = np.sqrt(2 * rho)
    ((fpr, fnr),) = law_rates(rho, "whitebox", [0.0])
    mu = norm.isf(fpr) - norm.ppf(fnr)
    counts = sorted({n_runs, 1_000, 3_000, 5_000, 10_000})
    reach = ", ".join(
        f"{n:,}: {attainable_law(rho, 'whitebox', n) / implied:.3f}".replace(",", " ")
        for n in counts
    )
    low, high = 1_000, 64_000  # the fewest certifying runs per side whose mean reaches 0.8
    while high - low > 100:
        middle = (low + high) // 2
        low, high = (
            (middle, high)
            if attainable_law(rho, "whitebox", middle) < 0.8 * implied
            else (low, middle)
        )
    needed = f"{high:,}".replace(",", " ")
    print(
        f"derived law of the whole transcript's LLR: threshold 0 has FPR {fpr:.4f}, FNR "
        f"{fnr:.4f}, μ {mu:.4f} = {mu / implied:.3f} of the implied {implied:.4f}; attainable "
        f"ratio by certifying runs per side: {reach}; 0.8 needs about "
        f"{needed} certifying runs per side"
    )


def rank_typical(rho, n_runs, n_draws, seed=12345):
    """The rank test's μ on ``n_draws`` simulated audits of ``n_runs`` runs per side drawn
    from the derived law of the whole transcript's LLR (Gaussian part plus the selection's
    discrete law, independent): its mean and spread, what the rank row can be compared
    with. Needs ``rank_grid_mu``."""
    from sklearn_mace.metrics import _rank_test

    if n_draws < 2 or not hasattr(_rank_test, "rank_grid_mu"):
        return
    mu_g = np.sqrt(4 * rho / 3)
    paths = np.array(selection_law(rho))
    rng = np.random.default_rng(seed)
    bounds = []
    for draw in range(n_draws):
        sides = []
        for sign, weight in ((1, paths[:, 0]), (-1, paths[:, 1])):
            pick = rng.choice(len(paths), n_runs, p=weight / weight.sum())
            sides.append(rng.normal(sign * mu_g**2 / 2, mu_g, n_runs) + paths[pick, 2])
        bounds.append(_rank_test.rank_grid_mu(*sides, rng=np.random.default_rng(draw))[0])
    implied = np.sqrt(2 * rho)
    print(
        f"rank test on {n_draws} audits drawn from the derived law, {n_runs} runs per side: "
        f"μ mean {np.mean(bounds):.3f} (ratio {np.mean(bounds) / implied:.3f}), sd "
        f"{np.std(bounds, ddof=1):.3f}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--synth-python", default=sys.executable, help="a Python with snsynth")
    parser.add_argument("--synthesizer", choices=("mst", "aim"), default="mst")
    parser.add_argument("--runs", type=int, default=200, help="runs per side")
    parser.add_argument("--domain", choices=("public", "data"), default="public")
    parser.add_argument(
        "--features",
        choices=("whitebox", "all"),
        default="all",
        help="whitebox: stop each run after MST's last measurement (no release)",
    )
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--columns", type=int, default=3)
    parser.add_argument("--values", type=int, default=4)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-2)
    parser.add_argument("--keep", help="keep the runs' features in this folder")
    parser.add_argument(
        "--reuse", action="store_true", help="certify the runs already in --keep (no new run)"
    )
    parser.add_argument(
        "--append", action="store_true", help="add --runs runs per side to those in --keep"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--design",
        choices=("rare", "select", "total"),
        default="rare",
        help="rare: the canary holds values no record has; select: it moves MST's tree "
        "selection (3 binary columns, see make_data)",
    )
    parser.add_argument(
        "--stream", type=int, default=0, help="random stream (parallel --keep folders)"
    )
    parser.add_argument(
        "--verify",
        type=int,
        default=2,
        help="pairs of runs whose replayed selection scores are checked against snsynth's",
    )
    parser.add_argument(
        "--rank-draws",
        type=int,
        default=0,
        help="select design: simulated audits from the derived law for the rank test's mean",
    )
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        help="with --reuse: certify also the runs kept in this folder (same setting)",
    )
    args = parser.parse_args()
    if args.features == "whitebox" and (args.domain == "data" or args.synthesizer == "aim"):
        parser.error("--features whitebox reads MST's measurements on the public domain")
    data, canary = make_data(args.rows, args.columns, args.values, args.seed, args.design)
    config = {
        "data": data.tolist(),
        "canary": canary.tolist(),
        "values": args.values,
        "epsilon": args.epsilon,
        "delta": args.delta,
        "runs": args.runs,
        "domain": args.domain,
        "features": args.features,
        "seed": args.seed,
        "synthesizer": args.synthesizer,
        "stream": args.stream,
        "verify": args.verify,
    }
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or scratch
        os.makedirs(folder, exist_ok=True)
        if args.reuse:  # with the runs of an interrupted child (batch.jsonl, not merged)
            header, runs = kept_runs(folder, config)
            for extra in args.also:
                runs += kept_runs(extra, config)[1]
            rho = header["rho"]
        else:
            rho, runs = run_child(args.synth_python, config, folder, append=args.append)
    wall = time.perf_counter() - start
    cpu, run_wall = sum(r["cpu"] for r in runs), sum(r["wall"] for r in runs)
    print(
        f"{args.synthesizer.upper()} (ε {args.epsilon:g}, δ {args.delta:g}), ρ = {rho:.4f}; "
        f"{args.rows} rows × {args.columns} columns of {args.values} values, canary "
        f"{tuple(canary.tolist())}; domain {args.domain}. {len(runs)} runs: {cpu:.0f} s CPU "
        f"({cpu / len(runs):.2f} s per run), {run_wall:.0f} s wall in the runs; this "
        f"invocation {wall:.0f} s wall{' (reused runs)' if args.reuse else ''}; load "
        f"average {os.getloadavg()[0]:.1f}"
    )
    import pandas as pd

    check_whitebox(runs, rho, args.design)
    if args.design == "select":
        population(rho, len(runs) // 2)
        rank_typical(rho, len(runs) // 2, args.rank_draws)
    with pd.option_context("display.width", 250):
        print(pd.DataFrame(table(runs, rho, args)).to_string(index=False))


if __name__ == "__main__":
    main()
