"""What every membership attacker shares: the attacker contract (``docs/design.md``).

* ``classes_`` echoes the labels given to ``fit``; ``classes_[1]`` is the member
  (``member_label=`` names it, else the greater label; see :mod:`sklearn_mace._validation`).
* ``y`` always means membership.
* ``predict_proba(X)[:, 1]`` is P(member | query), or the method is absent.
* The sign of ``decision_function(X)`` is ``predict``'s decision. Score-plus-cut attackers
  expose the raw score as ``score_samples`` and the cut as ``offset_``, as
  :class:`~sklearn.ensemble.IsolationForest` does (:class:`ScoreCutMixin`).
* ``score(X, y)`` is the membership advantage at ``prior_`` (MACE Def. 1, the prior-weighted
  form ``2(p·TPR + (1 − p)·TNR) − 1``), for every attacker.
"""

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    check_prior,
    encode_membership,
    fit_membership_labels,
    resolve_prior,
    validate_membership,
)
from .metrics._membership import membership_advantage

__all__ = [
    "AttackerMixin",
    "ScoreCutMixin",
    "check_prior",
    "fit_membership_labels",
    "resolve_prior",
    "validate_membership",
]


class AttackerMixin(ClassifierMixin):
    """Mixin for membership-inference attackers: labels, ``score`` = advantage at ``prior_``.

    Subclasses call ``m = self._fit_membership_labels(y)`` in ``fit`` (it sets ``classes_``
    from ``y`` and the ``member_label`` parameter), set ``prior_``, and return labels of
    ``classes_`` from ``predict`` (``self._labels(is_member)``).

    Examples
    --------
    A toy attacker: a record is a member when its loss (column 0) is below the median.

    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from sklearn_mace.base import AttackerMixin
    >>> class LowLossAttack(AttackerMixin, BaseEstimator):
    ...     def __init__(self, member_label=None):
    ...         self.member_label = member_label
    ...
    ...     def fit(self, X, y):
    ...         m = self._fit_membership_labels(y)
    ...         self.prior_ = float(m.mean())
    ...         self.median_ = float(np.median(np.asarray(X)[:, 0]))
    ...         return self
    ...
    ...     def predict(self, X):
    ...         return self._labels(np.asarray(X)[:, 0] < self.median_)
    >>> X, y = [[0.1], [0.2], [0.9], [1.0]], ["in", "in", "out", "out"]
    >>> attack = LowLossAttack(member_label="in").fit(X, y)
    >>> attack.classes_.tolist(), attack.predict([[0.0], [2.0]]).tolist()
    (['out', 'in'], ['in', 'out'])
    >>> attack.score(X, y)  # membership advantage at prior_
    1.0
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _fit_membership_labels(self, y):
        """Validate ``y`` and set ``classes_``; return the 0/1 labels (1 = member)."""
        m, self.classes_ = fit_membership_labels(y, getattr(self, "member_label", None))
        return m

    def _encode_membership(self, y, *, input_name="y"):
        """Labels in the coding seen by ``fit`` as 0/1 (1 = member)."""
        check_is_fitted(self)
        return encode_membership(y, self.classes_, input_name=input_name)

    def _labels(self, is_member):
        """Boolean membership guesses as labels of ``classes_``."""
        return self.classes_[np.asarray(is_member).astype(int)]

    def score(self, X, y, sample_weight=None):
        """Membership advantage of ``predict(X)`` at the prior ``prior_`` (MACE Def. 1).

        ``2·(p·TPR + (1 − p)·TNR) − 1`` with ``p = prior_``: the advantage in the
        membership experiment with that prior, whatever the class mix of ``(X, y)``, so a
        balanced validation fold is scored at the real-world prior. ``GridSearchCV`` and
        ``cross_val_score`` rank attackers by it. When ``y`` holds one class only, TPR or
        TNR is undefined and ``2·accuracy − 1`` is returned.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.
        y : array-like of shape (n_samples,)
            Membership labels in the coding of ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        advantage : float
            In [-1, 1]; 0 is random guessing.
        """
        m_true = self._encode_membership(y)
        m_pred = self._encode_membership(self.predict(X), input_name="predict(X)")
        prior = None if m_true.min() == m_true.max() else self.prior_
        return membership_advantage(m_true, m_pred, prior=prior, sample_weight=sample_weight)


class ScoreCutMixin:
    """A score plus a cut: ``decision_function = score_samples − offset_``, as IsolationForest.

    Subclasses implement ``score_samples(X)`` (larger = more likely a member) and set
    ``offset_`` in ``fit``; ``predict`` says member where the score exceeds the cut.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from sklearn_mace.base import AttackerMixin, ScoreCutMixin
    >>> class LowLossAttack(ScoreCutMixin, AttackerMixin, BaseEstimator):
    ...     def fit(self, X, y):
    ...         m = self._fit_membership_labels(y)
    ...         self.prior_ = float(m.mean())
    ...         self.offset_ = -float(np.median(np.asarray(X)[:, 0]))
    ...         return self
    ...
    ...     def score_samples(self, X):
    ...         return -np.asarray(X, dtype=float)[:, 0]  # low loss = member
    >>> attack = LowLossAttack().fit([[0.1], [0.2], [0.9], [1.0]], [1, 1, 0, 0])
    >>> attack.decision_function([[0.0], [2.0]]).tolist(), attack.predict([[0.0], [2.0]])
    ([0.55, -1.45], array([1, 0]))
    """

    def decision_function(self, X):
        """``score_samples(X) − offset_``: positive exactly where ``predict`` says member.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records (or query features) to score.

        Returns
        -------
        decision : ndarray of shape (n_samples,)
            Positive where the guess is "member".
        """
        return self.score_samples(X) - self.offset_

    def predict(self, X):
        """Membership guesses: ``classes_[1]`` where ``decision_function(X) > 0``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records (or query features) to classify.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels of ``classes_``.
        """
        return self._labels(self.decision_function(X) > 0)
