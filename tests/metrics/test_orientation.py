"""A query declares which way it points, and nothing reads a distance upside down (issue #22).

``compare_attacks`` took ``NearestSyntheticDistance`` (smaller = member) as larger = member
and reported AUC 0.343 for a release where the distance separates at 0.657. Each query now
declares its orientation; the declarations are checked against data where the truth is known
(members are closer to a leaky release, better fitted by an overfit classifier).
"""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.metrics import roc_auc_score
from sklearn.tree import DecisionTreeClassifier

from sklearn_mace.attacks import ThresholdAttack, compare_attacks
from sklearn_mace.datasets import make_planted_leak
from sklearn_mace.metrics import MembershipRocDisplay, membership_scores
from sklearn_mace.queries import (
    ClassifierQuery,
    DOMIASQuery,
    GANLeaksQuery,
    MonteCarloQuery,
    NearestSyntheticDistance,
)


@pytest.fixture(scope="module")
def leak():
    # half the release are near-copies of members (oracle AUC 0.99): every query separates
    return make_planted_leak(
        300, 300, 2000, 2000, n_features=3, leak_fraction=0.5, noise=0.1, random_state=0
    )


def test_compare_attacks_reads_the_distance_the_right_way_up(leak):
    X, m = leak.X_test, leak.membership
    distance = NearestSyntheticDistance(leak.synthetic).fit(X).transform(X)[:, 0]
    upside_down = roc_auc_score(m, distance)
    assert upside_down < 0.5  # what was reported before: members are closer
    table = compare_attacks({"distance": NearestSyntheticDistance(leak.synthetic)}, X, m)
    assert table.loc[0, "auc"] == pytest.approx(1 - upside_down, abs=1e-12)
    display = MembershipRocDisplay.from_estimator(
        NearestSyntheticDistance(leak.synthetic).fit(X), X, m, plot=False
    )
    assert display.roc_auc == pytest.approx(1 - upside_down, abs=1e-12)


@pytest.mark.parametrize(
    "make_query, orientation",
    [
        (lambda d: NearestSyntheticDistance(d.synthetic, k=2), [-1, -1]),
        (lambda d: MonteCarloQuery(d.synthetic, weighting="count"), [1]),
        (lambda d: DOMIASQuery(d.synthetic, d.reference, device="cpu"), [1]),
        (lambda d: GANLeaksQuery(d.synthetic, d.reference, device="cpu"), [1]),
    ],
    ids=["distance", "MC", "DOMIAS", "GAN-leaks CAL"],
)
def test_declared_orientations_point_at_the_members(leak, make_query, orientation):
    """Ground truth: on a planted leak each oriented score ranks members first. Measured
    AUCs 0.68 (DOMIAS) to 0.90 (distance); a wrong sign would read below 0.35."""
    X, m = leak.X_test, leak.membership
    query = make_query(leak).fit(X)
    assert query.membership_orientation().tolist() == orientation
    assert roc_auc_score(m, membership_scores(query, X)) > 0.6


def test_classifier_query_orientation_per_output():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    tree = DecisionTreeClassifier(random_state=0).fit(X[:100], y[:100])  # memorizes
    records = np.c_[X, y]
    m = np.r_[np.ones(100), np.zeros(100)]
    outputs = ["loss", "true_label_confidence", "correct", "true_label", "proba"]
    query = ClassifierQuery(tree, outputs=outputs).fit(records)
    orientation = query.membership_orientation()
    assert orientation.tolist() == [-1, 1, 1, 0, 0, 0]
    assert orientation.shape[0] == query.transform(records).shape[1]
    for column in (0, 1, 2):  # the tree is right and sure on its training rows
        assert roc_auc_score(m, membership_scores(query, records, column=column)) > 0.7
    with pytest.raises(ValueError, match="column 3 of ClassifierQuery has no membership order"):
        membership_scores(query, records, column=3)


def test_membership_scores_of_attackers_and_undeclared_transformers(leak):
    X, m = leak.X_test, leak.membership

    class Plain(TransformerMixin, BaseEstimator):
        def fit(self, X, y=None):
            return self

        def transform(self, X):
            return np.asarray(X)[:, :1]

    with pytest.raises(ValueError, match="does not declare which way"):
        membership_scores(Plain().fit(X), X)
    attack = ThresholdAttack().fit(X[:, :1])
    np.testing.assert_array_equal(
        membership_scores(attack, X[:, :1]), attack.decision_function(X[:, :1])
    )
    # compare_attacks keeps reading an undeclared one-column transformer larger = member
    table = compare_attacks({"plain": Plain()}, X, m)
    assert table.loc[0, "auc"] == pytest.approx(roc_auc_score(m, X[:, 0]))
