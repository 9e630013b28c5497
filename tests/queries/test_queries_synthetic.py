"""Queries against released synthetic data: nearest-synthetic distance (MACE Eq. 2),
the Monte-Carlo ε-ball query (Eq. 1), hybrids (Eq. 4), and the exact chunked k-NN they use."""

import importlib.util
import pickle

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.queries import DiscriminatorQuery, MonteCarloQuery, NearestSyntheticDistance
from sklearn_mace.utils._neighbors import nearest_sq_distances
from tests._query_models import (
    RowMean,
    query_expected_failed_checks,
    synthetic_of_width,
    width_for,
)

HAS_FAISS = importlib.util.find_spec("faiss") is not None
BACKENDS = [
    "torch",
    pytest.param("faiss", marks=pytest.mark.skipif(not HAS_FAISS, reason="faiss not installed")),
]

# ---------------------------------------------------------------- estimator checks


@parametrize_with_checks(
    [
        NearestSyntheticDistance(synthetic_of_width(3), backend="torch"),
        NearestSyntheticDistance(synthetic_of_width(3)),  # faiss when installed
        NearestSyntheticDistance(synthetic_of_width(3), k=2, metric="sqeuclidean"),
        MonteCarloQuery(synthetic_of_width(3)),
        MonteCarloQuery(synthetic_of_width(3), radius=1.5, weighting="count"),
    ],
    expected_failed_checks=query_expected_failed_checks,
)
def test_synthetic_queries_pass_estimator_checks(estimator, check):
    # The synthetic set fixes the record width: give it the width of the check's data.
    check(estimator.set_params(synthetic=synthetic_of_width(width_for(check))))


# ---------------------------------------------------------------- exact k-NN (ground truth)


def _brute_sq(X, Y, k):
    return np.sort(cdist(X, Y, "sqeuclidean"), axis=1)[:, :k]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", [1, 4])
def test_nearest_sq_distances_matches_brute_force(backend, k, rng):
    X, Y = rng.normal(size=(230, 7)), rng.normal(size=(1500, 7))
    got = nearest_sq_distances(X, Y, k=k, backend=backend, max_chunk_bytes=20_000)
    # Exact in float64: differences in direct float64 sums are a few ulps of values of order 1.
    np.testing.assert_allclose(got, _brute_sq(X, Y, k), rtol=1e-12, atol=1e-12)


def test_nearest_sq_distances_reuses_a_recent_pass_by_content(rng, monkeypatch):
    # A repeated request (same values, even in another array) returns the same distances
    # without another pass; a changed input or argument runs one; callers get copies.
    import sklearn_mace.utils._neighbors as neighbors

    passes = []
    compute = neighbors._nearest_sq_distances
    monkeypatch.setattr(
        neighbors, "_nearest_sq_distances", lambda *a: passes.append(1) or compute(*a)
    )
    X, Y = rng.normal(size=(60, 4)), rng.normal(size=(300, 4))
    first = nearest_sq_distances(X, Y)
    first[:] = -1.0  # a caller that writes into its result must not change later answers
    again = nearest_sq_distances(X.copy(), Y.copy())
    assert len(passes) == 1
    np.testing.assert_array_equal(
        again,
        compute(X, Y, 1, neighbors.resolve_device("auto"), neighbors.DEFAULT_CHUNK_BYTES, "torch"),
    )
    Y_changed = Y.copy()
    Y_changed[17, 2] += 1e-12
    nearest_sq_distances(X, Y_changed)
    nearest_sq_distances(X, Y, k=2)
    assert len(passes) == 3
    np.testing.assert_allclose(nearest_sq_distances(X, Y, k=2), _brute_sq(X, Y, 2), rtol=1e-12)
    assert len(passes) == 3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", [1, 3])
def test_nearest_sq_distances_exact_under_near_ties_far_from_the_origin(backend, k, rng):
    # Far from the origin with duplicated synthetic rows and queries 1e-6 from them: the
    # float32 screen cannot separate the candidates (its rounding bound is far above 1e-12),
    # so the exactness certificate must send these rows to the float64 recomputation, whose
    # error is at most (d + 8)·2⁻⁵³·(‖x‖ + max‖y‖)² ≈ 13 · 1.1e-16 · 6² < 1e-13 in the centred
    # coordinates (norms below 6 here) — a float32 answer would be off by about 1e-4.
    Y = np.repeat(rng.normal(size=(40, 5)), 25, axis=0) + 1e4
    X = np.vstack([Y[::97] + 1e-6, rng.normal(size=(10, 5)) + 1e4])
    got = nearest_sq_distances(X, Y, k=k, backend=backend)
    np.testing.assert_allclose(got, _brute_sq(X, Y, k), rtol=1e-12, atol=1e-13)


@pytest.mark.skipif(not HAS_FAISS, reason="faiss not installed")
def test_faiss_single_neighbour_is_within_the_documented_bound_under_near_ties(rng):
    # Two synthetic rows whose squared distances to x differ by 1e-9, far below the float32
    # screen's resolution: faiss may pick either. The documented guarantee is the exact
    # float64 distance of the row it picked, at most 2β above the minimum, where
    # β = 2·(d + 8)·2⁻²⁴·(‖x‖ + max‖y‖)² in coordinates centred at the mean of Y.
    d = 4
    x = np.zeros((1, d))
    Y = np.vstack(
        [np.eye(d)[:1] * 1.0, np.eye(d)[1:2] * np.sqrt(1.0 + 1e-9), rng.normal(size=(50, d)) + 6.0]
    )
    got = nearest_sq_distances(x, Y, k=1, backend="faiss")[0, 0]
    centred_x, centred_y = x - Y.mean(axis=0), Y - Y.mean(axis=0)
    beta = (
        2
        * (d + 8)
        * 2.0**-24
        * (np.linalg.norm(centred_x) + np.linalg.norm(centred_y, axis=1).max()) ** 2
    )
    assert got == pytest.approx(1.0, abs=1e-15) or got == pytest.approx(1.0 + 1e-9, abs=1e-15)
    assert got <= 1.0 + 2 * beta


def test_nearest_sq_distances_bounded_block_size_gives_same_answer(rng):
    X, Y = rng.normal(size=(50, 3)), rng.normal(size=(400, 3))
    tiny = nearest_sq_distances(X, Y, max_chunk_bytes=1)  # one row per block
    np.testing.assert_allclose(tiny, _brute_sq(X, Y, 1), rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- the queries' values


@pytest.mark.parametrize("backend", ["auto", *BACKENDS])
def test_nearest_synthetic_distance_is_eq2(backend, rng):
    synthetic, X = rng.normal(size=(300, 4)), rng.normal(size=(40, 4))
    Q = NearestSyntheticDistance(synthetic, backend=backend).fit_transform(X)
    assert Q.shape == (40, 1) and Q.dtype == np.float64
    np.testing.assert_allclose(Q[:, 0], cdist(X, synthetic).min(axis=1), rtol=1e-12)
    Q2 = NearestSyntheticDistance(synthetic, k=3, metric="sqeuclidean").fit_transform(X)
    np.testing.assert_allclose(Q2, _brute_sq(X, synthetic, 3), rtol=1e-12)


def _monte_carlo_truth(X, synthetic, eps, weighting):
    d = cdist(X, synthetic)
    inside = d <= eps
    if weighting == "count":
        return inside.mean(axis=1)
    return np.where(inside, -np.log(np.maximum(d, 1e-12)), 0.0).sum(axis=1) / len(synthetic)


@pytest.mark.parametrize("weighting", ["log", "count"])
def test_monte_carlo_query_is_eq1(weighting, rng):
    synthetic, X = rng.normal(size=(500, 3)), rng.normal(size=(60, 3))
    query = MonteCarloQuery(synthetic, weighting=weighting, max_chunk_bytes=10_000)
    Q = query.fit_transform(X)
    # The median heuristic on squared distances (the reference MC); 60 rows: ε² is the mean
    # of the two middle squared distances, not the square of the two middle distances' mean.
    eps = np.sqrt(np.median(cdist(X, synthetic, "sqeuclidean").min(axis=1)))
    assert query.radius_ == pytest.approx(eps, rel=1e-12)
    np.testing.assert_allclose(
        Q[:, 0], _monte_carlo_truth(X, synthetic, eps, weighting), rtol=1e-9, atol=1e-12
    )
    fixed = MonteCarloQuery(synthetic, radius=0.8, weighting=weighting).fit(X)
    np.testing.assert_allclose(
        fixed.transform(X)[:, 0], _monte_carlo_truth(X, synthetic, 0.8, weighting), rtol=1e-9
    )


def test_monte_carlo_exact_copy_scores_finite():
    synthetic = np.array([[0.0, 0.0], [1.0, 1.0]])
    Q = MonteCarloQuery(synthetic, radius=0.5).fit_transform([[0.0, 0.0], [5.0, 5.0]])
    np.testing.assert_allclose(Q[:, 0], [-np.log(1e-12) / 2, 0.0])


def test_monte_carlo_copies_and_near_copies_get_exact_distances(rng):
    # Copies of synthetic records are what a memorising generator leaks: their -log d must
    # come from d = 0 (floored at min_distance), not from the rounding noise of the
    # ||x||^2 + ||g||^2 - 2 x.g expansion (which gave -log d of 17 to 28 for these copies).
    synthetic = rng.normal(loc=3.0, size=(200, 4))
    X = np.vstack([synthetic[:20], synthetic[20:40] + 1e-6, rng.normal(loc=3.0, size=(20, 4))])
    Q = MonteCarloQuery(synthetic, radius=0.5, max_chunk_bytes=4_000).fit_transform(X)
    np.testing.assert_allclose(Q[:, 0], _monte_carlo_truth(X, synthetic, 0.5, "log"), rtol=1e-9)


# ---------------------------------------------------------------- composition (Eq. 4)


def test_hybrid_query_is_a_feature_union_and_pipelines_work(rng):
    synthetic = rng.normal(size=(200, 4))
    D = RowMean(2.0)
    hybrid = FeatureUnion(
        [("d", DiscriminatorQuery(D)), ("nn", NearestSyntheticDistance(synthetic))]
    )
    members, others = synthetic[:50] + 0.01, rng.normal(size=(50, 4)) * 0.1 + 5.0
    X, m = np.vstack([members, others]), np.r_[np.ones(50), np.zeros(50)]
    Q = hybrid.fit_transform(X)
    np.testing.assert_allclose(Q[:, 0], DiscriminatorQuery(D).fit_transform(X)[:, 0])
    np.testing.assert_allclose(Q[:, 1], cdist(X, synthetic).min(axis=1), rtol=1e-12)
    assert list(hybrid.get_feature_names_out()) == [
        "d__discriminatorquery0",
        "nn__nearestsyntheticdistance0",
    ]
    # Members sit 0.02 from a synthetic copy, others far away: any attacker separates them.
    attack = make_pipeline(clone(hybrid), LogisticRegression()).fit(X, m)
    assert attack.score(X, m) == 1.0


def test_synthetic_queries_clone_and_pickle(rng):
    synthetic, X = rng.normal(size=(100, 3)), rng.normal(size=(10, 3))
    for query in (NearestSyntheticDistance(synthetic, k=2), MonteCarloQuery(synthetic)):
        fitted = clone(query).fit(X)
        restored = pickle.loads(pickle.dumps(fitted))
        np.testing.assert_array_equal(restored.transform(X), fitted.transform(X))


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("Query", [NearestSyntheticDistance, MonteCarloQuery])
def test_bad_synthetic_sets_are_clear_errors(Query, rng):
    X = rng.normal(size=(5, 3))
    with pytest.raises(ValueError, match=r"synthetic has 4 feature\(s\) but X has 3"):
        Query(rng.normal(size=(10, 4))).fit(X)
    with pytest.raises(ValueError, match="synthetic must be a non-empty 2-D array"):
        Query(np.empty((0, 3))).fit(X)
    bad = rng.normal(size=(10, 3))
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="synthetic contains NaN"):
        Query(bad).fit(X)
    X_nan = X.copy()
    X_nan[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        Query(rng.normal(size=(10, 3))).fit(X_nan)


def test_k_larger_than_the_synthetic_set_and_missing_faiss_are_clear(rng, monkeypatch):
    X = rng.normal(size=(5, 3))
    with pytest.raises(ValueError, match="k=4 exceeds the 3 synthetic records"):
        NearestSyntheticDistance(rng.normal(size=(3, 3)), k=4).fit(X)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match="faiss-cpu"):
        NearestSyntheticDistance(rng.normal(size=(3, 3)), backend="faiss").fit(X)
    assert NearestSyntheticDistance(rng.normal(size=(3, 3))).fit_transform(X).shape == (5, 1)


def test_monte_carlo_median_of_copies_counts_the_copies():
    # Most records passed to fit are copies of synthetic records (a perfect-copy release):
    # ε = 0 is valid and the ball counts exact copies (the copy scores, the others 0).
    synthetic = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    X = np.array([[0.0, 0.0], [1.0, 1.0], [7.0, 7.0]])
    query = MonteCarloQuery(synthetic, weighting="count").fit(X)
    assert query.radius_ == 0.0
    np.testing.assert_allclose(query.transform(X)[:, 0], [1 / 3, 1 / 3, 0.0])


def test_queries_compose_with_the_mace_estimators_in_a_pipeline(rng):
    # In 10-D, members are noisy synthetic copies (distance about 0.05·sqrt(10) = 0.16) and
    # non-members independent draws (nearest of 300 synthetic rows about 2 away): the
    # nearest-synthetic query separates them perfectly, so U_N and the held-out advantage
    # of the pipeline's Bayes classifier are close to 1.
    from sklearn.model_selection import cross_val_score

    from sklearn_mace import BayesOptimalMIA, KDEAdvantageEstimator

    synthetic = rng.normal(size=(300, 10))
    members = synthetic[:100] + rng.normal(scale=0.05, size=(100, 10))
    others = rng.normal(size=(100, 10))
    X, m = np.vstack([members, others]), np.r_[np.ones(100), np.zeros(100)]
    hybrid = FeatureUnion(
        [("d", DiscriminatorQuery(RowMean())), ("nn", NearestSyntheticDistance(synthetic))]
    )
    audit = make_pipeline(hybrid, KDEAdvantageEstimator(random_state=0, device="cpu"))
    assert audit.fit(X, m)[-1].advantage_estimate_ > 0.8
    assert cross_val_score(audit, X, m, cv=3).mean() > 0.8
    attack = make_pipeline(NearestSyntheticDistance(synthetic), BayesOptimalMIA(device="cpu"))
    risk = attack.fit(X, m)[-1].individual_risk(attack[0].transform(X))
    assert risk.shape == (200,) and np.all((risk >= 0) & (risk <= 1))
