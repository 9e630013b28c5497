"""What an adversary observes of a classifier on a labelled record (MACE §2.2, App. I)."""

import warnings
from numbers import Integral

import numpy as np
import torch
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context, clone
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils import resolve_device, to_numpy
from ._base import as_module, evaluate_in_batches, module_on

__all__ = ["ClassifierQuery"]

#: The outputs ClassifierQuery can compute, in the order of BTTAttack's query layout first.
OUTPUTS = (
    "correct",
    "true_label",
    "predicted_label",
    "true_label_confidence",
    "predicted_label_confidence",
    "loss",
    "proba",
    "activations",
)
#: Default outputs: exactly the query layout BTTAttack reads (columns 0-4).
DEFAULT_OUTPUTS = OUTPUTS[:5]

_EPS = np.finfo(float).eps
_PROBA_SLACK = 1e-6


def _model_kind(model):
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


class ClassifierQuery(TransformerMixin, BaseEstimator):
    """Query a fitted classifier on labelled records: correctness, confidences, loss, activations.

    A record is a row of ``X`` whose **true label is the last column** (``label_column=-1``,
    the default) or the column ``label_column`` names: an integer position, or a column
    name when ``X`` is a pandas DataFrame. The other columns, in order, are the model's input.
    The wrapped model is the target under audit: it is never trained, cloned or moved
    (``clone(query)`` keeps the very same fitted model).

    Outputs (columns, in the order ``outputs`` lists them):

    * ``"correct"``: 1 if the predicted label equals the true label, else 0 (BTTA's ``A``);
    * ``"true_label"``: the true label;
    * ``"predicted_label"``: the label of largest probability;
    * ``"true_label_confidence"``: the probability ``M_y(x)`` of the true label;
    * ``"predicted_label_confidence"``: the largest probability ``max_j M_j(x)``;
    * ``"loss"``: the cross-entropy ``-log M_y(x)`` (probabilities clipped at machine
      epsilon, so it is finite);
    * ``"proba"``: the full probability vector (one column per class);
    * ``"activations"``: for torch modules and skorch nets, the flattened output of the
      sub-module named ``layer`` (a forward hook): MACE App. I's white-box query.

    The default ``outputs`` are the first five, the query layout
    :class:`~sklearn_mace.attacks.BTTAttack` reads.

    A true label that is not among the model's classes gets confidence 0, is never correct,
    and a ``UserWarning`` says how many records have one (it usually means ``label_column``
    points at the wrong column).

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
    n_activations_ : int
        Width of the flattened ``layer`` output (0 when ``"activations"`` is not asked for).

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
    """

    _parameter_constraints: dict = {
        "model": [object],
        "outputs": [tuple, list],
        "label_column": [Integral, str],
        "layer": [None, str],
        "torch_output": [StrOptions({"logits", "proba"})],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "device": [str, torch.device],
    }

    def __init__(
        self,
        model,
        outputs=DEFAULT_OUTPUTS,
        *,
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
                f"label_column={self.label_column} is out of range for X with {n_columns} "
                "columns."
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

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features + 1)
            Records: the model's input columns and the true label (``label_column``).
        y : None
            Ignored.

        Returns
        -------
        self : ClassifierQuery
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
        proba, activations = self._forward(features[:1] if not hasattr(features, "iloc")
                                           else features.iloc[:1])
        if self._kind != "sklearn":
            classes = getattr(self.model, "classes_", None) if self._kind == "skorch" else None
            self.classes_ = (
                np.asarray(classes) if classes is not None else np.arange(proba.shape[1])
            )
        self.n_activations_ = 0 if activations is None else activations.shape[1]
        return self

    # ------------------------------------------------------------------ forward passes
    def _forward(self, features):
        """(probabilities (n, k), flattened layer activations (n, d) or None)."""
        want_activations = "activations" in self._check_outputs()
        if self._kind == "sklearn":
            return np.asarray(self.model.predict_proba(features), dtype=float), None
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
                proba = np.asarray(
                    self.model.predict_proba(np.asarray(features, dtype=np.float32)), dtype=float
                )
            else:
                proba = self._torch_proba(module, np.asarray(features))
        finally:
            if handle is not None:
                handle.remove()
        # float32 nets round probabilities to ~1e-7: only errors beyond _PROBA_SLACK count
        if not np.all(np.isfinite(proba)) or np.any(np.abs(proba - 0.5) > 0.5 + _PROBA_SLACK):
            hint = "" if self._kind != "torch" else (
                f" (torch_output={self.torch_output!r}: does the module return "
                f"{'logits' if self.torch_output == 'logits' else 'probabilities'}?)"
            )  # fmt: skip
            raise ValueError(
                f"model returned probabilities that are not finite numbers in [0, 1]{hint}."
            )
        activations = np.concatenate(captured).astype(float) if want_activations else None
        return proba, activations

    def _torch_proba(self, module, features):
        out = evaluate_in_batches(
            [module], features, lambda batch, modules: modules[0](batch),
            device=self.device_, batch_size=self.batch_size,
        )  # fmt: skip
        if out.ndim == 1 or out.shape[1] == 1:  # one logit / probability for class 1
            out = out.reshape(-1)
            positive = 1 / (1 + np.exp(-out)) if self.torch_output == "logits" else out
            return np.column_stack([1 - positive, positive])
        if self.torch_output == "logits":
            out = np.exp(out - out.max(axis=1, keepdims=True))
            return out / out.sum(axis=1, keepdims=True)
        return out

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
        """
        check_is_fitted(self)
        X_original = X
        X = validate_data(self, X, reset=False)
        features, labels = self._split(X_original, X)
        proba, activations = self._forward(features)
        classes = self.classes_
        predicted_index = np.argmax(proba, axis=1)
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
        true_confidence = np.where(known, proba[rows, position], 0.0)
        blocks = {
            "correct": (known & (predicted_index == position)).astype(float),
            "true_label": labels,
            "predicted_label": classes[predicted_index].astype(float),
            "true_label_confidence": true_confidence,
            "predicted_label_confidence": proba[rows, predicted_index],
            "loss": -np.log(np.clip(true_confidence, _EPS, 1.0)),
            "proba": proba,
            "activations": activations,
        }
        return np.column_stack([blocks[name] for name in self._check_outputs()]).astype(float)

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns (``proba_<class>``, ``activation_<j>`` for blocks)."""
        check_is_fitted(self)
        names = []
        for name in self._check_outputs():
            if name == "proba":
                names += [f"proba_{c}" for c in self.classes_]
            elif name == "activations":
                names += [f"activation_{j}" for j in range(self.n_activations_)]
            else:
                names.append(name)
        return np.asarray(names, dtype=object)
