"""White-box gradient canaries for DP-SGD: read each canary's own coordinate of every step.

A DP-SGD trainer's privacy claim covers every noisy gradient it computes, not only the final
model: the accountant composes the ``T`` Gaussian steps, each of which releases
``g_t = Σ_i clip_C(∇ℓ(θ_t; z_i)) + N(0, σ²C²·I)``. A white-box auditor who sees the ``g_t``
(:class:`~sklearn_mace.algorithm.DPSGDLogisticRegression` with ``record_gradients=True``)
and whose canaries each contribute a gradient of norm ``C`` on coordinates of their own —
Dirac gradient canaries (Nasr et al. 2023, §4; Steinke, Nasr & Jagielski 2023, §7) — reads
a statistic that is **exactly** Gaussian: ``N(0, 1)`` for a canary left out, ``N(√T/σ, 1)``
for one put in (its ``T`` steps' contributions add up, the noise's ``√T``). That is the
worst-case test the claimed ``√T/σ``-GDP curve must survive, hence the tightest a one-run
audit can be (:class:`AlgorithmAudit` with ``design="one_run"``).

The canaries are the records of :func:`~sklearn_mace.algorithm.make_dirac_canaries`: value
``v`` on a column no other record touches. For a linear softmax model their per-record
gradient lies on that column's weights (one per class) and, by ``1/v`` of its norm, on the
intercepts; once clipped to ``C`` (as long as the model's probability of the other classes
stays above ``C/(√2·√(v² + 1))``; otherwise it contributes less, which only weakens the
audit), its component along its own direction is ``C·v/√(v² + 1)`` (0.9988·C at ``v = 20``)
and no other record has any. :class:`DPSGDGradientScores` projects every step's noisy
gradient on that direction.
"""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._sklearn_compat import HasMethods, _fit_context

__all__ = ["DPSGDGradientScores"]


class DPSGDGradientScores(TransformerMixin, BaseEstimator):
    """White-box scores of records from a DP-SGD trainer's per-step noisy gradients.

    For a record ``(x, y)`` (label last) and a model trained with
    ``record_gradients=True`` on ``K`` classes, the record's gradient direction on the
    weights is ``d = u_y ⊗ x/‖x‖`` with ``u_y = (1/K − e_y)/√((K − 1)/K)`` (a unit vector:
    the direction of ``p − e_y`` when the other classes are equally likely; exactly it for
    ``K = 2``). The score is

    ``s(x, y) = Σ_t ⟨g_t, d⟩ / (σ·C·√T)``

    over the ``T`` recorded noisy gradients ``g_t`` (:attr:`noise_multiplier_` ``σ`` and
    ``max_grad_norm`` ``C`` of the model). For a Dirac canary
    (:func:`make_dirac_canaries`) the other records contribute nothing to ``⟨g_t, d⟩``, so
    ``s`` is ``N(0, 1)`` when the canary was left out and ``N(√T/σ·v/√(v² + 1), 1)`` when it
    was in and stayed clipped: the Gaussian mechanism the claim bounds, read without an
    attack to learn. For other records ``s`` is the usual gradient-alignment score (other
    records' gradients add to it). Any function of the training's released gradients is a
    valid audit statistic, so the bounds stay sound either way.

    A featurizer of :class:`AlgorithmAudit`: its first parameter receives the fitted model.
    Its single column is already a membership score (larger: more likely in), and it says
    so (``is_membership_score = True``): the one-run design then trains no attack and
    guesses on every canary.

    Parameters
    ----------
    model : fitted DPSGDLogisticRegression or None
        A DP-SGD linear model fitted with ``record_gradients=True`` (an audit sets it to
        each run's model).

    Attributes
    ----------
    n_features_in_ : int
        Columns of the records (the model's features and the label).

    See Also
    --------
    make_dirac_canaries : the canaries whose score is exactly Gaussian.
    DPSGDLogisticRegression : the trainer (``record_gradients=True``).
    AlgorithmAudit : ``design="one_run", featurizer=DPSGDGradientScores()``.

    References
    ----------
    M. Nasr, J. Hayes, T. Steinke, B. Balle, F. Tramèr, M. Jagielski, N. Carlini, A. Terzis.
    Tight Auditing of Differentially Private Machine Learning. USENIX Security 2023, §4
    (gradient canaries, Dirac canaries). T. Steinke, M. Nasr, M. Jagielski. Privacy Auditing
    with One (1) Training Run. NeurIPS 2023, §7 (white-box audits of DP-SGD).

    Examples
    --------
    >>> import pytest
    >>> _ = pytest.importorskip("opacus")
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import (
    ...     DPSGDGradientScores, DPSGDLogisticRegression, make_dirac_canaries)
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.normal(size=(200, 3)), rng.integers(0, 2, 200)])
    >>> population, canaries = make_dirac_canaries(X, 400)
    >>> included = rng.random(400) < 0.5
    >>> data = np.vstack([population, canaries[included]])
    >>> model = DPSGDLogisticRegression(epsilon=8.0, record_gradients=True, random_state=0)
    >>> model = model.fit(data[:, :-1], data[:, -1])
    >>> scores = DPSGDGradientScores(model).fit_transform(canaries)[:, 0]
    >>> gap = scores[included].mean() - scores[~included].mean()
    >>> round(model.mu_, 2), bool(abs(gap - model.mu_) < 0.3)
    (1.66, True)
    """

    #: its one column is the attack's score: the one-run design learns no attack on it
    is_membership_score = True

    _parameter_constraints: dict = {
        "model": [None, HasMethods(["fit", "predict_proba"])],
    }

    def __init__(self, model=None):
        self.model = model

    def __sklearn_clone__(self):
        """Clone the featurizer but keep the same fitted model (it is read, never refitted)."""
        return type(self)(self.model)

    def _check_model(self):
        model = self.model
        if model is None:
            raise ValueError(
                "model is None: give a DP-SGD model fitted with record_gradients=True."
            )
        check_is_fitted(model)
        gradients = getattr(model, "noisy_gradients_", None)
        if gradients is None:
            raise ValueError(
                f"model {type(model).__name__} has no noisy_gradients_: fit it with "
                "record_gradients=True (a DPSGDLogisticRegression) to audit it white-box."
            )
        return model, np.asarray(gradients, dtype=np.float64)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the records' width against the model's (its features and the label).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_model_features + 1)
            Records, label in the last column.
        y : None
            Ignored.

        Returns
        -------
        self : DPSGDGradientScores
            The fitted featurizer.
        """
        X = validate_data(self, X, dtype=np.float64)
        model, gradients = self._check_model()
        if X.shape[1] != model.n_features_in_ + 1:
            raise ValueError(
                f"X has n_features = {X.shape[1]} column(s); records need the model's "
                f"{model.n_features_in_} feature(s) and the label in the last column."
            )
        return self

    def transform(self, X):
        """Each record's white-box score.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_model_features + 1)
            Records, label in the last column. A label that is not among the model's
            classes scores 0 (a ``UserWarning`` says how many).

        Returns
        -------
        scores : ndarray of shape (n_samples, 1)
            ``Σ_t ⟨g_t, d⟩ / (σ·C·√T)``: standard normal for a Dirac canary left out.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        model, gradients = self._check_model()
        features, labels = X[:, :-1], X[:, -1]
        classes = np.asarray(model.classes_)
        codes = np.searchsorted(classes, labels)
        known = (codes < classes.size) & (classes[np.minimum(codes, classes.size - 1)] == labels)
        if not known.all():
            warnings.warn(
                f"{np.sum(~known)} of {labels.size} labels are not among the model's classes "
                f"{classes.tolist()}: those records score 0.",
                UserWarning,
                stacklevel=2,
            )
        n_steps, n_classes = gradients.shape[0], gradients.shape[1]
        # Σ_t g_t over the weights (the intercept's column dropped): (K, n_features)
        summed = gradients[:, :, :-1].sum(axis=0)
        norms = np.linalg.norm(features, axis=1)
        direction = np.divide(
            features, norms[:, None], out=np.zeros_like(features), where=norms[:, None] > 0
        )
        per_class = direction @ summed.T  # (n, K): ⟨Σ_t g_t[k], x/‖x‖⟩
        # u_y = (1/K − e_y)/√((K − 1)/K): the mean over classes minus the label's own
        codes = np.minimum(codes, n_classes - 1)
        along = per_class.mean(axis=1) - per_class[np.arange(len(X)), codes]
        along /= np.sqrt((n_classes - 1) / n_classes)
        scale = model.noise_multiplier_ * model.max_grad_norm * np.sqrt(n_steps)
        scores = np.where(known, along / scale, 0.0)
        return scores[:, None]

    def get_feature_names_out(self, input_features=None):
        """The one output column's name.

        Parameters
        ----------
        input_features : None
            Ignored.

        Returns
        -------
        names : ndarray of str
            ``["gradient_score"]``.
        """
        check_is_fitted(self)
        return np.asarray(["gradient_score"], dtype=object)
