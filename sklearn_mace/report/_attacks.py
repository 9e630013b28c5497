"""The battery's analyses.

MACE runs through :class:`~sklearn_mace.KDEAdvantageEstimator` and
:class:`~sklearn_mace.BayesOptimalMIA`. The three attacks on synthetic data are PROVISIONAL
functions of (synthetic, reference, targets), written before ``DOMIASAttack`` and the MC /
GAN-leaks baselines landed; they are to become thin adapters around those estimators.
"""

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_predict

from ..attacks import BayesOptimalMIA
from ..density import GaussianKDE
from ..estimation import KDEAdvantageEstimator
from ..utils import count_within_radius, nearest_sq_distances

__all__ = ["ATTACKS", "mace_nearest_distance", "nearest_distance"]

N_FOLDS = 5


def nearest_distance(targets, synthetic):
    """MACE Eq. 2: Euclidean distance from each target to its nearest synthetic row."""
    return np.sqrt(nearest_sq_distances(targets, synthetic, k=1)[:, 0])


def _cv_kde(X):
    grid = {"bandwidth": np.logspace(-1.5, 0.5, 9)}
    return GridSearchCV(GaussianKDE(), grid, cv=3).fit(X).best_estimator_


def domias(synthetic, reference, targets, random_state=None):
    """DOMIAS Eq. 2 in log space: log p_G(x) − log p_R(x), KDE bandwidths chosen by CV."""
    return _cv_kde(synthetic).score_samples(targets) - _cv_kde(reference).score_samples(targets)


def monte_carlo(synthetic, reference, targets, random_state=None):
    """MC (Hilprecht et al.): fraction of synthetic rows within the median nearest distance."""
    radius = np.sqrt(np.median(nearest_sq_distances(targets, synthetic)[:, 0]))
    return count_within_radius(targets, synthetic, radius) / len(synthetic)


def gan_leaks_cal(synthetic, reference, targets, random_state=None):
    """GAN-leaks CAL: nearest distance to the reference minus that to the synthetic rows."""
    return nearest_distance(targets, reference) - nearest_distance(targets, synthetic)


ATTACKS = {
    "DOMIAS (KDE, cross-validated bandwidth)": domias,
    "MC (Hilprecht)": monte_carlo,
    "GAN-leaks CAL": gan_leaks_cal,
}


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
