"""LiRA at few reference models: the fixed (global) variance against per-record variances.

Issue #29, item 4. The records are the ones of the side-by-side with ART 1.20.1
(``/work/shared/REFERENCE.md``, "Peers measured side by side"): digits (1 797 rows, pixels / 16)
split at random into 600 members, 600 non-members and 597 population rows; the target trains
on the members. For each seed and each K, one set of K reference models
(``ShadowModels(split="balanced")`` on the 1 797 records, every record IN for K/2 of them) is
read by every attack row:

* LiRA online and offline with per-record variances (the default before this change;
  K >= 4: 2 IN and 2 OUT values per record), with the fixed variance
  (``fix_variance=True``), and with the default ``"auto"`` (fixed below 64 models, so
  identical to the fixed rows at these K — printed to show which one the default is);
* RMIA online (gamma 1) on the same models, for scale;
* ART 1.20.1's attacks on the same targets, same records, same run (``--art-python``: an
  interpreter with ``adversarial-robustness-toolbox==1.20.1``, kept out of the project's
  environment; ``benchmarks/_art_peer.py`` runs in it on the saved target and records):
  black-box attack models ``nn``, ``rf``, ``gb`` cross-fitted on the targets' membership
  labels (two halves, each scored by the attack trained on the other) and the rule-based
  attack. They need no reference model, so they have no K.

Measured (3 seeds pooled, ART from the same run, 2 shared cores, 9 min), AUC / TPR at 1 % FPR:
default LiRA (online, fixed variance) at K = 4 — MLP 0.575 / 0.032 against ART's best
0.548 / 0.010 (``gb``; ``nn`` 0.531 / 0.009), random forest 0.900 / 0.271 against ART's best
0.840 / 0.124 (``nn``). Seeds 3-5 (``--first-seed 3 --ks 4``): MLP 0.593 / 0.031 against
0.526 / 0.016, forest 0.909 / 0.326 against 0.811 / 0.093.

AUC and TPR at 1 % FPR are computed on the scores of all seeds pooled (Carlini et al.'s
pooling: 1 800 non-members over 3 seeds). Without ``--art-python`` ART's best attack is
quoted from the reference note (random forest 0.827 / 0.157, MLP 0.593 / 0.018).

    python -m venv /work/venvs/art && /work/venvs/art/bin/pip install packaging \
        adversarial-robustness-toolbox==1.20.1 scikit-learn==<same> numpy==<same> torch
    nice -n 10 python benchmarks/bench_peers_lira.py --art-python /work/venvs/art/bin/python
    nice -n 10 python benchmarks/bench_peers_lira.py            # K = 2, 4, 8, 16; 3 seeds
    nice -n 10 python benchmarks/bench_peers_lira.py --quick    # K = 2, 4; 1 seed; forest
    nice -n 10 python benchmarks/bench_peers_lira.py --label-only   # LabelOnlyAttack alone

``--label-only`` measures :class:`LabelOnlyAttack` (labels only, no reference model) on the
same records: AUC and TPR at 1 % FPR pooled over the seeds, and the certified ε of
``audit_epsilon`` on each seed's 1 200 scores (threshold split inside), from its default
noise levels. With ``--art-python`` it runs ART's label-only attack beside it,
``LabelOnlyDecisionBoundary`` (HopSkipJump distance to the decision boundary,
``_art_peer.py --label-only``), on ``--art-records`` of each seed's targets (half members,
at random; HopSkipJump makes hundreds of label queries per record: about 0.6 s per record
for the forest, 0.1 s for the MLP and the logistic model at 5 iterations on 2 shared cores),
and prints both AUCs on those records. 200 records per seed, AUC ours / ART: seed 0 forest
0.516 / 0.548, MLP 0.525 / 0.499, logistic 0.511 / 0.499; seeds 1-2 pooled forest 0.582 /
0.577, MLP 0.526 / 0.500, logistic 0.512 / 0.517 (standard errors 0.03-0.04).

    nice -n 10 python benchmarks/bench_peers_lira.py --label-only --seeds 1 \
        --models "random forest" --art-python /work/venvs/lira_art/bin/python --art-records 60
"""

import argparse
import os
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neural_network import MLPClassifier
from threadpoolctl import threadpool_limits

from sklearn_mace.attacks import LabelOnlyAttack, LiRAAttack, RMIAAttack, ShadowModels
from sklearn_mace.metrics import audit_epsilon, tpr_at_fpr

MODELS = {
    # no weight decay, trained to convergence: fits every member
    "MLP": lambda: MLPClassifier((128,), alpha=1e-6, max_iter=400, tol=1e-6),
    # fully grown trees memorise their members
    "random forest": lambda: RandomForestClassifier(50),
    # regularised: leaks little
    "logistic (C=0.1)": lambda: LogisticRegression(C=0.1, max_iter=2000),
}
#: ART 1.20.1's best attack on the same split, from /work/shared/REFERENCE.md (AUC, TPR@1%)
ART_BEST = {"MLP": (0.593, 0.018), "random forest": (0.827, 0.157)}
N_MEMBERS, N_NON_MEMBERS = 600, 600
VARIANTS = {
    "per-record": {"fix_variance": False},
    "fixed": {"fix_variance": True},
    "auto (default)": {},
}


def _seeded(estimator, seed):
    seeded = {"random_state": seed} if "random_state" in estimator.get_params() else {}
    return clone(estimator).set_params(**seeded)


def split(model, seed):
    """ART's split of one seed: 1 200 targets (600 members first), 597 population rows."""
    X, y = load_digits(return_X_y=True)
    records = np.column_stack([X / 16.0, y])
    order = np.random.default_rng(seed).permutation(len(records))
    n_targets = N_MEMBERS + N_NON_MEMBERS
    targets, population = records[order[:n_targets]], records[order[n_targets:]]
    member = np.zeros(n_targets, dtype=bool)
    member[:N_MEMBERS] = True
    recipe = _seeded(MODELS[model](), seed)
    target = clone(recipe).fit(targets[member, :-1], targets[member, -1])
    return recipe, target, targets, member, population


def art_scores_of(python, model, seed):
    """ART's attacks on the same target and records (``_art_peer.py`` in ``python``)."""
    _, target, targets, member, _ = split(model, seed)
    with tempfile.TemporaryDirectory() as folder:
        task, out = Path(folder) / "task.joblib", Path(folder) / "scores.npz"
        joblib.dump({"seed": seed, "target": target, "targets": targets, "member": member}, task)
        peer = Path(__file__).with_name("_art_peer.py")
        subprocess.run([python, str(peer), str(task), str(out)], check=True)
        with np.load(out) as scores:
            return {name: scores[name] for name in scores.files}, member


def scores_of(model, k, seed):
    """Every attack's scores on the 1 200 targets of one seed, from one set of K models."""
    recipe, target, targets, member, population = split(model, seed)
    pool = np.vstack([targets, population])
    reference = ShadowModels(
        recipe,
        n_reference_models=k,
        split="balanced",
        outputs=("true_label", "proba"),
        random_state=seed,
    ).fit(pool[:, :-1], pool[:, -1])
    scores = {}
    for online in (True, False):
        side = "online" if online else "offline"
        for variant, params in VARIANTS.items():
            if k < 4 and variant == "per-record":
                continue  # one IN and one OUT value per record: no per-record variance
            lira = LiRAAttack(target, reference_models=reference, online=online, **params)
            scores[f"LiRA {side}, {variant}"] = lira.fit(
                targets, member, population=population
            ).score_samples(targets)
    rmia = RMIAAttack(target, reference_models=reference, online=True)
    scores["RMIA online"] = rmia.fit(targets, member, population=population).score_samples(targets)
    return scores, member


def art_label_only_scores(python, target, targets, member, subset, max_iter):
    """ART's ``LabelOnlyDecisionBoundary`` distances on ``targets[subset]`` (``_art_peer.py``)."""
    with tempfile.TemporaryDirectory() as folder:
        task, out = Path(folder) / "task.joblib", Path(folder) / "scores.npz"
        records = {"targets": targets[subset], "member": member[subset]}
        joblib.dump({"seed": 0, "target": target, **records}, task)
        peer = Path(__file__).with_name("_art_peer.py")
        command = [python, str(peer), str(task), str(out), "--label-only", str(max_iter)]
        subprocess.run(command, check=True)
        with np.load(out) as scores:
            return next(scores[name] for name in scores.files)


def label_only_subset(member, n_records, seed):
    """``n_records / 2`` members and as many non-members, at random (ART's attack is slow)."""
    rng = np.random.default_rng(seed)
    sides = [rng.permutation(np.flatnonzero(member == side))[: n_records // 2] for side in (1, 0)]
    return np.sort(np.concatenate(sides))


def label_only_table(models, seeds, art_python=None, art_records=100, art_iterations=5):
    """LabelOnlyAttack on every model: pooled AUC / TPR at 1 % FPR, ε per seed; with
    ``art_python``, ART's decision-boundary attack beside it on ``art_records`` of the
    targets per seed (half members), both AUCs on those records."""
    rows = []
    for model in models:
        scores, members, epsilons, subsets = [], [], [], []
        for seed in seeds:
            X, y = load_digits(return_X_y=True)
            records = np.column_stack([X / 16.0, y])
            order = np.random.default_rng(seed).permutation(len(records))
            targets = records[order[: N_MEMBERS + N_NON_MEMBERS]]
            member = np.arange(len(targets)) < N_MEMBERS
            target = _seeded(MODELS[model](), seed).fit(targets[member, :-1], targets[member, -1])
            score = LabelOnlyAttack(target).fit(targets, member).score_samples(targets)
            audit = audit_epsilon(score[member], score[~member], random_state=seed)
            scores.append(score)
            members.append(member)
            epsilons.append(audit.epsilon_lower_bound)
            if art_python:
                subset = label_only_subset(member, art_records, seed)
                start = time.perf_counter()
                art = art_label_only_scores(
                    art_python, target, targets, member, subset, art_iterations
                )
                print(f"  {model}, seed {seed}: ART {time.perf_counter() - start:.0f} s")
                subsets.append((member[subset], score[subset], art))
        m, s = np.concatenate(members), np.concatenate(scores)
        row = {
            "model": model,
            "auc": roc_auc_score(m, s),
            "tpr@1%": tpr_at_fpr(m, s, fpr=0.01),
            "epsilon per seed": " ".join(f"{e:.2f}" for e in epsilons),
        }
        if subsets:
            sm, ours, art = (np.concatenate(part) for part in zip(*subsets, strict=True))
            row.update(
                {
                    "records (ART)": len(sm),
                    "auc, ours on them": roc_auc_score(sm, ours),
                    "auc, ART decision boundary": roc_auc_score(sm, art),
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def _row(model, k, name, m, score):
    return {
        "model": model,
        "K": k,
        "attack": name,
        "auc": roc_auc_score(m, score),
        "tpr@1%": tpr_at_fpr(m, score, fpr=0.01),
    }


def art_table(python, models, seeds):
    rows = []
    for model in models:
        start = time.perf_counter()
        pooled, members = {}, []
        for seed in seeds:
            scores, member = art_scores_of(python, model, seed)
            members.append(member)
            for name, score in scores.items():
                pooled.setdefault(name, []).append(score)
        m = np.concatenate(members)
        for name, parts in pooled.items():
            rows.append(_row(model, "-", name, m, np.concatenate(parts)))
        print(f"  {model}, ART: {time.perf_counter() - start:.1f} s", flush=True)
    return pd.DataFrame(rows)


def table(models, ks, seeds):
    rows = []
    for model in models:
        for k in ks:
            start = time.perf_counter()
            pooled, members = {}, []
            for seed in seeds:
                scores, member = scores_of(model, k, seed)
                members.append(member)
                for name, score in scores.items():
                    pooled.setdefault(name, []).append(score)
            m = np.concatenate(members)
            for name, parts in pooled.items():
                rows.append(_row(model, k, name, m, np.concatenate(parts)))
            print(f"  {model}, K = {k}: {time.perf_counter() - start:.1f} s", flush=True)
    return pd.DataFrame(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed, ...")
    parser.add_argument("--ks", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--label-only", action="store_true", help="LabelOnlyAttack alone")
    parser.add_argument(
        "--art-python", help="an interpreter with ART 1.20.1: run its attacks on the same records"
    )
    parser.add_argument(
        "--art-records", type=int, default=100, help="--label-only: records ART attacks per seed"
    )
    parser.add_argument(
        "--art-iterations", type=int, default=5, help="--label-only: HopSkipJump iterations"
    )
    args = parser.parse_args()
    if args.label_only:
        warnings.simplefilter("ignore", ConvergenceWarning)
        seeds = list(range(args.first_seed, args.first_seed + args.seeds))
        with threadpool_limits(1):
            result = label_only_table(
                args.models, seeds, args.art_python, args.art_records, args.art_iterations
            )
        print(result.round(3).to_string())
        return
    if args.quick:
        args.seeds, args.ks, args.models = 1, [2, 4], ["random forest"]
    warnings.simplefilter("ignore", ConvergenceWarning)
    # a forest's predict_log_proba of a probability of 0 (the attacks clip it themselves)
    warnings.filterwarnings("ignore", "divide by zero encountered in log", RuntimeWarning)
    pd.set_option("display.width", 200)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    print(f"load average {os.getloadavg()[0]:.1f}; seeds {seeds}")
    with threadpool_limits(1):
        result = table(args.models, args.ks, seeds)
    if args.art_python:
        result = pd.concat([result, art_table(args.art_python, args.models, seeds)])
    print_table(result)


def print_table(result):
    """One table: model x attack, AUC and TPR at 1 % FPR per K (ART: no K, column "-")."""
    result = result.assign(K=result["K"].astype(str))
    order = list(dict.fromkeys(result["K"]))
    wide = result.pivot_table(
        index=["model", "attack"], columns="K", values=["auc", "tpr@1%"], sort=False
    )
    wide = wide.reindex(columns=[(v, k) for v in ("auc", "tpr@1%") for k in order])
    print(wide.round(3).to_string(na_rep=""))
    default = result[(result["attack"] == "LiRA online, auto (default)") & (result["K"] == "4")]
    for model, part in default.groupby("model", sort=False):
        auc, tpr = float(part["auc"].iloc[0]), float(part["tpr@1%"].iloc[0])
        art = result[(result["model"] == model) & result["attack"].str.startswith("ART")]
        if art.empty and model in ART_BEST:
            art_auc, art_tpr, source = *ART_BEST[model], "reference note"
        elif art.empty:
            continue
        else:
            art_auc, art_tpr, source = art["auc"].max(), art["tpr@1%"].max(), "same run"
        print(
            f"{model}: LiRA (default) at K = 4 AUC {auc:.3f} / TPR@1% {tpr:.3f}; ART's best "
            f"({source}) AUC {art_auc:.3f} / TPR@1% {art_tpr:.3f}: "
            f"{'at least as strong' if auc >= art_auc and tpr >= art_tpr else 'weaker'}"
        )


if __name__ == "__main__":
    main()
