"""A hard rule on one score column: the head that turns a query into an attacker."""

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_prior, resolve_prior
from ..base import AttackerMixin, ScoreCutMixin
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context

__all__ = ["ThresholdAttack", "fit_labels_and_prior", "score_cut"]


def fit_labels_and_prior(attacker, y, n_samples):
    """Set ``classes_`` and ``prior_`` of an unsupervised score-plus-cut attacker.

    With ``y`` (membership labels), ``classes_`` echoes them (``member_label`` names the
    member) and ``prior_`` is ``prior`` or the member fraction; without, ``classes_ = [0, 1]``
    and ``prior_`` is ``prior`` or 0.5.
    """
    if y is None:
        attacker.classes_ = np.array([0, 1])
        attacker.prior_ = 0.5 if attacker.prior is None else check_prior(attacker.prior)
        return
    m = attacker._fit_membership_labels(y)
    if len(m) != n_samples:
        raise ValueError(f"y has {len(m)} labels for {n_samples} rows of X.")
    attacker.prior_ = resolve_prior(attacker.prior, m)


def score_cut(scores, threshold):
    """``offset_``: ``threshold``, or the median of ``scores`` for ``"median"``."""
    return float(np.median(scores)) if threshold == "median" else float(threshold)


class ThresholdAttack(AttackerMixin, ScoreCutMixin, BaseEstimator):
    """Membership rule ``score > offset_`` on a single score column (larger = member).

    The head of an attack built from a query, in the style of
    :class:`~sklearn.ensemble.IsolationForest`: ``score_samples(X)`` is the column itself,
    ``offset_`` the cut, ``decision_function = score_samples − offset_`` and ``predict``
    says member where it is positive. ``make_pipeline(DOMIASQuery(syn, ref),
    ThresholdAttack())`` is DOMIAS's hard rule (App. A.1: the median of the targets' scores);
    with membership labels, ``make_pipeline(query, BayesOptimalMIA())`` learns the rule
    instead. There is no ``predict_proba``: a score column is not a probability of
    membership.

    Parameters
    ----------
    threshold : float or "median", default="median"
        The cut ``offset_``: a fixed value, or the median of the scores passed to ``fit``
        (DOMIAS App. A.1: half of those records are guessed members).
    prior : float in (0, 1) or None, default=None
        The membership prior ``prior_`` of ``score`` (the advantage at that prior).
        ``None``: the member fraction of ``y``, or 0.5 when ``fit`` gets no labels.
    member_label : object, default=None
        The label of members in ``y`` (see :func:`~sklearn_mace.base.fit_membership_labels`).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels of ``y`` (``[non-member, member]``), or ``[0, 1]`` without labels.
    prior_ : float
        The membership prior of ``score``.
    offset_ : float
        The cut on the score column.
    n_features_in_ : int
        Always 1.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.attacks import ThresholdAttack
    >>> scores = np.array([[0.1], [0.4], [2.0], [3.0]])
    >>> attack = ThresholdAttack().fit(scores)  # cut at the median, 1.2
    >>> attack.offset_, attack.predict(scores).tolist()
    (1.2, [0, 0, 1, 1])
    """

    _parameter_constraints = {
        "threshold": [StrOptions({"median"}), Interval(Real, None, None, closed="neither")],
        "prior": [Interval(Real, 0, 1, closed="neither"), None],
        "member_label": "no_validation",
    }

    def __init__(self, *, threshold="median", prior=None, member_label=None):
        self.threshold = threshold
        self.prior = prior
        self.member_label = member_label

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The rule is not learnt from y (labels only set classes_ and prior_): no accuracy
        # on the training labels is promised.
        tags.classifier_tags.poor_score = True
        return tags

    def _scores(self, X, *, reset):
        X = validate_data(self, X, dtype=np.float64, reset=reset)
        if X.shape[1] != 1:
            raise ValueError(
                f"ThresholdAttack takes one score column (larger = member); X has "
                f"{X.shape[1]} columns. Put a single-column query before it."
            )
        return X[:, 0]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Set the cut (and the labels and prior).

        Parameters
        ----------
        X : array-like of shape (n_samples, 1)
            Scores, larger = more likely a member.
        y : array-like of shape (n_samples,), default=None
            Membership labels, used for ``classes_`` and ``prior_`` only.

        Returns
        -------
        self : object
            The fitted attacker (``offset_``, ``classes_`` and ``prior_`` set).
        """
        scores = self._scores(X, reset=True)
        fit_labels_and_prior(self, y, len(scores))
        self.offset_ = score_cut(scores, self.threshold)
        return self

    def score_samples(self, X):
        """The score column itself.

        Parameters
        ----------
        X : array-like of shape (n_samples, 1)
            Scores, larger = more likely a member.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            The column of ``X`` as floats; ``decision_function`` subtracts ``offset_``.
        """
        check_is_fitted(self)
        return self._scores(X, reset=False)
