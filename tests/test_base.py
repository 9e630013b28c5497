"""Membership-label handling and the attacker base shared by every estimator."""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.model_selection import cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_mace._validation import MembershipLabelWarning
from sklearn_mace.base import (
    AttackerMixin,
    check_prior,
    fit_membership_labels,
    resolve_prior,
    validate_membership,
)


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
        ([1, -1, 1], [-1, 1], [1, 0, 1]),
        ([1, 0, 0], [0, 1], [1, 0, 0]),
        ([True, False, False], [False, True], [1, 0, 0]),
        (np.array([1.0, -1.0]), [-1.0, 1.0], [1, 0]),
    ],
)
def test_membership_coded_labels_are_echoed_silently(y, classes, members):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m, fitted_classes = fit_membership_labels(y)
    np.testing.assert_array_equal(fitted_classes, classes)
    assert fitted_classes.dtype == np.asarray(y).dtype
    np.testing.assert_array_equal(m, members)


@pytest.mark.parametrize(
    "y, member",
    [([2, 1, 2], 2), (["out", "in", "out"], "out"), (["non-member", "member"], "non-member")],
)
def test_other_labels_take_the_greater_as_member_and_say_so(y, member):
    with pytest.warns(MembershipLabelWarning, match=f"taking '?{member}'? .*as the member"):
        m, classes = fit_membership_labels(y)
    assert classes[1] == member
    np.testing.assert_array_equal(m, np.asarray(y) == member)


def test_member_label_picks_the_member_and_orders_classes():
    y = ["non-member", "member", "member"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m, classes = fit_membership_labels(y, member_label="member")
    np.testing.assert_array_equal(classes, ["non-member", "member"])
    np.testing.assert_array_equal(m, [0, 1, 1])
    # The smaller label as member: classes_ still ends with the member.
    m, classes = fit_membership_labels([0, 1, 1], member_label=0)
    np.testing.assert_array_equal(classes, [1, 0])
    np.testing.assert_array_equal(m, [1, 0, 0])
    with pytest.raises(ValueError, match=r"member_label='in' is not one of the labels"):
        fit_membership_labels(y, member_label="in")


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

    def __init__(self, prior=None, member_label=None):
        self.prior = prior
        self.member_label = member_label

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        m = self._fit_membership_labels(y)
        self.prior_ = resolve_prior(self.prior, m)
        self.centroids_ = np.stack([X[m == 0].mean(axis=0), X[m == 1].mean(axis=0)])
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        sq = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=-1)
        return sq[:, 0] - sq[:, 1]

    def predict(self, X):
        check_is_fitted(self)
        return self._labels(self.decision_function(X) > 0)


def test_score_is_membership_advantage_at_the_prior(rng):
    X = rng.normal(size=(400, 1))
    m = np.r_[np.ones(200), np.zeros(200)]
    X[m == 1] += 2.0
    attacker = ThresholdAttacker().fit(X, 2 * m - 1)
    np.testing.assert_array_equal(attacker.classes_, [-1, 1])
    pred = attacker.predict(X)
    assert set(pred) <= {-1, 1}
    assert attacker.score(X, 2 * m - 1) == pytest.approx(2 * np.mean(pred == 2 * m - 1) - 1)
    # At prior 0.1 the same predictions score 2(0.1 TPR + 0.9 TNR) - 1.
    at_tenth = ThresholdAttacker(prior=0.1).fit(X, 2 * m - 1)
    tpr, tnr = np.mean(pred[m == 1] == 1), np.mean(pred[m == 0] == -1)
    assert at_tenth.score(X, 2 * m - 1) == pytest.approx(2 * (0.1 * tpr + 0.9 * tnr) - 1)
    # Generic labels: the member is named and predictions come back in the user's labels.
    labels = np.where(m == 1, "in", "out")
    generic = ThresholdAttacker(member_label="in").fit(X, labels)
    np.testing.assert_array_equal(generic.classes_, ["out", "in"])
    assert set(generic.predict(X)) <= {"in", "out"}
    assert generic.score(X, labels) == pytest.approx(attacker.score(X, 2 * m - 1))
    # cross_val_score ranks attackers by advantage without extra configuration.
    assert cross_val_score(ThresholdAttacker(), X, m, cv=4).mean() > 0.5


@parametrize_with_checks([ThresholdAttacker()])
def test_attacker_base_passes_estimator_checks(estimator, check):
    check(estimator)
