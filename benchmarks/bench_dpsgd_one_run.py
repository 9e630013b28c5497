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

With ``--compare N`` it prints instead the **black-box vs white-box** table: per ε, number of
canaries (``--canaries``, several allowed) and recipe, N audits (seeds 100…) read both ways
from the *same* training (the same ``random_state`` draws the same inclusions and noise):
black-box — the canaries' loss and log-odds from the final model, an attack trained on half
of them; white-box — :class:`~sklearn_mace.algorithm.DPSGDGradientScores` on the recorded
per-step noisy gradients, every canary guessed on, no attack. Columns: the claimed ε (the
accountant's, at δ = 1e-5), the mean and largest Steinke ε and f-DP ε, the mean μ bound
beside the true μ and the claim's μ (the μ-GDP curve through the claim at δ = 1e-5), the
contradictions, and the bound's ceiling — the f-DP ε certified by perfect guesses on that
many canaries (no audit of this design can certify more). Timings are wall and CPU seconds
of the N audits.

``--views``, ``--recipes`` and ``--first-seed`` pick rows and seeds.

Run: ``OMP_NUM_THREADS=1 nice -n 5 python benchmarks/bench_dpsgd_one_run.py --compare 40
--epsilons 1 4 8`` (540 s at load 6–12, 2026-11-27); at 10 000 canaries (about 17 s of CPU
per audit): ``--compare 10 --epsilons 8 --canaries 10000 --recipes bug --views white
--first-seed 200`` (the slow test's seeds), ``--compare 5 ... --recipes correct`` and
``--compare 3 ... --recipes bug --views black``. The numbers are in ``docs/guide/dp_claims.rst``.

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


def _audit(Recipe, epsilon, population, canaries, seed, white_box=False):
    from sklearn_mace.algorithm import AlgorithmAudit, DPSGDGradientScores

    recipe = Recipe(epsilon=epsilon, record_gradients=white_box)
    return AlgorithmAudit(
        recipe,
        design="one_run",
        targets=canaries,
        train_size=len(population),
        featurizer=DPSGDGradientScores() if white_box else None,
        claim=recipe.privacy_claim(),
        random_state=seed,
    ).fit(population)


def _ceiling(claim, n_scored):
    """The f-DP ε that perfect guesses on ``n_scored`` canaries certify: the design's most."""
    from sklearn_mace.algorithm._one_run import guess_table

    included = np.arange(n_scored) % 2 == 0
    table = guess_table(included + 0.0, included, claim=claim, delta=1e-5, alpha=ALPHA, seed=0)
    return float(table["fdp_epsilon"].max())


def compare(Recipe, epsilon, population, canaries, n_audits, views=(False, True), first_seed=100):
    """One line per view: N audits of the same trainings, black-box then white-box."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    claim = Recipe(epsilon=epsilon).privacy_claim()
    claimed = claim.epsilon_at(1e-5)

    def gaussian_delta(mu):  # δ(ε) of μ-GDP (Dong, Roth & Su 2022, Cor. 2.13)
        return norm.cdf(-claimed / mu + mu / 2) - np.exp(claimed) * norm.cdf(-claimed / mu - mu / 2)

    claim_mu = brentq(lambda mu: gaussian_delta(mu) - 1e-5, 1e-3, 50.0)
    lines = []
    for white_box in views:
        start, cpu = time.perf_counter(), time.process_time()
        audits = [
            _audit(Recipe, epsilon, population, canaries, seed, white_box)
            for seed in range(first_seed, first_seed + n_audits)
        ]
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        steinke = np.array([a.epsilon_lower_bounds_[0] for a in audits])
        fdp = np.array([a.fdp_epsilon_lower_bounds_[0] for a in audits])
        mu = np.array([a.mu_lower_bounds_[0] for a in audits])
        contradicted = sum(bool(a.contradicted_[0]) for a in audits)
        n_scored = int(audits[0].certify_mask_.sum())
        true_mu = np.sqrt(Recipe().epochs) / Recipe(epsilon=epsilon)._noise_multiplier()
        lines.append(
            f"{NAMES[Recipe.__name__]:<22} {'white' if white_box else 'black':<5} "
            f"{len(canaries):>6d} {n_scored:>6d} {claimed:>6.2f} {steinke.mean():>7.2f} "
            f"{steinke.max():>7.2f} {fdp.mean():>7.2f} {fdp.max():>7.2f} {mu.mean():>6.2f} "
            f"{true_mu:>6.2f} {claim_mu:>6.2f} {contradicted:>4d}/{n_audits:<4d} "
            f"{_ceiling(claim, n_scored):>7.2f} {wall:>7.1f} {cpu:>7.1f}"
        )
    return lines


NAMES = {
    "DPSGDLogisticRegression": "dpsgd-logreg",
    "NoiseBugDPSGDLogisticRegression": "dpsgd-logreg-noise-bug",
}
COMPARE_HEADER = (
    f"{'recipe':<22} {'view':<5} {'m':>6} {'scored':>6} {'claim':>6} {'Stnk':>7} "
    f"{'max':>7} {'f-DP':>7} {'max':>7} {'μ':>6} {'true μ':>6} {'clm μ':>6} "
    f"{'contra':>9} {'ceiling':>7} {'wall s':>7} {'cpu s':>7}"
)


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
    parser.add_argument("--canaries", type=int, nargs="+", default=[1000])
    parser.add_argument("--audits", type=int, default=0, help="repeated audits per recipe")
    parser.add_argument(
        "--compare", type=int, default=0, help="audits per row of the black/white-box table"
    )
    parser.add_argument(
        "--views", nargs="+", choices=("black", "white"), default=["black", "white"]
    )
    parser.add_argument(
        "--recipes", nargs="+", choices=("correct", "bug"), default=["correct", "bug"]
    )
    parser.add_argument("--first-seed", type=int, default=100)
    args = parser.parse_args()
    if args.compare:
        return main_compare(args)

    start = time.perf_counter()
    import opacus  # noqa: F401
    import torch  # noqa: F401

    from sklearn_mace.algorithm import DPSGDLogisticRegression, NoiseBugDPSGDLogisticRegression

    population, canaries = _population(args.canaries[0])
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


def main_compare(args):
    import os

    from sklearn_mace.algorithm import DPSGDLogisticRegression, NoiseBugDPSGDLogisticRegression

    start = time.perf_counter()
    print(f"black-box vs white-box one-run audits, α = {ALPHA}, load {os.getloadavg()[0]:.1f}")
    print(COMPARE_HEADER, flush=True)
    for n_canaries in args.canaries:
        population, canaries = _population(n_canaries)
        for epsilon in args.epsilons:
            for name in args.recipes:
                Recipe = (
                    DPSGDLogisticRegression
                    if name == "correct"
                    else NoiseBugDPSGDLogisticRegression
                )
                views = tuple(view == "white" for view in args.views)
                lines = compare(
                    Recipe, epsilon, population, canaries, args.compare, views, args.first_seed
                )
                for line in lines:
                    print(f"ε={epsilon:<3g} {line}", flush=True)
    print(f"\ntotal {time.perf_counter() - start:.0f} s, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
