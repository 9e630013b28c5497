"""Shadow models and the per-class shadow-model attack."""

import warnings

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.utils.validation import check_is_fitted

from sklearn_mace.attacks import BTTAttack, ShadowModelAttack, ShadowModels
from sklearn_mace.queries import ClassifierQuery
from sklearn_mace.utils._testing import expected_failed_checks


@parametrize_with_checks(
    [ShadowModelAttack(random_state=0), ShadowModelAttack(LogisticRegression())],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MLP convergence on random check data
        check(estimator)


@parametrize_with_checks(
    [ShadowModels(DecisionTreeClassifier(random_state=0), n_reference_models=2, random_state=0)],
    expected_failed_checks=expected_failed_checks,
)
def test_shadow_models_sklearn_compatible(estimator, check):
    # Tiny check data leave some class out of a shadow's training half: ClassifierQuery
    # warns that those held-out labels are not the model's classes (documented behaviour).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


@pytest.fixture(scope="module")
def population():
    # label noise makes a fully grown tree overfit: train accuracy 1, test accuracy ~0.7
    return make_classification(
        n_samples=4000, n_features=6, n_informative=4, n_classes=3, flip_y=0.3, random_state=0
    )


def test_shadow_models_split_disjointly(population):
    X, y = population
    tree = DecisionTreeClassifier(random_state=0)
    shadows = ShadowModels(tree, n_reference_models=4, train_size=0.4, random_state=0)
    shadows.fit(X[:1000], y[:1000])
    with pytest.raises(Exception, match="not fitted"):
        check_is_fitted(tree)  # the template is cloned, never fitted
    assert len(shadows.estimators_) == 4
    assert np.unique(shadows.sample_index_).size == 1000  # every record once: disjoint
    for k, model in enumerate(shadows.estimators_):
        rows = shadows.shadow_index_ == k
        members = shadows.sample_index_[rows & (shadows.membership_ == 1)]
        assert members.size == 100  # 40 % of a part of 250
        # each shadow was trained on exactly its members: a grown tree recalls them all
        np.testing.assert_array_equal(model.predict(X[members]), y[members])
        non_members = shadows.sample_index_[rows & (shadows.membership_ == 0)]
        accuracy = np.mean(model.predict(X[non_members]) == y[non_members])
        assert shadows.test_accuracies_[k] == pytest.approx(accuracy)
    np.testing.assert_array_equal(shadows.train_accuracies_, 1.0)
    # the queries are ClassifierQuery's, row by row
    k = 2
    rows = shadows.shadow_index_ == k
    index = shadows.sample_index_[rows]
    expected = ClassifierQuery(shadows.estimators_[k]).fit_transform(
        np.column_stack([X[index], y[index]])
    )
    np.testing.assert_allclose(shadows.queries_[rows], expected)
    assert list(shadows.feature_names_out_)[0] == "correct"


def test_train_size_as_count_and_outputs_without_correct(population):
    X, y = population
    shadows = ShadowModels(
        DecisionTreeClassifier(random_state=0),
        n_reference_models=2,
        train_size=150,
        outputs=("true_label", "proba"),
        random_state=0,
    )
    Q, m = shadows.fit_queries(X[:600], y[:600])
    assert Q.shape == (600, 4) and m.sum() == 300
    np.testing.assert_array_equal(shadows.train_accuracies_, 1.0)


def test_too_little_data_for_the_shadows(population):
    X, y = population
    with pytest.raises(ValueError, match="at least one member and one non-member"):
        ShadowModels(DecisionTreeClassifier(), n_reference_models=5, train_size=10).fit(
            X[:40], y[:40]
        )


def test_btta_from_shadow_statistics_predicts_target_accuracy(population):
    # End to end: statistics read off shadow models (trained like the target on disjoint
    # data) give the expected accuracy of the BTTA against the target. Tolerance 0.04:
    # ~3 binomial standard errors of the 2000 attacked records plus the spread of the
    # shadow accuracies around the target's.
    X, y = population
    # target: trained on rows 0-999, non-members 1000-1999; shadow: same size, rows 2000+
    shadows = ShadowModels(
        DecisionTreeClassifier(random_state=0),
        n_reference_models=1,
        train_size=1000,
        random_state=0,
    )
    Q_shadow, m_shadow = shadows.fit_queries(X[2000:], y[2000:])
    attack = BTTAttack(prior=0.5).fit(Q_shadow, m_shadow)
    target = DecisionTreeClassifier(random_state=0).fit(X[:1000], y[:1000])
    records = np.column_stack([X[:2000], y[:2000]])
    Q = ClassifierQuery(target).fit_transform(records)
    m = np.r_[np.ones(1000, int), np.zeros(1000, int)]
    accuracy = np.mean(attack.predict(Q) == m)
    assert attack.case_ == 3
    assert accuracy == pytest.approx(attack.expected_accuracy_, abs=0.04)
    assert accuracy > 0.6  # the generalization gap alone leaks


def _flipped_signal(rng, n, delta):
    """True label c; the member feature is shifted by +delta for c = 0 and -delta for c = 1."""
    label = rng.integers(0, 2, n)
    member = rng.integers(0, 2, n)
    shift = np.where(label == 0, delta, -delta) * member
    return np.column_stack([label, rng.normal(size=n) + shift]), member


def test_one_attack_model_per_class_reaches_bayes_accuracy(rng):
    # Per class the query is N(±delta, 1) (members) vs N(0, 1): Bayes accuracy Phi(delta/2)
    # at prior 1/2 (REFERENCE.md, two Gaussians). A single model that ignored the class
    # does markedly worse. Tolerance: 4 binomial standard errors (0.012) plus 0.01 for the
    # logistic threshold estimated from 4000 records.
    delta = 2.0
    X, m = _flipped_signal(rng, 4000, delta)
    attack = ShadowModelAttack(LogisticRegression()).fit(X, m)
    assert attack.labels_.tolist() == [0, 1]
    X_test, m_test = _flipped_signal(rng, 20_000, delta)
    accuracy = np.mean(attack.predict(X_test) == m_test)
    bayes = norm.cdf(delta / 2)
    assert accuracy == pytest.approx(bayes, abs=4 * np.sqrt(bayes * (1 - bayes) / 20_000) + 0.01)
    pooled = LogisticRegression().fit(X[:, 1:], m)
    assert np.mean(pooled.predict(X_test[:, 1:]) == m_test) < bayes - 0.1
    proba = attack.predict_proba(X_test[:5])[:, 1]
    np.testing.assert_allclose(attack.decision_function(X_test[:5]), np.log(proba / (1 - proba)))


def test_prior_moves_the_attack_models_log_odds_by_bayes_rule(rng):
    # Fitted at member fraction π, asked about p: log odds + logit(p) − logit(π) (the
    # class-conditional densities are unchanged); unseen labels answer p itself.
    X, m = _flipped_signal(rng, 2000, 1.0)
    base = ShadowModelAttack(LogisticRegression()).fit(X, m)
    shifted = ShadowModelAttack(LogisticRegression(), prior=0.1).fit(X, m)
    pi = m.mean()
    assert base.prior_ == pi and shifted.prior_ == 0.1
    rows = X[:50]
    np.testing.assert_allclose(
        shifted.decision_function(rows),
        base.decision_function(rows) + np.log(0.1 / 0.9) - np.log(pi / (1 - pi)),
        rtol=1e-9,
        atol=1e-9,
    )
    np.testing.assert_array_equal(shifted.predict(rows) == 1, shifted.decision_function(rows) > 0)
    assert shifted.predict(rows).mean() < base.predict(rows).mean()
    np.testing.assert_allclose(shifted.predict_proba([[7, 0.0]]), [[0.9, 0.1]])


def test_shadow_attack_fallbacks():
    X = np.array([[0, 0.1], [0, 0.9], [0, 0.2], [0, 0.8], [1, 0.5], [1, 0.7]])
    m = np.array([1, 0, 1, 0, 1, 1])
    attack = ShadowModelAttack(LogisticRegression()).fit(X, m)
    assert attack.estimators_[1] == 1.0  # class 1: members only -> constant
    np.testing.assert_array_equal(attack.predict_proba([[1, 0.0]]), [[0.0, 1.0]])
    # a class never seen falls back to the overall member fraction (Take-the-Typical)
    np.testing.assert_allclose(attack.predict_proba([[5, 0.3]]), [[1 / 3, 2 / 3]])
    with pytest.raises(ValueError, match="at least 2"):
        ShadowModelAttack().fit(X[:, :1], m)


def test_shadow_models_with_a_skorch_net(population):
    skorch = pytest.importorskip("skorch")
    import torch

    X, y = population
    X = X[:400].astype(np.float32)
    net = skorch.NeuralNetClassifier(
        torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)),
        criterion=torch.nn.CrossEntropyLoss,
        max_epochs=2,
        train_split=None,
        verbose=0,
    )
    # MACE App. I's white-box query: the hidden layer's activations, next to the proba
    shadows = ShadowModels(
        net,
        n_reference_models=2,
        outputs=("correct", "proba", "activations"),
        layer="1",
        random_state=0,
    )
    Q, m = shadows.fit_queries(X, y[:400])
    assert Q.shape == (400, 1 + 3 + 16) and m.sum() == 200
    assert (Q[:, 4:] >= 0).all() and Q[:, 4:].max() > 0  # ReLU outputs
    assert not hasattr(net, "module_")  # the template net is cloned, never initialized
    for k, model in enumerate(shadows.estimators_):
        rows = shadows.shadow_index_ == k
        index = shadows.sample_index_[rows]
        np.testing.assert_allclose(Q[rows, 1:4], model.predict_proba(X[index]), rtol=1e-6)


def test_balanced_split_makes_every_record_in_for_half_the_shadows(population):
    X, y = population
    X, y = X[:300], y[:300]
    shadows = ShadowModels(
        DecisionTreeClassifier(random_state=0),
        n_reference_models=6,
        split="balanced",
        random_state=0,
    ).fit(X, y)
    trained = shadows.membership_.reshape(6, 300)
    np.testing.assert_array_equal(trained.sum(axis=0), 3)  # exactly half, for every record
    np.testing.assert_array_equal(
        shadows.sample_index_.reshape(6, 300), np.tile(range(300), (6, 1))
    )
    np.testing.assert_array_equal(shadows.shadow_index_, np.repeat(range(6), 300))
    for k, model in enumerate(shadows.estimators_):
        members = np.flatnonzero(trained[k])
        # the tree was trained on exactly its members: it recalls them, and only them fit
        np.testing.assert_array_equal(model.predict(X[members]), y[members])
        assert model.tree_.n_node_samples[0] == members.size
    np.testing.assert_array_equal(shadows.train_accuracies_, 1.0)
    # train_size is the fraction of shadows a record trains
    third = ShadowModels(
        DecisionTreeClassifier(),
        n_reference_models=6,
        train_size=1 / 3,
        split="balanced",
        random_state=0,
    ).fit(X, y)
    np.testing.assert_array_equal(third.membership_.reshape(6, 300).sum(axis=0), 2)


def test_balanced_split_bad_train_size(population):
    X, y = population
    with pytest.raises(ValueError, match="a float in"):
        ShadowModels(
            DecisionTreeClassifier(), n_reference_models=4, train_size=100, split="balanced"
        ).fit(X[:200], y[:200])
    with pytest.raises(ValueError, match="member of 0 shadows"):
        ShadowModels(
            DecisionTreeClassifier(), n_reference_models=4, train_size=0.1, split="balanced"
        ).fit(X[:200], y[:200])


def test_random_split_trains_each_shadow_on_its_own_fraction(population):
    X, y = population
    X, y = X[:300], y[:300]
    one = ShadowModels(
        DecisionTreeClassifier(random_state=0), n_reference_models=1, split="random", random_state=0
    ).fit(X, y)
    assert one.membership_.shape == (300,) and one.membership_.sum() == 150
    assert one.estimators_[0].tree_.n_node_samples[0] == 150  # trained on its half only
    np.testing.assert_array_equal(one.sample_index_, range(300))
    three = ShadowModels(
        DecisionTreeClassifier(),
        n_reference_models=3,
        train_size=0.2,
        split="random",
        random_state=0,
    ).fit(X, y)
    trained = three.membership_.reshape(3, 300)
    np.testing.assert_array_equal(trained.sum(axis=1), 60)  # each shadow: 20 % of the records
    assert len({row.tobytes() for row in trained}) == 3  # drawn independently
    with pytest.raises(ValueError, match="a float in"):
        ShadowModels(
            DecisionTreeClassifier(), n_reference_models=1, train_size=10, split="random"
        ).fit(X, y)
    with pytest.raises(ValueError, match="trains each shadow on 0 records"):
        ShadowModels(
            DecisionTreeClassifier(), n_reference_models=1, train_size=0.001, split="random"
        ).fit(X, y)


def test_unset_random_states_get_per_shadow_seeds(population):
    # A template with random_state=None would make every fit differ; ShadowModels gives each
    # shadow its own seed from random_state, so two fits agree and the shadows differ.
    from sklearn.ensemble import ExtraTreesClassifier

    X, y = population
    template = ExtraTreesClassifier(n_estimators=3)
    first = ShadowModels(template, n_reference_models=3, random_state=0).fit(X[:600], y[:600])
    second = ShadowModels(template, n_reference_models=3, random_state=0).fit(X[:600], y[:600])
    np.testing.assert_array_equal(first.queries_, second.queries_)
    seeds = [model.random_state for model in first.estimators_]
    assert len(set(seeds)) == 3 and template.random_state is None
    kept = ShadowModels(ExtraTreesClassifier(n_estimators=3, random_state=7), n_reference_models=2)
    assert {m.random_state for m in kept.fit(X[:400], y[:400]).estimators_} == {7}
