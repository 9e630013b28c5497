"""Turning the input tables into one numeric feature space, and saying what was done.

The documented choice (also in the README and the report):

* numeric and boolean columns are standardized (mean 0, standard deviation 1);
  missing values are imputed with the median and counted;
* text/categorical columns with ``k <= max_categories`` distinct values are one-hot
  encoded (a missing value is its own category), scaled by ``1/√2`` so that two records in
  different categories are at distance 1, like one standard deviation of a numeric column,
  and rotated into ``k − 1`` coordinates (Helmert contrasts: the vertices of a regular
  simplex). The rotation keeps every distance and drops the direction in which the ``k``
  indicators always sum to 1, so no feature is a combination of others and the KDE
  covariances of DOMIAS stay non-singular;
* text columns whose values all parse as numbers are treated as numeric;
* dropped and reported: text columns with more distinct values (identifiers, free text —
  their distances mean nothing), date/time columns, constant columns and columns with no
  values.

All statistics (means, standard deviations, medians, categories) are computed on all input
rows together; no membership label is used, so the encoding favours no attack.
"""

import numpy as np
import pandas as pd
from scipy.linalg import helmert

from ._io import AuditInputError

__all__ = ["check_columns", "encode_tables"]


def check_columns(frames, columns=None):
    """Select the audited columns and check every table has them.

    Parameters
    ----------
    frames : dict of str -> DataFrame
        Tables keyed by what they are (e.g. ``"members"``, ``"synthetic 'leaky'"``).
    columns : list of str, default=None
        The columns to audit; default: all columns, which must then be the same in every
        table (in any order).

    Returns
    -------
    columns : list of str
    """
    names = list(frames)
    if columns is not None:
        columns = list(dict.fromkeys(columns))
        for name, frame in frames.items():
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise AuditInputError(
                    f"The {name} table lacks the requested column(s) {missing}; it has "
                    f"{list(frame.columns)}."
                )
        return columns
    first = names[0]
    reference = list(frames[first].columns)
    for name in names[1:]:
        other = set(frames[name].columns)
        only_first = [c for c in reference if c not in other]
        only_other = [c for c in frames[name].columns if c not in set(reference)]
        if only_first or only_other:
            raise AuditInputError(
                f"Mismatched columns: the {name} table lacks {only_first} and has extra "
                f"{only_other} compared with the {first} table. Pass --columns to audit a "
                "common subset."
            )
    return reference


def _numeric(series):
    """The series as float if it is numeric, boolean, or text that parses as numbers."""
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return series.astype(float)
    if pd.api.types.is_datetime64_any_dtype(series) or pd.api.types.is_timedelta64_dtype(series):
        return None
    parsed = pd.to_numeric(series, errors="coerce")
    if parsed.notna().sum() == series.notna().sum() and series.notna().any():
        return parsed.astype(float)
    return None


def encode_tables(frames, columns=None, *, max_categories=20):
    """Encode every table into the same numeric feature space (see the module docstring).

    Parameters
    ----------
    frames : dict of str -> DataFrame
        The tables, by role (``"members"``, ``"synthetic"``, …).
    columns : list of str, default=None
        See :func:`check_columns`.
    max_categories : int, default=20
        Text columns with more distinct values are dropped.

    Returns
    -------
    arrays : dict of str -> ndarray of shape (n_rows, n_features)
        The encoded tables, in the order of ``frames``.
    feature_names : list of str
        Name of each encoded feature (``city[0]`` for a one-hot column).
    column_report : DataFrame
        One row per audited column: ``column``, ``type``, ``treatment``, ``features``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_mace.report import encode_tables
    >>> members = pd.DataFrame({"age": [30, 40, 50], "city": ["a", "b", "a"]})
    >>> synthetic = pd.DataFrame({"age": [35, 45], "city": ["b", "b"]})
    >>> arrays, names, report = encode_tables({"members": members, "synthetic": synthetic})
    >>> arrays["members"].shape, arrays["synthetic"].shape, names
    ((3, 2), (2, 2), ['age', 'city[0]'])
    >>> report["treatment"].tolist()
    ['standardized', 'one-hot, 2 categories']
    """
    columns = check_columns(frames, columns)
    sizes = [len(f) for f in frames.values()]
    pooled = pd.concat([f[columns] for f in frames.values()], ignore_index=True)
    blocks, feature_names, report = [], [], []
    for column in columns:
        series = pooled[column]
        dtype = str(series.dtype)
        n_missing = int(series.isna().sum())
        values = _numeric(series)
        if series.notna().sum() == 0:
            report.append((column, dtype, "dropped: no values", 0))
            continue
        if values is not None:
            median = values.median()
            filled = values.fillna(median).to_numpy()
            std = filled.std()
            if not np.isfinite(filled).all():
                report.append((column, dtype, "dropped: infinite values", 0))
                continue
            if std == 0:
                report.append((column, dtype, "dropped: constant", 0))
                continue
            blocks.append(((filled - filled.mean()) / std)[:, None])
            feature_names.append(column)
            treatment = "standardized"
            if n_missing:
                treatment += f"; {n_missing} missing imputed with the median"
            report.append((column, dtype, treatment, 1))
            continue
        if pd.api.types.is_datetime64_any_dtype(series) or pd.api.types.is_timedelta64_dtype(
            series
        ):
            report.append((column, dtype, "dropped: date/time values are not supported", 0))
            continue
        text = series.astype("string").fillna("<missing>")
        categories = sorted(text.unique())
        if len(categories) == 1:
            report.append((column, dtype, "dropped: constant", 0))
        elif len(categories) > max_categories:
            report.append(
                (
                    column,
                    dtype,
                    f"dropped: {len(categories)} distinct text values (> {max_categories}; "
                    "identifiers or free text)",
                    0,
                )
            )
        else:
            onehot = text.to_numpy()[:, None] == np.asarray(categories)[None, :]
            contrasts = helmert(len(categories))  # (k − 1, k), orthonormal rows ⟂ ones
            blocks.append(onehot.astype(float) @ contrasts.T / np.sqrt(2.0))
            feature_names.extend(f"{column}[{j}]" for j in range(len(categories) - 1))
            report.append(
                (column, dtype, f"one-hot, {len(categories)} categories", len(categories) - 1)
            )
    column_report = pd.DataFrame(report, columns=["column", "type", "treatment", "features"])
    if not blocks:
        raise AuditInputError(
            "No usable column is left after encoding:\n" + column_report.to_string(index=False)
        )
    encoded = np.hstack(blocks)
    splits = np.cumsum(sizes)[:-1]
    arrays = dict(zip(frames, np.split(encoded, splits), strict=True))
    return arrays, feature_names, column_report
