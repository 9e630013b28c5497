"""Membership-label handling and the attacker base shared by every estimator."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.model_selection import cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_mace.base import (
    AttackerMixin,
    check_prior,
    fit_membership_labels,
    resolve_prior,
    validate_membership,
)
from sklearn_mace.utils._testing import expected_failed_checks


@pytest.mark.parametrize(
    "y, expected",
    [
        ([1, 0, 1], [1, 0, 1]),
        ([1, -1, 1], [1, 0, 1]),
        ([True, False, False], [1, 0, 0]),
        (np.array([1.0, -1.0]), [1, 0]),
        ([0, -1, 1, 1], None),  # three distinct values: rejected below
    ],
)
def test_validate_membership_maps_conventions(y, expected):
    if expected is None:
        with pytest.raises(ValueError, match="Only binary classification is supported"):
            validate_membership(y)
    else:
        np.testing.assert_array_equal(validate_membership(y), expected)


@pytest.mark.parametrize(
    "y, match",
    [
        (["member", "other"], "must hold membership labels"),
        ([2, 3, 2], "must hold membership labels"),
        ([0.5, 0.1, 0.3], "Unknown label type"),
        ([1, 1, 1], r"only one class \(members\)"),
        ([-1, -1], r"only one class \(non-members\)"),
        ([], "empty"),
    ],
)
def test_validate_membership_errors(y, match):
    with pytest.raises(ValueError, match=match):
        validate_membership(y)


@pytest.mark.parametrize(
    "y, classes, members",
    [
        ([1, -1, 1], [0, 1], [1, 0, 1]),
        ([True, False, False], [0, 1], [1, 0, 0]),
        ([2, 1, 2], [1, 2], [1, 0, 1]),
        (["out", "in", "out"], ["in", "out"], [1, 0, 1]),
    ],
)
def test_fit_labels_normalise_membership_coding_and_accept_any_pair(y, classes, members):
    m, fitted_classes = fit_membership_labels(y)
    np.testing.assert_array_equal(fitted_classes, classes)
    np.testing.assert_array_equal(m, members)


def test_fit_labels_reject_single_class_and_multiclass():
    with pytest.raises(ValueError, match="only one class"):
        fit_membership_labels(["a", "a"])
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        fit_membership_labels(["a", "b", "c"])


def test_single_class_allowed_when_scoring():
    np.testing.assert_array_equal(validate_membership([1, 1], require_both_classes=False), [1, 1])


def test_prior_validation_and_default():
    assert resolve_prior(None, np.array([1, 0, 0, 0])) == 0.25
    assert resolve_prior(0.01, np.array([1, 0])) == 0.01
    for bad in (0.0, 1.0, -0.1, 1.5, np.nan):
        with pytest.raises(ValueError, match="prior must be in the open interval"):
            check_prior(bad)
    with pytest.raises(TypeError, match="prior must be a float"):
        check_prior("half")


class ThresholdAttacker(AttackerMixin, BaseEstimator):
    """Smallest possible attacker on the base: the nearer class centroid wins."""

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        m = self._fit_membership_labels(y)
        self.centroids_ = np.stack([X[m == 0].mean(axis=0), X[m == 1].mean(axis=0)])
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        sq = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=-1)
        return sq[:, 0] - sq[:, 1]

    def predict(self, X):
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


def test_score_is_membership_advantage(rng):
    X = rng.normal(size=(400, 1))
    m = np.r_[np.ones(200), np.zeros(200)]
    X[m == 1] += 2.0
    attacker = ThresholdAttacker().fit(X, 2 * m - 1)
    np.testing.assert_array_equal(attacker.classes_, [0, 1])
    pred = attacker.predict(X)
    assert attacker.score(X, m) == pytest.approx(2 * np.mean(pred == m) - 1)
    # Generic labels: the greater one is the member class and predictions come back in it.
    generic = ThresholdAttacker().fit(X, np.where(m == 1, "z-in", "a-out"))
    assert set(generic.predict(X)) <= {"z-in", "a-out"}
    assert generic.score(X, np.where(m == 1, "z-in", "a-out")) == pytest.approx(
        attacker.score(X, m)
    )
    # cross_val_score ranks attackers by advantage without extra configuration.
    assert cross_val_score(ThresholdAttacker(), X, m, cv=4).mean() > 0.5


@parametrize_with_checks([ThresholdAttacker()], expected_failed_checks=expected_failed_checks)
def test_attacker_base_passes_estimator_checks(estimator, check):
    check(estimator)
