"""audit_sample_size against simulation: at the planned size the audit certifies its target.

The planner's power is an exact sum over the two binomial error counts; these tests run the
audits themselves on data drawn with the assumed error rates (randomized response) and
compare. Tolerances: over ``R`` simulated audits the certified fraction has standard
deviation ``sqrt(q(1 − q)/R)`` around the true power ``q``; the checks allow 3.3 of them
(a correct planner fails one with probability below 0.001).
"""

import numpy as np
import pytest

from sklearn_mace import KDEAdvantageEstimator
from sklearn_mace.metrics import audit_epsilon, audit_sample_size, epsilon_from_advantage


def slack(power, runs):
    return 3.3 * np.sqrt(power * (1 - power) / runs)


def rr_scores(rng, n_members, n_nonmembers, error_rate):
    """Binary attack scores with false-positive and false-negative rate ``error_rate``."""
    members = (rng.random(n_members) >= error_rate).astype(float)
    nonmembers = (rng.random(n_nonmembers) < error_rate).astype(float)
    return members, nonmembers


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": 1.0, "at_least": 0.5},
        {"epsilon": 2.0, "delta": 1e-3, "at_least": 1.0},
        {"epsilon": 0.5, "nonmember_ratio": 3.0, "power": 0.9},
    ],
)
def test_epsilon_audit_certifies_the_target_as_often_as_planned(kwargs):
    plan = audit_sample_size(**kwargs)
    rng, runs, certified = np.random.default_rng(0), 1500, 0
    for _ in range(runs):
        members, nonmembers = rr_scores(rng, plan.n_members, plan.n_nonmembers, plan.error_rate)
        audit = audit_epsilon(members, nonmembers, threshold=0.5, delta=plan.delta)
        certified += audit.epsilon_lower_bound > plan.at_least
    rate = certified / runs
    assert rate >= plan.requested_power - slack(plan.requested_power, runs), rate
    # the planner's power is the exact probability: the simulation meets it to sampling error
    assert abs(rate - plan.power) <= slack(plan.power, runs), (rate, plan.power)


def test_the_size_is_the_smallest_that_reaches_the_power():
    plan = audit_sample_size(epsilon=1.0, at_least=0.5)
    assert plan.power >= plan.requested_power
    with pytest.raises(ValueError, match="max_records"):
        audit_sample_size(epsilon=1.0, at_least=0.5, max_records=plan.n_members - 1)


def test_advantage_audit_of_the_estimator_certifies_as_planned():
    # KDEAdvantageEstimator on randomized response (a binary query): its cross-fitted
    # histogram classifier learns the rule, and its bound certifies ε > 0.5 as planned
    plan = audit_sample_size(epsilon=1.5, at_least=0.5, audit="advantage")
    runs, certified = 120, 0
    m = np.r_[np.ones(plan.n_members, int), np.zeros(plan.n_nonmembers, int)]
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        members, nonmembers = rr_scores(rng, plan.n_members, plan.n_nonmembers, plan.error_rate)
        est = KDEAdvantageEstimator(discrete=True, random_state=seed).fit(
            np.r_[members, nonmembers][:, None], m
        )
        certified += est.epsilon_lower_bound_ > plan.at_least
    assert certified / runs >= plan.requested_power - slack(plan.requested_power, runs)


def test_sizes_move_the_right_way():
    base = audit_sample_size(epsilon=1.0, at_least=0.5).n_members
    assert audit_sample_size(epsilon=2.0, at_least=0.5).n_members < base  # larger leak
    assert audit_sample_size(epsilon=1.0, at_least=0.8).n_members > base  # nearer target
    assert audit_sample_size(epsilon=1.0, at_least=0.5, confidence=0.99).n_members > base
    assert audit_sample_size(epsilon=1.0, at_least=0.5, power=0.95).n_members > base
    assert audit_sample_size(epsilon=1.0, at_least=0.5, nonmember_ratio=4.0).n_members < base


def test_advantage_and_epsilon_scales_agree_at_prior_one_half():
    # randomized response at ε has advantage tanh(ε/2): the same error rate either way
    by_eps = audit_sample_size(epsilon=1.0, at_least=0.5, audit="advantage")
    by_adv = audit_sample_size(
        advantage=float(np.tanh(0.5)),
        at_least=float(np.tanh(0.25)),
        audit="advantage",
    )
    assert by_eps.error_rate == pytest.approx(by_adv.error_rate)
    assert by_eps.n_members == by_adv.n_members
    assert epsilon_from_advantage(np.tanh(0.25)) == pytest.approx(0.5)


def test_summary_names_the_claim_the_assumption_and_the_sizes():
    plan = audit_sample_size(epsilon=1.0, at_least=0.5, delta=1e-5)
    line = plan.summary()
    assert "ε > 0.5" in line and "ε = 1" in line and "δ = 1e-05" in line
    assert f"{plan.n_members} members" in line and "80 %" in line and "\n" not in line


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "exactly one"),
        ({"epsilon": 1.0, "advantage": 0.3}, "exactly one"),
        ({"epsilon": 1.0, "at_least": 1.0}, "at_least"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"advantage": 1.5}, "advantage"),
        ({"epsilon": 1.0, "power": 1.0}, "power"),
        ({"epsilon": 1.0, "confidence": 0.0}, "confidence"),
        ({"epsilon": 1.0, "audit": "bound"}, "audit"),
        ({"epsilon": 1.0, "nonmember_ratio": 0}, "nonmember_ratio"),
        ({"epsilon": 1.0, "audit": "advantage", "prior": 0.1}, "prior 0.1"),
        ({"epsilon": 0.01, "max_records": 1000}, "max_records"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        audit_sample_size(**kwargs)
