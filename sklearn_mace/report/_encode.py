"""Turning the input tables into one numeric feature space, and saying what was done.

The tables are encoded by one scikit-learn :class:`~sklearn.compose.ColumnTransformer`,
*fitted on the union of all the tables* (members, non-members, every release, the reference)
and then applied to each table. No membership label is used, so the encoding favours no
attack; fitting on the union (rather than on the reference and the releases only) keeps
every category a member carries known to the encoder. The documented choices (also in the
README and the report's "Columns" section):

* **numeric** columns: a missing value is imputed with the median; the column is centred on
  its median and divided by its interquartile range / 1.349 (the standard deviation of a
  normal distribution, so a Gaussian column ends up with unit spread and one outlier cannot
  squeeze the others together); a column whose middle half is a single value (mostly zeros,
  like Adult's ``capital-gain``) is divided by its standard deviation instead;
* **categorical** columns (text with at most ``max_categories`` categories once the rare ones
  are merged, booleans, numbers with exactly two values): a missing value is its own category
  (``<missing>``; ``?`` stays a category of its own too). Categories rarer than
  ``min_frequency`` of all rows, or absent from one of the tables, are merged into one
  ``<other>`` category (and if that merged category is absent from a table, the next rarest
  category joins it), so that every category left occurs in every table. The categories are
  one-hot encoded, scaled by ``1/√2`` so that two records in different categories are at
  distance 1 (like one standard deviation of a numeric column), and rotated into ``k − 1``
  coordinates (Helmert contrasts, a regular simplex): no coordinate is a combination of the
  others;
* text columns whose values are all numbers are numeric; when at most 1 % of the cells of an
  otherwise numeric column are not numbers (a stray ``abc``), those cells count as missing
  and the report names them;
* **dropped and named** in the report: text columns with more than ``max_categories``
  categories after merging the rare ones, or with more than ``max_categories`` distinct values
  of which the rare ones hold most rows (identifiers, free text), date/time columns (also dates
  written as text), columns with no values, constant columns, columns constant in one table only
  (a release that collapses a column says nothing about the members through it, and a constant
  column makes every density model of that table singular), and columns that are an *exact
  function of a categorical column* on the real tables (e.g. Adult's ``education-num`` of
  ``education``): such a column is a linear combination of the other column's one-hot
  coordinates, which makes every covariance singular;
* **refused** (:class:`AuditInputError` naming the column and the tables): infinite values,
  values beyond ±1e100 (distances would overflow), and columns whose share of missing values
  differs between the tables (by more than 10 percentage points, with Fisher's exact test
  at p < 0.001): imputing them would plant an artificial difference between members and
  non-members that every attack would pick up.
"""

import numpy as np
import pandas as pd
from scipy.linalg import helmert
from scipy.stats import fisher_exact
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.utils.validation import check_is_fitted

from ._io import AuditInputError

__all__ = ["check_columns", "collinear_columns", "encode_tables"]

MISSING = "<missing>"
OTHER = "<other>"
IQR_TO_STD = 1.3489795003921634  # interquartile range of the standard normal
MAX_ABS = 1e100  # larger values overflow squared distances summed over features
STRAY_FRACTION = 0.01  # at most this share of non-numbers in a numeric column
MISSING_GAP = 0.1  # missing shares that differ by more, and significantly, are refused
MISSING_P = 1e-3
RELATIVE_CONSTANT = 1e-8  # spread in one table below this share of the pooled spread


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
    for name, frame in frames.items():
        duplicated = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
        if duplicated:
            raise AuditInputError(
                f"The {name} table has duplicated column names {duplicated}; rename them."
            )
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


# ---------------------------------------------------------------- fitted pieces
def _to_float(X):
    """Cells as floats; cells that are not numbers become NaN (counted in the report)."""
    frame = pd.DataFrame(X)
    return np.column_stack(
        [pd.to_numeric(_stripped(frame[c]), errors="coerce").to_numpy(float) for c in frame]
    )


def _stripped(series):
    if pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series):
        return series.astype(object).map(lambda v: v.strip() if isinstance(v, str) else v)
    return series


def _as_text(series, numeric):
    """Category labels: text stripped of spaces, numbers as floats, missing as ``<missing>``."""
    series = pd.Series(np.asarray(series, dtype=object).ravel())
    if numeric:
        values = pd.to_numeric(series, errors="coerce")
        return np.array([MISSING if np.isnan(v) else repr(float(v)) for v in values], object)
    return np.array(
        [MISSING if _is_missing(v) else str(v).strip() or MISSING for v in series], dtype=object
    )


def _is_missing(value):
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


class RobustScale(TransformerMixin, BaseEstimator):
    """Centre on the median; divide by IQR / 1.349, or by the std where the IQR is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.report._encode import RobustScale
    >>> X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [1000.0]])
    >>> RobustScale().fit_transform(X).round(2).ravel().tolist()  # the outlier stays apart
    [-1.35, -0.81, -0.27, 0.27, 0.81, 537.7]
    """

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        self.center_ = np.median(X, axis=0)
        q25, q75 = np.percentile(X, [25, 75], axis=0)
        iqr_scale = (q75 - q25) / IQR_TO_STD
        std = X.std(axis=0)
        scale = np.where(iqr_scale > 0, iqr_scale, std)
        self.scale_ = np.where(scale > 0, scale, 1.0)
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        check_is_fitted(self)
        return (np.asarray(X, dtype=float) - self.center_) / self.scale_

    def get_feature_names_out(self, input_features=None):
        return np.asarray(input_features, dtype=object)


class CategoryLevels(TransformerMixin, BaseEstimator):
    """Map a column's values onto its kept categories; the others become ``<other>``.

    Parameters
    ----------
    levels : list of str
        The kept categories (``<missing>`` for a missing value, ``<other>`` for the merged
        rare ones, when present).
    numeric : bool, default=False
        The column holds numbers (compared as floats, so ``1`` and ``1.0`` agree).
    column : str, default=None
        The column's name, for the error on a value with no category.

    Examples
    --------
    >>> from sklearn_mace.report._encode import CategoryLevels
    >>> CategoryLevels(["a", "<other>"]).fit_transform([["a"], ["z"]]).ravel().tolist()
    ['a', '<other>']
    """

    def __init__(self, levels, numeric=False, column=None):
        self.levels = levels
        self.numeric = numeric
        self.column = column

    def fit(self, X, y=None):
        self.n_features_in_ = 1
        return self

    def transform(self, X):
        check_is_fitted(self)
        values = _as_text(np.asarray(X, dtype=object)[:, 0], self.numeric)
        known = np.isin(values, np.asarray(self.levels, dtype=object))
        if not known.all():
            if OTHER not in self.levels:
                raise ValueError(
                    f"Column {self.column!r} has values the encoder was not fitted on: "
                    f"{sorted(set(values[~known]))[:5]}."
                )
            values = np.where(known, values, OTHER)
        return values[:, None]

    def get_feature_names_out(self, input_features=None):
        return np.asarray(input_features, dtype=object)


def _simplex(onehot):
    """One-hot rows (k columns) as vertices of a regular simplex in k − 1 coordinates at
    distance 1 from each other."""
    k = onehot.shape[1]
    return np.asarray(onehot, dtype=float) @ helmert(k).T / np.sqrt(2.0)


# ---------------------------------------------------------------- planning
def _looks_like_dates(text):
    """Most non-missing values parse as dates and contain a digit (so 'May' is a category)."""
    values = text[text != MISSING]
    if len(values) == 0 or not all(any(ch.isdigit() for ch in v) for v in values[:1000]):
        return False
    sample = pd.Series(values[:1000])
    parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    return parsed.notna().mean() >= 0.95


def _where(per_table, mask_per_table, limit=3):
    """'table row i' strings for the first cells flagged by the masks."""
    found = []
    for name, mask in mask_per_table.items():
        for row in np.flatnonzero(mask)[:limit]:
            found.append(f"{per_table[name].iloc[row]!r} in the {name} table, row {row}")
    return found[:limit]


def _missing_check(column, missing_per_table):
    """Refuse a column whose share of missing values differs between the tables."""
    rates = {n: (int(m.sum()), len(m)) for n, m in missing_per_table.items() if len(m)}
    share = {n: k / size for n, (k, size) in rates.items()}
    low, high = min(share, key=share.get), max(share, key=share.get)
    if share[high] - share[low] <= MISSING_GAP:
        return
    (k_hi, n_hi), (k_lo, n_lo) = rates[high], rates[low]
    p_value = fisher_exact([[k_hi, n_hi - k_hi], [k_lo, n_lo - k_lo]])[1]
    if p_value < MISSING_P:
        listed = ", ".join(f"{n} {s:.0%}" for n, s in share.items())
        raise AuditInputError(
            f"Column {column!r} is missing in {share[high]:.0%} of the {high} rows but "
            f"{share[low]:.0%} of the {low} rows (missing per table: {listed}; Fisher's "
            f"exact p = {p_value:.1e}). Imputing it would plant an artificial difference "
            "between the tables that every attack picks up: fill it the same way in every "
            "table, or leave it out with --columns."
        )


def _category_levels(text_per_table, min_frequency):
    """Kept categories (frequent and present in every table) and whether ``<other>`` is used."""
    counts = pd.DataFrame({n: pd.Series(t).value_counts() for n, t in text_per_table.items()})
    counts = counts.fillna(0)
    present = [n for n, t in text_per_table.items() if len(t)]
    total = counts.sum(axis=1).sort_values(ascending=False, kind="stable")
    n_rows = total.sum()
    kept = [
        c
        for c in total.index
        if total[c] >= min_frequency * n_rows and (counts.loc[c, present] > 0).all()
    ]
    merged = [c for c in total.index if c not in kept]
    while merged and kept and (counts.loc[merged, present].sum(axis=0) == 0).any():
        merged.append(kept.pop())  # the rarest kept category joins <other>
    levels = list(kept) + ([OTHER] if merged else [])
    return levels, merged, total.size


def _plan_column(column, per_table, max_categories, min_frequency):
    """How one column is encoded: ``("numeric"|"category"|None, treatment, extra)``."""
    pooled = pd.concat(list(per_table.values()), ignore_index=True)
    dtype = str(pooled.dtype)
    if pooled.notna().sum() == 0:
        return None, dtype, "dropped: no values", {}
    if pd.api.types.is_datetime64_any_dtype(pooled) or pd.api.types.is_timedelta64_dtype(pooled):
        return None, dtype, "dropped: date/time values are not supported", {}
    if pd.api.types.is_bool_dtype(pooled):
        kind, numeric, strays = "category", False, []
    else:
        numbers = {n: pd.to_numeric(_stripped(s), errors="coerce") for n, s in per_table.items()}
        given = sum(int(s.notna().sum()) for s in per_table.values())
        parsed = sum(int(v.notna().sum()) for v in numbers.values())
        strays = _where(
            per_table, {n: (s.notna() & numbers[n].isna()).to_numpy() for n, s in per_table.items()}
        )
        if parsed and given - parsed <= STRAY_FRACTION * given:
            kind, numeric = "numeric", True
        else:
            kind, numeric, strays = "category", False, []
    if kind == "numeric":
        for name, values in numbers.items():
            bad = np.isinf(values.to_numpy(float))
            if bad.any():
                raise AuditInputError(
                    f"Column {column!r} of the {name} table has infinite values "
                    f"({int(bad.sum())} cells, first at row {int(np.flatnonzero(bad)[0])}); "
                    "replace them (or leave the column out with --columns)."
                )
            huge = np.abs(values.to_numpy(float)) > MAX_ABS
            if huge.any():
                row = int(np.flatnonzero(huge)[0])
                raise AuditInputError(
                    f"Column {column!r} of the {name} table has values beyond ±{MAX_ABS:g} "
                    f"({values.iloc[row]:g} at row {row}): distances would overflow. "
                    "Rescale the column (e.g. take its log) or leave it out with --columns."
                )
        _missing_check(column, {n: v.isna().to_numpy() for n, v in numbers.items()})
        values = pd.concat(list(numbers.values()), ignore_index=True)
        distinct = values.dropna().unique()
        if distinct.size == 1 and not values.isna().any():
            return None, dtype, "dropped: constant", {}
        if distinct.size > 2:
            filled = values.fillna(values.median()).to_numpy(float)
            pooled_scale = RobustScale().fit(filled[:, None]).scale_[0]
            for name, table in numbers.items():
                own = table.dropna().to_numpy(float)
                if own.size > 1 and np.ptp(own) <= RELATIVE_CONSTANT * pooled_scale:
                    return None, dtype, f"dropped: constant in the {name} table", {}
            treatment = "numeric, robustly scaled"
            n_missing = int(values.isna().sum())
            if n_missing:
                treatment += f"; {n_missing} missing imputed with the median"
            if strays:
                treatment += "; non-numbers taken as missing: " + "; ".join(strays)
            return "numeric", dtype, treatment, {}
        kind = "category"  # two values: a binary column, encoded like a category
    text = {n: _as_text(s, numeric) for n, s in per_table.items()}
    if kind == "category" and not numeric:
        _missing_check(column, {n: t == MISSING for n, t in text.items()})
    pooled_text = np.concatenate(list(text.values()))
    distinct = np.unique(pooled_text)
    if distinct.size == 1:
        return None, dtype, "dropped: constant", {}
    if not numeric and _looks_like_dates(pooled_text):
        return None, dtype, "dropped: date/time values are not supported", {}
    levels, merged, n_distinct = _category_levels(text, min_frequency)
    # identifiers or free text: too many categories even after merging the rare ones, or
    # most rows in rare ones (a column like Adult's native-country, 41 values of which two
    # cover 92 % of the rows, is kept: its rare values merge into <other>)
    rare_share = float(np.isin(pooled_text, merged).mean()) if merged else 0.0
    if len(levels) > max_categories or (distinct.size > max_categories and rare_share > 0.5):
        return (
            None,
            dtype,
            f"dropped: {distinct.size} distinct text values ({len(levels)} "
            f"categor{'y' if len(levels) == 1 else 'ies'} after merging rare ones, at most "
            f"{max_categories} allowed, {rare_share:.0%} of the rows in rare ones; identifiers "
            "or free text)",
            {},
        )
    if len(levels) < 2:
        return None, dtype, "dropped: a single category is left in some table", {}
    treatment = f"one-hot, {n_distinct} categories"
    if numeric:
        treatment = "binary (two values), one-hot"
    if merged:
        shown = ", ".join(map(str, merged[:5])) + (", …" if len(merged) > 5 else "")
        treatment += f"; {len(merged)} rare or absent merged into {OTHER} ({shown})"
    return "category", dtype, treatment, {"levels": levels, "numeric": numeric}


def _dependent_columns(plans, real):
    """Columns that are an exact function of a kept categorical column on the real rows
    (of its values before rare ones are merged: the dropped column adds nothing to them), or
    an exact linear function of a numeric column (a copy, a change of units).

    Checked from the last column back, so of two columns that determine each other the
    later one is dropped.
    """
    codes = {}
    for column, plan in plans.items():
        if plan["kind"] == "category":  # the values before rare ones are merged
            codes[column] = _as_text(real[column].to_numpy(object), plan["numeric"])
        else:
            values = _to_float(real[[column]])[:, 0]
            codes[column] = np.where(np.isnan(values), np.nanmedian(values), values)
    frame = pd.DataFrame(codes)
    dropped = {}
    for column in reversed(list(plans)):
        for other, plan in plans.items():
            if other == column or other in dropped:
                continue
            if plan["kind"] == "category":
                if frame.groupby(other, sort=False)[column].nunique(dropna=False).max() <= 1:
                    dropped[column] = other
                    break
            elif plans[column]["kind"] == "numeric":  # a copy, or a change of units
                x, y = frame[column].to_numpy(float), frame[other].to_numpy(float)
                if x.std() > 0 and y.std() > 0 and abs(np.corrcoef(x, y)[0, 1]) > 1 - 1e-12:
                    dropped[column] = other
                    break
    return dropped


def collinear_columns(X, feature_names, *, rtol=1e-9):
    """The columns whose features are exactly linearly dependent in one encoded table.

    A table can be singular even when the union of the tables is not: in 1 000 Adult rows
    without a ``Never-worked`` record, ``workclass = ?`` and ``occupation = ?`` are the
    same rows. Density models with a full covariance cannot be fitted on such a table; this
    names the columns to blame (for an error message or a note).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features)
        One encoded table.
    feature_names : list of str
        As returned by :func:`encode_tables` (``c[j]`` belongs to column ``c``).
    rtol : float, default=1e-9
        Singular values below ``rtol`` times the largest count as zero.

    Returns
    -------
    columns : list of str
        Columns with weight in a null direction of the centred table, strongest first;
        empty when the table has full column rank.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.report._encode import collinear_columns
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> sorted(collinear_columns(np.c_[X, X[:, 0] - X[:, 1]], ["a", "b", "c[0]"]))
    ['a', 'b', 'c']
    """
    X = np.asarray(X, dtype=float)
    if X.shape[0] < 2 or X.shape[1] == 0:
        return []
    _, singular, vt = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    null = vt[singular <= rtol * singular.max()] if singular.max() > 0 else vt
    if X.shape[0] <= X.shape[1]:
        null = np.vstack([null, vt[X.shape[0] - 1 :]])
    if len(null) == 0:
        return []
    weight = np.abs(null).max(axis=0)
    named = []
    for j in np.argsort(-weight, kind="stable"):
        if weight[j] < 1e-6:
            break
        column = (
            feature_names[j].rsplit("[", 1)[0]
            if feature_names[j].endswith("]")
            else feature_names[j]
        )
        if column not in named:
            named.append(column)
    return named


def encode_tables(
    frames,
    columns=None,
    *,
    max_categories=20,
    min_frequency=0.01,
    real=None,
    return_encoder=False,
):
    """Encode every table into the same numeric feature space (see the module docstring).

    One :class:`~sklearn.compose.ColumnTransformer` is fitted on the union of the tables and
    then transforms each table.

    Parameters
    ----------
    frames : dict of str -> DataFrame
        The tables, keyed by what they are (the keys name the tables in errors).
    columns : list of str, default=None
        See :func:`check_columns`.
    max_categories : int, default=20
        Text columns with more categories after merging the rare ones (or most rows in rare
        ones) are dropped as identifiers or free text.
    min_frequency : float in [0, 1), default=0.01
        Categories rarer than this share of all rows are merged into ``<other>``.
    real : list of str, default=None
        Keys of the tables of real records, on which exactly dependent columns are found;
        default: every key that does not start with ``"synthetic"`` (all keys if none).
    return_encoder : bool, default=False
        Also return the fitted ``ColumnTransformer`` (it transforms a new DataFrame with the
        kept columns into the same feature space).

    Returns
    -------
    arrays : dict of str -> ndarray of shape (n_rows, n_features)
        The encoded tables, in the order of ``frames``.
    feature_names : list of str
        A numeric column keeps its name; a categorical column ``c`` with ``k`` categories
        gives ``c[0]`` … ``c[k-2]``.
    column_report : DataFrame
        One row per audited column: ``column``, ``type``, ``treatment``, ``features``
        (0 for a dropped column; the treatment says why). ``column_report.attrs
        ["collinear"]`` maps a table to the columns that are exactly linearly dependent in
        it alone (:func:`collinear_columns`), for tables where some are.
    encoder : ColumnTransformer
        Only with ``return_encoder=True``.

    Raises
    ------
    AuditInputError
        Naming the column (and table) for infinite or overflowing values, missing shares
        that differ between tables, duplicated column names, or no usable column.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_mace.report import encode_tables
    >>> a = pd.DataFrame({"age": [30, 41, 52, 25], "edu": ["BA", "MA", "BA", "PhD"],
    ...                   "edu_years": [16, 18, 16, 21]})
    >>> b = pd.DataFrame({"age": [33, 60, 47, 38], "edu": ["MA", "BA", "PhD", "MA"],
    ...                   "edu_years": [18, 16, 21, 18]})
    >>> arrays, names, report = encode_tables({"members": a, "non-members": b})
    >>> names
    ['age', 'edu[0]', 'edu[1]']
    >>> report.loc[2, "treatment"]
    "dropped: an exact function of 'edu' on the real tables"
    >>> arrays["members"].shape
    (4, 3)
    """
    columns = check_columns(frames, columns)
    if isinstance(min_frequency, bool) or not 0.0 <= float(min_frequency) < 1.0:
        raise ValueError(f"min_frequency must be in [0, 1); got {min_frequency!r}.")
    plans, report = {}, {}
    for column in columns:
        per_table = {n: f[column].reset_index(drop=True) for n, f in frames.items()}
        kind, dtype, treatment, extra = _plan_column(
            column, per_table, max_categories, min_frequency
        )
        report[column] = [column, dtype, treatment, 0]
        if kind is not None:
            plans[column] = {"kind": kind, **extra}
    if real is None:
        real = [n for n in frames if not str(n).startswith("synthetic")] or list(frames)
    if plans:
        union_real = pd.concat([frames[n][list(plans)] for n in real], ignore_index=True)
        for column, source in _dependent_columns(plans, union_real).items():
            del plans[column]
            how = "an exact function of" if plans[source]["kind"] == "category" else "linear in"
            report[column][2] = f"dropped: {how} {source!r} on the real tables"
    if not plans:
        column_report = pd.DataFrame(
            list(report.values()), columns=["column", "type", "treatment", "features"]
        )
        raise AuditInputError(
            "No usable column is left after encoding:\n" + column_report.to_string(index=False)
        )
    transformers, feature_names = [], []
    for column, plan in plans.items():
        if plan["kind"] == "numeric":
            steps = make_pipeline(
                FunctionTransformer(_to_float, feature_names_out="one-to-one"),
                SimpleImputer(strategy="median"),
                RobustScale(),
            )
            feature_names.append(column)
            report[column][3] = 1
        else:
            levels = plan["levels"]
            steps = make_pipeline(
                CategoryLevels(levels, plan["numeric"], column),
                OneHotEncoder(categories=[levels], sparse_output=False, dtype=float),
                FunctionTransformer(_simplex),
            )
            feature_names.extend(f"{column}[{j}]" for j in range(len(levels) - 1))
            report[column][3] = len(levels) - 1
        transformers.append((str(column), steps, [column]))
    encoder = ColumnTransformer(transformers, remainder="drop", verbose_feature_names_out=False)
    kept = list(plans)
    encoder.fit(pd.concat([f[kept] for f in frames.values()], ignore_index=True))
    arrays = {}
    for name, frame in frames.items():
        encoded = np.asarray(encoder.transform(frame[kept]), dtype=float)
        scale = np.abs(encoded).max(axis=0) if len(encoded) else np.zeros(len(feature_names))
        bad = ~np.isfinite(scale) | (scale > MAX_ABS)
        if bad.any():
            raise AuditInputError(
                f"Column {feature_names[int(np.flatnonzero(bad)[0])]!r} of the {name} table "
                "spans too many orders of magnitude to measure distances on; rescale it "
                "(e.g. take its log) or leave it out with --columns."
            )
        arrays[name] = encoded
    column_report = pd.DataFrame(
        list(report.values()), columns=["column", "type", "treatment", "features"]
    )
    # tables singular on their own (e.g. two categories that coincide in a small table)
    column_report.attrs["collinear"] = {
        name: found
        for name, array in arrays.items()
        if (found := collinear_columns(array, feature_names))
    }
    if return_encoder:
        return arrays, feature_names, column_report, encoder
    return arrays, feature_names, column_report
