"""The model audit's inputs and shared results, as frozen dataclasses.

Read as attributes, so a misspelt name is an ``AttributeError`` where it is read (or a
``TypeError`` where it is built), never a ``KeyError`` turned into a failed row of the
report (``docs/design.md``, "One engine").

* :class:`ModelInputs` — what every model's analyses share (``engine.inputs``);
* :class:`QueriedModel` — one audited model and its queries (``subject.inputs``);
* :class:`ModelShared` — its shared steps' results (``subject.shared``);
* :class:`ModelReportInputs` — how the inputs were used (``AuditResult.inputs``).
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._results import ReportInputs

__all__ = ["ModelInputs", "ModelReportInputs", "ModelShared", "QueriedModel"]


@dataclass(frozen=True)
class ModelInputs:
    """What every model's analyses share (the engine's ``inputs``).

    Attributes
    ----------
    targets : DataFrame
        The target records (members, then non-members), raw, with the label column.
    labels : ndarray
        Their true labels.
    population : DataFrame or None
        The population rows that train reference models; None without one.
    n_reference_models : int
        Reference models to train per model.
    device : str or torch.device
        Where the kernel passes run (MACE's estimator on the loss).
    """

    targets: pd.DataFrame
    labels: np.ndarray
    population: pd.DataFrame
    n_reference_models: int
    device: object = "auto"


@dataclass(frozen=True)
class QueriedModel:
    """One audited model as its analyses see it (a subject's ``inputs``).

    Attributes
    ----------
    model : AuditedModel
        The model.
    columns : list of str
        Its input columns.
    label : str
        The true-label column.
    queries : DataFrame
        Its answers for every target (:func:`model_queries`; for labels only, the
        predicted label and whether it is right).
    index : ndarray of int
        Each target's class index among the model's classes (−1: not a class).
    accuracy : tuple of float
        Accuracy on the members and on the non-members.
    recipe : estimator or None
        The training recipe reference models copy; None for an ONNX model.
    population_analyses : tuple of str
        The shadow attacks that can run on it (named in ``POPULATION_ANALYSES`` and
        ``ONE_MODEL_ANALYSES``).
    label_only : bool
        Queried for its predicted labels only.
    loss : ndarray or None
        Each target's loss ``−log M_y(x)``; None for labels only.
    n_classes : int or None
        Its number of classes; None for labels only.
    population_index : ndarray of int or None
        Each population row's class index; None without a population or for labels only.
    """

    model: object
    columns: list
    label: str
    queries: pd.DataFrame
    index: np.ndarray
    accuracy: tuple
    recipe: object
    population_analyses: tuple
    label_only: bool
    loss: np.ndarray = None
    n_classes: int = None
    population_index: np.ndarray = None


@dataclass(frozen=True)
class ModelShared:
    """A model's shared results: ``mace`` (MACE fitted on the loss) and ``reference`` (its
    :class:`ReferenceSet` of reference models); None until computed or when the step
    failed."""

    mace: object = None
    reference: object = None


@dataclass(frozen=True, kw_only=True)
class ModelReportInputs(ReportInputs):
    """How a model audit used its inputs (``AuditResult.inputs``): the true-label column
    ``label`` and the input columns ``feature_names``."""

    label: str
    feature_names: list
