"""Side-by-side evaluation of membership attacks on synthetic data (DOMIAS §5, App. A.1, D)."""

import time
from numbers import Real

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import roc_auc_score
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

from .._validation import validate_membership
from ..metrics import top_quantile_precision, tpr_at_fpr
from ..metrics._orientation import orientation_of
from ..metrics._paired import fpr_label, paired_test_columns

__all__ = ["compare_attacks"]


def _metrics(m, score, tau, fprs, top_qs):
    """One row of metrics; NaN where a group lacks members or non-members."""
    row = {"n_samples": len(m), "n_members": int(m.sum())}
    both = 0 < m.sum() < len(m)
    row["auc"] = roc_auc_score(m, score) if both else np.nan
    row["accuracy_median"] = float(np.mean((score > tau) == m))
    for fpr in fprs:
        row[fpr_label(fpr)] = tpr_at_fpr(m, score, fpr=fpr) if both else np.nan
    for q in top_qs:
        row[f"precision_top_{100 * q:g}pct"] = top_quantile_precision(m, score, q)
    return row


def _is_fitted(estimator):
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True


def _estimator_scores(estimator, X):
    """One score per row: ``decision_function``, else the single column of ``transform``
    turned the way the query declares (``membership_orientation()``: a distance is negated;
    a transformer that declares nothing is read larger = member)."""
    if hasattr(estimator, "decision_function"):
        return estimator.decision_function(X)
    Q = np.asarray(estimator.transform(X))
    if Q.ndim != 2 or Q.shape[1] != 1:
        raise ValueError(
            f"a query used as an attack must give one score column; {type(estimator).__name__} "
            f"gives shape {Q.shape}."
        )
    orientation = orientation_of(estimator)
    sign = 1 if orientation is None else int(orientation[0])
    if sign == 0:
        raise ValueError(f"{type(estimator).__name__}'s column has no membership order.")
    return sign * Q[:, 0]


def _attack_scores(attack, X):
    """(scores, fit_time, score_time) of one attack; a joblib task, hence module-level."""
    fit_time = score_time = np.nan
    if hasattr(attack, "fit") and not _is_fitted(attack):
        # Queries and unsupervised attackers fit on the records under attack (no labels):
        # MonteCarloQuery's median radius and the "median" cut are set on them.
        start = time.perf_counter()
        attack = clone(attack).fit(X)
        fit_time = time.perf_counter() - start
    if not (hasattr(attack, "fit") or callable(attack)):
        return attack, fit_time, score_time  # precomputed scores
    start = time.perf_counter()
    score = _estimator_scores(attack, X) if hasattr(attack, "fit") else attack(X)
    score_time = time.perf_counter() - start
    return score, fit_time, score_time


def compare_attacks(
    attacks,
    X,
    membership,
    *,
    groups=None,
    fpr=(0.01, 0.001),
    top_q=(0.1,),
    n_jobs=None,
    test=False,
):
    """Evaluate membership attacks side by side on the same test records.

    For each attack: AUC; accuracy at the median rule of DOMIAS App. A.1 (guess "member"
    for the records scoring above the median of all test scores); TPR at low FPR; the
    top-``q`` precision of App. D; and, with ``groups``, the same per subgroup (DOMIAS §5.3:
    the median threshold stays the one of the whole test set).

    Parameters
    ----------
    attacks : dict of str -> estimator, callable or array-like
        * an attacker with ``decision_function`` (:class:`DOMIASAttack`, a pipeline ending
          in :class:`ThresholdAttack`) or a query with one output column
          (:class:`~sklearn_mace.queries.DOMIASQuery`, ``GANLeaksQuery``,
          ``MonteCarloQuery(..., weighting="count")``, ``NearestSyntheticDistance``): used as
          fitted, or, when not fitted yet, a clone is fitted on ``X`` without labels (the
          records under attack, as the reference attacks do); its score is
          ``decision_function(X)`` or the column of ``transform(X)`` turned the way the query
          declares (``membership_orientation()``: a distance, smaller = member, is negated);
        * a callable ``f(X) -> scores`` (e.g. the oracle of
          :func:`~sklearn_mace.datasets.make_planted_leak`);
        * an array of precomputed scores, one per row of ``X``.

        Larger scores mean "more likely a member".
    X : array-like of shape (n_samples, n_features)
        Test records (members and non-members).
    membership : array-like of shape (n_samples,)
        1 (member) / 0 or -1 (non-member), or booleans.
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
    test : bool or str, default=False
        Paired tests on the same records against a reference attack (``True``: the first
        of ``attacks``; a name: that one): the row ``group="all"`` of every other attack
        gets, for ``auc`` (:func:`~sklearn_mace.metrics.delong_test`) and each
        ``tpr_at_…pct_fpr`` (:func:`~sklearn_mace.metrics.tpr_at_fpr_test`: a paired
        bootstrap where at least 10 non-members may lie above the threshold, ``fpr·n₀ ≥
        10``, else an exact test that needs about ``5 / fpr`` non-members and is very
        conservative), ``<metric>_diff`` (attack − reference), e.g.
        ``tpr_at_1pct_fpr_diff``,
        ``<metric>_diff_low``/``_high`` (a ``95 %`` interval), ``<metric>_p`` (two-sided)
        and ``<metric>_p_holm`` (Holm over every test of the table: reject where it is at
        most ``α`` and the familywise error is at most ``α``).

    Returns
    -------
    table : pandas.DataFrame
        One row per attack (group ``"all"``) and per attack and subgroup, with columns
        ``attack, group, n_samples, n_members, auc, accuracy_median, tpr_at_…pct_fpr``
        (``tpr_at_1pct_fpr`` for 1 %, the scorers' name), ``precision_top_…pct``,
        ``fit_time, score_time`` (seconds). NaN marks a cell that does not
        apply, never a failure: ``auc`` and ``tpr_at_…_fpr`` in a group that lacks members
        or non-members; ``fit_time`` where nothing was fitted (callables, precomputed
        scores, estimators used as fitted); ``score_time`` for precomputed scores. With
        ``test``, the paired-test columns (NaN on the reference's and on subgroup rows).

    References
    ----------
    van Breugel et al., AISTATS 2023: App. A.1 (median threshold, AUC), App. D (top-q
    precision), §5.3 (subgroups); Carlini et al. 2022 (TPR at low FPR).

    Examples
    --------
    >>> from sklearn_mace.attacks import compare_attacks
    >>> from sklearn_mace.datasets import make_planted_leak
    >>> from sklearn_mace.queries import DOMIASQuery, GANLeaksQuery
    >>> data = make_planted_leak(n_synthetic=2000, n_reference=2000, random_state=0)
    >>> syn, ref = data.synthetic, data.reference
    >>> table = compare_attacks(
    ...     {"oracle": data.oracle, "DOMIAS": DOMIASQuery(syn, ref, device="cpu"),
    ...      "GAN-leaks CAL": GANLeaksQuery(syn, ref, device="cpu")},
    ...     data.X_test, data.membership)
    >>> list(table["attack"])
    ['oracle', 'DOMIAS', 'GAN-leaks CAL']
    """
    if not isinstance(attacks, dict) or not attacks:
        raise TypeError("attacks must be a non-empty dict of name -> attack, callable or scores.")
    X = check_array(X, dtype=np.float64, input_name="X")
    m = validate_membership(membership, input_name="membership")
    if len(m) != len(X):
        raise ValueError(f"membership has {len(m)} labels for {len(X)} rows of X.")
    if groups is not None:
        groups = column_or_1d(groups)
        if len(groups) != len(X):
            raise ValueError(f"groups has {len(groups)} entries for {len(X)} rows of X.")
    fpr, top_q = tuple(np.atleast_1d(fpr)), tuple(np.atleast_1d(top_q))
    for value in (*fpr, *top_q):
        if not isinstance(value, Real) or not 0 < value <= 1:
            raise ValueError(f"fpr and top_q values must lie in (0, 1]; got {value!r}.")

    for name, attack in attacks.items():  # checked before any work is dispatched
        scorable = hasattr(attack, "decision_function") or hasattr(attack, "transform")
        if hasattr(attack, "fit") and not scorable:
            raise TypeError(
                f"attack {name!r} is an estimator without decision_function or transform; "
                "pass its scores or a callable f(X) -> scores."
            )
    results = Parallel(n_jobs=n_jobs)(
        delayed(_attack_scores)(attack, X) for attack in attacks.values()
    )

    rows, tested = [], {}
    for name, (score, fit_time, score_time) in zip(attacks, results, strict=True):
        score = np.asarray(score, dtype=float).ravel()
        if score.shape != (len(X),) or not np.all(np.isfinite(score)):
            raise ValueError(
                f"attack {name!r} gave {score.shape[0]} scores (not finite: "
                f"{int(np.sum(~np.isfinite(score)))}) for {len(X)} rows; one "
                "finite score per row of X is needed."
            )
        tested[name] = score
        tau = np.median(score)
        parts = [("all", np.ones(len(X), dtype=bool))]
        if groups is not None:
            parts += [(g, groups == g) for g in np.unique(groups)]
        for group, mask in parts:
            row = {"attack": name, "group": group}
            row.update(_metrics(m[mask], score[mask], tau, fpr, top_q))
            row.update(fit_time=fit_time, score_time=score_time)
            rows.append(row)
    table = pd.DataFrame(rows)
    if test is False:
        return table
    reference = next(iter(attacks)) if test is True else test
    if reference not in attacks:
        raise ValueError(f"test must be True, False or one of {list(attacks)}; got {test!r}.")
    paired = paired_test_columns(m, tested, reference=reference, fpr=fpr)
    table = table.join(paired, on="attack")
    table.loc[table["group"] != "all", paired.columns] = np.nan  # tests of the whole set only
    return table
