"""The model audit's inputs: table checks, the models, and what each model says of each record.

Everything here runs before the engine: errors in the inputs
(:class:`~sklearn_mace.report.AuditInputError`) are raised before any attack runs.
"""

import numpy as np
import pandas as pd

from ._io import AuditInputError
from ._model_inputs import label_indices
from ._model_io import AuditedModel

__all__ = ["as_audited_models", "check_model_tables", "label_index", "model_queries"]

MIN_TARGETS = 10  # per class: fewer leaves 5-fold cross-fitting folds without a class


def as_audited_models(models):
    """``{name: AuditedModel}`` from one model, a dict, or fitted scikit-learn classifiers."""
    if not isinstance(models, dict):
        name = getattr(models, "name", None) or type(models).__name__
        models = {name: models}
    if not models:
        raise AuditInputError("At least one model is needed.")
    audited = {}
    for name, model in models.items():
        if not isinstance(model, AuditedModel):  # a fitted classifier held in memory
            model = AuditedModel(str(name), "<in memory>", "in memory", estimator=model)
        audited[str(name)] = model
    return audited


def _check_columns(tables, label, columns):
    if columns is not None:
        for name, frame in tables.items():
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise AuditInputError(
                    f"The {name} table lacks the requested column(s) {missing} (--columns)."
                )
        return [c for c in columns if c != label]
    features = [c for c in tables["members"].columns if c != label]
    for name, frame in tables.items():
        theirs = [c for c in frame.columns if c != label]
        if set(theirs) != set(features):
            raise AuditInputError(
                f"Mismatched columns: the {name} table has {sorted(set(theirs))}, the "
                f"members table {sorted(set(features))}; use --columns for a common subset."
            )
    return features


def check_model_tables(members, non_members, population, label, columns):
    """The tables by role and the model's feature columns; input errors name the table."""
    tables = {"members": members, "non-members": non_members}
    if population is not None:
        tables["population"] = population
    for name, frame in tables.items():
        if label not in frame.columns:
            raise AuditInputError(
                f"The {name} table has no label column {label!r} (--label); its columns are "
                f"{list(frame.columns)}."
            )
    features = _check_columns(tables, label, columns)
    for name in ("members", "non-members"):
        if len(tables[name]) < MIN_TARGETS:
            raise AuditInputError(
                f"Too few rows for the audit: the {name} table has {len(tables[name])}; it "
                f"needs at least {MIN_TARGETS}."
            )
    return tables, features


def label_index(classes, labels):
    """Index of each label among ``classes``, matched by value (``1``, ``1.0``, ``"1"`` and
    ``True`` are one class; :func:`~sklearn_mace.report._model_inputs.label_key`); -1 when
    it is not one."""
    return label_indices(labels, classes)


def model_queries(model, frame, labels):
    """What a black-box adversary sees of ``model`` on labelled records (MACE §2.2).

    Computed from log-probabilities, so the loss is exact even where the probability of the
    true label rounds to 1.

    Parameters
    ----------
    model : AuditedModel
        The loaded model.
    frame : DataFrame
        The model's input columns.
    labels : ndarray of shape (n_samples,)
        The true labels.

    Returns
    -------
    queries : DataFrame
        ``correct``, ``true_label`` (index of the label among the model's classes, −1 when
        it is not one of them), ``predicted_label`` (index), ``true_label_confidence``,
        ``predicted_label_confidence`` — BTTAttack's layout, columns 0-4 — then ``loss``
        (``−log M_y(x)``) and ``log_proba_<j>`` for every class.
    index : ndarray of int
        The ``true_label`` column as integers.
    """
    logp = model.log_proba(frame)
    classes = model.resolve_classes(logp.shape[1], labels)
    if len(classes) != logp.shape[1]:
        raise AuditInputError(
            f"The model '{model.name}' names {len(classes)} classes but returns "
            f"{logp.shape[1]} probability columns."
        )
    model.check_label_output(logp)
    index = label_index(classes, labels)
    rows = np.arange(len(index))
    true_logp = np.where(index >= 0, logp[rows, np.maximum(index, 0)], logp.min(axis=1))
    predicted = np.argmax(logp, axis=1)
    queries = pd.DataFrame(
        {
            "correct": (predicted == index).astype(float),
            "true_label": index.astype(float),
            "predicted_label": predicted.astype(float),
            "true_label_confidence": np.exp(true_logp),
            "predicted_label_confidence": np.exp(logp[rows, predicted]),
            "loss": -true_logp,
        }
    )
    for j in range(logp.shape[1]):
        queries[f"log_proba_{j}"] = logp[:, j]
    return queries, index
