"""DOMIAS §4 baselines as queries (GAN-leaks, LOGAN, MC) against hand-computable examples
and the reference formulas (domias 0.0.5 ``baselines.py``), as the synthetic-data audit runs
them."""

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.datasets import make_planted_leak
from sklearn_mace.queries import GANLeaksQuery, LOGANQuery, MonteCarloQuery
from sklearn_mace.report._engine import Subject
from sklearn_mace.report._kinds.release import _audit as _release
from sklearn_mace.report._kinds.release._types import Release, ReleaseInputs
from tests._query_models import synthetic_of_width, with_check_width


def _audit_scores(name, synthetic, reference, X):
    """The scores of the synthetic-data audit's analysis ``name`` on the targets ``X``."""
    keys = np.zeros(len(X))  # the exact-copy test is not run here
    engine = SimpleNamespace(inputs=ReleaseInputs(X, reference, keys))
    (analysis,) = [a for a in _release.ANALYSES if a.name == name]
    subject = Subject("release", Release(synthetic, np.ones(len(synthetic))))
    return analysis.compute(engine, subject, 0).score


SYNTHETIC = np.array([[0.0, 0.0], [3.0, 4.0]])
REFERENCE = np.array([[10.0, 10.0], [11.0, 11.0]])
S, R = synthetic_of_width(3), synthetic_of_width(3, seed=2)


@parametrize_with_checks(
    [
        GANLeaksQuery(S, device="cpu"),
        GANLeaksQuery(S, R, metric="euclidean", device="cpu"),
        LOGANQuery(S, R, classifier=LogisticRegression()),
        LOGANQuery(S, R, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(with_check_width(estimator, check))


def test_gan_leaks_is_minus_the_nearest_synthetic_distance():
    X = np.array([[0.0, 1.0], [3.0, 0.0], [3.0, 4.0]])
    query = GANLeaksQuery(SYNTHETIC, metric="euclidean", device="cpu")
    np.testing.assert_allclose(query.fit_transform(X)[:, 0], [-1.0, -3.0, 0.0])
    np.testing.assert_allclose(GANLeaksQuery(SYNTHETIC).fit_transform(X)[:, 0], [-1, -9, 0])


def test_gan_leaks_cal_adds_the_nearest_reference_distance():
    X = np.array([[0.0, 1.0], [10.0, 11.0]])
    # [0, 1]: d_syn = 1, d_ref = |(10, 9)|; [10, 11]: d_syn = |(7, 7)|, d_ref = 1.
    Q = GANLeaksQuery(SYNTHETIC, REFERENCE, metric="euclidean").fit_transform(X)
    np.testing.assert_allclose(Q[:, 0], [-1.0 + np.sqrt(181.0), -np.sqrt(98.0) + 1.0])
    Q = GANLeaksQuery(SYNTHETIC, REFERENCE).fit_transform(X)
    np.testing.assert_allclose(Q[:, 0], [-1.0 + 181.0, -98.0 + 1.0])


def test_logan_sees_both_classes(rng):
    # Synthetic rows around +2, reference rows around -2: a classifier trained on both
    # classes says "synthetic" at +2 and "reference" at -2; one trained on synthetic rows
    # only (the reference implementation's sampler) could not be fitted at all.
    synthetic, reference = rng.normal(size=(200, 1)) + 2, rng.normal(size=(200, 1)) - 2
    query = LOGANQuery(synthetic, reference, classifier=LogisticRegression()).fit([[0.0]])
    np.testing.assert_array_equal(query.classifier_.classes_, [0, 1])
    score = query.transform([[2.0], [-2.0]])[:, 0]
    assert score[0] > 2 and score[1] < -2
    p = query.classifier_.predict_proba([[2.0], [-2.0]])
    np.testing.assert_allclose(np.log(p[:, 1] / p[:, 0]), score)


# ---------------------------------------------------------------- the reference formulas


def _reference_mc(X_test, X_G):
    """domias 0.0.5 ``baselines.MC``: squared distances, ε = their median, strict count."""
    distances = cdist(X_test, X_G, "sqeuclidean")
    epsilon = np.median(distances.min(axis=1))
    return (distances < epsilon).sum(axis=1) / len(X_G)


def _reference_gan_leaks(X_test, X_G):
    return np.exp(-cdist(X_test, X_G, "sqeuclidean").min(axis=1))


def _reference_gan_leaks_cal(X_test, X_G, X_ref):
    d_g = cdist(X_test, X_G, "sqeuclidean").min(axis=1)
    d_r = cdist(X_test, X_ref, "sqeuclidean").min(axis=1)
    return np.exp(-d_g + d_r)


@pytest.fixture(scope="module")
def leaky():
    # A leaky release (half the synthetic rows are noisy copies of members) in 4-D, small
    # enough that exp(-d²) does not underflow for the reference formulas.
    data = make_planted_leak(100, 100, 600, 600, n_features=4, noise=0.3, random_state=3)
    return data.X_test, data.membership, data.synthetic, data.reference


def test_mc_is_the_reference_formula(leaky):
    X, m, synthetic, reference = leaky
    expected = _reference_mc(X, synthetic)
    ours = _audit_scores("MC (Hilprecht)", synthetic, reference, X)
    # 200 targets (even): ε² is a mean of two squared distances, equal to no row's own, so
    # the closed and the open ball agree on every row.
    np.testing.assert_allclose(ours, expected)
    assert roc_auc_score(m, ours) == roc_auc_score(m, expected) > 0.55


def test_gan_leaks_and_cal_are_the_reference_formulas(leaky):
    X, m, synthetic, reference = leaky
    ours0 = GANLeaksQuery(synthetic).fit_transform(X)[:, 0]
    np.testing.assert_allclose(np.exp(ours0), _reference_gan_leaks(X, synthetic), rtol=1e-9)
    ours = _audit_scores("GAN-leaks CAL", synthetic, reference, X)
    expected = _reference_gan_leaks_cal(X, synthetic, reference)
    np.testing.assert_allclose(np.exp(ours), expected, rtol=1e-9)
    assert roc_auc_score(m, ours) == roc_auc_score(m, expected)


def test_mc_of_a_perfect_copy_release_is_maximally_leaky(rng):
    # The synthetic file is the members file. With more members than non-members among the
    # targets the median nearest distance is 0: the ball of radius 0 counts exact copies, so
    # every member scores 1/n and every non-member 0 — AUC 1, not an error. With as many of
    # each, ε is half the smallest non-member distance and the AUC is still 1.
    members, non_members = rng.normal(size=(60, 3)), rng.normal(size=(40, 3))
    X, m = np.vstack([members, non_members]), np.r_[np.ones(60), np.zeros(40)]
    query = MonteCarloQuery(members, weighting="count").fit(X)
    assert query.radius_ == 0.0
    score = query.transform(X)[:, 0]
    np.testing.assert_allclose(score, m / 60)
    X, m = X[20:], m[20:]
    score = MonteCarloQuery(members, weighting="count").fit_transform(X)[:, 0]
    assert roc_auc_score(m, score) == 1.0


def test_battery_attacks_are_linear_in_the_synthetic_rows(monkeypatch, leaky):
    # No synthetic x synthetic pass: every pairwise pass starts from the targets.
    import sklearn_mace.queries._baselines as baselines
    import sklearn_mace.queries._synthetic as synthetic_module

    X, _, synthetic, reference = leaky
    seen = []

    def spy(original):
        def wrapper(A, B, *args, **kwargs):
            seen.append(len(A))
            return original(A, B, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(baselines, "nearest_sq_distances", spy(baselines.nearest_sq_distances))
    for name in ("nearest_sq_distances", "count_within_radius"):
        monkeypatch.setattr(synthetic_module, name, spy(getattr(synthetic_module, name)))
    for name in ("MC (Hilprecht)", "GAN-leaks CAL"):
        _audit_scores(name, synthetic, reference, X)
    # every pass starts from the targets (MC's ball count from those whose nearest synthetic
    # row is within the radius: tests/queries/test_synthetic_reuse.py), never the release
    assert len(X) < len(synthetic)
    assert seen and max(seen) == len(X) and all(n <= len(X) for n in seen)
