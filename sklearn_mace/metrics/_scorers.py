"""Membership scorers for ``GridSearchCV`` / ``cross_val_score``, looked up with :func:`get_scorer`.

Every scorer here reads the member label from the fitted estimator (``classes_[1]``, the
attacker contract of ``docs/design.md``), so it works with ``{0, 1}``, ``{-1, 1}``,
booleans and string labels alike, and with any binary scikit-learn classifier.

What scikit-learn's public API does not allow: it has no public registry of scorer names,
so a bare string such as ``GridSearchCV(..., scoring="membership_advantage")`` is not
understood (scikit-learn raises "not a valid scoring value"). Pass the scorer object,
``scoring=get_scorer("membership_advantage")``, or a dict of them,
``scoring={name: get_scorer(name) for name in ("membership_advantage", "tpr_at_1pct_fpr")}``
(then ``refit="membership_advantage"``). For the same reason scikit-learn's own
``sklearn.metrics.get_scorer_names()`` does not list these names; ours lists both.
"""

import numpy as np
from sklearn.metrics import get_scorer as _sklearn_get_scorer
from sklearn.metrics import get_scorer_names as _sklearn_get_scorer_names

from .._validation import check_prior, encode_membership
from ._generalized import METRIC_NAMES, GeneralizedMetric
from ._membership import membership_advantage, tpr_at_fpr

__all__ = ["generalized_metric_scorer", "get_scorer", "get_scorer_names"]


def _fitted_classes(estimator):
    classes = getattr(estimator, "classes_", None)
    if classes is None or len(classes) != 2:
        raise ValueError(
            f"Membership scorers need a fitted binary classifier with classes_ (non-member, "
            f"member); {type(estimator).__name__} has classes_={classes!r}."
        )
    return np.asarray(classes)


def _fitted_prior(estimator):
    """``prior_`` of the estimator, or of the last step of a pipeline; else None."""
    prior = getattr(estimator, "prior_", None)
    if prior is None and hasattr(estimator, "steps"):
        prior = getattr(estimator.steps[-1][1], "prior_", None)
    return prior


def _finite_ranks(scores):
    """``±inf`` (a certain decision, e.g. a histogram cell of one class) to the largest
    finite floats, keeping the order; NaN stays and is rejected by the metric."""
    big = np.finfo(float).max
    return np.clip(np.asarray(scores, dtype=float), -big, big)


class _MembershipScorer:
    """A scorer ``scorer(estimator, X, y, sample_weight=None)`` on membership labels.

    ``y`` is encoded with the estimator's own ``classes_`` (``classes_[1]`` is the member),
    then the subclass scores the 0/1 labels.
    """

    def __call__(self, estimator, X, y_true, sample_weight=None):
        classes = _fitted_classes(estimator)
        m = encode_membership(y_true, classes, input_name="y_true")
        return self._score(estimator, X, m, classes, sample_weight)

    def _predicted_membership(self, estimator, X, classes):
        y_pred = estimator.predict(X)
        return encode_membership(y_pred, classes, input_name="predict(X)")


class _AdvantageScorer(_MembershipScorer):
    """Membership advantage of ``predict`` at the estimator's ``prior_`` (when it has one)."""

    def _score(self, estimator, X, m, classes, sample_weight):
        prior = _fitted_prior(estimator)
        if m.min() == m.max():  # one class: TPR or TNR undefined, 2·accuracy − 1
            prior = None
        pred = self._predicted_membership(estimator, X, classes)
        return membership_advantage(m, pred, prior=prior, sample_weight=sample_weight)

    def __repr__(self):
        return "get_scorer('membership_advantage')"


class _TPRAtFPRScorer(_MembershipScorer):
    """TPR at a fixed FPR from ``decision_function``, else ``predict_proba(X)[:, 1]``."""

    def __init__(self, fpr):
        self.fpr = fpr

    def _score(self, estimator, X, m, classes, sample_weight):
        if sample_weight is not None:
            raise ValueError("The TPR-at-FPR scorers do not support sample_weight; pass None.")
        if hasattr(estimator, "decision_function"):
            scores = estimator.decision_function(X)
        else:
            scores = estimator.predict_proba(X)[:, 1]
        return tpr_at_fpr(m, _finite_ranks(scores), fpr=self.fpr)

    def __repr__(self):
        return f"_TPRAtFPRScorer(fpr={self.fpr!r})"


class _GeneralizedMetricScorer(_MembershipScorer):
    """MACE Eq. 20 of ``predict`` for a generalized metric, reweighted to a prior."""

    def __init__(self, metric, prior=None):
        self.metric = metric
        self.prior = prior

    def _score(self, estimator, X, m, classes, sample_weight):
        prior = self.prior
        if prior is None:
            prior = _fitted_prior(estimator)
        if prior is None:
            w = np.ones(m.size) if sample_weight is None else np.asarray(sample_weight, float)
            prior = float(np.sum(w * m) / np.sum(w))
        pred = self._predicted_membership(estimator, X, classes)
        return self.metric.prior_weighted_measure(m, pred, prior, sample_weight=sample_weight)

    def __repr__(self):
        return f"generalized_metric_scorer({self.metric!r}, prior={self.prior!r})"


def generalized_metric_scorer(metric, prior=None):
    """A scorer of the MACE Eq. 20 value of ``predict`` under a generalized metric.

    The scorer computes :meth:`~sklearn_mace.metrics.GeneralizedMetric.prior_weighted_measure`
    of the estimator's membership guesses at ``prior`` (the value that
    ``GeneralizedMetricAttack.metric_value_`` holds for its own evaluation split). The
    member is the estimator's ``classes_[1]``.

    Parameters
    ----------
    metric : str or GeneralizedMetric
        A name of :data:`~sklearn_mace.metrics.METRIC_NAMES` (``"f1"``, ``"ppv"``,
        ``"am"``, ...) or an instance.
    prior : float in (0, 1), default=None
        ``p``; ``None`` uses the estimator's ``prior_`` when it has one (every attacker
        does), else the member fraction of the scored labels.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sample_weight=None)``, for ``scoring=`` of
        ``GridSearchCV`` and ``cross_val_score``.

    Examples
    --------
    >>> from sklearn.dummy import DummyClassifier
    >>> from sklearn_mace.metrics import generalized_metric_scorer
    >>> X, y = [[0], [1], [2], [3]], [1, 1, 0, 0]
    >>> always_member = DummyClassifier(strategy="constant", constant=1).fit(X, y)
    >>> generalized_metric_scorer("ppv", prior=0.1)(always_member, X, y)
    0.1
    >>> generalized_metric_scorer("tpr")(always_member, X, y)
    1.0
    """
    if not isinstance(metric, GeneralizedMetric):
        metric = GeneralizedMetric.from_name(metric)
    if prior is not None:
        prior = check_prior(prior)
    return _GeneralizedMetricScorer(metric, prior)


_GENERALIZED = tuple(name for name in METRIC_NAMES if name != "wa")


def _membership_scorer(name):
    if name == "membership_advantage":
        return _AdvantageScorer()
    if name == "tpr_at_1pct_fpr":
        return _TPRAtFPRScorer(0.01)
    if name == "tpr_at_0.1pct_fpr":
        return _TPRAtFPRScorer(0.001)
    return generalized_metric_scorer(name.removeprefix("generalized_"))


_NAMES = (
    "membership_advantage",
    "tpr_at_1pct_fpr",
    "tpr_at_0.1pct_fpr",
    *(f"generalized_{name}" for name in _GENERALIZED),
)


def get_scorer_names():
    """Every name :func:`get_scorer` accepts: this package's scorers and scikit-learn's.

    Returns
    -------
    names : list of str
        Sorted.

    Examples
    --------
    >>> from sklearn_mace.metrics import get_scorer_names
    >>> {"membership_advantage", "generalized_f1", "roc_auc"} <= set(get_scorer_names())
    True
    """
    return sorted({*_NAMES, *_sklearn_get_scorer_names()})


def get_scorer(scoring):
    """A scorer by name: this package's membership scorers, else scikit-learn's.

    Membership scorers (the member is the estimator's ``classes_[1]``):

    * ``"membership_advantage"``: MACE Def. 1 from ``predict``, at the estimator's
      ``prior_`` when it has one (what every attacker's ``score`` returns);
    * ``"tpr_at_1pct_fpr"``, ``"tpr_at_0.1pct_fpr"``: TPR at a low FPR (Carlini et al.,
      2022) from ``decision_function``, else ``predict_proba(X)[:, 1]``;
    * ``"generalized_f1"``, ``"generalized_ppv"``, ``"generalized_am"`` and the other
      metric names: MACE Eq. 20 (see :func:`generalized_metric_scorer`).

    Any scikit-learn name (``"roc_auc"``, ``"accuracy"``) and any callable are passed to
    :func:`sklearn.metrics.get_scorer`. scikit-learn itself does not know our names: pass
    the returned object (or a dict of them) as ``scoring=``, not the bare string.

    Parameters
    ----------
    scoring : str or callable
        A name from :func:`get_scorer_names` or any argument of
        :func:`sklearn.metrics.get_scorer`.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y)``, for ``cross_val_score`` and ``GridSearchCV``: a new
        object for every name (a callable is returned as it is).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn_mace import BayesOptimalMIA
    >>> from sklearn_mace.metrics import get_scorer
    >>> rng = np.random.default_rng(0)
    >>> Q = np.r_[rng.normal(2, 1, (100, 1)), rng.normal(0, 1, (100, 1))]
    >>> y = np.r_[["in"] * 100, ["out"] * 100]
    >>> attack = BayesOptimalMIA(device="cpu", member_label="in")
    >>> scores = cross_val_score(attack, Q, y, cv=3, scoring=get_scorer("tpr_at_1pct_fpr"))
    >>> bool(scores.min() > 0.1)
    True
    """
    if isinstance(scoring, str) and scoring in _NAMES:
        return _membership_scorer(scoring)
    return _sklearn_get_scorer(scoring)
