"""The planted-leak generator: its oracle is the true log p_G − log p_R of what it samples."""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from sklearn_mace.datasets import make_planted_leak


def test_shapes_labels_and_groups():
    data = make_planted_leak(30, 20, 400, 300, n_features=3, random_state=0)
    assert data.members.shape == (30, 3) and data.non_members.shape == (20, 3)
    assert data.synthetic.shape == (400, 3) and data.reference.shape == (300, 3)
    np.testing.assert_array_equal(data.X_test, np.vstack([data.members, data.non_members]))
    np.testing.assert_array_equal(data.membership, np.r_[np.ones(30), np.zeros(20)])
    assert set(np.unique(data.groups)) <= {0, 1, 2}
    np.testing.assert_allclose(data.oracle_score, data.oracle(data.X_test))


def test_oracle_matches_brute_force_densities():
    # Rebuild p_R and p_G from their definitions with scipy's multivariate normal.
    data = make_planted_leak(
        7, 5, 50, 50, n_features=2, leak_fraction=0.3, noise=0.4, weights=(0.5, 0.5), random_state=3
    )
    X = np.random.default_rng(1).normal(scale=2.0, size=(25, 2))
    dens = data.oracle.__self__
    log_pr = logsumexp(
        [
            np.log(w) + multivariate_normal(m, np.eye(2)).logpdf(X)
            for w, m in zip(dens.weights, dens.means, strict=True)
        ],
        axis=0,
    )
    log_copy = logsumexp(
        [multivariate_normal(m, 0.16 * np.eye(2)).logpdf(X) for m in data.members], axis=0
    ) - np.log(7)
    log_pg = np.logaddexp(np.log(0.7) + log_pr, np.log(0.3) + log_copy)
    np.testing.assert_allclose(data.log_density_population(X), log_pr, rtol=1e-10)
    np.testing.assert_allclose(data.oracle(X), log_pg - log_pr, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_features", [2, 24])
def test_oracle_is_the_density_ratio_of_the_sampled_synthetic_data(n_features):
    # For x ~ p_G, E[p_R(x) / p_G(x)] = 1 exactly, and p_R/p_G lies in (0, 1/(1 - λ)], so its
    # standard deviation is <= 1.25 at λ = 0.2: the mean of 20 000 draws is within 0.03 of 1
    # with probability > 0.999 (3.4 standard errors). A wrong p_G (noise scale, mixture
    # weights, member set) moves this mean far from 1.
    data = make_planted_leak(
        50, 10, 20_000, 10, n_features=n_features, leak_fraction=0.2, noise=0.7, random_state=0
    )
    ratio = np.exp(-data.oracle(data.synthetic))
    assert ratio.max() <= 1 / 0.8 + 1e-9
    assert abs(ratio.mean() - 1.0) < 0.03


def test_copies_are_noisy_members():
    # A copy is m + σ·ε: its squared distance to its source is σ²·χ²_d, mean d·σ².
    data = make_planted_leak(
        20, 5, 5000, 10, n_features=4, leak_fraction=0.4, noise=0.1, random_state=0
    )
    # Binomial(5000, 0.4): sd 35; 4 sd = 140 rows.
    assert abs(data.synthetic_is_copy.sum() - 2000) < 140
    copies = data.synthetic[data.synthetic_is_copy]
    d2 = ((copies[:, None, :] - data.members[None]) ** 2).sum(axis=2).min(axis=1)
    # Mean of χ²_4·0.01 over ~2000 copies: 0.04 ± 0.0006 (sd 0.028/sqrt(2000)).
    assert abs(d2.mean() - 0.04) < 0.003


def test_no_leak_gives_a_zero_oracle():
    data = make_planted_leak(10, 10, 100, 100, leak_fraction=0.0, random_state=0)
    np.testing.assert_allclose(data.oracle_score, 0.0, atol=1e-12)
    assert not data.synthetic_is_copy.any()


def test_bad_parameters():
    with pytest.raises(ValueError, match="leak_fraction"):
        make_planted_leak(leak_fraction=1.5)
    with pytest.raises(ValueError, match="weights"):
        make_planted_leak(weights=(0.5, -0.1))
