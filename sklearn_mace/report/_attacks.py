"""The battery's analyses, as thin adapters around the library's estimators.

Every attack is a query transformer of :mod:`sklearn_mace.queries` built on the synthetic
and reference rows (the attacker's view) and fitted on the target records without their
labels (MC's median radius is set on them, as in the reference implementation); its one
column is the targets' membership score; MACE's estimator is fitted on the
nearest-synthetic distance of the targets with their membership labels (the auditor's view)
and scores every target with densities fitted without it (cross-fitting).

Whatever made the scores, :func:`certify_scores` turns them into a certified ε lower bound
with :func:`~sklearn_mace.metrics.audit_epsilon`: the claim rests on how the scores separate
members from non-members, never on a plug-in estimate.
"""

import numpy as np

from ..estimation import KDEAdvantageEstimator
from ..metrics import audit_epsilon, epsilon_from_advantage
from ..queries import DOMIASQuery, GANLeaksQuery, MonteCarloQuery, NearestSyntheticDistance

__all__ = ["ATTACKS", "certify_scores", "mace_nearest_distance", "nearest_distance"]

# name -> query factory (synthetic, reference, random_state) -> unfitted one-column query.
# Each is the reference definition (DOMIAS §4, domias 0.0.5): MC's ε² is the median over the
# targets of the squared nearest-synthetic distance, GAN-leaks CAL the log of
# exp(−d²_syn + d²_ref); tests/test_baselines.py pins both against those formulas.
ATTACKS = {
    "DOMIAS (KDE, cross-validated bandwidth)": lambda synthetic, reference, random_state: (
        DOMIASQuery(synthetic, reference, bandwidth="cv", random_state=random_state)
    ),
    "MC (Hilprecht)": lambda synthetic, reference, random_state: MonteCarloQuery(
        synthetic, weighting="count", radius="median"
    ),
    "GAN-leaks CAL": lambda synthetic, reference, random_state: GANLeaksQuery(synthetic, reference),
}


def attack_scores(make_attack, synthetic, reference, targets, random_state):
    """Membership scores of the targets (larger = member) by an attack on synthetic data.

    ``make_attack(synthetic, reference, random_state)`` builds the query; it is fitted on the
    targets (no labels) and its column is the score. The cost is linear in the synthetic
    rows for MC and GAN-leaks CAL (nearest-neighbour passes from the targets only).
    """
    query = make_attack(synthetic, reference, random_state)
    return query.fit_transform(targets)[:, 0]


def nearest_distance(targets, synthetic):
    """MACE Eq. 2: Euclidean distance from each target to its nearest synthetic row."""
    return NearestSyntheticDistance(synthetic).fit_transform(targets)[:, 0]


def certify_scores(m, score, *, prior, delta, confidence, random_state):
    """Certified ε (and advantage at ``prior``) of one attack's scores on the targets.

    :func:`~sklearn_mace.metrics.audit_epsilon` on the members' and the non-members'
    scores: the hypothesis-testing form of (ε, δ)-DP with exact Clopper–Pearson bounds on
    FPR and FNR at an operating point chosen on a random split, so the bound holds with
    probability ``confidence`` whatever produced the scores.

    Returns
    -------
    row : dict
        ``epsilon_at_least``, ``advantage_at_least`` and the operating point
        (``threshold``, ``fpr``, ``fnr``, ``fpr_upper``, ``fnr_upper``).
    """
    m = np.asarray(m)
    result = audit_epsilon(
        score[m == 1],
        score[m == 0],
        delta=delta,
        confidence=confidence,
        prior=prior,
        random_state=random_state,
    )
    return {
        "epsilon_at_least": result.epsilon_lower_bound,
        "advantage_at_least": result.advantage_lower_bound,
        "threshold": result.threshold,
        "fpr": result.fpr,
        "fnr": result.fnr,
        "fpr_upper": result.fpr_upper,
        "fnr_upper": result.fnr_upper,
    }


def mace_nearest_distance(distance, m, *, prior, confidence, delta=0.0, random_state=None):
    """MACE on the nearest-synthetic distance ``Q``, certified bound beside the estimate.

    From one :class:`~sklearn_mace.KDEAdvantageEstimator` fit:

    * certified (hold with probability ``confidence``): ``optimal_advantage_at_least``, a
      lower confidence bound on the optimal advantage at ``prior`` from the cross-fitted
      plug-in Bayes classifier's held-out outcomes, the (ε, δ) it implies
      (``optimal_epsilon_at_least``) and ``p_value``, the exact test of "the distance
      carries no membership information";
    * estimated: ``advantage_estimate`` (U_N, MACE Thm 6) with its McDiarmid interval
      ``estimate_lower``/``estimate_upper``, which covers the sampling spread of U_N around
      its own mean and not its smoothing bias, and ``epsilon_estimate``, the ε implied by
      U_N;
    * per record, held out: ``score``, the log posterior odds of each target from densities
      fitted without its fold (an honest attack score), and ``risk``, its individual risk
      ``|f̂_p|`` (MACE Def. 3) from the same held-out densities.
    """
    Q = np.asarray(distance, dtype=float).reshape(-1, 1)
    estimator = KDEAdvantageEstimator(
        prior=prior, confidence=confidence, random_state=random_state
    ).fit(Q, m)
    lower, upper = estimator.advantage_estimate_interval_
    bound = estimator.advantage_lower_bound_
    return {
        "optimal_advantage_at_least": bound,
        "optimal_epsilon_at_least": epsilon_from_advantage(bound, estimator.prior_, delta=delta),
        "p_value": estimator.p_value_,
        "advantage_estimate": estimator.advantage_estimate_,
        "estimate_lower": lower,
        "estimate_upper": upper,
        "epsilon_estimate": epsilon_from_advantage(
            min(estimator.advantage_estimate_, 1.0), estimator.prior_, delta=delta
        ),
        "score": estimator.crossfit_decision_,
        "risk": estimator.crossfit_risk_,
    }
