"""What every attack on released synthetic data shares: the stacked ``(X, y)`` form.

An attack on synthetic data (DOMIAS and its baselines) is fitted like an ordinary binary
classifier: ``X`` holds the synthetic rows stacked on the attacker's reference rows and
``y`` says where each row came from (1 = synthetic, 0 or -1 = reference). No membership
label is needed to fit, so ``GridSearchCV`` can tune an attack on ``(X, y)`` alone; the
fitted attack then scores test records, larger = more likely a member of the generator's
training set, and ``score(X_test, membership)`` is the membership advantage (MACE Def. 1).
"""

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ..base import AttackerMixin, fit_membership_labels

__all__ = ["SyntheticDataAttack", "stack_synthetic_reference"]


def stack_synthetic_reference(synthetic, reference):
    """``X, y`` for fitting a synthetic-data attack from separate arrays.

    Parameters
    ----------
    synthetic : array-like of shape (n_synthetic, n_features)
        The released synthetic rows ``D_syn``.
    reference : array-like of shape (n_reference, n_features)
        The attacker's real rows from the population, ``D_ref`` (DOMIAS §2).

    Returns
    -------
    X : ndarray of shape (n_synthetic + n_reference, n_features)
        The synthetic rows, then the reference rows.
    y : ndarray of shape (n_synthetic + n_reference,)
        1 for synthetic rows, 0 for reference rows.

    Examples
    --------
    >>> from sklearn_mace.attacks import stack_synthetic_reference
    >>> X, y = stack_synthetic_reference([[0.0, 1.0]], [[2.0, 3.0], [4.0, 5.0]])
    >>> y
    array([1, 0, 0])
    """
    arrays = {}
    for name, data in (("synthetic", synthetic), ("reference", reference)):
        arrays[name] = check_array(data, dtype=np.float64, ensure_min_samples=0, input_name=name)
        if len(arrays[name]) == 0:
            raise ValueError(f"{name} has no rows; both synthetic and reference rows are needed.")
    syn, ref = arrays["synthetic"], arrays["reference"]
    if syn.shape[1] != ref.shape[1]:
        raise ValueError(
            f"synthetic and reference must have the same columns; got {syn.shape[1]} "
            f"synthetic and {ref.shape[1]} reference features."
        )
    y = np.r_[np.ones(len(syn), dtype=int), np.zeros(len(ref), dtype=int)]
    return np.vstack([syn, ref]), y


def _source_labels(y):
    """``(source, classes)``: ``source`` 1 = synthetic, 0 = reference; errors say what y means.

    ``{1, 0 or -1, bool}`` give ``classes = [0, 1]``; any other pair of labels is accepted
    the scikit-learn way, the greater label marking the synthetic rows.
    """
    try:
        return fit_membership_labels(y)
    except ValueError as exc:
        raise ValueError(
            f"{exc} Here y marks the source of each row of X: 1 = synthetic, 0 or -1 = "
            "reference; both synthetic and reference rows are needed."
        ) from exc


class SyntheticDataAttack(AttackerMixin, BaseEstimator):
    """Base class: fit on stacked synthetic + reference rows, predict membership of records.

    Subclasses implement ``fit(X, y)``, starting with
    ``synthetic, reference = self._fit_sources(X, y)``, and ``decision_function``, whose
    queries go through ``self._validate_query(X)``; ``decision_function(X) > 0`` is the
    membership guess of ``predict`` (the threshold the class documents). ``classes_`` is
    ``[0, 1]`` for 0/1 labels (any other label pair is echoed, the greater one meaning
    synthetic); in ``fit`` the classes mean reference / synthetic, at prediction time
    non-member / member.

    Examples
    --------
    A toy attack: a record is a member when it is closer to the centre of the synthetic
    rows than the reference rows are on average.

    >>> import numpy as np
    >>> from sklearn_mace.attacks import SyntheticDataAttack
    >>> class CentreAttack(SyntheticDataAttack):
    ...     def fit(self, X, y):
    ...         synthetic, reference = self._fit_sources(X, y)
    ...         self.centre_ = synthetic.mean(axis=0)
    ...         self.radius_ = np.linalg.norm(reference - self.centre_, axis=1).mean()
    ...         return self
    ...
    ...     def decision_function(self, X):
    ...         X = self._validate_query(X)
    ...         return self.radius_ - np.linalg.norm(X - self.centre_, axis=1)
    >>> attack = CentreAttack().fit_synthetic_reference(np.zeros((3, 1)), [[-2.0], [2.0]])
    >>> attack.predict([[0.5], [3.0]])
    array([1, 0])
    """

    def _fit_sources(self, X, y):
        """Validate ``(X, y)``, set ``classes_``; return the synthetic and reference rows."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        source, self.classes_ = _source_labels(y)
        self.n_synthetic_ = int(source.sum())
        self.n_reference_ = int(len(source) - self.n_synthetic_)
        return X[source == 1], X[source == 0]

    def _validate_query(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def fit_synthetic_reference(self, synthetic, reference):
        """Fit from separate arrays: ``fit(*stack_synthetic_reference(synthetic, reference))``.

        Parameters
        ----------
        synthetic : array-like of shape (n_synthetic, n_features)
            The released synthetic rows ``D_syn``.
        reference : array-like of shape (n_reference, n_features)
            The attacker's real rows from the population, ``D_ref``.

        Returns
        -------
        self : object
            The fitted attacker.
        """
        return self.fit(*stack_synthetic_reference(synthetic, reference))

    def predict(self, X):
        """Membership guess: 1 where ``decision_function(X) > 0``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records whose membership is guessed.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            1 = member (over-represented by the generator), 0 = non-member.
        """
        guess = (self.decision_function(X) > 0).astype(int)
        return self.classes_[guess]
