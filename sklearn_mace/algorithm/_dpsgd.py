"""A DP-SGD trainer as a recipe: logistic regression trained with opacus at a target (ε, δ).

:class:`DPSGDLogisticRegression` is noisy full-batch gradient descent (DP-SGD with sampling
rate 1, Abadi et al. 2016): every step sums the per-record gradients clipped to norm ``C``
and adds Gaussian noise ``N(0, σ²C²)`` to the sum (opacus' ``GradSampleModule`` and
``DPOptimizer``). Adding or removing a record moves each step's sum by at most ``C``, so each
step is a Gaussian mechanism with sensitivity/noise ``1/σ``, and ``T`` adaptive steps are
exactly ``√T/σ``-GDP (Dong, Roth & Su 2022, Cor. 3.3): the ground truth an audit is checked
against (``mu_``). opacus' accountant picks ``σ`` for the target ε at δ; its ε(δ) curve is
the claim (:meth:`~DPSGDLogisticRegression.privacy_claim`).

:class:`NoiseBugDPSGDLogisticRegression` divides σ by 4 and keeps the same claim: the bug
an audit must catch. :class:`DPSGDMLPClassifier` trains a one-hidden-layer network by the
same scheme (the same σ, claim and ``√T/σ``-GDP truth: the analysis does not depend on the
model).

:func:`make_dirac_canaries` builds canaries a *black-box* audit reads from the trained model
alone: records zero everywhere but on a column of their own, absent from the data. For a
linear model each such record's clipped gradient moves only its own weights, so its
true-label log-odds is its own Gaussian mechanism (the input-space form of the Dirac
canaries of Nasr et al. 2023), and one training with many of them audits the trainer
(Steinke, Nasr & Jagielski 2023).
"""

import contextlib
import functools
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ._claims import PrivacyClaim

__all__ = [
    "DPSGDLogisticRegression",
    "DPSGDMLPClassifier",
    "NoiseBugDPSGDLogisticRegression",
    "make_dirac_canaries",
]

#: The noise-multiplier divisor of the bug variant.
NOISE_BUG_FACTOR = 4.0


@contextlib.contextmanager
def _one_torch_thread():
    """torch on one thread while training: two threads fighting over a loaded machine's
    cores made a tiny model's step many times slower (tests/_dpsgd.py)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@functools.lru_cache(maxsize=64)
def accountant_noise_multiplier(epsilon, delta, steps, accountant):
    """σ that spends ``(epsilon, delta)`` in ``steps`` full-batch steps (opacus' accountant).

    Cached: every clone of a recipe asks the same question (the PRV search takes ~0.5 s).
    """
    from opacus.accountants.utils import get_noise_multiplier

    with warnings.catch_warnings():
        # the PRV accountant warns on log(0) at sampling rate 1, RDP on its order grid
        warnings.simplefilter("ignore")
        return float(
            get_noise_multiplier(
                target_epsilon=epsilon,
                target_delta=delta,
                sample_rate=1.0,
                steps=steps,
                accountant=accountant,
            )
        )


@functools.lru_cache(maxsize=64)
def accountant_epsilons(noise_multiplier, steps, accountant, deltas):
    """opacus' ε at each δ of ``deltas`` after ``steps`` full-batch steps at σ."""
    from opacus.accountants import create_accountant

    account = create_accountant(accountant)
    account.history = [(noise_multiplier, 1.0, steps)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(float(account.get_epsilon(delta)) for delta in deltas)


class _DPSGDClassifier(ClassifierMixin, BaseEstimator):
    """What the DP-SGD recipes share: σ and the claim from opacus' accountant, and the loop.

    Subclasses build the torch module (``_module``) and keep its trained parameters
    (``_keep``); the loop is noisy full-batch gradient descent through opacus'
    ``GradSampleModule`` and ``DPOptimizer`` (``_dpsgd``).
    """

    # ------------------------------------------------------------------ privacy

    def _calibrated_noise_multiplier(self):
        """σ for the claim: the accountant's answer for ``(epsilon, delta, epochs)``."""
        self._validate_params()
        return accountant_noise_multiplier(
            float(self.epsilon), float(self.delta), int(self.epochs), self.accountant
        )

    def _noise_multiplier(self):
        """σ the training uses (the bug variant changes this only)."""
        return self._calibrated_noise_multiplier()

    def privacy_claim(self, deltas=None):
        """What opacus says: the accountant's ε(δ) curve for this trainer (add/remove-one).

        Needs no data: the full-batch accountant depends on σ and the number of steps only.

        Parameters
        ----------
        deltas : array-like of float in (0, 1) or None, default=None
            The δ at which the accountant is asked for ε. None: ``delta`` and 10, 100, …
            times it up to 0.1 (the curve from the target to where ε is near 0).

        Returns
        -------
        claim : PrivacyClaim
            ``PrivacyClaim.from_epsilons`` of the accountant's pairs; its smallest δ (where
            an audit reports ε by default) is the smallest given.
        """
        sigma = self._calibrated_noise_multiplier()
        if deltas is None:
            exponents = np.arange(0, int(np.floor(np.log10(0.1 / self.delta))) + 1)
            deltas = float(self.delta) * 10.0**exponents
        deltas = tuple(float(d) for d in np.atleast_1d(np.asarray(deltas, dtype=float)))
        if not deltas or not all(0.0 < d < 1.0 for d in deltas):
            raise ValueError(f"deltas must be numbers in (0, 1), at least one; got {deltas!r}.")
        epsilons = accountant_epsilons(sigma, int(self.epochs), self.accountant, deltas)
        return PrivacyClaim.from_epsilons(epsilons, deltas)

    # ------------------------------------------------------------------ training

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Train with DP-SGD: ``epochs`` noisy full-batch steps.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training records.
        y : array-like of shape (n_samples,)
            Labels (at least two classes).

        Returns
        -------
        self : object
            The trained model.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(
                f"y holds one class only ({self.classes_[0]!r}); a classifier needs at least 2."
            )
        self.noise_multiplier_ = float(self._noise_multiplier())
        rng = check_random_state(self.random_state)
        noise_seed = int(rng.randint(np.iinfo(np.int32).max))
        module = self._module(X.shape[1], self.classes_.size, rng)
        gradients = self._dpsgd(module, X, codes, noise_seed)
        self._keep(module, gradients)
        self.mu_ = float(np.sqrt(self.epochs) / self.noise_multiplier_)
        self.epsilon_ = accountant_epsilons(
            self.noise_multiplier_, int(self.epochs), self.accountant, (float(self.delta),)
        )[0]
        return self

    def _dpsgd(self, module, X, codes, seed):
        """Train ``module`` in place: ``epochs`` steps of opacus' per-sample gradients,
        clipped and summed, plus noise ``N(0, σ²C²)``; with ``record_gradients``, the noisy
        sum of every step (the vector the step applied) as a list of arrays, else None."""
        import torch
        from opacus import GradSampleModule
        from opacus.optimizers import DPOptimizer

        record = getattr(self, "record_gradients", False)
        steps = []
        with _one_torch_thread(), warnings.catch_warnings():
            # opacus warns that its generator is not cryptographically secure: seeded on
            # purpose, so that the runs of an audit can be reproduced
            warnings.simplefilter("ignore")
            features = torch.as_tensor(X, dtype=torch.float32)
            labels = torch.as_tensor(codes, dtype=torch.long)
            wrapped = GradSampleModule(module, loss_reduction="sum")
            optimizer = DPOptimizer(
                torch.optim.SGD(wrapped.parameters(), lr=self.learning_rate),
                noise_multiplier=self.noise_multiplier_,
                max_grad_norm=self.max_grad_norm,
                expected_batch_size=None,
                loss_reduction="sum",
                generator=torch.Generator().manual_seed(seed),
            )
            for _ in range(self.epochs):
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(wrapped(features), labels, reduction="sum")
                loss.backward()
                optimizer.step()
                if record:  # opacus left the noisy sum in .grad (loss_reduction="sum": unscaled)
                    steps.append(
                        [p.grad.detach().numpy().astype(np.float64) for p in module.parameters()]
                    )
            wrapped._close()  # drop opacus' hooks
        return steps if record else None

    def _parameters(self, module):
        """The module's trained parameters as float64 arrays, in its order."""
        return [p.detach().numpy().astype(np.float64) for p in module.parameters()]


class DPSGDLogisticRegression(_DPSGDClassifier):
    """Logistic regression trained with DP-SGD (opacus) at a target (ε, δ).

    Noisy full-batch gradient descent from zero weights (DP-SGD with sampling rate 1, Abadi
    et al. 2016, Alg. 1): ``epochs`` steps, each

    ``W ← W − learning_rate · (Σ_i clip_C(∇ℓ(W; x_i, y_i)) + N(0, σ²C²·I))``

    with the softmax cross-entropy loss (one row of weights per class), per-record clipping
    at ``C = max_grad_norm`` and the noise multiplier ``σ`` that opacus' accountant
    (``accountant``) finds for ``(epsilon, delta)`` after ``epochs`` steps at sampling rate 1.
    The rate multiplies the noisy **sum**, not a mean: dividing by the training set's size
    would let the output's scale depend on it (a neighbour has one record more), which the
    accountant does not cover. Weights start at zero and every record is used at every step,
    so the noise (seeded by ``random_state``) is the only randomness.

    What the trainer is audited against:

    * :meth:`privacy_claim` — the accountant's ε(δ) curve as a :class:`PrivacyClaim`
      (add/remove-one): what opacus says;
    * ``mu_`` — the exact guarantee: each step is a Gaussian mechanism of sensitivity ``C``
      and noise ``σC``, and ``T`` of them compose to ``√T/σ``-GDP (Dong, Roth & Su 2022,
      Cor. 3.3), which the accountant's curve upper-bounds.

    Read more in the :ref:`User Guide <dp_claims>`.

    Parameters
    ----------
    epsilon : float > 0, default=4.0
        The target ε at ``delta`` the noise is calibrated to.
    delta : float in (0, 1), default=1e-5
        The target δ.
    epochs : int >= 1, default=20
        Gradient steps (full batch: one step is one epoch).
    learning_rate : float > 0, default=1e-3
        Step size applied to the noisy sum of clipped gradients (a mean-gradient rate
        divided by the expected training-set size).
    max_grad_norm : float > 0, default=1.0
        Per-record clipping norm ``C``.
    accountant : {"prv", "rdp"}, default="prv"
        opacus' accountant: the privacy random variable accountant (Gopi et al. 2021,
        opacus' default, tight up to its stated error, upper end returned) or Rényi DP
        (Mironov 2017, looser).
    record_gradients : bool, default=False
        Keep every step's noisy gradient (``noisy_gradients_``): what a *white-box* auditor
        of DP-SGD sees (the released intermediate updates the accountant's claim covers),
        read by :class:`DPSGDGradientScores`. It changes nothing in the training.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise (torch generator). None draws a seed from NumPy's global generator.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels seen in ``fit``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights (binary: the difference of the two classes' rows, as in scikit-learn's
        ``LogisticRegression``).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts, the same way.
    noise_multiplier_ : float
        The σ used.
    epsilon_ : float
        The accountant's ε at ``delta`` for the σ used (``epsilon`` up to the accountant's
        search tolerance; larger for the bug variant).
    mu_ : float
        ``√epochs/σ``: the exact GDP parameter of the training (add/remove-one).
    noisy_gradients_ : ndarray of shape (epochs, n_classes, n_features + 1)
        With ``record_gradients=True`` only: step ``t``'s noisy sum
        ``Σ_i clip_C(∇ℓ) + N(0, σ²C²·I)`` (the step is ``W ← W − learning_rate · g_t``), one
        row per class (two in the binary case: opacus trains a row per class), the
        intercept's gradient in the last column.
    n_features_in_ : int
        Number of features.

    See Also
    --------
    NoiseBugDPSGDLogisticRegression : the same trainer with σ/4 and the same claim.
    DPSGDMLPClassifier : the same scheme for a one-hidden-layer network.
    make_dirac_canaries : canaries a black-box one-run audit reads.
    DPSGDGradientScores : the white-box reading of the same canaries.
    AlgorithmAudit : audits it (``design="one_run"``).

    References
    ----------
    M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang. Deep
    Learning with Differential Privacy. CCS 2016, Alg. 1. J. Dong, A. Roth, W. J. Su.
    Gaussian Differential Privacy. JRSS B 84(1), 2022, Cor. 3.3. S. Gopi, Y. T. Lee,
    L. Wutschitz. Numerical Composition of Differential Privacy. NeurIPS 2021. A. Yousefpour
    et al. Opacus: User-Friendly Differential Privacy Library in PyTorch. 2021.

    Examples
    --------
    >>> import pytest
    >>> _ = pytest.importorskip("opacus")
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_mace.algorithm import DPSGDLogisticRegression
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> model = DPSGDLogisticRegression(epsilon=4.0, random_state=0).fit(X, y)
    >>> round(model.epsilon_, 1), round(model.mu_, 2)
    (4.0, 0.92)
    >>> print(model.privacy_claim().describe())  # doctest: +ELLIPSIS
    (ε, δ) curve (3.99..., 1e-05), ... (add/remove-one)
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "accountant": [StrOptions({"prv", "rdp"})],
        "record_gradients": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        epsilon=4.0,
        delta=1e-5,
        epochs=20,
        learning_rate=1e-3,
        max_grad_norm=1.0,
        accountant="prv",
        record_gradients=False,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.max_grad_norm = max_grad_norm
        self.accountant = accountant
        self.record_gradients = record_gradients
        self.random_state = random_state

    # ------------------------------------------------------------------ training

    def _module(self, n_features, n_classes, rng):
        """One linear layer (a row of weights per class), zero at the start."""
        import torch

        layer = torch.nn.Linear(n_features, n_classes)
        torch.nn.init.zeros_(layer.weight)
        torch.nn.init.zeros_(layer.bias)
        return layer

    def _keep(self, module, gradients):
        weight, bias = self._parameters(module)
        if self.classes_.size == 2:
            weight, bias = weight[1:] - weight[:1], bias[1:] - bias[:1]
        self.coef_, self.intercept_ = weight, bias
        if gradients is not None:
            self.noisy_gradients_ = np.stack([np.column_stack(step) for step in gradients])

    # ------------------------------------------------------------------ prediction

    def decision_function(self, X):
        """Logits: one column per class, or the log-odds of ``classes_[1]`` when binary.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The linear scores.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = X @ self.coef_.T + self.intercept_
        return scores[:, 0] if self.classes_.size == 2 else scores

    def predict_proba(self, X):
        """Class probabilities (softmax of the logits).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities, columns in the order of ``classes_``.
        """
        from scipy.special import expit, softmax

        check_is_fitted(self)
        scores = self.decision_function(X)
        if self.classes_.size == 2:
            positive = expit(scores)
            return np.column_stack([1.0 - positive, positive])
        return softmax(scores, axis=1)

    def predict(self, X):
        """The most probable class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Values of ``classes_``.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class NoiseBugDPSGDLogisticRegression(DPSGDLogisticRegression):
    """A deliberately buggy DP-SGD trainer: claims opacus' curve for σ, trains with σ/4.

    The bug an audit must catch (issue #30): the noise multiplier the accountant found for
    ``(epsilon, delta)`` is divided by 4 before training, while :meth:`privacy_claim` still
    states the curve of the correct σ. The training is then ``4·√T/σ``-GDP (``mu_``), and
    ``epsilon_`` is the accountant's ε of the noise actually used. Everything else is
    :class:`DPSGDLogisticRegression`.

    Parameters
    ----------
    epsilon : float > 0, default=4.0
        The **claimed** ε at ``delta``.
    delta : float in (0, 1), default=1e-5
        The claimed δ.
    epochs : int >= 1, default=20
        Gradient steps (full batch).
    learning_rate : float > 0, default=1e-3
        Step size applied to the noisy sum of clipped gradients.
    max_grad_norm : float > 0, default=1.0
        Per-record clipping norm.
    accountant : {"prv", "rdp"}, default="prv"
        opacus' accountant of the (false) claim.
    record_gradients : bool, default=False
        Keep every step's noisy gradient (``noisy_gradients_``) for a white-box audit.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels seen in ``fit``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts.
    noise_multiplier_ : float
        The σ used: a quarter of the claim's.
    epsilon_ : float
        The accountant's ε at ``delta`` for the σ used (far above ``epsilon``).
    mu_ : float
        ``√epochs/noise_multiplier_``: the exact GDP parameter, four times the correct one.
    noisy_gradients_ : ndarray of shape (epochs, n_classes, n_features + 1)
        With ``record_gradients=True`` only: every step's noisy gradient.
    n_features_in_ : int
        Number of features.

    See Also
    --------
    DPSGDLogisticRegression : the correct trainer.

    Examples
    --------
    >>> import pytest
    >>> _ = pytest.importorskip("opacus")
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_mace.algorithm import NoiseBugDPSGDLogisticRegression
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> model = NoiseBugDPSGDLogisticRegression(epsilon=4.0, random_state=0).fit(X, y)
    >>> round(model.mu_, 2), model.epsilon_ > 10
    (3.69, True)
    """

    def _noise_multiplier(self):
        return self._calibrated_noise_multiplier() / NOISE_BUG_FACTOR


class DPSGDMLPClassifier(_DPSGDClassifier):
    """A one-hidden-layer network trained with DP-SGD (opacus) at a target (ε, δ).

    The scheme of :class:`DPSGDLogisticRegression` — ``epochs`` noisy full-batch steps
    ``θ ← θ − learning_rate · (Σ_i clip_C(∇ℓ(θ; x_i, y_i)) + N(0, σ²C²·I))``, σ from
    opacus' accountant for ``(epsilon, delta)`` — on the network

    ``logits = W₂ · act(W₁ x + b₁) + b₂``

    with ``hidden_units`` hidden units and the softmax cross-entropy loss. The weights start
    at Glorot-uniform values drawn from ``random_state`` (the biases at zero), so the start
    and the noise are the training's randomness. The privacy analysis never looks at the
    model: each step is a Gaussian mechanism of sensitivity ``C``, and the claim
    (:meth:`privacy_claim`, the accountant's ε(δ) curve) and the exact ``√T/σ``-GDP
    guarantee (``mu_``) are those of the linear recipe.

    Read more in the :ref:`User Guide <dp_claims>`.

    Parameters
    ----------
    hidden_units : int >= 1, default=16
        Width of the hidden layer.
    activation : {"tanh", "relu"}, default="tanh"
        The hidden layer's nonlinearity.
    epsilon : float > 0, default=4.0
        The target ε at ``delta`` the noise is calibrated to.
    delta : float in (0, 1), default=1e-5
        The target δ.
    epochs : int >= 1, default=50
        Gradient steps (full batch: one step is one epoch).
    learning_rate : float > 0, default=2e-3
        Step size applied to the noisy sum of clipped gradients.
    max_grad_norm : float > 0, default=1.0
        Per-record clipping norm ``C`` (of the gradient of all parameters together).
    accountant : {"prv", "rdp"}, default="prv"
        opacus' accountant (see :class:`DPSGDLogisticRegression`).
    random_state : int, RandomState instance or None, default=None
        Seeds the starting weights and the noise. None draws from NumPy's global generator.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels seen in ``fit``.
    coefs_ : list of ndarray
        ``[W₁ᵀ, W₂ᵀ]`` of shapes ``(n_features, hidden_units)`` and
        ``(hidden_units, n_classes)`` (scikit-learn's ``MLPClassifier`` layout).
    intercepts_ : list of ndarray
        ``[b₁, b₂]``.
    noise_multiplier_ : float
        The σ used.
    epsilon_ : float
        The accountant's ε at ``delta`` for the σ used.
    mu_ : float
        ``√epochs/σ``: the exact GDP parameter of the training (add/remove-one).
    n_features_in_ : int
        Number of features.

    See Also
    --------
    DPSGDLogisticRegression : the linear recipe, white-box auditable.
    make_dirac_canaries : canaries for a black-box one-run audit.

    References
    ----------
    M. Abadi et al. Deep Learning with Differential Privacy. CCS 2016, Alg. 1. J. Dong,
    A. Roth, W. J. Su. Gaussian Differential Privacy. JRSS B 84(1), 2022, Cor. 3.3.
    X. Glorot, Y. Bengio. Understanding the difficulty of training deep feedforward neural
    networks. AISTATS 2010.

    Examples
    --------
    >>> import pytest
    >>> _ = pytest.importorskip("opacus")
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_mace.algorithm import DPSGDMLPClassifier
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> model = DPSGDMLPClassifier(epsilon=4.0, random_state=0).fit(X, y)
    >>> round(model.epsilon_, 1), round(model.mu_, 2), model.score(X, y) > 0.8
    (4.0, 0.92, True)
    """

    _parameter_constraints: dict = {
        "hidden_units": [Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions({"tanh", "relu"})],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "accountant": [StrOptions({"prv", "rdp"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        hidden_units=16,
        activation="tanh",
        *,
        epsilon=4.0,
        delta=1e-5,
        epochs=50,
        learning_rate=2e-3,
        max_grad_norm=1.0,
        accountant="prv",
        random_state=None,
    ):
        self.hidden_units = hidden_units
        self.activation = activation
        self.epsilon = epsilon
        self.delta = delta
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.max_grad_norm = max_grad_norm
        self.accountant = accountant
        self.random_state = random_state

    def _module(self, n_features, n_classes, rng):
        """Linear → activation → linear; Glorot-uniform weights from ``rng``, zero biases."""
        import torch

        sizes = [n_features, int(self.hidden_units), n_classes]
        layers = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
            layer = torch.nn.Linear(fan_in, fan_out)
            bound = np.sqrt(6.0 / (fan_in + fan_out))
            start = rng.uniform(-bound, bound, size=(fan_out, fan_in))
            with torch.no_grad():
                layer.weight.copy_(torch.as_tensor(start, dtype=torch.float32))
                layer.bias.zero_()
            layers.append(layer)
        act = torch.nn.Tanh() if self.activation == "tanh" else torch.nn.ReLU()
        return torch.nn.Sequential(layers[0], act, layers[1])

    def _keep(self, module, gradients):
        w1, b1, w2, b2 = self._parameters(module)
        self.coefs_, self.intercepts_ = [w1.T, w2.T], [b1, b2]

    def _logits(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        hidden = X @ self.coefs_[0] + self.intercepts_[0]
        hidden = np.tanh(hidden) if self.activation == "tanh" else np.maximum(hidden, 0.0)
        return hidden @ self.coefs_[1] + self.intercepts_[1]

    def predict_proba(self, X):
        """Class probabilities (softmax of the logits).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities, columns in the order of ``classes_``.
        """
        from scipy.special import softmax

        return softmax(self._logits(X), axis=1)

    def predict(self, X):
        """The most probable class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Values of ``classes_``.
        """
        logits = self._logits(X)
        return self.classes_[np.argmax(logits, axis=1)]


def make_dirac_canaries(X, n_canaries=1000, *, value=20.0, label=None):
    """Canaries for a black-box audit of a linear DP-SGD trainer, and the population to match.

    Every canary is zero on the population's features and on the other canaries' columns, and
    ``value`` on a column of its own that is zero in every population record. A linear
    model's gradient on such a record touches only that column's weights (and, by
    ``1/value`` of its norm, the intercept), so each canary's true-label log-odds after
    training is its own Gaussian mechanism: the input-space form of the Dirac canaries of
    Nasr et al. (2023), read from the released model alone. A DP guarantee holds for every
    dataset, so the auditor may choose the feature space; canaries that do not interfere are
    what lets one training certify much (Steinke, Nasr & Jagielski 2023, §7).

    All canaries share one label, so that the intercept the data learns shifts every
    canary's score alike (with labels of both classes, it would add a label-dependent offset
    the attack cannot see).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features + 1)
        The population, label in the last column (as for ``AlgorithmAudit`` with a
        classifier recipe).
    n_canaries : int >= 1, default=1000
        Canaries, hence extra columns.
    value : float > 0, default=20.0
        The canary's value on its column. Large enough that the clipped gradient is almost
        all on that column, small enough (with the trainer's rate and steps) that the
        canary's gradient stays clipped through training: then its drift is the same at
        every step and its log-odds exactly Gaussian.
    label : scalar or None, default=None
        The canaries' label; None: the smallest label of the population.

    Returns
    -------
    population : ndarray of shape (n_samples, n_features + n_canaries + 1)
        ``X`` with ``n_canaries`` zero columns inserted before the label.
    canaries : ndarray of shape (n_canaries, n_features + n_canaries + 1)
        The canaries, label last: pass them as ``AlgorithmAudit(targets=canaries)``.

    See Also
    --------
    AlgorithmAudit : ``design="one_run"`` inserts each canary with probability ½.
    make_canaries : canaries beyond the data's range, for any recipe.

    References
    ----------
    M. Nasr, J. Hayes, T. Steinke, B. Balle, F. Tramèr, M. Jagielski, N. Carlini, A. Terzis.
    Tight Auditing of Differentially Private Machine Learning. USENIX Security 2023, §4.
    T. Steinke, M. Nasr, M. Jagielski. Privacy Auditing with One (1) Training Run. NeurIPS
    2023.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import make_dirac_canaries
    >>> X = np.array([[0.5, -1.0, 1], [1.5, 2.0, 0]])
    >>> population, canaries = make_dirac_canaries(X, 2, value=10.0)
    >>> population
    array([[ 0.5, -1. ,  0. ,  0. ,  1. ],
           [ 1.5,  2. ,  0. ,  0. ,  0. ]])
    >>> canaries
    array([[ 0.,  0., 10.,  0.,  0.],
           [ 0.,  0.,  0., 10.,  0.]])
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < 2 or len(X) < 1:
        raise ValueError(
            "X must be a 2-D population with at least one feature and the label in the last "
            f"column; got shape {X.shape}."
        )
    if isinstance(n_canaries, bool) or not isinstance(n_canaries, Integral) or n_canaries < 1:
        raise ValueError(f"n_canaries must be an int >= 1; got {n_canaries!r}.")
    if isinstance(value, bool) or not isinstance(value, Real) or not 0 < value < np.inf:
        raise ValueError(f"value must be a finite number > 0; got {value!r}.")
    if label is None:
        label = np.min(X[:, -1])
    n_features = X.shape[1] - 1
    population = np.hstack([X[:, :-1], np.zeros((len(X), n_canaries)), X[:, -1:]])
    canaries = np.zeros((n_canaries, n_features + n_canaries + 1))
    canaries[np.arange(n_canaries), n_features + np.arange(n_canaries)] = float(value)
    canaries[:, -1] = float(label)
    return population, canaries
