"""Histogram densities and Clopper–Pearson bounds (MACE §4.1.1, Thm 2)."""

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.density import HistogramDensity, clopper_pearson_interval
from sklearn_mace.density._histogram import histogram_edges
from sklearn_mace.utils._testing import expected_failed_checks


@parametrize_with_checks(
    [HistogramDensity(), HistogramDensity(bins=5)], expected_failed_checks=expected_failed_checks
)
def test_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (17, 250), (1, 1)])
def test_clopper_pearson_matches_scipy_binomtest(k, n):
    # Reference: scipy's exact binomial interval (an independent implementation).
    expected = binomtest(k, n).proportion_ci(confidence_level=0.9, method="exact")
    lower, upper = clopper_pearson_interval(np.array([k]), n, confidence=0.9)
    np.testing.assert_allclose([lower[0], upper[0]], [expected.low, expected.high], atol=1e-12)


def test_clopper_pearson_coverage(rng):
    # Exact intervals are conservative: coverage >= nominal for every true proportion.
    n, p_true, reps = 40, 0.13, 2000
    counts = rng.binomial(n, p_true, size=reps)
    lower, upper = clopper_pearson_interval(counts, n, confidence=0.9)
    assert np.mean((lower <= p_true) & (p_true <= upper)) >= 0.9 - 0.03


def test_discrete_query_puts_each_value_in_its_own_bin():
    # A 0/1 correctness query (issue 5's cross-check): 0 and 1 must not share a bin.
    X = np.array([[0.0]] * 7 + [[1.0]] * 3)
    edges = histogram_edges(X, "auto")
    assert np.searchsorted(edges[0], 0.0) != np.searchsorted(edges[0], 1.0)
    hist = HistogramDensity(bins="auto").fit(X)
    counts, inside = hist.cell_counts(np.array([[0.0], [1.0], [0.5]]))
    assert counts.tolist()[:2] == [7, 3] and inside[:2].all()


def test_density_is_frequency_over_volume_and_integrates_to_one(rng):
    X = rng.normal(size=(500, 2))
    hist = HistogramDensity(bins=(7, 5)).fit(X)
    centres = [(e[1:] + e[:-1]) / 2 for e in hist.edges_]
    grid = np.stack(np.meshgrid(*centres, indexing="ij"), -1).reshape(-1, 2)
    volume = np.outer(np.diff(hist.edges_[0]), np.diff(hist.edges_[1])).ravel()
    assert np.sum(np.exp(hist.score_samples(grid)) * volume) == pytest.approx(1.0)
    # One cell checked by hand: frequency / (n · volume).
    in_first = np.sum((X[:, 0] <= hist.edges_[0][1]) & (X[:, 1] <= hist.edges_[1][1]))
    assert np.exp(hist.score_samples(grid[:1]))[0] == pytest.approx(in_first / 500 / volume[0])


def test_explicit_edges_and_outside_points():
    X = np.array([[0.1], [0.2], [0.7]])
    hist = HistogramDensity(bins=[[0.0, 0.5, 1.0]]).fit(X)
    log_f, lo, hi = hist.score_samples_interval(np.array([[0.3], [2.0]]), confidence=0.9)
    assert np.exp(log_f[0]) == pytest.approx((2 / 3) / 0.5)
    # Outside the grid nothing is known: density 0, bounds (0, inf).
    assert log_f[1] == -np.inf and lo[1] == -np.inf and hi[1] == np.inf


@pytest.mark.parametrize(
    "bins, match",
    [
        (0, "bins"),
        ("sturges", "bins"),
        ([[0.0, 1.0, 0.5], 3], "increasing"),
        ([3, 3, 3], "feature"),
    ],
)
def test_bad_bins(bins, match):
    with pytest.raises(ValueError, match=match):
        HistogramDensity(bins=bins).fit(np.arange(10.0).reshape(-1, 2))


@pytest.mark.parametrize(
    "counts, n, confidence, match",
    [
        ([3], 10, 1.5, "confidence"),
        ([3], 10, 0.0, "confidence"),
        ([12], 10, 0.9, "counts"),
        ([-1], 10, 0.9, "counts"),
        ([0], 0, 0.9, "counts"),
    ],
)
def test_clopper_pearson_bad_input_is_an_error_not_nan(counts, n, confidence, match):
    with pytest.raises(ValueError, match=match):
        clopper_pearson_interval(np.array(counts), n, confidence)


def test_histogram_edges_reject_non_finite_values():
    with pytest.raises(ValueError, match="finite"):
        histogram_edges(np.array([[0.0], [np.nan]]))
