"""The battery's analyses, as thin adapters around the library's estimators.

Every attack is fitted on the synthetic rows and the reference rows only (the attacker's
view) and then scores the target records; MACE's estimators are fitted on the
nearest-synthetic distance of the targets with their membership labels (the auditor's view).
"""

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from ..attacks import BayesOptimalMIA, DOMIASAttack, GANLeaksAttack, MonteCarloAttack
from ..estimation import KDEAdvantageEstimator
from ..queries import NearestSyntheticDistance

__all__ = ["ATTACKS", "mace_nearest_distance", "nearest_distance"]

N_FOLDS = 5

# name -> unfitted attack (given a random_state); fitted with fit_synthetic_reference
ATTACKS = {
    "DOMIAS (KDE, cross-validated bandwidth)":
        lambda random_state: DOMIASAttack(bandwidth="cv", random_state=random_state),
    "MC (Hilprecht)": lambda random_state: MonteCarloAttack(),
    "GAN-leaks CAL": lambda random_state: GANLeaksAttack(calibrated=True),
}


def attack_scores(make_attack, synthetic, reference, targets, random_state):
    """Membership scores of the targets (larger = member) by an attack on synthetic data."""
    attack = make_attack(random_state).fit_synthetic_reference(synthetic, reference)
    return attack.decision_function(targets)


def nearest_distance(targets, synthetic):
    """MACE Eq. 2: Euclidean distance from each target to its nearest synthetic row."""
    return NearestSyntheticDistance(synthetic).fit_transform(targets)[:, 0]


def mace_nearest_distance(distance, m, *, prior, confidence, random_state=None, with_risk=True):
    """MACE on the nearest-synthetic distance ``Q``.

    Returns a dict with the optimal advantage ``U_N`` (Thm 6), its McDiarmid interval and
    the ε it implies (Thm 1.4), from :class:`~sklearn_mace.KDEAdvantageEstimator`; with
    ``with_risk``, each record's individual risk ``|f̂_p|`` with its interval (Thm 1.1,
    Thm 3.2) and the out-of-fold log posterior odds of :class:`BayesOptimalMIA`
    (``cv_score``: an honest attack score for ROC curves, each record scored by densities
    fitted without it).
    """
    Q = np.asarray(distance, dtype=float).reshape(-1, 1)
    estimator = KDEAdvantageEstimator(prior=prior, confidence=confidence,
                                      random_state=random_state).fit(Q, m)
    lower, upper = estimator.advantage_interval_
    out = {"advantage": estimator.advantage_, "lower": lower, "upper": upper,
           "epsilon": estimator.epsilon_}
    if with_risk:
        out["risk"], out["risk_lower"], out["risk_upper"] = estimator.individual_risk(
            Q, return_interval=True)
        folds = StratifiedKFold(N_FOLDS, shuffle=True, random_state=random_state)
        out["cv_score"] = cross_val_predict(
            BayesOptimalMIA(prior=prior, confidence=confidence), Q, m, cv=folds,
            method="decision_function")
    return out
