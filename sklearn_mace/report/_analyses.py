"""Analyses both audits share: MACE on a one-dimensional query, and query-as-attack scores.

MACE's cross-fitted estimator (:class:`~sklearn_mace.estimation.KDEAdvantageEstimator`) is
fitted once per subject, as a shared step, and read by two analyses:

* the **Bayes rule** — its held-out log posterior odds with the threshold fixed at 0 (the
  plug-in Bayes classifier's decision at the prior, MACE Lemma 1). Certified on every
  target with no split, its advantage is a lower bound on the optimal advantage of the query
  (any classifier's advantage is at most the optimal one); it also carries MACE's plug-in
  estimate ``U_N`` (Thm 6) with its McDiarmid interval, the ε that estimate implies, the
  "no leak" p-value, and every record's held-out risk ``|f̂_p|`` (Def. 3);
* the **best-ε threshold** — the same scores with the threshold chosen on half of the targets
  for the largest ε (usually at low FPR) and certified on the other half.
"""

import numpy as np

from ..estimation import KDEAdvantageEstimator
from ..metrics import epsilon_from_advantage
from ._engine import BAYES_RULE, Analysis, Scores, SharedStep

__all__ = ["fit_mace", "mace_analyses", "mace_fit_step", "mace_scores", "query_scores"]


def fit_mace(query, m, *, prior, confidence, random_state, device="auto"):
    """MACE's cross-fitted estimator on a one-dimensional query (MACE Thm 6, Def. 3), its
    kernel sums on ``device``."""
    Q = np.asarray(query, dtype=float).reshape(-1, 1)
    return KDEAdvantageEstimator(
        prior=prior, confidence=confidence, random_state=random_state, device=device
    ).fit(Q, m)


def mace_fit_step(name, query, needs=()):
    """A shared step fitting MACE on ``query(subject)``, a one-dimensional query of the
    targets (a shared result or a subject input), on ``engine.inputs.device``; stored in
    ``subject.shared.mace``."""

    def compute(engine, subject, seed):
        t = engine.targets
        # the estimator's interval of U_N at the report's level: an estimate, not a claim
        return fit_mace(
            query(subject),
            t.membership,
            prior=t.prior,
            confidence=engine.confidence,
            random_state=seed,
            device=engine.inputs.device,
        )

    return SharedStep(name, compute, needs=needs, key="mace")


def mace_scores(estimator, delta, *, with_estimates=True):
    """The held-out scores of a fitted MACE estimator, with its estimates and risks."""
    if not with_estimates:
        return Scores(score=estimator.crossfit_decision_)
    low, high = estimator.advantage_estimate_interval_
    advantage = estimator.advantage_estimate_
    epsilon = epsilon_from_advantage(min(advantage, 1.0), estimator.prior_, delta)
    estimates = {
        "advantage_estimate": advantage,
        "advantage_estimate_low": low,
        "advantage_estimate_high": high,
        "epsilon_estimate": float(epsilon),
        "p_value": estimator.p_value_,
    }
    return Scores(
        score=estimator.crossfit_decision_, risk=estimator.crossfit_risk_, estimates=estimates
    )


def _mace_scores(with_estimates):
    def compute(engine, subject, seed):
        estimator = subject.shared.mace  # mace_fit_step's result
        return mace_scores(estimator, engine.delta, with_estimates=with_estimates)

    return compute


def mace_analyses(query_name, fit_name):
    """The two MACE analyses on one fitted query: ``(bayes_rule, best_epsilon)``, reading
    the estimator that :func:`mace_fit_step` ``fit_name`` stores in ``subject.shared.mace``."""
    bayes = Analysis(
        f"MACE Bayes rule ({query_name})",
        _mace_scores(with_estimates=True),
        threshold=BAYES_RULE,
        needs=(fit_name,),
        detail="held-out posterior's decision at the prior, all targets: its advantage bounds "
        "the optimal advantage",
    )
    best = Analysis(
        f"MACE best-ε threshold ({query_name})",
        _mace_scores(with_estimates=False),
        needs=(fit_name,),
        detail="held-out posterior odds, threshold chosen on half the targets for the largest ε",
    )
    return bayes, best


def query_scores(make_query):
    """Scores of a one-column query fitted, unlabelled, on the encoded target records.

    ``make_query(engine, subject, seed)`` builds the query; it is fitted on the target
    records (``engine.inputs.X_targets``) without their labels (as the reference attacks
    are) and its column is the score.
    """

    def compute(engine, subject, seed):
        query = make_query(engine, subject, seed)
        return Scores(score=query.fit_transform(engine.inputs.X_targets)[:, 0])

    return compute
