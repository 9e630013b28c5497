"""Per-class scores of a classifier, exact in the tails: logits, log-softmax and log-ratios.

The loss of a confident member is tiny (``-log(1 − 1e-12) ≈ 1e-12``), and it is exactly what
separates members from non-members in a membership audit. Computed from a probability that has
been rounded to 1 it becomes 0, so everything here works in log space from the scores the
model produces before its softmax, and turns to probabilities only at the end.
"""

import numpy as np
from scipy.special import expit, logsumexp
from sklearn.pipeline import Pipeline

__all__ = [
    "LOG_PROBA_FLOOR",
    "additive_log_ratios",
    "are_logits_of",
    "log_softmax",
    "sklearn_logits",
    "true_label_log_odds",
]

#: Where a probability of exactly 0 (a rounded softmax) lands in log space: log of the smallest
#: normal double, about -708.4. Only exact zeros are changed; every positive probability is kept.
LOG_PROBA_FLOOR = float(np.log(np.finfo(float).tiny))

#: softmax(logits) must match predict_proba to this absolute tolerance for decision_function
#: to count as the model's logits; SVC's Platt scaling or one-vs-rest misses it by > 1e-2.
_LOGIT_CHECK_ATOL = 1e-6

_MLP_ACTIVATIONS = {
    "identity": lambda z: z,
    "logistic": expit,
    "tanh": np.tanh,
    "relu": lambda z: np.maximum(z, 0.0),
}


def log_softmax(scores):
    """Row-wise ``log softmax(scores)``, exact for confident rows.

    The largest score's entry is ``-log1p(Σ_{j≠top} exp(s_j − s_top))`` (``log1p``, not
    ``log(1 + …)``), so a class of probability ``1 − 1e-12`` gets ``-1e-12`` to full relative
    precision; the others are ``s_j − s_top`` minus the same term.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes)
        Logits (any shift), or log-probabilities.

    Returns
    -------
    log_proba : ndarray of shape (n_samples, n_classes)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.queries._class_scores import log_softmax
    >>> loss = -log_softmax(np.array([[0.0, np.log(1e12)]]))[0, 1]  # p = 1e12 / (1 + 1e12)
    >>> print(f"{loss:.6e}")
    1.000000e-12
    """
    scores = np.asarray(scores, dtype=float)
    rows = np.arange(scores.shape[0])
    top = np.argmax(scores, axis=1)
    shifted = scores - scores[rows, top][:, None]
    others = np.exp(shifted)
    others[rows, top] = 0.0
    return shifted - np.log1p(others.sum(axis=1))[:, None]


def true_label_log_odds(scores, label_index):
    """``log(p_y / (1 − p_y))`` of the true class ``y``: LiRA's logit-scaled confidence.

    Computed as ``s_y − logsumexp_{j≠y} s_j`` from logits or log-probabilities ``s`` (the
    shift cancels), never as ``log(p) − log(1 − p)`` from a rounded ``p``: Carlini et al.
    (2022, §4) compute it this way for the same reason.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes)
        Logits or log-probabilities, ``n_classes >= 2``.
    label_index : ndarray of int, shape (n_samples,)
        Column of the true class in ``scores``.

    Returns
    -------
    log_odds : ndarray of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.queries._class_scores import true_label_log_odds
    >>> true_label_log_odds(np.array([[0.0, 40.0], [2.0, 1.0]]), np.array([1, 0]))
    array([40.,  1.])
    """
    scores = np.asarray(scores, dtype=float)
    rows = np.arange(scores.shape[0])
    others = scores.copy()
    others[rows, label_index] = -np.inf
    return scores[rows, label_index] - logsumexp(others, axis=1)


def additive_log_ratios(scores):
    """``log p_j − log p_k`` for ``j < k`` (Aitchison's additive log-ratio, last class as base).

    A bijection from the open probability simplex onto ``R^{k−1}``: the probability vector's
    ``k`` columns sum to 1 (a singular covariance for any density estimator), these ``k − 1``
    do not, and ``p`` is recovered as ``softmax([r, 0])``. Because the softmax ignores a
    common shift, they equal ``logit_j − logit_k`` exactly.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes)
        Logits or log-probabilities.

    Returns
    -------
    log_ratios : ndarray of shape (n_samples, n_classes - 1)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.queries._class_scores import additive_log_ratios
    >>> additive_log_ratios(np.log([[0.2, 0.3, 0.5]])).round(4)
    array([[-0.9163, -0.5108]])
    """
    scores = np.asarray(scores, dtype=float)
    return scores[:, :-1] - scores[:, -1:]


def _mlp_logits(mlp, features):
    """The output layer of a fitted ``MLPClassifier`` before its softmax / logistic."""
    hidden = np.asarray(features, dtype=float)
    last = len(mlp.coefs_) - 1
    for i, (weights, bias) in enumerate(zip(mlp.coefs_, mlp.intercepts_, strict=True)):
        hidden = hidden @ weights + bias
        if i < last:
            hidden = _MLP_ACTIVATIONS[mlp.activation](hidden)
    return hidden


def _raw_sklearn_scores(model, features):
    if hasattr(model, "decision_function"):
        return model.decision_function(features)
    final = model
    if isinstance(model, Pipeline):
        final = model.steps[-1][1]
        for _, step in model.steps[:-1]:
            if step is not None and step != "passthrough":
                features = step.transform(features)
    if hasattr(final, "predict_joint_log_proba"):  # naive Bayes: log P(x, c), unnormalized
        return final.predict_joint_log_proba(features)
    if type(final).__name__ == "MLPClassifier" and hasattr(final, "coefs_"):
        return _mlp_logits(final, features)
    return None


def sklearn_logits(model, features, n_classes):
    """Raw scores of a scikit-learn classifier, or None where it exposes none.

    The scores are ``decision_function``; else, for the model or a Pipeline's last step,
    naive Bayes' ``predict_joint_log_proba`` (``log P(x, c)``), or an ``MLPClassifier``'s
    output layer computed from its public ``coefs_`` and ``intercepts_``.

    Parameters
    ----------
    model : fitted classifier
    features : array-like of shape (n_samples, n_features)
    n_classes : int

    Returns
    -------
    raw : ndarray of shape (n_samples, n_classes) or (n_samples, 1), or None
        As the model gives them (one column: the score of ``classes_[1]``).
    full : ndarray of shape (n_samples, n_classes), or None
        Logits of every class (``[0, z]`` for one binary score), ready for
        :func:`log_softmax`.
    """
    raw = _raw_sklearn_scores(model, features)
    if raw is None:
        return None, None
    raw = np.asarray(raw, dtype=float)
    if raw.ndim == 1:
        raw = raw[:, None]
    if (
        raw.ndim != 2
        or raw.shape[1] not in (1, n_classes)
        or (raw.shape[1] == 1) != (n_classes == 2)
    ):
        return None, None
    full = np.column_stack([np.zeros(len(raw)), raw]) if raw.shape[1] == 1 else raw
    return raw, full


def are_logits_of(full_logits, proba):
    """Whether ``softmax(full_logits)`` is ``proba`` (so the scores are the model's logits)."""
    if full_logits is None or not np.all(np.isfinite(full_logits)):
        return False
    return bool(np.max(np.abs(np.exp(log_softmax(full_logits)) - proba)) <= _LOGIT_CHECK_ATOL)
