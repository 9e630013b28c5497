"""LiRA at few reference models: the fixed variance by default below 64 (issue #29, item 4).

The planted problem of ``tests/_lira_planted.py`` has the same within-record noise for every
record (``noise = 1``), so the global variance is the truth and a per-record variance from 2
values is the weak part of the attack. Offline with K models, the OUT mean of a record rests
on K/2 values; with the variance known, the test on ``phi − mu_out_hat`` has noise
``sqrt(1 + 2/K)`` and TPR ``Phi(delta / sqrt(1 + 2/K) − z_{1−fpr})`` (0.244 at K = 4 and 1 %
FPR): the closed form the fixed variance must reach.
"""

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.tree import DecisionTreeClassifier

from sklearn_mace.attacks import LiRAAttack, ShadowModels, logit_confidence
from sklearn_mace.attacks._lira import FIXED_VARIANCE_BELOW, resolution_bound
from sklearn_mace.metrics import tpr_at_fpr
from tests._lira_planted import PlantedModel, planted_problem, planted_target

N_RECORDS, FPR, N_TARGETS = 4_000, 0.01, 5


@pytest.fixture(scope="module")
def planted():
    records, member, target, _ = planted_problem(N_RECORDS, seed=3)
    return records, member, target


def _mean_tpr(attack, records, difficulty, seed):
    tprs = []
    for k in range(N_TARGETS):
        target, member, _ = planted_target(difficulty, records, seed=seed + k)
        attack.target = target  # same reference models, another target
        tprs.append(tpr_at_fpr(member, attack.decision_function(records), fpr=FPR))
    return float(np.mean(tprs))


def test_auto_fixes_the_variance_below_64_models(planted):
    records, member, target = planted
    template = PlantedModel(target.difficulty)
    attack = LiRAAttack(target, template, n_reference_models=4, random_state=0).fit(records, member)
    assert attack.fix_variance == "auto" and attack.fix_variance_ is True
    assert FIXED_VARIANCE_BELOW == 64
    forced = LiRAAttack(target, template, n_reference_models=4, fix_variance=False, random_state=0)
    assert forced.fit(records, member).fix_variance_ is False


def test_auto_keeps_per_record_variances_from_64_models():
    # 64 cheap reference models (depth-1 trees) on 128 records: auto = per-record
    rng = np.random.default_rng(0)
    X = rng.normal(size=(128, 2))
    records = np.column_stack([X, X[:, 0] > 0])
    member = np.arange(128) < 64
    target = DecisionTreeClassifier(max_depth=1).fit(X[member], records[member, -1])
    shadows = ShadowModels(
        DecisionTreeClassifier(max_depth=1), n_reference_models=64, split="balanced", random_state=0
    ).fit(X, records[:, -1])
    auto = LiRAAttack(target, reference_models=shadows).fit(records, member)
    per_record = LiRAAttack(target, reference_models=shadows, fix_variance=False)
    assert auto.fix_variance_ is False
    np.testing.assert_array_equal(
        auto.score_samples(records), per_record.fit(records, member).score_samples(records)
    )


def test_fixed_variance_is_the_pooled_within_record_variance(planted):
    # truth: noise^2 = 1 on both sides. 4 models: 2 values per record and side, 1 degree of
    # freedom each, 4 000 in all: standard error of the pooled variance sqrt(2/4000) = 0.022
    records, member, target = planted
    attack = LiRAAttack(
        target, PlantedModel(target.difficulty), n_reference_models=4, random_state=0
    )
    attack.fit(records, member)
    assert attack.var_in_ == pytest.approx(1.0, abs=0.1)
    assert attack.var_out_ == pytest.approx(1.0, abs=0.1)
    # the same number by hand from the shadows' phi
    phi = np.stack([logit_confidence(m, records) for m in attack.reference_models_.estimators_])
    inside = attack.reference_models_.membership_.reshape(4, -1).astype(bool)
    deviations = [phi[inside[:, i], i] - phi[inside[:, i], i].mean() for i in range(len(records))]
    by_hand = sum(float(d @ d) for d in deviations) / sum(len(d) - 1 for d in deviations)
    assert attack.var_in_ == pytest.approx(by_hand, rel=1e-10)


@pytest.mark.parametrize("fix_variance", ["auto", False])
def test_offline_at_four_models_reaches_the_closed_form_with_the_fixed_variance(
    planted, fix_variance
):
    # closed form 0.244 (module doc). Tolerance 0.04: the TPR at 1 % FPR of 2 000 members
    # averaged over 5 targets has a standard deviation of about 0.01 (binomial, plus the
    # cut's own noise from 20 non-members above it).
    records, member, target = planted
    attack = LiRAAttack(
        target,
        PlantedModel(target.difficulty),
        n_reference_models=4,
        online=False,
        fix_variance=fix_variance,
        random_state=0,
    ).fit(records, member)
    tpr = _mean_tpr(attack, records, target.difficulty, seed=20)
    closed_form = norm.cdf(2 / np.sqrt(1 + 2 / 4) - norm.ppf(1 - FPR))
    if fix_variance == "auto":
        assert tpr == pytest.approx(closed_form, abs=0.04)
    else:  # a variance from 2 values per record loses most of it
        assert tpr < closed_form - 0.08


def test_two_reference_models_use_the_variance_of_all_values(planted):
    # one IN and one OUT value per record: no within-record variance; the fixed variance is
    # that of every value of a side, as Carlini et al.'s code (np.std(dat_in)). Truth: the
    # difficulties' spread^2 + noise^2 = 9 + 1 = 10 on both sides (4 000 values, about 2 %).
    records, member, target = planted
    pool_shadows = ShadowModels(
        PlantedModel(target.difficulty), n_reference_models=2, split="balanced", random_state=0
    ).fit(records[:, :-1], records[:, -1])
    attack = LiRAAttack(target, reference_models=pool_shadows).fit(records, member)
    assert attack.fix_variance_ is True
    assert attack.var_in_ == pytest.approx(10.0, rel=0.1)
    assert attack.var_out_ == pytest.approx(10.0, rel=0.1)
    scores = attack.decision_function(records)
    assert np.isfinite(scores).all()
    with pytest.raises(ValueError, match="fix_variance=True or 'auto'"):
        LiRAAttack(target, reference_models=pool_shadows, fix_variance=False).fit(records, member)


def test_fix_variance_is_validated(planted):
    records, member, target = planted
    with pytest.raises(ValueError, match="fix_variance"):
        LiRAAttack(target, fix_variance="always").fit(records, member)


def _pooled(phi, trained):
    """Pooled within-record variance of the values ``trained`` marks, by hand."""
    deviations = [phi[trained[:, i], i] - phi[trained[:, i], i].mean() for i in range(phi.shape[1])]
    return sum(float(d @ d) for d in deviations) / sum(len(d) - 1 for d in deviations)


@pytest.mark.parametrize("fix_variance", [True, False])
def test_scores_match_a_direct_computation(fix_variance):
    # reference: the Gaussians fitted by hand from the shadows' own outputs, with the pooled
    # variance (fixed) or each record's own (per-record). tests/attacks/test_lira.py's two direct
    # computations assume per-record variances and need fix_variance=False since the default
    # became "auto".
    records, member, target, _ = planted_problem(400, seed=4)
    attack = LiRAAttack(
        target,
        PlantedModel(target.difficulty),
        n_reference_models=8,
        fix_variance=fix_variance,
        random_state=0,
    ).fit(records, member)
    trained = attack.reference_models_.membership_.reshape(8, -1).astype(bool)
    phi = np.stack([model.logit(records) for model in attack.reference_models_.estimators_])
    var_in, var_out = _pooled(phi, trained), _pooled(phi, ~trained)
    phi_target = target.logit(records)
    expected = []
    for i in range(len(records)):
        inside, outside = phi[trained[:, i], i], phi[~trained[:, i], i]
        s_in = np.sqrt(var_in) if fix_variance else inside.std(ddof=1)
        s_out = np.sqrt(var_out) if fix_variance else outside.std(ddof=1)
        expected.append(
            norm.logpdf(phi_target[i], inside.mean(), s_in)
            - norm.logpdf(phi_target[i], outside.mean(), s_out)
        )
    np.testing.assert_allclose(attack.score_samples(records), expected, rtol=1e-9)


@pytest.mark.parametrize("m", [10, 50])
def test_resolution_bound_of_stepped_probabilities(m):
    # probabilities k/m (a forest of m trees): saturated 0 and 1 become half a step,
    # logit(1 - 1/(2m)) = log(2m - 1)
    p = np.arange(m + 1) / m
    clipped = np.clip(p, np.finfo(float).eps, 1 - np.finfo(float).eps)
    phi = np.log(clipped) - np.log(np.clip(1 - p, np.finfo(float).eps, None))
    assert resolution_bound(phi) == pytest.approx(np.log(2 * m - 1), rel=1e-9)
    # continuous outputs that never saturate: no bound below the epsilon clip
    assert resolution_bound(np.linspace(-30, 30, 7)) == pytest.approx(-np.log(np.finfo(float).eps))


def test_lira_reads_a_forest_at_its_resolution():
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    records = np.column_stack([X, y])
    member = np.arange(400) < 200
    forest = RandomForestClassifier(20, random_state=0).fit(X[member], y[member])
    attack = LiRAAttack(forest, n_reference_models=4, random_state=0).fit(records, member)
    assert attack.phi_bound_ == pytest.approx(np.log(2 * 20 - 1))
    assert np.isfinite(attack.score_samples(records)).all()
