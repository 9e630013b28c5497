"""A two-tail rank test of a DP claim, calibrated on the claim's worst-case pair of outputs.

Runs with the target score ``X_1..X_n`` (law ``P``), runs without it ``Y_1..Y_m`` (law
``Q``), all independent; ties are broken by independent uniform keys (a randomized test of
one output, so ``P`` and ``Q`` may be taken continuous). With ranks ``k_high`` and ``k_low``
fixed before looking, the statistic is

``T = #{members above the (k_high + 1)-th highest non-member}
+ #{non-members below the (k_low + 1)-th lowest member}``

(either part may be left out). Why it is valid, in four steps:

1. *Quantile coupling.* Write ``X_i = F_P⁻¹(U_i)`` and ``V_j = F_Q(Y_j)`` with ``U, V``
   independent uniforms. ``X_i > Y_j`` exactly when ``W_i > V_j`` with ``W_i = h(U_i)``,
   ``h = F_Q ∘ F_P⁻¹``: ``T`` is a function ``τ(W, V)`` of the members' positions in the
   non-members' law, non-decreasing in every ``W_i`` and non-increasing in every ``V_j``
   (raising a member raises the first count and the member threshold of the second).
2. *The claim bounds h.* For ``S = {score ≤ F_P⁻¹(u)}``, ``P(S) = u`` and ``Q(S) = h(u)``;
   (ε, δ)-DP gives ``Q(S) ≤ e^ε·P(S) + δ`` and ``P(Sᶜ) ≤ e^ε·Q(Sᶜ) + δ``, so
   ``h(u) ≤ h*_ε(u) = min(1, e^ε·u + δ, 1 − e^−ε·(1 − u − δ))`` — the curve of the
   randomized-response pair, which is itself (ε, δ)-DP (Kairouz, Oh & Viswanath 2015).
3. *Worst case.* With the same ``U, V``, ``τ(h(U), V) ≤ τ(h*_ε(U), V)``: under the claim
   ``T`` is stochastically smaller than ``T*_ε``, its law on that extremal pair, which
   depends on nothing unknown.
4. *Monte Carlo test, inverted.* ``B`` draws of ``(U, V)``, from a seed independent of the
   runs, give ``T*_b(θ)`` for every θ at once: ``T*_b(θ) = #{entry times < θ}``, where a
   member's entry time is the least θ with ``h*_θ(U_i)`` above the non-members' threshold
   and a non-member's the least θ with ``V_j`` below ``h*_θ`` of the members' (closed
   forms below), so ``T*_b`` is non-decreasing in θ. The p-value
   ``(1 + #{b : T*_b(θ) ≥ T})/(B + 1)`` is valid for a null law that stochastically
   dominates ``T`` (Barnard 1963; it is a non-increasing function of ``T``) and
   non-decreasing in θ, so the claims it rejects at ``α`` are an interval ``[0, ε̂]`` with
   ``ε̂`` the ``⌊α(B + 1)⌋``-th smallest over the draws of the ``T``-th smallest entry
   time; ``P[ε̂ > ε] ≤ P[p(ε) ≤ α] ≤ α`` for an (ε, δ)-DP mechanism.

One test at ``α`` on both tails replaces the two Clopper–Pearson bounds at ``α/2`` of a
threshold rule (whose errors add), and the ranks fixed in advance need no selection runs.

**μ-GDP claims** (``family="gaussian"``; Dong, Roth & Su 2022, Def. 2.6 and Eq. (2.3)): the
same four steps with another worst case. Step 2: μ-GDP says every test of ``P`` against
``Q`` has type II error at least ``G_μ(type I) = Φ(Φ⁻¹(1 − type I) − μ)``; the test that
rejects ``P`` on ``S = {score ≤ F_P⁻¹(u)}`` has type I ``u`` and type II ``1 − h(u)``, so
``h(u) ≤ 1 − G_μ(u) = Φ(Φ⁻¹(u) + μ) = h*_μ(u)`` (``G_μ`` is symmetric, so the reverse test
gives the same bound) — the curve of the Gaussian pair ``N(μ, 1)`` (with the target) against
``N(0, 1)`` (without), itself exactly μ-GDP. Step 3: ``T`` is stochastically below its law on
that pair. Step 4: ``h*_μ(u) > level ⟺ μ > Φ⁻¹(level) − Φ⁻¹(u)``, so with the draws taken as
normal quantiles ``z = Φ⁻¹(u)`` (standard normals, drawn directly) a member's entry time is
``z_level − z_i`` and a non-member's ``z_j − z_x``, clipped at 0: non-decreasing in μ again,
so the rejected claims are an interval ``[0, μ̂]`` and ``P[μ̂ > μ] ≤ α`` for a μ-GDP
mechanism. The ranks are fixed before the scores are seen (they depend on the sample sizes
only), so no run is spent choosing them; several ranks are several tests, combined by
Bonferroni (:func:`rank_grid_epsilon`).
"""

from functools import partial

import numpy as np

__all__ = []

#: The worst-case pairs: ``"dp"``, the randomized-response pair of (ε, δ)-DP; ``"gaussian"``,
#: the Gaussian pair of μ-GDP.
FAMILIES = ("dp", "gaussian")


def _entry_times(u, level, delta):
    """Least θ ≥ 0 with ``h*_θ(u) > level``, ``h*_θ(u) = min(1, e^θ·u + δ, 1 − e^−θ·(1 − u − δ))``
    (closed forms of the two pieces; a piece already above ``level`` at every θ gives 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(level > delta, np.log((level - delta) / u), -np.inf)
        rest = 1.0 - u - delta
        second = np.where(rest > 0, np.log(rest / (1.0 - level)), -np.inf)
    return np.maximum(0.0, np.maximum(first, second))


def _gaussian_entry_times(z, level):
    """Least μ ≥ 0 with ``Φ(z + μ) > Φ(level)``, in normal quantiles: ``level − z``, clipped
    at 0 (``h*_μ(u) = Φ(Φ⁻¹(u) + μ)``, the Gaussian pair's curve)."""
    return np.maximum(0.0, level - z)


def _worst_case(family, delta):
    """``(draw, entry)`` of the claim's extremal pair: how one draw's positions are drawn
    (uniforms for (ε, δ)-DP, their normal quantiles for μ-GDP) and the entry-time function
    ``entry(u, level)`` on that scale."""
    if family == "gaussian":
        return _draw_normal, _gaussian_entry_times
    if family != "dp":
        raise ValueError(f"family must be one of {FAMILIES}; got {family!r}.")
    return _draw_uniform, partial(_entry_times, delta=delta)


def _draw_uniform(rng, shape):
    return rng.random(shape)


def _draw_normal(rng, shape):
    return rng.standard_normal(shape)


def rank_statistic(members, nonmembers, k_high, k_low, rng):
    """``T`` of the module docstring; ``k_high``/``k_low`` None leaves that part out. Ties
    are broken by uniform keys drawn from ``rng`` (independent of the scores)."""
    members, nonmembers = np.asarray(members, float), np.asarray(nonmembers, float)
    key1, key0 = rng.random(members.size), rng.random(nonmembers.size)
    total = 0
    if k_high is not None:
        top = np.lexsort((key0, nonmembers))[::-1][k_high]
        s, u = nonmembers[top], key0[top]
        total += int(np.sum((members > s) | ((members == s) & (key1 > u))))
    if k_low is not None:
        bottom = np.lexsort((key1, members))[k_low]
        s, u = members[bottom], key1[bottom]
        total += int(np.sum((nonmembers < s) | ((nonmembers == s) & (key0 < u))))
    return total


def _pair_entries(U, V, pairs, entry):
    """Per pair, every run's entry time in each draw (rows: draws), unsorted."""
    m = V.shape[1]
    high, low = {}, {}  # the members' entries per k_high, the non-members' per k_low
    for k_high, k_low in pairs:
        if k_high is not None and k_high not in high:
            level = np.partition(V, m - k_high - 1, axis=1)[:, m - k_high - 1 : m - k_high]
            high[k_high] = entry(U, level)
        if k_low is not None and k_low not in low:
            x = np.partition(U, k_low, axis=1)[:, k_low : k_low + 1]
            low[k_low] = entry(x, V)
    out = []
    for k_high, k_low in pairs:
        parts = [high[k_high]] if k_high is not None else []
        parts += [low[k_low]] if k_low is not None else []
        out.append(np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0])
    return out


def _entry_statistics(U, V, pairs, entry, ts):
    """Per pair, the ``t``-th smallest entry time of each draw (``t`` None: all, sorted)."""
    out = []
    for entries, t in zip(_pair_entries(U, V, pairs, entry), ts, strict=True):
        if t is None:
            out.append(np.sort(entries, axis=1))
        else:
            out.append(np.partition(entries, t - 1, axis=1)[:, t - 1])
    return out


def critical_epsilons(
    n_members,
    n_nonmembers,
    pairs,
    *,
    delta,
    alpha,
    n_simulations,
    rng,
    ts=None,
    chunk=500,
    family="dp",
):
    """Certified ε of each rank pair: per pair, for every value ``t`` of its statistic an
    array whose entry ``t − 1`` is ``ε̂(t)``, or (``ts`` given, one ``t`` per pair) the float
    ``ε̂(t)`` alone (one partial sort per draw). The pairs share the draws.
    ``family="gaussian"``: the certified μ of μ-GDP instead (``delta`` plays no part).

    ``n_simulations`` draws ``B`` of the extremal pair (``B + 1`` a multiple of ``1/α`` wastes
    no level); ``ε̂(t)`` is the ``⌊α(B + 1)⌋``-th smallest over the draws of their ``t``-th
    smallest entry time (0 when ``α(B + 1) < 1`` or ``t = 0``). Non-decreasing in ``t``.
    """
    n, m = int(n_members), int(n_nonmembers)
    draw, entry = _worst_case(family, delta)
    rank = int(np.floor(alpha * (n_simulations + 1) + 1e-9))
    ts = [None] * len(pairs) if ts is None else list(ts)
    live = [j for j, t in enumerate(ts) if t != 0]
    result = [
        0.0 if t is not None else np.zeros(n * (a is not None) + m * (b is not None))
        for (a, b), t in zip(pairs, ts, strict=True)
    ]
    if rank < 1 or not live:
        return result
    kept = [None] * len(pairs)
    for start in range(0, n_simulations, chunk):
        b = min(chunk, n_simulations - start)
        U, V = draw(rng, (b, n)), draw(rng, (b, m))
        stats = _entry_statistics(U, V, [pairs[j] for j in live], entry, [ts[j] for j in live])
        for j, entries in zip(live, stats, strict=True):
            both = entries if kept[j] is None else np.concatenate([kept[j], entries])
            kept[j] = np.partition(both, rank - 1, axis=0)[:rank] if len(both) > rank else both
    for j in live:
        best = np.partition(kept[j], rank - 1, axis=0)[rank - 1]
        result[j] = float(best) if ts[j] is not None else best
    return result


def rank_test_epsilon(
    members, nonmembers, k_high, k_low, *, delta=0.0, alpha=0.05, n_simulations=9999, rng
):
    """Certified ε at ``delta`` of the two-tail rank test (module docstring), at ``1 − alpha``.

    ``rng`` (a ``numpy.random.Generator``) draws the tie-breaking keys and the simulations;
    it must not depend on the scores.
    """
    t = rank_statistic(members, nonmembers, k_high, k_low, rng)
    return critical_epsilons(
        len(members),
        len(nonmembers),
        [(k_high, k_low)],
        delta=delta,
        alpha=alpha,
        n_simulations=n_simulations,
        rng=rng,
        ts=[t],
    )[0]


#: The pre-registered rank fractions: both tails pooled, then each tail alone (one-tailed
#: mechanisms, e.g. asymmetric randomized response), at 3 %, 10 % and 25 % of the runs.
RANK_FRACTIONS = (0.03, 0.1, 0.25)


def rank_pairs(n_members, n_nonmembers, fractions=RANK_FRACTIONS):
    """The grid's ``(k_high, k_low)`` pairs: ``(k, k)``, ``(k, None)`` and ``(None, k)`` per
    fraction (ranks rounded, kept below the sample sizes, each pair once). It depends on the
    sizes only, never on the scores: the pre-registration the Bonferroni bound needs."""

    def rank(fraction, size):
        return min(int(round(fraction * size)), size - 1)

    pairs = []
    for f in fractions:
        pairs.append((rank(f, n_nonmembers), rank(f, n_members)))
    pairs += [(rank(f, n_nonmembers), None) for f in fractions]
    pairs += [(None, rank(f, n_members)) for f in fractions]
    return list(dict.fromkeys(pairs))  # few runs round fractions to one rank: test it once


def rank_grid_epsilon(
    members,
    nonmembers,
    *,
    delta=0.0,
    alpha=0.05,
    n_simulations=None,
    rng,
    pairs=None,
    family="dp",
):
    """The largest ε̂ over a pre-registered grid of rank pairs, each test at ``α/G``
    (Bonferroni): all ``G`` hold together at ``1 − α``, so their maximum does.

    The pairs share the tie-breaking keys and the simulated draws (each test is valid on its
    own; Bonferroni needs no independence). ``n_simulations`` None:
    ``B + 1 = min(50 000, max(10 000, ⌈50·G/α⌉))`` draws (50 beyond each critical value, up
    to a cost of about 10 s at 1 000 runs per side; any ``B`` with ``α(B + 1)/G ≥ 1`` is
    valid, a smaller one only noisier).
    ``family="gaussian"``: the same grid against μ-GDP claims (the certified μ; ``delta``
    plays no part), :func:`rank_grid_mu`.
    Returns ``(epsilon, (k_high, k_low))``, the pair that gave it (``(None, None)``: none).
    """
    members, nonmembers = np.asarray(members, float), np.asarray(nonmembers, float)
    pairs = rank_pairs(members.size, nonmembers.size) if pairs is None else pairs
    level = alpha / len(pairs)
    if n_simulations is None:
        n_simulations = _default_simulations(level)
    keys = rng.bit_generator.state
    ts = []
    for k_high, k_low in pairs:  # the same keys for every pair
        rng.bit_generator.state = keys
        ts.append(rank_statistic(members, nonmembers, k_high, k_low, rng))
    bounds = critical_epsilons(
        members.size,
        nonmembers.size,
        pairs,
        delta=delta,
        alpha=level,
        n_simulations=n_simulations,
        rng=rng,
        ts=ts,
        family=family,
    )
    j = int(np.argmax(bounds))
    return (float(bounds[j]), pairs[j]) if bounds[j] > 0 else (0.0, (None, None))


def rank_grid_mu(members, nonmembers, *, alpha=0.05, n_simulations=None, rng, pairs=None):
    """The largest μ for which the scores certify "not μ-GDP": the grid of
    :func:`rank_grid_epsilon` calibrated on the Gaussian pair ``N(μ, 1)`` against ``N(0, 1)``
    (module docstring, "μ-GDP claims"), at ``1 − alpha``. Returns ``(mu, (k_high, k_low))``."""
    return rank_grid_epsilon(
        members,
        nonmembers,
        alpha=alpha,
        n_simulations=n_simulations,
        rng=rng,
        pairs=pairs,
        family="gaussian",
    )


def _default_simulations(level):
    """``B`` of :func:`rank_grid_epsilon` for a per-pair level."""
    return min(50_000, max(10_000, int(np.ceil(50 / level)))) - 1


def rank_grid_power(
    n_members,
    n_nonmembers,
    epsilons,
    *,
    at_least,
    delta=0.0,
    alpha=0.05,
    rng,
    point_level=None,
    n_simulations=None,
    n_power=2000,
    chunk=200,
):
    """Power of :func:`rank_grid_epsilon` (at ``1 − alpha``) to certify ε above ``at_least``
    when the mechanism is ε-DP at each of ``epsilons``, at most: its value on the
    randomized-response pair at that ε, simulated. ``point_level`` given: the power of
    "the rank test *or* a threshold's point certifies above ``at_least``", the point's two
    Clopper–Pearson bounds each at ``point_level``, its threshold at the pair's knee (the
    rule that errs like randomized response, as
    :func:`~sklearn_mace.metrics.detectable_epsilon` assumes of the best attack).

    Why it is a maximum: "some rank pair's ``T_g`` reaches its critical count" is a
    non-decreasing function of the members' positions ``W`` (and non-increasing in the
    non-members' ``V``, step 1 of the module docstring); under the coupling of step 3 an
    ε-DP mechanism's ``W = h(U) ≤ h*_ε(U)`` with the same ``U, V`` for every pair at once,
    so its rejection event implies the pair's. The point's false negatives at a threshold
    at non-member quantile ``c`` are ``#{W_i ≤ c}`` (no fewer than the pair's) and its
    false positives ``#{V_j > c}`` (the same), so for one threshold the union's event
    implies the pair's too. Two simulations, independent: ``B`` draws (``n_simulations``
    None: the test's own ``B``) give each rank pair's critical count at ``at_least`` (the
    test rejects ``at_least`` exactly when ``T ≥`` it: one more than the
    ``⌊α_g(B + 1)⌋``-th largest simulated ``T*(at_least)``); ``n_power`` draws of the pair
    at each ε count how often the certificate rejects (the same draws for every ε, so the
    estimate is non-decreasing in ε; Monte Carlo standard error at most
    ``0.5/√n_power``). Returns an array like ``epsilons``.
    """
    n, m = int(n_members), int(n_nonmembers)
    epsilons = np.asarray(epsilons, float).ravel()
    pairs = rank_pairs(n, m)
    critical = _critical_counts(n, m, pairs, at_least, delta, alpha, rng, n_simulations, chunk)
    point = None if point_level is None else _PointRule(n, m, epsilons, delta, point_level)
    draw, entry = _worst_case("dp", delta)
    rejected = np.zeros(epsilons.size, int)
    for start in range(0, n_power, chunk):
        b = min(chunk, n_power - start)
        U, V = draw(rng, (b, n)), draw(rng, (b, m))
        reached = np.zeros((b, epsilons.size), bool)
        for e, c in zip(_pair_entries(U, V, pairs, entry), critical, strict=True):
            if c <= e.shape[1]:  # T*(θ) = #{entries < θ} ≥ c ⟺ its c-th smallest < θ
                reached |= np.partition(e, c - 1, axis=1)[:, c - 1, None] < epsilons[None, :]
        if point is not None:
            reached |= point.certifies(U, V, at_least)
        rejected += reached.sum(0)
    return rejected / n_power


def _critical_counts(n, m, pairs, at_least, delta, alpha, rng, n_simulations, chunk):
    """Per rank pair, the least ``T`` whose test at ``alpha/G`` rejects ε = ``at_least``
    (``n + m + 1``: none)."""
    level = alpha / len(pairs)
    n_simulations = _default_simulations(level) if n_simulations is None else n_simulations
    rank = int(np.floor(level * (n_simulations + 1) + 1e-9))
    if rank < 1:
        return np.full(len(pairs), n + m + 1)
    draw, entry = _worst_case("dp", delta)
    null = []
    for start in range(0, n_simulations, chunk):
        b = min(chunk, n_simulations - start)
        entries = _pair_entries(draw(rng, (b, n)), draw(rng, (b, m)), pairs, entry)
        null.append(np.stack([(e < at_least).sum(1) for e in entries], axis=1))
    null = np.concatenate(null)  # (B, G): T*_b(at_least) per pair
    return np.sort(null, axis=0)[::-1][rank - 1] + 1


class _PointRule:
    """The threshold rule at the randomized-response pair's knee ``u* = (1 − δ)/(1 + e^ε)``
    for each ε: false negatives ``#{U_i ≤ u*}``, false positives ``#{V_j > 1 − u*}`` (each
    rate ``u*``), certified by Clopper–Pearson bounds at ``level`` each."""

    def __init__(self, n, m, epsilons, delta, level):
        from ._audit import _cp_upper

        self.knee = (1.0 - delta) / (1.0 + np.exp(epsilons))
        self.fnr_upper = _cp_upper(np.arange(n + 1), n, level)
        self.fpr_upper = _cp_upper(np.arange(m + 1), m, level)
        self.delta = delta

    def certifies(self, U, V, at_least):
        from ._audit import _epsilon_from_error_bounds

        U, V = np.sort(U, axis=1), np.sort(V, axis=1)
        fn = np.stack([np.searchsorted(row, self.knee, side="right") for row in U])
        fp = V.shape[1] - np.stack([np.searchsorted(row, 1 - self.knee, side="right") for row in V])
        bound = _epsilon_from_error_bounds(self.fpr_upper[fp], self.fnr_upper[fn], self.delta)
        return bound > at_least
