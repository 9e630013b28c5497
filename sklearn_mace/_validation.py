"""Validation of membership labels and priors: a leaf module every layer may import.

The label contract (``docs/design.md``, "The attacker contract"):

* ``classes_`` echoes the labels given to ``fit`` and ``classes_[1]`` is the member;
* ``member_label`` names the member label explicitly, like scikit-learn's ``pos_label``;
* without it the greater label is the member (scikit-learn's rule for binary targets).
  Labels that carry their own meaning — ``{0, 1}``, the papers' ``{-1, 1}`` and booleans —
  take it silently; any other pair (``{"in", "out"}``, ``{1, 2}``) is accepted with a
  :class:`MembershipLabelWarning` that names the label taken as the member.

Nothing here imports another module of the package, so ``base``, ``metrics`` and
``density`` can all depend on it without a cycle.
"""

import warnings
from numbers import Real

import numpy as np
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d

__all__ = [
    "MembershipLabelWarning",
    "check_prior",
    "encode_membership",
    "fit_membership_labels",
    "resolve_prior",
    "validate_membership",
]


class MembershipLabelWarning(UserWarning):
    """Labels other than {0, 1}, {-1, 1} or booleans: the member was taken by a rule.

    Pass ``member_label=`` to the attacker to say which label is the member (and silence
    this warning).
    """


def _is_membership_coded(y):
    """Whether ``y`` uses a coding that says which side is the member: 1/True."""
    if y.dtype == bool:
        return True
    if y.dtype.kind not in "iuf":
        return False
    return bool(np.isin(y, (-1, 0, 1)).all())


def _check_binary(y, input_name):
    if y.size == 0:
        raise ValueError(f"{input_name} is empty; membership labels are needed.")
    y_type = type_of_target(y, input_name=input_name, raise_unknown=True)
    if y_type == "continuous":
        raise ValueError(
            f"Unknown label type: {y_type}. {input_name} must hold membership labels, e.g. "
            "1 for members and 0 or -1 for non-members."
        )
    if y_type not in ("binary", "unknown") or np.unique(y).size > 2:
        raise ValueError(
            "Only binary classification is supported. The type of the target is "
            f"{y_type}; {input_name} must hold two membership labels (member and non-member)."
        )


def validate_membership(y, *, input_name="y", require_both_classes=True):
    """Membership labels coded ``{0, 1}``, ``{-1, 1}`` or booleans as 0/1 (1 = member).

    The form the metric functions take (``y_true`` of :func:`membership_advantage`); an
    attacker's own labels go through :func:`fit_membership_labels` instead.

    Raises a ``ValueError`` naming ``input_name`` for anything else and, when
    ``require_both_classes``, if only one class is present.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Membership labels.
    input_name : str, default="y"
        Name used in error messages.
    require_both_classes : bool, default=True
        Reject labels of one class only.

    Returns
    -------
    m : ndarray of shape (n_samples,)
        1 = member, 0 = non-member.

    Examples
    --------
    >>> from sklearn_mace.base import validate_membership
    >>> validate_membership([1, -1, -1, 1]).tolist()
    [1, 0, 0, 1]
    >>> validate_membership([True, False]).tolist()
    [1, 0]
    """
    y = column_or_1d(y, warn=True)
    _check_binary(y, input_name)
    if not _is_membership_coded(y):
        raise ValueError(
            f"{input_name} must hold membership labels 1 (member) and 0 or -1 "
            f"(non-member), or booleans; got labels {np.unique(y)!r}."
        )
    m = (y == 1).astype(int)
    if require_both_classes and m.min() == m.max():
        which = "members" if m[0] == 1 else "non-members"
        raise ValueError(
            f"{input_name} contains only one class ({which}); both members (1) and "
            "non-members (0 or -1) are needed."
        )
    return m


def fit_membership_labels(y, member_label=None, *, input_name="y"):
    """``(m, classes)`` for ``fit``: 0/1 labels (1 = member) and the echoed ``classes_``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Two distinct labels, one for members and one for non-members.
    member_label : object, default=None
        The label of the members. ``None``: the greater label (``1`` of ``{0, 1}`` and
        ``{-1, 1}``, ``True`` of booleans); for other labels a
        :class:`MembershipLabelWarning` names the label taken.
    input_name : str, default="y"
        Name used in error messages.

    Returns
    -------
    m : ndarray of shape (n_samples,)
        1 = member, 0 = non-member.
    classes : ndarray of shape (2,)
        ``[non-member label, member label]``; sorted unless ``member_label`` is the smaller.

    Examples
    --------
    >>> from sklearn_mace.base import fit_membership_labels
    >>> m, classes = fit_membership_labels(["in", "out", "in"], member_label="in")
    >>> m.tolist(), classes.tolist()
    ([1, 0, 1], ['out', 'in'])
    """
    y = column_or_1d(y, warn=True)
    _check_binary(y, input_name)
    labels = np.unique(y)
    if labels.size < 2:
        raise ValueError(
            f"{input_name} contains only one class ({labels[0]!r}); both members and "
            "non-members are needed."
        )
    if member_label is None:
        member = labels[1]
        if not _is_membership_coded(y):
            shown = np.asarray(member).tolist()
            warnings.warn(
                f"{input_name} has labels {labels.tolist()!r}, which do not say which side "
                f"is the member; taking {shown!r} (the greater label) as the member. Pass "
                "member_label= to choose.",
                MembershipLabelWarning,
                stacklevel=3,
            )
    else:
        matches = labels[labels == member_label]
        if matches.size == 0:
            raise ValueError(
                f"member_label={member_label!r} is not one of the labels in {input_name}: "
                f"{labels.tolist()!r}."
            )
        member = matches[0]
    classes = np.array([labels[labels != member][0], member], dtype=labels.dtype)
    return (y == member).astype(int), classes


def encode_membership(y, classes, *, input_name="y"):
    """Labels in the coding of ``classes`` (as fitted) to 0/1, ``classes[1]`` = member."""
    y = column_or_1d(y)
    unknown = ~np.isin(y, classes)
    if unknown.any():
        raise ValueError(
            f"{input_name} has labels {np.unique(y[unknown])!r} not seen in fit "
            f"(classes_ = {classes!r})."
        )
    return (y == classes[1]).astype(int)


def check_prior(prior, *, name="prior"):
    """Validate a membership prior: a real number strictly between 0 and 1.

    Parameters
    ----------
    prior : float
        The value to check.
    name : str, default="prior"
        Name used in the error message.

    Returns
    -------
    prior : float
        The prior as a Python float.

    Raises
    ------
    ValueError
        Naming ``name``, when ``prior`` is not a real number in (0, 1).

    Examples
    --------
    >>> from sklearn_mace.base import check_prior
    >>> check_prior(0.25)
    0.25
    >>> check_prior(1.0, name="confidence")
    Traceback (most recent call last):
    ...
    ValueError: confidence must be in the open interval (0, 1); got 1.0.
    """
    if isinstance(prior, bool) or not isinstance(prior, Real | np.number):
        raise TypeError(f"{name} must be a float in (0, 1); got {prior!r}.")
    if not np.isfinite(prior) or not 0.0 < float(prior) < 1.0:
        raise ValueError(f"{name} must be in the open interval (0, 1); got {prior!r}.")
    return float(prior)


def resolve_prior(prior, m):
    """The prior P(member): ``prior`` when given, else the fraction of members in ``m``.

    Decoupling the two lets a balanced estimation sample report risk at the real-world
    prior (MACE Experiment 2, ``N1 = pN``).

    Parameters
    ----------
    prior : float in (0, 1) or None
        The prior asked for; ``None`` uses the sample's member fraction.
    m : ndarray of shape (n_samples,)
        0/1 membership of the sample.

    Returns
    -------
    prior : float
        The prior in use.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.base import resolve_prior
    >>> resolve_prior(None, np.array([1, 0, 0, 0])), resolve_prior(0.1, np.array([1, 0]))
    (0.25, 0.1)
    """
    if prior is None:
        return float(np.mean(m))
    return check_prior(prior)
