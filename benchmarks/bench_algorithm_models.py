"""DP-SGD logistic regression audited with a canary (issue #19, "Models too").

Recipe: binary logistic regression on breast_cancer (569 records, 30 standardized features,
label last) trained with DP-SGD by opacus (``tests/_dpsgd.py``: Poisson sampling at rate
50/200, clipping at 1, 4 epochs, weights from zero). The noise multiplier that spends
ε = 4 at δ = 1e-5 comes from opacus' PRV accountant. The canary: a record beyond the data's
range in every feature (``make_canaries``, 1 range out) with the label a logistic
regression of the population does not predict for it (a record the model must memorise).
:class:`~sklearn_mace.algorithm.AlgorithmAudit` trains the recipe ``--runs`` times with the
canary and as many without it (add/remove-one, one fixed draw of 199 other records), reads
the canary's loss and log-odds from every model, and certifies ε at δ = 1e-5.

Rows: DP-SGD at ε = 4 (``--audits`` seeds; no audit may certify more than 4), the same with
the noise multiplier halved (ε ≈ 11 by the accountant) and without noise (clipping only,
ε = ∞). With n runs per side, a split audit certifies at most about log((n/2)/3.7) even for
a perfect attack (both error counts 0): that is printed as "reachable".

Run: ``OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_algorithm_models.py``.
"""

import argparse
import time

import numpy as np
from scipy.stats import beta
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression

from sklearn_mace.algorithm import AlgorithmAudit, make_canaries
from tests._dpsgd import DPSGDLogisticRegression, dpsgd_noise_multiplier

DELTA = 1e-5
TRAIN, BATCH, EPOCHS = 200, 50, 4


def population():
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return np.column_stack([X, y])


def reachable(n_runs, confidence=0.95):
    """ε certified by a perfect attack on n_runs/2 certifying runs per side (0 errors)."""
    n = n_runs // 2
    upper = beta.ppf(1 - (1 - confidence) / 2, 1, n)  # Clopper–Pearson with 0 errors
    return float(np.log((1 - DELTA - upper) / upper))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="runs per side")
    parser.add_argument("--audits", type=int, default=3, help="audits at ε = 4")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    records = population()
    features = make_canaries(records[:, :-1], distance=1.0, random_state=0)
    # the label the population's model would not give it: a canary the model must memorise
    predicted = LogisticRegression().fit(records[:, :-1], records[:, -1]).predict(features)
    canary = np.column_stack([features, 1.0 - predicted])
    sigma = dpsgd_noise_multiplier(4.0, DELTA, BATCH / TRAIN, EPOCHS)
    rows = [(f"DP-SGD, ε = 4 (σ = {sigma:.3f})", sigma, seed) for seed in range(args.audits)]
    rows += [(f"noise halved (σ = {sigma / 2:.3f})", sigma / 2, 0), ("no noise (σ = 0)", 0.0, 0)]
    print(
        f"\nDP-SGD logistic regression on breast_cancer, canary outside the support, "
        f"{args.runs} runs per side, δ = {DELTA:g}; a perfect attack certifies at most "
        f"{reachable(args.runs):.2f} here"
    )
    print(f"{'recipe':>28} {'seed':>4} {'ε_lo':>6} {'AUC':>6} {'TPR':>6} {'FPR':>6} {'time s':>7}")
    for name, noise, seed in rows:
        start = time.perf_counter()
        audit = AlgorithmAudit(
            DPSGDLogisticRegression(
                noise_multiplier=noise, epochs=EPOCHS, batch_size=BATCH, max_grad_norm=1.0
            ),
            targets=canary,
            n_runs=args.runs,
            train_size=TRAIN,
            datasets="fixed",
            delta=DELTA,
            claimed_epsilon=4.0,
            n_jobs=args.jobs,
            random_state=seed,
        ).fit(records)
        result = audit.audits_[0]
        print(
            f"{name:>28} {seed:4d} {result.epsilon_lower_bound:6.3f} {audit.auc_[0]:6.3f} "
            f"{1 - result.fnr:6.3f} {result.fpr:6.3f} {time.perf_counter() - start:7.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
