"""Loading a trained classifier for ``sklearn-mace audit-model``, safely by default.

Three formats, one interface (:class:`AuditedModel`: ``log_proba(frame)`` and ``classes_``):

* **ONNX** (``.onnx``), run by onnxruntime: the model's own code never runs, so torch,
  TensorFlow, XGBoost or scikit-learn exports are audited alike. The probability output is
  chosen by contract (:func:`probability_output`), never by position: the one named by the
  caller (``probability_output=``), else the only ZipMap (a list of ``{class: probability}``
  dicts, what skl2onnx writes by default), else the only float tensor output, else the one
  float output identifiable as the probabilities (a name containing "prob", or the
  probability output of an ONNX-ML classifier operator); otherwise the model is refused with
  its outputs listed (name, type, shape). A tensor holds probabilities or raw logits (a torch
  export), told apart by whether every row is a probability vector. A graph with one label
  output and no float or ZipMap output at all gives labels only (``label_only``): it is
  queried through :meth:`AuditedModel.predict`, for the label-only attack; so is a
  scikit-learn classifier without ``predict_proba`` (``LinearSVC``).
* **Classes** come from the model, never assumed ``0 .. k-1``: the ZipMap's keys, or the
  ``classlabels_*`` attribute of the classifier (or ZipMap) node the probability output is
  computed from, or those the caller states (``classes=``); a graph naming none gets the
  sorted labels of the tables when they show exactly as many values as it has columns (with
  a warning), and is refused otherwise (:meth:`AuditedModel.resolve_classes`).
* **skops** (``.skops``): the declared sizes of the zip archive are checked first, against a
  cap and the file's size, before anything is inflated
  (:func:`~._skops_policy.check_skops_archive`: a zip bomb is refused); then
  ``skops.io.load`` with an explicit list of trusted types — those
  :func:`skops.io.get_untrusted_types` reports, each checked against an allow-list of *exact*
  scikit-learn, NumPy and SciPy class names (:mod:`._skops_policy`; no module prefix, no
  function unless listed); anything else is refused with its name. The shadow-model recipe
  goes through the same check (:func:`load_estimator`).
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
import warnings
from collections import deque
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, is_classifier, is_regressor

from ..._io import AuditInputError, AuditInputWarning
from ._inputs import label_indices, label_key
from ._skops_policy import check_estimator_writes, check_skops_archive, check_skops_types

__all__ = [
    "AuditedModel",
    "IndexedClassifier",
    "load_estimator",
    "load_model",
    "probability_output",
]

ONNX_SUFFIXES = (".onnx",)
SKOPS_SUFFIXES = (".skops",)
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib")
#: ONNX-ML operators that only regressors use
ONNX_REGRESSOR_OPS = ("LinearRegressor", "TreeEnsembleRegressor", "SVMRegressor")
#: ONNX node attributes that name the classes (ONNX-ML classifiers and ZipMap)
ONNX_CLASS_ATTRIBUTES = ("classlabels_int64s", "classlabels_ints", "classlabels_strings")
ONNX_FLOAT_TENSORS = ("tensor(float)", "tensor(double)", "tensor(float16)")
MODELS_EXTRA = 'pip install "sklearn-mace[models]"'
# log-probabilities are floored here so that a probability of exactly 0 gives a large finite
# loss instead of inf (float64's smallest normal number: log ≈ -708)
_LOG_FLOOR = float(np.log(np.finfo(float).tiny))
_PROBA_SLACK = 1e-3  # float32 exports round probabilities; rows sum to 1 within this


def _suffix(path):
    return Path(path).suffix.lower()


def _load_skops(path, trusted=(), max_bytes=None):
    # skops inflates every array while it lists the types: the sizes come first (and before
    # skops is imported, which brings in torch through scikit-learn's array API: ~200 MiB)
    check_skops_archive(path, max_bytes=max_bytes)
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
            "(skops.io.dump), or pass trust_pickle=True."
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


def load_estimator(path, *, trust_pickle=False, trusted_types=(), max_skops_bytes=None):
    """A scikit-learn classifier from a skops file, or a pickle/joblib file when trusted.

    The model to audit and a shadow-model recipe (``--shadow-estimator``) load through this
    one function: the same skops allow-list
    (:func:`~sklearn_mace.report._kinds.model._skops_policy.check_skops_types`), the same refusal of
    regressors and of estimators that cache to disk when fitted.

    Parameters
    ----------
    path : str or Path
    trust_pickle : bool, default=False
        Load ``.pkl``/``.pickle``/``.joblib`` files (this runs code stored in them).
    trusted_types : sequence of str, default=()
        Further exact type or function names to trust in a skops file.
    max_skops_bytes : int, default=None
        The most a skops file may inflate to (see
        :func:`~._skops_policy.check_skops_archive`; default:
        2 GiB and 100 times the file's size).

    Returns
    -------
    estimator : object
        A classifier (fitted or not).

    Raises
    ------
    AuditInputError
        Missing file, unknown extension, a refused pickle or refused skops types, a skops
        file over the size caps (a zip bomb), a regressor, a ``memory=`` cache.
    """
    path = Path(path)
    if not path.is_file():
        raise AuditInputError(f"Cannot read the model file '{path}': no such file.")
    suffix = _suffix(path)
    if suffix in SKOPS_SUFFIXES:
        estimator = _load_skops(path, trusted_types, max_skops_bytes)
    elif suffix in PICKLE_SUFFIXES:
        estimator = _load_pickle(path, trust_pickle)
    else:
        raise AuditInputError(
            f"Unknown model format '{path.name}': use a skops file "
            f"({', '.join(SKOPS_SUFFIXES)}) or, with trust_pickle=True, a pickle "
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


def _onnx_graph(path):
    """The ONNX graph (without external data), or None when onnx is absent or cannot read
    it (onnxruntime could): then only the session's outputs are known."""
    try:
        import onnx

        return onnx.load(str(path), load_external_data=False).graph
    except Exception:  # noqa: BLE001
        return None


def _onnx_regressor(session, graph):
    """Why the ONNX graph is a regressor, or None (regressors are refused like skops ones)."""
    outputs = session.get_outputs()
    has_label = any(
        o.type.startswith("seq(map(")
        or o.type.startswith("tensor(int")
        or o.type == "tensor(string)"
        for o in outputs
    )
    ops = set() if graph is None else {node.op_type for node in graph.node}
    regressor_ops = sorted(ops & set(ONNX_REGRESSOR_OPS))
    if regressor_ops:
        return f"its graph uses the regressor operator(s) {regressor_ops}"
    producer = session.get_modelmeta().producer_name
    if producer == "skl2onnx" and not has_label:
        return "it was exported by skl2onnx without a label output, as regressors are"
    return None


def _described(outputs):
    """The outputs as ``name (type, shape)``, for messages."""
    return ", ".join(f"{o.name!r} ({o.type}, shape {list(o.shape)})" for o in outputs)


def _classifier_scores(graph):
    """Names of the probability outputs (the second) of the graph's ONNX-ML classifiers."""
    if graph is None:
        return set()
    return {
        node.output[1]
        for node in graph.node
        if node.op_type.endswith("Classifier") and len(node.output) > 1
    }


def probability_output(outputs, *, graph=None, wanted=None, path="model"):
    """The output of an ONNX model that holds its class probabilities (or logits).

    Chosen by contract, never by position: ``wanted`` when given; else the only ZipMap
    (``seq(map(...))``); else the only float tensor; else the one float tensor identifiable
    as the probabilities — a name containing "prob" (``probabilities``,
    ``output_probability``) or the probability output of an ONNX-ML classifier operator in
    ``graph``. An embedding or a second head beside the probabilities is never taken for
    them: with several candidates and none identifiable, the model is refused.

    Parameters
    ----------
    outputs : list of onnxruntime.NodeArg
        ``session.get_outputs()``.
    graph : onnx.GraphProto, default=None
        The model's graph, to find its classifier operators.
    wanted : str, default=None
        The output the caller names (``probability_output=``, ``--probability-output``).
    path : str or Path, default="model"
        The file, for the messages.

    Returns
    -------
    output : onnxruntime.NodeArg

    Raises
    ------
    AuditInputError
        Listing every output (name, type, shape) and naming ``probability_output=``, when
        ``wanted`` is no float or ZipMap output, or when no output or several qualify.
    """
    zipmaps = [o for o in outputs if o.type.startswith("seq(map(")]
    tensors = [o for o in outputs if o.type in ONNX_FLOAT_TENSORS]
    pick = "pick the class probabilities (or logits) with probability_output='NAME'"
    if wanted is not None:
        found = [o for o in zipmaps + tensors if o.name == wanted]
        if not found:
            raise AuditInputError(
                f"The ONNX model '{path}' has no float or ZipMap output named {wanted!r} "
                f"(probability_output=); its outputs are {_described(outputs)}."
            )
        return found[0]
    if len(zipmaps) == 1:
        return zipmaps[0]
    if not zipmaps and len(tensors) == 1:
        return tensors[0]
    if not zipmaps and not tensors:
        raise AuditInputError(
            f"The ONNX model '{path}' has no probability or logit output; its outputs are "
            f"{_described(outputs)}."
        )
    scores = _classifier_scores(graph)
    candidates = zipmaps or tensors
    named = [o for o in candidates if "prob" in o.name.lower() or o.name in scores]
    if len(named) == 1:
        return named[0]
    raise AuditInputError(
        f"The ONNX model '{path}' has {len(candidates)} "
        f"{'ZipMap' if zipmaps else 'float'} outputs and none of them is identifiable as the "
        f"class probabilities (by a name containing 'prob', or as a classifier's probability "
        f"output): {_described(outputs)}. Taking one by position could audit an embedding "
        f"or another head instead; {pick}."
    )


def onnx_class_labels(graph, output):
    """The classes an ONNX graph names for ``output``, or None.

    Walks the graph back from ``output`` to the nearest node with a ``classlabels_int64s``,
    ``classlabels_ints`` or ``classlabels_strings`` attribute (an ONNX-ML classifier such as
    ``TreeEnsembleClassifier``, ``LinearClassifier``, ``SVMClassifier``, or a ``ZipMap``):
    the order of its labels is the order of the probability columns.

    Parameters
    ----------
    graph : onnx.GraphProto or None
    output : str
        The probability output's name.

    Returns
    -------
    classes : ndarray or None
    """
    if graph is None:
        return None
    producers = {name: node for node in graph.node for name in node.output}
    queue, seen = deque([output]), set()
    while queue:
        node = producers.get(queue.popleft())
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for attribute in node.attribute:
            if attribute.name not in ONNX_CLASS_ATTRIBUTES:
                continue
            if attribute.ints:
                return np.asarray(list(attribute.ints), dtype=np.int64)
            if attribute.strings:
                return np.asarray([v.decode() for v in attribute.strings], dtype=object)
        queue.extend(node.input)
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
    probability_output : str, default=None
        ONNX: the output holding the class probabilities or logits (default: chosen by
        :func:`probability_output`).
    classes : array-like, default=None
        ONNX: the classes of the probability columns, in order, for a graph that does not
        name them (a torch export); refused when the graph names others.

    Attributes
    ----------
    classes_ : ndarray or None
        The classes, in the order of ``log_proba``'s columns (None until
        :meth:`resolve_classes` for an ONNX model that names none).
    classes_source : str or None
        Where ``classes_`` came from (the estimator's ``classes_``, the ONNX graph's class
        labels, the ZipMap's keys, ``classes=``, or the sorted labels of the tables).
    feature_names_in_ : list of str or None
        The input columns the model names (scikit-learn's ``feature_names_in_``, or the
        input names of a multi-input ONNX graph).
    n_features_in_ : int or None
        The number of input columns, when the model states it.
    """

    def __init__(
        self,
        name,
        path,
        fmt,
        *,
        estimator=None,
        session=None,
        probability_output=None,
        classes=None,
    ):
        self.name, self.path, self.format = name, Path(path), fmt
        self.estimator, self.session = estimator, session
        self.classes_, self.feature_names_in_, self.n_features_in_ = None, None, None
        self.classes_source = "the model's classes_"  # where classes_ came from, for notes
        self._output_kind = None  # ONNX: "zipmap", "proba" or "logits", fixed on first use
        # True when the model gives its predicted labels only (an ONNX graph with a label
        # output and no probability output): only the label-only attack can query it
        self.label_only = False
        if estimator is not None:
            _check_classifier(estimator, path)
            # a classifier with predict and no predict_proba (LinearSVC) gives labels only
            self.label_only = not hasattr(estimator, "predict_proba")
            if not hasattr(estimator, "classes_") or not hasattr(estimator, "predict"):
                raise AuditInputError(
                    f"The model in '{path}' is a {type(estimator).__name__}, not a fitted "
                    "classifier with predict (or predict_proba) and classes_."
                )
            self.classes_ = np.asarray(estimator.classes_)
            names = getattr(estimator, "feature_names_in_", None)
            self.feature_names_in_ = None if names is None else [str(n) for n in names]
            self.n_features_in_ = getattr(estimator, "n_features_in_", None)
        else:
            self._describe_onnx(probability_output, classes)

    # ------------------------------------------------------------------ ONNX
    def _describe_onnx(self, wanted, classes):
        graph = _onnx_graph(self.path)
        regressor = _onnx_regressor(self.session, graph)
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
        labels = [
            o for o in outputs if o.type.startswith("tensor(int") or o.type == "tensor(string)"
        ]
        self._label_output = labels[0].name if labels else None
        scores = [
            o for o in outputs if o.type.startswith("seq(map(") or o.type in ONNX_FLOAT_TENSORS
        ]
        if wanted is None and not scores and len(labels) == 1:  # labels only: LabelOnlyAttack
            self.label_only, self._proba_output = True, None
            self._set_onnx_classes(onnx_class_labels(graph, labels[0].name), classes)
            return
        chosen = probability_output(outputs, graph=graph, wanted=wanted, path=self.path)
        self._proba_output = chosen.name
        self._set_onnx_classes(onnx_class_labels(graph, chosen.name), classes)

    def _set_onnx_classes(self, named, given):
        """``classes_`` from the graph's class labels or the caller's ``classes``."""
        if given is not None:
            given = np.asarray(list(given), dtype=object)
            if named is not None and [label_key(v) for v in given] != [label_key(v) for v in named]:
                raise AuditInputError(
                    f"classes={given[:10].tolist()} disagrees with the classes the ONNX model "
                    f"'{self.path}' names for its probability output ({named[:10].tolist()}); "
                    "leave classes out."
                )
            if len({label_key(v) for v in given}) != len(given) or None in map(label_key, given):
                raise ValueError(f"classes must be distinct labels; got {given[:10].tolist()}.")
            numbers = all(label_key(v)[0] == "number" for v in given)
            self.classes_ = given if not numbers else np.asarray(given.tolist())
            self.classes_source = "classes= (given)"
        elif named is not None:
            self.classes_ = named
            self.classes_source = "the class labels of the ONNX graph"
        else:
            self.classes_source = None

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
                    "model's input columns with columns=."
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
            self.classes_source = "the ZipMap's keys"
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

    def predict(self, frame):
        """The predicted label of each record (an ONNX model's label output, or the
        estimator's ``predict``): all the label-only attack reads.

        Parameters
        ----------
        frame : pandas.DataFrame
            The model's input columns.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        if self.session is not None:
            if self._label_output is None:
                return self.classes_[np.argmax(self.log_proba(frame), axis=1)]
            try:
                out = self.session.run([self._label_output], self._onnx_feed(frame))[0]
            except Exception as exc:  # onnxruntime raises its own exception types
                raise AuditInputError(f"The ONNX model '{self.path}' failed to run: {exc}") from exc
            return np.asarray(out).ravel()
        X = frame if self.feature_names_in_ is not None else self._array(frame)
        try:
            return np.asarray(self.estimator.predict(X)).ravel()
        except (ValueError, TypeError, RuntimeError) as exc:
            raise AuditInputError(
                f"The model '{self.name}' cannot label the records: {exc}"
            ) from exc

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
                f"{list(feature_columns)}. Select them with columns=."
            )
        return list(feature_columns)

    def resolve_classes(self, n_columns, labels):
        """Fix ``classes_`` of an ONNX model whose graph does not name them.

        The classes come from the model (a ZipMap's keys, the ``classlabels_*`` of its
        classifier node) or the caller (``classes=``); they are never assumed to be
        ``0 .. n_columns - 1``. For a graph that names none (a torch export), the columns are
        taken to be the distinct labels of the records, sorted (the order scikit-learn and
        label encoders use; compared by value, numbers before text, missing ones ignored)
        when there are exactly ``n_columns`` of them — with an :class:`AuditInputWarning`
        saying so, and checked by the train-accuracy gate and, when the model has one, its
        label output. Otherwise the model is refused, naming ``classes=``.
        """
        if self.classes_ is not None:
            return self.classes_
        keys = sorted({k for k in map(label_key, np.asarray(labels, dtype=object).ravel()) if k})
        values = [value for _, value in keys]
        numbers = all(kind == "number" for kind, _ in keys)
        if numbers and all(float(v).is_integer() for v in values):
            values = [int(v) for v in values]
        if len(keys) != n_columns:
            raise AuditInputError(
                f"The ONNX model '{self.name}' gives {n_columns} class scores without naming "
                f"the classes, and the records show {len(keys)} labels ({values[:10]}), so "
                "which column is which class is unknown (they are never assumed to be 0 .. "
                f"{n_columns - 1}). State them in column order with classes=['A', 'B', ...], or "
                "export the model with its class labels (skl2onnx does)."
            )
        self.classes_ = np.asarray(values, dtype=object if not numbers else None)
        self.classes_source = "the sorted labels of the tables (the model names none)"
        warnings.warn(
            f"The ONNX model '{self.name}' does not name its classes: its {n_columns} "
            f"probability columns are taken to be the sorted labels {values[:10]}. State them "
            "with classes=[...] if the model orders them otherwise.",
            AuditInputWarning,
            stacklevel=2,
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

    def predict(self, X):
        """The index of each predicted label among the model's classes (-1: none of them),
        from the model's labels alone (what :class:`~sklearn_mace.attacks.LabelOnlyAttack`
        queries)."""
        frame = pd.DataFrame(np.asarray(X), columns=self.columns)
        return label_indices(self.model.predict(frame), self.model.classes_)


def load_model(
    path,
    *,
    name=None,
    trust_pickle=False,
    trusted_types=(),
    probability_output=None,
    classes=None,
    max_skops_bytes=None,
):
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
        :func:`~sklearn_mace.report._kinds.model._skops_policy.check_skops_types`).
    probability_output : str, default=None
        ONNX: the name of the output holding the class probabilities (or logits). Needed
        when the graph has several float outputs and none is identifiable as the
        probabilities (see :func:`probability_output`); the error lists them.
    classes : array-like, default=None
        ONNX: the classes of the probability columns, in order, for a graph that does not
        name them (a torch export). By default they come from the model (ZipMap keys,
        ``classlabels_*``), never assumed ``0 .. k-1``.
    max_skops_bytes : int, default=None
        skops: the most the file may inflate to, in bytes (default: 2 GiB, and 100 times
        the file's size beyond 64 MiB; see
        :func:`~._skops_policy.check_skops_archive`).

    Returns
    -------
    model : AuditedModel
        The model, as :func:`~sklearn_mace.report.audit_model` takes it: log-probabilities of
        its classes.

    Raises
    ------
    AuditInputError
        Missing file, unknown extension, missing optional package, refused pickle or types,
        a skops file over the size caps, an ONNX model whose probability output is
        ambiguous, a regressor.

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
        onnx_options = dict(probability_output=probability_output, classes=classes)
        return AuditedModel(name, path, "onnx", session=session, **onnx_options)
    if suffix in SKOPS_SUFFIXES + PICKLE_SUFFIXES:
        if probability_output is not None or classes is not None:
            raise ValueError(
                "probability_output and classes are for ONNX models; the scikit-learn model "
                f"'{path}' has predict_proba and classes_ (leave them out)."
            )
        fmt = "skops" if suffix in SKOPS_SUFFIXES else "pickle"
        options = dict(trust_pickle=trust_pickle, trusted_types=trusted_types)
        estimator = load_estimator(path, **options, max_skops_bytes=max_skops_bytes)
        return AuditedModel(name, path, fmt, estimator=estimator)
    raise AuditInputError(
        f"Unknown model format '{path.name}': use ONNX (.onnx), skops (.skops) or, with "
        f"trust_pickle=True, pickle/joblib ({', '.join(PICKLE_SUFFIXES)})."
    )
