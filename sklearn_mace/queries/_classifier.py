"""What an adversary observes of a classifier on a labelled record (MACE §2.2, App. I)."""

import warnings
from numbers import Integral
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ..utils._torch import TorchDevice, resolve_device, to_numpy
from ._base import as_module, evaluate_in_batches, module_on
from ._class_scores import (
    LOG_PROBA_FLOOR,
    additive_log_ratios,
    are_logits_of,
    log_softmax,
    sklearn_logits,
    true_label_log_odds,
)

__all__ = ["ClassifierQuery"]

#: The outputs ClassifierQuery can compute, in the order of BTTAttack's query layout first.
OUTPUTS = (
    "correct",
    "true_label",
    "predicted_label",
    "true_label_confidence",
    "predicted_label_confidence",
    "loss",
    "true_label_log_odds",
    "proba",
    "log_proba",
    "proba_log_ratios",
    "logits",
    "activations",
)
#: Default outputs: exactly the query layout BTTAttack reads (columns 0-4).
DEFAULT_OUTPUTS = OUTPUTS[:5]
#: Which way each single-column output points: +1 larger = member (a model is right and
#: confident on its training records), -1 smaller = member (the loss); labels have no order.
#: The per-class blocks (probabilities, logits, activations) have none either: 0.
ORIENTATION = {
    "correct": 1,
    "true_label": 0,
    "predicted_label": 0,
    "true_label_confidence": 1,
    "predicted_label_confidence": 1,
    "loss": -1,
    "true_label_log_odds": 1,
}

_PROBA_SLACK = 1e-6
#: Rows of the fit data on which a scikit-learn model's decision_function is checked to be
#: the logits of its predict_proba.
_N_LOGIT_CHECK = 256


class _ModelScores(NamedTuple):
    """One forward pass: raw logits (or None), logits/log-probas of every class, and the rest."""

    raw_logits: np.ndarray | None  # as the model returns them: (n, k) or (n, 1) for binary
    scores: np.ndarray  # (n, k): logits when the model exposes them, else log_proba
    log_proba: np.ndarray  # (n, k), log-softmax, exact in the tails when from logits
    proba: np.ndarray  # (n, k)
    activations: np.ndarray | None


def _model_kind(model):
    import torch

    if isinstance(model, torch.nn.Module):
        return "torch"
    if hasattr(model, "module_") or (hasattr(model, "module") and hasattr(model, "initialize")):
        return "skorch"
    if hasattr(model, "predict_proba"):
        return "sklearn"
    raise TypeError(
        "model must be a fitted scikit-learn classifier with predict_proba, a skorch "
        f"NeuralNetClassifier or a torch.nn.Module; got {type(model).__name__}."
    )


def _skorch_emits_logits(net):
    """Whether a skorch net's forward output is logits: its own rule for predict_proba."""
    import torch

    if net.predict_nonlinearity != "auto":
        return False
    return isinstance(
        getattr(net, "criterion_", None), torch.nn.CrossEntropyLoss | torch.nn.BCEWithLogitsLoss
    )


def _check_proba(proba, hint=""):
    # float32 nets round probabilities to ~1e-7: only errors beyond _PROBA_SLACK count
    if not np.all(np.isfinite(proba)) or np.any(np.abs(proba - 0.5) > 0.5 + _PROBA_SLACK):
        raise ValueError(
            f"model returned probabilities that are not finite numbers in [0, 1]{hint}."
        )


def _log_of_proba(proba):
    """log p with exact zeros at LOG_PROBA_FLOOR and float32 overshoot above 1 at 0."""
    with np.errstate(divide="ignore"):
        return np.clip(np.log(np.clip(proba, 0.0, None)), LOG_PROBA_FLOOR, 0.0)


class ClassifierQuery(TransformerMixin, BaseEstimator):
    """Query a fitted classifier on labelled records: correctness, confidences, losses, logits.

    A record is a row of ``X`` whose **true label is the last column** (``label_column=-1``,
    the default) or the column ``label_column`` names: an integer position, or a column
    name when ``X`` is a pandas DataFrame. The other columns, in order, are the model's input.
    The wrapped model is the target under audit: it is never trained, cloned or moved
    (``clone(query)`` keeps the very same fitted model).

    Outputs (columns, in the order ``outputs`` lists them; ``y`` is the true class, ``k`` the
    number of classes, ``s`` the model's logits):

    * ``"correct"``: 1 if the predicted label equals the true label, else 0 (BTTA's ``A``);
    * ``"true_label"``: the true label;
    * ``"predicted_label"``: the label of largest probability;
    * ``"true_label_confidence"``: the probability ``M_y(x)`` of the true label;
    * ``"predicted_label_confidence"``: the largest probability ``max_j M_j(x)``;
    * ``"loss"``: the cross-entropy ``-log M_y(x)``, taken from the log-softmax (below), so a
      member classified with ``M_y = 1 − 1e-12`` gets ``1e-12``, not 0;
    * ``"true_label_log_odds"``: ``log(M_y / (1 − M_y)) = s_y − logsumexp_{j≠y} s_j``, the
      logit-scaled confidence of LiRA (Carlini et al. 2022, §4): near-Gaussian across
      models, and finite where ``M_y`` rounds to 1 (bounded by ±708.4, like the loss);
    * ``"proba"``: the full probability vector (``k`` columns), for classifiers such as the
      shadow-model attack. Its columns sum to 1, so its covariance is singular: a Gaussian
      KDE with a rule-of-thumb bandwidth refuses it (``GaussianKDE``, ``BayesOptimalMIA``;
      ``KDEAdvantageEstimator``'s default sphering drops the null direction, a linear
      reduction). For densities use ``"proba_log_ratios"``, which also spreads out the
      probabilities that crowd near 0 and 1;
    * ``"log_proba"``: ``log M_j(x)``, the log-softmax (``k`` columns; it lies on a
      ``(k − 1)``-dimensional surface, so it is no density query either);
    * ``"proba_log_ratios"``: ``log M_j(x) − log M_k(x)`` for ``j < k`` (``k − 1`` columns):
      Aitchison's additive log-ratio transform of the probability vector, which is how a
      probability vector enters a density estimator. It is a bijection between the open
      simplex and ``R^{k−1}``, so the optimal membership advantage of the query (MACE Def. 2,
      a total-variation distance) is that of the probability vector itself: no information
      is lost or added. It equals ``s_j − s_k`` exactly, the logits up to their free shift,
      and any other base class, or the isometric log-ratio, is a linear map of it;
    * ``"logits"``: the raw pre-softmax scores ``s`` as the model gives them (``k`` columns,
      or one, the score of ``classes_[1]``, for a binary model with one output). Available
      where the model exposes them: a torch module with ``torch_output="logits"``; a skorch
      net trained with ``CrossEntropyLoss`` or ``BCEWithLogitsLoss``; a scikit-learn
      ``MLPClassifier`` (alone or ending a Pipeline: its output layer, from ``coefs_`` and
      ``intercepts_``); naive Bayes (its ``predict_joint_log_proba``, ``log P(x, c)``); any
      other scikit-learn model whose ``decision_function`` is the logit of its
      ``predict_proba`` (``softmax(s)`` within 1e-6 of ``predict_proba`` on up to 256 of the
      records given to ``fit``: ``LogisticRegression``, gradient boosting, LDA; not ``SVC``'s
      Platt-scaled probabilities nor one-vs-rest models). Asking for ``"logits"`` from
      another model is a ``ValueError`` that names ``"log_proba"`` and
      ``"proba_log_ratios"``. Raw logits may carry a redundant direction (scikit-learn's
      multinomial ``LogisticRegression`` gives logits that sum to a constant, a singular
      covariance): for a density estimator use ``"proba_log_ratios"``;
    * ``"activations"``: for torch modules and skorch nets, the flattened output of the
      sub-module named ``layer`` (a forward hook): MACE App. I's white-box query.

    Where logits exist (``log_proba_source_ == "logits"``) every output is computed from them
    in float64 log space (:func:`~sklearn_mace.queries._class_scores.log_softmax`). Otherwise
    the log-probabilities are the model's ``predict_log_proba`` when it has one, else
    ``log(predict_proba)``; a probability of exactly 0 then becomes ``log`` of the smallest
    normal double, about −708.4 (a loss of 708.4), and nothing else is clipped: rounding
    that already happened inside the model cannot be undone, which is why logits are
    preferred.

    The default ``outputs`` are the first five, the query layout
    :class:`~sklearn_mace.attacks.BTTAttack` reads.

    A true label that is not among the model's classes gets confidence 0 (loss 708.4, log-odds
    −708.4), is never correct, and a ``UserWarning`` says how many records have one (it
    usually means ``label_column`` points at the wrong column).

    Parameters
    ----------
    model : object
        A fitted scikit-learn classifier with ``predict_proba`` and ``classes_`` (a
        Pipeline is fine), an initialized skorch ``NeuralNetClassifier``, or a
        ``torch.nn.Module`` that maps a float batch of shape ``(n, n_features)`` to class
        logits ``(n, k)`` (or a single logit ``(n,)``/``(n, 1)`` for two classes).
        Classes of a torch module are ``0..k-1``.
    outputs : tuple of str, default=("correct", "true_label", "predicted_label", \
"true_label_confidence", "predicted_label_confidence")
        Which outputs to compute, among those listed above.
    label_column : int or str, default=-1
        Where the true label is in ``X``.
    layer : str, default=None
        Name of the sub-module (as in ``module.named_modules()``) whose output the
        ``"activations"`` output captures; required for it.
    torch_output : {"logits", "proba"}, default="logits"
        What a torch module returns; logits go through a softmax (a sigmoid for one
        logit). Ignored for scikit-learn and skorch models, which have ``predict_proba``.
    batch_size : int, default=1024
        Rows per forward pass of a torch module.
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        Where a torch module runs ("auto": CUDA when available). A module whose parameters
        live elsewhere is copied there once in ``fit``; the user's module is not moved.

    Attributes
    ----------
    n_features_in_ : int
        Columns of ``X``, label included.
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.
    classes_ : ndarray
        The model's classes.
    log_proba_source_ : {"logits", "log_proba", "proba"}
        Where the log-probabilities come from: the model's logits (exact), its
        ``predict_log_proba``, or ``log`` of its probabilities.
    n_logits_ : int
        Width of the ``"logits"`` output (0 when the model exposes no logits).
    n_activations_ : int
        Width of the flattened ``layer`` output (0 when ``"activations"`` is not asked for).

    See Also
    --------
    sklearn_mace.attacks.BTTAttack : reads the default outputs.
    sklearn_mace.estimation.KDEAdvantageEstimator : takes ``"loss"``,
        ``"true_label_log_odds"`` or ``"proba_log_ratios"`` as its query.

    References
    ----------
    MACE (TMLR 2023) §2.2 and App. I (queries of a discriminative model); Carlini et al.,
    "Membership inference attacks from first principles", IEEE S&P 2022, §4 (logit scaling);
    J. Aitchison, "The statistical analysis of compositional data", JRSS B 44 (1982)
    (the additive log-ratio transform).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_mace.queries import ClassifierQuery
    >>> X, y = load_iris(return_X_y=True)
    >>> model = LogisticRegression(max_iter=500).fit(X, y)
    >>> records = np.column_stack([X, y])  # true label in the last column
    >>> Q = ClassifierQuery(model, outputs=("correct", "loss")).fit_transform(records)
    >>> Q.shape
    (150, 2)

    Three classes give two log-ratio columns, and the loss comes from the logits:

    >>> query = ClassifierQuery(model, outputs=("proba_log_ratios", "loss")).fit(records)
    >>> query.log_proba_source_
    'logits'
    >>> [str(name) for name in query.get_feature_names_out()]
    ['log_ratio_0_vs_2', 'log_ratio_1_vs_2', 'loss']
    """

    _parameter_constraints: dict = {
        "model": [object],
        "outputs": [tuple, list],
        "label_column": [Integral, str],
        "layer": [None, str],
        "torch_output": [StrOptions({"logits", "proba"})],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "device": [str, TorchDevice],
    }

    def __init__(
        self,
        model,
        *,
        outputs=DEFAULT_OUTPUTS,
        label_column=-1,
        layer=None,
        torch_output="logits",
        batch_size=1024,
        device="auto",
    ):
        self.model = model
        self.outputs = outputs
        self.label_column = label_column
        self.layer = layer
        self.torch_output = torch_output
        self.batch_size = batch_size
        self.device = device

    def __sklearn_clone__(self):
        """Clone the query but keep the same fitted target model (it is never refitted)."""
        params = self.get_params(deep=False)
        model = params.pop("model")
        return type(self)(model, **{k: clone(v, safe=False) for k, v in params.items()})

    # ------------------------------------------------------------------ validation
    def _check_outputs(self):
        outputs = tuple(self.outputs)
        if not outputs:
            raise ValueError(f"outputs must name at least one of {OUTPUTS}.")
        unknown = [name for name in outputs if name not in OUTPUTS]
        if unknown:
            raise ValueError(f"outputs must be among {OUTPUTS}; got unknown {unknown!r}.")
        if len(set(outputs)) != len(outputs):
            raise ValueError(f"outputs lists a name twice: {list(outputs)!r}.")
        return outputs

    def _label_index(self, X_original):
        n_columns = self.n_features_in_
        if isinstance(self.label_column, str):
            names = getattr(self, "feature_names_in_", None)
            if names is None or self.label_column not in names:
                raise ValueError(
                    f"label_column={self.label_column!r} names a column, which needs a "
                    "DataFrame X that has it; use an integer position for arrays."
                )
            return int(np.flatnonzero(names == self.label_column)[0])
        if not -n_columns <= self.label_column < n_columns:
            raise ValueError(
                f"label_column={self.label_column} is out of range for X with {n_columns} columns."
            )
        return self.label_column % n_columns

    def _split(self, X_original, X):
        """(model input, true labels) of validated ``X``; DataFrames stay DataFrames."""
        index = self._label_index(X_original)
        labels = X[:, index]
        if hasattr(X_original, "iloc") and self._kind == "sklearn":
            features = X_original.drop(columns=X_original.columns[index])
        else:
            features = np.delete(X, index, axis=1)
        return features, labels

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the model and the record layout; learn the classes and output widths.

        For a scikit-learn model this also checks, on up to 256 records, whether its raw
        scores (``decision_function``, naive Bayes' joint log-likelihoods or
        ``MLPClassifier``'s output layer) are the logits of its ``predict_proba``
        (``log_proba_source_``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features + 1)
            Records: the model's input columns and the true label (``label_column``).
        y : None
            Ignored.

        Returns
        -------
        self : ClassifierQuery
            This query, checked and ready to ``transform``.
        """
        outputs = self._check_outputs()
        self._kind = _model_kind(self.model)
        if "activations" in outputs:
            if self._kind == "sklearn":
                raise ValueError(
                    "outputs='activations' needs a torch module or a skorch net as model."
                )
            if self.layer is None:
                raise ValueError("outputs='activations' needs layer=<sub-module name>.")
        X_original = X
        X = validate_data(self, X)
        if X.shape[1] < 2:
            raise ValueError(
                f"X has {X.shape[1]} feature(s) but ClassifierQuery needs at least 2: the "
                "model's input columns and the true label."
            )
        if self._kind == "sklearn":
            check_is_fitted(self.model)
            self.classes_ = np.asarray(self.model.classes_)
        elif self._kind == "skorch":  # skorch places and runs its own module
            self.module_ = as_module(self.model, "model")
        else:
            self.device_ = resolve_device(self.device)
            self.module_ = module_on(self.model, self.device_)
        features, _ = self._split(X_original, X)
        self.log_proba_source_ = self._find_log_proba_source(features)
        if "logits" in outputs and self.log_proba_source_ != "logits":
            raise ValueError(
                "outputs='logits' needs a model that exposes its pre-softmax scores: a torch "
                "module with torch_output='logits', a skorch net trained with "
                "CrossEntropyLoss, an MLPClassifier, naive Bayes, or a scikit-learn classifier "
                "whose decision_function is the logit of its predict_proba. This "
                f"{type(self.model).__name__} gives probabilities only: use 'log_proba', "
                "or 'proba_log_ratios' for a density estimator."
            )
        first = self._forward(features[:1] if not hasattr(features, "iloc") else features.iloc[:1])
        if self._kind != "sklearn":
            classes = getattr(self.model, "classes_", None) if self._kind == "skorch" else None
            self.classes_ = (
                np.asarray(classes) if classes is not None else np.arange(first.proba.shape[1])
            )
        self.n_logits_ = 0 if first.raw_logits is None else first.raw_logits.shape[1]
        self.n_activations_ = 0 if first.activations is None else first.activations.shape[1]
        return self

    def _find_log_proba_source(self, features):
        """ "logits", "log_proba" or "proba": see the ``log_proba_source_`` attribute."""
        if self._kind == "torch":
            return "logits" if self.torch_output == "logits" else "proba"
        if self._kind == "skorch":
            return "logits" if _skorch_emits_logits(self.model) else "proba"
        sample = (
            features.iloc[:_N_LOGIT_CHECK]
            if hasattr(features, "iloc")
            else (features[:_N_LOGIT_CHECK])
        )
        proba = np.asarray(self.model.predict_proba(sample), dtype=float)
        _, logits = sklearn_logits(self.model, sample, self.classes_.size)
        if are_logits_of(logits, proba):
            return "logits"
        return "log_proba" if hasattr(self.model, "predict_log_proba") else "proba"

    # ------------------------------------------------------------------ forward passes
    def _forward(self, features):
        """One pass of the model over ``features``: a :class:`_ModelScores`."""
        want_activations = "activations" in self._check_outputs()
        if self._kind == "sklearn":
            return self._sklearn_scores(features)
        module = self.module_
        captured = []
        handle = None
        if want_activations:
            layers = dict(module.named_modules())
            if self.layer not in layers:
                names = [name for name in layers if name][:20]
                raise ValueError(f"layer={self.layer!r} is not a sub-module; choose from {names}.")
            handle = layers[self.layer].register_forward_hook(
                lambda _mod, _inp, out: captured.append(to_numpy(out).reshape(out.shape[0], -1))
            )
        try:
            if self._kind == "skorch":
                features = np.asarray(features, dtype=np.float32)
                if self.log_proba_source_ == "logits":
                    out = to_numpy(self.model.forward(features, training=False)).astype(float)
                else:
                    out = np.asarray(self.model.predict_proba(features), dtype=float)
            else:
                out = evaluate_in_batches(
                    [module],
                    np.asarray(features),
                    lambda batch, modules: modules[0](batch),
                    device=self.device_,
                    batch_size=self.batch_size,
                )
        finally:
            if handle is not None:
                handle.remove()
        activations = np.concatenate(captured).astype(float) if want_activations else None
        hint = (
            ""
            if self._kind != "torch"
            else (
                f" (torch_output={self.torch_output!r}: does the module return "
                f"{'logits' if self.torch_output == 'logits' else 'probabilities'}?)"
            )
        )
        if self.log_proba_source_ == "logits":
            return self._from_logits(out, activations, hint)
        if out.ndim == 1 or out.shape[1] == 1:  # one probability, of class 1
            out = out.reshape(-1)
            out = np.column_stack([1 - out, out])
        _check_proba(out, hint)
        log_proba = _log_of_proba(out)
        return _ModelScores(None, log_proba, log_proba, out, activations)

    @staticmethod
    def _from_logits(raw, activations, hint=""):
        raw = raw.reshape(len(raw), -1)
        if not np.all(np.isfinite(raw)):
            raise ValueError(f"model returned logits that are not finite numbers{hint}.")
        # one logit is the score of class 1 against class 0
        full = np.column_stack([np.zeros(len(raw)), raw]) if raw.shape[1] == 1 else raw
        log_proba = log_softmax(full)
        return _ModelScores(raw, full, log_proba, np.exp(log_proba), activations)

    def _sklearn_scores(self, features):
        if self.log_proba_source_ == "logits":
            raw, _ = sklearn_logits(self.model, features, self.classes_.size)
            return self._from_logits(raw, None)
        if self.log_proba_source_ == "log_proba":
            with np.errstate(over="ignore"):
                log_proba = np.asarray(self.model.predict_log_proba(features), dtype=float)
                proba = np.exp(log_proba)
        else:
            proba = np.asarray(self.model.predict_proba(features), dtype=float)
            log_proba = None
        _check_proba(proba)
        log_proba = (
            _log_of_proba(proba) if log_proba is None else np.clip(log_proba, LOG_PROBA_FLOOR, 0.0)
        )
        return _ModelScores(None, log_proba, log_proba, proba, None)

    # ------------------------------------------------------------------ transform
    def transform(self, X):
        """The chosen outputs for every record, one block of columns per output.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
            Records in the layout seen in ``fit``.

        Returns
        -------
        Q : ndarray of shape (n_samples, n_features_out)
            The chosen outputs, named by :meth:`get_feature_names_out`.
        """
        check_is_fitted(self)
        X_original = X
        X = validate_data(self, X, reset=False)
        features, labels = self._split(X_original, X)
        out = self._forward(features)
        classes = self.classes_
        predicted_index = np.argmax(out.scores, axis=1)
        order = np.argsort(classes)
        position = order[np.clip(np.searchsorted(classes[order], labels), 0, classes.size - 1)]
        known = classes[position] == labels
        if not known.all():
            warnings.warn(
                f"{np.sum(~known)} of {labels.size} true labels are not among the model's "
                f"classes {classes.tolist()[:10]}; they get confidence 0 and count as "
                f"misclassified. Is label_column={self.label_column!r} right?",
                UserWarning,
                stacklevel=2,
            )
        rows = np.arange(labels.size)
        true_log_proba = np.where(known, out.log_proba[rows, position], LOG_PROBA_FLOOR)
        wanted = self._check_outputs()
        blocks = {
            "correct": lambda: (known & (predicted_index == position)).astype(float),
            "true_label": lambda: labels,
            "predicted_label": lambda: classes[predicted_index].astype(float),
            "true_label_confidence": lambda: np.where(known, out.proba[rows, position], 0.0),
            "predicted_label_confidence": lambda: out.proba[rows, predicted_index],
            "loss": lambda: -true_log_proba,
            # bounded like the loss: a one-class model's +inf becomes -LOG_PROBA_FLOOR
            "true_label_log_odds": lambda: np.where(
                known,
                np.clip(
                    true_label_log_odds(out.scores, position), LOG_PROBA_FLOOR, -LOG_PROBA_FLOOR
                ),
                LOG_PROBA_FLOOR,
            ),
            "proba": lambda: out.proba,
            "log_proba": lambda: out.log_proba,
            "proba_log_ratios": lambda: additive_log_ratios(out.scores),
            "logits": lambda: out.raw_logits,
            "activations": lambda: out.activations,
        }
        return np.column_stack([blocks[name]() for name in wanted]).astype(float)

    def membership_orientation(self):
        """Which way each output column points: +1 larger = member, -1 smaller, 0 no order.

        A model is right and confident on its training records, so ``correct``, the
        confidences and ``true_label_log_odds`` point up (+1) and ``loss`` down (-1); the
        labels and the per-class blocks (``proba``, ``logits``, …) have no membership order
        (0): an attacker has to be fitted on them.

        Returns
        -------
        orientation : ndarray of int, shape (n_query_features,)
            One entry per output column of ``transform``, in its order.
        """
        check_is_fitted(self)
        widths = self._block_widths()
        return np.concatenate(
            [
                np.full(widths.get(name, 1), ORIENTATION.get(name, 0), dtype=int)
                for name in self._check_outputs()
            ]
        )

    def _block_widths(self):
        classes = self.classes_
        return {
            "proba": len(classes),
            "log_proba": len(classes),
            "proba_log_ratios": len(classes) - 1,
            "logits": self.n_logits_ if self.n_logits_ else 0,
            "activations": self.n_activations_,
        }

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns (one per class, log-ratio or unit for the blocks).

        Parameters
        ----------
        input_features : None
            Ignored; the names depend only on the model and ``outputs``.

        Returns
        -------
        names : ndarray of str
            ``proba_<class>``, ``log_proba_<class>``, ``log_ratio_<class>_vs_<last class>``,
            ``logit_<class>`` and ``activation_<j>`` for the blocks, the output's own name
            otherwise.
        """
        check_is_fitted(self)
        classes = self.classes_
        blocks = {
            "proba": [f"proba_{c}" for c in classes],
            "log_proba": [f"log_proba_{c}" for c in classes],
            "proba_log_ratios": [f"log_ratio_{c}_vs_{classes[-1]}" for c in classes[:-1]],
            "logits": [f"logit_{c}" for c in classes[-self.n_logits_ :]] if self.n_logits_ else [],
            "activations": [f"activation_{j}" for j in range(self.n_activations_)],
        }
        names = []
        for name in self._check_outputs():
            names += blocks.get(name, [name])
        return np.asarray(names, dtype=object)
