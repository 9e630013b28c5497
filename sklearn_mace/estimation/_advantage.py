"""The optimal membership advantage: a certified lower bound and MACE's U_N / W_N."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.pipeline import make_pipeline
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..attacks import BayesOptimalMIA
from ..base import AttackerMixin, check_prior, resolve_prior
from ..density._grid import kde_grid_axes
from ..metrics import epsilon_from_advantage
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ..utils._torch import TorchDevice
from ._certify import certified_advantage, forward_chained_p_value
from ._crossfit import Sphering, crossfit_classifier, crossfit_kde
from ._normal_scores import NormalScores

__all__ = [
    "KDEAdvantageEstimator",
    "mcdiarmid_half_width",
    "histogram_advantage",
    "kde_advantage",
]


def mcdiarmid_half_width(n_members, n_nonmembers, prior, confidence=0.95):
    """Half-width ``t`` with ``P(|U_N − E U_N| ≥ t) ≤ δ`` (MACE Thm 5.2 / 6.2).

    Changing one member moves U_N (or W_N) by at most ``2p/N₁``, one non-member by
    ``2(1−p)/N₂``; McDiarmid gives ``t = sqrt(2 (p²/N₁ + (1−p)²/N₂) log(2/δ))``, which is
    the paper's ``sqrt(2/N · log(2/δ))`` when ``N₁ = pN`` (Experiment 2) and stays valid
    when the prior is decoupled from the sample.

    Parameters
    ----------
    n_members, n_nonmembers : int
        Sample sizes ``N₁`` and ``N₂`` of the two classes (each >= 1).
    prior : float in (0, 1)
        ``p`` at which the advantage is stated.
    confidence : float in (0, 1), default=0.95
        ``1 − δ``.

    Returns
    -------
    half_width : float
        ``t``: ``U_N ± t`` covers ``E U_N`` with probability at least ``confidence``.

    Examples
    --------
    With ``N₁ = pN`` it is the paper's ``sqrt(2/N · log(2/δ))``:

    >>> import numpy as np
    >>> from sklearn_mace.estimation._advantage import mcdiarmid_half_width
    >>> t = mcdiarmid_half_width(500, 500, prior=0.5, confidence=0.95)
    >>> round(t, 4), bool(np.isclose(t, np.sqrt(2 / 1000 * np.log(2 / 0.05))))
    (0.0859, True)
    """
    delta = 1.0 - check_prior(confidence, name="confidence")
    prior = check_prior(prior)
    if not (n_members >= 1 and n_nonmembers >= 1):
        raise ValueError(
            f"n_members and n_nonmembers must be >= 1; got {n_members!r} and {n_nonmembers!r}."
        )
    variance_proxy = prior**2 / n_members + (1 - prior) ** 2 / n_nonmembers
    return float(np.sqrt(2.0 * variance_proxy * np.log(2.0 / delta)))


def histogram_advantage(member_density, nonmember_density, prior):
    """W_N (MACE Thm 5): ``Σ_j |p·r̂_j − (1−p)·q̂_j|`` over the cells of two histograms.

    Both densities must share their bin edges (cells absent from one count as 0 there).

    Parameters
    ----------
    member_density, nonmember_density : HistogramDensity
        Fitted histograms of the members' and the non-members' queries, same bins.
    prior : float in (0, 1)
        ``p = P(member)``.

    Returns
    -------
    advantage : float
        ``W_N``, in ``[|2p − 1|, 1]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.density import HistogramDensity
    >>> from sklearn_mace.estimation import histogram_advantage
    >>> bins = [np.array([0.0, 1.0, 2.0])]
    >>> members = HistogramDensity(bins=bins).fit([[0.5], [0.5], [0.5], [1.5]])
    >>> nonmembers = HistogramDensity(bins=bins).fit([[0.5], [1.5], [1.5], [1.5]])
    >>> histogram_advantage(members, nonmembers, prior=0.5)  # |3/8 − 1/8| + |1/8 − 3/8|
    0.5
    """
    prior = check_prior(prior)
    keys_r, freq_r = member_density.cell_frequencies()
    keys_q, freq_q = nonmember_density.cell_frequencies()
    keys = np.union1d(keys_r, keys_q)
    mass = np.zeros(keys.size)
    mass[np.searchsorted(keys, keys_r)] += prior * freq_r
    mass[np.searchsorted(keys, keys_q)] -= (1 - prior) * freq_q
    return float(np.abs(mass).sum())


def kde_advantage(
    member_density,
    nonmember_density,
    prior,
    *,
    integration="auto",
    n_mc_samples=10_000,
    random_state=None,
):
    """U_N (MACE Thm 6): ``∫ |p·r̂(x) − (1−p)·q̂(x)| dx`` for two fitted GaussianKDEs.

    * ``"grid"`` (d ≤ 2): both KDEs on one grid by linear binning + FFT convolution
      (:func:`~sklearn_mace.density.binned_gaussian_kde`), 16 nodes per kernel SD and
      8 SDs of margin; within 1e-4 of the exact integral (tested against quadrature).
    * ``"monte_carlo"``: with the pooled density ``g = p·r̂ + (1−p)·q̂``,
      ``U_N = E_{x∼g} |f̂(x)|``, ``f̂ = tanh(L/2)`` from the exact log densities. The
      sample is stratified: ``round(M·p)`` draws from ``r̂``, the rest from ``q̂``, which
      is unbiased with a standard error below ``0.5/sqrt(M)``.
    * ``"auto"``: grid for d ≤ 2 unless the grid would be too large (extreme outliers),
      Monte Carlo otherwise.

    Parameters
    ----------
    member_density, nonmember_density : GaussianKDE
        Fitted KDEs ``r̂`` (members) and ``q̂`` (non-members) of the query.
    prior : float in (0, 1)
        ``p = P(member)``.
    integration : {"auto", "grid", "monte_carlo"}, default="auto"
        How the integral is computed (see above).
    n_mc_samples : int, default=10_000
        ``M``, draws of the Monte Carlo integral.
    random_state : int, RandomState instance or None, default=None
        Seed of the Monte Carlo draws.

    Returns
    -------
    advantage : float
        ``U_N``, in ``[|2p − 1|, 1]``.
    method : str
        ``"grid"`` or ``"monte_carlo"`` (what was used).
    standard_error : float
        0 for the grid; the Monte Carlo standard error otherwise.

    Examples
    --------
    Two classes 10 kernel widths apart are told apart perfectly; equal ones not at all:

    >>> import numpy as np
    >>> from sklearn_mace.density import GaussianKDE
    >>> from sklearn_mace.estimation import kde_advantage
    >>> r = GaussianKDE(bandwidth=0.5, device="cpu").fit(np.array([[0.0], [0.1]]))
    >>> q = GaussianKDE(bandwidth=0.5, device="cpu").fit(np.array([[10.0], [10.1]]))
    >>> advantage, method, _ = kde_advantage(r, q, prior=0.5)
    >>> round(advantage, 4), method
    (1.0, 'grid')
    >>> round(kde_advantage(r, r, prior=0.5)[0], 4)
    0.0
    """
    prior = check_prior(prior)
    if integration not in ("auto", "grid", "monte_carlo"):
        raise ValueError(
            f"integration must be 'auto', 'grid' or 'monte_carlo'; got {integration!r}."
        )
    if isinstance(n_mc_samples, bool) or not isinstance(n_mc_samples, Integral) or n_mc_samples < 2:
        raise ValueError(f"n_mc_samples must be an int >= 2; got {n_mc_samples!r}.")
    r, q = member_density, nonmember_density
    if integration in ("auto", "grid"):
        axes = kde_grid_axes([r.data_, q.data_], [r.bandwidth_matrix_, q.bandwidth_matrix_])
        if axes is not None:
            diff = prior * r.density_on_grid(axes) - (1 - prior) * q.density_on_grid(axes)
            cell = np.prod([a[1] - a[0] for a in axes])
            return float(np.abs(diff).sum() * cell), "grid", 0.0
        if integration == "grid":
            raise ValueError(
                "integration='grid' needs at most 2 query features and a grid of bounded "
                "size; use integration='auto' or 'monte_carlo'."
            )
    rng = check_random_state(random_state)
    n_r = int(np.clip(round(n_mc_samples * prior), 1, n_mc_samples - 1))
    parts = []
    for density, n in ((r, n_r), (q, n_mc_samples - n_r)):
        x = density.sample(n, random_state=rng)
        odds = r.score_samples(x) - q.score_samples(x) + np.log(prior / (1 - prior))
        parts.append(np.abs(np.tanh(odds / 2)))
    advantage = prior * parts[0].mean() + (1 - prior) * parts[1].mean()
    se = np.sqrt(
        prior**2 * parts[0].var() / len(parts[0])
        + (1 - prior) ** 2 * parts[1].var() / len(parts[1])
    )
    return float(advantage), "monte_carlo", float(se)


def _assign_folds(m, n_folds, max_samples, rng):
    """Stratified folds ``0 … k−1`` on at most ``max_samples`` rows; ``k`` for the rest.

    Each class is shuffled; its first rows (its share of ``max_samples``, and at least
    ``k`` where it has them) form the subsample and are dealt round-robin to the folds,
    the second class continuing where the first stopped, so fold sizes differ by at most
    one row. Rows outside the subsample are in no training fold: they are held out from
    every fold's classifier and scored by one fitted on the whole subsample.
    """
    n = len(m)
    folds = np.full(n, n_folds)
    start = 0
    for c in (0, 1):
        rows = rng.permutation(np.flatnonzero(m == c))
        n_keep = rows.size
        if n > max_samples:
            n_keep = max(int(round(rows.size * max_samples / n)), min(rows.size, n_folds))
        folds[rows[:n_keep]] = (start + np.arange(n_keep)) % n_folds
        start += n_keep
    return folds


class KDEAdvantageEstimator(AttackerMixin, BaseEstimator):
    """Optimal membership advantage of a query: a certified lower bound and MACE's estimate.

    ``fit(Q, m)`` reports two kinds of number about ``Adv_p = ∫|p·r − (1−p)·q|``, the
    advantage of the best attacker who sees the query ``Q`` (MACE Def. 2, Lemma 1):

    * **certified** — ``advantage_lower_bound_``, a ``confidence`` lower bound on
      ``Adv_p``, and ``epsilon_lower_bound_``, the ε it implies, from the plug-in Bayes classifier
      *cross-fitted* (fitted on ``cv − 1`` folds, with its bandwidth selected on those
      folds only, predicting the held-out fold) and exact Clopper–Pearson bounds on its
      pooled held-out TPR and TNR (see
      :func:`~sklearn_mace.estimation.certified_advantage`). Any classifier's advantage is
      at most the optimal one, so the bound is conservative whatever the bandwidth: a poor
      classifier certifies less, never too much. ``p_value_``, an exact test of "the query
      leaks nothing", from the same classifier *forward-chained* (fold ``j`` predicted by
      the one fitted on the earlier folds only; see
      :func:`~sklearn_mace.estimation.forward_chained_p_value`).
    * **estimated** — ``advantage_estimate_``, MACE's ``U_N`` (Thm 6, Gaussian KDEs) or ``W_N``
      (Thm 5, discrete or binned queries), with the McDiarmid interval
      ``advantage_estimate_interval_`` (Thm 5.2/6.2), and ``epsilon_estimate_``. The interval covers
      the sampling spread of ``U_N`` around its own mean, not its bias: ``U_N`` averages
      ``|f̂|``, which picks up the KDEs' noise, so it reads above the truth when little
      leaks. Never read it as "at least".

    The advantage is invariant under any bijection of the query, but ``U_N`` is not: a KDE
    on a heavy-tailed or skewed query (a loss, a distance) smooths its bulk and its tail
    with one width. By default each query feature is therefore first mapped by its pooled,
    label-free rank to standard-normal scores (``feature_map="normal_scores"``), the features
    are sphered by their pooled covariance, and one shared bandwidth ``h² Σ̂`` is chosen by
    the held-out log loss of the plug-in posterior with a one-standard-error rule toward
    smoothness (``bandwidth="cv"``). The loss, its square root and its logarithm then give
    the same ``U_N``.

    ``U_N`` still reads a little above 0 when nothing leaks (0.01–0.08 on null Gaussian
    queries of 1 to 16 dimensions, far less than with MACE's per-class Scott bandwidths); the
    certified bound claimed no leakage in any of those fits.

    Read more in the :ref:`User Guide <un_bias>`.

    Parameters
    ----------
    bandwidth : "cv", float, array-like or {"scott", "silverman"}, default="cv"
        ``"cv"``: one shared bandwidth ``h² Σ̂_pooled`` selected as above. Otherwise each
        class gets its own KDE bandwidth as in :class:`~sklearn_mace.density.GaussianKDE`
        (MACE's original estimator; the certified bound then cross-fits that classifier).
    discrete : bool, default=False
        Treat the query as discrete: each distinct value is a category and W_N is used.
    bins : int, sequence or {"auto", "discrete"}, default=None
        Bin the query (see :func:`~sklearn_mace.density.histogram_edges`) and use W_N.
    prior : float in (0, 1), default=None
        ``p``; ``None`` uses the fraction of members in ``y``.
    confidence : float in (0, 1), default=0.95
        ``1 − α`` of the certified bound, of the McDiarmid interval and of the
        individual-risk intervals.
    random_state : int, RandomState or None, default=None
        Seeds the folds, the subsample and the Monte Carlo integration (d > 2).
    feature_map : {"normal_scores"} or None, default="normal_scores"
        Map applied to each query feature before the KDE (not to discrete or binned
        queries): ``"normal_scores"`` is a pooled, label-free
        :class:`~sklearn.preprocessing.QuantileTransformer` to normal scores; ``None``
        keeps the query as it is.
    cv : int >= 2, default=5
        Folds of the cross-fit (fewer when a class has fewer rows; with a class of one
        row nothing can be certified and the bound is the trivial ``|2p − 1|``).
    max_crossfit_samples : int, default=5_000
        The cross-fit and the bandwidth selection use a stratified random subsample of at
        most this many rows (their cost is quadratic in it); the other rows are held out
        from every fold and still count in the bound. ``U_N`` uses all rows.
    integration : {"auto", "grid", "monte_carlo"}, default="auto"
        How U_N is integrated, see :func:`kde_advantage`.
    n_mc_samples : int, default=10_000
        Monte Carlo sample size ``M`` (standard error below ``0.5/sqrt(M)``).
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where KDE sums run. On the CPU, threads are chosen per pass (docs/design.md, "Devices
        and threads").
    member_label : object, default=None
        The label of the members in ``y``, like scikit-learn's ``pos_label``; it becomes
        ``classes_[1]``. ``None``: the greater label (``1`` of ``{0, 1}`` and ``{-1, 1}``,
        ``True`` of booleans); any other pair (e.g. strings) is accepted with a
        ``MembershipLabelWarning`` that names the label taken as the member.

    Attributes
    ----------
    advantage_lower_bound_ : float
        Certified: ``P(Adv_p ≥ advantage_lower_bound_) ≥ confidence``; never below the
        trivial ``|2p − 1|``.
    p_value_ : float
        Exact p-value of "the query carries no membership information": forward-chained
        folds (fold ``j`` scored by the classifier fitted on folds ``0 … j−1`` only, with its
        bandwidth chosen there), as many guesses per fold as it has members, the folds'
        hypergeometric counts convolved
        (:func:`~sklearn_mace.estimation.forward_chained_p_value`, where the argument is).
        Deterministic given ``random_state`` (ties are broken at random).
    epsilon_lower_bound_ : float
        Certified: the smallest ε of ε-DP consistent with ``advantage_lower_bound_``
        (:func:`~sklearn_mace.metrics.epsilon_from_advantage`); 0 at or below ``|2p − 1|``.
        For members against fresh records it refutes substitute-one DP; an add/remove-one
        ε implies substitute-one 2ε (see :func:`~sklearn_mace.metrics.audit_epsilon`).
    advantage_estimate_ : float
        Estimated: U_N or W_N at ``prior_`` (includes the trivial ``|2p − 1|``).
    advantage_estimate_interval_ : tuple of float
        ``advantage_estimate_ ∓`` the McDiarmid half-width (:func:`mcdiarmid_half_width`),
        clipped to [0, 1]: sampling spread only, not the bias.
    epsilon_estimate_ : float
        Estimated: the ε implied by ``advantage_estimate_`` (not a bound).
    crossfit_decision_ : ndarray of shape (n_samples,)
        Held-out log posterior odds of every fitted record: each scored by a classifier
        that did not see it. An honest attack score for ROC curves and the ε auditor.
    crossfit_risk_ : ndarray of shape (n_samples,)
        Held-out individual risk ``|f̂_p|`` of every fitted record (Thm 1.1), from
        ``crossfit_decision_``; rank records by this, not by ``individual_risk_``.
    trivial_advantage_ : float
        ``|2p − 1|``, what always guessing the majority achieves.
    individual_risk_ : ndarray of shape (n_samples,)
        In-sample ``|f̂_p|`` of each fitted record (each record is inside its own KDE, so
        it is inflated; see :meth:`individual_risk`), computed on first access, cached.
    bandwidth_ : float or None
        With ``bandwidth="cv"``: the selected ``h`` in sphered units (the kernel covariance
        is ``bandwidth_² Σ̂_pooled``), rescaled to the full sample; else None.
    integration_ : str
        ``"grid"``, ``"monte_carlo"`` or ``"histogram"`` (W_N).
    mc_standard_error_ : float
        Monte Carlo standard error of ``advantage_estimate_`` (0 unless Monte Carlo was used).
    classifier_ : BayesOptimalMIA
        The plug-in Bayes classifier, on the transformed (and sphered) query.
    transformer_ : Pipeline or None
        The fitted map from the query to ``classifier_``'s features.
    prior_ : float
        ``p``; ``score`` is the membership advantage at it (never ``U_N``).
    classes_ : ndarray of shape (2,)
        The labels given to ``fit``, ``[non-member, member]``.
    n_features_in_ : int
        Number of query features.

    References
    ----------
    MACE (TMLR 2023), Def. 1–2, Lemma 1, Thm 5, Thm 6, Alg. 1, Thm 1.4; Clopper and Pearson
    (1934).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace import KDEAdvantageEstimator
    >>> rng = np.random.default_rng(0)
    >>> Q = np.r_[rng.normal(1, 1, (2000, 1)), rng.normal(0, 1, (2000, 1))]
    >>> m = np.r_[np.ones(2000), np.zeros(2000)]
    >>> est = KDEAdvantageEstimator(device="cpu", random_state=0).fit(Q, m)
    >>> truth = 0.383  # 2Φ(1/2) − 1
    >>> bool(0.3 < est.advantage_lower_bound_ <= truth), est.p_value_ < 1e-6
    (True, True)
    """

    _parameter_constraints = {
        "bandwidth": [StrOptions({"cv"}), *BayesOptimalMIA._parameter_constraints["bandwidth"]],
        "prior": BayesOptimalMIA._parameter_constraints["prior"],
        "discrete": ["boolean"],
        "bins": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto", "discrete"}),
            "array-like",
            None,
        ],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
        "feature_map": [StrOptions({"normal_scores"}), None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "max_crossfit_samples": [Interval(Integral, 4, None, closed="left")],
        "integration": [StrOptions({"auto", "grid", "monte_carlo"})],
        "n_mc_samples": [Interval(Integral, 2, None, closed="left")],
        "device": [str, TorchDevice],
        "member_label": "no_validation",
    }

    def __init__(
        self,
        *,
        bandwidth="cv",
        discrete=False,
        bins=None,
        prior=None,
        confidence=0.95,
        random_state=None,
        feature_map="normal_scores",
        cv=5,
        max_crossfit_samples=5_000,
        integration="auto",
        n_mc_samples=10_000,
        device="auto",
        member_label=None,
    ):
        self.bandwidth = bandwidth
        self.discrete = discrete
        self.bins = bins
        self.prior = prior
        self.confidence = confidence
        self.random_state = random_state
        self.feature_map = feature_map
        self.cv = cv
        self.max_crossfit_samples = max_crossfit_samples
        self.integration = integration
        self.n_mc_samples = n_mc_samples
        self.device = device
        self.member_label = member_label

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Certify and estimate the optimal advantage of the query ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of members and non-members (MACE Experiment 2).
        y : array-like of shape (n_samples,)
            Membership labels: 1 member, 0 or -1 non-member, booleans, or any two labels
            with ``member_label`` naming the member.

        Returns
        -------
        self : KDEAdvantageEstimator
            The fitted estimator, with ``advantage_estimate_`` and its interval.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        m = self._fit_membership_labels(y)
        self._individual_risk = None
        self.prior_ = p = resolve_prior(self.prior, m)
        rng = check_random_state(self.random_state)
        binned = self.discrete or self.bins is not None
        for name, c in (("members", 1), ("non-members", 0)):
            if not binned and np.sum(m == c) < 2:
                raise ValueError(
                    f"The query's KDEs need at least 2 {name} in y; got {np.sum(m == c)}. "
                    "Use discrete=True or bins= for tiny samples."
                )
        self.transformer_ = self._make_transformer(binned)
        features = X if self.transformer_ is None else self.transformer_.fit_transform(X)
        n_folds = int(min(self.cv, np.sum(m == 1), np.sum(m == 0)))
        folds = _assign_folds(m, max(n_folds, 2), self.max_crossfit_samples, rng)
        self.bandwidth_ = None
        classifier = BayesOptimalMIA(
            density="histogram" if binned else "kde",
            bandwidth=1.0 if self._cv_bandwidth else self.bandwidth,
            bins=("discrete" if self.discrete else self.bins) if binned else "auto",
            prior=p,
            confidence=self.confidence,
            device=self.device,
        )
        if n_folds < 2:
            warnings.warn(
                "A class has a single row: nothing can be cross-fitted, so nothing is "
                "certified (advantage_lower_bound_ is the trivial |2p − 1|, p_value_ 1).",
                UserWarning,
                stacklevel=2,
            )
            log_odds = np.full(len(m), np.log(p / (1 - p)))
            chained = np.full(len(m), np.nan)
        elif self._cv_bandwidth:
            log_odds, chained, h, n_train = crossfit_kde(
                features, m, folds, n_folds, p, rng=rng, device=self.device
            )
            n_full = min(np.sum(m == 1), np.sum(m == 0))
            self.bandwidth_ = h * (n_train / n_full) ** (1.0 / (features.shape[1] + 4))
            classifier.set_params(bandwidth=self.bandwidth_)
        else:
            log_odds, chained = crossfit_classifier(classifier, features, m, folds, n_folds)
        self.classifier_ = classifier.fit(features, m)
        self._certify(m, log_odds, chained, folds, rng)
        self._estimate(m, binned)
        self._fitted_queries = X
        return self

    @property
    def _cv_bandwidth(self):
        return (
            isinstance(self.bandwidth, str)
            and self.bandwidth == "cv"
            and not (self.discrete or self.bins is not None)
        )

    def _make_transformer(self, binned):
        steps = []
        if self.feature_map == "normal_scores" and not binned:
            steps.append(NormalScores())  # the empirical rank, ties at mid-rank
        if self._cv_bandwidth:
            steps.append(Sphering())
        return make_pipeline(*steps) if steps else None

    def _certify(self, m, log_odds, chained, folds, rng):
        p = self.prior_
        # the plug-in classifier's rule η̂ > 1/2 (MACE Lemma 1) and its risk |f̂_p| =
        # |tanh(L/2)| (Thm 1.1), both from the held-out log posterior odds L
        guess = log_odds > 0
        self.crossfit_decision_ = log_odds
        self.crossfit_risk_ = np.abs(np.tanh(log_odds / 2))
        self.advantage_lower_bound_, _, _ = certified_advantage(m, guess, p, self.confidence)
        tested = np.unique(folds).size > 1 and np.isfinite(chained).any()
        self.p_value_ = (
            forward_chained_p_value(m, chained, folds, random_state=rng) if tested else 1.0
        )
        self.epsilon_lower_bound_ = epsilon_from_advantage(self.advantage_lower_bound_, p)
        self.trivial_advantage_ = abs(2 * p - 1)

    def _estimate(self, m, binned):
        p = self.prior_
        r, q = self.classifier_.member_density_, self.classifier_.nonmember_density_
        if binned:
            self.advantage_estimate_ = histogram_advantage(r, q, p)
            self.integration_, self.mc_standard_error_ = "histogram", 0.0
        else:
            self.advantage_estimate_, self.integration_, self.mc_standard_error_ = kde_advantage(
                r,
                q,
                p,
                integration=self.integration,
                n_mc_samples=self.n_mc_samples,
                random_state=self.random_state,
            )
        half_width = mcdiarmid_half_width(int(m.sum()), int((1 - m).sum()), p, self.confidence)
        self.advantage_estimate_interval_ = (
            max(self.advantage_estimate_ - half_width, 0.0),
            min(self.advantage_estimate_ + half_width, 1.0),
        )
        self.epsilon_estimate_ = epsilon_from_advantage(min(self.advantage_estimate_, 1.0), p)

    def _features(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X if self.transformer_ is None else self.transformer_.transform(X)

    @property
    def individual_risk_(self):
        """In-sample individual privacy risk ``|f̂_p|`` of each fitted record (Thm 1.1).

        Each record sits inside its own KDE, which inflates it when little leaks; rank
        records by the held-out ``crossfit_risk_``. Computed on first access and cached
        (``O(N²)`` kernel evaluations).
        """
        check_is_fitted(self)
        if getattr(self, "_individual_risk", None) is None:
            self._individual_risk = self.individual_risk(self._fitted_queries)
        return self._individual_risk

    def decision_function(self, X):
        """Log posterior odds of the plug-in Bayes classifier at ``prior_``.

        Positive exactly where ``predict`` says member (the rule ``η̂ > 1/2``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.

        Returns
        -------
        decision : ndarray of shape (n_samples,)
            ``log η̂ − log(1 − η̂)`` of each query; ``> 0`` exactly where ``predict`` says
            member.
        """
        features = self._features(X)
        return self.classifier_.decision_function(features)

    def predict_proba(self, X):
        """``[1 − η̂, η̂]`` of the plug-in Bayes classifier, ``η̂ = P(member | query)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is ``η̂ = P(member | query)`` at ``prior_``, column 0 its complement.
        """
        features = self._features(X)
        return self.classifier_.predict_proba(features)

    def predict(self, X):
        """Membership guesses ``η̂ > 1/2`` of the plug-in Bayes classifier (Lemma 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` (the member label) where ``decision_function(X) > 0``.
        """
        return self._labels(self.decision_function(X) > 0)

    def individual_risk(self, X, return_interval=False):
        """Individual privacy risk ``|f̂_p|`` of query rows (see BayesOptimalMIA).

        The interval (``return_interval=True``, MACE Thm 3.2 from Lemma 4) is pointwise and
        asymptotic: it covers the risk of the *smoothed* densities at that point
        (``E f̂_h`` of each class, not the true ``r`` and ``q``: the smoothing bias is not
        included) with probability about ``confidence`` for that one point — about one
        record in twenty falls outside its own 95 % interval, and the intervals are not
        simultaneous. For fitted records the estimate is in-sample; use
        ``crossfit_risk_`` to rank them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of the records.
        return_interval : bool, default=False
            Also return the pointwise interval of each risk.

        Returns
        -------
        risk : ndarray of shape (n_samples,)
            Or the tuple ``(risk, lower, upper)`` when ``return_interval``.
        """
        features = self._features(X)
        return self.classifier_.individual_risk(features, return_interval=return_interval)
