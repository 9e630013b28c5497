"""The attacker contract (docs/design.md) for the synthetic-data attackers: DOMIASAttack and
ThresholdAttack (alone and as the head of a query pipeline).

* ``classes_`` echoes the labels given to ``fit``, ``classes_[1]`` is the member
  (``member_label`` names it);
* the sign of ``decision_function`` is ``predict``'s decision (score_samples − offset_);
* ``score`` is the membership advantage at ``prior_``;
* no ``predict_proba`` (a score column is not P(member)).
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.attacks import BayesOptimalMIA, DOMIASAttack, ThresholdAttack
from sklearn_mace.datasets import make_planted_leak
from sklearn_mace.metrics import membership_advantage
from sklearn_mace.queries import DOMIASQuery, GANLeaksQuery
from tests._query_models import synthetic_of_width, with_check_width

S = synthetic_of_width(3)

# scikit-learn xfails exactly these two checks for Pipeline itself
# (sklearn/utils/_test_common/instance_generator.py, PER_ESTIMATOR_XFAIL_CHECKS): Pipeline
# fits its steps in place. ThresholdAttack alone cannot run the checks (they fit on several
# columns; it takes one score column), so it is checked behind a one-column query.
PIPELINE_XFAILS = {
    "check_dont_overwrite_parameters": "Pipeline changes the `steps` parameter (sklearn xfail)",
    "check_estimators_overwrite_params": "Pipeline changes the `steps` parameter (sklearn xfail)",
}


@parametrize_with_checks(
    [
        make_pipeline(GANLeaksQuery(S, device="cpu"), ThresholdAttack()),
        make_pipeline(GANLeaksQuery(S, device="cpu"), ThresholdAttack(threshold=0.0, prior=0.3)),
    ],
    expected_failed_checks=lambda estimator: PIPELINE_XFAILS,
)
def test_threshold_head_in_a_pipeline_is_sklearn_compatible(estimator, check):
    check(with_check_width(estimator, check))


@pytest.fixture(scope="module")
def planted():
    data = make_planted_leak(150, 150, 1500, 1500, n_features=3, noise=0.3, random_state=0)
    return data.X_test, data.membership, data.synthetic, data.reference


def _attackers(synthetic, reference, **params):
    query = DOMIASQuery(synthetic, reference, device="cpu")
    return {
        "DOMIASAttack": DOMIASAttack(synthetic, reference, device="cpu", **params),
        "DOMIASAttack median": DOMIASAttack(
            synthetic, reference, threshold="median", device="cpu", **params
        ),
        "query + ThresholdAttack": make_pipeline(query, ThresholdAttack(**params)),
    }


@pytest.mark.parametrize(
    ("labels", "member_label", "classes"),
    [
        ((0, 1), None, [0, 1]),
        ((-1, 1), None, [-1, 1]),
        ((False, True), None, [False, True]),
        (("out", "in"), "in", ["out", "in"]),
        ((2, 1), 1, [2, 1]),  # the member is the smaller label: classes_[1] = 1
    ],
)
def test_classes_echo_the_labels_and_sign_is_predict(planted, labels, member_label, classes):
    X, m, synthetic, reference = planted
    y = np.where(m == 1, labels[1], labels[0])
    for name, attacker in _attackers(synthetic, reference, member_label=member_label).items():
        step = attacker if not hasattr(attacker, "steps") else attacker[-1]
        attacker.fit(X, y)
        np.testing.assert_array_equal(step.classes_, classes, err_msg=name)
        decision = attacker.decision_function(X)
        np.testing.assert_array_equal(
            attacker.predict(X), step.classes_[(decision > 0).astype(int)], err_msg=name
        )
        assert not hasattr(attacker, "predict_proba"), name
        # score is the advantage at prior_ (here the member fraction, 0.5)
        m_pred = (attacker.predict(X) == classes[1]).astype(int)
        expected = membership_advantage(m, m_pred, prior=step.prior_)
        assert attacker.score(X, y) == pytest.approx(expected), name


def test_score_is_the_advantage_at_the_given_prior(planted):
    X, m, synthetic, reference = planted
    for name, attacker in _attackers(synthetic, reference, prior=0.1).items():
        attacker.fit(X, m)
        step = attacker if not hasattr(attacker, "steps") else attacker[-1]
        assert step.prior_ == 0.1
        pred = attacker.predict(X)
        tpr, tnr = pred[m == 1].mean(), 1 - pred[m == 0].mean()
        assert attacker.score(X, m) == pytest.approx(2 * (0.1 * tpr + 0.9 * tnr) - 1), name


def test_without_labels_classes_are_0_1_and_prior_one_half(planted):
    X, _, synthetic, reference = planted
    for name, attacker in _attackers(synthetic, reference).items():
        attacker.fit(X)
        step = attacker if not hasattr(attacker, "steps") else attacker[-1]
        np.testing.assert_array_equal(step.classes_, [0, 1], err_msg=name)
        assert step.prior_ == 0.5, name


def test_domias_attack_is_the_query_with_a_threshold_head(planted):
    X, m, synthetic, reference = planted
    attack = DOMIASAttack(synthetic, reference, threshold="median", device="cpu").fit(X, m)
    pipe = make_pipeline(DOMIASQuery(synthetic, reference, device="cpu"), ThresholdAttack())
    pipe.fit(X, m)
    np.testing.assert_allclose(attack.decision_function(X), pipe.decision_function(X))
    np.testing.assert_array_equal(attack.predict(X), pipe.predict(X))
    assert attack.offset_ == pipe[-1].offset_


def test_labelled_path_bayes_optimal_on_the_query(planted):
    # With membership labels the query feeds BayesOptimalMIA; its AUC on the (in-sample)
    # targets is at least the raw column's, as it is a monotone-ish refit of the same 1-D
    # signal (the KDE posterior of the column); 0.02 allows for its smoothing.
    X, m, synthetic, reference = planted
    query = DOMIASQuery(synthetic, reference, device="cpu")
    raw = roc_auc_score(m, clone(query).fit_transform(X)[:, 0])
    attack = make_pipeline(query, BayesOptimalMIA(device="cpu")).fit(X, m)
    assert roc_auc_score(m, attack.predict_proba(X)[:, 1]) > raw - 0.02


def test_threshold_attack_validates_its_column():
    with pytest.raises(ValueError, match="one score column"):
        ThresholdAttack().fit(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="NaN"):
        ThresholdAttack().fit([[np.nan], [1.0]])
    with pytest.raises(ValueError, match="y has 2 labels for 3 rows"):
        ThresholdAttack().fit([[0.0], [1.0], [2.0]], [0, 1])
    attack = ThresholdAttack(threshold=1.5).fit([[0.0], [1.0], [2.0]])
    assert attack.offset_ == 1.5
    np.testing.assert_array_equal(attack.decision_function([[2.0]]), [0.5])
