"""DOMIAS §4 baselines on hand-computable examples, plus the estimator checks."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.mixture import GaussianMixture
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.attacks import (
    GANLeaksAttack,
    LOGANAttack,
    MonteCarloAttack,
    SyntheticDensityAttack,
)
from sklearn_mace.attacks._baselines import youden_threshold
from sklearn_mace.utils._testing import expected_failed_checks

SYNTHETIC = np.array([[0.0, 0.0], [3.0, 4.0]])
REFERENCE = np.array([[10.0, 10.0], [11.0, 11.0]])


@parametrize_with_checks(
    [
        SyntheticDensityAttack(device="cpu"),
        MonteCarloAttack(device="cpu"),
        GANLeaksAttack(device="cpu"),
        GANLeaksAttack(calibrated=True, device="cpu"),
        LOGANAttack(random_state=0),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_gan_leaks_is_minus_the_nearest_synthetic_distance():
    attack = GANLeaksAttack(device="cpu").fit_synthetic_reference(SYNTHETIC, REFERENCE)
    X = np.array([[0.0, 1.0], [3.0, 0.0], [3.0, 4.0]])
    np.testing.assert_allclose(attack.attack_score(X), [-1.0, -3.0, 0.0])


def test_gan_leaks_cal_subtracts_the_nearest_reference_distance():
    attack = GANLeaksAttack(calibrated=True, device="cpu")
    attack.fit_synthetic_reference(SYNTHETIC, REFERENCE)
    X = np.array([[0.0, 1.0], [10.0, 11.0]])
    # [0, 1]: d_syn = 1, d_ref = |(10, 9)| = sqrt(181); [10, 11]: d_syn = |(7, 7)|, d_ref = 1.
    expected = [-1.0 + np.sqrt(181.0), -np.sqrt(98.0) + 1.0]
    np.testing.assert_allclose(attack.attack_score(X), expected)


def test_monte_carlo_counts_the_epsilon_ball():
    synthetic = np.array([[0.0], [1.0], [2.0], [10.0]])
    reference = np.array([[0.5], [6.0], [20.0]])
    attack = MonteCarloAttack(radius=1.5, device="cpu").fit_synthetic_reference(
        synthetic, reference
    )
    np.testing.assert_allclose(attack.attack_score([[1.0], [5.0], [9.0]]), [0.75, 0.0, 0.25])
    # Default ε: median of the reference rows' nearest-synthetic distances (0.5, 4, 10) = 4.
    default = MonteCarloAttack(device="cpu").fit_synthetic_reference(synthetic, reference)
    assert default.radius_ == pytest.approx(4.0)
    np.testing.assert_allclose(default.attack_score([[5.0]]), [0.5])  # 1 and 2 lie within 4


def test_youden_threshold_separates_hand_made_scores():
    assert youden_threshold([3.0, 4.0], [1.0, 2.0]) == pytest.approx(2.5)
    # Overlap: cutting at 2.5 gives TPR 2/3, FPR 0 (J = 0.67); at 0.5, TPR 1, FPR 1/2.
    assert youden_threshold([0.8, 3.0, 4.0], [0.0, 1.0]) == pytest.approx(2.0)


def test_fitted_cut_leaves_out_each_rows_own_match():
    # Synthetic rows come in pairs 0.1 apart; the reference rows 2.6 and 7.6 lie 2.4 from the
    # nearest synthetic row (5.0, 10.0). Scored without its own match a synthetic row scores
    # -0.1 and a reference row -2.4, so the cut is the midpoint -1.25 (with the self-match,
    # synthetic rows would score 0 and the cut be -1.2).
    synthetic = np.array([[0.0], [0.1], [5.0], [5.1], [10.0], [10.1]])
    reference = np.array([[2.6], [7.6]])
    attack = GANLeaksAttack(device="cpu").fit_synthetic_reference(synthetic, reference)
    assert attack.threshold_ == pytest.approx(-1.25)


def test_eq1_ablation_is_the_synthetic_log_density(rng):
    # p_G = N(mu, I): a Gaussian fitted on 20 000 rows has mean/covariance errors ~0.01,
    # which enter the log density as ½(x - mu)ᵀ(Σ̂ - I)(x - mu), |x - mu|² <= 8 on [-1, 1]².
    # Measured over 30 seeds: the worst of the 30 points errs by 0.03 on average, 0.087 at
    # most (on [-2, 2]² it would reach 0.09 with 8 seeds). 0.1 catches a missing log or the
    # reference rows used instead.
    mu = np.array([1.0, -1.0])
    attack = SyntheticDensityAttack(GaussianMixture(1, random_state=0), device="cpu")
    attack.fit_synthetic_reference(rng.normal(size=(20_000, 2)) + mu, rng.normal(size=(50, 2)))
    X = rng.uniform(-1, 1, size=(30, 2))
    expected = -0.5 * ((X - mu) ** 2).sum(axis=1) - np.log(2 * np.pi)
    np.testing.assert_allclose(attack.attack_score(X), expected, atol=0.1)


def test_logan_sees_both_classes(rng):
    # Synthetic rows around +2, reference rows around -2: a classifier trained on both
    # classes says "synthetic" at +2 and "reference" at -2; one trained on synthetic rows
    # only (the reference implementation's sampler) could not be fitted at all.
    synthetic, reference = rng.normal(size=(200, 1)) + 2, rng.normal(size=(200, 1)) - 2
    attack = LOGANAttack(LogisticRegression()).fit_synthetic_reference(synthetic, reference)
    np.testing.assert_array_equal(attack.classifier_.classes_, [0.0, 1.0])
    score = attack.decision_function([[2.0], [-2.0]])
    assert score[0] > 2 and score[1] < -2
    proba = attack.predict_proba([[2.0], [-2.0]])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.log(proba[:, 1] / proba[:, 0]), score)


@pytest.mark.parametrize("attack", [MonteCarloAttack(), GANLeaksAttack(calibrated=True)])
def test_distance_baselines_need_two_rows_per_class(attack):
    with pytest.raises(ValueError, match="at least 2 reference rows"):
        attack.fit_synthetic_reference(np.zeros((3, 2)), np.ones((1, 2)))


def test_monte_carlo_median_radius_of_zero_is_an_error(rng):
    # Reference rows that are copies of synthetic rows put the median nearest distance at 0:
    # an ε-ball of radius 0 would count exact copies only (and its self-count rounds).
    synthetic = rng.normal(size=(10, 2))
    with pytest.raises(ValueError, match="pass a radius > 0"):
        MonteCarloAttack(device="cpu").fit_synthetic_reference(synthetic, synthetic[:6])
