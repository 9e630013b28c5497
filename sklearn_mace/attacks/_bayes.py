"""MACE's Bayes-optimal membership attack: plug-in densities of members and non-members."""

from numbers import Integral, Real

import numpy as np
from scipy.special import expit, logit
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import AttackerMixin, resolve_prior
from ..density import GaussianKDE, HistogramDensity
from ..density._histogram import histogram_edges
from ..density._kde import BANDWIDTH_RULES
from ..metrics import GeneralizedMetric
from ..metrics._generalized import METRIC_NAMES
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ..utils._torch import TorchDevice

__all__ = ["BayesOptimalMIA", "generalized_individual_risk", "resolve_metric"]

# ``logit(t)`` is infinite for t in {0, 1} (e.g. TPR's t = 0, Lemma 2); the rule is then taken
# as ``η̂ > clip(t)`` so that ``decision_function`` stays finite and keeps every rank.
_THRESHOLD_CLIP = (1e-300, 1.0 - 1e-16)


def _threshold_log_odds(threshold):
    """``logit(t)`` of a rule ``η̂ > t``, with ``t`` clipped to ``[1e-300, 1 − 1e-16]``.

    ``decision_function = log posterior odds − _threshold_log_odds(t)`` is then finite
    wherever the log odds are, and its sign is the rule's decision.
    """
    return float(logit(np.clip(threshold, *_THRESHOLD_CLIP)))


def resolve_metric(metric):
    """A :class:`~sklearn_mace.metrics.GeneralizedMetric` from a name or an instance."""
    if isinstance(metric, GeneralizedMetric):
        return metric
    return GeneralizedMetric.from_name(metric)


def _eq18(metric, prior, eta, predicted_member):
    """MACE Eq. 18 in terms of ``η``: the estimate is homogeneous of degree 0 in
    ``(p·r̂, (1−p)·q̂)``, so ``(η, 1 − η)`` can stand in for them."""
    c = metric.coefficients(prior)
    c1, c2 = c["a0"] + c["a01"], c["a0"] + c["a00"]
    c3, c4 = c["a11"] - c["a01"], c["a10"] - c["a00"]
    d1, d2 = c["b0"] + c["b01"], c["b0"] + c["b00"]
    d3, d4 = c["b11"] - c["b01"], c["b10"] - c["b00"]
    ind = predicted_member.astype(float)
    num = c1 * eta + c2 * (1 - eta) + (c3 * eta + c4 * (1 - eta)) * ind
    den = d1 * eta + d2 * (1 - eta) + (d3 * eta + d4 * (1 - eta)) * ind
    if np.any(den == 0):
        raise ValueError(
            f"The individual risk under {metric!r} is undefined at some points: the "
            "denominator of MACE Eq. 18 is 0 there (Thm 4, condition 3)."
        )
    return num / den


def generalized_individual_risk(metric, prior, threshold, eta, eta_lower=None, eta_upper=None):
    """Individual risk under a generalized metric (MACE Thm 4, Eq. 18), optionally with bounds.

    The rule is ``η > t_ℓ``. Eq. 18 is a linear-fractional, hence monotone, function of
    ``η`` on each side of ``t_ℓ``, so over ``η ∈ [η_lower, η_upper]`` (from the Thm 2/3
    bounds on ``r`` and ``q``) its extremes lie at the two ends or at the two one-sided
    limits at ``t_ℓ`` (Thm 4.2, the optimisation solved exactly).
    """
    risk = _eq18(metric, prior, eta, eta > threshold)
    if eta_lower is None:
        return risk
    candidates = [
        _eq18(metric, prior, eta_lower, eta_lower > threshold),
        _eq18(metric, prior, eta_upper, eta_upper > threshold),
    ]
    crosses = (eta_lower < threshold) & (eta_upper > threshold)
    at_t = np.full_like(eta, threshold)
    for side in (False, True):
        value = _eq18(metric, prior, at_t, np.full(eta.shape, side))
        candidates.append(np.where(crosses, value, candidates[0]))
    stacked = np.stack(candidates)
    return risk, stacked.min(axis=0), stacked.max(axis=0)


def _abs_interval(lower, upper):
    """The interval of ``|f|`` when ``f ∈ [lower, upper]``."""
    lo = np.where(lower >= 0, lower, np.where(upper <= 0, -upper, 0.0))
    hi = np.maximum(np.abs(lower), np.abs(upper))
    return lo, hi


class BayesOptimalMIA(AttackerMixin, BaseEstimator):
    """The Bayes-optimal membership attack of MACE, with individual privacy risks.

    Fits the query density of members ``r̂`` and of non-members ``q̂`` and predicts with
    the posterior ``η̂(x) = p·r̂(x) / (p·r̂(x) + (1 − p)·q̂(x))`` (MACE Lemma 1, Thm 2.1,
    Thm 3.1). Everything is computed from the two log densities, so posteriors stay exact
    far in the tails, where the records most at risk sit.

    Parameters
    ----------
    density : {"kde", "histogram"}, default="kde"
        Gaussian KDE (continuous queries, MACE §4.1.2) or histogram (discrete or binned
        queries, §4.1.1; both classes share the bins computed from all of ``X``).
    bandwidth : float, array-like of shape (n_features,) or {"scott", "silverman"}, \
default="scott"
        KDE bandwidth, see :class:`~sklearn_mace.density.GaussianKDE`; each class gets its
        own estimate (a rule is applied to that class's covariance and size).
    bins : int, sequence or {"auto", "discrete"}, default="auto"
        Histogram bins, see :func:`~sklearn_mace.density.histogram_edges`.
    prior : float in (0, 1), default=None
        ``p = P(member)``. ``None`` uses the fraction of members in ``y``; setting it lets
        a balanced sample report risk at the real-world prior.
    metric : str or GeneralizedMetric, default="accuracy"
        The rule is ``η̂ > t_ℓ`` with ``t_ℓ`` from Lemma 2 (``metric.optimal_threshold``);
        metrics without a closed-form ``t_ℓ`` (PPV, F1) need
        :class:`~sklearn_mace.GeneralizedMetricAttack`. Also selects the individual risk
        (Thm 1.1 for accuracy, Thm 4 / Eq. 18 otherwise).
    confidence : float in (0, 1), default=0.95
        ``1 − δ`` for the intervals of :meth:`individual_risk`.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where KDE sums run. On the CPU, threads are chosen per pass (docs/design.md, "Devices and
        threads").
    member_label : object, default=None
        The label of the members in ``y``, like scikit-learn's ``pos_label``; it becomes
        ``classes_[1]``. ``None``: the greater label (``1`` of ``{0, 1}`` and ``{-1, 1}``,
        ``True`` of booleans); any other pair (e.g. strings) is accepted with a
        ``MembershipLabelWarning`` that names the label taken as the member.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels given to ``fit``, ``[non-member, member]``.
    prior_ : float
        The prior used.
    threshold_ : float
        ``t_ℓ`` of the rule ``η̂ > t_ℓ``; ``decision_function`` is the log posterior odds
        minus ``logit(t_ℓ)`` (``t_ℓ`` clipped to ``[1e-300, 1 − 1e-16]`` for the TPR- and
        TNR-like metrics whose ``t_ℓ`` is 0 or 1).
    member_density_, nonmember_density_ : GaussianKDE or HistogramDensity
        ``r̂`` and ``q̂``.
    n_features_in_ : int

    See Also
    --------
    KDEAdvantageEstimator : the optimal advantage (``E|f̂|``) with its interval.
    GeneralizedMetricAttack : Alg. 2 / 3 for any generalized metric and any classifier.

    References
    ----------
    MACE (TMLR 2023): Lemma 1–2, Thm 1–4, Eq. 14, 18; Lemma 4 (Chen, 2017).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace import BayesOptimalMIA
    >>> rng = np.random.default_rng(0)
    >>> Q = np.r_[rng.normal(1, 1, (500, 1)), rng.normal(0, 1, (500, 1))]
    >>> m = np.r_[np.ones(500), np.zeros(500)]
    >>> attack = BayesOptimalMIA(device="cpu").fit(Q, m)
    >>> risk, lower, upper = attack.individual_risk([[3.0]], return_interval=True)
    >>> bool(lower[0] <= risk[0] <= upper[0])
    True
    """

    _parameter_constraints = {
        "density": [StrOptions({"kde", "histogram"})],
        "bandwidth": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions(set(BANDWIDTH_RULES)),
            "array-like",
        ],
        "bins": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto", "discrete"}),
            "array-like",
        ],
        "prior": [Interval(Real, 0, 1, closed="neither"), None],
        "metric": [StrOptions(set(METRIC_NAMES)), GeneralizedMetric],
        "confidence": [Interval(Real, 0, 1, closed="neither")],
        "device": [str, TorchDevice],
        "member_label": "no_validation",
    }

    def __init__(
        self,
        *,
        density="kde",
        bandwidth="scott",
        bins="auto",
        prior=None,
        metric="accuracy",
        confidence=0.95,
        device="auto",
        member_label=None,
    ):
        self.density = density
        self.bandwidth = bandwidth
        self.bins = bins
        self.prior = prior
        self.metric = metric
        self.confidence = confidence
        self.device = device
        self.member_label = member_label

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit ``r̂`` on the members and ``q̂`` on the non-members of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features; NaN and inf are rejected.
        y : array-like of shape (n_samples,)
            Membership labels: 1 member, 0 or -1 non-member, booleans, or any two labels
            with ``member_label`` naming the member.

        Returns
        -------
        self : BayesOptimalMIA
            The fitted attacker.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        m = self._fit_membership_labels(y)
        self.prior_ = resolve_prior(self.prior, m)
        metric = resolve_metric(self.metric)
        self.threshold_ = metric.optimal_threshold(self.prior_)
        if self.threshold_ is None:
            raise ValueError(
                f"metric={self.metric!r} has no closed-form threshold t_ℓ (MACE Lemma 2); "
                "use GeneralizedMetricAttack, which searches it (Alg. 3)."
            )
        members, nonmembers = X[m == 1], X[m == 0]
        if self.density == "kde":
            for name, rows in (("members", members), ("non-members", nonmembers)):
                if len(rows) < 2:
                    raise ValueError(
                        f"density='kde' needs at least 2 {name} in y to fit a KDE; got "
                        f"{len(rows)}. Use density='histogram' for tiny samples."
                    )
            self.member_density_ = GaussianKDE(bandwidth=self.bandwidth, device=self.device).fit(
                members
            )
            self.nonmember_density_ = GaussianKDE(bandwidth=self.bandwidth, device=self.device).fit(
                nonmembers
            )
        else:
            edges = histogram_edges(X, self.bins)
            self.member_density_ = HistogramDensity(bins=edges).fit(members)
            self.nonmember_density_ = HistogramDensity(bins=edges).fit(nonmembers)
        return self

    @property
    def _log_prior_odds(self):
        return np.log(self.prior_) - np.log1p(-self.prior_)

    def _validated(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def _log_odds(self, log_r, log_q):
        """``log(p·r̂) − log((1−p)·q̂)``; the prior odds where both densities are 0."""
        with np.errstate(invalid="ignore"):
            odds = log_r - log_q + self._log_prior_odds
        return np.where(np.isnan(odds), self._log_prior_odds, odds)

    def _posterior_log_odds(self, X):
        """``log η̂/(1 − η̂) = log r̂ − log q̂ + log(p/(1−p))`` of validated rows."""
        return self._log_odds(
            self.member_density_.score_samples(X), self.nonmember_density_.score_samples(X)
        )

    def decision_function(self, X):
        """Log posterior odds minus ``logit(t_ℓ)``: positive exactly where ``predict`` says member.

        ``log r̂ − log q̂ + log(p/(1−p)) − logit(t_ℓ)``; for ``metric="accuracy"``
        (``t_ℓ = 1/2``) the log posterior odds themselves. ``±inf`` where exactly one
        histogram density is 0 (a certain decision).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.

        Returns
        -------
        decision : ndarray of shape (n_samples,)
            The shifted log posterior odds; ``> 0`` exactly where ``predict`` says member.
        """
        X = self._validated(X)
        return self._posterior_log_odds(X) - _threshold_log_odds(self.threshold_)

    def predict_proba(self, X):
        """``[1 − η̂, η̂]`` with ``η̂ = P(member | query)`` at the prior ``prior_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is P(member), whatever the metric's threshold.
        """
        odds = self._posterior_log_odds(self._validated(X))
        return np.column_stack([expit(-odds), expit(odds)])

    def predict(self, X):
        """Membership guesses ``η̂ > t_ℓ`` (MACE Lemma 1/2) as labels of ``classes_``.

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
        """Individual privacy risk of each query row, optionally with its interval.

        For ``metric="accuracy"`` it is ``|f̂_p(x)|`` (Thm 1.1, Thm 2.1/3.1), computed as
        ``|tanh(L/2)|`` from the log posterior odds ``L``. For other metrics it is the
        Eq. 18 estimate of Thm 4. With ``return_interval=True`` the ``confidence``
        interval of Thm 2.2 (histogram: Clopper–Pearson) or Thm 3.2 (KDE: Lemma 4) is
        added: bounds for ``r`` and ``q`` at level ``1 − δ/2`` each are plugged into
        ``f_p``, which is monotone in ``r/q``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of the records.
        return_interval : bool, default=False
            Also return the ``confidence`` interval of each risk.

        Returns
        -------
        risk : ndarray of shape (n_samples,)
            Or the tuple ``(risk, lower, upper)`` when ``return_interval``.
        """
        X = self._validated(X)
        if not return_interval:
            return self._risk_from_odds(self._posterior_log_odds(X))
        level = 1.0 - (1.0 - self.confidence) / 2.0
        log_r, log_r_lo, log_r_hi = self.member_density_.score_samples_interval(X, level)
        log_q, log_q_lo, log_q_hi = self.nonmember_density_.score_samples_interval(X, level)
        odds = self._log_odds(log_r, log_q)
        odds_lo = self._log_odds(log_r_lo, log_q_hi)
        odds_hi = self._log_odds(log_r_hi, log_q_lo)
        if resolve_metric(self.metric).name == "accuracy":
            lower, upper = _abs_interval(np.tanh(odds_lo / 2), np.tanh(odds_hi / 2))
            return self._risk_from_odds(odds), lower, upper
        return generalized_individual_risk(
            resolve_metric(self.metric),
            self.prior_,
            self.threshold_,
            expit(odds),
            expit(odds_lo),
            expit(odds_hi),
        )

    def _risk_from_odds(self, odds):
        metric = resolve_metric(self.metric)
        if metric.name == "accuracy":
            return np.abs(np.tanh(odds / 2))
        return generalized_individual_risk(metric, self.prior_, self.threshold_, expit(odds))
