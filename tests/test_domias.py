"""DOMIASAttack against closed forms, the planted oracle and scipy's KDE."""

import numpy as np
import pytest
from scipy.stats import gaussian_kde, norm
from sklearn.metrics import roc_auc_score
from sklearn.mixture import GaussianMixture
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.attacks import DOMIASAttack
from sklearn_mace.attacks._densities import GaussianPrior
from sklearn_mace.attacks._synthetic import stack_synthetic_reference
from sklearn_mace.datasets import make_planted_leak
from sklearn_mace.utils._testing import expected_failed_checks


@parametrize_with_checks(
    [
        DOMIASAttack(device="cpu"),
        DOMIASAttack(density="gaussian", bandwidth=0.5, device="cpu"),
        DOMIASAttack(density=GaussianMixture(n_components=1, random_state=0), device="cpu"),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@parametrize_with_checks([GaussianPrior()])
def test_gaussian_prior_is_sklearn_compatible(estimator, check):
    # The App. C reference density is exposed as density_reference_.
    check(estimator)


def test_gaussian_densities_give_the_closed_form_log_ratio(rng):
    # p_G = N(mu, I), p_R = N(0, I): log p_G - log p_R = mu·x - |mu|²/2 exactly. A fitted
    # Gaussian on 20 000 rows has mean/covariance errors ~sqrt(2/20 000) = 0.01, which enter
    # each log density as ½(x - m)ᵀ(Σ̂ - I)(x - m): up to ~0.03 per density on [-1, 1]²
    # (on [-2, 2]² it reaches 0.09, too close to 0.1). Measured over 30 seeds: the worst of
    # the 50 points errs by 0.03 on average, 0.086 at most. 0.1 still catches a sign, a
    # missing log or a swapped density (errors of order 1).
    mu = np.array([1.0, -0.5])
    synthetic = rng.normal(size=(20_000, 2)) + mu
    reference = rng.normal(size=(20_000, 2))
    attack = DOMIASAttack(GaussianMixture(n_components=1, random_state=0), device="cpu")
    attack.fit_synthetic_reference(synthetic, reference)
    X = rng.uniform(-1, 1, size=(50, 2))
    np.testing.assert_allclose(attack.decision_function(X), X @ mu - mu @ mu / 2, atol=0.1)


def test_kde_ratio_matches_the_smoothed_closed_form(rng):
    # With a float bandwidth h the expected KDE of N(m, 1) is N(m, 1 + h²), so the expected
    # score is the log ratio of N(1, 1 + h²) to N(0, 1 + h²). On [-0.5, 1.5] both densities
    # are >= 0.12, so at n = 20 000 and h = 0.3 the relative KDE error sqrt(R(K)/(n h f)) is
    # <= 0.02 per density and <= 0.028 for the difference; 0.1 is ~3.5 standard errors.
    h = 0.3
    synthetic = rng.normal(size=(20_000, 1)) + 1.0
    reference = rng.normal(size=(20_000, 1))
    attack = DOMIASAttack(bandwidth=h, device="cpu").fit_synthetic_reference(synthetic, reference)
    x = np.linspace(-0.5, 1.5, 9)[:, None]
    s = np.sqrt(1 + h**2)
    expected = norm.logpdf(x[:, 0], 1.0, s) - norm.logpdf(x[:, 0], 0.0, s)
    np.testing.assert_allclose(attack.decision_function(x), expected, atol=0.1)


def test_scott_score_is_the_log_of_scipy_kde_ratio(rng):
    # Outside reference: scipy.stats.gaussian_kde (Scott) in 4-D, where nothing underflows.
    synthetic = rng.normal(size=(300, 4))
    reference = rng.normal(size=(400, 4)) * 1.3
    X = rng.normal(size=(20, 4))
    attack = DOMIASAttack(device="cpu").fit_synthetic_reference(synthetic, reference)
    expected = gaussian_kde(synthetic.T).logpdf(X.T) - gaussian_kde(reference.T).logpdf(X.T)
    np.testing.assert_allclose(attack.decision_function(X), expected, rtol=1e-8, atol=1e-8)


def test_auc_close_to_the_oracle_on_an_easy_planted_leak():
    # Half of the synthetic rows are copies of members with noise 0.2 (7.5 copies per
    # member), so the leak is visible to any reasonable density ratio: the oracle's AUC is
    # 1.0 and Scott-KDE DOMIAS measured 0.971-0.972 over seeds 0-2. A 0.05 gap allows for
    # seed variation and fails if the score lost its log-ratio form (p_G alone: ~0.75).
    data = make_planted_leak(200, 200, 3000, 3000, leak_fraction=0.5, noise=0.2, random_state=1)
    attack = DOMIASAttack(device="cpu").fit_synthetic_reference(data.synthetic, data.reference)
    oracle_auc = roc_auc_score(data.membership, data.oracle_score)
    auc = roc_auc_score(data.membership, attack.decision_function(data.X_test))
    assert oracle_auc - auc < 0.05


def test_scores_are_finite_in_64_dimensions():
    # Plain densities underflow to 0 here (the reference implementation's 1e-10 takes over).
    data = make_planted_leak(100, 100, 800, 800, n_features=64, noise=2.0, random_state=0)
    attack = DOMIASAttack(device="cpu").fit_synthetic_reference(data.synthetic, data.reference)
    score = attack.decision_function(data.X_test)
    assert np.all(np.isfinite(score))
    assert np.ptp(score) > 0
    with np.errstate(under="ignore"):
        assert np.all(np.exp(attack.density_reference_.score_samples(data.X_test)) < 1e-10)


def test_median_threshold_guesses_half_the_batch(rng):
    synthetic, reference = rng.normal(size=(200, 2)) * 0.5, rng.normal(size=(200, 2))
    attack = DOMIASAttack(threshold="median", device="cpu")
    attack.fit_synthetic_reference(synthetic, reference)
    X = rng.normal(size=(101, 2))
    score = attack.decision_function(X)
    np.testing.assert_array_equal(attack.predict(X), score > np.median(score))
    assert attack.predict(X).sum() == 50


def test_predict_proba_is_the_posterior_at_the_class_ratio(rng):
    # Identical distributions: p_G = p_R, so P(synthetic | x) = n_syn / (n_syn + n_ref).
    # A fitted Gaussian's log density on |x_j| <= 1 errs by ~0.5·sqrt(6/n) (mean and covariance
    # errors): <= 0.012 per side with 40 000 / 120 000 rows, so the log ratio errs by <= ~0.02
    # and the posterior, of slope p(1 - p) = 0.19, by <= ~0.004; 0.01 is a 2.5x margin.
    synthetic, reference = rng.normal(size=(40_000, 2)), rng.normal(size=(120_000, 2))
    attack = DOMIASAttack(GaussianMixture(1, random_state=0), device="cpu")
    proba = attack.fit_synthetic_reference(synthetic, reference).predict_proba(
        rng.uniform(-1, 1, size=(50, 2))
    )
    np.testing.assert_allclose(proba[:, 1], 0.25, atol=0.01)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_gaussian_prior_with_population_statistics(rng):
    # App. C: only the mean and variance of the first feature are known; the second feature
    # gets a flat prior, so the score is log p_G(x) - log N(x_0; 0, 1) exactly.
    synthetic, reference = rng.normal(size=(500, 2)), rng.normal(size=(20, 2))
    attack = DOMIASAttack(
        density="gaussian",
        population_mean=[0.0, 0.0],
        population_cov=[1.0, np.inf],
        device="cpu",
    ).fit_synthetic_reference(synthetic, reference)
    X = rng.normal(size=(10, 2))
    log_pg = attack.density_synthetic_.score_samples(X)
    np.testing.assert_allclose(attack.decision_function(X), log_pg - norm.logpdf(X[:, 0]))


def test_cv_bandwidth_tracks_the_true_scale(rng):
    # Held-out likelihood prefers a smaller relative bandwidth for a clustered density than
    # for a single Gaussian (Scott's rule is near-optimal for a Gaussian and oversmooths
    # tight clusters).
    centres = rng.normal(scale=5.0, size=(20, 2))
    clustered = centres[rng.integers(20, size=600)] + 0.1 * rng.normal(size=(600, 2))
    gaussian = rng.normal(size=(600, 2))
    attack = DOMIASAttack(bandwidth="cv", cv=3, random_state=0, device="cpu")
    attack.fit_synthetic_reference(clustered, gaussian)
    assert attack.density_synthetic_.bandwidth_factor < 0.5
    assert 0.7 <= attack.density_reference_.bandwidth_factor <= 1.5


def test_grid_search_tunes_on_stacked_data_without_membership_labels(rng):
    X, y = stack_synthetic_reference(rng.normal(size=(150, 2)) * 0.3, rng.normal(size=(150, 2)))
    search = GridSearchCV(DOMIASAttack(device="cpu"), {"bandwidth": [0.05, 0.3, 3.0]}, cv=3)
    search.fit(X, y)
    assert search.best_params_["bandwidth"] in (0.05, 0.3, 3.0)
    assert np.isfinite(search.best_score_)


@pytest.mark.parametrize(
    ("synthetic", "reference", "match"),
    [
        (np.ones((5, 3)), np.ones((5, 2)), "same columns"),
        (np.zeros((0, 2)), np.ones((5, 2)), "synthetic has no rows"),
        ([[np.nan, 1.0], [1.0, 2.0]], np.ones((5, 2)), "NaN"),
    ],
)
def test_bad_arrays_get_clear_errors(synthetic, reference, match):
    with pytest.raises(ValueError, match=match):
        DOMIASAttack().fit_synthetic_reference(synthetic, reference)


def test_fewer_rows_than_features_for_a_covariance(rng):
    with pytest.raises(ValueError, match="only 3 synthetic rows for 5 features"):
        DOMIASAttack().fit_synthetic_reference(rng.normal(size=(3, 5)), rng.normal(size=(50, 5)))
    with pytest.raises(ValueError, match="only 4 reference rows for 5 features"):
        DOMIASAttack(density="gaussian", bandwidth=1.0).fit_synthetic_reference(
            rng.normal(size=(50, 5)), rng.normal(size=(4, 5))
        )


def test_a_constant_column_names_the_rows_that_have_it(rng):
    # A generator that collapsed a feature: Scott's rule needs a non-singular covariance.
    synthetic = np.c_[rng.normal(size=50), np.ones(50)]
    with pytest.raises(ValueError, match="density of the synthetic rows: .*singular"):
        DOMIASAttack(device="cpu").fit_synthetic_reference(synthetic, rng.normal(size=(50, 2)))


def test_a_class_with_no_rows(rng):
    with pytest.raises(ValueError, match="only one class"):
        DOMIASAttack().fit(rng.normal(size=(10, 2)), np.ones(10))
