"""The one-run design of :class:`AlgorithmAudit`: m canaries, each in with probability ½.

Steinke, Nasr & Jagielski (2023): insert ``m`` canaries into one training set, each
independently with probability ½, train once, featurize the output about every canary, and
guess "in" for the highest-scored and "out" for the lowest-scored canaries. The number of
correct guesses is bounded under the claim — by their theorem under (ε, δ)-DP
(:func:`~sklearn_mace.metrics.one_run_epsilon`) and by the f-DP recursion of Mahloujifar,
Melis & Chaudhuri (2025) under any claimed curve (``metrics/_one_run_fdp.py``). One training
instead of thousands; each canary is in or out, so the bounds refute *add/remove-one* DP.

The attack learns from the canaries of a random ``attack_fraction`` (their inclusion is
known to the auditor) and scores the others; only those are guessed. The guesses are then a
function of the output and of the training canaries' inclusion alone, and with those fixed
the scored canaries' inclusion is still a fair coin each, independent of everything else —
the setting of both theorems (the training canaries are part of the fixed dataset). A
featurizer that declares its one column a ready score (``is_membership_score``, the
white-box :class:`~sklearn_mace.algorithm.DPSGDGradientScores`) needs no attack: every
canary is scored by it and guessed on (the score is a fixed function of the output).
"""

import numpy as np

from ..metrics import one_run_epsilon
from ..metrics._one_run_fdp import (
    approximate_blow_up_inverse,
    claim_blow_up_inverse,
    fdp_statistic,
    gaussian_blow_up_inverse,
    guess_counts,
    one_run_epsilon_lower_bound,
    one_run_mu_lower_bound,
)
from ._runs import featurize, seeded, train_output

__all__ = []

#: Guesses as fractions of the scored canaries (half "in" at the top, half "out" at the
#: bottom); every count is tested by every bound, at α divided by their number (Bonferroni).
GUESS_FRACTIONS = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def certificate_refusal(certificate):
    """Why ``certificate`` (other than ``"threshold"``) is refused with ``design="one_run"``.

    The rank test (``certificate="rank_test"``) is calibrated on independent runs, each a
    fresh draw of the recipe on a neighbouring pair; one run's canaries share one training,
    so its argument does not hold for them. What holds for them is the guess count, and the
    design always certifies from it with both valid analyses: Steinke, Nasr & Jagielski's
    theorem (2023) and the f-DP recursion of Mahloujifar, Melis & Chaudhuri (2025).
    """
    return (
        f"certificate={certificate!r} applies to the multi-run design (its rank test needs "
        "independent runs; one run's canaries share one training). design='one_run' "
        "certifies from its guesses, always with both of its bounds: Steinke, Nasr & "
        "Jagielski's (2023, epsilon_lower_bounds_) and the f-DP analysis of Mahloujifar, "
        "Melis & Chaudhuri (2025: fdp_epsilon_lower_bounds_, mu_lower_bounds_ and the claimed "
        "curve's test). Leave certificate='threshold', the default."
    )


def claim_inverse(claim):
    """``B⁻¹`` of the claimed curve (fast scalar forms for Gaussian and (ε, δ) claims)."""
    if claim.kind == "gaussian":
        return gaussian_blow_up_inverse(claim.mu)
    if len(claim.epsilons) == 1:
        return approximate_blow_up_inverse(claim.epsilons[0], claim.deltas[0])
    return claim_blow_up_inverse(claim.tradeoff)


def guess_table(scores, included, *, claim, delta, alpha, seed):
    """One row per guess count: the counts and every bound, each at ``alpha`` divided by
    the number of guess counts times the number of bounds (3, or 4 with a claim), so that
    all of them hold together at ``1 − alpha``.

    Returns a dict of arrays: ``n_guesses``, ``n_correct``, ``steinke_epsilon``,
    ``fdp_epsilon`` ((ε, δ) curve), ``fdp_mu`` (Gaussian curves), ``claim_statistic``
    (> 0: the claimed curve is rejected; NaN without a claim) and ``confidence`` (the level
    each number of the row holds at on its own, ``1 − alpha / (counts × bounds)``).
    """
    n = scores.size
    counts = sorted({max(1, int(round(f * n / 2))) for f in GUESS_FRACTIONS})
    # every bound printed together holds together: Steinke's ε, the f-DP ε and μ, and the
    # claim's test, each over every guess count (Bonferroni over all of them)
    level = alpha / (len(counts) * (3 if claim is None else 4))
    rows = {k: [] for k in ("n_guesses", "n_correct", "steinke_epsilon", "fdp_epsilon")}
    rows.update(fdp_mu=[], claim_statistic=[])
    for k in counts:
        k_out = min(k, n - k)
        # the same tie-breaking draws as one_run_epsilon's (RandomState(seed)): the same guesses
        r, v = guess_counts(scores, included, k, k_out, np.random.RandomState(seed))
        steinke = one_run_epsilon(
            scores,
            included,
            n_positive_guesses=k,
            n_negative_guesses=k_out,
            delta=delta,
            confidence=1.0 - level,
            random_state=seed,
        )
        rows["n_guesses"].append(r)
        rows["n_correct"].append(v)
        rows["steinke_epsilon"].append(steinke.epsilon_lower_bound)
        rows["fdp_epsilon"].append(one_run_epsilon_lower_bound(n, r, v, level, delta))
        rows["fdp_mu"].append(one_run_mu_lower_bound(n, r, v, level))
        rows["claim_statistic"].append(
            np.nan if claim is None else fdp_statistic(claim_inverse(claim), n, r, v, level)
        )
    rows["confidence"] = [1.0 - level] * len(counts)
    return {name: np.asarray(values) for name, values in rows.items()}


def claim_contradicted(claim, table, delta):
    """Whether the guesses contradict ``claim`` (None without one): the one-run reading of
    :meth:`~sklearn_mace.algorithm.PrivacyClaim.contradicted_by`.

    A one-run audit certifies no single test's error rates, so no point is compared with the
    curve; it refutes curves. The claim is contradicted when the f-DP recursion rejects the
    claimed curve itself (``claim_statistic > 0`` at some guess count), or when a certified ε
    at ``delta`` (Steinke et al.'s or the f-DP one) exceeds the claim's ε at that δ (every
    claim implies ``(claim.epsilon_at(delta), delta)``-DP): for a pure or (ε, δ) claim, as in
    the multi-run design, the certified ε above the claimed one. All of them are numbers of
    the same Bonferroni family (:func:`guess_table`), so the verdict holds at the audit's
    confidence.
    """
    if claim is None:
        return None
    rejected = bool(np.nanmax(table["claim_statistic"]) > 0)
    certified = max(table["steinke_epsilon"].max(), table["fdp_epsilon"].max())
    return rejected or bool(certified > claim.epsilon_at(delta))


def fit_one_run(audit, X, kind, featurizer):
    """Run the one-run design for ``audit`` (an :class:`AlgorithmAudit` being fitted)."""
    from ._runs import RunPlan, output_parameter

    rng = np.random.default_rng(audit._seeds(1)[0])
    canaries, pool = _canaries(audit, X, rng)
    m = len(canaries)
    included = rng.random(m) < 0.5
    n_train = audit._resolve_n_train(len(pool))
    rows = rng.choice(len(pool), size=n_train, replace=False)
    data = np.vstack([pool[rows], canaries[included]])
    data = data[rng.permutation(len(data))]
    plan = RunPlan(
        recipe=audit.recipe,
        kind=kind,
        featurizer=featurizer,
        output_parameter=output_parameter(featurizer),
        pool=pool,
        targets=canaries,
        relation="add_remove",
        n_train=n_train,
        n_runs=1,
        n_synthetic=audit.n_synthetic if kind == "generator" else None,
        fixed_seed=None,
    )
    output = train_output(plan, data, int(rng.integers(np.iinfo(np.int32).max)))
    features = featurize(plan, output, np.arange(m))

    if getattr(featurizer, "is_membership_score", False):
        # a featurizer whose one column is already the score (DPSGDGradientScores): no
        # attack to learn, every canary is guessed on
        fit_part, attack, scores = np.zeros(m, dtype=bool), None, features[:, 0]
    else:
        fit_part, attack, scores = _learned_scores(audit, features, included, rng)
    alpha = 1.0 - audit.confidence
    table = guess_table(
        scores[~fit_part],
        included[~fit_part],
        claim=audit.claim_,
        delta=audit.delta_,
        alpha=alpha,
        seed=int(rng.integers(np.iinfo(np.int32).max)),
    )
    audit.n_train_ = n_train
    audit.targets_ = canaries
    audit.canary_included_ = included
    audit.canary_features_ = features
    audit.canary_scores_ = scores
    audit.certify_mask_ = ~fit_part
    audit.attacks_ = [] if attack is None else [attack]
    audit.guesses_ = table
    audit.epsilon_lower_bounds_ = np.array([table["steinke_epsilon"].max()])
    audit.fdp_epsilon_lower_bounds_ = np.array([table["fdp_epsilon"].max()])
    audit.mu_lower_bounds_ = np.array([table["fdp_mu"].max()])
    verdict = claim_contradicted(audit.claim_, table, audit.delta_)
    audit.contradicted_ = None if verdict is None else np.array([verdict])
    audit.per_target_confidence_ = audit.confidence


def _learned_scores(audit, features, included, rng):
    """``(fit_part, attack, scores)``: the attack trained on ``attack_fraction`` of the
    canaries, and its scores of all of them."""
    m = len(features)
    fit_part = np.zeros(m, dtype=bool)
    fit_part[rng.permutation(m)[: int(round(audit.attack_fraction * m))]] = True
    if fit_part.sum() < 5 or (~fit_part).sum() < 2 or len(set(included[fit_part])) < 2:
        raise ValueError(
            f"n_canaries={m} with attack_fraction={audit.attack_fraction} leaves too few "
            "canaries to train the attack (at least 5, both in and out) or to guess on (at "
            "least 2); use more canaries."
        )
    attack = seeded(audit._default_attack(), int(rng.integers(np.iinfo(np.int32).max)))
    attack.fit(features[fit_part], included[fit_part].astype(int))
    if hasattr(attack, "decision_function"):
        return fit_part, attack, attack.decision_function(features)
    return fit_part, attack, attack.predict_proba(features)[:, 1]


def _canaries(audit, X, rng):
    """``(canaries, pool)``: the ``targets`` array, or ``n_canaries`` population rows drawn
    at random and left out of the pool (distinct rows, so each canary is its own record)."""
    from numbers import Integral

    if not isinstance(audit.targets, Integral) or isinstance(audit.targets, bool):
        canaries, indices = audit._resolve_targets(X)
        keep = np.ones(len(X), dtype=bool)
        keep[indices[indices >= 0]] = False
        return canaries, X[keep]
    if audit.n_canaries > len(X) - 2:
        raise ValueError(
            f"n_canaries={audit.n_canaries} leaves fewer than 2 of the population's {len(X)} "
            "rows to train on; use fewer canaries or a larger population."
        )
    chosen = rng.choice(len(X), size=audit.n_canaries, replace=False)
    keep = np.ones(len(X), dtype=bool)
    keep[chosen] = False
    return X[chosen], X[keep]
