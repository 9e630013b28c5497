"""What a one-run audit of a DP-SGD trainer costs and finds (issue #30 item 5).

The recipes are :class:`~sklearn_mace.algorithm.DPSGDLogisticRegression` (opacus, noise
calibrated by the accountant to (ε, 1e-5), its ε(δ) curve as the claim) and
:class:`~sklearn_mace.algorithm.NoiseBugDPSGDLogisticRegression` (σ/4, the same claim). The
population is scikit-learn's breast cancer table (569 rows, 30 standardized features) with
1 000 Dirac canaries (:func:`~sklearn_mace.algorithm.make_dirac_canaries`); the audit is
``AlgorithmAudit(design="one_run", targets=canaries)``: one training with every population
row and each canary included with probability ½.

Per ε and recipe, the table prints:

* ``train cold`` — one ``fit`` as a user runs it once: the accountant's calibration of σ
  (what opacus' ``make_private_with_epsilon`` does) and the training; ``train warm`` — the
  training alone (σ cached);
* ``audit`` — the whole one-run audit from scratch: the claim (calibration and the
  accountant's curve), the training, the canaries' features, the attack and every bound;
  ``audit/cold`` and ``audit/warm`` the ratios;
* the bounds of that audit: Steinke et al.'s ε, the f-DP ε, the μ bound (beside the true
  μ = √T/σ of the training), and whether the claim is contradicted.

With ``--audits N`` each recipe is audited N times more (seeds 100…): how often the claim is
contradicted and the mean/max bounds. Import and first use of torch and opacus are timed apart
(once per process).

Run: ``OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_dpsgd_one_run.py --epsilons 1 4 8
--audits 40`` (135 s on the shared 2-core machine at load ≈ 6, 2026-11-27; the numbers are in
the CHANGELOG entry of issue #30).
"""

import argparse
import time

import numpy as np

ALPHA = 0.05


def _clear_caches():
    from sklearn_mace.algorithm import _dpsgd

    _dpsgd.accountant_noise_multiplier.cache_clear()
    _dpsgd.accountant_epsilons.cache_clear()


def _population(n_canaries):
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    from sklearn_mace.algorithm import make_dirac_canaries

    X, y = load_breast_cancer(return_X_y=True)
    return make_dirac_canaries(np.column_stack([StandardScaler().fit_transform(X), y]), n_canaries)


def _audit(Recipe, epsilon, population, canaries, seed):
    from sklearn_mace.algorithm import AlgorithmAudit

    recipe = Recipe(epsilon=epsilon)
    return AlgorithmAudit(
        recipe,
        design="one_run",
        targets=canaries,
        train_size=len(population),
        claim=recipe.privacy_claim(),
        random_state=seed,
    ).fit(population)


def _timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def one_row(Recipe, epsilon, population, canaries):
    rng = np.random.default_rng(0)
    data = np.vstack([population, canaries[rng.random(len(canaries)) < 0.5]])
    _clear_caches()
    model, cold = _timed(
        lambda: Recipe(epsilon=epsilon, random_state=0).fit(data[:, :-1], data[:, -1])
    )
    _, warm = _timed(lambda: Recipe(epsilon=epsilon, random_state=1).fit(data[:, :-1], data[:, -1]))
    _clear_caches()
    audit, seconds = _timed(lambda: _audit(Recipe, epsilon, population, canaries, 0))
    return {
        "recipe": Recipe.__name__,
        "epsilon": epsilon,
        "train cold": cold,
        "train warm": warm,
        "audit": seconds,
        "audit/cold": seconds / cold,
        "audit/warm": seconds / warm,
        "Steinke eps": float(audit.epsilon_lower_bounds_[0]),
        "f-DP eps": float(audit.fdp_epsilon_lower_bounds_[0]),
        "mu bound": float(audit.mu_lower_bounds_[0]),
        "true mu": model.mu_,
        "contradicted": bool(audit.contradicted_[0]),
    }


def repeated(Recipe, epsilon, population, canaries, n_audits):
    audits = [
        _audit(Recipe, epsilon, population, canaries, seed) for seed in range(100, 100 + n_audits)
    ]
    steinke = np.array([a.epsilon_lower_bounds_[0] for a in audits])
    mu = np.array([a.mu_lower_bounds_[0] for a in audits])
    contradicted = sum(bool(a.contradicted_[0]) for a in audits)
    return (
        f"{Recipe.__name__:<34} {epsilon:>4g} {contradicted:>4d}/{n_audits:<4d} "
        f"{steinke.mean():>8.2f} {steinke.max():>8.2f} {mu.mean():>8.2f} {mu.max():>8.2f}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[4.0])
    parser.add_argument("--canaries", type=int, default=1000)
    parser.add_argument("--audits", type=int, default=0, help="repeated audits per recipe")
    args = parser.parse_args()

    start = time.perf_counter()
    import opacus  # noqa: F401
    import torch  # noqa: F401

    from sklearn_mace.algorithm import DPSGDLogisticRegression, NoiseBugDPSGDLogisticRegression

    population, canaries = _population(args.canaries)
    # torch's and opacus' first use in a process (lazy initialisation) is a one-off too
    DPSGDLogisticRegression(epsilon=8.0, epochs=1).fit(population[:20, :-1], population[:20, -1])
    print(f"import and first use of torch + opacus: {time.perf_counter() - start:.2f} s (once)")
    recipes = (DPSGDLogisticRegression, NoiseBugDPSGDLogisticRegression)
    print(f"population {population.shape}, {len(canaries)} canaries, α = {ALPHA}\n")

    rows = [one_row(R, e, population, canaries) for e in args.epsilons for R in recipes]
    header = list(rows[0])
    widths = [34, 5] + [11] * (len(header) - 2)
    print(
        " ".join(
            f"{name:>{w}}" if i else f"{name:<{w}}"
            for i, (name, w) in enumerate(zip(header, widths, strict=True))
        )
    )
    for row in rows:
        cells = []
        for i, (name, w) in enumerate(zip(header, widths, strict=True)):
            value = row[name]
            text = f"{value:.3g}" if isinstance(value, float) else str(value)
            cells.append(f"{text:<{w}}" if i == 0 else f"{text:>{w}}")
        print(" ".join(cells))
    for epsilon in args.epsilons:
        total = sum(r["audit"] for r in rows if r["epsilon"] == epsilon)
        print(f"both recipes' audits at ε = {epsilon:g}: {total:.1f} s")

    if args.audits:
        print(
            f"\n{'recipe':<34} {'eps':>4} {'contradicted':>9} {'mean ε':>8} {'max ε':>8} "
            f"{'mean μ':>8} {'max μ':>8}   (Steinke's ε, f-DP μ bound)"
        )
        for epsilon in args.epsilons:
            for Recipe in recipes:
                print(repeated(Recipe, epsilon, population, canaries, args.audits), flush=True)
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
