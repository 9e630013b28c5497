"""The model audit's inputs: table checks, the models, and what each model says of each record.

Everything here runs before the engine: errors in the inputs
(:class:`~sklearn_mace.report.AuditInputError`) are raised before any attack runs, among them
the **train-accuracy gate** (:func:`check_train_accuracy`): a model no better on its own
training records than always answering their most common label is not predicting these
labels (a wrong output, label coding or column order), and its card would be green for that
reason alone.
"""

import warnings

import numpy as np
import pandas as pd

from ..._io import AuditInputError, AuditInputWarning
from ._inputs import label_indices, label_key
from ._io import AuditedModel

__all__ = [
    "as_audited_models",
    "check_model_tables",
    "check_train_accuracy",
    "label_index",
    "majority_rate",
    "model_queries",
]

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
                    f"The {name} table lacks the requested column(s) {missing} (columns=)."
                )
        return [c for c in columns if c != label]
    features = [c for c in tables["members"].columns if c != label]
    for name, frame in tables.items():
        theirs = [c for c in frame.columns if c != label]
        if set(theirs) != set(features):
            raise AuditInputError(
                f"Mismatched columns: the {name} table has {sorted(set(theirs))}, the "
                f"members table {sorted(set(features))}; use columns= for a common subset."
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
                f"The {name} table has no label column {label!r} (label=); its columns are "
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
    ``True`` are one class; :func:`~sklearn_mace.report._kinds.model._inputs.label_key`); -1 when
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


def majority_rate(labels):
    """The share of the most common label (compared by value, missing ones counted apart):
    the accuracy of always answering it.

    Examples
    --------
    >>> from sklearn_mace.report._kinds.model._queries import majority_rate
    >>> majority_rate([1, 1.0, "1", 2])
    0.75
    """
    keys = pd.Series([label_key(v) for v in np.asarray(labels, dtype=object).ravel()])
    return float(keys.value_counts(dropna=False).iloc[0] / len(keys)) if len(keys) else 0.0


def check_train_accuracy(name, correct, labels, *, force=False):
    """Stop the audit of a model no better on its training records than a constant answer.

    A model scored on its own training records (the members) that is right no more often
    than the majority-class rate of those records does not predict these labels: its
    probability output, its label coding (classes) or the order of its input columns is
    wrong, and every analysis would compare members with non-members on noise — a green card
    on a model that may leak (issue #25: an embedding taken for the probabilities gave train
    accuracy 0.07).

    Parameters
    ----------
    name : str
        The model's name, for the message.
    correct : ndarray of shape (n_members,)
        1 where the model's arg-max is the member's label.
    labels : array-like of shape (n_members,)
        The members' labels.
    force : bool, default=False
        Audit such a model anyway (``force_low_accuracy=True``, ``--force-low-accuracy``):
        an :class:`AuditInputWarning` and a note instead of the error.

    Returns
    -------
    note : str or None
        The note when ``force`` let a low accuracy through.

    Raises
    ------
    AuditInputError
        Train accuracy at or below the majority-class rate, unless ``force``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.report._kinds.model._queries import check_train_accuracy
    >>> labels = [0, 0, 1, 1]  # majority-class rate 0.5
    >>> check_train_accuracy("m", np.array([1.0, 1.0, 1.0, 0.0]), labels) is None
    True
    >>> check_train_accuracy("m", np.array([1.0, 0.0, 1.0, 0.0]), labels)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sklearn_mace.report._io.AuditInputError: The model 'm' does not predict these labels ...
    """
    accuracy, majority = float(np.mean(correct)), majority_rate(labels)
    if accuracy > majority:
        return None
    what = (
        f"The model '{name}' does not predict these labels — wrong output, label coding or "
        f"column order? On its own training records (the members) it is right {accuracy:.1%} "
        f"of the time, no better than always answering their most common label "
        f"({majority:.1%})"
    )
    if not force:
        raise AuditInputError(
            what + ". Check the probability output (probability_output=), the classes "
            "(classes=), the label column and the input columns' order; to audit it "
            "anyway, pass force_low_accuracy=True."
        )
    note = what + "; audited anyway (force_low_accuracy=True): its card says little."
    warnings.warn(note, AuditInputWarning, stacklevel=2)
    return note
