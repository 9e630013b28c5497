"""Turning the input tables into one numeric feature space, and saying what was done.

The tables are encoded by one scikit-learn :class:`~sklearn.compose.ColumnTransformer`,
*fitted on the real tables only* (members, non-members, reference: the records of the
population) and then applied to every table, the releases included. No membership label is
used, so the encoding favours no attack, and no release takes part in it, so **adding a
release to an audit never changes another release's encoding** (nor its numbers). The
documented choices (also in the README and the report's "Columns" section):

* **numeric** columns: a missing value is imputed with the median of the real tables; the
  column is centred on that median and divided by its interquartile range / 1.349 (the
  standard deviation of a normal distribution, so a Gaussian column ends up with unit spread
  and one outlier cannot squeeze the others together); a column whose middle half is a single
  value (mostly zeros, like Adult's ``capital-gain``) is divided by its standard deviation
  instead. A release's cells that are not numbers count as missing (a note gives their count
  and examples) when they are at most 1 % of its values; more is an input error naming the
  column, the release, the share and three examples, unless ``allow_unparsed`` names the
  column (a release written ``"14.25 cm"`` filled with the median would hide what it holds);
* **categorical** columns (text with at most ``max_categories`` categories once the rare ones
  are merged, booleans, numbers with exactly two values, and integer codes: at most
  ``MAX_CODES`` integer values, each held by ``ROWS_PER_CODE`` real rows on average, such as a
  class label 0/1/2, which a scale would order and space): a missing value is its own category
  (``<missing>``; ``?`` stays a category of its own too). Categories rarer than
  ``min_frequency`` of the real rows are merged into one ``<other>`` category. A category that
  a release lacks stays a category (its absence is information about the release); a value of
  a release that the real tables do not have maps to ``<other>`` — to its vertex when the real
  tables have rare categories, else to the centre of the categories' simplex (no new
  coordinate), and a note gives the share. The categories are one-hot encoded, scaled by
  ``1/√2`` so that two records in different categories are at distance 1 (like one standard
  deviation of a numeric column), and rotated into ``k − 1`` coordinates (Helmert contrasts,
  a regular simplex): no coordinate is a combination of the others;
* text columns whose values are all numbers are numeric; when at most 1 % of the cells of an
  otherwise numeric column are not numbers (a stray ``abc``), those cells count as missing
  and the report names them;
* **dropped and named** in the report (with the tables and the share that caused it): text
  columns with more than ``max_categories`` categories after merging the rare ones, or with
  more than ``max_categories`` distinct values of which the rare ones hold most rows
  (identifiers, free text), **row ids** (numbers that are all distinct integers over a dense
  range or under an id-like name, or an evenly spaced sequence: a warning names them,
  ``id_columns=[]`` keeps them), date/time columns (also dates written as text), columns with
  no values, constant columns, columns constant in one real table, and columns that are an
  *exact function of a categorical column* on the real tables (e.g. Adult's ``education-num``
  of ``education``): such a column is a linear combination of the other column's one-hot
  coordinates, which makes every covariance singular;
* **refused** (:class:`AuditInputError` naming the column and the tables): infinite values,
  values beyond ±1e100 (distances would overflow), columns whose share of missing values
  differs between the real tables (by more than 10 percentage points, with Fisher's exact
  test at p < 0.001): imputing them would plant an artificial difference between members and
  non-members that every attack would pick up; and tables in which most columns would be
  dropped as text, dates or empty (a misread file, e.g. decimal commas: see
  :func:`~sklearn_mace.report.read_table`).

Every step is linear (or ``n log n``) in the rows and in the columns: values are matched to
categories by hashing (pandas), never by element-wise ``np.isin`` on text; the numeric columns
are scaled in one vectorised block and the categorical ones in another; exact dependences
between columns are checked only for candidate pairs (:func:`_dependence_candidates`), never
for every pair. Tables with more than ``max_columns`` (5 000) columns are refused with a
message; ``benchmarks/bench_wide_tables.py`` measures the time per column.
"""

import re
import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from scipy.linalg import helmert
from scipy.stats import fisher_exact
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ._io import AuditInputError, AuditInputWarning

__all__ = ["check_columns", "collinear_columns", "encode_tables", "find_row_id_columns"]

MISSING = "<missing>"
OTHER = "<other>"
IQR_TO_STD = 1.3489795003921634  # interquartile range of the standard normal
MAX_ABS = 1e100  # larger values overflow squared distances summed over features
STRAY_FRACTION = 0.01  # at most this share of non-numbers in a numeric column
MAX_CODES = 10  # at most this many integer values, ...
ROWS_PER_CODE = 5  # ... each held by this many real rows on average: class codes, one-hot
MISSING_GAP = 0.1  # missing shares that differ by more, and significantly, are refused
MISSING_P = 1e-3
RELATIVE_CONSTANT = 1e-8  # spread in one table below this share of the pooled spread
ROW_BLOCK = 20_000  # rows encoded (and summed into the Gram matrix) at a time
MIN_ID_ROWS = 20  # fewer distinct values say nothing about being a row id
ID_DENSITY = 0.1  # all-distinct integers using at least this share of their range
DEPENDENCE_SAMPLE = 1024  # rows whose same-category pairs rule out most coarser columns
DEPENDENCE_PROBES = 64  # such pairs per categorical column
MAX_COLUMNS = 5_000  # audited columns encoded at most (max_columns=)
_ID_WORDS = {"id", "ids", "idx", "index", "key", "row", "record", "uuid", "no", "nr"}
#: drops that suggest a misread table (counted against ``max_dropped_share``)
_MISREAD = ("distinct text values", "date/time", "no values")
_NESTED = (list, tuple, dict, set, np.ndarray)


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
            present = set(frame.columns)
            missing = [c for c in columns if c not in present]
            if missing:
                raise AuditInputError(
                    f"The {name} table lacks the requested column(s) {missing}; it has "
                    f"{list(frame.columns)}."
                )
        return columns
    first = names[0]
    reference = list(frames[first].columns)
    known = set(reference)  # once: a set per column made this quadratic in the columns
    for name in names[1:]:
        other = set(frames[name].columns)
        only_first = [c for c in reference if c not in other]
        only_other = [c for c in frames[name].columns if c not in known]
        if only_first or only_other:
            raise AuditInputError(
                f"Mismatched columns: the {name} table lacks {only_first} and has extra "
                f"{only_other} compared with the {first} table. Pass columns= to audit a "
                "common subset."
            )
    return reference


# ---------------------------------------------------------------- cells
def _strip(value):
    return value.strip() if isinstance(value, str) else value


def _distinct(values):
    """``(codes, distinct values)`` of a column, by hashing: work per distinct value, not per
    cell (missing cells get code -1). A pandas column is factorized as it is stored (Arrow
    strings by dictionary encoding), anything else as objects."""
    if isinstance(values, pd.Series):
        codes, distinct = values.factorize(use_na_sentinel=True)
        return np.asarray(codes), np.asarray(distinct, dtype=object)
    return pd.factorize(np.asarray(values, dtype=object).ravel(), use_na_sentinel=True)


def _numbers(series):
    """The cells as float64; cells that are not numbers become NaN."""
    if not isinstance(series, pd.Series):
        series = pd.Series(series)
    if pd.api.types.is_bool_dtype(series):
        return pd.Series(np.full(len(series), np.nan))
    if pd.api.types.is_numeric_dtype(series):  # the fast path: no parsing, no index
        return pd.Series(series.to_numpy(dtype=float, na_value=np.nan))
    series = series.reset_index(drop=True)
    if not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
        return pd.Series(np.full(len(series), np.nan))
    codes, distinct = _distinct(series)
    parsed = pd.to_numeric(
        pd.Series([_strip(v) for v in distinct], dtype=object), errors="coerce"
    ).to_numpy(dtype=float)
    return pd.Series(np.where(codes >= 0, np.r_[parsed, np.nan][codes], np.nan))


def _to_float(X):
    """Cells as floats; cells that are not numbers become NaN (counted in the report)."""
    frame = pd.DataFrame(X)
    return np.column_stack([_numbers(frame[c]).to_numpy() for c in frame])


def _label(value):
    """One cell as a category label (``<missing>`` for a missing or blank cell)."""
    if isinstance(value, str):
        return value.strip() or MISSING
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return MISSING
    return str(value).strip() or MISSING


def _distinct_labels(values, numeric):
    """``(codes, labels)``: each cell's index among the distinct labels (``labels[codes]`` is
    the column as text, :func:`_as_text`). Labels are made once per distinct value
    (hashing), so the cost is linear in the cells."""
    if isinstance(values, pd.DataFrame):
        values = values.iloc[:, 0]
    if not isinstance(values, pd.Series):
        values = pd.Series(np.asarray(values, dtype=object).ravel(), dtype=object)
    values = values.reset_index(drop=True)
    if numeric:
        codes, distinct = pd.factorize(_numbers(values).to_numpy(), use_na_sentinel=True)
        labels = [repr(float(v)) for v in distinct]
    else:
        codes, distinct = _distinct(values)
        labels = [_label(v) for v in distinct]
    return codes, np.array(labels + [MISSING], dtype=object)  # code -1: missing


def _as_text(values, numeric):
    """Category labels: text stripped of spaces, numbers as floats, missing as ``<missing>``.

    Numbers print as Python floats print (``1`` and ``1.0`` give ``"1.0"``).
    """
    codes, labels = _distinct_labels(values, numeric)
    return labels[codes]


def _category_codes(values, numeric, levels):
    """Index of each cell's label among ``levels`` (-1 for none), one lookup per distinct
    value."""
    codes, labels = _distinct_labels(values, numeric)
    where = {level: i for i, level in enumerate(levels)}
    return np.array([where.get(label, -1) for label in labels], dtype=np.intp)[codes]


# ---------------------------------------------------------------- fitted pieces
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


class CategorySimplex(TransformerMixin, BaseEstimator):
    """A column's categories as the vertices of a regular simplex, 1 apart, in ``k − 1``
    coordinates.

    A value among ``levels`` goes to its vertex; any other value to the ``<other>`` vertex
    when ``<other>`` is a level, else to the centre of the simplex (equally far from every
    category, and no new coordinate). Values are matched by hashing.

    Parameters
    ----------
    levels : list of str
        The kept categories (``<missing>`` for a missing value, ``<other>`` for the merged
        rare ones, when present).
    numeric : bool, default=False
        The column holds numbers (compared as floats, so ``1`` and ``1.0`` agree).
    column : str, default=None
        The column's name, for the feature names ``column[j]``.

    Examples
    --------
    >>> from sklearn_mace.report._encode import CategorySimplex
    >>> X = CategorySimplex(["a", "b", "<other>"]).fit_transform([["a"], ["b"], ["zz"]])
    >>> import numpy as np
    >>> np.linalg.norm(X[:, None] - X[None], axis=-1).round(6).tolist()  # 1 apart
    [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    """

    def __init__(self, levels, numeric=False, column=None):
        self.levels = levels
        self.numeric = numeric
        self.column = column

    def fit(self, X, y=None):
        self.n_features_in_ = 1
        k = len(self.levels)
        # vertex j of the simplex: column j of the Helmert matrix, over √2 (1 apart)
        self.vertices_ = helmert(k).T / np.sqrt(2.0)
        return self

    def codes(self, X):
        """Index of each value among ``levels``; ``-1`` for a value of no category."""
        codes = _category_codes(X, self.numeric, self.levels)
        if OTHER in self.levels:
            codes[codes < 0] = self.levels.index(OTHER)
        return codes

    def transform(self, X):
        check_is_fitted(self)
        codes = self.codes(X)
        out = self.vertices_[np.maximum(codes, 0)]
        out[codes < 0] = 0.0  # the centre of the simplex
        return out

    def get_feature_names_out(self, input_features=None):
        name = self.column if input_features is None else input_features[0]
        return np.asarray([f"{name}[{j}]" for j in range(len(self.levels) - 1)], dtype=object)


class CategoryColumns(TransformerMixin, BaseEstimator):
    """Several categorical columns, each by its :class:`CategorySimplex`, side by side.

    Parameters
    ----------
    simplices : list of CategorySimplex
        One per input column, in order.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_mace.report._encode import CategoryColumns, CategorySimplex
    >>> block = CategoryColumns([CategorySimplex(["a", "b"]), CategorySimplex(["x", "y", "z"])])
    >>> block.fit_transform(pd.DataFrame({"c": ["a", "b"], "d": ["x", "z"]})).shape
    (2, 3)
    """

    def __init__(self, simplices):
        self.simplices = simplices

    def fit(self, X, y=None):
        self.simplices_ = [clone(s).fit(None) for s in self.simplices]
        self.n_features_in_ = len(self.simplices)
        return self

    def transform(self, X):
        check_is_fitted(self)
        frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
        widths = [len(s.levels) - 1 for s in self.simplices_]
        out = np.empty((len(frame), sum(widths)))
        start = 0
        for j, (simplex, width) in enumerate(zip(self.simplices_, widths, strict=True)):
            out[:, start : start + width] = simplex.transform(frame.iloc[:, j])
            start += width
        return out


# ---------------------------------------------------------------- row ids
def _row_id_reason(column, values):
    """Why the pooled ``values`` of a column look like row ids, or None."""
    if len(values) < MIN_ID_ROWS or _numbers(values.iloc[:100]).isna().any():
        return None
    x = _numbers(values).to_numpy()
    if np.isnan(x).any() or not np.isfinite(x).all():
        return None
    ordered = np.sort(x)
    steps = np.diff(ordered)
    if (steps == 0).any():  # not all distinct
        return None
    if steps.size and steps[0] > 0 and np.allclose(steps, steps[0], rtol=1e-9, atol=0):
        return (
            f"looks like a row id: its {x.size} values form an evenly spaced sequence "
            f"({ordered[0]:g}, {ordered[1]:g}, …, {ordered[-1]:g})"
        )
    if not np.all(x == np.round(x)):
        return None
    dense = x.size >= ID_DENSITY * (ordered[-1] - ordered[0] + 1)
    words = {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", str(column))}
    if dense or words & _ID_WORDS:
        why = "a dense range" if dense else "an id-like name"
        return (
            f"looks like a row id: its {x.size} values are all distinct integers "
            f"({ordered[0]:g} to {ordered[-1]:g}, {why})"
        )
    return None


def find_row_id_columns(frames, columns=None):
    """The columns that look like row ids on the real tables, with the reason.

    A row id says which row a record is, not what it is; split between members and hold-out
    rows it separates them perfectly and fakes a leak. A column looks like one when its
    values, pooled over ``frames``, are numbers and either form an evenly spaced sequence
    (``1001, 1002, …``, in any order) or are all distinct integers that fill at least 10 %
    of their range or sit under an id-like name (``id``, ``patient_id``, ``index``, ``key``,
    ``row``, ``record``, ``no``, …). Text identifiers are left to the encoder (many distinct
    values: dropped as identifiers or free text).

    Parameters
    ----------
    frames : dict of str -> DataFrame
        The real tables (members, non-members, reference; for a model audit, its targets).
    columns : list of str, default=None
        The columns to check; default: those of the first table.

    Returns
    -------
    reasons : dict of str -> str
        Column -> why it looks like a row id, in the order of ``columns``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_mace.report._encode import find_row_id_columns
    >>> members = pd.DataFrame({"patient": range(0, 50), "age": [30, 40] * 25})
    >>> holdout = pd.DataFrame({"patient": range(50, 100), "age": [35, 45] * 25})
    >>> find_row_id_columns({"members": members, "non-members": holdout})
    {'patient': 'looks like a row id: its 100 values form an evenly spaced sequence (0, 1, …, 99)'}
    """
    frames = dict(frames)
    if columns is None:
        columns = list(next(iter(frames.values())).columns)
    reasons = {}
    union = pd.concat([f[list(columns)] for f in frames.values()], ignore_index=True)
    for column in columns:
        pooled = union[column]
        if pd.api.types.is_bool_dtype(pooled) or not (
            pd.api.types.is_numeric_dtype(pooled)
            or pd.api.types.is_object_dtype(pooled)
            or pd.api.types.is_string_dtype(pooled)
        ):
            continue
        reason = _row_id_reason(column, pooled)
        if reason:
            reasons[column] = reason
    return reasons


def _id_columns(real_frames, columns, id_columns):
    """``{column: reason}`` of the row-id columns to drop (see :func:`encode_tables`)."""
    if isinstance(id_columns, str):
        if id_columns != "auto":
            raise ValueError(f"id_columns must be 'auto' or a list of columns; got {id_columns!r}.")
        found = find_row_id_columns(real_frames, columns)
        for column, reason in found.items():
            warnings.warn(
                f"Column {column!r} {reason}: it was dropped, as a row id says which row a "
                "record is, not what it is (split between members and hold-out rows it fakes "
                "a leak). Pass id_columns=[] to keep it.",
                AuditInputWarning,
                stacklevel=3,
            )
        return found
    unknown = [c for c in id_columns if c not in columns]
    if unknown:
        raise AuditInputError(f"id_columns= names {unknown}, which are not audited columns.")
    return {c: "a row id (named in id_columns)" for c in id_columns}


def _nested_columns(frames, columns):
    """``{column: reason}`` of the columns holding lists, dicts or arrays (a nested Parquet
    column, a DataFrame built from JSON) in any table: they have no distance, so they are
    dropped with an :class:`AuditInputWarning`."""
    nested = {}
    for column in columns:
        for name, frame in frames.items():
            values = frame[column]
            if values.dtype != object:
                continue
            found = next((v for v in values.to_numpy() if isinstance(v, _NESTED)), None)
            if found is not None:
                nested[column] = f"nested values ({type(found).__name__} in the {name} table)"
                warnings.warn(
                    f"Column {column!r} holds {type(found).__name__} values in the {name} "
                    "table: nested values have no distance to audit, so it was dropped.",
                    AuditInputWarning,
                    stacklevel=3,
                )
                break
    return nested


# ---------------------------------------------------------------- planning
def _looks_like_dates(text):
    """Most distinct non-missing values parse as dates and contain a digit (so 'May' is a
    category)."""
    values = pd.unique(text[text != MISSING])[:1000]  # distinct values: parsed once each
    if len(values) == 0 or not all(any(ch.isdigit() for ch in v) for v in values):
        return False
    head = pd.to_datetime(pd.Series(values[:20]), errors="coerce", format="mixed")
    if head.notna().mean() < 0.95:  # a quick no: most categories are not dates
        return False
    parsed = pd.to_datetime(pd.Series(values), errors="coerce", format="mixed")
    return parsed.notna().mean() >= 0.95


def _where(per_table, mask_per_table, limit=3):
    """'table row i' strings for the first cells flagged by the masks."""
    found = []
    for name, mask in mask_per_table.items():
        for row in np.flatnonzero(mask)[:limit]:
            found.append(f"{per_table[name].iloc[row]!r} in the {name} table, row {row}")
    return found[:limit]


def _missing_check(column, missing_per_table):
    """Refuse a column whose share of missing values differs between the real tables."""
    rates = {n: (int(m.sum()), len(m)) for n, m in missing_per_table.items() if len(m)}
    if len(rates) < 2:
        return
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
            "table, or leave it out of columns=."
        )


def _category_levels(pooled_text, min_frequency):
    """Kept categories (at least ``min_frequency`` of the real rows) and the merged rare ones."""
    codes, uniques = pd.factorize(np.asarray(pooled_text, dtype=object))  # first seen first
    counts = pd.Series(
        np.bincount(codes, minlength=len(uniques)), index=pd.Index(uniques, dtype=object)
    )
    counts = counts.sort_values(ascending=False, kind="stable")
    kept = counts.index[counts >= min_frequency * counts.sum()].tolist()
    merged = counts.index[counts < min_frequency * counts.sum()].tolist()
    levels = list(kept) + ([OTHER] if merged else [])
    return levels, merged, counts


def _check_values(column, numbers_per_table):
    """Refuse infinite values and values beyond ±MAX_ABS, naming the column and the table."""
    for name, values in numbers_per_table.items():
        x = values.to_numpy(float)
        bad = np.isinf(x)
        if bad.any():
            raise AuditInputError(
                f"Column {column!r} of the {name} table has infinite values "
                f"({int(bad.sum())} cells, first at row {int(np.flatnonzero(bad)[0])}); "
                "replace them (or leave the column out of columns=)."
            )
        huge = np.abs(x) > MAX_ABS
        if huge.any():
            row = int(np.flatnonzero(huge)[0])
            raise AuditInputError(
                f"Column {column!r} of the {name} table has values beyond ±{MAX_ABS:g} "
                f"({x[row]:g} at row {row}): distances would overflow. "
                "Rescale the column (e.g. take its log) or leave it out of columns=."
            )


def _plan_column(column, per_table, max_categories, min_frequency):
    """How one column is encoded, from the real tables only: ``(kind, dtype, treatment,
    extra)`` with kind ``"numeric"``, ``"category"`` or None (dropped)."""
    pooled = pd.concat(list(per_table.values()), ignore_index=True)
    dtype = str(pooled.dtype)
    if pooled.notna().sum() == 0:
        return None, dtype, f"dropped: no values in the real tables ({', '.join(per_table)})", {}
    if pd.api.types.is_datetime64_any_dtype(pooled) or pd.api.types.is_timedelta64_dtype(pooled):
        return None, dtype, "dropped: date/time values are not supported", {}
    numbers, strays = ({}, []) if pd.api.types.is_bool_dtype(pooled) else _parse_numbers(per_table)
    if numbers:
        plan = _numeric_plan(column, dtype, numbers, strays)
        if plan is not None:
            return plan
    return _category_plan(column, dtype, per_table, bool(numbers), max_categories, min_frequency)


def _parse_numbers(per_table):
    """``({table: numbers}, strays)`` when the column is numeric (at most ``STRAY_FRACTION``
    of its values are not numbers; the strays name where they are), else ``({}, [])``."""
    if all(pd.api.types.is_numeric_dtype(s) for s in per_table.values()):  # nothing to parse
        numbers = {n: _numbers(s) for n, s in per_table.items()}
        return (numbers, []) if any(v.notna().any() for v in numbers.values()) else ({}, [])
    given = sum(int(s.notna().sum()) for s in per_table.values())
    # text columns fail on their first cells: a lower bound on the non-numbers decides
    head = sum(int(_numbers(s.dropna().iloc[:2000]).isna().sum()) for s in per_table.values())
    if head > STRAY_FRACTION * given:
        return {}, []
    numbers = {n: _numbers(s) for n, s in per_table.items()}
    parsed = sum(int(v.notna().sum()) for v in numbers.values())
    if not parsed or given - parsed > STRAY_FRACTION * given:
        return {}, []
    strays = _where(
        per_table, {n: (s.notna() & numbers[n].isna()).to_numpy() for n, s in per_table.items()}
    )
    return numbers, strays


def _integer_codes(distinct, n_present):
    """Whether a numeric column's values look like class codes (a label 0/1/2): few integers,
    each repeated. Scaled as a number, class 2 would lie twice as far from class 0 as class 1
    does; one-hot puts every two classes at distance 1."""
    return (
        distinct.size <= MAX_CODES
        and n_present >= ROWS_PER_CODE * distinct.size
        and np.array_equal(distinct, np.round(distinct))
    )


def _numeric_plan(column, dtype, numbers, strays):
    """The plan of a numeric column, or None for a binary one (encoded like a category)."""
    _check_values(column, numbers)
    arrays = {n: v.to_numpy(dtype=float) for n, v in numbers.items()}
    _missing_check(column, {n: np.isnan(x) for n, x in arrays.items()})
    values = np.concatenate(list(arrays.values()))
    missing = np.isnan(values)
    present = values[~missing]
    distinct = np.unique(present)
    if distinct.size == 1 and not missing.any():
        return None, dtype, "dropped: constant", {}
    if distinct.size <= 2 or _integer_codes(distinct, present.size):
        return None
    filled = np.where(missing, np.median(present), values)
    pooled_scale = RobustScale().fit(filled[:, None]).scale_[0]
    for name, x in arrays.items():
        own = x[~np.isnan(x)]
        if own.size > 1 and np.ptp(own) <= RELATIVE_CONSTANT * pooled_scale:
            return None, dtype, f"dropped: constant in the {name} table", {}
    treatment = "numeric, robustly scaled"
    n_missing = int(missing.sum())
    if n_missing:
        treatment += f"; {n_missing} missing imputed with the median"
    if strays:
        treatment += "; non-numbers taken as missing: " + "; ".join(strays)
    return "numeric", dtype, treatment, {}


def _category_plan(column, dtype, per_table, numeric, max_categories, min_frequency):
    """The plan of a categorical (or binary numeric) column, or why it is dropped."""
    names = ", ".join(per_table)
    text = {n: _as_text(s, numeric) for n, s in per_table.items()}
    if not numeric:
        _missing_check(column, {n: t == MISSING for n, t in text.items()})
    pooled_text = np.concatenate(list(text.values()))
    levels, merged, counts = _category_levels(pooled_text, min_frequency)
    if counts.size == 1:
        return None, dtype, "dropped: constant", {}
    if not numeric and _looks_like_dates(pooled_text):
        return None, dtype, "dropped: date/time values are not supported", {}
    # identifiers or free text: too many categories even after merging the rare ones, or
    # most rows in rare ones (a column like Adult's native-country, 41 values of which two
    # cover 92 % of the rows, is kept: its rare values merge into <other>)
    rare_share = float(counts[merged].sum() / counts.sum()) if merged else 0.0
    if len(levels) > max_categories or (counts.size > max_categories and rare_share > 0.5):
        return (
            None,
            dtype,
            f"dropped: {counts.size} distinct text values in the real tables ({names}); "
            f"{len(levels)} categor{'y' if len(levels) == 1 else 'ies'} after merging those "
            f"rarer than {min_frequency:.0%} of their rows (at most {max_categories} allowed), "
            f"{rare_share:.0%} of their rows in rare ones: identifiers or free text",
            {},
        )
    if len(levels) < 2:
        top = counts.index[0]
        return (
            None,
            dtype,
            f"dropped: a single category is left in the real tables ({names}): {top!r} "
            f"covers {counts.iloc[0] / counts.sum():.0%} of their rows",
            {},
        )
    n_values = counts.size - int(MISSING in counts.index)  # <missing> is no integer value
    if not numeric:
        treatment = f"one-hot, {counts.size} categories"
    elif n_values == 2:
        treatment = "binary (two values), one-hot"
    else:
        treatment = f"{n_values} integer values taken as classes, one-hot"
    if merged:
        shown = ", ".join(map(str, merged[:5])) + (", …" if len(merged) > 5 else "")
        treatment += (
            f"; {len(merged)} rarer than {min_frequency:.0%} of the real rows "
            f"({rare_share:.1%} of them) merged into {OTHER} ({shown})"
        )
    return "category", dtype, treatment, {"levels": levels, "numeric": numeric, "merged": merged}


def _dependent_columns(plans, real):
    """Columns that are an exact function of a kept categorical column on the real rows
    (of its values before rare ones are merged: the dropped column adds nothing to them), or
    an exact linear function of a numeric column (a copy, a change of units).

    Checked from the last column back, so of two columns that determine each other the
    later one is dropped. Near-linear in the rows and the columns: values are factorized
    once, a column with more distinct values than another cannot be a function of it, and
    only candidate pairs are checked exactly (:func:`_dependence_candidates`: equal
    partitions by hashing, coarser columns through a sample of rows, linear copies through a
    sorted random projection) — never every pair of columns.
    """
    codes, numbers, n_distinct = {}, {}, {}
    for column, plan in plans.items():
        if plan["kind"] == "category":  # the values before rare ones are merged
            text = _as_text(real[column], plan["numeric"])
            codes[column], uniques = pd.factorize(text)
        else:
            values = _numbers(real[column]).to_numpy()
            numbers[column] = np.where(np.isnan(values), np.nanmedian(values), values)
            codes[column], uniques = pd.factorize(numbers[column])
        n_distinct[column] = len(uniques)
    candidates = _dependence_candidates(plans, codes, numbers, n_distinct)
    position = {column: i for i, column in enumerate(plans)}
    dropped = {}
    for column in reversed(list(plans)):
        for other in sorted(candidates.get(column, ()), key=position.get):
            if other == column or other in dropped:
                continue
            if plans[other]["kind"] == "category":
                if n_distinct[column] > n_distinct[other]:
                    continue
                pairs = codes[other].astype(np.int64) * (n_distinct[column] + 1) + codes[column]
                if pd.unique(pairs).size == n_distinct[other]:
                    dropped[column] = other
                    break
            elif plans[column]["kind"] == "numeric":  # a copy, or a change of units
                x, y = numbers[column], numbers[other]
                if x.std() > 0 and y.std() > 0 and abs(np.corrcoef(x, y)[0, 1]) > 1 - 1e-12:
                    dropped[column] = other
                    break
    return dropped


def _dependence_candidates(plans, codes, numbers, n_distinct):
    """``{column: set of columns that may determine it}``, a superset of the exact pairs of
    :func:`_dependent_columns`, found without looking at every pair of columns.

    * a categorical column determines a column with as many distinct values exactly when
      the two split the rows alike: their factorized codes (numbered in order of first
      appearance) are then equal, so equal hashes of the codes find them;
    * a column with fewer distinct values than a categorical one: it must agree on pairs of
      rows in the same category; ``DEPENDENCE_PROBES`` such pairs (from a sample of rows)
      rule out almost every other column at once, vectorized over the columns;
    * numeric copies (|correlation| > 1 − 1e-12): their standardized values differ by at
      most ``√(2n·1e-12)`` in norm, so their projections on a random unit vector differ by
      no more; sorting the projections leaves only neighbours as candidates.
    """
    columns = list(plans)
    categories = [c for c in columns if plans[c]["kind"] == "category"]
    candidates = {c: set() for c in columns}
    by_partition = {}
    for column in columns:
        by_partition.setdefault(hash(codes[column].tobytes()), []).append(column)
    for group in by_partition.values():
        sources = [c for c in group if plans[c]["kind"] == "category"]
        for column in group:
            candidates[column].update(sources)
    _coarser_candidates(categories, columns, codes, n_distinct, candidates)
    _linear_candidates(numbers, candidates)
    return candidates


def _coarser_candidates(categories, columns, codes, n_distinct, candidates):
    """Candidates among columns with fewer distinct values than a category (see above)."""
    sources = [c for c in categories if n_distinct[c] > 2]
    if not sources or not columns:
        return
    n_rows = len(codes[columns[0]])
    rng = np.random.default_rng(0)
    sample = np.sort(rng.choice(n_rows, min(n_rows, DEPENDENCE_SAMPLE), replace=False))
    table = np.empty((len(sample), len(columns)), dtype=np.int32)  # (sample, columns)
    for j, column in enumerate(columns):
        table[:, j] = codes[column][sample]
    distinct = np.array([n_distinct[c] for c in columns])
    for source in sources:
        targets = np.flatnonzero(distinct < n_distinct[source])
        if targets.size == 0:
            continue
        level = codes[source][sample]
        _, first = np.unique(level, return_index=True)
        anchor = first[np.searchsorted(np.unique(level), level)]  # first sampled row of its level
        probes = np.flatnonzero(anchor != np.arange(len(sample)))[:DEPENDENCE_PROBES]
        block = table[:, targets]
        agree = (block[probes] == block[anchor[probes]]).all(axis=0)
        for j in targets[agree]:
            candidates[columns[j]].add(source)


def _linear_candidates(numbers, candidates):
    """Candidates among the numeric columns: neighbours of a sorted random projection."""
    if len(numbers) < 2:
        return
    names = list(numbers)
    n_rows = len(numbers[names[0]])
    w = np.random.default_rng(0).normal(size=n_rows)
    w /= np.linalg.norm(w)
    projection = np.full(len(names), np.nan)
    for j, name in enumerate(names):
        x = numbers[name]
        std = x.std()
        if std > 0:
            projection[j] = abs((x @ w - x.mean() * w.sum()) / std)
    # |z·w − z'·w| ≤ ‖z − z'‖ ≤ √(2n(1 − |r|)), plus rounding
    tolerance = np.sqrt(2 * n_rows * 1e-12) + 1e-9 * n_rows
    keep = np.flatnonzero(np.isfinite(projection))
    order = keep[np.argsort(projection[keep], kind="stable")]
    values = projection[order]
    start = 0
    for i in range(len(order)):
        while values[i] - values[start] > tolerance:
            start += 1
        for j in order[start:i]:
            candidates[names[order[i]]].add(names[j])
            candidates[names[j]].add(names[order[i]])


def collinear_columns(X, feature_names, *, rtol=1e-6):
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
    rtol : float, default=1e-6
        Singular values below ``rtol`` times the largest count as zero. They are computed
        from the Gram matrix (linear in the rows), whose rounding error is about
        ``1e-8`` of the largest singular value, so smaller tolerances are not meaningful.

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
    weight = _null_weight(X, rtol)
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


def _null_weight(X, rtol):
    """Each feature's weight in the null space of the centred table: the norm of its unit
    vector's projection there (0: in no null direction).

    From the smaller of the two Gram matrices: ``XᵀX`` (features × features) for a tall
    table, ``XXᵀ`` (rows × rows) for a wide one, whose eigenvectors give the row space
    (``‖P_null e_j‖² = 1 − ‖P_row e_j‖²``). Each is summed over blocks (no centred copy of
    a large table), on one BLAS thread (a small result gains little from more, and shared
    cores lose much): O(n·d·min(n, d)), linear in the rows and in the features.
    """
    n, d = X.shape
    mean = X.mean(axis=0)
    with threadpool_limits(limits=1, user_api="blas"):
        if d <= n:
            gram = np.zeros((d, d))
            for start in range(0, n, ROW_BLOCK):
                centred = X[start : start + ROW_BLOCK] - mean
                gram += centred.T @ centred
            eigenvalues, vectors = np.linalg.eigh(gram)
            singular = np.sqrt(np.clip(eigenvalues, 0.0, None))
            top = singular.max()
            null = vectors[:, singular <= rtol * top] if top > 0 else vectors
            return np.sqrt((null**2).sum(axis=1))
        centred = X - mean
        eigenvalues, vectors = np.linalg.eigh(centred @ centred.T)
        singular = np.sqrt(np.clip(eigenvalues, 0.0, None))
        top = singular.max()
        if top == 0:
            return np.ones(d)
        keep = singular > rtol * top
        row_space = (centred.T @ vectors[:, keep]) / singular[keep]  # orthonormal columns
        return np.sqrt(np.clip(1.0 - (row_space**2).sum(axis=1), 0.0, None))


def _real_keys(frames, real):
    if real is None:
        return [n for n in frames if not str(n).startswith("synthetic")] or list(frames)
    real = list(real)
    unknown = [n for n in real if n not in frames]
    if unknown or not real:
        raise ValueError(f"real must name tables of frames {list(frames)}; got {real!r}.")
    return real


def _check_dropped_share(report, max_dropped_share):
    """Refuse a table whose columns are mostly dropped as text, dates or empty (misread)."""
    misread = {c: row[2] for c, row in report.items() if any(m in row[2] for m in _MISREAD)}
    if len(misread) > max_dropped_share * len(report) and len(report) > 1:
        listed = "; ".join(f"{c!r} ({t.removeprefix('dropped: ')})" for c, t in misread.items())
        raise AuditInputError(
            f"{len(misread)} of the {len(report)} columns would be dropped as text, dates or "
            f"empty: {listed}. The tables were probably misread (numbers with a decimal comma "
            "need decimal=','; a wrong delimiter gives one text column): fix the files, "
            "or choose the columns with columns=."
        )


def _parses_numbers(plan):
    """Whether a plan reads its column as numbers (numeric, or a binary numeric category)."""
    return plan["kind"] == "numeric" or plan.get("numeric", False)


def _unparsed(values):
    """``(given, failed)``: how many cells hold a value, and the mask of those that are not
    numbers."""
    values = values.reset_index(drop=True)
    given = values.notna().to_numpy()
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return int(given.sum()), np.zeros(len(values), dtype=bool)
    return int(given.sum()), given & _numbers(values).isna().to_numpy()


def _examples(values, failed, limit=3, rows=True):
    """Up to ``limit`` distinct cells flagged by ``failed``, each with its first row."""
    shown = {}
    for row in np.flatnonzero(failed):
        value = values.iloc[row]
        if value not in shown:
            shown[value] = int(row)
            if len(shown) == limit:
                break
    if not rows:
        return ", ".join(repr(value) for value in shown)
    return ", ".join(f"{value!r} (row {row})" for value, row in shown.items())


def _check_unparsed(frames, plans, real, allow_unparsed):
    """Refuse a release whose cells of a column that parses as numbers in the real tables
    are mostly not numbers (more than ``STRAY_FRACTION`` of its values), unless the column
    is in ``allow_unparsed``: filled with the median, a release written ``"14.25 cm"`` would
    look like no release at all (issue #25). Returns the columns accepted so, per release
    table: the audit never saw those values, so it cannot bound that release's leakage."""
    accepted = {}
    for column, plan in plans.items():
        if not _parses_numbers(plan):
            continue
        for name in (n for n in frames if n not in real):
            values = frames[name][column].reset_index(drop=True)
            given, failed = _unparsed(values)
            count = int(failed.sum())
            if not count or count <= STRAY_FRACTION * given:
                continue
            if column in allow_unparsed:
                accepted.setdefault(name, []).append(column)
            else:
                raise AuditInputError(
                    f"Column {column!r} holds numbers in the real tables ({', '.join(real)}) "
                    f"but {count} of the {given} values ({count / given:.1%}) of the {name} "
                    f"table are not numbers: {_examples(values, failed)}. Counted as missing "
                    "they would be filled with the median and hide what the release holds. "
                    f"Write them as plain numbers, or pass allow_unparsed=[{column!r}] to audit "
                    f"them as missing values (at most {STRAY_FRACTION:.0%} is accepted "
                    "without it)."
                )
    return accepted


def _table_notes(name, frame, plans, release):
    """What the encoding did to one table's values: cells that are not numbers (every
    table), unseen and lacking categories (a release)."""
    notes = []
    for column, plan in plans.items():
        values = frame[column].reset_index(drop=True)
        if _parses_numbers(plan):
            given, failed = _unparsed(values)
            if failed.any():
                count = int(failed.sum())
                notes.append(
                    f"column {column!r}: {count} of the {given} values ({count / given:.1%}) "
                    f"of the {name} table are not numbers ({_examples(values, failed)}); they "
                    "count as missing"
                    + (" (imputed with the median)" if plan["kind"] == "numeric" else "")
                )
        if release and plan["kind"] != "numeric":
            notes.extend(_category_notes(name, column, values, plan))
    return notes


def _category_notes(name, column, values, plan):
    """A release's categories the real tables lack, and real categories it lacks."""
    notes, levels = [], plan["levels"]
    codes = _category_codes(values, plan["numeric"], levels)
    outside = codes < 0
    if outside.any():  # values of no kept category: merged rare ones, or unseen
        merged = _category_codes(values[outside], plan["numeric"], plan["merged"])
        unseen = int((merged < 0).sum())
        if unseen:
            to = OTHER if OTHER in levels else "the centre of the categories"
            shown = _examples(values[outside].reset_index(drop=True), merged < 0, rows=False)
            notes.append(
                f"column {column!r}: {unseen} values ({unseen / len(values):.1%}) of the {name} "
                f"table are categories the real tables do not have (e.g. {shown}); they map "
                f"to {to}"
            )
    present = set(np.unique(codes[codes >= 0]).tolist())  # <other>: merged real ones
    lacking = [lv for i, lv in enumerate(levels) if i not in present and lv != OTHER]
    if lacking:
        notes.append(
            f"column {column!r}: the {name} table lacks the categor"
            f"{'y' if len(lacking) == 1 else 'ies'} {lacking[:5]}"
            f"{' …' if len(lacking) > 5 else ''} (kept as categories)"
        )
    return notes


def encode_tables(
    frames,
    columns=None,
    *,
    max_categories=20,
    min_frequency=0.01,
    real=None,
    id_columns="auto",
    max_dropped_share=0.5,
    allow_unparsed=(),
    max_columns=MAX_COLUMNS,
    verbose=False,
    return_encoder=False,
):
    """Encode every table into the same numeric feature space (see the module docstring).

    One :class:`~sklearn.compose.ColumnTransformer` is fitted on the real tables and then
    transforms each table; the releases take no part in the fit.

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
        Categories rarer than this share of the real rows are merged into ``<other>``.
    real : list of str, default=None
        Keys of the tables of real records (members, non-members, reference), on which the
        encoding is fitted; default: every key that does not start with ``"synthetic"`` (all
        keys if none).
    id_columns : "auto" or list of str, default="auto"
        Columns dropped as row ids: ``"auto"`` drops those that look like one
        (:func:`find_row_id_columns`), with an :class:`AuditInputWarning` naming each; a
        list drops exactly those (``[]``: none).
    max_dropped_share : float in (0, 1], default=0.5
        Refuse the tables when more than this share of the columns would be dropped as text,
        dates or empty (a misread file); 1 turns the check off.
    allow_unparsed : list of str, default=()
        Columns that hold numbers in the real tables and may fail to parse in a release for
        more than ``STRAY_FRACTION`` (1 %) of its values; those cells then count as missing
        (a note gives their count and examples). Without it such a release is refused:
        filled with the median, a release that writes its numbers ``"14.25 cm"`` would look
        like no release at all.
    max_columns : int, default=5000
        Refuse tables with more audited columns (choose some with ``columns``). Every step
        is linear in the columns; the bound keeps a misread or generated file from running
        for long.
    verbose : bool, default=False
        A progress bar (on stderr) over the columns and the tables.
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
        it alone (:func:`collinear_columns`), for tables where some are;
        ``column_report.attrs["table_notes"]`` maps a table to what the encoding did to
        its values (cells that are not numbers, with counts and examples; for a release
        also unseen and lacking categories), for the report's notes.
    encoder : ColumnTransformer
        Only with ``return_encoder=True``.

    Raises
    ------
    AuditInputError
        Naming the column (and table) for infinite or overflowing values, missing shares
        that differ between tables, a release's cells that are not numbers where the real
        tables hold numbers (beyond 1 %, see ``allow_unparsed``), duplicated column names,
        mostly dropped columns, more than ``max_columns`` columns, or no usable column.

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
    from tqdm.auto import tqdm

    columns = check_columns(frames, columns)
    if isinstance(min_frequency, bool) or not 0.0 <= float(min_frequency) < 1.0:
        raise ValueError(f"min_frequency must be in [0, 1); got {min_frequency!r}.")
    if isinstance(max_dropped_share, bool) or not 0.0 < float(max_dropped_share) <= 1.0:
        raise ValueError(f"max_dropped_share must be in (0, 1]; got {max_dropped_share!r}.")
    _check_width(columns, max_columns)
    allow_unparsed = _allowed_unparsed(allow_unparsed, columns)
    real = _real_keys(frames, real)
    releases = [n for n in frames if n not in real]
    ids = _nested_columns(frames, columns)
    ids.update(
        _id_columns({n: frames[n] for n in real}, [c for c in columns if c not in ids], id_columns)
    )
    with tqdm(
        total=len(columns) + len(frames), desc="encoding", unit="step", disable=not verbose
    ) as progress:
        plans, report = _plan_columns(
            frames, columns, real, ids, max_categories, min_frequency, progress
        )
        _check_dropped_share(report, float(max_dropped_share))
        accepted = _check_unparsed(frames, plans, real, allow_unparsed)
        if not plans:
            raise AuditInputError(
                "No usable column is left after encoding:\n"
                + _column_report(report).to_string(index=False)
            )
        encoder, feature_names = _encoder(plans, report)
        arrays = _encode_frames(frames, real, encoder, list(plans), feature_names, progress)
    column_report = _column_report(report)
    # tables singular on their own (e.g. two categories that coincide in a small table)
    column_report.attrs["collinear"] = {
        name: found
        for name, array in arrays.items()
        if (found := collinear_columns(array, feature_names))
    }
    column_report.attrs["accepted_unparsed"] = accepted  # release table -> columns
    column_report.attrs["table_notes"] = {
        name: notes
        for name in frames
        if (notes := _table_notes(name, frames[name], plans, release=name in releases))
    }
    if return_encoder:
        return arrays, feature_names, column_report, encoder
    return arrays, feature_names, column_report


def _check_width(columns, max_columns):
    if isinstance(max_columns, bool) or not isinstance(max_columns, Integral) or max_columns < 1:
        raise ValueError(f"max_columns must be an int >= 1; got {max_columns!r}.")
    if len(columns) > max_columns:
        raise AuditInputError(
            f"The tables have {len(columns)} columns; at most {max_columns} are audited "
            "(max_columns=). Choose the columns to audit with columns=, or raise "
            "max_columns=: encoding takes about 5 ms of CPU per column and "
            "1 000 rows."
        )


def _allowed_unparsed(allow_unparsed, columns):
    """``allow_unparsed`` as a set of audited columns."""
    if isinstance(allow_unparsed, str):
        allow_unparsed = [allow_unparsed]
    allowed = set(allow_unparsed or ())
    audited = set(columns)
    unknown = sorted(str(c) for c in allowed if c not in audited)
    if unknown:
        raise AuditInputError(f"allow_unparsed= names {unknown}, which are not audited columns.")
    return allowed


def _column_report(report):
    """The column report's frame: one row per input column."""
    return pd.DataFrame(list(report.values()), columns=["column", "type", "treatment", "features"])


def _plan_columns(frames, columns, real, ids, max_categories, min_frequency, progress):
    """``(plans, report)``: each kept column's plan (from the real tables) and each
    column's report row; columns that depend exactly on another kept one are dropped."""
    releases = [n for n in frames if n not in real]
    plans, report = {}, {}
    for column in columns:
        dtype = str(frames[real[0]][column].dtype)
        if column in ids:
            report[column] = [column, dtype, f"dropped: {ids[column]}", 0]
            progress.update()
            continue
        per_table = {n: frames[n][column].reset_index(drop=True) for n in real}
        kind, dtype, treatment, extra = _plan_column(
            column, per_table, max_categories, min_frequency
        )
        report[column] = [column, dtype, treatment, 0]
        if kind is not None:
            plans[column] = {"kind": kind, **extra}
            if kind == "numeric":
                _check_values(column, {n: _numbers(frames[n][column]) for n in releases})
        progress.update()
    if plans:
        union_real = pd.concat([frames[n][list(plans)] for n in real], ignore_index=True)
        for column, source in _dependent_columns(plans, union_real).items():
            del plans[column]
            how = "an exact function of" if plans[source]["kind"] == "category" else "linear in"
            report[column][2] = f"dropped: {how} {source!r} on the real tables"
    return plans, report


def _encode_frames(frames, real, encoder, kept, feature_names, progress):
    """Every table encoded by ``encoder``, fitted on the union of the real tables."""
    # each step works row by row once fitted, so the real tables' rows of the fit's own
    # output are their encoding
    union = np.asarray(
        encoder.fit_transform(pd.concat([frames[n][kept] for n in real], ignore_index=True)),
        dtype=float,
    )
    bounds = np.cumsum([0] + [len(frames[n]) for n in real])
    encoded = {n: union[bounds[i] : bounds[i + 1]] for i, n in enumerate(real)}
    arrays = {}
    for name, frame in frames.items():
        arrays[name] = _checked(
            encoded[name] if name in encoded else _transform(encoder, frame[kept]),
            name,
            feature_names,
        )
        progress.update()
    return arrays


def _encoder(plans, report):
    """The unfitted encoder of the plans, and the feature names it gives (in plan order).

    A ``ColumnTransformer`` with two blocks — every numeric column in one vectorised
    imputer and scaler, every categorical column in one :class:`CategoryColumns` — then the
    features put back in the order of the columns: the work per column is a few array
    operations, not a transformer of its own (10 000 columns would cost minutes).
    """
    numeric = [c for c, plan in plans.items() if plan["kind"] == "numeric"]
    categorical = [c for c, plan in plans.items() if plan["kind"] != "numeric"]
    transformers, block_names, feature_names = [], [], []
    if numeric:
        steps = make_pipeline(
            FunctionTransformer(_to_float, feature_names_out="one-to-one"),
            SimpleImputer(strategy="median", keep_empty_features=True),
            RobustScale(),
        )
        transformers.append(("numeric", steps, numeric))
        block_names.extend(numeric)
    simplices = []
    for column in categorical:
        levels = plans[column]["levels"]
        simplices.append(CategorySimplex(levels, plans[column]["numeric"], column))
        block_names.extend(f"{column}[{j}]" for j in range(len(levels) - 1))
    if categorical:
        transformers.append(("categories", CategoryColumns(simplices), categorical))
    for column, plan in plans.items():
        width = 1 if plan["kind"] == "numeric" else len(plan["levels"]) - 1
        report[column][3] = width
        feature_names.extend(
            [column]
            if width == 1 and plan["kind"] == "numeric"
            else [f"{column}[{j}]" for j in range(width)]
        )
    where = {name: i for i, name in enumerate(block_names)}
    order = np.array([where[name] for name in feature_names], dtype=np.intp)
    blocks = ColumnTransformer(transformers, remainder="drop", verbose_feature_names_out=False)
    encoder = make_pipeline(blocks, FunctionTransformer(_in_order, kw_args={"order": order}))
    return encoder, feature_names


def _in_order(X, order):
    """The blocks' features in the order of the columns, C-ordered (rows contiguous, as
    every distance computation downstream expects: another layout changes the order of
    BLAS sums, and a count at a radius can flip on the last bit)."""
    return np.ascontiguousarray(np.asarray(X, dtype=float)[:, order])


def _transform(encoder, frame):
    """``encoder.transform(frame)`` in blocks of rows, into one float array: a large release
    is never held twice (the transformers' pieces and their concatenation)."""
    if len(frame) <= ROW_BLOCK:
        return np.asarray(encoder.transform(frame), dtype=float)
    first = np.asarray(encoder.transform(frame.iloc[:ROW_BLOCK]), dtype=float)
    out = np.empty((len(frame), first.shape[1]))
    out[:ROW_BLOCK] = first
    for start in range(ROW_BLOCK, len(frame), ROW_BLOCK):
        out[start : start + ROW_BLOCK] = encoder.transform(frame.iloc[start : start + ROW_BLOCK])
    return out


def _checked(encoded, name, feature_names):
    """An encoded table, refused when a feature spans too many orders of magnitude."""
    encoded = np.asarray(encoded, dtype=float)
    if len(encoded):  # without an absolute-value copy of a large table
        scale = np.maximum(encoded.max(axis=0), -encoded.min(axis=0))
    else:
        scale = np.zeros(len(feature_names))
    bad = ~np.isfinite(scale) | (scale > MAX_ABS)
    if bad.any():
        raise AuditInputError(
            f"Column {feature_names[int(np.flatnonzero(bad)[0])]!r} of the {name} table "
            "spans too many orders of magnitude to measure distances on; rescale it "
            "(e.g. take its log) or leave it out of columns=."
        )
    return encoded
