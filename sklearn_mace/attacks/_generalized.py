"""The optimal attack under a generalized metric: MACE Algorithms 2 and 3 (Eq. 20)."""

from numbers import Real

import numpy as np
from scipy.special import expit, logit
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import AttackerMixin, resolve_prior
from ..metrics import GeneralizedMetric
from ..metrics._generalized import METRIC_NAMES
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context
from ._bayes import BayesOptimalMIA, _threshold_log_odds, resolve_metric

__all__ = ["GeneralizedMetricAttack"]


class GeneralizedMetricAttack(AttackerMixin, BaseEstimator):
    """Bayes-optimal attack and its advantage under a generalized metric (MACE §5.2).

    The sample is split (stratified) into parts. ``estimator`` is fitted on the first to
    give ``η̂``; its posterior is moved to the prior ``p`` by adding
    ``log(p/(1−p)) − log(π₁/(1−π₁))`` to its log odds (``π₁`` = member fraction of that
    part). Then

    * **Alg. 2** (``t_ℓ`` known, Lemma 2): the rule ``η̂ > t_ℓ`` is evaluated on the
      second part;
    * **Alg. 3** (no closed form, e.g. PPV, F1): ``t̂_ℓ`` maximizes the Eq. 20 measure on
      the second part and the rule is evaluated on a third.

    ``metric_value_`` is the empirical measure of Eq. 20 on the last part (its ``TP_n`` and
    ``γ_n`` reweighted to ``prior`` when the sample's member fraction differs from it); on
    new data, the scorer :func:`~sklearn_mace.metrics.generalized_metric_scorer` (or
    ``get_scorer("generalized_f1")`` etc.) computes it. ``score`` is, as for every attacker,
    the membership advantage at ``prior_`` (an F1 or a PPV is not an advantage).

    Parameters
    ----------
    metric : str or GeneralizedMetric, default="am"
        The generalized metric ℓ (MACE Eq. 8), e.g. ``"am"``, ``"ppv"``, ``"f1"``.
    estimator : classifier with ``predict_proba``, default=None
        Any probabilistic classifier for ``η``; cloned, never mutated. ``None`` uses
        :class:`BayesOptimalMIA` with a Gaussian KDE (with a histogram when a class has
        fewer than ``n_features + 2`` rows in the first part, too few for the bandwidth
        rule's covariance).
    threshold : "auto", "search" or float in [0, 1], default="auto"
        ``"auto"``: Lemma 2's ``t_ℓ`` when it exists (Alg. 2), else a search (Alg. 3);
        ``"search"``: always Alg. 3; a float: Alg. 2 with that threshold.
    prior : float in (0, 1), default=None
        ``p``; ``None`` uses the fraction of members in ``y``.
    random_state : int, RandomState or None, default=None
        Seeds the split.
    member_label : object, default=None
        The label of the members in ``y``, like scikit-learn's ``pos_label``; it becomes
        ``classes_[1]``. ``None``: the greater label (``1`` of ``{0, 1}`` and ``{-1, 1}``,
        ``True`` of booleans); any other pair (e.g. strings) is accepted with a
        ``MembershipLabelWarning`` that names the label taken as the member.

    Attributes
    ----------
    estimator_ : classifier
        The clone of ``estimator`` fitted on the first part.
    threshold_ : float
        ``t_ℓ`` (Alg. 2) or ``t̂_ℓ`` (Alg. 3). The rule is ``η̂ > t_ℓ``, with ``t_ℓ``
        clipped to ``[1e-300, 1 − 1e-16]`` so that ``decision_function`` stays finite.
    algorithm_ : {2, 3}
        Which algorithm ran.
    metric_value_ : float
        Eq. 20 on the last part: the estimate of ``Adv_{ℓ,p}``, the value of the metric
        ℓ of this attack at ``prior_`` (e.g. its F1).
    prior_ : float
        ``p``.
    metric_ : GeneralizedMetric
        The metric ℓ.
    classes_ : ndarray of shape (2,)
        The labels given to ``fit``, ``[non-member, member]``.
    n_features_in_ : int
        Number of query features.

    References
    ----------
    MACE (TMLR 2023): Lemma 2–3, Alg. 2–3, Eq. 20, Thm 7–9; Koyejo et al. (2014).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace import GeneralizedMetricAttack
    >>> rng = np.random.default_rng(0)
    >>> Q = np.r_[rng.normal(1, 1, (600, 1)), rng.normal(0, 1, (600, 1))]
    >>> m = np.r_[np.ones(600), np.zeros(600)]
    >>> attack = GeneralizedMetricAttack(metric="am", random_state=0).fit(Q, m)
    >>> attack.algorithm_, attack.threshold_
    (2, 0.5)
    """

    _parameter_constraints = {
        "metric": [StrOptions(set(METRIC_NAMES)), GeneralizedMetric],
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "threshold": [StrOptions({"auto", "search"}), Interval(Real, 0, 1, closed="both")],
        "prior": [Interval(Real, 0, 1, closed="neither"), None],
        "random_state": ["random_state"],
        "member_label": "no_validation",
    }

    def __init__(
        self,
        *,
        metric="am",
        estimator=None,
        threshold="auto",
        prior=None,
        random_state=None,
        member_label=None,
    ):
        self.metric = metric
        self.estimator = estimator
        self.threshold = threshold
        self.prior = prior
        self.random_state = random_state
        self.member_label = member_label

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Run Alg. 2 or Alg. 3 on the query features ``X`` with membership ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of records of known membership.
        y : array-like of shape (n_samples,)
            Membership labels (``member_label`` names the member).

        Returns
        -------
        self : GeneralizedMetricAttack
            The fitted attacker.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        m = self._fit_membership_labels(y)
        self.prior_ = resolve_prior(self.prior, m)
        self.metric_ = resolve_metric(self.metric)
        if self.threshold == "auto":
            closed_form = self.metric_.optimal_threshold(self.prior_)
        elif self.threshold == "search":
            closed_form = None
        else:
            closed_form = float(self.threshold)
        self.algorithm_ = 2 if closed_form is not None else 3
        parts = self._split(m, self.algorithm_)
        first = parts[0]
        self.estimator_ = clone(self._base_estimator(X[first], m[first])).fit(X[first], m[first])
        fraction = m[first].mean()
        self._odds_shift = logit(self.prior_) - logit(fraction)
        if closed_form is None:
            self.threshold_ = self._search_threshold(X[parts[1]], m[parts[1]])
        else:
            self.threshold_ = closed_form
        last = parts[-1]
        self.metric_value_ = self.metric_.prior_weighted_measure(
            m[last], self._predict_membership(X[last]), self.prior_
        )
        return self

    def _base_estimator(self, X, m):
        """``estimator``, or the default: a KDE Bayes attack, or a histogram one when a class
        has fewer than ``n_features + 2`` rows (too few for a bandwidth rule's covariance)."""
        if self.estimator is not None:
            return self.estimator
        enough_rows = np.bincount(m, minlength=2).min() >= X.shape[1] + 2
        return BayesOptimalMIA(density="kde" if enough_rows else "histogram")

    def _split(self, m, algorithm):
        n_parts = algorithm  # Alg. 2: S1, S2; Alg. 3: S1, S2, S3
        counts = np.bincount(m, minlength=2)
        if counts.min() < n_parts:
            raise ValueError(
                f"Alg. {algorithm} splits the sample into {n_parts} parts and needs at least "
                f"{n_parts} members and {n_parts} non-members in y; got "
                f"{counts[1]} and {counts[0]}."
            )
        folds = StratifiedKFold(n_parts, shuffle=True, random_state=self.random_state)
        return [test for _, test in folds.split(np.zeros((len(m), 1)), m)]

    def _log_odds(self, X):
        proba = self.estimator_.predict_proba(X)
        column = int(np.flatnonzero(self.estimator_.classes_ == 1)[0])
        with np.errstate(divide="ignore"):
            return logit(proba[:, column]) + self._odds_shift

    def _decision(self, X):
        return self._log_odds(X) - _threshold_log_odds(self.threshold_)

    def _predict_membership(self, X):
        return (self._decision(X) > 0).astype(int)

    def _search_threshold(self, X, m):
        """Alg. 3 step 3: ``argmax_t`` of Eq. 20 for the rule ``η̂ > t`` on the second part.

        Exact over every distinct ``η̂`` (the rule only changes there): with ``η̂`` sorted,
        the weighted TP and FP of every cut are suffix sums, so the search is
        ``O(n log n)``; the Eq. 8 ratio is then evaluated for all cuts at once.
        """
        eta = expit(self._log_odds(X))
        order = np.argsort(eta, kind="stable")
        eta, m = eta[order], m[order]
        fraction = m.mean()
        w = np.where(m == 1, self.prior_ / fraction, (1 - self.prior_) / (1 - fraction)) / len(m)
        candidates = np.unique(np.r_[0.0, eta[eta < 1.0]])
        first_predicted = np.searchsorted(eta, candidates, side="right")
        suffix = lambda v: np.r_[np.cumsum(v[::-1])[::-1], 0.0]  # noqa: E731
        tp = suffix(w * m)[first_predicted]
        fp = suffix(w * (1 - m))[first_predicted]
        fn, tn = self.prior_ - tp, (1 - self.prior_) - fp
        c = self.metric_.coefficients(self.prior_)
        num = c["a0"] + c["a11"] * tp + c["a10"] * fp + c["a01"] * fn + c["a00"] * tn
        den = c["b0"] + c["b11"] * tp + c["b10"] * fp + c["b01"] * fn + c["b00"] * tn
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(den != 0, num / den, -np.inf)
        if not np.isfinite(value).any():
            raise ValueError(f"{self.metric_!r} is undefined for every threshold on the split.")
        return float(candidates[np.argmax(value)])

    def _validated(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def predict_proba(self, X):
        """``[1 − η̂, η̂]``: the fitted classifier's posterior at the prior ``prior_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is P(member).
        """
        odds = self._log_odds(self._validated(X))
        return np.column_stack([expit(-odds), expit(odds)])

    def decision_function(self, X):
        """Log posterior odds minus ``logit(t_ℓ)``: positive exactly when ``predict`` says member.

        For ``t_ℓ`` = 0 or 1 (e.g. TPR) the shift is infinite; it is then taken at
        ``1e-300`` or ``1 − 1e-16`` so that values stay finite and ranks are kept.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.

        Returns
        -------
        decision : ndarray of shape (n_samples,)
            The shifted log posterior odds; ``> 0`` exactly where ``predict`` says member.
        """
        return self._decision(self._validated(X))

    def predict(self, X):
        """Membership guesses ``η̂ > t_ℓ`` as labels of ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` (the member label) where ``decision_function(X) > 0``.
        """
        return self._labels(self._predict_membership(self._validated(X)))
