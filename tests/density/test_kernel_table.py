"""The kernel table behind the cross-fit, and the information flow of the cross-fit itself.

* ``grouped_log_kernel_sums`` (float32, per-group shift, clamped exponents, squares along
  the √2 grid) against the float64 ``logsumexp`` written out; its rounding is about 1e-3
  in a log sum (float32 distances times ``1/2h²``), which the tolerances allow;
* ``binned_log_kernel_sums_1d`` against the exact table (a few per cent in the bulk, exact
  tails);
* the cross-fit's and the chain's defining property: a fold's held-out scores do not move
  when labels they must not see are shuffled (the chain: the fold's own and every later
  fold's; the cross-fit: the fold's own).
"""

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.preprocessing import QuantileTransformer
from sklearn.utils import check_random_state

from sklearn_mace import BayesOptimalMIA
from sklearn_mace.density._grid import (
    BINNED_TAIL_FLOOR,
    BinnedKernelSums1D,
    binned_log_kernel_sums_1d,
    grouped_log_kernel_sums,
)
from sklearn_mace.estimation._advantage import _assign_folds
from sklearn_mace.estimation._crossfit import crossfit_classifier, crossfit_kde
from sklearn_mace.estimation._normal_scores import NormalScores


def exact_sums(Zq, Zd, groups, n_groups, bandwidths):
    d2 = ((Zq[:, None, :] - Zd[None, :, :]) ** 2).sum(-1)
    out = np.full((len(bandwidths), n_groups, len(Zq)), -np.inf)
    for g, h in enumerate(bandwidths):
        for k in range(n_groups):
            if np.any(groups == k):
                out[g, k] = logsumexp(-d2[:, groups == k] / (2 * h * h), axis=1)
    return out


@pytest.mark.parametrize("d", [1, 3, 8])
def test_table_matches_float64_logsumexp(rng, d):
    Z = rng.normal(size=(400, d))
    Z[:3] *= 40  # far rows: their sums are e^-1000 and below, and must still be right
    groups = rng.integers(0, 6, 400)
    groups[groups == 5] = 4  # group 5 empty
    h = np.geomspace(1 / 8, 4, 11) * 400 ** (-1 / (d + 4))
    got = grouped_log_kernel_sums(Z[:60], Z, groups, 6, h)
    want = exact_sums(Z[:60], Z, groups, 6, h)
    assert np.all(np.isneginf(got[:, 5])) and np.all(np.isfinite(got[:, :5]))
    # float32 rounding: relative 1e-7 of ‖z‖² (up to 1e4 for the far rows) times 1/2h²
    scale = 1e-6 * (1 + (Z[:60] ** 2).sum(1)) / (2 * h[:, None, None] ** 2)
    assert np.all(np.abs(got[:, :5] - want[:, :5]) <= 2e-3 + scale)


def test_squares_along_the_root_two_grid_equal_exponentials(rng):
    # the same candidates, once on the √2 grid (squares) and once nudged off it (exp each)
    Z, groups = rng.normal(size=(300, 2)), rng.integers(0, 4, 300)
    h = np.geomspace(0.05, 1.6, 11)
    nudged = h * (1 + 1e-7 * np.arange(11))
    a = grouped_log_kernel_sums(Z, Z, groups, 4, h)
    b = grouped_log_kernel_sums(Z, Z, groups, 4, nudged)
    assert np.abs(a - b).max() < 1e-3


def test_the_clamp_keeps_the_nearest_terms_exact():
    # one near row and 1000 rows 100 kernel widths away: e^-5000 each, clamped at e^-80
    # relative to the nearest; the sum is e^-0.5·(1 + 1000·e^-79.5). (Centred data: the
    # float32 expansion's rounding, relative to ‖z‖², stays below 1e-6 here.)
    data = np.r_[[[0.1]], np.full((500, 1), 10.0), np.full((500, 1), -10.0)]
    out = grouped_log_kernel_sums(np.zeros((1, 1)), data, np.zeros(1001, int), 1, [0.1])
    assert out[0, 0, 0] == pytest.approx(-0.5, abs=1e-6)


def test_binned_sums_are_close_in_the_bulk_and_exact_in_the_tails(rng):
    z = rng.normal(size=(3000, 1))
    z[:2] = [[-6.0], [6.0]]
    groups = rng.integers(0, 10, 3000)
    h = np.geomspace(1 / 8, 4, 11) * 2400 ** (-0.2)
    got = binned_log_kernel_sums_1d(z[:400], z, groups, 10, h)
    want = grouped_log_kernel_sums(z[:400], z, groups, 10, h)
    error = np.abs(got - want)
    # measured: median 0.009 at the smallest candidate, below 1e-3 from the fourth on;
    # maxima 1.3 (smallest) … 1e-3, in the sparse tails just above the exact-tail floor
    assert np.median(error[0]) < 0.03 and np.median(error[3:]) < 3e-3
    assert error[6:].max() < 0.05
    assert np.isfinite(got).all()


def test_binned_tails_are_exact_in_float64_and_reads_do_not_depend_on_other_rows(rng):
    z = rng.normal(size=(3000, 1))
    z[:3] = [[-6.0], [6.0], [40.0]]  # far rows: sums of e^-1000 and below
    groups = rng.integers(0, 10, 3000)
    h = np.geomspace(1 / 8, 4, 11) * 2400 ** (-0.2)
    table = BinnedKernelSums1D(z, groups, 10, h, span=(z.min(), z.max()))
    got = table.log_sums(z[:400])
    want = exact_sums(z[:400], z, groups, 10, h)
    tails = got < np.log(BINNED_TAIL_FLOOR)  # only values recomputed exactly are this small
    assert tails.sum() > 100
    # float64 against float64: only the terms below e^-80 of the largest are left out
    np.testing.assert_allclose(got[tails], want[tails], rtol=1e-12, atol=1e-9)
    # a row's values do not depend on which other rows are read (up to summation order)
    np.testing.assert_allclose(table.log_sums(z[:400][::-1])[..., ::-1], got, rtol=1e-13)
    np.testing.assert_allclose(table.log_sums(z[200:400], which=[0, 5]), got[[0, 5], :, 200:])
    # a group's values do not depend on another group's rows, to the last bit (what the
    # forward chain's exactness needs): move group 9's rows, keep the grid's extent
    moved = z.copy()
    inner = (groups == 9) & (np.abs(z[:, 0]) < 3)
    moved[inner] = -moved[inner]
    again = BinnedKernelSums1D(moved, groups, 10, h, span=(z.min(), z.max())).log_sums(z[:400])
    np.testing.assert_array_equal(again[:, :9], got[:, :9])
    assert not np.array_equal(again[:, 9], got[:, 9])


def test_binned_tail_values_do_not_depend_on_the_other_rows_read_to_the_last_bit(rng):
    # each tail value is summed alone (terms padded to a power of two of its own count), so
    # reading a row with others, in another order or alone gives the same bits
    z = rng.normal(size=(3000, 1))
    z[:3] = [[-6.0], [6.0], [40.0]]
    groups = rng.integers(0, 10, 3000)
    h = np.geomspace(1 / 8, 4, 11) * 2400 ** (-0.2)
    table = BinnedKernelSums1D(z, groups, 10, h, span=(z.min(), z.max()))
    got = table.log_sums(z[:400])
    assert (got < np.log(BINNED_TAIL_FLOOR)).sum() > 100
    np.testing.assert_array_equal(table.log_sums(z[:400][::-1])[..., ::-1], got)
    for row in (0, 1, 2, 57):
        np.testing.assert_array_equal(table.log_sums(z[row : row + 1])[..., 0], got[..., row])


def test_normal_scores_are_the_quantile_transformers_with_midranks(rng):
    X = rng.normal(size=(500, 3))
    reference = QuantileTransformer(output_distribution="normal", n_quantiles=500)
    np.testing.assert_allclose(
        NormalScores().fit_transform(X), reference.fit_transform(X), atol=1e-9
    )
    new = rng.normal(size=(50, 3)) * 3
    np.testing.assert_allclose(
        NormalScores().fit(X).transform(new), reference.transform(new), atol=1e-9
    )
    tied = np.repeat([[0.0], [1.0], [2.0]], [200, 100, 200], axis=0)
    scores = NormalScores().fit_transform(tied)
    # mid-ranks (0-based, over n − 1): 99.5/499, 249.5/499, 399.5/499
    from scipy.stats import norm

    np.testing.assert_allclose(
        np.unique(scores), norm.ppf(np.array([99.5, 249.5, 399.5]) / 499), rtol=1e-12
    )


def _shuffle_labels(m, folds, which, seed):
    """Labels permuted within each fold in ``which`` (fold counts stay: the design)."""
    m = m.copy()
    local = np.random.default_rng(seed)
    for fold in which:
        rows = np.flatnonzero(folds == fold)
        m[rows] = m[rows][local.permutation(rows.size)]
    return m


@pytest.mark.parametrize("d", [1, 3])
def test_chain_and_crossfit_scores_ignore_the_labels_they_must_not_see(rng, d):
    n = 300
    Z = rng.normal(size=(2 * n, d))
    Z[:n, 0] += 0.7
    m = np.r_[np.ones(n, int), np.zeros(n, int)]
    folds = _assign_folds(m, 5, 500, check_random_state(0))  # 100 rows outside the subsample

    def fit(labels):
        return crossfit_kde(Z, labels, folds, 5, 0.5, rng=check_random_state(1))

    odds, chained, _, _ = fit(m)
    for j in (1, 2, 3):
        # the chain: fold j's scores use folds 0 … j−1 only
        _, chained_shuffled, _, _ = fit(_shuffle_labels(m, folds, range(j, 6), seed=j))
        np.testing.assert_array_equal(chained_shuffled[folds <= j], chained[folds <= j])
        # the cross-fit: fold j's scores use the other folds only
        odds_shuffled, _, _, _ = fit(_shuffle_labels(m, folds, [j], seed=j))
        np.testing.assert_array_equal(odds_shuffled[folds == j], odds[folds == j])
    # and the labels do matter where they are allowed to
    _, chained_shuffled, _, _ = fit(_shuffle_labels(m, folds, [0], seed=9))
    assert not np.array_equal(chained_shuffled[folds == 1], chained[folds == 1])


def test_chain_of_a_fitted_classifier_ignores_later_labels(rng):
    Z = np.r_[rng.normal(0.7, 1, (200, 1)), rng.normal(0, 1, (200, 1))]
    m = np.r_[np.ones(200, int), np.zeros(200, int)]
    folds = _assign_folds(m, 5, 400, check_random_state(0))
    classifier = BayesOptimalMIA(bins=8, density="histogram")
    _, chained = crossfit_classifier(classifier, Z, m, folds, 5)
    _, shuffled = crossfit_classifier(
        classifier, Z, _shuffle_labels(m, folds, range(2, 5), seed=0), folds, 5
    )
    np.testing.assert_array_equal(shuffled[folds <= 2], chained[folds <= 2])
    assert np.all(np.isnan(chained[folds == 0]))
