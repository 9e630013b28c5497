"""Cross-fitted and forward-chained plug-in Bayes classifiers, and their KDE bandwidth.

Everything rests on one kind of table: for a row ``z``, every fold ``a``, every class ``c``
and every candidate bandwidth ``h``, the log kernel sum ``log Σ_{i ∈ a, c} exp(−‖z − z_i‖² /
2h²)`` (:func:`~sklearn_mace.density._grid.grouped_log_kernel_sums`; binned in one
dimension). A KDE fitted on any union of folds is a sum over that table, so the nested
selection of the cross-fit (one per outer fold, never seeing it), the chain's selections
(one per prefix of folds) and the held-out log posterior odds of both come from one pass
over every candidate for ``SELECTION_ROWS`` rows and one pass at the chosen bandwidth(s)
for the others — ``O(N · (1500 · n_bandwidths + N))`` instead of ``O(N² · n_bandwidths)``.

The data are *sphered* first (pooled, label-free: centred and multiplied by the inverse
square root of the pooled covariance), so one scalar ``h`` is the kernel covariance
``h² Σ̂_pooled`` in the original coordinates: Scott's shape, shared by both classes (per-class
rules gave one class a kernel variance 10⁷ times smaller than the other's on an overfit
model's loss), with its size chosen on held-out data.
"""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted

from ..density._grid import BinnedKernelSums1D, grouped_log_kernel_sums

__all__ = [
    "Sphering",
    "bandwidth_grid",
    "crossfit_classifier",
    "crossfit_kde",
    "heldout_log_odds",
    "select_bandwidth",
]

# Candidate bandwidths, as multiples of Scott's factor n^(−1/(d+4)) in sphered coordinates.
# The grid reaches 4x Scott so that a query that carries nothing can be smoothed flat.
BANDWIDTH_FACTORS = np.geomspace(1 / 8, 4, 11)
# At most this many rows are scored under every bandwidth candidate to choose among them;
# the others only at the chosen one(s). On 32 fits at 2 000 rows (null and shifted, d = 1,
# 4, 8, 16) 1 500 rows chose as all 2 000 did; 1 000 changed two choices, 500 one null U_N
# from 0.016 to 0.031 (1-D). The one-standard-error rule leans to the smoother candidate
# where the criterion cannot tell.
SELECTION_ROWS = 1500


class Sphering(TransformerMixin, BaseEstimator):
    """Centre and whiten by the pooled covariance; drop directions with no variance.

    Eigen-directions whose variance is below ``rtol`` times the largest are dropped, so
    exactly collinear query columns (a probability vector, a duplicated feature) reduce to
    their ``k`` informative coordinates instead of failing with a singular covariance. The
    map is affine and injective on the data's span, so it changes no advantage. A query
    with no variance at all (every record at the same distance) becomes one constant column.
    """

    def __init__(self, *, rtol=1e-9):
        self.rtol = rtol

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        self.mean_ = X.mean(axis=0)
        covariance = np.atleast_2d(np.cov(X, rowvar=False)) if len(X) > 1 else None
        if covariance is None or not np.any(covariance > 0):
            # nothing varies: one constant column (the query carries no information, and
            # the classifier on it is constant)
            self.components_ = np.zeros((X.shape[1], 1))
            return self
        eigenvalues, eigenvectors = np.linalg.eigh(covariance)
        keep = eigenvalues > self.rtol * eigenvalues.max()
        self.components_ = eigenvectors[:, keep] / np.sqrt(eigenvalues[keep])
        return self

    def transform(self, X):
        check_is_fitted(self)
        return (np.asarray(X, dtype=float) - self.mean_) @ self.components_


def bandwidth_grid(n_train_per_class, n_features):
    """Candidate ``h`` (sphered units) around Scott's factor for the training-fold size."""
    scott = max(n_train_per_class, 2) ** (-1.0 / (n_features + 4))
    return scott * BANDWIDTH_FACTORS


def _kernel_table(Z, Zs, groups, n_groups, bandwidths, device):
    """``sums(Z_query, which)``: the kernel table of ``Zs`` by group, at chosen bandwidths.

    In one dimension the sums are binned (a few per cent off, exact tails) on one grid
    built here for every row of ``Z`` and read by every pass; otherwise exact
    (:func:`grouped_log_kernel_sums`).
    """
    if Zs.shape[1] == 1:
        binned = BinnedKernelSums1D(
            Zs, groups, n_groups, bandwidths, span=(Z[:, 0].min(), Z[:, 0].max())
        )
        return binned.log_sums

    def sums(Z_query, which=None):
        chosen = bandwidths if which is None else bandwidths[which]
        return grouped_log_kernel_sums(Z_query, Zs, groups, n_groups, chosen, device=device)

    return sums


def _logsumexp(a, axis):
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(np.log(np.exp(a - top).sum(axis=axis, keepdims=True)) + top, axis)


def heldout_log_odds(sums, counts, excluded, log_prior_odds):
    """Log posterior odds of each row from KDEs fitted on the folds it does not exclude.

    Parameters
    ----------
    sums : ndarray of shape (..., n_folds, 2, n_samples)
        From :func:`grouped_log_kernel_sums`, groups ``2 · fold + class`` reshaped to
        ``(n_folds, 2)`` (one bandwidth or all of them).
    counts : ndarray of shape (n_folds, 2)
        Rows of each class in each fold.
    excluded : ndarray of bool of shape (n_samples, n_folds) or (n_folds,)
        The folds left out of the KDEs that score each row (at least its own); one row
        of flags applies to every row.
    log_prior_odds : float

    Returns
    -------
    log_odds : ndarray of shape (..., n_samples)
        ``log r̂(z) − log q̂(z) + log(p/(1−p))``; both KDEs share ``h``, so the kernel's
        normalising constant cancels.
    """
    excluded = np.broadcast_to(excluded, (sums.shape[-1], counts.shape[0]))
    masked = np.where(excluded.T[:, None, :], -np.inf, sums)
    # logsumexp over the folds, written out (scipy's generic one cost half the cross-fit)
    log_sum = _logsumexp(masked, axis=-3)
    n_train = (~excluded).astype(float) @ counts  # (n_samples, 2)
    with np.errstate(divide="ignore"):
        log_density = log_sum - np.log(n_train).T
    return log_density[..., 1, :] - log_density[..., 0, :] + log_prior_odds


def _log_loss(log_odds, m):
    """``log(1 + e^{∓L})``: the log loss of the posterior ``σ(L)`` for label ``m`` (stable)."""
    z = np.where(m == 1, -log_odds, log_odds)
    with np.errstate(invalid="ignore", over="ignore"):
        tail = np.abs(z)
        np.negative(tail, out=tail)
        np.log1p(np.exp(tail, out=tail), out=tail)
        return np.add(np.maximum(z, 0.0, out=z), tail, out=z)


def select_bandwidth(log_odds, m, prior, rows=None):
    """Index of the chosen bandwidth: the largest within one standard error of the best.

    The criterion is the held-out log loss of the plug-in posterior at ``prior``, a proper
    score, each class weighted to count at the prior: it rewards a bandwidth whose
    posterior generalises, and on a query that carries nothing it is smallest for the
    flattest posterior. Among bandwidths whose mean loss is within one (paired) standard
    error of the minimum, the largest is taken — the one-standard-error rule, which keeps
    near-ties from flipping the choice and leans towards less noise in ``U_N``. A candidate
    with a non-finite loss on some row (both classes' kernel sums underflowed: a row
    hundreds of bandwidths from every training row) is never chosen.

    Parameters
    ----------
    log_odds : ndarray of shape (..., n_bandwidths, n_rows)
        Held-out log posterior odds per candidate (bandwidths in increasing order); any
        leading axes are separate selections, decided at once.
    m : ndarray of shape (n_rows,)
    prior : float
    rows : ndarray of bool of shape (..., n_rows), default=None
        The rows each selection uses (all when None).

    Returns
    -------
    index : int or ndarray of int of shape (...)
    """
    log_odds = np.asarray(log_odds, dtype=float)
    rows = np.ones(log_odds.shape[:-2] + log_odds.shape[-1:], bool) if rows is None else rows
    # in place, in buffers (every operand is (selections, bandwidths, rows); the
    # arithmetic, and so every choice, as the plain expressions would give)
    safe = _log_loss(log_odds, m)  # loss; NaN (both sums underflowed) counts as +inf
    np.copyto(safe, np.inf, where=np.isnan(safe))
    outside = ~rows[..., None, :]
    np.copyto(safe, 0.0, where=outside)  # safe = where(rows, loss, 0)
    n_members = np.sum(rows & (m == 1), axis=-1, keepdims=True)
    n_nonmembers = np.sum(rows & (m == 0), axis=-1, keepdims=True)
    weights = rows * np.where(
        m == 1, prior / np.maximum(n_members, 1), (1 - prior) / np.maximum(n_nonmembers, 1)
    )
    weights = weights / weights.sum(axis=-1, keepdims=True)
    w = weights[..., None, :]
    work = np.empty_like(safe)
    with np.errstate(invalid="ignore"):
        mean = np.multiply(safe, w, out=work).sum(axis=-1)
        best = np.where(np.isfinite(mean).any(axis=-1), np.argmin(mean, axis=-1), -1)
        best_loss = np.take_along_axis(safe, best[..., None, None], axis=-2)
        diff = np.subtract(safe, best_loss, out=safe)  # safe is not needed any more
        diff_mean = np.multiply(diff, w, out=work).sum(axis=-1)
        centred = np.subtract(diff, diff_mean[..., None], out=diff)
        np.copyto(centred, 0.0, where=outside)
        np.multiply(centred, centred, out=centred)
        diff_se = np.sqrt(np.multiply(centred, weights[..., None, :] ** 2, out=work).sum(axis=-1))
        eligible = diff_mean <= diff_se
    n_bandwidths = log_odds.shape[-2]
    choice = np.where(eligible, np.arange(n_bandwidths), -1).max(axis=-1)
    # nothing finite (every candidate underflowed somewhere): the smoothest
    choice = np.where(choice < 0, n_bandwidths - 1, choice)
    return int(choice) if np.ndim(choice) == 0 else choice


def _selection_log_odds(table, counts, sel_folds, selections, log_prior_odds):
    """Held-out log odds of the selection rows under several exclusion patterns at once.

    ``table`` holds ``log Σ`` per (bandwidth, fold, class, row); each sum is divided by the
    sum over *all* rows at its (bandwidth, row) — label-free, so dividing by it (a shift
    that cancels in the odds) keeps the sums in range without letting an excluded fold's
    labels decide what underflows. Selection ``s`` is ``(rows, allowed)``: the rows it scores and,
    for a row of fold ``a``, the folds ``allowed(a)`` whose KDEs score it; the sums run over
    those folds explicitly (never a total minus the excluded folds, whose rounding would
    carry the excluded labels). Returns log odds of shape ``(n_selections, n_bandwidths,
    n_rows)``, NaN outside each selection's rows.
    """
    n_bandwidths, n_folds = table.shape[:2]
    flat = table.reshape(n_bandwidths, -1, table.shape[-1])
    top = flat[:, 0].copy()
    for k in range(1, flat.shape[1]):  # (a loop of maxima is faster than max over axis 1)
        np.maximum(top, flat[:, k], out=top)
    top[~np.isfinite(top)] = 0.0
    scaled = np.exp(table - top[:, None, None, :])  # (g, a, c, i); then / their sum, <= 1
    flat_scaled = scaled.reshape(flat.shape)
    total = flat_scaled[:, 0].copy()
    for k in range(1, flat.shape[1]):
        total += flat_scaled[:, k]
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled /= total[:, None, None, :]
    out = np.full((len(selections), n_bandwidths, table.shape[-1]), np.nan)
    for a in range(n_folds):
        mine = np.flatnonzero(sel_folds == a)
        # a selection scores all of fold a's rows or none of them
        scored = np.array([rows[mine[0]] if mine.size else False for rows, _ in selections])
        if not scored.any():
            continue
        allowed = np.array([allowed(a) for _, allowed in selections])[scored].astype(float)
        block = np.moveaxis(scaled[..., mine], 1, 0).reshape(n_folds, -1)
        sums = (allowed @ block).reshape(-1, n_bandwidths, 2, mine.size)
        n_train = allowed @ counts  # (selections, 2)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # one log of the ratio (a few ulps from the difference of the logs), except
            # where a sum is so small that the ratio could leave float range
            odds = np.log(sums[:, :, 1] / sums[:, :, 0])
            tiny = (sums[:, :, 1] < 1e-280) | (sums[:, :, 0] < 1e-280)
            if tiny.any():
                odds[tiny] = np.log(sums[:, :, 1][tiny]) - np.log(sums[:, :, 0][tiny])
        odds += (np.log(n_train[:, 0]) - np.log(n_train[:, 1]))[:, None, None] + log_prior_odds
        for into, odds_s in zip(np.flatnonzero(scored), odds, strict=True):
            out[into][:, mine] = odds_s
    return out


def _scott_index(bandwidths, n_train_per_class, n_features):
    """The candidate nearest (in log scale) to Scott's factor for ``n_train_per_class`` rows."""
    scott = max(n_train_per_class, 2) ** (-1.0 / (n_features + 4))
    return int(np.argmin(np.abs(np.log(bandwidths / scott))))


def crossfit_kde(Z, m, folds, n_folds, prior, *, rng, device="cpu"):
    """Held-out log odds of the plug-in KDE classifier: cross-fitted and forward-chained.

    Rows in folds ``0 … k−1`` (``k = n_folds``) are the cross-fit's subsample; rows in fold
    ``k`` (if any) are outside it. One kernel table (:func:`grouped_log_kernel_sums`) over
    every bandwidth candidate, for a random subset of at most ``SELECTION_ROWS`` rows of the
    subsample (the *selection rows*) against the subsample split by (fold, class), serves
    every bandwidth choice:

    * **cross-fit** (for the certified bound): fold ``j`` is scored by the KDEs on the other
      folds, at the bandwidth that the held-out criterion (:func:`select_bandwidth`) picks on
      the selection rows outside fold ``j``, scored by KDEs that leave out their own fold and
      fold ``j`` (nested: no label of fold ``j`` informs its classifier);
    * **forward chain** (for the exact p-value): fold ``j ≥ 1`` is scored by the KDEs on
      folds ``0 … j−1`` only, at the bandwidth picked by the same criterion on the selection
      rows of those folds, each scored by the KDEs on the others among them (for ``j = 1``,
      one fold, Scott's factor for its size); nothing of fold ``j`` or later enters;
    * rows outside the subsample (fold ``k``) are scored by the KDEs on the whole subsample at
      the bandwidth picked on all selection rows: their cross-fit and chain scores are equal.

    Then each fold's rows are summed once more at the one or two bandwidths chosen for them
    (the selection rows' sums are already in the table).

    Returns
    -------
    log_odds : ndarray of shape (n_samples,)
        Cross-fitted held-out log posterior odds.
    chained : ndarray of shape (n_samples,)
        Forward-chained log posterior odds; NaN on fold 0 (not tested).
    bandwidth : float
        The bandwidth picked on all selection rows (for the final fit), sphered units.
    n_train : int
        Training rows per class behind that choice (for rescaling to the full sample).
    """
    n_samples, n_features = Z.shape
    positions = np.flatnonzero(folds < n_folds)
    Zs, ms, fs = Z[positions], m[positions], folds[positions]
    fold_ids = np.arange(n_folds)
    counts = np.array([[np.sum((fs == a) & (ms == c)) for c in (0, 1)] for a in fold_ids])
    n_train = int(counts.sum(axis=0).min() * (n_folds - 1) / n_folds)
    bandwidths = bandwidth_grid(n_train, n_features)
    groups = 2 * fs + ms
    lam = np.log(prior / (1 - prior))

    sel = np.sort(rng.choice(len(positions), min(len(positions), SELECTION_ROWS), replace=False))
    kernel_sums = _kernel_table(Z, Zs, groups, 2 * n_folds, bandwidths, device)
    table = kernel_sums(Zs[sel])
    table = table.reshape(len(bandwidths), n_folds, 2, len(sel))
    sel_folds, sel_m = fs[sel], ms[sel]
    # the selections: all rows (for the final fit), each outer fold j left out (cross-fit),
    # and each prefix 0 … j−1 for j >= 2 (chain); a row is never scored by its own fold
    everything = np.ones(len(sel), bool)
    selections = [(everything, lambda a: fold_ids != a)]
    selections += [
        (sel_folds != j, lambda a, j=j: (fold_ids != a) & (fold_ids != j)) for j in fold_ids
    ]
    selections += [
        (sel_folds < j, lambda a, j=j: (fold_ids != a) & (fold_ids < j)) for j in fold_ids[2:]
    ]
    odds = _selection_log_odds(table, counts, sel_folds, selections, lam)
    rows = np.array([r for r, _ in selections])
    choices = select_bandwidth(odds, sel_m, prior, rows=rows)
    standard, outer = int(choices[0]), [int(c) for c in choices[1 : n_folds + 1]]
    first = _scott_index(bandwidths, counts[0].min(), n_features)
    chain = [None, first] + [int(c) for c in choices[n_folds + 1 :]]

    log_odds = np.empty(n_samples)
    chained = np.full(n_samples, np.nan)

    def score(own, bandwidth_of, fold_of, excluded_of, into, where):
        """``heldout_log_odds`` of many rows at once, each at its own fold's bandwidth.

        ``own(g, rows)`` gives the sums of ``rows`` at bandwidth ``g``; every step is per
        row (a row's value never depends on another row's), so one call does every fold.
        """
        if where.size == 0:
            return
        sums = np.empty((n_folds, 2, where.size))
        for g in np.unique(bandwidth_of):
            at = np.flatnonzero(bandwidth_of == g)
            sums[..., at] = own(g, at)
        excluded = excluded_of(fold_of[:, None], fold_ids[None, :])
        into[where] = heldout_log_odds(sums, counts, excluded, lam)

    # the selection rows' sums are in the table, at every candidate
    outer_of, chain_of = np.array(outer), np.array([-1] + chain[1:])
    tested = np.flatnonzero(sel_folds > 0)

    def in_table(g, at, rows=None):
        return table[g][..., at if rows is None else rows[at]]

    score(in_table, outer_of[sel_folds], sel_folds, np.equal, log_odds, positions[sel])
    score(
        lambda g, at: in_table(g, at, tested),
        chain_of[sel_folds[tested]],
        sel_folds[tested],
        np.less_equal,  # fold b is left out of row a's chain KDE where b >= a
        chained,
        positions[sel[tested]],
    )
    rest = np.ones(n_samples, dtype=bool)
    rest[positions[sel]] = False

    def sums(rows, g):
        one = kernel_sums(Z[rows], [g])
        return one[0].reshape(n_folds, 2, rows.size)

    # One pass per fold, over that fold's rows only, at the chain's bandwidth: a fold's chain
    # scores then come from a computation whose every input (its rows, its bandwidth, the
    # earlier folds' sums) is free of later folds' labels, to the last rounding (a block's
    # composition; the 1-D grid is laid out from every row's position, never a label, and
    # each group's part of it from that group's rows only). The cross-fit reuses it where it
    # chose the same. The log odds are then taken for every fold's rows at once (per row).
    own_chain, own_outer, rest_rows = [], [], []
    for j in fold_ids:
        rows_j = np.flatnonzero(rest & (folds == j))
        if rows_j.size == 0:
            continue
        own = sums(rows_j, chain[j] if j > 0 else outer[j])
        if j > 0:
            own_chain.append(own)
        if j > 0 and chain[j] != outer[j]:
            own = sums(rows_j, outer[j])
        own_outer.append(own)
        rest_rows.append(rows_j)
    if rest_rows:
        rest_rows = np.concatenate(rest_rows)
        rest_folds = folds[rest_rows]
        log_odds[rest_rows] = heldout_log_odds(
            np.concatenate(own_outer, axis=-1),
            counts,
            rest_folds[:, None] == fold_ids[None, :],
            lam,
        )
        later = rest_folds > 0
        if later.any():
            chained[rest_rows[later]] = heldout_log_odds(
                np.concatenate(own_chain, axis=-1),
                counts,
                rest_folds[later][:, None] <= fold_ids[None, :],
                lam,
            )
    outside = np.flatnonzero(folds >= n_folds)  # the last link: the classifier of all folds
    if outside.size:
        odds = heldout_log_odds(sums(outside, standard), counts, np.zeros(n_folds, bool), lam)
        log_odds[outside] = chained[outside] = odds
    return log_odds, chained, float(bandwidths[standard]), n_train


def crossfit_classifier(classifier, X, m, folds, n_folds):
    """Held-out log odds of ``classifier``: cross-fitted and forward-chained.

    Cross-fit: fold ``j`` is predicted by a clone fitted on the other folds (rows outside
    the subsample, fold ``k``, by one fitted on all folds). Forward chain: fold ``j ≥ 1`` is
    predicted by a clone fitted on folds ``0 … j−1`` only; where that fit fails (too few rows
    of a class in the prefix, a singular covariance), the fold's scores are constant, so its
    guesses in :func:`~sklearn_mace.estimation.forward_chained_p_value` are drawn at random —
    a fold is never dropped, which would make the test's reference law depend on the data.

    Returns
    -------
    log_odds, chained : ndarray of shape (n_samples,)
        As :func:`crossfit_kde` (``chained`` is NaN on fold 0).
    """
    log_odds = np.empty(len(X))
    chained = np.full(len(X), np.nan)
    in_folds = folds < n_folds
    for j in range(n_folds + 1):
        test = folds == j
        if not test.any():
            continue
        fitted = clone(classifier).fit(X[in_folds & ~test], m[in_folds & ~test])
        log_odds[test] = fitted.decision_function(X[test])
        if j == n_folds:  # fitted on folds 0 … k−1: also the chain's last link
            chained[test] = log_odds[test]
        elif j > 0:
            prefix = folds < j
            try:
                chain_fit = clone(classifier).fit(X[prefix], m[prefix])
                chained[test] = chain_fit.decision_function(X[test])
            except ValueError:
                chained[test] = 0.0
    return log_odds, chained
