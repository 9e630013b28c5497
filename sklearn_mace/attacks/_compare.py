"""Side-by-side evaluation of membership attacks on synthetic data (DOMIAS §5, App. A.1, D)."""

import time
from numbers import Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.metrics import roc_auc_score
from sklearn.utils.validation import check_array, column_or_1d

from .._validation import validate_membership
from ..metrics import top_quantile_precision, tpr_at_fpr
from ._synthetic import stack_synthetic_reference

__all__ = ["compare_attacks"]


def _fpr_label(fpr):
    return f"tpr_at_{100 * fpr:g}%_fpr"


def _metrics(m, score, tau, fprs, top_qs):
    """One row of metrics; NaN where a group lacks members or non-members."""
    row = {"n_samples": len(m), "n_members": int(m.sum())}
    both = 0 < m.sum() < len(m)
    row["auc"] = roc_auc_score(m, score) if both else np.nan
    row["accuracy_median"] = float(np.mean((score > tau) == m))
    for fpr in fprs:
        row[_fpr_label(fpr)] = tpr_at_fpr(m, score, fpr=fpr) if both else np.nan
    for q in top_qs:
        row[f"precision_top_{100 * q:g}%"] = top_quantile_precision(m, score, q)
    return row


def _attack_scores(attack, X, stacked):
    """(scores, fit_time, score_time) of one attack; a joblib task, hence module-level."""
    fit_time = score_time = np.nan
    if hasattr(attack, "decision_function"):
        if stacked is not None:
            start = time.perf_counter()
            attack = clone(attack).fit(*stacked)
            fit_time = time.perf_counter() - start
        start = time.perf_counter()
        score = attack.decision_function(X)
        score_time = time.perf_counter() - start
    elif callable(attack):
        start = time.perf_counter()
        score = attack(X)
        score_time = time.perf_counter() - start
    else:
        score = attack
    return score, fit_time, score_time


def compare_attacks(
    attacks,
    X,
    membership,
    *,
    synthetic=None,
    reference=None,
    groups=None,
    fpr=(0.01, 0.001),
    top_q=(0.1,),
    n_jobs=None,
):
    """Evaluate membership attacks side by side on the same test records.

    For each attack: AUC; accuracy at the median rule of DOMIAS App. A.1 (guess "member"
    for the records scoring above the median of all test scores); TPR at low FPR; the
    top-``q`` precision of App. D; and, with ``groups``, the same per subgroup (DOMIAS §5.3:
    the median threshold stays the one of the whole test set).

    Parameters
    ----------
    attacks : dict of str -> estimator, callable or array-like
        * an estimator with ``decision_function``: fitted on
          ``stack_synthetic_reference(synthetic, reference)`` (a clone) when those are
          given, else used as fitted;
        * a callable ``f(X) -> scores`` (e.g. the oracle of
          :func:`~sklearn_mace.datasets.make_planted_leak`);
        * an array of precomputed scores, one per row of ``X``.

        Larger scores mean "more likely a member".
    X : array-like of shape (n_samples, n_features)
        Test records (members and non-members).
    membership : array-like of shape (n_samples,)
        1 (member) / 0 or -1 (non-member), or booleans.
    synthetic, reference : array-like of shape (n, n_features), default=None
        Rows to fit estimator attacks on.
    groups : array-like of shape (n_samples,), default=None
        Subgroup of each record; adds one row per attack and group.
    fpr : float or sequence of float, default=(0.01, 0.001)
        False-positive rates for the TPR columns.
    top_q : float or sequence of float, default=(0.1,)
        Fractions ``q`` for the top-``q`` precision columns.
    n_jobs : int, default=None
        Attacks fitted and scored in parallel, one joblib task each (scikit-learn's
        semantics: None is 1 unless in a ``joblib.parallel_config`` context). The table
        does not depend on it, except the timing columns, which are measured inside each
        task and so include any slowdown from sharing the cores.

    Returns
    -------
    table : pandas.DataFrame
        One row per attack (group ``"all"``) and per attack and subgroup, with columns
        ``attack, group, n_samples, n_members, auc, accuracy_median, tpr_at_…_fpr,
        precision_top_…%, fit_time, score_time`` (seconds). NaN marks a cell that does not
        apply, never a failure: ``auc`` and ``tpr_at_…_fpr`` in a group that lacks members
        or non-members; ``fit_time`` where nothing was fitted (callables, precomputed
        scores, estimators used as fitted); ``score_time`` for precomputed scores.

    References
    ----------
    van Breugel et al., AISTATS 2023: App. A.1 (median threshold, AUC), App. D (top-q
    precision), §5.3 (subgroups); Carlini et al. 2022 (TPR at low FPR).

    Examples
    --------
    >>> from sklearn_mace.attacks import DOMIASAttack, GANLeaksAttack, compare_attacks
    >>> from sklearn_mace.datasets import make_planted_leak
    >>> data = make_planted_leak(n_synthetic=2000, n_reference=2000, random_state=0)
    >>> table = compare_attacks(
    ...     {"oracle": data.oracle, "DOMIAS": DOMIASAttack(), "GAN-leaks": GANLeaksAttack()},
    ...     data.X_test, data.membership,
    ...     synthetic=data.synthetic, reference=data.reference)
    >>> list(table["attack"])
    ['oracle', 'DOMIAS', 'GAN-leaks']
    """
    if not isinstance(attacks, dict) or not attacks:
        raise TypeError("attacks must be a non-empty dict of name -> attack, callable or scores.")
    X = check_array(X, dtype=np.float64, input_name="X")
    m = validate_membership(membership, input_name="membership")
    if len(m) != len(X):
        raise ValueError(f"membership has {len(m)} labels for {len(X)} rows of X.")
    if (synthetic is None) != (reference is None):
        raise ValueError("pass both synthetic and reference (to fit the attacks) or neither.")
    if groups is not None:
        groups = column_or_1d(groups)
        if len(groups) != len(X):
            raise ValueError(f"groups has {len(groups)} entries for {len(X)} rows of X.")
    fpr, top_q = tuple(np.atleast_1d(fpr)), tuple(np.atleast_1d(top_q))
    for value in (*fpr, *top_q):
        if not isinstance(value, Real) or not 0 < value <= 1:
            raise ValueError(f"fpr and top_q values must lie in (0, 1]; got {value!r}.")
    stacked = None if synthetic is None else stack_synthetic_reference(synthetic, reference)

    for name, attack in attacks.items():  # checked before any work is dispatched
        scorable = hasattr(attack, "decision_function") or callable(attack)
        if hasattr(attack, "fit") and not scorable:
            raise TypeError(
                f"attack {name!r} is an estimator without decision_function; "
                "pass its scores or a callable f(X) -> scores."
            )
    results = Parallel(n_jobs=n_jobs)(
        delayed(_attack_scores)(attack, X, stacked) for attack in attacks.values()
    )

    rows = []
    for name, (score, fit_time, score_time) in zip(attacks, results, strict=True):
        score = np.asarray(score, dtype=float).ravel()
        if score.shape != (len(X),) or not np.all(np.isfinite(score)):
            raise ValueError(
                f"attack {name!r} gave {score.shape[0]} scores (not finite: "
                f"{int(np.sum(~np.isfinite(score)))}) for {len(X)} rows; one "
                "finite score per row of X is needed."
            )
        tau = np.median(score)
        parts = [("all", np.ones(len(X), dtype=bool))]
        if groups is not None:
            parts += [(g, groups == g) for g in np.unique(groups)]
        for group, mask in parts:
            row = {"attack": name, "group": group}
            row.update(_metrics(m[mask], score[mask], tau, fpr, top_q))
            row.update(fit_time=fit_time, score_time=score_time)
            rows.append(row)
    return pd.DataFrame(rows)
