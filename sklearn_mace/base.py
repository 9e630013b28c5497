"""Shared machinery of every membership attacker: label handling, the prior, ``score``.

Membership labels follow DESIGN.md: ``1`` is a member of the training set, ``0`` (or the
papers' ``-1``) a non-member, booleans are accepted; ``classes_`` is always ``[0, 1]``.
"""

from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d

from .metrics import membership_advantage

__all__ = ["AttackerMixin", "check_prior", "resolve_prior", "validate_membership"]

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
    if require_both_classes and m.min() == m.max():
        which = "members" if m[0] == 1 else "non-members"
        raise ValueError(
            f"{input_name} contains only one class ({which}); both members (1) and "
            "non-members (0 or -1) are needed."
        )
    return m


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
        """Validate ``y`` and set ``classes_``; return the 0/1 labels."""
        m = validate_membership(y)
        self.classes_ = MEMBERSHIP_CLASSES.copy()
        return m

    def score(self, X, y, sample_weight=None):
        """Membership advantage ``2 * accuracy - 1`` of ``predict(X)`` (MACE Def. 1, Eq. 10).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features.
        y : array-like of shape (n_samples,)
            Membership labels: 1 member, 0 or -1 non-member, or booleans.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        advantage : float
            In [-1, 1]; 0 is random guessing.
        """
        m = validate_membership(y, require_both_classes=False)
        return membership_advantage(m, self.predict(X), sample_weight=sample_weight)
