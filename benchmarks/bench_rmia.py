"""RMIA against LiRA and the shadow-model attack at few reference models; the shared set's cost.

Two tables:

(a) **Cost of the full model audit.** ``audit_model`` with a population on digits (an
    overfit MLP trained on 450 members; 450 hold-out and 897 population rows) runs BTTA,
    CBTTA, MACE, the shadow-model attack, LiRA and RMIA on one set of ``K`` reference models.
    Its wall time is divided by the time of training those reference models alone
    (``ShadowModels(split="balanced")`` on the same pool, same recipe, timed in the same
    process before and after the audit, the two averaged) — the goal is a ratio of at most
    1.2 — and by the audit's own reference step (the training time its note states).

(b) **Attack strength against K.** For each setting (digits with an overfit MLP, digits with a
    fully grown random forest, breast cancer with an overfit MLP) and seed: 25 % of the rows
    are the population, the other 75 % the targets, two thirds of which train the target
    model (so the target and every reference model train on half of the data). One set of
    ``K`` reference models (balanced halves of targets + population, each record IN for
    K/2) is trained per (seed, K) and read by every attack, as in the model audit: RMIA
    online/offline (gamma 1, offline a = 0.3, population = the comparison records), LiRA
    online/offline with the fixed variance (K >= 4: its per-record means need 2 IN and 2 OUT
    models), and the shadow-model attack (per-class MLP on the reference models' queries of
    the population rows). AUC and TPR at 1 % and 0.1 % FPR are computed on the scores of
    all seeds pooled (Carlini et al.'s pooling), so that 0.1 % FPR is about one false
    positive on digits (1 350 non-members over 3 seeds); on breast cancer (429 non-members)
    it means none. The balanced split needs each record IN for one model and OUT for
    another, so at K = 1 the only row is **RMIA offline (population)**: the paper's offline
    design, ``K`` reference models trained on halves of the population rows alone (one
    model: a random half; more: balanced halves), every target OUT of every one, ``Z`` the
    population records a model did not train. That row is also given at every K, beside the
    pool design. Its models train on half of the population (12.5 % of the data) where the
    target trains on 50 %: the population design pays for excluding the targets with smaller
    reference training sets here.

    nice -n 10 python benchmarks/bench_rmia.py                 # K = 1, 2, 4, 8, 16; 3 seeds
    nice -n 10 python benchmarks/bench_rmia.py --skip-cost --ks 1 2   # one reference model
    nice -n 10 python benchmarks/bench_rmia.py --quick         # K = 2, 4; 1 seed; digits RF
"""

import argparse
import os
import re
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sklearn_mace.attacks import LiRAAttack, RMIAAttack, ShadowModelAttack, ShadowModels
from sklearn_mace.metrics import tpr_at_fpr
from sklearn_mace.report import audit_model

SHADOW_ROWS = 10_000  # as the model audit's shadow-model attack


def _digits_mlp():
    # no weight decay, trained to convergence: fits every member (train accuracy 1.0)
    return MLPClassifier((128,), alpha=1e-6, max_iter=400, tol=1e-6)


def _forest():
    return RandomForestClassifier(50)  # fully grown trees memorize their members


def _cancer_mlp():
    return make_pipeline(StandardScaler(), MLPClassifier((64,), alpha=1e-6, max_iter=1000))


def _digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


SETTINGS = {
    "digits MLP": (_digits, _digits_mlp),
    "digits RF": (_digits, _forest),
    "cancer MLP": (lambda: load_breast_cancer(return_X_y=True), _cancer_mlp),
}


def _load():
    avg = os.getloadavg()
    return f"load average {avg[0]:.1f} / {avg[1]:.1f} / {avg[2]:.1f} (1 / 5 / 15 min)"


# ----------------------------------------------------------------------------- (a) cost
def audit_cost(n_models, seed=0):
    X, y = _digits()
    frame = pd.DataFrame(X, columns=[f"pixel_{j}" for j in range(X.shape[1])])
    frame["digit"] = y
    order = np.random.default_rng(seed).permutation(len(frame))
    members, non_members, population = (
        frame.iloc[rows].reset_index(drop=True) for rows in np.split(order, [450, 900])
    )
    recipe = _digits_mlp().set_params(random_state=seed)
    model = clone(recipe).fit(members.drop(columns="digit").to_numpy(), members["digit"])
    pool = pd.concat([members, non_members, population], ignore_index=True)

    def train_alone():
        start = time.perf_counter()
        ShadowModels(
            clone(recipe),
            n_reference_models=n_models,
            split="balanced",
            outputs=("true_label", "proba"),
            random_state=seed,
        ).fit(pool.drop(columns="digit").to_numpy(), pool["digit"].to_numpy())
        return time.perf_counter() - start

    before = train_alone()
    start = time.perf_counter()
    result = audit_model(
        {"mlp": model},
        members,
        non_members,
        label="digit",
        population=population,
        n_reference_models=n_models,
        random_state=seed,
        verbose=False,
    )
    total = time.perf_counter() - start
    after = train_alone()  # before and after the audit: the machine's load drifts
    assert not result.partial, result.failures
    (note,) = [n for n in result.notes if "reference models" in n and "s of training" in n]
    inside = float(re.search(r"([0-9.]+) s of training", note).group(1))
    summary = result.summary.set_index("analysis")
    columns = ["auc", "tpr_at_1pct_fpr", "epsilon_lower_bound"]
    return (before + after) / 2, inside, total, summary[columns]


# ----------------------------------------------------------------------------- (b) strength
def _split(n, seed):
    order = np.random.default_rng(seed).permutation(n)
    n_population = n // 4
    population, targets = order[:n_population], order[n_population:]
    member = np.zeros(len(targets), dtype=bool)
    member[: 2 * len(targets) // 3] = True
    return targets, population, np.random.default_rng(seed + 1).permutation(member)


def _shadow_attack(reference, n_targets, target, records, seed):
    rows = np.flatnonzero(reference.sample_index_ >= n_targets)
    if rows.size > SHADOW_ROWS:
        rows = np.sort(np.random.default_rng(seed).choice(rows, SHADOW_ROWS, replace=False))
    net = MLPClassifier((50, 50), max_iter=200, random_state=seed)
    attack = ShadowModelAttack(net).fit(reference.queries_[rows], reference.membership_[rows])
    proba = target.predict_proba(records[:, :-1])
    return attack.decision_function(np.column_stack([records[:, -1], proba]))


def attack_scores(setting, n_models, seed):
    """Scores of every attack on one target, with one set of ``n_models`` reference models."""
    loader, make_recipe = SETTINGS[setting]
    X, y = loader()
    targets, population, member = _split(len(y), seed)
    records = np.column_stack([X, y])
    T, P = records[targets], records[population]
    recipe = make_recipe()
    target = clone(recipe).set_params(**_seed(recipe, seed)).fit(T[member, :-1], T[member, -1])
    start = time.perf_counter()
    offline = ShadowModels(  # the population design: no target trains a reference model
        recipe,
        n_reference_models=n_models,
        split="random" if n_models == 1 else "balanced",
        outputs=("true_label", "proba"),
        random_state=seed,
    ).fit(P[:, :-1], P[:, -1])
    rmia = RMIAAttack(target, reference_models=offline, online=False)
    scores = {"RMIA offline (population)": rmia.fit(T, member, population=P).score_samples(T)}
    if n_models == 1:
        return scores, member, time.perf_counter() - start
    pool = np.vstack([T, P])
    reference = ShadowModels(
        recipe,
        n_reference_models=n_models,
        split="balanced",
        outputs=("true_label", "proba"),
        random_state=seed,
    ).fit(pool[:, :-1], pool[:, -1])
    seconds = time.perf_counter() - start
    for online in (True, False):
        side = "online" if online else "offline"
        rmia = RMIAAttack(target, reference_models=reference, online=online)
        scores[f"RMIA {side}"] = rmia.fit(T, member, population=P).score_samples(T)
        if n_models >= 4:
            lira = LiRAAttack(target, reference_models=reference, online=online, fix_variance=True)
            scores[f"LiRA {side}"] = lira.fit(T, member, population=P).score_samples(T)
    scores["Shadow (Shokri)"] = _shadow_attack(reference, len(T), target, T, seed)
    return scores, member, seconds


def _seed(estimator, seed):
    return {
        name: seed
        for name in estimator.get_params(deep=True)
        if name == "random_state" or name.endswith("__random_state")
    }


def strength_table(settings, ks, seeds):
    rows = []
    for setting in settings:
        for k in ks:
            pooled, members, aucs, seconds = {}, [], {}, 0.0
            for seed in seeds:
                scores, member, spent = attack_scores(setting, k, seed)
                seconds += spent
                members.append(member)
                for name, score in scores.items():
                    pooled.setdefault(name, []).append(score)
                    aucs.setdefault(name, []).append(roc_auc_score(member, score))
            m = np.concatenate(members)
            for name, parts in pooled.items():
                score = np.concatenate(parts)
                rows.append(
                    {
                        "setting": setting,
                        "K": k,
                        "attack": name,
                        "auc": roc_auc_score(m, score),
                        "auc_sd_seeds": float(np.std(aucs[name])),
                        "tpr@1%": tpr_at_fpr(m, score, fpr=0.01),
                        "tpr@0.1%": tpr_at_fpr(m, score, fpr=0.001),
                    }
                )
            print(
                f"  {setting}, K = {k}: {len(seeds)} seed(s), reference training "
                f"{seconds:.1f} s; {_load()}",
                flush=True,
            )
    return pd.DataFrame(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--ks", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--audit-k", type=int, default=16)
    parser.add_argument("--skip-cost", action="store_true", help="table (b) only")
    parser.add_argument("--cost-only", action="store_true", help="table (a) only")
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.ks, args.settings, args.audit_k = 1, [2, 4], ["digits RF"], 4
    warnings.simplefilter("ignore", ConvergenceWarning)
    warnings.filterwarnings("ignore", "divide by zero encountered in log")
    pd.set_option("display.width", 200)
    print(_load())
    with threadpool_limits(1):
        if not args.skip_cost:
            print(
                f"\n(a) full model audit with a population vs. its {args.audit_k} reference models"
            )
            baseline, inside, total, summary = audit_cost(args.audit_k)
            print(f"reference models alone: {baseline:7.1f} s  (mean of a run before and after)")
            print(f"  the same inside the audit: {inside:7.1f} s  (its shared step, from its note)")
            print(f"full audit:             {total:7.1f} s")
            print(f"ratio audit / reference models alone: {total / baseline:.2f}  (goal <= 1.2)")
            print(f"ratio audit / its own reference step: {total / inside:.2f}")
            print(summary.round(3).to_string())
        if args.cost_only:
            return
        print(f"\n(b) pooled over seeds {list(range(args.seeds))}, K in {args.ks}")
        table = strength_table(args.settings, args.ks, list(range(args.seeds)))
        for setting, part in table.groupby("setting", sort=False):
            print(f"\n{setting}")
            wide = part.pivot_table(
                index="attack", columns="K", values=["auc", "tpr@1%", "tpr@0.1%"], sort=False
            )
            print(wide.round(3).to_string())
        print()
        print(_load())


if __name__ == "__main__":
    main()
