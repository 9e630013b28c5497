"""Slow checks of the algorithm audit against mechanisms of known ε (issue #19, "Done when").

The numbers of the issue's note come from ``benchmarks/bench_algorithm_claims.py`` (same
audits, printed as tables); these tests assert them. Every audit is the embedded demo's:
3 000 records over a 60-cell domain, one fixed draw of the other 999 training records, the
most common record as target, the expanded histogram release and its count of that cell.
"""

import logging

import numpy as np
import pytest
from joblib import Parallel, delayed, parallel_config
from scipy.stats import binom

from sklearn_mace.algorithm import (
    AlgorithmAudit,
    DPHistogramSynthesizer,
    ReleaseFeatures,
    WrongNoiseHistogramSynthesizer,
)
from sklearn_mace.datasets import make_categorical_population

DEMO = make_categorical_population()  # the embedded demo population (seed 0)

pytestmark = pytest.mark.slow

COUNT = ReleaseFeatures(None, n_neighbors=(), radii=(0.0,), bandwidth=None)
ALPHA = 0.05


@pytest.fixture(scope="module")
def demo():
    population, targets = DEMO.data, DEMO.targets
    return population, targets[0]


def _bounds(Recipe, epsilon, relation, n_runs, seeds, demo, n_jobs=2):
    population, target = demo
    recipe = Recipe(epsilon, categories=[np.arange(k) for k in DEMO.categories], relation=relation)

    def one(seed):
        return (
            AlgorithmAudit(
                recipe,
                targets=[target],
                relation=relation,
                n_runs=n_runs,
                train_size=DEMO.train_size,
                datasets="fixed",
                featurizer=COUNT,
                random_state=seed,
            )
            .fit(population)
            .epsilon_lower_bounds_[0]
        )

    return np.array(Parallel(n_jobs=n_jobs)(delayed(one)(seed) for seed in seeds))


@pytest.mark.parametrize("relation", ["add_remove", "substitute"])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_sound_on_the_correct_histogram(epsilon, relation, demo):
    # 200 audits at 95 %: overshoots ~ Bin(200, <= 0.05); more than binom.ppf(0.999) = 21
    # happens with probability below 0.001 for a valid bound. 30 runs per side keep the
    # 1 200 audits affordable (the randomized-response test below has the power).
    bounds = _bounds(DPHistogramSynthesizer, epsilon, relation, 30, range(200), demo)
    assert np.all(np.isfinite(bounds)) and np.all(bounds >= 0)
    assert (bounds > epsilon).sum() <= binom.ppf(0.999, 200, ALPHA)


def test_tight_on_the_correct_histogram(demo):
    # 1 000 runs per side: the split audit of the Laplace count reaches 0.64·ε on average
    # (300 simulated audits); 20 audits have a mean within ±0.07 of it (sd ≈ 0.15/√20 ≈
    # 0.034, two of them), so 0.57 separates "tight" from a broken threshold choice (which
    # measured 0.48 with thresholds taken from cross-validated fits).
    bounds = _bounds(DPHistogramSynthesizer, 1.0, "add_remove", 1000, range(20), demo)
    assert bounds.mean() >= 0.57
    assert np.median(bounds) >= 0.55


def test_catches_the_wrong_noise(demo):
    # True ε = 2, claimed 1: at 1 000 runs per side the certified ε exceeds 1 in 96 % of
    # simulated audits; 30 audits with at most 3 misses (P[Bin(30, 0.9) <= 26] = 0.35 at the
    # issue's 90 %, P[... | 0.96] = 0.97).
    bounds = _bounds(WrongNoiseHistogramSynthesizer, 1.0, "add_remove", 1000, range(30), demo)
    assert (bounds > 1.0).sum() >= 27
    assert np.all(bounds <= 2.0)


def test_processes_and_a_dask_cluster_give_the_serial_result(demo):
    distributed = pytest.importorskip("distributed")
    population, target = demo
    recipe = DPHistogramSynthesizer(1.0, categories=[np.arange(k) for k in DEMO.categories])
    params = dict(
        targets=[target], n_runs=60, train_size=DEMO.train_size, featurizer=COUNT, random_state=5
    )
    serial = AlgorithmAudit(recipe, **params).fit(population)
    processes = AlgorithmAudit(recipe, n_jobs=2, **params).fit(population)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster),
        parallel_config(backend="dask"),
    ):
        on_dask = AlgorithmAudit(recipe, **params).fit(population)
    for other in (processes, on_dask):
        np.testing.assert_array_equal(other.run_features_, serial.run_features_)
        np.testing.assert_array_equal(other.epsilon_lower_bounds_, serial.epsilon_lower_bounds_)


def test_dpsgd_canary_audit_stays_below_the_accountant():
    # The accountant's ε = 4 (δ = 1e-5) may never be exceeded; the no-noise control is
    # certified above 1 (benchmarks/bench_algorithm_models.py prints the table).
    pytest.importorskip("opacus")
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression

    from sklearn_mace.algorithm import make_canaries
    from tests._dpsgd import DPSGDLogisticRegression, dpsgd_noise_multiplier

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    records = np.column_stack([X, y])
    features = make_canaries(X, distance=1.0, random_state=0)
    label = 1.0 - LogisticRegression().fit(X, y).predict(features)
    canary = np.column_stack([features, label])
    sigma = dpsgd_noise_multiplier(4.0, 1e-5, 50 / 200, 4)
    bounds = {}
    for name, noise, seeds in (("dp", sigma, range(3)), ("none", 0.0, range(1))):
        for seed in seeds:
            bounds[name, seed] = (
                AlgorithmAudit(
                    DPSGDLogisticRegression(noise_multiplier=noise),
                    targets=canary,
                    n_runs=100,
                    train_size=200,
                    datasets="fixed",
                    delta=1e-5,
                    n_jobs=2,
                    random_state=seed,
                )
                .fit(records)
                .epsilon_lower_bounds_[0]
            )
    assert all(bounds["dp", seed] <= 4.0 for seed in range(3))
    assert bounds["none", 0] > 1.0


@pytest.mark.parametrize("certificate", ["threshold", "rank_test"])
@pytest.mark.parametrize("law", ["lognormal", "student-t"])
@pytest.mark.parametrize("dim", [2, 8])
def test_a_data_blind_recipe_is_certified_nowhere(law, dim, certificate):
    # 200 audits per setting of a recipe whose release ignores its data (ε = 0): at most
    # binom.ppf(0.999, 200, 0.05) = 21 may claim (probability below 0.001 for a valid bound).
    from tests.algorithm.test_algorithm import null_claims

    # The same audits' μ bounds (with the rank test: the larger of the point's and the μ
    # test's, Gaussian worst case) likewise.
    claims = null_claims(law, dim, range(200), n_runs=100, certificate=certificate, bound="both")
    assert claims["epsilon"] <= binom.ppf(0.999, 200, ALPHA)
    assert claims["mu"] <= binom.ppf(0.999, 200, ALPHA)


def test_catches_the_wrong_noise_under_substitute(demo):
    # Issue #30 item 4: under substitute-one the wrong-noise histogram (claims 1, truly 2)
    # moves the target's cell up and the replacement's down, each by noise of scale 1; read
    # together (the replacement's count is a feature too) the additive attack's best rule
    # reaches ε ≈ 1.3 at 500 certifying runs per side. Before, the target's cell alone
    # capped it near 0.64: contradicted in 0 of 12 audits. Measured: 17 of these 20 audits,
    # 93 % over 30 re-splits of 6 demo audits, 95 % of 40 simulated (bench_algorithm_
    # tightness.py). The issue asks for 90 %: at that rate P[Bin(20, 0.9) <= 15] = 0.043, so
    # at least 16 of 20 rejects "below 90 %" only on real evidence.
    bounds = _bounds(WrongNoiseHistogramSynthesizer, 1.0, "substitute", 1000, range(20), demo)
    assert (bounds > 1.0).sum() >= 16, bounds
    assert np.all(bounds <= 2.0)
