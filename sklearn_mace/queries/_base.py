"""The torch query base: a stateless transformer that runs a wrapped module on records.

Every query that evaluates a torch model (a discriminator, a generator) shares the same
plumbing: ``device="auto"``, batches of ``batch_size`` rows under ``torch.inference_mode()``,
float64 NumPy out, and a ``fit`` that learns nothing from the data — it only validates the
records and checks, on one row, that the module accepts them.
"""

import contextlib
import copy
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from ..utils._sklearn_compat import Interval, _fit_context
from ..utils._torch import TorchDevice, resolve_device, to_numpy

__all__ = [
    "QueryFeatureNamesMixin",
    "TorchQueryMixin",
    "as_module",
    "evaluate_in_batches",
    "module_on",
]


def as_module(model, name):
    """The ``torch.nn.Module`` behind ``model``: the module itself, or a skorch net's ``module_``.

    Raises a ``TypeError`` naming the parameter ``name`` for anything else, including a skorch
    net that was never initialized (``sklearn.clone`` re-creates skorch nets uninitialized, so
    inside ``GridSearchCV`` or ``cross_val_score`` pass ``net.module_`` rather than ``net``).
    """
    import torch

    if isinstance(model, torch.nn.Module):
        return model
    module = getattr(model, "module_", None)
    if isinstance(module, torch.nn.Module):
        return module
    if hasattr(model, "initialize") and hasattr(model, "module"):
        raise TypeError(
            f"{name} is a skorch net that has not been initialized (no module_); pass a "
            f"fitted net or its module_ (sklearn.clone re-creates skorch nets uninitialized)."
        )
    raise TypeError(
        f"{name} must be a torch.nn.Module or a fitted skorch net (with module_); "
        f"got {type(model).__name__}."
    )


def module_dtype(module):
    """The floating dtype of the module's parameters (float32 when it has none)."""
    import torch

    for tensor in module.parameters():
        if tensor.is_floating_point():
            return tensor.dtype
    return torch.float32


def module_on(module, device):
    """``module`` itself when all its tensors are on ``device``, else a copy moved there.

    The user's module is never moved (``nn.Module.to`` works in place).
    """
    tensors = list(module.parameters()) + list(module.buffers())
    if all(t.device == device for t in tensors):
        return module
    return copy.deepcopy(module).to(device)


@contextlib.contextmanager
def evaluation_mode(modules):
    """Put modules in ``eval()`` mode (dropout off, batch-norm running stats) and restore after."""
    saved = [(m, m.training) for module in modules for m in module.modules()]
    try:
        for module in modules:
            module.eval()
        yield
    finally:
        for m, training in saved:
            m.training = training


def evaluate_in_batches(modules, X, forward, *, device, batch_size, progress=False, desc=None):
    """``forward(batch, modules)`` over batches of ``batch_size`` rows of ``X``, as float64 NumPy.

    The one place where queries run torch modules: in ``eval()`` mode (restored after), under
    ``torch.inference_mode()``, each batch a fresh tensor (never a view of ``X``) of the first
    module's floating dtype on ``device``, where ``modules`` must already be (see
    :func:`module_on`: the caller places them, so that hooks it registers stay attached).
    """
    import torch

    dtype = module_dtype(modules[0])
    out = []
    batches = range(0, len(X), batch_size)
    with evaluation_mode(modules), torch.inference_mode():
        for start in tqdm(batches, disable=not progress, desc=desc):
            batch = torch.tensor(X[start : start + batch_size], dtype=dtype, device=device)
            out.append(to_numpy(forward(batch, modules)))
    return np.concatenate(out).astype(np.float64, copy=False)


class QueryFeatureNamesMixin:
    """``get_feature_names_out`` and ``membership_orientation`` for queries.

    Names are ``<classname>0``, ``<classname>1``, …; they let ``FeatureUnion`` name hybrid
    queries. Needs ``_n_features_out`` (set in ``fit``).

    A query declares which way its columns point with the class attribute
    ``_membership_orientation``: ``+1`` when larger values mean "more likely a member" (a
    discriminator score, a density ratio), ``-1`` when smaller values do (a distance to the
    release, a reconstruction error). :func:`~sklearn_mace.metrics.membership_scores`,
    :func:`~sklearn_mace.attacks.compare_attacks` and
    :meth:`~sklearn_mace.metrics.MembershipRocDisplay.from_estimator` read it, so that a
    distance is never read upside down.
    """

    #: +1: larger values mean more likely a member; -1: smaller values do
    _membership_orientation = 1

    def membership_orientation(self):
        """Which way each output column points: +1 larger = member, -1 smaller = member.

        Returns
        -------
        orientation : ndarray of int, shape (n_query_features,)
            One entry per output column of ``transform``.
        """
        check_is_fitted(self)
        return np.full(self._n_features_out, self._membership_orientation, dtype=int)

    def get_feature_names_out(self, input_features=None):
        """Names ``<classname>0``, ``<classname>1``, … of the query features.

        Parameters
        ----------
        input_features : None
            Ignored; the names depend only on the query.

        Returns
        -------
        names : ndarray of str
            One name per output column of ``transform``.
        """
        check_is_fitted(self)
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{i}" for i in range(self._n_features_out)], dtype=object)


class TorchQueryMixin(QueryFeatureNamesMixin, TransformerMixin, BaseEstimator):
    """Shared behaviour of the torch-backed query transformers (not used directly).

    Subclasses implement ``_modules()`` (the modules the query evaluates) and
    ``_query_batch(batch, modules)`` (a float tensor of shape ``(b, n_features)`` on the device
    → a tensor of shape ``(b, q)``), or override ``_query`` and ``_check_query`` entirely.
    Records are rows of ``X`` (images flattened); with ``input_shape`` they are reshaped to
    ``(b, *input_shape)`` before reaching a module.
    """

    _parameter_constraints = {
        "input_shape": [tuple, None],
        "device": [str, TorchDevice],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate ``X`` and check on one row that the query accepts it; learns nothing.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records, one per row (images flattened).
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            This query, checked and ready to ``transform``.
        """
        X = validate_data(self, X, dtype=np.float64)
        resolve_device(self.device)
        self._n_features_out = self._check_query(X)
        return self

    def transform(self, X):
        """Evaluate the query on every row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to query, one per row.

        Returns
        -------
        Q : ndarray of shape (n_samples, n_query_features), float64
            The query's output for each record, one row per record.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._query(X, progress=bool(self.verbose))

    def _check_query(self, X):
        """Run the query on the first record: the module must accept it (clear errors if not)."""
        return self._query(X[:1], progress=False).shape[1]

    def _query(self, X, *, progress):
        device = resolve_device(self.device)
        modules = [module_on(m, device) for m in self._modules()]
        Q = evaluate_in_batches(
            modules,
            X,
            self._query_batch,
            device=device,
            batch_size=self.batch_size,
            progress=progress,
            desc=type(self).__name__,
        )
        if not np.all(np.isfinite(Q)):
            raise ValueError(f"{type(self).__name__}: the module returned non-finite values.")
        return Q

    def _to_module_input(self, batch):
        """A batch of flattened rows, reshaped to ``(b, *input_shape)`` when that is set."""
        if self.input_shape is None:
            return batch
        n_cells = int(np.prod(self.input_shape))
        if n_cells != batch.shape[1]:
            raise ValueError(
                f"input_shape={self.input_shape} holds {n_cells} values per record but X has "
                f"{batch.shape[1]} features."
            )
        return batch.reshape(len(batch), *self.input_shape)

    def _run_module(self, module, batch, name):
        """``module(batch)`` as ``(b, q)``, with a clear error when the shapes do not fit."""
        import torch

        try:
            out = module(self._to_module_input(batch))
        except RuntimeError as exc:  # shape mismatches surface as RuntimeError in torch
            raise ValueError(
                f"{name} cannot be applied to records with {batch.shape[1]} features "
                f"(input_shape={self.input_shape}): {exc}"
            ) from exc
        if not isinstance(out, torch.Tensor) or out.ndim == 0 or len(out) != len(batch):
            raise ValueError(
                f"{name} must return one output per record (a tensor of shape (n,) or (n, q)); "
                f"got {getattr(out, 'shape', type(out).__name__)} for {len(batch)} records."
            )
        return out.reshape(len(batch), -1)
