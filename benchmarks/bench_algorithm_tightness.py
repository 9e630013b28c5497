"""How tight are the algorithm audit's claims, and what does one run buy? (issue #30)

Every figure is an audit of a mechanism whose curve is known in closed form, run through
the audit's own code paths on simulated features (microseconds per run, so hundreds of
audits fit in minutes):

* ``--part multi`` — the multi-run design (:func:`certify_rule`, what ``AlgorithmAudit``
  does after its attack): the Gaussian count calibrated to (1, 1e-5) add/remove, claimed as
  its μ ≈ 0.27, mean certified μ / true μ; beside it what is attainable, the Clopper–Pearson
  bound at the best threshold with the population's error rates, with the half split and
  without it. Then σ/3 under the same claim (fraction of audits contradicting it), the
  exact law of the DP histogram's count (ε = 1, add/remove) and the wrong-noise histogram
  under substitute-one through the default substitute attack (both cells read).
* ``--part one-run`` — one run with m canaries of the idealized Gaussian mechanism
  (scores ``N(μ·included, 1)``): on the same guesses (a grid of guess counts, Bonferroni),
  Steinke et al.'s ε, the f-DP recursion on the (ε, δ) curve, the μ of the strongest
  rejected Gaussian curve and its ε at δ = 1e-5 (the reading with the claimed curve's
  shape, Mahloujifar et al.), against the true ε.

Measured 2026-11-27 on the shared 2-core machine (``--audits 40``): see the CHANGELOG entry
of issue #30. Run: ``nice -n 10 python benchmarks/bench_algorithm_tightness.py --part multi``
(``--quick`` for a smoke run).
"""

import argparse
import time

import numpy as np
from scipy.stats import norm

from sklearn_mace.algorithm import AlgorithmAudit, PrivacyClaim
from sklearn_mace.algorithm._audit import certify_rule
from sklearn_mace.algorithm._one_run import guess_table
from sklearn_mace.metrics._fdp import (
    epsilon_from_error_bounds,
    gaussian_epsilon,
    mu_from_error_bounds,
)

ALPHA = 0.05
MU = 1.0 / 3.7305  # σ ≈ 3.73 is the classic calibration of the Gaussian count for (1, 1e-5)


def _split(members, nonmembers, fraction=0.5):
    k1, k0 = int(fraction * members.size), int(fraction * nonmembers.size)
    return (members[:k1], nonmembers[:k0]), (members[k1:], nonmembers[k0:])


def gaussian_audit(seed, mu, n_runs, claim):
    rng = np.random.default_rng(seed)
    members, nonmembers = rng.normal(mu, 1.0, n_runs), rng.normal(0.0, 1.0, n_runs)
    audit = certify_rule(*_split(members, nonmembers), claim=claim, delta=0.0, alpha=ALPHA)
    point = (audit.fpr_upper, audit.fnr_upper)
    return float(mu_from_error_bounds(*point)), bool(claim.margin(*point) > 0)


def attainable(rates, n_certify, reading, n_draws=4000):
    """Mean bound of the best fixed threshold: ``rates`` lists the population's (FPR, FNR)
    of each candidate threshold, the certifying counts are drawn from them, and ``reading``
    turns Clopper–Pearson upper bounds (α/2 each) into the bound."""
    from sklearn_mace.metrics._audit import _cp_upper

    rng = np.random.default_rng(0)
    best = 0.0
    for fpr, fnr in rates:
        fp = rng.binomial(n_certify, fpr, n_draws)
        fn = rng.binomial(n_certify, fnr, n_draws)
        bound = reading(_cp_upper(fp, n_certify, ALPHA / 2), _cp_upper(fn, n_certify, ALPHA / 2))
        best = max(best, float(np.mean(bound)))
    return best


def attainable_mu(mu, n_certify):
    rates = [(norm.sf(t), norm.cdf(t - mu)) for t in np.linspace(-1, 1 + mu, 41)]
    return attainable(rates, n_certify, mu_from_error_bounds)


def attainable_histogram_epsilon(n_certify, epsilon=1.0):
    """The rounded Laplace count (scale 1/ε, shift 1): thresholds at every integer."""
    from scipy.stats import laplace

    def at_least(t, shift):  # P[round(shift + L) >= t] = P[L >= t − ½ − shift]
        return laplace.sf(t - 0.5 - shift, scale=1 / epsilon)

    rates = [(at_least(t, 0), 1 - at_least(t, 1)) for t in range(-8, 10)]
    return attainable(rates, n_certify, lambda u, v: epsilon_from_error_bounds(u, v, 0.0))


def rounded_laplace(rng, n, shift, scale):
    return np.rint(50 + shift + rng.laplace(0.0, scale, n))


def histogram_audit(seed, n_runs, epsilon=1.0):
    rng = np.random.default_rng(seed)
    members = rounded_laplace(rng, n_runs, 1, 1 / epsilon)
    nonmembers = rounded_laplace(rng, n_runs, 0, 1 / epsilon)
    claim = PrivacyClaim.pure(epsilon)
    return certify_rule(*_split(members, nonmembers), claim=claim, delta=0.0, alpha=ALPHA)


def swap_audit(seed, n_runs):
    """The wrong-noise histogram under substitute (claims 1, truly 2): the target's cell and
    the replacement's, each with rounded Laplace noise of scale 1, through the audit's
    default substitute attack and certificate."""
    rng = np.random.default_rng(seed)
    member = np.c_[rounded_laplace(rng, n_runs, 1, 1.0), rounded_laplace(rng, n_runs, 0, 1.0)]
    other = np.c_[rounded_laplace(rng, n_runs, 0, 1.0), rounded_laplace(rng, n_runs, 1, 1.0)]
    features = np.vstack([member, other])
    membership = np.r_[np.ones(n_runs, int), np.zeros(n_runs, int)]
    fit = np.zeros(2 * n_runs, bool)
    fit[rng.permutation(n_runs)[: n_runs // 2]] = True
    fit[n_runs + rng.permutation(n_runs)[: n_runs // 2]] = True
    audit = AlgorithmAudit(None, relation="substitute")
    audit.claim_, audit.delta_ = PrivacyClaim.pure(1.0, relation="substitute"), 0.0
    _, result, _, _ = audit._certify_one(
        audit._default_attack(), features, membership, fit, ALPHA, seed
    )
    return result.epsilon_lower_bound


def multi(args):
    print(f"multi-run design, Gaussian count claimed as its μ = {MU:.4f} (add/remove)")
    print(
        f"{'runs/side':>10} {'audits':>7} {'mean μ_lb/μ':>12} {'attainable split':>17} "
        f"{'no split':>9} {'s/audit':>8}"
    )
    for n_runs in args.runs:
        t0 = time.time()
        claim = PrivacyClaim.gaussian(MU)
        bounds = [gaussian_audit(s, MU, n_runs, claim)[0] for s in range(args.audits)]
        each = (time.time() - t0) / args.audits
        split, whole = attainable_mu(MU, n_runs // 2), attainable_mu(MU, n_runs)
        print(
            f"{n_runs:>10} {args.audits:>7} {np.mean(bounds) / MU:>12.3f} "
            f"{split / MU:>17.3f} {whole / MU:>9.3f} {each:>8.3f}"
        )
    caught = [
        gaussian_audit(s, 3 * MU, 1000, PrivacyClaim.gaussian(MU))[1] for s in range(args.audits)
    ]
    print(
        f"σ/3 under the claim μ = {MU:.3f}, 1 000 runs/side: contradicted in "
        f"{np.mean(caught):.0%} of {args.audits} audits"
    )
    eps = [histogram_audit(s, 1000).epsilon_lower_bound for s in range(args.audits)]
    print(
        f"DP histogram count (exact law), ε = 1, 1 000 runs/side: mean certified ε "
        f"{np.mean(eps):.3f} (attainable {attainable_histogram_epsilon(500):.3f} with the half "
        f"split, {attainable_histogram_epsilon(1000):.3f} without)"
    )
    swaps = np.array([swap_audit(s, 1000) for s in range(args.audits)])
    print(
        f"wrong-noise histogram under substitute (both cells, default attack), 1 000 "
        f"runs/side: mean ε {swaps.mean():.3f}, contradicted in {np.mean(swaps > 1):.0%}"
    )


def one_run(args):
    delta = 1e-5
    print("one run, idealized Gaussian mechanism, δ = 1e-5, same guesses (Bonferroni grid)")
    print(
        f"{'m':>6} {'μ':>4} {'true ε':>7} {'Steinke ε':>10} {'f-DP (ε,δ) ε':>13} "
        f"{'f-DP μ':>7} {'GDP-curve ε':>12} {'ratio':>6}"
    )
    for m in args.canaries:
        for mu in (0.5, 1.0, 2.0, 4.0):
            rows = []
            for seed in range(args.one_run_audits):
                rng = np.random.default_rng(seed)
                included = rng.random(m) < 0.5
                scores = rng.normal(mu * included, 1.0)
                table = guess_table(
                    scores, included, claim=None, delta=delta, alpha=ALPHA, seed=seed
                )
                mu_lb = table["fdp_mu"].max()
                rows.append(
                    (
                        table["steinke_epsilon"].max(),
                        table["fdp_epsilon"].max(),
                        mu_lb,
                        gaussian_epsilon(mu_lb, delta),
                    )
                )
            st, fe, fm, ge = np.mean(rows, axis=0)
            print(
                f"{m:>6} {mu:>4.1f} {gaussian_epsilon(mu, delta):>7.2f} {st:>10.2f} "
                f"{fe:>13.2f} {fm:>7.2f} {ge:>12.2f} {ge / st if st else np.nan:>6.2f}"
            )


def histogram_one_run(args):
    """One training of the DP histogram (claims ε = 1) with 4 000 canaries in distinct empty
    cells of a 100 × 100 domain (the population fills the 10 × 10 corner)."""
    from sklearn_mace.algorithm import (
        DPHistogramSynthesizer,
        ReleaseFeatures,
        WrongNoiseHistogramSynthesizer,
    )

    X = np.random.default_rng(0).integers(0, 10, size=(2000, 2)).astype(float)
    empty = np.array([(i, j) for i in range(10, 100) for j in range(100)], dtype=float)
    count = ReleaseFeatures(None, n_neighbors=(), radii=(0.0,), bandwidth=None)
    print("one run, DP histogram claimed at ε = 1, 4 000 empty-cell canaries, one training each")
    for Recipe in (DPHistogramSynthesizer, WrongNoiseHistogramSynthesizer):
        rows = []
        for seed in range(args.histogram_audits):
            canaries = empty[np.random.default_rng(seed).choice(len(empty), 4000, replace=False)]
            audit = AlgorithmAudit(
                Recipe(1.0, categories=100),
                targets=canaries,
                design="one_run",
                featurizer=count,
                claim=PrivacyClaim.pure(1.0),
                train_size=1000,
                random_state=seed,
            ).fit(X)
            rows.append((audit.epsilon_lower_bounds_[0], audit.contradicted_[0]))
        rows = np.array(rows, dtype=float)
        print(
            f"  {Recipe.__name__:<32} true ε {1 if Recipe is DPHistogramSynthesizer else 2}: "
            f"mean Steinke ε {rows[:, 0].mean():.3f} (max {rows[:, 0].max():.3f}), "
            f"contradicted in {rows[:, 1].mean():.0%} of {len(rows)}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("multi", "one-run", "all"), default="all")
    parser.add_argument("--audits", type=int, default=40)
    parser.add_argument("--one-run-audits", type=int, default=5)
    parser.add_argument("--histogram-audits", type=int, default=20)
    parser.add_argument("--runs", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--canaries", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.audits, args.one_run_audits, args.runs, args.canaries = 5, 1, [1000], [1000]
        args.histogram_audits = 2
    if args.part in ("multi", "all"):
        multi(args)
    if args.part in ("one-run", "all"):
        one_run(args)
        histogram_one_run(args)


if __name__ == "__main__":
    main()
