"""Constructor data and the records on one scale: the mismatch warning and ``preprocessor=``.

The queries and attacks against released synthetic data hold data of their own (the release,
the attacker's reference rows), given to the constructor. Inside a ``Pipeline`` a transformer
placed *before* them changes the records they are fitted on and queried with, never the data
they hold: ``make_pipeline(StandardScaler(), DOMIASAttack(synthetic, reference))`` compares
standardised records with raw densities, and a leaky release looks safe.
:func:`warn_on_scale_mismatch` detects that case on the records given to ``fit``;
:func:`fit_preprocessor` is the ``preprocessor=`` parameter that transforms both alike.

The rule (``docs/design.md``, "Constructor data and Pipelines") is rank-based, so that it
holds whatever the columns' distributions (heavy tails, ties, discrete values): per column
``j`` and per constructor set ``C`` (``synthetic``, ``reference``) against the records ``X``
given to ``fit``,

* **location** apart when ``A = P(x > c) + ½ P(x = c)`` (the Mann–Whitney probability of a
  record above a constructor row, ½ when both come from one distribution) is outside
  ``[0.25, 0.75]`` — for two normals, a shift of about one pooled standard deviation;
* **spread** apart when the same probability computed on the absolute deviations from the
  pooled median is outside ``[0.3, 0.7]`` — for two centred normals, a factor of about two
  in standard deviation;

in both cases only when the Mann–Whitney test (tie-corrected, normal approximation) also
rejects "one distribution" beyond five standard errors (two-sided ``p < 5.7e-7``). The
margins keep the warning practical (a generator a little off does not trigger it) and the
test keeps it quiet on small samples. Sets of fewer than :data:`MIN_ROWS` rows are not
compared; at most :data:`MAX_ROWS` rows per set (a fixed-seed subsample) enter.
"""

import warnings

import numpy as np
from sklearn.base import clone

__all__ = [
    "MIN_ROWS",
    "ScaleMismatchWarning",
    "apply_preprocessor",
    "fit_preprocessor",
    "prepared_rows",
    "scale_mismatch",
    "warn_on_scale_mismatch",
]

#: sets with fewer rows are not compared (their spread says too little)
MIN_ROWS = 20
#: at most this many rows per set enter the statistics (a fixed-seed subsample beyond)
MAX_ROWS = 5_000
_LOCATION_MARGIN = 0.25  # |P(x > c) - 1/2|
_SPREAD_MARGIN = 0.2  # the same on absolute deviations from the pooled median
_P_VALUE = 5.7e-7  # two-sided, five standard errors


class ScaleMismatchWarning(UserWarning):
    """The records an estimator is fitted on and the data it holds live on different scales.

    Raised by the queries and attacks that hold data from their constructor (the synthetic
    release, the reference rows) when, per column, the location or the spread of the records
    given to ``fit`` is far from that of the constructor data (the rule is in
    ``docs/design.md``, "Constructor data and Pipelines"). The usual cause is a transformer
    placed before the estimator in a ``Pipeline``: it changes the records, never the
    constructor data. Pass the transformer as the estimator's ``preprocessor=`` instead (it
    is applied to both), or put the query at the head of the ``Pipeline``.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_mace import ScaleMismatchWarning
    >>> from sklearn_mace.queries import NearestSyntheticDistance
    >>> rng = np.random.default_rng(0)
    >>> synthetic = rng.normal(50.0, 10.0, size=(500, 2))  # a release in raw units
    >>> standardised = rng.normal(size=(200, 2))  # records scaled by a step before
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = NearestSyntheticDistance(synthetic, device="cpu").fit(standardised)
    >>> [w.category is ScaleMismatchWarning for w in caught]
    [True]
    """


def _subsample(rows):
    if len(rows) <= MAX_ROWS:
        return rows
    keep = np.random.default_rng(0).choice(len(rows), MAX_ROWS, replace=False)
    return rows[np.sort(keep)]


def _apart(X, rows, margin):
    """Per column: ``|A − ½| > margin`` and the Mann–Whitney test beyond five standard errors."""
    from scipy.stats import mannwhitneyu

    test = mannwhitneyu(X, rows, axis=0, method="asymptotic", use_continuity=False)
    probability = np.asarray(test.statistic, dtype=float) / (len(X) * len(rows))
    p_value = np.nan_to_num(np.asarray(test.pvalue, dtype=float), nan=1.0)
    return (np.abs(probability - 0.5) > margin) & (p_value < _P_VALUE)


def scale_mismatch(X, rows):
    """Columns where ``X`` and ``rows`` are apart by the module's rule.

    Parameters
    ----------
    X, rows : ndarray of shape (n, n_features) and (m, n_features), float
        The records given to ``fit`` and one constructor set.

    Returns
    -------
    location, spread : ndarray of int
        Column indices whose location, respectively spread, are apart (empty when a set has
        fewer than :data:`MIN_ROWS` rows).
    """
    none = np.array([], dtype=int)
    if len(X) < MIN_ROWS or len(rows) < MIN_ROWS:
        return none, none
    X, rows = _subsample(X), _subsample(rows)
    location = _apart(X, rows, _LOCATION_MARGIN)
    centre = np.median(np.vstack([X, rows]), axis=0)
    spread = _apart(np.abs(X - centre), np.abs(rows - centre), _SPREAD_MARGIN)
    return np.flatnonzero(location), np.flatnonzero(spread)


def _describe(columns, names):
    shown = [str(names[j]) if names is not None else str(int(j)) for j in columns[:10]]
    more = f" and {len(columns) - 10} more" if len(columns) > 10 else ""
    return ", ".join(shown) + more


def _column_names(estimator, width):
    """Names of the compared columns: the input's, or the preprocessor's output names."""
    pre = getattr(estimator, "preprocessor_", None)
    if pre is None:
        names = getattr(estimator, "feature_names_in_", None)
    else:
        try:
            names = pre.get_feature_names_out()
        except (AttributeError, ValueError, TypeError):
            names = None
    return names if names is not None and len(names) == width else None


def warn_on_scale_mismatch(estimator, X, constructor_sets):
    """Warn (:class:`ScaleMismatchWarning`) when ``X`` and a constructor set are apart.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted (named in the message; ``feature_names_in_`` names the
        columns when present).
    X : ndarray of shape (n_samples, n_features)
        The records given to ``fit`` (after ``preprocessor_``, when there is one).
    constructor_sets : dict of str to ndarray
        ``{"synthetic": rows, "reference": rows}`` on the same columns as ``X``.
    """
    names = _column_names(estimator, X.shape[1])
    found = []
    for set_name, rows in constructor_sets.items():
        location, spread = scale_mismatch(X, rows)
        if location.size:
            found.append(f"the location of column(s) {_describe(location, names)} in {set_name}")
        if spread.size:
            found.append(f"the spread of column(s) {_describe(spread, names)} in {set_name}")
    if not found:
        return
    warnings.warn(
        f"{type(estimator).__name__}: the records given to fit and the constructor data are "
        f"on different scales: {'; '.join(found)} differ from the records' (a record lies "
        "above a constructor row in under 25 % or over 75 % of pairs, or the spreads differ "
        "by about a factor of two). A transformer placed before this estimator in a Pipeline "
        "changes the records, not the constructor data: pass it as preprocessor= (applied to "
        "both) or put the query first in the Pipeline.",
        ScaleMismatchWarning,
        stacklevel=3,
    )


def fit_preprocessor(estimator, constructor_sets):
    """Fit a clone of ``estimator.preprocessor`` on the constructor sets stacked.

    Sets ``estimator.preprocessor_`` (None without a preprocessor) and returns the sets
    transformed by it (unchanged without one). The constructor data, not the records, fit
    it: the map is then the same whichever records are given to ``fit``, so the score of a
    record never depends on the other records of the batch.
    """
    if estimator.preprocessor is None:
        estimator.preprocessor_ = None
        return constructor_sets
    stacked = np.vstack(list(constructor_sets.values()))
    estimator.preprocessor_ = clone(estimator.preprocessor).fit(stacked)
    return {name: apply_preprocessor(estimator, rows) for name, rows in constructor_sets.items()}


def apply_preprocessor(estimator, rows):
    """``rows`` through the fitted ``preprocessor_`` (as float64), or unchanged without one."""
    pre = getattr(estimator, "preprocessor_", None)
    if pre is None:
        return rows
    out = pre.transform(rows)
    out = out.toarray() if hasattr(out, "toarray") else np.asarray(out)
    return np.asarray(out, dtype=np.float64)


def prepared_rows(estimator, X, constructor_sets, *, fitting):
    """``X`` and the constructor sets on one scale, as the estimator's ``fit`` and queries see them.

    When ``fitting``, ``preprocessor_`` is fitted on the constructor sets (see
    :func:`fit_preprocessor`) and the records are compared with them
    (:func:`warn_on_scale_mismatch`); otherwise the fitted ``preprocessor_`` is applied.
    Returns ``(X, constructor_sets)`` transformed.
    """
    if fitting:
        constructor_sets = fit_preprocessor(estimator, constructor_sets)
    else:
        constructor_sets = {
            name: apply_preprocessor(estimator, rows) for name, rows in constructor_sets.items()
        }
    X = apply_preprocessor(estimator, X)
    if fitting:
        warn_on_scale_mismatch(estimator, X, constructor_sets)
    return X, constructor_sets
