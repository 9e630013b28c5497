"""Loading a trained classifier for ``sklearn-mace audit-model``, safely by default.

Three formats, one interface (:class:`AuditedModel`: ``log_proba(frame)`` and ``classes_``):

* **ONNX** (``.onnx``), run by onnxruntime: the model's own code never runs, so torch,
  TensorFlow, XGBoost or scikit-learn exports are audited alike. The probability output is
  found among the session's outputs: a ZipMap (a list of ``{class: probability}`` dicts, what
  skl2onnx writes by default), a probability tensor (skl2onnx with ``zipmap=False``) or raw
  logits (a torch export), told apart by whether every row is a probability vector.
* **skops** (``.skops``): ``skops.io.load`` with an explicit list of trusted types — those
  :func:`skops.io.get_untrusted_types` reports, each checked against an allow-list of *exact*
  scikit-learn, NumPy and SciPy class names (:mod:`~sklearn_mace.report._skops_policy`; no
  module prefix, no function unless listed); anything else is refused with its name. The
  shadow-model recipe goes through the same check (:func:`load_estimator`).
* **pickle / joblib** (``.pkl``, ``.pickle``, ``.joblib``): loading one runs code stored in
  the file, so it is refused unless ``trust_pickle=True`` (``--trust-pickle``).

Regressors are refused in every format (an ONNX graph with a regressor operator, or one
exported by skl2onnx without a label output). onnxruntime's telemetry is turned off before
it is first imported (``ORT_DISABLE_TELEMETRY=1``, then ``disable_telemetry_events()``), so
that running a model writes nothing under the user's home. Probabilities are clipped to
[0, 1] (log-probabilities to at most 0) before any loss: float32 exports overshoot 1 by
rounding. A skorch net loaded from a trusted pickle gets its inputs in the dtype of its
parameters.
"""

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, is_classifier, is_regressor

from ._io import AuditInputError
from ._model_inputs import label_key
from ._skops_policy import check_estimator_writes, check_skops_types

__all__ = ["AuditedModel", "IndexedClassifier", "load_estimator", "load_model"]

ONNX_SUFFIXES = (".onnx",)
SKOPS_SUFFIXES = (".skops",)
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib")
#: ONNX-ML operators that only regressors use
ONNX_REGRESSOR_OPS = ("LinearRegressor", "TreeEnsembleRegressor", "SVMRegressor")
MODELS_EXTRA = 'pip install "sklearn-mace[models]"'
# log-probabilities are floored here so that a probability of exactly 0 gives a large finite
# loss instead of inf (float64's smallest normal number: log ≈ -708)
_LOG_FLOOR = float(np.log(np.finfo(float).tiny))
_PROBA_SLACK = 1e-3  # float32 exports round probabilities; rows sum to 1 within this


def _suffix(path):
    return Path(path).suffix.lower()


def _load_skops(path, trusted=()):
    try:
        import skops.io as sio
    except ImportError as exc:
        raise AuditInputError(
            f"Reading the skops model '{path}' needs skops: {MODELS_EXTRA}."
        ) from exc
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:  # a corrupt or foreign file: skops raises many kinds
        raise AuditInputError(f"Cannot read '{path}' as a skops file: {exc}") from exc
    allowed = check_skops_types(untrusted, path=path, trusted=trusted)
    try:
        return sio.load(path, trusted=allowed)
    except Exception as exc:
        raise AuditInputError(f"Cannot load the skops model '{path}': {exc}") from exc


def _load_pickle(path, trust_pickle):
    if not trust_pickle:
        raise AuditInputError(
            f"Refusing to load '{path}': loading a pickle or joblib file runs code stored in "
            "it, so only do it for files you trust. Export the model to ONNX or skops "
            "(skops.io.dump), or pass --trust-pickle."
        )
    import joblib

    try:
        return joblib.load(path)
    except Exception as exc:
        raise AuditInputError(f"Cannot load the pickle '{path}': {exc}") from exc


def _estimator_type(estimator):
    """``"classifier"``, ``"regressor"`` or None, by scikit-learn's tags where the object has
    them (skorch nets, plain objects: their ``_estimator_type``)."""
    try:
        if is_regressor(estimator):
            return "regressor"
        if is_classifier(estimator):
            return "classifier"
    except AttributeError:  # no __sklearn_tags__: not a scikit-learn estimator
        pass
    return getattr(estimator, "_estimator_type", None)


def _check_classifier(estimator, path):
    """Refuse a regressor (or anything that is no classifier), naming what it is."""
    kind = _estimator_type(estimator)
    if kind == "regressor" or (kind is None and not hasattr(estimator, "predict_proba")):
        raise AuditInputError(
            f"The model in '{path}' is a {type(estimator).__name__}, not a classifier: the "
            "model audit needs class probabilities (predict_proba)."
        )


def load_estimator(path, *, trust_pickle=False, trusted_types=()):
    """A scikit-learn classifier from a skops file, or a pickle/joblib file when trusted.

    The model to audit and a shadow-model recipe (``--shadow-estimator``) load through this
    one function: the same skops allow-list
    (:func:`~sklearn_mace.report._skops_policy.check_skops_types`), the same refusal of
    regressors and of estimators that cache to disk when fitted.

    Parameters
    ----------
    path : str or Path
    trust_pickle : bool, default=False
        Load ``.pkl``/``.pickle``/``.joblib`` files (this runs code stored in them).
    trusted_types : sequence of str, default=()
        Further exact type or function names to trust in a skops file.

    Returns
    -------
    estimator : object
        A classifier (fitted or not).

    Raises
    ------
    AuditInputError
        Missing file, unknown extension, a refused pickle or refused skops types, a
        regressor, a ``memory=`` cache.
    """
    path = Path(path)
    if not path.is_file():
        raise AuditInputError(f"Cannot read the model file '{path}': no such file.")
    suffix = _suffix(path)
    if suffix in SKOPS_SUFFIXES:
        estimator = _load_skops(path, trusted_types)
    elif suffix in PICKLE_SUFFIXES:
        estimator = _load_pickle(path, trust_pickle)
    else:
        raise AuditInputError(
            f"Unknown model format '{path.name}': use a skops file "
            f"({', '.join(SKOPS_SUFFIXES)}) or, with --trust-pickle, a pickle "
            f"({', '.join(PICKLE_SUFFIXES)})."
        )
    _check_classifier(estimator, path)
    check_estimator_writes(estimator, path=path)
    return estimator


def _import_onnxruntime(path):
    """onnxruntime with its telemetry off: the variable must be set before its first import
    (importing it writes a device id and a database under ``~/.cache`` otherwise)."""
    if "onnxruntime" not in sys.modules:
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:
        import onnxruntime
    except ImportError as exc:
        raise AuditInputError(
            f"Running the ONNX model '{path}' needs onnxruntime: {MODELS_EXTRA}."
        ) from exc
    if hasattr(onnxruntime, "disable_telemetry_events"):
        onnxruntime.disable_telemetry_events()
    return onnxruntime


def _onnx_regressor(path, session):
    """Why the ONNX graph is a regressor, or None (regressors are refused like skops ones)."""
    outputs = session.get_outputs()
    has_label = any(
        o.type.startswith("seq(map(")
        or o.type.startswith("tensor(int")
        or o.type == "tensor(string)"
        for o in outputs
    )
    try:
        import onnx

        graph = onnx.load(str(path), load_external_data=False).graph
        ops = {node.op_type for node in graph.node}
    except Exception:  # noqa: BLE001  onnx absent or the graph unreadable: outputs only
        ops = set()
    regressor_ops = sorted(ops & set(ONNX_REGRESSOR_OPS))
    if regressor_ops:
        return f"its graph uses the regressor operator(s) {regressor_ops}"
    producer = session.get_modelmeta().producer_name
    if producer == "skl2onnx" and not has_label:
        return "it was exported by skl2onnx without a label output, as regressors are"
    return None


class AuditedModel:
    """A loaded classifier: log-probabilities of the classes for a table of records.

    Parameters
    ----------
    name : str
        The model's name in the report.
    path : Path
        The file it came from.
    fmt : {"onnx", "skops", "pickle"}
    estimator : object, default=None
        The scikit-learn classifier (skops / pickle), which shadow models can clone.
    session : onnxruntime.InferenceSession, default=None
        The ONNX session.

    Attributes
    ----------
    classes_ : ndarray or None
        The classes, in the order of ``log_proba``'s columns (None until
        :meth:`resolve_classes` for an ONNX model without a ZipMap).
    feature_names_in_ : list of str or None
        The input columns the model names (scikit-learn's ``feature_names_in_``, or the
        input names of a multi-input ONNX graph).
    n_features_in_ : int or None
        The number of input columns, when the model states it.
    """

    def __init__(self, name, path, fmt, *, estimator=None, session=None):
        self.name, self.path, self.format = name, Path(path), fmt
        self.estimator, self.session = estimator, session
        self.classes_, self.feature_names_in_, self.n_features_in_ = None, None, None
        self._output_kind = None  # ONNX: "zipmap", "proba" or "logits", fixed on first use
        if estimator is not None:
            _check_classifier(estimator, path)
            if not hasattr(estimator, "predict_proba") or not hasattr(estimator, "classes_"):
                raise AuditInputError(
                    f"The model in '{path}' is a {type(estimator).__name__}, not a fitted "
                    "classifier with predict_proba and classes_."
                )
            self.classes_ = np.asarray(estimator.classes_)
            names = getattr(estimator, "feature_names_in_", None)
            self.feature_names_in_ = None if names is None else [str(n) for n in names]
            self.n_features_in_ = getattr(estimator, "n_features_in_", None)
        else:
            self._describe_onnx()

    # ------------------------------------------------------------------ ONNX
    def _describe_onnx(self):
        regressor = _onnx_regressor(self.path, self.session)
        if regressor:
            raise AuditInputError(
                f"The ONNX model '{self.path}' is a regressor ({regressor}): the model audit "
                "needs a classifier's class probabilities."
            )
        inputs = self.session.get_inputs()
        if len(inputs) > 1:  # one input per column (skl2onnx on DataFrames)
            self.feature_names_in_ = [i.name for i in inputs]
            self.n_features_in_ = len(inputs)
        else:
            shape = inputs[0].shape
            width = shape[-1] if len(shape) == 2 else None
            self.n_features_in_ = width if isinstance(width, int) else None
        outputs = self.session.get_outputs()
        zipmaps = [o for o in outputs if o.type.startswith("seq(map(")]
        tensors = [o for o in outputs if o.type in ("tensor(float)", "tensor(double)")]
        if zipmaps:
            self._proba_output = zipmaps[0].name
        elif tensors:
            named = [o for o in tensors if "prob" in o.name.lower()]
            self._proba_output = (named or tensors)[-1].name
        else:
            raise AuditInputError(
                f"The ONNX model '{self.path}' has no probability or logit output; its outputs "
                f"are {[(o.name, o.type) for o in outputs]}."
            )
        labels = [
            o for o in outputs if o.type.startswith("tensor(int") or o.type == "tensor(string)"
        ]
        self._label_output = labels[0].name if labels else None

    def _onnx_feed(self, frame):
        inputs = self.session.get_inputs()
        dtypes = {
            "tensor(float)": np.float32,
            "tensor(double)": np.float64,
            "tensor(int64)": np.int64,
            "tensor(int32)": np.int32,
        }
        feed = {}
        for node in inputs:
            if node.type not in dtypes:
                raise AuditInputError(
                    f"The ONNX model '{self.path}' takes input {node.name!r} of type "
                    f"{node.type}; only numeric tensors are supported."
                )
            block = frame[[node.name]] if len(inputs) > 1 else frame
            text = [c for c in block.columns if not pd.api.types.is_numeric_dtype(block[c])]
            if text:
                raise AuditInputError(
                    f"The ONNX model '{self.name}' takes numbers, but the column(s) {text} "
                    "hold text; encode them as the model was trained, or select the "
                    "model's input columns with --columns."
                )
            feed[node.name] = block.to_numpy().astype(dtypes[node.type])
        return feed

    def _onnx_log_proba(self, frame):
        wanted = [self._proba_output] + ([self._label_output] if self._label_output else [])
        try:
            result = self.session.run(wanted, self._onnx_feed(frame))
        except Exception as exc:  # onnxruntime raises its own exception types
            raise AuditInputError(f"The ONNX model '{self.path}' failed to run: {exc}") from exc
        out = result[0]
        self._last_labels = result[1] if len(result) > 1 else None
        if isinstance(out, list):  # ZipMap: one {class: probability} dict per row
            keys = list(out[0])
            self.classes_, self._output_kind = np.asarray(keys), "zipmap"
            proba = np.array([[row[k] for k in keys] for row in out], dtype=float)
            return np.log(np.clip(proba, 0.0, 1.0))
        out = np.asarray(out, dtype=float)
        if out.ndim == 1:
            out = out[:, None]
        if self._output_kind is None:
            in_range = np.all((out >= -_PROBA_SLACK) & (out <= 1 + _PROBA_SLACK))
            sums_to_one = out.shape[1] == 1 or np.allclose(out.sum(axis=1), 1, atol=_PROBA_SLACK)
            self._output_kind = "proba" if in_range and sums_to_one else "logits"
        if out.shape[1] == 1:  # one probability or logit for the second class
            if self._output_kind == "proba":
                p = np.clip(out[:, 0], 0.0, 1.0)
                return np.log(np.column_stack([1 - p, p]))
            z = out[:, 0]  # log-sigmoid pair, computed stably
            return np.column_stack([-np.logaddexp(0, z), -np.logaddexp(0, -z)])
        if self._output_kind == "proba":
            return np.log(np.clip(out, 0.0, 1.0))
        shifted = out - out.max(axis=1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))

    # ------------------------------------------------------------------ public
    def log_proba(self, frame):
        """Log-probabilities of the classes, floored at log(tiny) so they stay finite.

        Parameters
        ----------
        frame : pandas.DataFrame
            The model's input columns (see :meth:`input_columns`).

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        if self.session is not None:
            with np.errstate(divide="ignore"):  # log(0) = -inf, floored below
                logp = self._onnx_log_proba(frame)
        else:
            X = frame if self.feature_names_in_ is not None else self._array(frame)
            try:
                if hasattr(self.estimator, "predict_log_proba"):
                    with np.errstate(divide="ignore"):
                        logp = np.asarray(self.estimator.predict_log_proba(X), dtype=float)
                else:
                    with np.errstate(divide="ignore"):
                        proba = np.asarray(self.estimator.predict_proba(X), dtype=float)
                        logp = np.log(np.clip(proba, 0.0, 1.0))
            except (ValueError, TypeError, RuntimeError) as exc:  # torch raises RuntimeError
                raise AuditInputError(
                    f"The model '{self.name}' cannot score the records: {exc}"
                ) from exc
        if np.isnan(logp).any():
            raise AuditInputError(f"The model '{self.name}' returned NaN probabilities.")
        # probabilities in [0, 1]: a float32 export's 1.0000001 would give a negative loss
        return np.clip(logp, _LOG_FLOOR, 0.0)

    def _array(self, frame):
        """The records as an array, in the dtype of a torch module's parameters (a skorch
        net's float32 weights refuse float64 inputs)."""
        X = frame.to_numpy()
        module = getattr(self.estimator, "module_", None)
        parameters = getattr(module, "parameters", None)
        if callable(parameters) and pd.api.types.is_numeric_dtype(np.asarray(X).dtype):
            for tensor in parameters():
                if tensor.is_floating_point():
                    return X.astype(str(tensor.dtype).removeprefix("torch."))
        return X

    def input_columns(self, feature_columns):
        """The table columns the model reads, in its order; checks them against the model."""
        if self.feature_names_in_ is not None:
            missing = [c for c in self.feature_names_in_ if c not in feature_columns]
            if missing:
                raise AuditInputError(
                    f"Mismatched columns: the model '{self.name}' reads {missing}, which the "
                    f"tables lack (their feature columns: {list(feature_columns)})."
                )
            return list(self.feature_names_in_)
        if self.n_features_in_ is not None and self.n_features_in_ != len(feature_columns):
            raise AuditInputError(
                f"Mismatched columns: the model '{self.name}' takes {self.n_features_in_} "
                f"features but the tables give {len(feature_columns)} besides the label: "
                f"{list(feature_columns)}. Select them with --columns."
            )
        return list(feature_columns)

    def resolve_classes(self, n_columns, labels):
        """Fix ``classes_`` of an ONNX model whose output does not name them.

        Without a ZipMap the columns are taken to be the distinct labels, sorted (the order
        scikit-learn and most exporters use; labels compared by value, numbers before text,
        missing ones ignored), when the records show exactly ``n_columns`` of them, else
        ``0 .. n_columns - 1`` when every label is one of those numbers; the model's own
        label output, when it has one, must then agree with the arg-max of the
        probabilities.
        """
        if self.classes_ is not None:
            return self.classes_
        keys = sorted({k for k in map(label_key, np.asarray(labels, dtype=object).ravel()) if k})
        values = [value for _, value in keys]
        numbers = all(kind == "number" for kind, _ in keys)
        if numbers and all(float(v).is_integer() for v in values):
            values = [int(v) for v in values]
        if len(keys) == n_columns:
            self.classes_ = np.asarray(values, dtype=object if not numbers else None)
        elif numbers and set(values) <= set(range(n_columns)):
            self.classes_ = np.arange(n_columns)
        else:
            raise AuditInputError(
                f"The ONNX model '{self.name}' gives {n_columns} class scores without naming "
                f"the classes, and the labels {values[:10]} do not say which is "
                "which; export it with a ZipMap or with classes 0 .. k-1."
            )
        return self.classes_

    def check_label_output(self, log_proba):
        """The model's label output (ONNX) must match the arg-max of its probabilities
        (compared by value: a label output ``1`` is the class ``1.0``)."""
        labels = getattr(self, "_last_labels", None)
        if labels is None or self.classes_ is None:
            return
        predicted = self.classes_[np.argmax(log_proba, axis=1)]
        given = [label_key(v) for v in np.asarray(labels, dtype=object).ravel()]
        agree = np.mean([a == label_key(b) for a, b in zip(given, predicted, strict=True)])
        if agree < 0.99:  # ties between probabilities may break differently in a few rows
            raise AuditInputError(
                f"The ONNX model '{self.name}': the class order assumed for its probability "
                f"output ({self.classes_[:10].tolist()}) disagrees with its label output on "
                f"{1 - agree:.0%} of the records."
            )


class IndexedClassifier(ClassifierMixin, BaseEstimator):
    """An :class:`AuditedModel` as an in-process classifier over class *indices*.

    The thin adapter that lets the library's attacks (``ClassifierQuery``, ``LiRAAttack``)
    query any loaded model, ONNX included: ``predict_proba`` of a float array whose columns
    are the model's inputs, and ``classes_`` = ``0 .. k-1`` (true labels are passed as their
    index among the model's classes, as the shadow models are trained).
    """

    def __init__(self, model, columns):
        self.model, self.columns = model, list(columns)
        self.classes_ = np.arange(len(model.classes_))

    def __sklearn_is_fitted__(self):
        return True

    def fit(self, X, y=None):
        """Never called: the audited model is only queried (scikit-learn's checks want it)."""
        raise TypeError("The audited model is fixed; it cannot be refitted.")

    def predict_proba(self, X):
        frame = pd.DataFrame(np.asarray(X), columns=self.columns)
        return np.exp(self.model.log_proba(frame))


def load_model(path, *, name=None, trust_pickle=False, trusted_types=()):
    """Load a trained classifier to audit: ONNX, skops, or (trusted) pickle / joblib.

    ONNX models run in onnxruntime (no code of the model runs; its telemetry is off); skops
    files load with an explicit list of exact trusted scikit-learn, NumPy and SciPy types; a
    pickle or joblib file is refused unless ``trust_pickle=True``, because loading one runs
    code stored in it. Regressors are refused in every format.

    Parameters
    ----------
    path : str or Path
        The model file (``.onnx``, ``.skops``, ``.pkl``, ``.pickle``, ``.joblib``).
    name : str, default=None
        The model's name in the report (default: the file name without its suffixes).
    trust_pickle : bool, default=False
        Accept pickle and joblib files.
    trusted_types : sequence of str, default=()
        Further exact type or function names to trust in a skops file (see
        :func:`~sklearn_mace.report._skops_policy.check_skops_types`).

    Returns
    -------
    model : AuditedModel
        The model, as :func:`~sklearn_mace.report.audit_model` takes it: log-probabilities of
        its classes.

    Raises
    ------
    AuditInputError
        Missing file, unknown extension, missing optional package, refused pickle or types,
        a regressor.

    Examples
    --------
    >>> from sklearn_mace.report import load_model
    >>> load_model("model.pkl")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    AuditInputError: Cannot read the model file 'model.pkl': no such file.
    """
    path = Path(path)
    name = name or path.name.split(".")[0] or "model"
    if not path.is_file():
        raise AuditInputError(f"Cannot read the model file '{path}': no such file.")
    suffix = _suffix(path)
    if suffix in ONNX_SUFFIXES:
        onnxruntime = _import_onnxruntime(path)
        try:
            session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise AuditInputError(f"Cannot read '{path}' as an ONNX model: {exc}") from exc
        return AuditedModel(name, path, "onnx", session=session)
    if suffix in SKOPS_SUFFIXES + PICKLE_SUFFIXES:
        fmt = "skops" if suffix in SKOPS_SUFFIXES else "pickle"
        return AuditedModel(
            name,
            path,
            fmt,
            estimator=load_estimator(path, trust_pickle=trust_pickle, trusted_types=trusted_types),
        )
    raise AuditInputError(
        f"Unknown model format '{path.name}': use ONNX (.onnx), skops (.skops) or, with "
        f"--trust-pickle, pickle/joblib ({', '.join(PICKLE_SUFFIXES)})."
    )
