"""Displays: the data they draw is checked against hand-computed ground truth."""

import matplotlib
import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression

from sklearn_mace.metrics import (
    AdvantageDisplay,
    IndividualRiskDisplay,
    MembershipRocDisplay,
)

matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ----------------------------------------------------------------------------- ROC
def test_roc_log_axis_and_marked_low_fpr_point():
    # 100 non-members scored 0..99, 10 members scored 95.5..104.5: a threshold just above
    # 99 flags no non-member and the 6 members 99.5..104.5 (TPR 0.6 at FPR 0); flagging one
    # non-member (99, FPR 0.01) admits member 98.5 too: TPR 0.7.
    non_members = np.arange(100.0)
    members = np.arange(95.5, 105.5)
    y = np.r_[np.zeros(100), np.ones(10)]
    score = np.r_[non_members, members]
    disp = MembershipRocDisplay.from_predictions(y, score, target_fpr=0.01, name="toy")
    assert disp.tpr_at_target == pytest.approx(0.7)
    assert disp.ax_.get_xscale() == "log"
    x, y_point = disp.point_.get_data()
    assert x[0] == 0.01 and y_point[0] == pytest.approx(0.7)
    assert MembershipRocDisplay.from_predictions(
        y, score, target_fpr=0.0, plot=False
    ).tpr_at_target == pytest.approx(0.6)
    # AUC by counting pairs: member 95.5+j beats 96+j non-members (capped at 100)
    wins = sum(min(96 + j, 100) for j in range(10))
    assert disp.roc_auc == pytest.approx(wins / 1000)
    assert "AUC = " in disp.line_.get_label()
    # FPR = 0 points are drawn at the left end of the log axis, not dropped
    assert np.all(disp.line_.get_xdata() > 0)
    assert disp.ax_.get_xlim()[0] <= 0.005
    assert disp.chance_ is not None and disp.figure_ is disp.ax_.figure


def test_roc_several_attacks_share_one_axes_and_one_chance_line():
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(200), np.ones(200)]
    _, ax = plt.subplots()
    d1 = MembershipRocDisplay.from_predictions(y, rng.normal(y), ax=ax, name="a")
    d2 = MembershipRocDisplay.from_predictions(y, rng.normal(2 * y), ax=ax, name="b")
    assert d1.ax_ is d2.ax_ is ax
    assert d2.chance_ is None
    assert [line.get_label() for line in ax.get_lines()].count("random guess") == 1


def test_roc_from_estimator_uses_predict_proba_of_class_1():
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(0, 1, (100, 1)), rng.normal(1.5, 1, (100, 1))]
    y = np.r_[np.zeros(100), np.ones(100)]
    clf = LogisticRegression().fit(X, y)
    disp = MembershipRocDisplay.from_estimator(clf, X, y)
    ref = MembershipRocDisplay.from_predictions(y, clf.predict_proba(X)[:, 1], plot=False)
    np.testing.assert_array_equal(disp.tpr, ref.tpr)
    assert disp.name == "LogisticRegression"


def test_roc_from_estimator_scores_the_attackers_member_label():
    # classes_[1] is the member whatever the labels: strings with member_label, or the
    # smaller label 0 named as the member (classes_ = [1, 0]); the curve is the same.
    from sklearn_mace import BayesOptimalMIA

    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(0, 1, (100, 1)), rng.normal(1.5, 1, (100, 1))]
    m = np.r_[np.zeros(100, int), np.ones(100, int)]
    ref = MembershipRocDisplay.from_estimator(BayesOptimalMIA(device="cpu").fit(X, m), X, m)
    labels = np.where(m == 1, "in", "out")
    named = BayesOptimalMIA(device="cpu", member_label="in").fit(X, labels)
    disp = MembershipRocDisplay.from_estimator(named, X, labels, plot=False)
    np.testing.assert_array_equal(disp.tpr, ref.tpr)
    assert disp.roc_auc == pytest.approx(ref.roc_auc) and ref.roc_auc > 0.8
    zero = BayesOptimalMIA(device="cpu", member_label=0).fit(X, 1 - m)
    disp = MembershipRocDisplay.from_estimator(zero, X, 1 - m, plot=False)
    np.testing.assert_array_equal(disp.tpr, ref.tpr)


def test_roc_rejects_single_class():
    with pytest.raises(ValueError, match="only one class"):
        MembershipRocDisplay.from_predictions([1, 1, 1], [0.1, 0.2, 0.3])


# ----------------------------------------------------------------------------- risk
def test_risk_ranked_with_intervals_groups_and_top_labels():
    risk = np.array([0.1, 0.9, 0.5, 0.7, 0.2])
    lower, upper = risk - 0.05, np.minimum(risk + 0.05, 1.0)
    groups = np.array(["member", "member", "non-member", "member", "non-member"])
    disp = IndividualRiskDisplay.from_predictions(
        risk, lower=lower, upper=upper, groups=groups, record_ids=list("abcde"), top_k=2
    )
    assert disp.order_.tolist() == [1, 3, 2, 4, 0]
    assert disp.top_text_.get_text() == "top 2: b, d"  # the two most exposed, in order
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert {"member", "non-member", "top 2", "confidence interval"} <= set(legend)
    # the member scatter holds exactly the member risks at their ranks
    member_points = next(c for c in disp.ax_.collections if c.get_label() == "member")
    np.testing.assert_allclose(member_points.get_offsets(), [[1, 0.9], [2, 0.7], [5, 0.1]])


def _group_colours(disp, groups):
    from matplotlib.colors import to_hex

    return {
        c.get_label(): to_hex(c.get_facecolor()[0])
        for c in disp.ax_.collections
        if c.get_label() in groups
    }


def test_risk_colour_of_a_group_does_not_depend_on_which_group_is_most_exposed():
    """Two releases whose most exposed record is in different classes colour each class
    alike (the colour used to follow the order of first appearance in the ranking)."""
    groups = np.array(["benign", "malignant", "benign", "malignant"])
    first = IndividualRiskDisplay.from_predictions([0.9, 0.1, 0.5, 0.3], groups=groups)
    second = IndividualRiskDisplay.from_predictions([0.1, 0.9, 0.3, 0.5], groups=groups)
    colours = _group_colours(first, {"benign", "malignant"})
    assert colours == _group_colours(second, {"benign", "malignant"})
    assert colours["benign"] != colours["malignant"]
    # a release with no record of the first class: the other keeps its colour when the
    # caller passes every class
    only = IndividualRiskDisplay.from_predictions(
        [0.4, 0.2], groups=["malignant", "malignant"], group_order=["benign", "malignant"]
    )
    assert _group_colours(only, {"malignant"}) == {"malignant": colours["malignant"]}
    with pytest.raises(ValueError, match="group_order lacks"):
        IndividualRiskDisplay.from_predictions([0.4], groups=["x"], group_order=["benign"])


def test_risk_dots_can_say_what_they_are():
    disp = IndividualRiskDisplay.from_predictions([0.4, 0.2], label="member called a member")
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert "member called a member" in legend and "record" not in legend


def test_risk_from_estimator_calls_individual_risk_with_interval():
    class FixedRisk:
        def individual_risk(self, X, return_interval=False):
            r = np.asarray(X, dtype=float)[:, 0]
            return (r, r / 2, (1 + r) / 2) if return_interval else r

    disp = IndividualRiskDisplay.from_estimator(FixedRisk(), [[0.3], [0.6]])
    np.testing.assert_allclose(disp.lower, [0.15, 0.3])
    assert disp.order_.tolist() == [1, 0] and disp.name == "FixedRisk"
    with pytest.raises(TypeError, match="individual_risk"):
        IndividualRiskDisplay.from_estimator(LogisticRegression(), [[0.3]])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(risk=[0.2, np.nan]), "NaN"),
        (dict(risk=[0.2, 1.7]), r"risk must be in \[0, 1\]"),  # was drawn off the axis
        (dict(risk=[0.2, 0.4], lower=[0.1, 0.1]), "both lower and upper"),
        (dict(risk=[0.2, 0.4], lower=[0.3, 0.1], upper=[0.5, 0.5]), "contain its estimate"),
        (dict(risk=[0.2, 0.4], groups=["a"]), "groups has 1 entries"),
    ],
)
def test_risk_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        IndividualRiskDisplay.from_predictions(**kwargs)


# ----------------------------------------------------------------------------- advantage
def test_advantage_dp_bound_line_is_tanh_half_epsilon():
    disp = AdvantageDisplay.from_predictions(
        [1000, 100, 10],
        [0.3, 0.2, 0.1],
        lower=[0.25, 0.1, 0.0],
        upper=[0.35, 0.3, 0.2],
        param_name="synthetic rows",
        epsilon=1.0,
        log_x=True,
    )
    # MACE Thm 1.4 at p = 0.5: tanh(ε/2); 0.46212 for ε = 1 (REFERENCE.md)
    assert disp.bound_line_.get_ydata()[0] == pytest.approx(np.tanh(0.5))
    assert disp.bound_ == pytest.approx(0.46212, abs=1e-5)
    # the curve is drawn in parameter order
    np.testing.assert_array_equal(disp.line_.get_xdata(), [10, 100, 1000])
    np.testing.assert_array_equal(disp.line_.get_ydata(), [0.1, 0.2, 0.3])
    assert disp.ax_.get_xscale() == "log" and disp.ax_.get_xlabel() == "synthetic rows"


def test_advantage_bound_at_prior_and_trivial_baseline():
    # the advantage bound 1 − 2·min(p, 1 − p, 1/(1 + e^ε)) is the trivial 0.8 at ε = 1 (odds
    # 9 move by at most e) and 1 − 2/(1 + e³) = tanh(3/2) at ε = 3
    assert AdvantageDisplay.from_predictions(
        [1, 2], [0.8, 0.85], epsilon=1.0, prior=0.9, plot=False
    ).bound_ == pytest.approx(0.8)
    disp = AdvantageDisplay.from_predictions([1, 2], [0.8, 0.85], epsilon=3.0, prior=0.9)
    assert disp.bound_ == pytest.approx(np.tanh(1.5))
    y_lines = sorted(line.get_ydata()[0] for line in disp.ax_.get_lines()[1:])
    assert y_lines == pytest.approx(sorted([0.8, np.tanh(1.5)]))


class _AdvantageIsParameter(BaseEstimator):
    """Stand-in advantage estimator whose advantage and interval are known in advance."""

    def __init__(self, bandwidth=1.0):
        self.bandwidth = bandwidth

    def fit(self, X, y):
        self.advantage_estimate_ = 1.0 / (1.0 + self.bandwidth)
        self.advantage_estimate_interval_ = (
            self.advantage_estimate_ - 0.1,
            self.advantage_estimate_ + 0.1,
        )
        self.prior_ = 0.5
        return self


def test_advantage_from_estimator_refits_clones_per_value():
    est = _AdvantageIsParameter(bandwidth=7.0)
    disp = AdvantageDisplay.from_estimator(
        est,
        np.zeros((4, 1)),
        [0, 1, 0, 1],
        param_name="bandwidth",
        param_range=[0.5, 1, 3],
        epsilon=2.0,
    )
    np.testing.assert_allclose(disp.advantage, [2 / 3, 0.5, 0.25])
    np.testing.assert_allclose(disp.upper - disp.lower, 0.2)
    assert est.bandwidth == 7.0 and not hasattr(est, "advantage_estimate_")
    assert disp.bound_ == pytest.approx(np.tanh(1.0))  # ε = 2 → 0.762 (MACE App. G)
    with pytest.raises(ValueError, match="not a parameter"):
        AdvantageDisplay.from_estimator(est, None, None, param_name="nope", param_range=[1])


class CertifiedStandIn(_AdvantageIsParameter):
    """Also has a certified lower bound, below its estimate."""

    def fit(self, X, y):
        super().fit(X, y)
        self.advantage_lower_bound_ = self.advantage_estimate_ / 2
        return self


def test_advantage_legend_says_estimate_or_certified_bound():
    args = (np.zeros((4, 1)), [0, 1, 0, 1])
    options = dict(param_name="bandwidth", param_range=[1, 3])
    estimate = AdvantageDisplay.from_estimator(CertifiedStandIn(), *args, **options)
    assert estimate.line_.get_label() == "CertifiedStandIn: estimate (advantage_estimate_)"
    certified = AdvantageDisplay.from_estimator(
        CertifiedStandIn(), *args, quantity="certified", name="KDE", **options
    )
    assert certified.line_.get_label() == "KDE: certified lower bound (advantage_lower_bound_)"
    np.testing.assert_allclose(certified.advantage, [0.25, 0.125])
    assert certified.lower is None  # a one-sided bound has no band
    with pytest.raises(ValueError, match="quantity"):
        AdvantageDisplay.from_estimator(CertifiedStandIn(), *args, quantity="u", **options)
    with pytest.raises(AttributeError, match="advantage_lower_bound_"):
        AdvantageDisplay.from_estimator(
            _AdvantageIsParameter(), *args, quantity="certified", **options
        )


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (([1, 2], [0.1]), {}, "same non-zero length"),
        (([1, 2], [0.1, 1.5]), {}, r"in \[-1, 1\]"),
        (([1, 2], [0.1, 0.2]), dict(epsilon=-1.0), "epsilon"),
        (([1, 2], [0.1, 0.2]), dict(prior=1.5), "prior"),  # even without epsilon
        (([1, 2], [0.1, 0.2]), dict(lower=[0, 0]), "both lower and upper"),
    ],
)
def test_advantage_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        AdvantageDisplay.from_predictions(*args, **kwargs)


def test_plot_does_not_need_matplotlib_until_drawn():
    disp = MembershipRocDisplay.from_predictions([0, 1], [0.2, 0.8], plot=False)
    assert not hasattr(disp, "ax_")


# ----------------------------------------------------------------------------- real estimators
def _two_gaussians(n=2000, shift=1.0, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.r_[rng.normal(shift, 1, (n, 1)), rng.normal(0, 1, (n, 1))]
    return Q, np.r_[np.ones(n), np.zeros(n)]


def test_risk_display_from_bayes_optimal_mia_matches_the_true_risk():
    from sklearn_mace import BayesOptimalMIA

    Q, m = _two_gaussians()
    mia = BayesOptimalMIA(device="cpu").fit(Q, m)
    grid = np.linspace(-1.5, 2.5, 41).reshape(-1, 1)
    disp = IndividualRiskDisplay.from_estimator(mia, grid)
    # N(1, 1) vs N(0, 1) at p = 0.5: f(x) = tanh((x − 1/2) / 2), so the risk is |f|
    truth = np.abs(np.tanh((grid[:, 0] - 0.5) / 2))
    inside = (disp.lower <= truth) & (truth <= disp.upper)
    assert inside.mean() >= 0.9  # pointwise 95 % intervals (the KDE bias is not covered)
    assert disp.order_[0] in (0, 40)  # the most exposed records are the extreme ones
    assert np.argmin(disp.risk) == 20  # x = 1/2, where both densities are equal


def test_advantage_display_from_kde_advantage_estimator_over_bandwidth():
    from sklearn_mace import KDEAdvantageEstimator

    Q, m = _two_gaussians()
    bandwidths = np.array([0.1, 0.3, 1.0])
    disp = AdvantageDisplay.from_estimator(
        KDEAdvantageEstimator(device="cpu", random_state=0),
        Q,
        m,
        param_name="bandwidth",
        param_range=bandwidths,
        epsilon=1.0,
    )
    # a Gaussian KDE with bandwidth h of N(μ, 1) data estimates N(μ, 1 + h²), so U_N tends to
    # the total variation 2Φ(1 / (2·sqrt(1 + h²))) − 1 of the smoothed pair: 0.382, 0.368,
    # 0.276 here (h → 0: 2Φ(1/2) − 1 = 0.383, REFERENCE.md); the McDiarmid interval covers it
    from scipy.stats import norm

    smoothed_truth = 2 * norm.cdf(0.5 / np.sqrt(1 + bandwidths**2)) - 1
    assert np.all((disp.lower <= smoothed_truth) & (smoothed_truth <= disp.upper))
    assert disp.prior == pytest.approx(0.5)  # read from the fitted prior_
    assert disp.bound_ == pytest.approx(np.tanh(0.5))
