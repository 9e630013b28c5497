"""The attacker contract (``docs/design.md``), checked over every attacker in one registry.

For each entry of ``ATTACKERS``, on data where the attacker is meaningful:

* ``classes_`` echoes the labels given to ``fit`` ({0, 1}, {-1, 1}, booleans, strings with
  ``member_label``, the smaller label named as the member); strings without ``member_label``
  warn ``MembershipLabelWarning`` naming the label taken; the decisions do not depend on
  the coding;
* ``predict`` returns labels of ``classes_``; ``(decision_function(X) > 0) ==
  (predict(X) == classes_[1])`` on every row;
* ``predict_proba`` (when present) lies in [0, 1], its rows sum to 1 and its column 1 ranks
  rows as ``decision_function`` does;
* ``score`` is ``membership_advantage(m, guesses, prior=prior_)``, with ``sample_weight``
  too, and the ``"membership_advantage"`` scorer agrees;
* ``cross_val_score`` with string labels and ``member_label`` gives the scores of the
  0/1 labels.

Adding an attacker is one entry (3 lines)::

    pytest.param(
        partial(MyAttack, random_state=0), make_my_data, id="MyAttack"
    ),

``partial(...)`` builds the unfitted attacker; the tests call it with extra keyword
parameters (``member_label=...``), so the class must take ``member_label``.
``make_my_data(rng)`` returns ``(X, m)``: query features and membership labels coded
0/1 (1 = member), both classes present, at least about 100 rows of each so that a
stratified 3-fold split leaves every fit enough of both. Existing data makers
(``gaussian_shift``, ``btta_queries``, ``labelled_signal``, ``lira_records``) can be
reused: e.g. a head on a one-column attack score can take ``gaussian_shift``.
"""

import warnings
from functools import cache, partial

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.tree import DecisionTreeClassifier

from sklearn_mace import (
    BayesOptimalMIA,
    BTTAttack,
    DOMIASAttack,
    GeneralizedMetricAttack,
    KDEAdvantageEstimator,
    LabelOnlyAttack,
    LiRAAttack,
    RMIAAttack,
    ShadowModelAttack,
    TakeTheTypicalAttack,
    ThresholdAttack,
)
from sklearn_mace._validation import MembershipLabelWarning
from sklearn_mace.metrics import get_scorer, membership_advantage

# ----------------------------------------------------------------------------- data makers


def gaussian_shift(rng, n=150, shift=1.5):
    """One query feature: members N(shift, 1), non-members N(0, 1), 2:3 members to others."""
    n_members = 2 * n // 3
    X = np.r_[rng.normal(shift, 1, (n_members, 1)), rng.normal(0, 1, (n, 1))]
    return X, np.r_[np.ones(n_members, int), np.zeros(n, int)]


def btta_queries(rng, n=300):
    """BTTA's query layout (correct, true label, predicted label, two confidences)."""
    m = (rng.random(n) < 0.5).astype(int)
    correct = (rng.random(n) < np.where(m == 1, 0.95, 0.7)).astype(float)
    true_label = rng.integers(0, 3, n)
    predicted = np.where(correct == 1, true_label, (true_label + 1) % 3)
    confidence = rng.uniform(0.34, 1.0, n)
    X = np.column_stack([correct, true_label, predicted, confidence, confidence])
    return X, m


def labelled_signal(rng, n=300, delta=2.0):
    """ShadowModelAttack's layout: true label in column 0, a label-dependent signal after."""
    label = rng.integers(0, 2, n)
    m = rng.integers(0, 2, n)
    signal = rng.normal(size=n) + np.where(label == 0, delta, -delta) * m
    return np.column_stack([label, signal]), m


@cache
def _lira_case():
    """A fitted target (an overfit tree) and its records (features, label last)."""
    rng = np.random.default_rng(7)
    n = 160
    features = rng.normal(size=(n, 3))
    labels = (features[:, 0] + rng.normal(scale=1.0, size=n) > 0).astype(int)
    m = (rng.random(n) < 0.5).astype(int)
    target = DecisionTreeClassifier(random_state=0).fit(features[m == 1], labels[m == 1])
    return target, np.column_stack([features, labels]), m


def lira_records(rng):
    """LiRA's records and their membership in ``_lira_case``'s target (fixed, not drawn)."""
    _, records, m = _lira_case()
    return records, m


def _lira(**params):
    return LiRAAttack(_lira_case()[0], n_reference_models=4, random_state=0, **params)


def _rmia(**params):
    return RMIAAttack(_lira_case()[0], n_reference_models=2, random_state=0, **params)


def _label_only(**params):
    return LabelOnlyAttack(_lira_case()[0], **params)


# ----------------------------------------------------------------------------- registry


@cache
def _domias_case():
    """Records, membership, and a release that holds noisy copies of the members."""
    rng = np.random.default_rng(1)
    members, non_members = rng.normal(size=(150, 2)), rng.normal(size=(150, 2))
    synthetic = np.r_[members + 0.2 * rng.normal(size=members.shape), rng.normal(size=(300, 2))]
    X = np.r_[members, non_members]
    m = np.r_[np.ones(150, dtype=int), np.zeros(150, dtype=int)]
    return X, m, synthetic, rng.normal(size=(600, 2))


def domias_records(rng):
    X, m, _, _ = _domias_case()
    return X, m


def _domias(**params):
    _, _, synthetic, reference = _domias_case()
    return DOMIASAttack(synthetic, reference, device="cpu", **params)


ATTACKERS = [
    pytest.param(partial(BayesOptimalMIA, device="cpu"), gaussian_shift, id="BayesOptimalMIA"),
    pytest.param(
        partial(BayesOptimalMIA, metric="am", prior=0.3, device="cpu"),
        gaussian_shift,
        id="BayesOptimalMIA-am",
    ),
    pytest.param(
        partial(BayesOptimalMIA, density="histogram", bins=8),
        gaussian_shift,
        id="BayesOptimalMIA-histogram",
    ),
    pytest.param(
        partial(GeneralizedMetricAttack, metric="am", prior=0.3, random_state=0),
        gaussian_shift,
        id="GeneralizedMetricAttack-am",
    ),
    pytest.param(
        partial(GeneralizedMetricAttack, metric="f1", random_state=0),
        gaussian_shift,
        id="GeneralizedMetricAttack-f1",
    ),
    pytest.param(
        partial(KDEAdvantageEstimator, device="cpu", random_state=0),
        gaussian_shift,
        id="KDEAdvantageEstimator",
    ),
    pytest.param(BTTAttack, btta_queries, id="BTTAttack"),
    pytest.param(partial(BTTAttack, partition="predicted_label"), btta_queries, id="BTTAttack-PPL"),
    pytest.param(TakeTheTypicalAttack, btta_queries, id="TakeTheTypicalAttack"),
    pytest.param(  # q = 1/2: the paper's tie, reported member; decision must be > 0
        partial(TakeTheTypicalAttack, prior=0.5), btta_queries, id="TakeTheTypicalAttack-tie"
    ),
    pytest.param(
        partial(ShadowModelAttack, LogisticRegression()), labelled_signal, id="ShadowModelAttack"
    ),
    pytest.param(
        partial(ShadowModelAttack, LogisticRegression(), prior=0.2),
        labelled_signal,
        id="ShadowModelAttack-prior",
    ),
    pytest.param(_lira, lira_records, id="LiRAAttack"),
    pytest.param(partial(_lira, online=False), lira_records, id="LiRAAttack-offline"),
    pytest.param(_rmia, lira_records, id="RMIAAttack"),
    pytest.param(partial(_rmia, online=False), lira_records, id="RMIAAttack-offline"),
    pytest.param(_label_only, lira_records, id="LabelOnlyAttack"),
    pytest.param(partial(_label_only, prior=0.2), lira_records, id="LabelOnlyAttack-prior"),
    pytest.param(ThresholdAttack, gaussian_shift, id="ThresholdAttack"),
    pytest.param(partial(ThresholdAttack, threshold=0.5), gaussian_shift, id="ThresholdAttack-0.5"),
    pytest.param(_domias, domias_records, id="DOMIASAttack"),
    pytest.param(partial(_domias, threshold="median"), domias_records, id="DOMIASAttack-median"),
]


def _attacker_name(param):
    factory = param.values[0]
    while isinstance(factory, partial):
        factory = factory.func
    wrappers = {_lira: "LiRAAttack", _rmia: "RMIAAttack", _label_only: "LabelOnlyAttack"}
    wrappers[_domias] = "DOMIASAttack"
    return wrappers.get(factory, getattr(factory, "__name__", ""))


def test_every_public_attacker_is_in_the_registry():
    """A new attacker exported by the package must join ``ATTACKERS``, or the contract
    above silently skips it: every public class with the attacker contract
    (``AttackerMixin``) is there."""
    import sklearn_mace
    from sklearn_mace.base import AttackerMixin

    exported = {
        name
        for name in sklearn_mace.__all__
        if isinstance(getattr(sklearn_mace, name), type)
        and issubclass(getattr(sklearn_mace, name), AttackerMixin)
    }
    assert len(exported) >= 10  # the discovery sees the attackers, or this checks nothing
    assert exported <= {_attacker_name(param) for param in ATTACKERS}


# (labels from the 0/1 membership m, member_label, expected classes_)
CODINGS = {
    "0/1": (lambda m: m, None, [0, 1]),
    "-1/1": (lambda m: 2 * m - 1, None, [-1, 1]),
    "bool": (lambda m: m.astype(bool), None, [False, True]),
    "strings": (lambda m: np.where(m == 1, "in", "out"), "in", ["out", "in"]),
    "member 0": (lambda m: 1 - m, 0, [1, 0]),
}


def _fit(factory, X, y, **params):
    with warnings.catch_warnings():
        # BTTA's "test accuracy above train" on a fold, MLP/LogReg convergence, ...; the
        # label warning is checked on its own below.
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", MembershipLabelWarning)
        return factory(**params).fit(X, y)


over_attackers = pytest.mark.parametrize("factory, data_maker", ATTACKERS)


def _data(data_maker):
    """(X, m, X_eval): fit data, and the fit rows plus fresh ones (drawn with another seed)."""
    X, m = data_maker(np.random.default_rng(0))
    X_new, _ = data_maker(np.random.default_rng(1))
    return X, m, np.r_[X, X_new]


def _member_guesses(attacker, X):
    return attacker.predict(X) == attacker.classes_[1]


@over_attackers
def test_classes_echo_the_labels_and_decisions_do_not_depend_on_the_coding(factory, data_maker):
    X, m, X_eval = _data(data_maker)
    reference = _member_guesses(_fit(factory, X, m), X_eval)
    for name, (coding, member_label, classes) in CODINGS.items():
        y = coding(m)
        attacker = _fit(factory, X, y, member_label=member_label)
        np.testing.assert_array_equal(attacker.classes_, classes, err_msg=name)
        assert attacker.classes_.dtype == np.asarray(y).dtype, name
        predicted = attacker.predict(X_eval)
        assert set(np.unique(predicted)) <= set(attacker.classes_.tolist()), name
        np.testing.assert_array_equal(_member_guesses(attacker, X_eval), reference, err_msg=name)


@over_attackers
def test_string_labels_without_member_label_warn_naming_the_member(factory, data_maker):
    X, m, X_eval = _data(data_maker)
    with pytest.warns(MembershipLabelWarning, match="taking 'out' .*as the member"):
        attacker = factory().fit(X, np.where(m == 1, "in", "out"))
    np.testing.assert_array_equal(attacker.classes_, ["in", "out"])  # "out" taken: member


@over_attackers
def test_sign_of_decision_function_is_predict(factory, data_maker):
    X, m, X_eval = _data(data_maker)
    attacker = _fit(factory, X, np.where(m == 1, "in", "out"), member_label="in")
    if not hasattr(attacker, "decision_function"):
        pytest.skip(f"{type(attacker).__name__} has no decision_function")
    decision = attacker.decision_function(X_eval)
    assert decision.shape == (len(X_eval),) and not np.isnan(decision).any()
    np.testing.assert_array_equal(decision > 0, attacker.predict(X_eval) == "in")


@over_attackers
def test_predict_proba_is_p_member_and_ranks_as_decision_function(factory, data_maker):
    X, m, X_eval = _data(data_maker)
    attacker = _fit(factory, X, np.where(m == 1, "in", "out"), member_label="in")
    if not hasattr(attacker, "predict_proba"):
        pytest.skip(f"{type(attacker).__name__} has no predict_proba")
    proba = attacker.predict_proba(X_eval)
    assert proba.shape == (len(X_eval), 2)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    decision = attacker.decision_function(X_eval)
    # d_i < d_j  ⇒  P(member)_i ≤ P(member)_j, for every pair of rows
    below = decision[:, None] < decision[None, :]
    assert not np.any(below & (proba[:, None, 1] > proba[None, :, 1]))
    # P(member) is informative on these data: higher for members than for others on average
    p_fit = attacker.predict_proba(X)[:, 1]
    if type(attacker).__name__ != "LiRAAttack":  # LiRA's y does not train its scores
        assert p_fit[m == 1].mean() > p_fit[m == 0].mean()


@over_attackers
def test_score_is_the_membership_advantage_at_prior(factory, data_maker):
    X, m, X_eval = _data(data_maker)
    y = np.where(m == 1, "in", "out")
    attacker = _fit(factory, X, y, member_label="in")
    guesses = _member_guesses(attacker, X)
    expected = membership_advantage(m, guesses, prior=attacker.prior_)
    assert attacker.score(X, y) == pytest.approx(expected, abs=1e-12)
    assert get_scorer("membership_advantage")(attacker, X, y) == pytest.approx(expected)
    assert 0.0 <= get_scorer("tpr_at_1pct_fpr")(attacker, X, y) <= 1.0
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(m))
    weighted = membership_advantage(m, guesses, prior=attacker.prior_, sample_weight=w)
    assert attacker.score(X, y, sample_weight=w) == pytest.approx(weighted, abs=1e-12)
    assert 0.0 < attacker.prior_ < 1.0


@over_attackers
def test_cross_val_score_with_string_labels_and_member_label(factory, data_maker):
    X, m, X_eval = _data(data_maker)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    strings = np.where(m == 1, "in", "out")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", MembershipLabelWarning)
        named = cross_val_score(factory(member_label="in"), X, strings, cv=cv)
        coded = cross_val_score(factory(), X, m, cv=cv)
    assert np.all(np.isfinite(named))
    np.testing.assert_allclose(named, coded, rtol=0, atol=1e-12)
