"""Paired comparisons: two attacks, releases or models scored on the same target records.

"Is attack A stronger than B on these records?", "does release 2 leak less than release 1?"
Both are paired questions — the two scores of one record are dependent — and each test here
uses the pairing:

* :func:`delong_test` — difference in AUC, DeLong et al. (1988): the two AUCs are
  U-statistics over the same members × non-members, their joint variance comes from the
  structural components (placement values; Sun and Xu's midrank form, 2014). Asymptotic
  (normal), like every AUC interval in common use.
* :func:`tpr_at_fpr_test` — difference in TPR at a fixed low FPR. By default a paired
  bootstrap (members and non-members resampled apart, both scores of a record kept
  together) gives the standard error of the difference of the two empirical TPRs at their
  empirical thresholds, and a Wald test and interval; its validity argument is in the
  docstring (the estimator is a Hadamard-differentiable functional of the two empirical
  laws, for which the bootstrap is consistent). It holds its level on null pairs and
  detects TPR 0.40 against 0.30 at 10 % FPR (1 000 + 1 000 records) in most runs
  (``tests/metrics/test_paired.py``). With fewer than ten non-members allowed above the threshold
  (``n₀·fpr < 10``: the threshold is then an extreme order statistic, where the bootstrap
  fails) it falls back to an exact test: thresholds from the non-members only, the McNemar
  test from the members only, each threshold an order statistic of the non-member scores
  chosen so that its *true* FPR is on the known side of ``fpr`` with probability ``1 − γ``
  (the true FPR of the ``k``-th largest non-member score is ``Beta(k, n₀ − k + 1)``,
  whatever the score's law). That one is valid in finite samples but nearly powerless (no
  rejection in 20 runs of the planted case above): it must assume that the two thresholds
  err in opposite directions. A threshold fitted to reach ``fpr`` exactly on a calibration
  split, tested by McNemar as if it were fixed, is *not* valid: its true FPR varies by
  ``±√(f(1−f)/n₀)``, the TPRs follow, and it rejected 54 % of pairs of equally strong
  attacks at 5 % (500 + 500 records, fpr 1 %; the simulation is in
  ``tests/metrics/test_paired.py``).
* :func:`advantage_difference_test` — difference of the advantages of two held-out
  (certified) classifiers: McNemar's exact test weighted by the advantage's weights, and a
  conservative Wald interval.
* :func:`compare_audits` — all of them for several releases or models audited on the same
  targets, with Holm-adjusted p-values: a tidy table for a report.
"""

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy.stats import beta, binom, norm, rankdata
from sklearn.utils import check_random_state

from .._validation import check_prior, validate_membership
from ._membership import tpr_at_fpr

__all__ = [
    "advantage_difference_test",
    "compare_audits",
    "delong_test",
    "fpr_label",
    "tpr_at_fpr_test",
]


def fpr_label(fpr):
    """``tpr_at_1pct_fpr`` for 0.01: the one column stem of a TPR at a fixed FPR.

    The scorers, ``compare_attacks``, ``compare_audits`` and the reports share it; the
    paired-test columns add ``_diff``, ``_diff_low``, ``_diff_high``, ``_p``, ``_p_holm``.
    """
    return f"tpr_at_{100 * fpr:g}pct_fpr"


@dataclass(frozen=True)
class PairedTestResult:
    """A paired comparison of a metric between ``a`` and ``b`` on the same records.

    Attributes
    ----------
    value_a, value_b : float
        The metric of each (point estimates).
    difference : float
        ``value_a − value_b``.
    ci_low, ci_high : float
        Two-sided ``confidence`` interval for the true difference.
    p_value : float
        Two-sided p-value of "no difference".
    method : str
        How the interval and the p-value were obtained.
    """

    value_a: float
    value_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str

    def __post_init__(self):
        for name in ("value_a", "value_b", "difference", "ci_low", "ci_high", "p_value"):
            object.__setattr__(self, name, float(getattr(self, name)))


def _paired_inputs(y_true, score_a, score_b, names=("score_a", "score_b")):
    m = validate_membership(y_true, input_name="y_true")
    scores = []
    for name, score in zip(names, (score_a, score_b), strict=True):
        s = np.asarray(score, dtype=float).ravel()
        if s.shape != m.shape:
            raise ValueError(f"{name} has {s.size} values for {m.size} labels in y_true.")
        if not np.all(np.isfinite(s)):
            raise ValueError(f"{name} contains NaN or infinite values; scores must be finite.")
        scores.append(s)
    n1 = int(m.sum())
    if n1 < 2 or m.size - n1 < 2:
        raise ValueError(
            f"a paired comparison needs at least 2 members and 2 non-members; got {n1} and "
            f"{m.size - n1}."
        )
    return m, scores[0], scores[1]


def _check_confidence(confidence):
    return check_prior(confidence, name="confidence")


# --- AUC: DeLong -----------------------------------------------------------------------------


def _placements(m, score):
    """Structural components (DeLong): ``V10`` per member, ``V01`` per non-member.

    ``V10_i`` is the fraction of non-members a member outscores (ties count ½), ``V01_j`` the
    fraction of members that outscore a non-member; both have mean AUC. Midranks give them
    in ``O(n log n)`` (Sun and Xu, 2014).
    """
    members, others = score[m == 1], score[m == 0]
    n1, n0 = members.size, others.size
    ranks = rankdata(np.r_[members, others])
    v10 = (ranks[:n1] - rankdata(members)) / n0
    v01 = 1.0 - (ranks[n1:] - rankdata(others)) / n1
    return v10, v01


def delong_variance(y_true, score_a, score_b):
    """DeLong's covariance matrix of the two AUCs of scores on the same records.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Membership labels: 1 member, 0 or -1 non-member, or booleans.
    score_a, score_b : array-like of shape (n_samples,)
        Two scores of the same records, larger = more likely a member.

    Returns
    -------
    aucs : ndarray of shape (2,)
    covariance : ndarray of shape (2, 2)
        ``S10 / n₁ + S01 / n₀`` with ``S10``, ``S01`` the sample covariances (``ddof=1``)
        of the structural components over members and over non-members.

    Examples
    --------
    >>> from sklearn_mace.metrics._paired import delong_variance
    >>> aucs, cov = delong_variance([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1], [0.9, 0.8, 0.5, 0.1])
    >>> aucs.tolist()
    [0.75, 1.0]
    """
    m, a, b = _paired_inputs(y_true, score_a, score_b)
    parts = [_placements(m, s) for s in (a, b)]
    v10 = np.vstack([p[0] for p in parts])
    v01 = np.vstack([p[1] for p in parts])
    covariance = np.cov(v10) / v10.shape[1] + np.cov(v01) / v01.shape[1]
    return v10.mean(axis=1), covariance


def delong_test(y_true, score_a, score_b, *, confidence=0.95):
    """Paired test and interval for the difference in AUC of two scores (DeLong).

    ``z = (AUC_a − AUC_b) / se`` with ``se² = Var_a + Var_b − 2·Cov_ab`` from DeLong et al.'s
    structural components (:func:`delong_variance`): the variance of the difference of
    two correlated U-statistics on the same members and non-members. Normal p-value and
    Wald interval (clipped to [−1, 1]); asymptotic, checked for level on null pairs and for
    its variance against the closed form of the Mann–Whitney statistic
    (``tests/metrics/test_paired.py``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Membership labels: 1 member, 0 or -1 non-member, or booleans (at least 2 of each).
    score_a, score_b : array-like of shape (n_samples,)
        Two attacks' scores of the same records, larger = more likely a member.
    confidence : float in (0, 1), default=0.95
        Coverage of the two-sided interval.

    Returns
    -------
    result : PairedTestResult
        ``value_a``, ``value_b`` (the AUCs), ``difference``, ``ci_low``, ``ci_high``,
        ``p_value`` (two-sided) and ``method``.

    References
    ----------
    DeLong, DeLong and Clarke-Pearson, Biometrics 44 (1988); Sun and Xu, IEEE Signal
    Processing Letters 21 (2014).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.metrics import delong_test
    >>> rng = np.random.default_rng(0)
    >>> m = np.repeat([1, 0], 300)
    >>> strong, weak = 1.5 * m + rng.normal(size=600), 0.5 * m + rng.normal(size=600)
    >>> result = delong_test(m, strong, weak)
    >>> round(result.difference, 2), bool(result.p_value < 1e-6)
    (0.2, True)
    """
    confidence = _check_confidence(confidence)
    aucs, covariance = delong_variance(y_true, score_a, score_b)
    difference = float(aucs[0] - aucs[1])
    variance = float(covariance[0, 0] + covariance[1, 1] - 2.0 * covariance[0, 1])
    se = np.sqrt(max(variance, 0.0))
    if se == 0.0:  # identical rankings, or both AUCs at 0 or 1
        p_value = 1.0 if difference == 0.0 else 0.0
    else:
        p_value = float(2.0 * norm.sf(abs(difference) / se))
    half = norm.ppf(0.5 + confidence / 2.0) * se
    return PairedTestResult(
        float(aucs[0]),
        float(aucs[1]),
        difference,
        max(-1.0, difference - half),
        min(1.0, difference + half),
        p_value,
        "DeLong (asymptotic normal)",
    )


# --- TPR at a fixed FPR: exact thresholds and McNemar ------------------------------------------


def _cp_lower(k, n, level):
    return 0.0 if k == 0 else float(beta.ppf(level, k, n - k + 1))


def _cp_upper(k, n, level):
    return 1.0 if k == n else float(beta.ppf(1.0 - level, k + 1, n - k))


# Of a one-sided level u, the strict threshold may fail with probability 3u/8, the loose one
# with u/8 and the member comparison with u/2: the strict side is the one short of
# non-members (its failure chance is at least (1 − f)^n₀, e.g. 0.0066 for 500 at 1 %).
_STRICT_SHARE, _LOOSE_SHARE, _MEMBER_SHARE = 3 / 8, 1 / 8, 1 / 2


def _order_statistic_ranks(n0, fpr):
    """Failure chances of the rank-``k`` thresholds, ``k = 1 … n₀``, as FPR bounds on ``fpr``.

    The true FPR of "flag scores above the ``k``-th largest of ``n₀`` non-member scores" is
    at most ``U_(k) ~ Beta(k, n₀ − k + 1)``, and that of "flag scores at or above it" at
    least ``U_(k)`` (exactly ``U_(k)`` without ties), whatever the scores' law. Returns
    ``P(U_(k) > f) = P(Bin(n₀, f) < k)`` (increasing in ``k``: the strict rule's chance of
    an FPR above ``f``) and ``P(U_(k) ≤ f)`` (decreasing: the loose rule's chance of one at
    or below ``f``).
    """
    ks = np.arange(1, n0 + 1)
    return binom.cdf(ks - 1, n0, fpr), binom.sf(ks - 1, n0, fpr)


def _flags(members, others_desc, k, strict):
    """Members flagged by the rule at the ``k``-th largest non-member score."""
    if k is None:
        return np.zeros(members.size, dtype=bool)
    if k > others_desc.size:
        return np.ones(members.size, dtype=bool)
    threshold = others_desc[k - 1]
    return members > threshold if strict else members >= threshold


class _ThresholdComparison:
    """``first``'s strict rule against ``second``'s loose rule on the members, per level."""

    def __init__(self, m, first, second, fpr):
        self.strict_risk, self.loose_risk = _order_statistic_ranks(int(np.sum(m == 0)), fpr)
        self.members = first[m == 1], second[m == 1]
        self.others = -np.sort(-first[m == 0]), -np.sort(-second[m == 0])

    def counts(self, level):
        """``(n₁₀, n₀₁)`` (first only, second only), or None without a strict threshold.

        The strict rank is the largest ``k`` whose risk is at most ``3·level/8``; the loose
        rank the smallest whose risk is at most ``level/8`` (``n₀ + 1``, flag everything, if
        none).
        """
        k_strict = int(np.searchsorted(self.strict_risk, _STRICT_SHARE * level, side="right"))
        if k_strict == 0:
            return None
        below = np.flatnonzero(self.loose_risk <= _LOOSE_SHARE * level)
        k_loose = int(below[0]) + 1 if below.size else self.loose_risk.size + 1
        a = _flags(self.members[0], self.others[0], k_strict, strict=True)
        b = _flags(self.members[1], self.others[1], k_loose, strict=False)
        return int(np.sum(a & ~b)), int(np.sum(~a & b))

    def rejects(self, level):
        """Reject "first is no stronger" at one-sided ``level`` (monotone in ``level``)."""
        counts = self.counts(level)
        if counts is None or sum(counts) == 0:
            return False
        # McNemar's exact one-sided p-value: P(Bin(n₁₀ + n₀₁, ½) ≥ n₁₀)
        return binom.sf(counts[0] - 1, sum(counts), 0.5) <= _MEMBER_SHARE * level

    def p_value(self):
        """The smallest one-sided level that rejects (1 if none up to ½)."""
        if not self.rejects(0.5):
            return 1.0
        lo, hi = np.log(np.finfo(float).tiny), np.log(0.5)
        if self.rejects(np.exp(lo)):
            return float(np.exp(lo))
        for _ in range(60):  # bisection on log(level); relative precision ~1e-12
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if self.rejects(np.exp(mid)) else (mid, hi)
        return float(np.exp(hi))

    def lower_bound(self, level):
        """One-sided ``1 − level`` lower bound on ``ROC_first(f) − ROC_second(f)``."""
        counts = self.counts(level)
        if counts is None:
            return -1.0
        n1, cp = self.members[0].size, _MEMBER_SHARE * level / 2
        return _cp_lower(counts[0], n1, cp) - _cp_upper(counts[1], n1, cp)


def _exact_tpr_test(m, a, b, fpr, confidence):
    """The exact test (``method="exact"`` of :func:`tpr_at_fpr_test`), on validated inputs."""
    a_first, b_first = _ThresholdComparison(m, a, b, fpr), _ThresholdComparison(m, b, a, fpr)
    value_a, value_b = tpr_at_fpr(m, a, fpr=fpr), tpr_at_fpr(m, b, fpr=fpr)
    side = (1.0 - confidence) / 2.0
    return PairedTestResult(
        value_a,
        value_b,
        value_a - value_b,
        max(-1.0, a_first.lower_bound(side)),
        min(1.0, -b_first.lower_bound(side)),
        min(1.0, 2.0 * min(a_first.p_value(), b_first.p_value())),
        "exact: order-statistic thresholds (non-members), McNemar (members)",
    )


# --- TPR at a fixed FPR: the paired bootstrap --------------------------------------------------

#: the bootstrap needs at least this many non-members allowed above the threshold
#: (``⌊fpr·n₀⌋``); below, the threshold is an extreme order statistic and the exact test is used
MIN_NON_MEMBERS_ABOVE = 10
_BOOTSTRAP_CELLS = 4_000_000  # resampled records held at once (count arrays, int32)


def _allowed_false_positives(n0, fpr):
    """``k``, the most non-members a threshold of FPR at most ``fpr`` may flag (``k/n₀ ≤ fpr``)."""
    k = int(np.floor(fpr * n0))
    while (k + 1) / n0 <= fpr:
        k += 1
    while k > 0 and k / n0 > fpr:
        k -= 1
    return k


def _generator(random_state):
    """A NumPy ``Generator`` from scikit-learn's ``random_state`` forms (int, None, instances)."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, int | np.integer):
        return np.random.default_rng(random_state)
    return np.random.default_rng(check_random_state(random_state).randint(2**32 - 1))


def _resample_counts(rng, n, n_draws):
    """``(n_draws, n)`` bootstrap counts: how often each of ``n`` records is drawn, per row."""
    drawn = rng.integers(0, n, size=(n_draws, n)) + n * np.arange(n_draws)[:, None]
    counts = np.bincount(drawn.ravel(), minlength=n_draws * n).astype(np.int32, copy=False)
    return counts.reshape(n_draws, n)


class _ResampledTPR:
    """One attack's empirical TPR at FPR ``f`` on weighted (resampled) members and non-members.

    The rule of :func:`tpr_at_fpr`: flag the scores above the ``(k + 1)``-th largest
    non-member score, ``k = ⌊f·n₀⌋`` (ties at it are not flagged), so that at most ``k``
    non-members are flagged. With counts ``c`` (a record drawn ``c`` times), the
    ``(k + 1)``-th largest resampled non-member is where the counts, summed from the top
    score down, first reach ``k + 1``; the TPR is the members' count above it over ``n₁``.
    """

    def __init__(self, members, others, k):
        self.k = k
        # the (k + 1)-th largest of a resample lies among the top k + 1 + 8·√(k + 1) + 10
        # scores but with a chance below 1e-12; the rare draw beyond is counted in full
        self.window = min(others.size, k + 11 + int(np.ceil(8 * np.sqrt(k + 1))))
        self.others_order = np.argsort(-others, kind="stable")
        self.others_desc = others[self.others_order]
        self.members_order = np.argsort(-members, kind="stable")
        self.members_neg = -members[self.members_order]  # ascending
        self.n1 = members.size

    def __call__(self, member_counts, other_counts):
        top = self.others_order[: self.window]
        reached = np.cumsum(other_counts[:, top], axis=1, dtype=np.int32) >= self.k + 1
        position = np.argmax(reached, axis=1)
        short = ~reached[:, -1]  # the (k + 1)-th draw lies below the window: count them all
        if short.any():
            every = np.cumsum(other_counts[short][:, self.others_order], axis=1, dtype=np.int32)
            position[short] = np.argmax(every >= self.k + 1, axis=1)
        threshold = self.others_desc[position]
        above = np.searchsorted(self.members_neg, -threshold, side="left")  # scores > threshold
        flagged = np.cumsum(member_counts[:, self.members_order], axis=1, dtype=np.int32)
        count = np.take_along_axis(flagged, np.maximum(above - 1, 0)[:, None], axis=1)[:, 0]
        return np.where(above > 0, count, 0) / self.n1


def _bootstrap_tpr_differences(m, a, b, k, n_bootstrap, rng):
    """``n_bootstrap`` paired bootstrap draws of ``TPR_a − TPR_b`` (members, non-members apart)."""
    tprs = [_ResampledTPR(s[m == 1], s[m == 0], k) for s in (a, b)]
    n1, n0 = int(np.sum(m == 1)), int(np.sum(m == 0))
    chunk = max(1, _BOOTSTRAP_CELLS // max(n1, n0))
    draws = []
    for start in range(0, n_bootstrap, chunk):
        size = min(chunk, n_bootstrap - start)
        counts = _resample_counts(rng, n1, size), _resample_counts(rng, n0, size)
        draws.append(tprs[0](*counts) - tprs[1](*counts))
    return np.concatenate(draws)


def tpr_at_fpr_test(
    y_true,
    score_a,
    score_b,
    *,
    fpr=0.01,
    confidence=0.95,
    method="auto",
    n_bootstrap=2000,
    random_state=0,
):
    """Paired test and interval for the difference in TPR at a fixed FPR.

    The quantity is ``θ = ROC_a(f) − ROC_b(f)``, ``ROC(f)`` the TPR of the threshold rule
    whose false-positive rate is ``f`` (the largest TPR with FPR at most ``f``, which
    :func:`tpr_at_fpr` estimates); the estimate ``θ̂`` is the difference of the two
    :func:`tpr_at_fpr`, each at its own empirical threshold, the ``(k + 1)``-th largest
    non-member score with ``k = ⌊f·n₀⌋``.

    **The paired bootstrap** (``method="bootstrap"``): the members and the non-members are
    resampled apart (stratified), with replacement, each record keeping both of its scores,
    and ``θ̂`` is recomputed on each of ``n_bootstrap`` resamples — thresholds included, so
    the draws carry the thresholds' own noise and its correlation between the two attacks
    (the same non-members set both). The test is Wald's, ``z = θ̂ / se*`` with ``se*`` the
    draws' standard deviation, the interval ``θ̂ ± z_{(1+c)/2}·se*``. Why it holds its level
    (asymptotically, as DeLong's test does): ``θ̂ = φ(F̂₁, F̂₀)``, a map of the empirical
    laws of the members and of the non-members (each bivariate: both scores), through the
    non-members' ``(1 − f)``-quantiles and the members' tails at them. Where each score's
    non-member law has a positive continuous density at its quantile and its member law is
    continuous there, ``φ`` is Hadamard-differentiable (quantile map, van der Vaart 1998,
    Lemma 21.4, and the chain rule, Thm. 20.9), so ``θ̂`` is asymptotically normal with a
    variance made of a member part and a threshold part — including the covariance of the
    two thresholds, which the exact test below must bound in the worst case — and the
    bootstrap of ``θ̂`` is consistent (van der Vaart, Thm. 23.9); ``θ̂`` is bounded, so the
    bootstrap variance converges too and the Wald test has level ``α`` in the limit. Checked
    on 1 000 null pairs each (equally strong attacks; ``benchmarks/bench_paired_tpr.py``):
    52 and 44 rejections at 5 % for normal scores at 10 % and 1 % FPR (1 000 + 1 000
    records), 39, 34 and 18 for Cauchy, log-normal and 6-valued scores (500 + 500, 10 %);
    the planted TPR 0.40 against 0.30 at 10 % FPR (1 000 + 1 000) is detected in 186 of 200
    runs (attacks correlated 0.5; 170 independent), the exact test in 3 of 100, DeLong's
    AUC test in 200 (``tests/metrics/test_paired.py`` asserts reduced versions). The argument needs
    an intermediate quantile: ``k`` must grow with ``n₀``. With fewer than
    :data:`MIN_NON_MEMBERS_ABOVE` (10) non-members allowed above the threshold, or when
    every draw gives the same difference (no spread to estimate, e.g. both TPRs always 0),
    ``method="auto"`` uses the exact test.

    **The exact test** (``method="exact"``): the non-members choose thresholds, the members
    are compared (McNemar), so the two steps see independent records. At a one-sided level
    ``u``:

    * ``a``'s *strict* threshold is the ``k``-th largest non-member score with the largest
      ``k`` such that its true FPR exceeds ``f`` with probability at most ``3u/8``; ``b``'s
      *loose* one the smallest ``k`` whose rule (ties flagged) has true FPR ``≤ f`` with
      probability at most ``u/8`` (order statistics of uniforms: exact for any score law);
    * if ``ROC_a(f) ≤ ROC_b(f)``, then outside those two events ``a``'s strict rule catches
      a member no more often than ``b``'s loose rule, so McNemar's exact one-sided test on
      the members (discordant pairs, binomial ½) at level ``u/2`` completes a level-``u``
      test of "``a`` is no stronger". Raising ``u`` loosens both thresholds and the
      McNemar level, so the rejections are nested and the p-value is the smallest ``u``
      that rejects; likewise for "``b`` is no stronger", and the two-sided p-value is twice
      the smaller of the two;
    * the interval's lower end is ``CP_lo(n₁₀) − CP_up(n₀₁)`` (Clopper–Pearson, ``u/4``
      each, ``u = (1 − confidence)/2``) for ``a`` strict against ``b`` loose; the upper
      end the same with ``a`` and ``b`` swapped.

    Valid in finite samples, but very conservative: the rules compared have true FPRs on
    either side of ``f`` (roughly ``f ± 2.5·√(f/n₀)``), the price of not knowing the
    non-members' law. It needs non-members: no p-value falls below
    ``2·(8/3)·(1 − f)^n₀`` — 0.035 for 500 at ``f = 1 %``, 2e-4 for 1 000; with fewer than
    ``log(3α/16)/log(1 − f)`` of them (``α = 1 − confidence``; 465 at 1 % and 95 %) the
    interval is ``[−1, 1]``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Membership labels: 1 member, 0 or -1 non-member, or booleans (at least 2 of each).
    score_a, score_b : array-like of shape (n_samples,)
        Two attacks' scores of the same records, larger = more likely a member.
    fpr : float in (0, 1), default=0.01
        The false-positive rate ``f``.
    confidence : float in (0, 1), default=0.95
        Coverage of the two-sided interval.
    method : {"auto", "bootstrap", "exact"}, default="auto"
        ``"auto"``: the bootstrap where its conditions hold (at least 10 non-members allowed
        above the threshold, a spread of draws), else the exact test; ``result.method`` says
        which ran.
    n_bootstrap : int >= 100, default=2000
        Bootstrap draws (their standard deviation is within about ``1/√(2·n_bootstrap)``,
        1.6 %, of its limit).
    random_state : int, RandomState or Generator instance, or None, default=0
        Seed of the resampling (fixed by default, as ``permutation_test_score``'s, so that
        a table is reproducible).

    Returns
    -------
    result : PairedTestResult
        ``value_a``, ``value_b`` (:func:`tpr_at_fpr` of each), ``difference``, ``ci_low``,
        ``ci_high``, ``p_value`` (two-sided) and ``method``.

    References
    ----------
    Efron and Tibshirani, An Introduction to the Bootstrap (1993), ch. 6 and 12; van der
    Vaart, Asymptotic Statistics (1998), ch. 20–23; McNemar, Psychometrika 12 (1947);
    Clopper and Pearson, Biometrika 26 (1934); Carlini et al., IEEE S&P 2022 (TPR at low
    FPR).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.metrics import tpr_at_fpr_test
    >>> rng = np.random.default_rng(0)
    >>> m = np.repeat([1, 0], 1000)
    >>> x = rng.normal(size=2000)  # the record's own part, seen by both attacks
    >>> a = 1.03 * m + (x + rng.normal(size=2000)) / np.sqrt(2)  # TPR 0.40 at 10 % FPR
    >>> b = 0.76 * m + (x + rng.normal(size=2000)) / np.sqrt(2)  # TPR 0.30
    >>> result = tpr_at_fpr_test(m, a, b, fpr=0.1)
    >>> round(result.difference, 3), bool(result.p_value < 0.05), result.method[:17]
    (0.082, True, 'paired bootstrap ')
    """
    confidence = _check_confidence(confidence)
    fpr = check_prior(fpr, name="fpr")
    if method not in ("auto", "bootstrap", "exact"):
        raise ValueError(f"method must be 'auto', 'bootstrap' or 'exact'; got {method!r}.")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int | np.integer):
        raise ValueError(f"n_bootstrap must be an integer >= 100; got {n_bootstrap!r}.")
    if n_bootstrap < 100:
        raise ValueError(f"n_bootstrap must be an integer >= 100; got {n_bootstrap!r}.")
    m, a, b = _paired_inputs(y_true, score_a, score_b)
    k = _allowed_false_positives(int(np.sum(m == 0)), fpr)
    if method == "exact" or (method == "auto" and k < MIN_NON_MEMBERS_ABOVE):
        return _exact_tpr_test(m, a, b, fpr, confidence)
    draws = _bootstrap_tpr_differences(m, a, b, k, int(n_bootstrap), _generator(random_state))
    se = float(np.std(draws, ddof=1))
    if se == 0.0 and method == "auto":
        return _exact_tpr_test(m, a, b, fpr, confidence)
    value_a, value_b = tpr_at_fpr(m, a, fpr=fpr), tpr_at_fpr(m, b, fpr=fpr)
    difference = value_a - value_b
    # no spread in the draws (only when forced): nothing is known, the interval is [-1, 1]
    half = norm.isf((1.0 - confidence) / 2.0) * se if se > 0.0 else np.inf
    p_value = 1.0 if se == 0.0 else float(2.0 * norm.sf(abs(difference) / se))
    return PairedTestResult(
        value_a,
        value_b,
        difference,
        max(-1.0, difference - half),
        min(1.0, difference + half),
        p_value,
        f"paired bootstrap ({n_bootstrap} draws, members and non-members resampled apart), "
        "Wald with the bootstrap standard error",
    )


# --- certified advantages of two audits on the same targets ------------------------------------


def _weighted_mcnemar_p_value(discordant, observed, weights):
    """Exact two-sided p-value of ``T = Σ_c w_c·(2·K_c − d_c)``, ``K_c ~ Bin(d_c, ½)``.

    ``discordant`` are the ``d_c`` of the two classes, ``observed`` their ``n₁₀``,
    ``weights`` the ``w_c``: the law of the weighted McNemar statistic when, in each class,
    a discordant record is as likely to favour either audit. ``P(|T| ≥ |t|)``, summed over
    the members' count with the non-members' two tails in closed form.
    """
    (d1, d0), (w1, w0) = discordant, weights
    t = abs(w1 * (2 * observed[0] - d1) + w0 * (2 * observed[1] - d0))
    t *= 1 - 1e-9  # values equal to the observed one count (rounding)
    k1 = np.arange(d1 + 1)
    pmf = binom.pmf(k1, d1, 0.5)
    rest = w1 * (2 * k1 - d1)
    if d0 == 0:
        return float(min(1.0, pmf[np.abs(rest) >= t].sum()))
    # w0·(2K − d0) ≥ t − rest  ⇔  K ≥ (d0 + (t − rest)/w0)/2; and ≤ −t − rest likewise
    upper = np.ceil((d0 + (t - rest) / w0) / 2 - 1e-9)
    lower = np.floor((d0 + (-t - rest) / w0) / 2 + 1e-9)
    tails = binom.sf(upper - 1, d0, 0.5) + binom.cdf(lower, d0, 0.5)
    return float(min(1.0, np.sum(pmf * np.minimum(tails, 1.0))))


def advantage_difference_test(y_true, guess_a, guess_b, *, prior=None, confidence=0.95):
    """Paired test and interval for the difference of two held-out advantages.

    Two audits of the same targets — two releases, or two models — each give a held-out
    guess per target (e.g. ``KDEAdvantageEstimator.crossfit_decision_ > 0``, the
    classifier behind ``advantage_lower_bound_``). The quantity is the difference of the
    two classifiers' advantages at ``prior`` (MACE Def. 1),
    ``Adv = 2·(p·TPR + (1 − p)·TNR) − 1``: with ``w₁ = 2p/n₁`` per member and
    ``w₀ = 2(1 − p)/n₀`` per non-member, ``Adv_a − Adv_b`` is estimated by
    ``Σ_c w_c·(n₁₀,c − n₀₁,c)``, ``n₁₀,c`` the targets of class ``c`` that ``a`` gets right
    and ``b`` wrong.

    * **p-value** — McNemar's exact test, weighted: given the discordant targets of each
      class, each favours either audit with probability ½ when the two audits have the
      same TPR and the same TNR (as two releases drawn the same way do), so the statistic's
      law is a weighted sum of two binomials, computed exactly. When the audits differ
      only in a trade-off (TPR against TNR) that leaves the advantage equal, that law is
      wider than the statistic's and the test is conservative.
    * **interval** — ``Δ ± z·√(Σ_c w_c²·(n₁₀,c + n₀₁,c))``: the McNemar variance, never
      below the paired-difference one, so the interval is conservative (asymptotic:
      covered the truth in at least 95 % of 100 simulated audits of 250 + 250 targets,
      ``tests/metrics/test_paired.py``).

    Each held-out advantage is what :func:`~sklearn_mace.estimation.certified_advantage`
    bounds from below, and it is at most the optimal advantage of its release; the
    difference is the difference of *these classifiers'* advantages, not of the optimal
    ones (which no finite audit bounds from above). Reported beside the two certified
    bounds, the three statements hold jointly with probability at least
    ``1 − 3·(1 − confidence)`` (Bonferroni).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Membership labels of the targets: 1 member, 0 or -1 non-member, or booleans.
    guess_a, guess_b : array-like of bool of shape (n_samples,)
        Held-out membership guesses of the two audits for the same targets.
    prior : float in (0, 1), default=None
        ``p``; None uses the fraction of members in ``y_true``.
    confidence : float in (0, 1), default=0.95
        Coverage of the two-sided interval.

    Returns
    -------
    result : PairedTestResult
        ``value_a``, ``value_b`` (the two held-out advantages), ``difference``,
        ``ci_low``, ``ci_high``, ``p_value`` (two-sided) and ``method``.

    References
    ----------
    McNemar, Psychometrika 12 (1947); MACE (Pan et al., TMLR 2023), Def. 1.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.metrics import advantage_difference_test
    >>> rng = np.random.default_rng(0)
    >>> m = np.repeat([1, 0], 500)
    >>> leaky = rng.random(1000) < np.where(m == 1, 0.7, 0.3)  # TPR 0.7, TNR 0.7
    >>> safe = rng.random(1000) < 0.5  # guesses at random
    >>> result = advantage_difference_test(m, leaky, safe)
    >>> round(result.difference, 2), round(result.ci_low, 2), bool(result.p_value < 1e-6)
    (0.42, 0.33, True)
    """
    confidence = _check_confidence(confidence)
    m = validate_membership(y_true, input_name="y_true")
    guesses = []
    for name, g in (("guess_a", guess_a), ("guess_b", guess_b)):
        g = np.asarray(g)
        if g.shape != m.shape or not (g.dtype == bool or np.isin(g, (0, 1)).all()):
            raise ValueError(f"{name} must hold one boolean guess per label of y_true.")
        guesses.append(g.astype(bool))
    n1 = int(m.sum())
    if n1 == 0 or n1 == m.size:
        raise ValueError("y_true needs both members and non-members.")
    prior = float(m.mean()) if prior is None else check_prior(prior)
    weights = (2.0 * prior / n1, 2.0 * (1.0 - prior) / (m.size - n1))
    values, discordant, observed, variance, difference = [], [], [], 0.0, 0.0
    for g in guesses:
        tpr, tnr = np.mean(g[m == 1]), np.mean(~g[m == 0])
        values.append(float(2.0 * (prior * tpr + (1.0 - prior) * tnr) - 1.0))
    for cls, w in zip((1, 0), weights, strict=True):
        right_a, right_b = guesses[0][m == cls] == cls, guesses[1][m == cls] == cls
        n10, n01 = int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b))
        discordant.append(n10 + n01)
        observed.append(n10)
        variance += w * w * (n10 + n01)
        difference += w * (n10 - n01)
    half = norm.ppf(0.5 + confidence / 2.0) * np.sqrt(variance)
    return PairedTestResult(
        values[0],
        values[1],
        values[0] - values[1],
        max(-2.0, difference - half),
        min(2.0, difference + half),
        _weighted_mcnemar_p_value(discordant, observed, weights),
        "McNemar, weighted (exact p-value); Wald interval with McNemar's variance",
    )


# --- several releases or models: a tidy table ------------------------------------------------


def holm_adjust(p_values):
    """Holm's step-down adjusted p-values (familywise error over all of them).

    Parameters
    ----------
    p_values : array-like of shape (n_tests,)

    Returns
    -------
    adjusted : ndarray of shape (n_tests,)

    Examples
    --------
    >>> from sklearn_mace.metrics._paired import holm_adjust
    >>> holm_adjust([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    stepped = np.maximum.accumulate((p.size - np.arange(p.size)) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def compare_audits(
    analyses, *, baseline=None, threshold=0.0, prior=None, fpr=0.01, confidence=0.95
):
    """Paired comparisons of several releases or models audited on the same targets.

    For each pair of analyses (or each against ``baseline``) and each metric — the
    held-out advantage (:func:`advantage_difference_test`, guesses ``scores > threshold``),
    the AUC (:func:`delong_test`) and the TPR at ``fpr`` (:func:`tpr_at_fpr_test`) — one
    row with both values, the difference, its interval and p-value, and the Holm-adjusted
    p-value over every test of the table (``family_size`` of them): reject where
    ``p_value_holm ≤ α`` and the familywise error is at most ``α``. The intervals are each
    at ``confidence`` (not simultaneous); all of them hold together with probability at
    least ``1 − family_size·(1 − confidence)``.

    Parameters
    ----------
    analyses : dict of str -> (membership, scores)
        One entry per release or model: the targets' membership labels (the same targets,
        in the same order, for every entry) and their held-out scores, larger = more
        likely a member — for the certified audit, ``KDEAdvantageEstimator``'s
        ``crossfit_decision_`` (held-out log posterior odds, whose sign is the guess behind
        ``advantage_lower_bound_``).
    baseline : str, default=None
        Compare every other analysis with this one; None compares every pair.
    threshold : float, default=0.0
        Guess "member" where ``scores > threshold`` (0 for log posterior odds).
    prior : float in (0, 1), default=None
        Prior of the advantage; None uses the fraction of members.
    fpr : float in (0, 1), default=0.01
        The FPR of the TPR comparison.
    confidence : float in (0, 1), default=0.95
        Coverage of each interval.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``a, b, metric, value_a, value_b, difference, ci_low, ci_high, p_value,
        p_value_holm, family_size, n_members, n_non_members, method``; ``metric`` is
        ``"advantage"``, ``"auc"`` or ``"tpr_at_<100·fpr>pct_fpr"`` (``tpr_at_1pct_fpr``
        for 1 %, the stem of :func:`fpr_label` that every table uses).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.metrics import compare_audits
    >>> rng = np.random.default_rng(0)
    >>> m = np.repeat([1, 0], 1000)
    >>> x = rng.normal(size=2000)  # the targets themselves, seen by both audits
    >>> odds = {"release 1": 1.5 * m + x + rng.normal(size=2000) - 0.75,
    ...         "release 2": x + rng.normal(size=2000)}
    >>> table = compare_audits({k: (m, v) for k, v in odds.items()})
    >>> table[["metric", "value_a", "value_b", "p_value_holm"]].round(3)
                metric  value_a  value_b  p_value_holm
    0        advantage    0.385   -0.011         0.000
    1              auc    0.757    0.495         0.000
    2  tpr_at_1pct_fpr    0.080    0.010         0.001
    """
    import pandas as pd

    if not isinstance(analyses, dict) or len(analyses) < 2:
        raise ValueError("analyses must be a dict of at least two name -> (membership, scores).")
    if baseline is not None and baseline not in analyses:
        raise ValueError(f"baseline {baseline!r} is not one of {sorted(analyses)}.")
    labels, scores = {}, {}
    for name, value in analyses.items():
        if not isinstance(value, tuple | list) or len(value) != 2:
            raise ValueError(f"analyses[{name!r}] must be a pair (membership, scores).")
        labels[name] = validate_membership(value[0], input_name=f"membership of {name!r}")
        scores[name] = np.asarray(value[1], dtype=float).ravel()
    first = next(iter(labels.values()))
    for name, m in labels.items():
        if m.shape != first.shape or not np.array_equal(m, first):
            raise ValueError(
                f"analyses[{name!r}] has other membership labels than the first analysis: "
                "paired comparisons need the same targets, in the same order, in every one."
            )
    names = list(analyses)
    pairs = (
        [(baseline, n) for n in names if n != baseline]
        if baseline is not None
        else list(combinations(names, 2))
    )
    rows = []
    for a, b in pairs:
        tests = {
            "advantage": advantage_difference_test(
                first,
                scores[a] > threshold,
                scores[b] > threshold,
                prior=prior,
                confidence=confidence,
            ),
            "auc": delong_test(first, scores[a], scores[b], confidence=confidence),
            fpr_label(fpr): tpr_at_fpr_test(
                first, scores[a], scores[b], fpr=fpr, confidence=confidence
            ),
        }
        for metric, result in tests.items():
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "metric": metric,
                    "value_a": result.value_a,
                    "value_b": result.value_b,
                    "difference": result.difference,
                    "ci_low": result.ci_low,
                    "ci_high": result.ci_high,
                    "p_value": result.p_value,
                    "method": result.method,
                }
            )
    table = pd.DataFrame(rows)
    table.insert(9, "p_value_holm", holm_adjust(table["p_value"]))
    table.insert(10, "family_size", len(table))
    table.insert(11, "n_members", int(first.sum()))
    table.insert(12, "n_non_members", int(first.size - first.sum()))
    return table


def paired_test_columns(y_true, scores, *, reference, fpr=(0.01,), confidence=0.95):
    """Each attack against ``reference``: the columns ``compare_attacks(test=…)`` adds.

    Parameters
    ----------
    y_true : ndarray of shape (n_samples,)
        Membership, 1 member and 0 non-member.
    scores : dict of str -> ndarray of shape (n_samples,)
        Each attack's scores of the same records.
    reference : str
        The attack every other one is compared with.
    fpr : sequence of float, default=(0.01,)
        FPRs of the TPR comparisons.
    confidence : float in (0, 1), default=0.95
        Coverage of each interval.

    Returns
    -------
    columns : pandas.DataFrame
        Indexed by attack (the reference's row is NaN): for ``auc`` and each
        ``tpr_at_…_fpr``, ``<metric>_diff`` (attack − reference), ``<metric>_diff_low``,
        ``<metric>_diff_high``, ``<metric>_p`` and ``<metric>_p_holm`` (Holm over every
        p-value of the table).
    """
    import pandas as pd

    metrics = ["auc", *(fpr_label(f) for f in fpr)]
    others = [name for name in scores if name != reference]
    rows = {}
    for name in others:
        results = [delong_test(y_true, scores[name], scores[reference], confidence=confidence)]
        results += [
            tpr_at_fpr_test(y_true, scores[name], scores[reference], fpr=f, confidence=confidence)
            for f in fpr
        ]
        rows[name] = {}
        for metric, result in zip(metrics, results, strict=True):
            rows[name].update(
                {
                    f"{metric}_diff": result.difference,
                    f"{metric}_diff_low": result.ci_low,
                    f"{metric}_diff_high": result.ci_high,
                    f"{metric}_p": result.p_value,
                }
            )
    columns = pd.DataFrame.from_dict(rows, orient="index")
    p_names = [f"{metric}_p" for metric in metrics]
    adjusted = holm_adjust(columns[p_names].to_numpy().ravel()).reshape(len(others), -1)
    for j, name in enumerate(p_names):
        columns[f"{name}_holm"] = adjusted[:, j]
    order = [
        f"{metric}{suffix}"
        for metric in metrics
        for suffix in ("_diff", "_diff_low", "_diff_high", "_p", "_p_holm")
    ]
    return columns[order].reindex(list(scores))
