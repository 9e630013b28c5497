"""MonteCarloQuery reuses the nearest-synthetic distances of ``fit`` (issue #28).

``fit_transform`` on the targets skips the ball count of every record whose nearest synthetic
row lies beyond the radius (half of them, by the median rule). The reused path must give the
values of the full pass exactly, the skipped rows must truly have empty balls, and the rows
that are counted must not depend on the rows beside them.
"""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from sklearn_mace.queries import MonteCarloQuery, _synthetic
from sklearn_mace.queries._synthetic import sq_distance_margin
from sklearn_mace.utils._neighbors import count_within_radius, sq_distance_blocks


def _full_pass(query, X, synthetic):
    """The query without reuse: every row of ``X`` through the pairwise pass (the code
    before issue #28's reuse)."""
    if query.weighting == "count":
        counts = count_within_radius(X, synthetic, query.radius_, device="cpu")
        return counts / len(synthetic)
    return query._log_weighted_ball_sum(X, synthetic)[:, 0] / len(synthetic)


def _release(rng, n_synthetic, n_targets, d, offset):
    synthetic = rng.normal(loc=offset, size=(n_synthetic, d))
    X = rng.normal(loc=offset, size=(n_targets, d))
    copied = rng.integers(n_synthetic, size=n_targets // 5)
    X[: len(copied)] = synthetic[copied] + 1e-3 * rng.normal(size=(len(copied), d))
    X[len(copied) : len(copied) + 5] = synthetic[:5]  # verbatim copies: distance 0
    return synthetic, X


@pytest.mark.parametrize("weighting", ["count", "log"])
@pytest.mark.parametrize(
    ("n_synthetic", "n_targets", "d", "offset"),
    [(3000, 401, 7, 0.0), (5000, 600, 30, 50.0), (2000, 151, 2, -3.0)],
)
def test_fit_transform_equals_the_full_pass_exactly(weighting, n_synthetic, n_targets, d, offset):
    rng = np.random.default_rng(n_synthetic + d)
    synthetic, X = _release(rng, n_synthetic, n_targets, d, offset)
    query = MonteCarloQuery(synthetic, weighting=weighting, device="cpu")
    reused = query.fit_transform(X)[:, 0]
    np.testing.assert_array_equal(reused, _full_pass(query, X, synthetic))
    # odd number of targets: the radius is one target's own nearest distance, on the edge
    if n_targets % 2:
        nearest = cdist(X, synthetic, "sqeuclidean").min(axis=1)
        assert np.isclose(query.radius_**2, nearest, rtol=1e-12, atol=0).any()


def test_ties_at_the_radius_on_a_grid(monkeypatch):
    # every target's nearest squared distance is exactly 0.75 (= ε² up to the rounding of
    # ε = √0.75): whether a pair counts is decided by rounding, so no target may be skipped
    rng = np.random.default_rng(3)
    synthetic = rng.integers(0, 4, size=(4000, 3)).astype(float)
    X = rng.integers(0, 4, size=(301, 3)).astype(float) + 0.5
    seen = []

    def counting(X, *args, **kwargs):
        seen.append(len(X))
        return count_within_radius(X, *args, **kwargs)

    monkeypatch.setattr(_synthetic, "count_within_radius", counting)
    query = MonteCarloQuery(synthetic, weighting="count", device="cpu")
    reused = query.fit_transform(X)[:, 0]
    assert (cdist(X, synthetic, "sqeuclidean").min(axis=1) == 0.75).all()
    assert seen == [len(X)]  # within the margin of the radius: every target is counted
    np.testing.assert_array_equal(reused, _full_pass(query, X, synthetic))


def test_skipped_rows_have_empty_balls_and_are_not_counted(monkeypatch):
    rng = np.random.default_rng(7)
    synthetic, X = _release(rng, 3000, 400, 6, 10.0)
    seen = []

    def counting(X, *args, **kwargs):
        seen.append(len(X))
        return count_within_radius(X, *args, **kwargs)

    monkeypatch.setattr(_synthetic, "count_within_radius", counting)
    query = MonteCarloQuery(synthetic, weighting="count", device="cpu")
    Q = query.fit_transform(X)[:, 0]
    d2 = cdist(X, synthetic, "sqeuclidean")
    skipped = d2.min(axis=1) > query.radius_**2 + sq_distance_margin(X, synthetic)
    assert seen == [len(X) - skipped.sum()]
    assert 150 <= skipped.sum() <= 200  # about half, by the median rule
    assert (Q[skipped] == 0).all() and ((d2[skipped] <= query.radius_**2).sum() == 0)


@pytest.mark.parametrize("weighting", ["count", "log"])
def test_other_records_are_not_taken_for_the_fitted_ones(weighting):
    rng = np.random.default_rng(11)
    synthetic, X = _release(rng, 2000, 200, 4, 0.0)
    query = MonteCarloQuery(synthetic, weighting=weighting, device="cpu").fit(X)
    other = X.copy()
    other[0] += 10.0  # one record changed: no reuse
    np.testing.assert_array_equal(query.transform(other)[:, 0], _full_pass(query, other, synthetic))
    # the same records again (another array): the reuse applies, with the same values
    np.testing.assert_array_equal(query.transform(X.copy())[:, 0], query.transform(X)[:, 0])
    fixed = MonteCarloQuery(synthetic, radius=0.7, weighting=weighting, device="cpu").fit(X)
    np.testing.assert_array_equal(fixed.transform(X)[:, 0], _full_pass(fixed, X, synthetic))


def test_sq_distance_margin_bounds_the_expansion_error():
    rng = np.random.default_rng(5)
    Y = rng.normal(loc=1e3, size=(2000, 20))
    X = Y[:50] + rng.normal(scale=1e-2, size=(50, 20))
    margin = sq_distance_margin(X, Y)
    exact = cdist(X, Y, "sqeuclidean")  # direct differences: off by ~1e-15 relative
    for rows, d2 in sq_distance_blocks(X, Y, device="cpu"):
        assert (d2.numpy() >= exact[rows] - margin[rows, None]).all()
