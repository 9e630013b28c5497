"""The battery's analyses as functions of (synthetic, reference, targets).

PROVISIONAL: written before the MACE-core (issue 3) and DOMIAS (issue 4) estimators landed;
each function is to become a thin adapter around ``DOMIASAttack``, the MC / GAN-leaks CAL
baselines, ``KDEAdvantageEstimator`` and ``BayesOptimalMIA``.
"""

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from ..density import GaussianKDE
from ..metrics import epsilon_lower_bound
from ..utils import count_within_radius, nearest_sq_distances

__all__ = ["ATTACKS", "mace_nearest_distance", "nearest_distance"]


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


def _log_densities(q_fit, m_fit, q_eval):
    r = GaussianKDE().fit(q_fit[m_fit == 1, None])
    s = GaussianKDE().fit(q_fit[m_fit == 0, None])
    return r.score_samples(q_eval[:, None]), s.score_samples(q_eval[:, None]), r, s


def mace_nearest_distance(distance, m, *, prior, confidence, random_state=None, with_risk=True):
    """Optimal advantage U_N with its McDiarmid interval, ε, risks |f_p| and CV scores."""
    q = np.asarray(distance, dtype=float)
    log_r, log_s, r, s = _log_densities(q, m, q)
    bw = np.sqrt(max(r.bandwidth_matrix_[0, 0], s.bandwidth_matrix_[0, 0]))
    grid = np.linspace(q.min() - 6 * bw, q.max() + 6 * bw, 4000)
    gr, gs, _, _ = _log_densities(q, m, grid)
    diff = np.abs(prior * np.exp(gr) - (1 - prior) * np.exp(gs))
    advantage = float(np.sum((diff[1:] + diff[:-1]) / 2 * np.diff(grid)))
    half = np.sqrt(2.0 / len(q) * np.log(2.0 / (1.0 - confidence)))
    out = {"advantage": advantage, "lower": max(advantage - half, 0.0),
           "upper": min(advantage + half, 1.0),
           "epsilon": epsilon_lower_bound(min(advantage, 1.0), prior)}
    if not with_risk:
        return out
    a, b = np.log(prior) + log_r, np.log(1 - prior) + log_s
    risk = np.abs(np.tanh((a - b) / 2))  # |f_p| = |(e^a − e^b)/(e^a + e^b)|
    cv_score = np.empty_like(q)
    folds = StratifiedKFold(5, shuffle=True, random_state=random_state)
    for train, test in folds.split(q[:, None], m):
        lr, ls, _, _ = _log_densities(q[train], m[train], q[test])
        cv_score[test] = lr - ls
    out.update(risk=risk, risk_lower=np.full_like(risk, np.nan),
               risk_upper=np.full_like(risk, np.nan), cv_score=cv_score)
    return out
