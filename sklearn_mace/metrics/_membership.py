"""Membership metrics: advantage, low-FPR operating points, top-quantile precision."""

import numpy as np
from sklearn.metrics import accuracy_score, roc_curve
from sklearn.utils import check_consistent_length
from sklearn.utils.validation import column_or_1d

from .._validation import check_prior, validate_membership

__all__ = ["membership_advantage", "top_quantile_precision", "tpr_at_fpr"]


def _binary_truth(y_true, input_name="y_true"):
    """Membership labels coded {0, 1}, {-1, 1} or booleans as 0/1 (1 = member)."""
    return validate_membership(y_true, input_name=input_name, require_both_classes=False)


def membership_advantage(y_true, y_pred, *, prior=None, sample_weight=None):
    """Membership advantage ``2 * P(correct) - 1`` of hard membership predictions.

    MACE Def. 1 (Eq. 10), after Yeom et al. (2018): 0 is random guessing, 1 a perfect
    attacker. With ``prior=p`` the correct-guess probability is taken in the membership
    experiment with prior ``p``, ``P(correct) = p·TPR + (1 − p)·TNR``, so a balanced
    evaluation sample is scored at the real-world prior; this is what every attacker's
    ``score`` returns. With ``prior=None`` it is ``2·accuracy − 1`` at the sample's own mix
    (the same number when the sample's member fraction is ``p``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Membership labels: 1 member, 0 or -1 non-member, or booleans.
    y_pred : array-like of shape (n_samples,)
        Predicted membership, same conventions.
    prior : float in (0, 1), default=None
        ``p = P(member)`` of the experiment; ``None`` uses the sample's class mix. Needs
        both classes in ``y_true``.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.

    Returns
    -------
    advantage : float in [-1, 1]
        ``TPR − FPR`` weighted at ``prior`` (``2·accuracy − 1``); 0 is random guessing.

    Examples
    --------
    >>> from sklearn_mace.metrics import membership_advantage
    >>> membership_advantage([1, 1, 0, 0], [1, 0, 0, 0])
    0.5
    >>> membership_advantage([1, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 1], prior=0.5)
    0.25
    """
    m_true = _binary_truth(y_true)
    m_pred = _binary_truth(y_pred, "y_pred")
    check_consistent_length(m_true, m_pred, sample_weight)
    if prior is None:
        return float(2.0 * accuracy_score(m_true, m_pred, sample_weight=sample_weight) - 1.0)
    prior = check_prior(prior)
    w = np.ones(m_true.size) if sample_weight is None else column_or_1d(sample_weight)
    mass = [np.sum(w[m_true == c]) for c in (0, 1)]
    if min(mass) <= 0:
        raise ValueError(
            "membership_advantage with a prior needs both members and non-members (with "
            "positive weight) in y_true: TPR and TNR are both needed."
        )
    tpr = np.sum(w * (m_true == 1) * (m_pred == 1)) / mass[1]
    tnr = np.sum(w * (m_true == 0) * (m_pred == 0)) / mass[0]
    return float(2.0 * (prior * tpr + (1.0 - prior) * tnr) - 1.0)


def _check_scores(y_true, y_score):
    m = _binary_truth(y_true)
    y_score = column_or_1d(y_score).astype(float)
    check_consistent_length(m, y_score)
    if not np.isfinite(y_score).all():
        raise ValueError("y_score contains NaN or infinite values.")
    return m, y_score


def tpr_at_fpr(y_true, y_score, *, fpr=0.01):
    """True-positive rate of the best threshold whose false-positive rate is at most ``fpr``.

    The low-FPR operating point reported by current membership-inference work (Carlini et
    al., 2022): an attack is only worrying if it identifies members confidently.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Membership labels; both classes must be present.
    y_score : array-like of shape (n_samples,)
        Membership scores, larger = more likely a member.
    fpr : float in [0, 1], default=0.01
        The largest false-positive rate allowed.

    Returns
    -------
    tpr : float in [0, 1]
        The largest true-positive rate of a threshold whose false-positive rate is at most
        ``fpr``.

    Examples
    --------
    >>> from sklearn_mace.metrics import tpr_at_fpr
    >>> tpr_at_fpr([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], fpr=0.0)
    0.5
    """
    if not 0.0 <= fpr <= 1.0:
        raise ValueError(f"fpr must be in [0, 1]; got {fpr!r}.")
    m, y_score = _check_scores(y_true, y_score)
    if m.min() == m.max():
        raise ValueError("y_true contains only one class; TPR at FPR needs both.")
    fprs, tprs, _ = roc_curve(m, y_score, drop_intermediate=False)
    return float(tprs[fprs <= fpr].max())


def top_quantile_precision(y_true, y_score, q):
    """Fraction of members among the records an attacker scores in its top ``q`` fraction.

    DOMIAS App. D (high-precision attacks): the precision ``P(A, D_test, q)`` of attacking only
    the ``ceil(q * n)`` highest-scoring records. Records tied with the last one admitted are
    admitted too, so the result does not depend on the order of ties.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Membership labels.
    y_score : array-like of shape (n_samples,)
        Membership scores, larger = more likely a member.
    q : float in (0, 1]
        Fraction of records attacked.

    Returns
    -------
    precision : float in [0, 1]
        Fraction of members among the admitted records.

    Examples
    --------
    >>> from sklearn_mace.metrics import top_quantile_precision
    >>> top_quantile_precision([1, 0, 1, 0], [0.9, 0.8, 0.3, 0.1], q=0.25)
    1.0
    """
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q must be in (0, 1]; got {q!r}.")
    m, y_score = _check_scores(y_true, y_score)
    k = int(np.ceil(q * m.size))
    cutoff = np.partition(y_score, m.size - k)[m.size - k]
    return float(m[y_score >= cutoff].mean())
