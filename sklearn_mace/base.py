"""Shared machinery of every membership attacker: label handling, the prior, ``score``.

Membership labels follow the README's "Conventions": ``1`` is a member of the training set,
``0`` (or the papers' ``-1``) a non-member, booleans are accepted; for these ``classes_`` is
``[0, 1]``.
Attackers also accept any other pair of labels the scikit-learn way (``classes_`` = the sorted
labels, the member class being ``classes_[1]``), so that they work wherever a binary
classifier does.
"""

from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .metrics import membership_advantage

__all__ = [
    "AttackerMixin",
    "check_prior",
    "fit_membership_labels",
    "resolve_prior",
    "validate_membership",
]

MEMBERSHIP_CLASSES = np.array([0, 1])


def validate_membership(y, *, input_name="y", require_both_classes=True):
    """Return membership labels as an int array of 0 (non-member) and 1 (member).

    Accepts ``{0, 1}``, the papers' ``{-1, 1}`` and booleans. Raises a ``ValueError`` naming
    ``input_name`` for anything else, and, when ``require_both_classes``, if only one class
    is present (an attacker cannot be fitted from members alone).
    """
    y = column_or_1d(y, warn=True)
    if y.size == 0:
        raise ValueError(f"{input_name} is empty; membership labels are needed.")
    y_type = type_of_target(y, input_name=input_name, raise_unknown=True)
    if y_type == "continuous":
        raise ValueError(
            f"Unknown label type: {y_type}. {input_name} must hold membership labels: "
            "1 for members, 0 or -1 for non-members."
        )
    if y_type != "binary":
        raise ValueError(
            "Only binary classification is supported. The type of the target is "
            f"{y_type}; {input_name} must hold membership labels 1 (member) and 0 or -1 "
            "(non-member)."
        )
    if y.dtype == bool:
        labels = y.astype(int)
    else:
        try:
            labels = y.astype(float)
        except (TypeError, ValueError):
            labels = None
        if labels is None or not np.isin(labels, (-1, 0, 1)).all():
            raise ValueError(
                f"{input_name} must hold membership labels 1 (member) and 0 or -1 "
                f"(non-member), or booleans; got labels {np.unique(y)!r}."
            )
    m = (labels == 1).astype(int)
    if require_both_classes:
        _check_both_classes(m, input_name)
    return m


def _check_both_classes(m, input_name):
    if m.min() == m.max():
        which = "members" if m[0] == 1 else "non-members"
        raise ValueError(
            f"{input_name} contains only one class ({which}); both members (1) and "
            "non-members (0 or -1) are needed."
        )


def _is_membership_coded(y):
    """Whether ``y`` uses the membership coding: booleans or numbers in {-1, 0, 1}."""
    if y.dtype == bool:
        return True
    if y.dtype.kind not in "iuf":
        return False
    return bool(np.isin(y, (-1, 0, 1)).all())


def fit_membership_labels(y, *, input_name="y"):
    """Membership labels for ``fit``: ``(m, classes)`` with ``m`` in {0, 1}.

    Membership-coded labels ({-1, 0, 1}, booleans) give ``classes = [0, 1]``. Any other pair
    of labels is accepted as by scikit-learn classifiers: ``classes`` are the sorted labels
    and ``classes[1]`` (the greater) is the member class.
    """
    y = column_or_1d(y, warn=True)
    if y.size and not _is_membership_coded(y):
        y_type = type_of_target(y, input_name=input_name, raise_unknown=True)
        if y_type == "binary":
            classes = np.unique(y)
            m = (y == classes[-1]).astype(int)
            if classes.size < 2:
                raise ValueError(
                    f"{input_name} contains only one class ({classes[0]!r}); both members "
                    "and non-members are needed."
                )
            return m, classes
    return validate_membership(y, input_name=input_name), MEMBERSHIP_CLASSES.copy()


def check_prior(prior, *, name="prior"):
    """Validate a membership prior: a real number strictly between 0 and 1."""
    if isinstance(prior, bool) or not isinstance(prior, Real | np.number):
        raise TypeError(f"{name} must be a float in (0, 1); got {prior!r}.")
    if not 0.0 < float(prior) < 1.0 or not np.isfinite(prior):
        raise ValueError(f"{name} must be in the open interval (0, 1); got {prior!r}.")
    return float(prior)


def resolve_prior(prior, m):
    """The prior P(member): ``prior`` when given, else the fraction of members in ``m``.

    Decoupling the two lets a balanced estimation sample report risk at the real-world
    prior (MACE Experiment 2, ``N1 = pN``).
    """
    if prior is None:
        return float(np.mean(m))
    return check_prior(prior)


class AttackerMixin(ClassifierMixin):
    """Mixin for membership-inference attackers.

    ``predict_proba(X)[:, 1]`` is P(member | query), ``decision_function`` the log posterior
    odds, and ``score`` the membership advantage ``2 * accuracy - 1`` (MACE Def. 1) rather
    than the accuracy, so that ``GridSearchCV`` and ``cross_val_score`` rank attackers by
    advantage out of the box.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _fit_membership_labels(self, y):
        """Validate ``y`` and set ``classes_``; return the 0/1 labels (1 = member)."""
        m, self.classes_ = fit_membership_labels(y)
        return m

    def _encode_membership(self, y, *, input_name="y"):
        """Labels in the coding seen by ``fit`` as 0/1 (1 = member)."""
        check_is_fitted(self)
        if np.array_equal(self.classes_, MEMBERSHIP_CLASSES):
            return validate_membership(y, input_name=input_name, require_both_classes=False)
        y = column_or_1d(y)
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise ValueError(
                f"{input_name} has labels {np.unique(y[unknown])!r} not seen in fit "
                f"(classes_ = {self.classes_!r})."
            )
        return (y == self.classes_[1]).astype(int)

    def score(self, X, y, sample_weight=None):
        """Membership advantage ``2 * accuracy - 1`` of ``predict(X)`` (MACE Def. 1, Eq. 10).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.
        y : array-like of shape (n_samples,)
            Membership labels in the coding used in ``fit`` (1 member, 0 or -1 non-member,
            booleans, or the two labels of ``classes_``).
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        advantage : float
            In [-1, 1]; 0 is random guessing.
        """
        m_true = self._encode_membership(y)
        m_pred = self._encode_membership(self.predict(X), input_name="predict(X)")
        return membership_advantage(m_true, m_pred, sample_weight=sample_weight)
