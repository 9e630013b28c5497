"""Membership metrics, generalized metrics and the DP link, against closed forms."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    f1_score,
    precision_score,
    recall_score,
)
from sklearn.model_selection import cross_val_predict, cross_val_score
from sklearn.utils.metaestimators import available_if

from sklearn_mace.metrics import (
    GeneralizedMetric,
    advantage_bound,
    epsilon_from_advantage,
    generalized_metric_scorer,
    get_scorer,
    get_scorer_names,
    individual_risk_bound,
    membership_advantage,
    top_quantile_precision,
    tpr_at_fpr,
)

# A hand-made confusion: 3 members, 7 non-members; TP=2, FN=1, FP=1, TN=6.
Y_TRUE = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
Y_PRED = np.array([1, 1, 0, 1, 0, 0, 0, 0, 0, 0])


# --- the (ε, δ)-DP bound on the advantage (hypothesis-testing form) and Thm 1.4 ---------


@pytest.mark.parametrize(
    "epsilon, expected, decimals",
    [(1.0, 0.462, 3), (1.0, 0.4621, 4), (2.0, 0.762, 3), (10.0, 0.99991, 5)],
)
def test_advantage_bound_paper_values(epsilon, expected, decimals):
    # MACE Thm 1.4 text (ε=1 → 0.462) and App. G (ε=2 → 0.762, ε=10 → 0.99991): at p = ½ and
    # δ = 0 the hypothesis-testing bound is Thm 1.4's tanh(ε/2).
    assert round(advantage_bound(epsilon, 0.5), decimals) == expected
    assert round(individual_risk_bound(epsilon, 0.5), decimals) == expected


def mechanism_advantage(r, q, prior):
    """Optimal advantage ∑_j |p·r_j − (1−p)·q_j| of a mechanism with finite outputs (Eq. 13)."""
    return np.abs(prior * np.asarray(r) - (1 - prior) * np.asarray(q)).sum()


def randomized_response_advantage(epsilon, prior, delta=0.0):
    """ε-randomized response that, with probability δ, reveals membership: (ε, δ)-DP."""
    keep = np.exp(epsilon) / (1 + np.exp(epsilon))
    r = [delta, 0.0, (1 - delta) * keep, (1 - delta) * (1 - keep)]
    q = [0.0, delta, (1 - delta) * (1 - keep), (1 - delta) * keep]
    return mechanism_advantage(r, q, prior)


def reveal_advantage(prior, delta):
    """Reveals membership with probability δ, else outputs a constant: (0, δ)-DP."""
    return mechanism_advantage([delta, 0.0, 1 - delta], [0.0, delta, 1 - delta], prior)


def linprog_advantage_bound(epsilon, prior, delta):
    """Reference: maximize 1 − 2(p·FNR + (1−p)·FPR) over the (ε, δ) region by an LP solver."""
    e = np.exp(epsilon)
    # variables (FPR, FNR); constraints written as A_ub @ x <= b_ub
    res = linprog(
        c=[1 - prior, prior],
        A_ub=[[-1, -e], [-e, -1]],
        b_ub=[-(1 - delta), -(1 - delta)],
        bounds=[(0, 1), (0, 1)],
        method="highs",
    )
    assert res.status == 0
    return 1 - 2 * res.fun


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.1])
def test_closed_form_at_half(epsilon, delta):
    # (e^ε − 1 + 2δ)/(e^ε + 1), met by δ-revealing randomized response (the bound is tight)
    expected = (np.exp(epsilon) - 1 + 2 * delta) / (np.exp(epsilon) + 1)
    assert advantage_bound(epsilon, 0.5, delta) == pytest.approx(expected, rel=1e-12)
    assert randomized_response_advantage(epsilon, 0.5, delta) == pytest.approx(expected)


def test_bound_is_tighter_than_thm_1_4_away_from_half():
    # p = 0.1, ε = 1: posterior odds move by at most e, 1/9 → e/9 < 1, so no attacker beats
    # always saying "non-member" (advantage 0.8); Thm 1.4's pointwise bound says 0.9215.
    assert advantage_bound(1.0, 0.1) == pytest.approx(0.8)
    assert individual_risk_bound(1.0, 0.1) == pytest.approx(np.tanh((1 + np.log(9)) / 2))
    assert individual_risk_bound(1.0, 0.1) == pytest.approx(0.92146, abs=1e-5)
    # once e^ε exceeds the prior odds, the symmetric vertex takes over: 1 − 2/(1 + e^ε)
    assert advantage_bound(3.0, 0.1) == pytest.approx(np.tanh(1.5))
    # so beating the majority guess at all certifies ε ≥ log 9, for any δ
    assert epsilon_from_advantage(0.8, 0.1) == 0.0
    assert epsilon_from_advantage(0.8 + 1e-9, 0.1) == pytest.approx(np.log(9), abs=1e-6)
    assert epsilon_from_advantage(1 - 1.8 * 0.1 + 1e-9, 0.1, 0.1) == pytest.approx(
        np.log(9), abs=1e-6
    )


@settings(max_examples=150, deadline=None)
@given(
    epsilon=st.floats(0, 12, allow_nan=False),
    prior=st.floats(0.01, 0.99, allow_nan=False),
    delta=st.sampled_from([0.0, 1e-6, 1e-3, 0.05, 0.3]),
)
def test_bound_is_the_linear_program_optimum(epsilon, prior, delta):
    # Independent reference: the LP over the hypothesis-testing region, solved by HiGHS.
    # 1e-9: HiGHS' default feasibility/optimality tolerances are 1e-7 on the scaled problem.
    assert advantage_bound(epsilon, prior, delta) == pytest.approx(
        linprog_advantage_bound(epsilon, prior, delta), abs=1e-7
    )


@settings(max_examples=200, deadline=None)
@given(
    epsilon=st.floats(0, 10, allow_nan=False),
    prior=st.floats(0.01, 0.99, allow_nan=False),
    delta=st.sampled_from([0.0, 1e-6, 1e-3, 0.05, 0.3]),
)
def test_dp_mechanisms_never_exceed_the_bound_and_the_best_meets_it(epsilon, prior, delta):
    rr = randomized_response_advantage(epsilon, prior, delta)
    reveal = reveal_advantage(prior, delta)
    bound = advantage_bound(epsilon, prior, delta)
    assert rr <= bound + 1e-12 and reveal <= bound + 1e-12
    # tight at every prior: one of the two (ε, δ)-DP mechanisms reaches it
    assert max(rr, reveal) == pytest.approx(bound, abs=1e-12)
    if delta == 0.0:  # Thm 1.4 is a valid, looser bound on the advantage (pure DP only)
        assert bound <= individual_risk_bound(epsilon, prior) + 1e-12


@settings(max_examples=200, deadline=None)
@given(
    eps=st.lists(st.floats(0, 30, allow_nan=False), min_size=2, max_size=2),
    deltas=st.lists(st.floats(0, 0.99, allow_nan=False), min_size=2, max_size=2),
    prior=st.floats(0.001, 0.999, allow_nan=False),
)
def test_bound_is_monotone_in_epsilon_and_delta(eps, deltas, prior):
    low, high = sorted(eps)
    d_low, d_high = sorted(deltas)
    assert advantage_bound(low, prior, d_low) <= advantage_bound(high, prior, d_low)
    assert advantage_bound(low, prior, d_low) <= advantage_bound(low, prior, d_high)


@settings(max_examples=300, deadline=None)
@given(
    epsilon=st.floats(0, 15, allow_nan=False),
    prior=st.floats(0.01, 0.99, allow_nan=False),
    delta=st.sampled_from([0.0, 1e-6, 1e-3, 0.05, 0.3]),
)
def test_epsilon_lower_bound_inverts_the_bound(epsilon, prior, delta):
    # Exact inverse above the ε = 0 level; 1e-6 covers log's conditioning as 1 − adv → 1e-7.
    bound = advantage_bound(epsilon, prior, delta)
    recovered = epsilon_from_advantage(bound, prior, delta)
    if bound > advantage_bound(0.0, prior, delta) + 1e-9:
        assert recovered == pytest.approx(epsilon, abs=1e-6)
    else:  # within 1e-9 of the trivial advantage: "no claim" or the exact inverse
        assert recovered == 0.0 or recovered == pytest.approx(epsilon, abs=1e-6)
    assert advantage_bound(recovered, prior, delta) == pytest.approx(bound, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    advantage=st.floats(-1, 0.999999, allow_nan=False),
    prior=st.floats(0.01, 0.99, allow_nan=False),
    delta=st.sampled_from([0.0, 1e-3, 0.1]),
)
def test_epsilon_lower_bound_is_the_smallest_epsilon_reaching_the_advantage(
    advantage, prior, delta
):
    eps = epsilon_from_advantage(advantage, prior, delta)
    assert eps >= 0.0
    assert advantage_bound(eps, prior, delta) >= advantage - 1e-9  # reaches it
    if eps > 1e-6:  # and no smaller ε does
        assert advantage_bound(eps * (1 - 1e-6) - 1e-9, prior, delta) < advantage


@settings(max_examples=100, deadline=None)
@given(prior=st.floats(0.01, 0.99), fraction=st.floats(0, 1))
def test_no_epsilon_is_implied_at_or_below_the_trivial_advantage(prior, fraction):
    trivial = abs(2 * prior - 1)
    assert advantage_bound(0.0, prior) == pytest.approx(trivial)
    assert epsilon_from_advantage(fraction * trivial, prior) == 0.0


def test_dp_functions_reject_bad_input():
    with pytest.raises(ValueError, match="epsilon must be >= 0"):
        advantage_bound(-1.0)
    with pytest.raises(ValueError, match="epsilon must be >= 0"):
        individual_risk_bound(np.nan)
    with pytest.raises(ValueError, match="prior"):
        advantage_bound(1.0, prior=1.0)
    with pytest.raises(ValueError, match="prior"):
        individual_risk_bound(1.0, prior=0.0)
    with pytest.raises(ValueError, match=r"advantage must be in \[-1, 1\]"):
        epsilon_from_advantage(1.5)
    with pytest.raises(ValueError, match="advantage"):
        epsilon_from_advantage(np.nan)
    for bad in (-0.1, 1.0, np.nan):
        with pytest.raises(ValueError, match=r"delta must be in \[0, 1\)"):
            advantage_bound(1.0, delta=bad)
        with pytest.raises(ValueError, match=r"delta must be in \[0, 1\)"):
            epsilon_from_advantage(0.5, delta=bad)
    for bad in ("0.1", True, [0.1]):
        with pytest.raises(TypeError, match="delta must be a float"):
            advantage_bound(1.0, delta=bad)
    assert epsilon_from_advantage(1.0) == np.inf
    assert epsilon_from_advantage(1.0, delta=0.2) == np.inf
    assert advantage_bound(np.inf, 0.3, 0.1) == 1.0
    np.testing.assert_allclose(advantage_bound([0.0, 1.0]), [0.0, np.tanh(0.5)])
    np.testing.assert_allclose(epsilon_from_advantage([0.0, np.tanh(0.5)]), [0.0, 1.0])


# --- Def. 1, low-FPR and high-precision metrics ------------------------------------------


def test_membership_advantage_is_twice_accuracy_minus_one():
    assert membership_advantage(Y_TRUE, Y_PRED) == pytest.approx(2 * 0.8 - 1)
    # The papers' −1 convention and booleans give the same answer.
    assert membership_advantage(2 * Y_TRUE - 1, Y_PRED.astype(bool)) == pytest.approx(0.6)
    # At a balanced sample it equals TPR − FPR (MACE §3.1).
    m = np.r_[np.ones(4), np.zeros(4)]
    pred = np.array([1, 1, 1, 0, 1, 0, 0, 0])
    assert membership_advantage(m, pred) == pytest.approx(3 / 4 - 1 / 4)
    with pytest.raises(ValueError, match="y_true must hold membership labels"):
        membership_advantage(["a", "b"], [1, 0])


def brute_force_tpr_at_fpr(m, score, fpr):
    best = 0.0
    for t in np.r_[np.unique(score), np.inf]:
        pred = score >= t
        if pred[m == 0].mean() <= fpr:
            best = max(best, pred[m == 1].mean())
    return best


@pytest.mark.parametrize("fpr", [0.0, 0.01, 0.1, 0.5])
def test_tpr_at_fpr_matches_a_threshold_scan(rng, fpr):
    m = rng.integers(0, 2, 300)
    score = rng.normal(size=300) + m + np.round(rng.normal(size=300), 1) * (rng.random(300) < 0.3)
    assert tpr_at_fpr(m, score, fpr=fpr) == pytest.approx(brute_force_tpr_at_fpr(m, score, fpr))


def test_tpr_at_fpr_errors():
    with pytest.raises(ValueError, match="fpr must be in"):
        tpr_at_fpr([0, 1], [0.1, 0.2], fpr=2)
    with pytest.raises(ValueError, match="only one class"):
        tpr_at_fpr([1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="y_score contains NaN"):
        tpr_at_fpr([0, 1], [np.nan, 0.2])


def test_top_quantile_precision_by_hand():
    m = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    score = np.array([8, 7, 6, 5, 4, 3, 2, 1])
    assert top_quantile_precision(m, score, 0.125) == 1.0  # top 1: the member scored 8
    assert top_quantile_precision(m, score, 0.25) == 0.5  # top 2
    assert top_quantile_precision(m, score, 0.5) == 0.75  # top 4
    assert top_quantile_precision(m, score, 1.0) == 0.5
    # Ties at the cut-off are all admitted: result independent of row order.
    tied = np.array([1.0, 1.0, 0.0, 0.0])
    assert top_quantile_precision([1, 0, 1, 0], tied, 0.25) == 0.5
    with pytest.raises(ValueError, match="q must be in"):
        top_quantile_precision(m, score, 0.0)


# --- Generalized metrics: Eq. 8, Lemma 2, Eq. 20 --------------------------------------------


@pytest.mark.parametrize("prior", [0.01, 0.1, 0.3, 0.5, 0.9])
def test_lemma2_thresholds(prior):
    assert GeneralizedMetric.from_name("accuracy").optimal_threshold(prior) == 0.5
    assert GeneralizedMetric.from_name("am").optimal_threshold(prior) == pytest.approx(prior)
    assert GeneralizedMetric.from_name("tpr").optimal_threshold(prior) == 0.0
    assert GeneralizedMetric.from_name("recall").optimal_threshold(prior) == 0.0
    # PPV and F1 have no closed form (b11 ≠ b01): they need Alg. 3's search.
    assert GeneralizedMetric.from_name("ppv").optimal_threshold(prior) is None
    assert GeneralizedMetric.from_name("f1").optimal_threshold(prior) is None


def test_weighted_accuracy_threshold_follows_elkan():
    # WA with w3 = w2 and w4 = w1 meets Lemma 2's condition: t = w2 / (w1 + w2).
    wa = GeneralizedMetric.from_name("wa", weights=(3.0, 1.0, 1.0, 3.0))
    assert wa.optimal_threshold() == pytest.approx(1 / 4)
    assert GeneralizedMetric.from_name("wa", weights=(1, 2, 3, 4)).optimal_threshold() is None


@pytest.mark.parametrize(
    "name, reference",
    [
        ("accuracy", accuracy_score),
        ("ppv", precision_score),
        ("tpr", recall_score),
        ("tnr", lambda t, p: recall_score(t, p, pos_label=0)),
        ("f1", f1_score),
        ("am", balanced_accuracy_score),
    ],
)
def test_generalized_score_matches_scikit_learn(rng, name, reference):
    m = rng.integers(0, 2, 200)
    pred = np.where(rng.random(200) < 0.7, m, 1 - m)
    assert GeneralizedMetric.from_name(name).score(m, pred) == pytest.approx(reference(m, pred))


def test_eq20_on_a_hand_computed_confusion_matrix():
    # TP_n = 2/10, γ_n = 3/10. At p = 0.3 (the sample's own fraction) Eq. 20 reduces to the
    # confusion matrix itself: TP = .2, FP = .1, FN = .1, TN = .6.
    measure = {
        name: GeneralizedMetric.from_name(name).empirical_measure(Y_TRUE, Y_PRED, prior=0.3)
        for name in ["accuracy", "ppv", "tpr", "tnr", "f1", "am"]
    }
    assert measure["accuracy"] == pytest.approx(0.8)
    assert measure["ppv"] == pytest.approx(2 / 3)
    assert measure["tpr"] == pytest.approx(2 / 3)
    assert measure["tnr"] == pytest.approx(6 / 7)
    assert measure["f1"] == pytest.approx(4 / 6)
    assert measure["am"] == pytest.approx((2 / 3 + 6 / 7) / 2)
    # At p = 0.5 the class totals come from the prior: FN = p − TP = .3,
    # TN = 1 − p − γ + TP = .4, so accuracy = .2 + .4 and TPR = .2 / .5.
    acc = GeneralizedMetric.from_name("accuracy").empirical_measure(Y_TRUE, Y_PRED, prior=0.5)
    tpr = GeneralizedMetric.from_name("tpr").empirical_measure(Y_TRUE, Y_PRED, prior=0.5)
    assert acc == pytest.approx(0.6)
    assert tpr == pytest.approx(0.4)


def test_generalized_metric_errors_and_custom_coefficients():
    with pytest.raises(ValueError, match="metric must be one of"):
        GeneralizedMetric.from_name("auc")
    with pytest.raises(ValueError, match="depends on the prior"):
        GeneralizedMetric.from_name("am").optimal_threshold()
    with pytest.raises(ValueError, match="denominator is 0"):
        GeneralizedMetric.from_name("ppv").score([1, 0], [0, 0])
    with pytest.raises(ValueError, match="Coefficient a11 must be finite"):
        GeneralizedMetric(a11=np.inf)
    # Custom coefficients: accuracy written by hand equals the preset.
    custom = GeneralizedMetric(a11=1, a00=1, b11=1, b10=1, b01=1, b00=1)
    assert custom.score(Y_TRUE, Y_PRED) == pytest.approx(0.8)
    assert "a11=1" in repr(custom)


# --- Scorers ---------------------------------------------------------------------------------


def test_scorers_work_by_name_in_cross_validation(rng):
    X = rng.normal(size=(300, 2))
    m = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    assert set(get_scorer_names()) >= {"membership_advantage", "tpr_at_1pct_fpr"}
    model = LogisticRegression()
    advantage = cross_val_score(model, X, m, cv=3, scoring=get_scorer("membership_advantage"))
    pred = cross_val_predict(model, X, m, cv=3)
    # Equal folds of 100: the mean of per-fold advantages is the pooled advantage exactly.
    assert advantage.mean() == pytest.approx(2 * accuracy_score(m, pred) - 1, abs=1e-12)
    tpr = cross_val_score(model, X, m, cv=3, scoring=get_scorer("tpr_at_1pct_fpr"))
    assert np.all((tpr >= 0) & (tpr <= 1))
    assert get_scorer("roc_auc") is not None  # scikit-learn's names still resolve


def test_scorer_dict_is_multimetric_scoring(rng):
    from sklearn.model_selection import GridSearchCV

    X = rng.normal(size=(300, 2))
    m = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    scoring = {name: get_scorer(name) for name in ("membership_advantage", "tpr_at_1pct_fpr")}
    search = GridSearchCV(
        LogisticRegression(), {"C": [0.01, 1.0]}, scoring=scoring, refit="membership_advantage"
    ).fit(X, m)
    assert {"mean_test_membership_advantage", "mean_test_tpr_at_1pct_fpr"} <= set(
        search.cv_results_
    )
    # What scikit-learn's public API does not allow: our names as bare strings.
    with pytest.raises(ValueError, match="membership_advantage"):
        GridSearchCV(LogisticRegression(), {"C": [1.0]}, scoring="membership_advantage").fit(X, m)


class _FixedAttacker(ClassifierMixin, BaseEstimator):
    """Fixed guesses and scores per row (X[:, 0] is the row index), for hand-computed scorers."""

    def __init__(self, classes, guesses, scores, prior=None, proba_only=False):
        self.classes = classes
        self.guesses = guesses
        self.scores = scores
        self.prior = prior
        self.proba_only = proba_only

    def fit(self, X, y):
        self.classes_ = np.asarray(self.classes)
        if self.prior is not None:
            self.prior_ = self.prior
        return self

    def predict(self, X):
        return np.asarray(self.guesses)[np.asarray(X)[:, 0].astype(int)]

    def _scores(self, X):
        return np.asarray(self.scores)[np.asarray(X)[:, 0].astype(int)]

    @available_if(lambda self: not self.proba_only)
    def decision_function(self, X):
        return self._scores(X)

    @available_if(lambda self: self.proba_only)
    def predict_proba(self, X):
        p = 1 / (1 + np.exp(-self._scores(X)))
        return np.column_stack([1 - p, p])


# Y_TRUE / Y_PRED as strings; member "in" is classes_[1] although "in" < "out".
LABELS_TRUE = np.where(Y_TRUE == 1, "in", "out")
LABELS_PRED = np.where(Y_PRED == 1, "in", "out")
SCORES = np.array([0.9, 0.8, -0.2, 0.7, 0.1, 0.0, -0.1, -0.3, -0.5, -0.9])
ROWS = np.arange(10)[:, None]


def _fixed(prior=None, member="in", proba_only=False):
    classes = ["out", "in"] if member == "in" else ["in", "out"]
    sign = 1 if member == "in" else -1
    attacker = _FixedAttacker(classes, LABELS_PRED, sign * SCORES, prior, proba_only)
    return attacker.fit(ROWS, LABELS_TRUE)


def test_membership_advantage_scorer_by_hand_with_string_labels():
    scorer = get_scorer("membership_advantage")
    # TPR = 2/3, TNR = 6/7 (Y_TRUE, Y_PRED above). No prior_: 2·accuracy − 1 = 0.6.
    assert scorer(_fixed(), ROWS, LABELS_TRUE) == pytest.approx(0.6)
    assert scorer(_fixed(), ROWS, LABELS_TRUE) == membership_advantage(Y_TRUE, Y_PRED)
    # prior_ = 0.1: 2(0.1·2/3 + 0.9·6/7) − 1, as the metric function says.
    expected = 2 * (0.1 * 2 / 3 + 0.9 * 6 / 7) - 1
    assert scorer(_fixed(0.1), ROWS, LABELS_TRUE) == pytest.approx(expected)
    assert scorer(_fixed(0.1), ROWS, LABELS_TRUE) == pytest.approx(
        membership_advantage(Y_TRUE, Y_PRED, prior=0.1)
    )
    # member "out" (classes_ = ["in", "out"]): TPR and TNR swap roles.
    flipped = 2 * (0.1 * 6 / 7 + 0.9 * 2 / 3) - 1
    assert scorer(_fixed(0.1, member="out"), ROWS, LABELS_TRUE) == pytest.approx(flipped)
    # sample_weight: doubling the weight of the missed member (row 2) gives TPR = 2/4.
    w = np.ones(10)
    w[2] = 2.0
    weighted = 2 * (0.1 * 2 / 4 + 0.9 * 6 / 7) - 1
    assert scorer(_fixed(0.1), ROWS, LABELS_TRUE, sample_weight=w) == pytest.approx(weighted)
    with pytest.raises(ValueError, match="not seen in fit"):
        scorer(_fixed(), ROWS, np.where(Y_TRUE == 1, "member", "out"))


def test_tpr_at_fpr_scorers_by_hand_with_string_labels():
    # Members score 0.9, 0.8, -0.2; the top non-member 0.7: at FPR 0, TPR = 2/3.
    for name, fpr in (("tpr_at_1pct_fpr", 0.01), ("tpr_at_0.1pct_fpr", 0.001)):
        scorer = get_scorer(name)
        assert scorer(_fixed(), ROWS, LABELS_TRUE) == pytest.approx(2 / 3)
        assert scorer(_fixed(), ROWS, LABELS_TRUE) == tpr_at_fpr(Y_TRUE, SCORES, fpr=fpr)
        # predict_proba[:, 1] when there is no decision_function: same ranks, same TPR.
        assert scorer(_fixed(proba_only=True), ROWS, LABELS_TRUE) == pytest.approx(2 / 3)
        # member "out": the scores are P("out"); the lowest-scoring "out" row (-0.9 → 0.9)
        # beats every "in" row (the top "in" is -0.2 → 0.2), so 1/7 at FPR 0 and more.
        flipped = tpr_at_fpr(1 - Y_TRUE, -SCORES, fpr=fpr)
        assert scorer(_fixed(member="out"), ROWS, LABELS_TRUE) == pytest.approx(flipped)
    with pytest.raises(ValueError, match="sample_weight"):
        get_scorer("tpr_at_1pct_fpr")(_fixed(), ROWS, LABELS_TRUE, sample_weight=np.ones(10))


def test_generalized_scorers_by_hand_with_string_labels():
    # At the sample's own prior 0.3 Eq. 20 is the confusion matrix: F1 = 4/6, PPV = 2/3.
    assert get_scorer("generalized_f1")(_fixed(), ROWS, LABELS_TRUE) == pytest.approx(4 / 6)
    assert get_scorer("generalized_ppv")(_fixed(0.3), ROWS, LABELS_TRUE) == pytest.approx(2 / 3)
    # At prior_ 0.1: TP = 0.1·2/3, FP = 0.9·1/7, FN = 0.1·1/3 (members and non-members
    # reweighted to the prior); F1 = 2TP / (2TP + FP + FN).
    tp, fp, fn = 0.1 * 2 / 3, 0.9 / 7, 0.1 / 3
    f1 = 2 * tp / (2 * tp + fp + fn)
    assert get_scorer("generalized_f1")(_fixed(0.1), ROWS, LABELS_TRUE) == pytest.approx(f1)
    metric = GeneralizedMetric.from_name("f1")
    assert metric.prior_weighted_measure(Y_TRUE, Y_PRED, 0.1) == pytest.approx(f1)
    # An explicit prior wins over prior_; every preset name is reachable.
    scorer = generalized_metric_scorer("f1", prior=0.1)
    assert scorer(_fixed(0.5), ROWS, LABELS_TRUE) == pytest.approx(f1)
    assert get_scorer("generalized_am")(_fixed(0.1), ROWS, LABELS_TRUE) == pytest.approx(
        (2 / 3 + 6 / 7) / 2
    )
    assert get_scorer("generalized_recall")(_fixed(0.1), ROWS, LABELS_TRUE) == pytest.approx(2 / 3)
    # member "out": PPV of guessing "out" is 6/7 at the sample's prior (7 "out" rows, 0.7).
    ppv_out = get_scorer("generalized_ppv")(_fixed(member="out"), ROWS, LABELS_TRUE)
    assert ppv_out == pytest.approx(6 / 7)
    with pytest.raises(ValueError, match="metric must be one of"):
        generalized_metric_scorer("auc")


def test_scorer_names():
    from sklearn.metrics import get_scorer_names as sklearn_names

    names = get_scorer_names()
    assert names == sorted(names)
    ours = {"membership_advantage", "tpr_at_1pct_fpr", "tpr_at_0.1pct_fpr", "generalized_f1"}
    assert ours <= set(names) and set(sklearn_names()) <= set(names)
    for name in names:
        assert callable(get_scorer(name))
    assert get_scorer("membership_advantage") is not get_scorer("membership_advantage")
