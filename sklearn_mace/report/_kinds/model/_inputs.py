"""The model audit's records as the model means them: labels matched by value, input columns.

**Labels are matched by value.** A label in the table and a class of the model are the same
when their *keys* are equal (:func:`label_key`):

* numbers compare as numbers: ``1``, ``1.0``, ``np.int64(1)`` and the texts ``"1"``,
  ``" 1.0 "`` and ``"1e0"`` are all the class ``1``;
* booleans are the numbers 0 and 1, and so are the texts ``"True"``/``"False"`` (any case):
  a model with classes ``[False, True]`` matches labels ``0/1``, ``"true"/"false"`` or
  ``0.0/1.0``; a model with classes ``[0, 1]`` matches ``True``/``False``;
* any other text is compared as text, without surrounding spaces (case kept);
* a missing label (NaN, None, an empty cell) matches no class.

A record whose label is missing or not a class of the model is an input error
(:class:`AuditInputError` naming the column, the unseen values and how many rows), unless the
caller chooses to drop such records (``drop_unmatched=True``, with a warning). So labels
written as floats, or as text for an integer model, are matched instead of marking every
record misclassified (train and test accuracy 0, and a "no leak" verdict).

**Input columns** (:func:`model_input_columns`): the table columns the model reads, in its
order, with the row-id columns of :func:`~sklearn_mace.report._encode.find_row_id_columns`
left out of a model that does not name its inputs (a warning names them); a warning when a
model that reads its inputs by position meets tables whose columns are in different orders;
and infinite (always) or missing (unless allowed) feature values refused.
"""

import math
import warnings
from numbers import Number
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..._encode import find_row_id_columns
from ..._io import AuditInputError, AuditInputWarning
from ..._quality import check_overlapping_records

__all__ = [
    "LabelMatch",
    "check_finite_features",
    "label_indices",
    "label_key",
    "match_labels",
    "model_input_columns",
    "prepare_model_records",
]

_TRUE, _FALSE = {"true"}, {"false"}


def label_key(value):
    """The key a label or a class is compared by (module docstring), None when missing.

    Parameters
    ----------
    value : object
        One label or class.

    Returns
    -------
    key : tuple or None
        ``("number", float)`` or ``("text", str)``.

    Examples
    --------
    >>> from sklearn_mace.report._kinds.model._inputs import label_key
    >>> {label_key(v) for v in (1, 1.0, "1", " 1.0 ", True, "True")}
    {('number', 1.0)}
    >>> label_key("cat"), label_key(float("nan")), label_key("")
    (('text', 'cat'), None, None)
    """
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (bool, np.bool_)):
        return ("number", float(value))
    if isinstance(value, Number) and not isinstance(value, complex):
        number = float(value)
        return None if math.isnan(number) else ("number", number)
    text = str(value).strip()
    if not text:
        return None
    if text.lower() in _TRUE | _FALSE:
        return ("number", 1.0 if text.lower() in _TRUE else 0.0)
    try:
        number = float(text)
    except ValueError:
        return ("text", text)
    return None if math.isnan(number) else ("number", number)


def _shown(classes):
    """The first classes as plain Python values, for messages."""
    return [v.item() if hasattr(v, "item") else v for v in np.asarray(classes, dtype=object)[:10]]


def _keys(values):
    """Keys of many values, computed once per distinct value."""
    values = pd.Series(np.asarray(values, dtype=object).ravel(), dtype=object)
    codes, distinct = pd.factorize(values, use_na_sentinel=True)
    keys = [label_key(v) for v in distinct] + [None]
    return [keys[c] for c in codes]


class LabelMatch(NamedTuple):
    """Which class each record's label is (see :func:`match_labels`)."""

    index: np.ndarray  # (n,) index of the label among the classes; -1 where it matched none
    keep: np.ndarray  # (n,) bool: the label matched a class
    note: str | None  # what was dropped, when drop_unmatched=True dropped something


def match_labels(labels, classes, *, column="label", drop_unmatched=False):
    """Match each record's label to a class of the model, by value (module docstring).

    Parameters
    ----------
    labels : array-like of shape (n_records,)
        The label column of the records.
    classes : array-like of shape (n_classes,)
        The model's classes (``classes_``), in the order of its probability columns.
    column : str, default="label"
        The label column's name, for the messages.
    drop_unmatched : bool, default=False
        Drop (``keep`` False, a warning and a ``note``) the records whose label is missing or
        not a class, instead of refusing them.

    Returns
    -------
    match : LabelMatch
        ``index`` (the class of each record, -1 where none), ``keep`` and ``note``.

    Raises
    ------
    AuditInputError
        Naming the column, the missing and unseen labels and how many rows hold them (unless
        ``drop_unmatched``); or when two classes of the model have the same key (``1`` and
        ``"1"``), or no record is left.

    Examples
    --------
    >>> from sklearn_mace.report._kinds.model._inputs import match_labels
    >>> match_labels([1.0, 0.0, "1"], [0, 1]).index.tolist()
    [1, 0, 1]
    >>> match_labels([1, 2, 2], [0, 1], column="target")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sklearn_mace.report._io.AuditInputError: The label column 'target' has values that ...
    """
    class_keys = _keys(classes)
    lookup = {}
    for j, (key, value) in enumerate(
        zip(class_keys, np.asarray(classes, dtype=object), strict=True)
    ):
        if key is None or key in lookup:
            raise AuditInputError(
                f"The model's classes {_shown(classes)} cannot be told apart by value "
                f"({value!r} is missing or equals another class): relabel the model."
            )
        lookup[key] = j
    labels = np.asarray(labels, dtype=object).ravel()
    keys = _keys(labels)
    index = np.array([lookup.get(key, -1) if key is not None else -1 for key in keys], dtype=int)
    keep = index >= 0
    if keep.all():
        return LabelMatch(index, keep, None)
    missing = np.array([key is None for key in keys])
    unseen = pd.Series(labels[~keep & ~missing], dtype=object).astype(str).value_counts()
    parts = [f"{value} ({count} row{'s' if count > 1 else ''})" for value, count in unseen.items()]
    shown = ", ".join(parts[:10]) + (
        f" and {len(parts) - 10} more values" if len(parts) > 10 else ""
    )
    problems = []
    if len(unseen):
        problems.append(f"values that are not classes of the model: {shown}")
    if missing.any():
        n_missing = int(missing.sum())
        problems.append(f"{n_missing} missing label{'s' if n_missing > 1 else ''}")
    what = (
        f"The label column {column!r} has {' and '.join(problems)}; the model's classes are "
        f"{_shown(classes)}. Labels are matched by value (1, 1.0, '1' and True are the "
        "same class)"
    )
    if not drop_unmatched:
        raise AuditInputError(
            what + ": fix the labels, or drop these records (drop_unmatched_labels=True)."
        )
    if not keep.any():
        raise AuditInputError(what + ": no record would be left.")
    note = f"{int((~keep).sum())} of {len(keep)} records dropped. " + what + "."
    warnings.warn(note, AuditInputWarning, stacklevel=2)
    return LabelMatch(index, keep, note)


def check_finite_features(tables, columns, *, allow_missing=False):
    """Refuse infinite and (unless allowed) missing values in the model's numeric inputs.

    Parameters
    ----------
    tables : dict of str -> DataFrame
        The records the model is queried on, by name.
    columns : list of str
        The model's input columns.
    allow_missing : bool, default=False
        Accept missing values (for a model that handles them itself: an imputer in its
        pipeline, ``HistGradientBoostingClassifier``).

    Raises
    ------
    AuditInputError
        Naming the column, the table, how many cells and the first row.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_mace.report._kinds.model._inputs import check_finite_features
    >>> check_finite_features({"members": pd.DataFrame({"x": [1.0, np.inf]})}, ["x"])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sklearn_mace.report._io.AuditInputError: Column 'x' of the members table has 1 infinite ...
    """
    for name, frame in tables.items():
        for column in columns:
            values = frame[column]
            if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
                bad_missing = values.isna().to_numpy()
                bad_inf = np.zeros(len(values), dtype=bool)
            else:
                x = values.to_numpy(dtype=float)
                bad_missing, bad_inf = np.isnan(x), np.isinf(x)
            for bad, what in ((bad_inf, "infinite"), (bad_missing, "missing")):
                if what == "missing" and allow_missing:
                    continue
                if bad.any():
                    hint = (
                        "; if the model handles missing values itself (an imputer in its "
                        "pipeline, HistGradientBoosting), pass allow_missing=True"
                        if what == "missing"
                        else ""
                    )
                    raise AuditInputError(
                        f"Column {column!r} of the {name} table has {int(bad.sum())} {what} "
                        f"value(s) (first at row {int(np.flatnonzero(bad)[0])}): the model "
                        f"would score them silently. Fill or drop them{hint}."
                    )


def model_input_columns(model, tables, features, *, id_columns="auto", allow_missing=False):
    """The columns a loaded model reads, in its order, checked against the tables.

    The one call the model battery makes before querying a model:

    1. row ids: columns that look like row ids on the tables
       (:func:`~sklearn_mace.report._encode.find_row_id_columns`) are left out of the
       features of a model that does not name its inputs, with an
       :class:`AuditInputWarning` (``id_columns=[]`` keeps them; a list leaves out exactly
       those); a model that names a row-id column as an input gets a warning instead (it
       reads it, so it stays);
    2. the model's own check (:meth:`AuditedModel.input_columns`: named inputs present, or
       the number of features);
    3. a warning when the model reads its inputs by position (an ONNX graph with one
       unnamed input, an estimator fitted on an array) and the tables order these columns
       differently from each other: the order of ``features`` is used;
    4. :func:`check_finite_features`.

    Parameters
    ----------
    model : AuditedModel
        The loaded model.
    tables : dict of str -> DataFrame
        The records the model is queried on (members, non-members, population), by name.
    features : list of str
        Every column but the label (or the ``--columns`` chosen), in the order the model
        should get them when it does not name them.
    id_columns : "auto" or list of str, default="auto"
        See step 1.
    allow_missing : bool, default=False
        See :func:`check_finite_features`.

    Returns
    -------
    columns : list of str
        The model's input columns, in its order.

    Raises
    ------
    AuditInputError
        Missing or surplus columns, non-finite values.
    """
    features = list(features)
    if isinstance(id_columns, str):
        if id_columns != "auto":
            raise ValueError(f"id_columns must be 'auto' or a list; got {id_columns!r}.")
        ids = find_row_id_columns(tables, features)
    else:
        unknown = [c for c in id_columns if c not in features]
        if unknown:
            raise AuditInputError(
                f"id_columns= names {unknown}, which are not feature columns of "
                f"the tables ({features})."
            )
        ids = {c: "named in id_columns" for c in id_columns}
    named = model.feature_names_in_
    if named is None and ids:
        warnings.warn(
            f"Column(s) {list(ids)} look like row ids ({'; '.join(ids.values())}) and are "
            f"left out of the inputs of the model '{model.name}', which does not name its "
            "inputs. Pass id_columns=[] if the model reads them.",
            AuditInputWarning,
            stacklevel=2,
        )
        features = [c for c in features if c not in ids]
    elif named is not None and set(ids) & set(named):
        warnings.warn(
            f"The model '{model.name}' reads column(s) {sorted(set(ids) & set(named))}, which "
            "look like row ids: split between members and hold-out rows, a row id can make "
            "the model look leakier than its other inputs let it be.",
            AuditInputWarning,
            stacklevel=2,
        )
    columns = model.input_columns(features)
    if named is None:
        for name, frame in tables.items():
            order = [c for c in frame.columns if c in set(columns)]
            if order != columns:
                warnings.warn(
                    f"The model '{model.name}' reads its inputs by position, in the order "
                    f"{columns}, but the {name} table orders them {order}: the columns are "
                    "passed in the first order. Check that it is the order the model was "
                    "trained on.",
                    AuditInputWarning,
                    stacklevel=2,
                )
                break
    check_finite_features(tables, columns, allow_missing=allow_missing)
    return columns


def label_indices(labels, classes):
    """Index of each label among ``classes``, matched by value; -1 for none (no error).

    Examples
    --------
    >>> from sklearn_mace.report._kinds.model._inputs import label_indices
    >>> label_indices([1.0, "0", 7, None], [0, 1]).tolist()
    [1, 0, -1, -1]
    """
    lookup = {}
    for j, key in enumerate(_keys(classes)):
        lookup.setdefault(key, j)
    return np.array([lookup.get(k, -1) if k is not None else -1 for k in _keys(labels)], dtype=int)


def _classes(model, frame, labels):
    """The model's classes; an ONNX model names them (or has them fixed from the labels,
    :meth:`AuditedModel.resolve_classes`) only once it has run, here on one record."""
    if getattr(model, "label_only", False):  # labels only: compared by value, any order
        if model.classes_ is None:
            n_labels = len({k for k in map(label_key, np.asarray(labels, dtype=object)) if k})
            model.resolve_classes(n_labels, labels)
        return model.classes_
    if model.classes_ is None or model.session is not None:
        log_proba = model.log_proba(frame.iloc[:1])
        model.resolve_classes(log_proba.shape[1], labels)
    return model.classes_


def prepare_model_records(
    models,
    tables,
    features,
    label,
    *,
    id_columns="auto",
    drop_unmatched=False,
    allow_missing=False,
    min_rows=10,
):
    """Each model's input columns, and the records whose labels every model can score.

    For every model, :func:`model_input_columns` (row ids, the model's own columns, column
    order, non-finite values), then :func:`match_labels` on every table's labels against its
    classes: a missing label or one that is no class of the model is an input error naming
    the model, the table, the column, the values and the rows — unless ``drop_unmatched``,
    which leaves those records out of every table (with a note).

    Parameters
    ----------
    models : dict of str -> AuditedModel
    tables : dict of str -> DataFrame
        ``members``, ``non-members`` and optionally ``population``.
    features : list of str
        The feature columns (all but the label, or those chosen).
    label : str
        The label column.
    id_columns, allow_missing
        See :func:`model_input_columns`.
    drop_unmatched : bool, default=False
        See :func:`match_labels`.
    min_rows : int, default=10
        The members and non-members must keep at least this many records each.

    Returns
    -------
    tables : dict of str -> DataFrame
        The tables, without the dropped records (index reset where any was dropped).
    columns : dict of str -> list of str
        Each model's input columns, in its order.
    notes : list of str
        What was left out, for the report.
    """
    columns, keep, notes = {}, {name: None for name in tables}, []
    targets = pd.concat([tables["members"], tables["non-members"]], ignore_index=True)
    for name, model in models.items():
        columns[name] = model_input_columns(
            model, tables, features, id_columns=id_columns, allow_missing=allow_missing
        )
        classes = _classes(model, tables["members"][columns[name]], targets[label].to_numpy())
        for table, frame in tables.items():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", AuditInputWarning)  # noted below
                    match = match_labels(
                        frame[label].to_numpy(),
                        classes,
                        column=label,
                        drop_unmatched=drop_unmatched,
                    )
            except AuditInputError as exc:
                raise AuditInputError(f"Model '{name}', {table} table: {exc}") from exc
            if match.note is not None:
                notes.append(f"Model '{name}', {table} table: {match.note}")
                warnings.warn(notes[-1], AuditInputWarning, stacklevel=2)
            keep[table] = match.keep if keep[table] is None else keep[table] & match.keep
    kept = {}
    for table, frame in tables.items():
        if keep[table] is not None and not keep[table].all():
            frame = frame.loc[keep[table]].reset_index(drop=True)
            if table != "population" and len(frame) < min_rows:
                raise AuditInputError(
                    f"Too few rows for the audit: {len(frame)} {table} records are left once "
                    f"those with unmatched labels are dropped; it needs at least {min_rows}."
                )
        kept[table] = frame
    seen = [*dict.fromkeys(c for model_columns in columns.values() for c in model_columns), label]
    return check_overlapping_records(kept, seen, parameter=None), columns, notes
