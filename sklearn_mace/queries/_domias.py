"""Density queries against released synthetic data: DOMIAS's log-ratio (Eq. 2) and ``p_G``
alone (Eq. 1, the ablation). Both are transformers ``records -> (n, 1)``, larger = more likely
a member; the densities are fitted in ``fit`` on the rows given to the constructor."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..density._covariance import constant_columns
from ..density._fit import DENSITY_OPTIONS, fit_log_density
from ..density._kde import BANDWIDTH_RULES
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._torch import TorchDevice
from ._base import QueryFeatureNamesMixin
from ._scale import apply_preprocessor, prepared_rows
from ._synthetic import validated_rows

__all__ = [
    "DOMIASQuery",
    "SyntheticDensityQuery",
    "fit_domias_densities",
    "fit_prepared_densities",
    "log_density_ratio",
]

_BANDWIDTH = [
    StrOptions(set(BANDWIDTH_RULES) | {"cv"}),
    Interval(Real, 0, None, closed="neither"),
]


def _subset_statistic(value, keep, *, matrix):
    if value is None:
        return None
    value = np.asarray(value, dtype=float)
    if value.ndim == 2 and matrix:
        return value[np.ix_(keep, keep)]
    return value[keep] if value.ndim == 1 and value.shape[0] == keep.size else value


def fit_domias_densities(estimator, synthetic, reference):
    """Fit ``p_G`` (and ``p_R`` unless ``reference`` is None) as ``estimator``'s params say.

    Columns constant (up to rounding, see
    :func:`~sklearn_mace.density._covariance.constant_columns`) in the synthetic or the
    reference rows are left out of both densities, which are then the marginals of the
    other columns; a ``UserWarning`` names them. Sets ``density_synthetic_``,
    ``density_reference_`` (or None), ``features_`` (the columns used) and
    ``ignored_features_``.
    """
    constant = constant_columns(synthetic)
    if reference is not None:
        constant |= constant_columns(reference)
    if constant.all():
        raise ValueError(
            "every column is constant in the synthetic or the reference rows; there is no "
            "density to compare."
        )
    keep = ~constant
    if constant.any():
        warnings.warn(
            f"column(s) {np.flatnonzero(constant).tolist()} are constant (up to rounding) in "
            "the synthetic or reference rows: the densities are fitted on the other columns "
            "(their marginals), as a point mass has no density.",
            UserWarning,
            stacklevel=3,
        )
    spec = {
        "density": estimator.density,
        "bandwidth": estimator.bandwidth,
        "cv": estimator.cv,
        "device": estimator.device,
        "random_state": estimator.random_state,
        "verbose": estimator.verbose,
    }
    estimator.features_ = np.flatnonzero(keep)
    estimator.ignored_features_ = np.flatnonzero(constant)
    # No column copy when every column is kept (the release is the largest array here).
    estimator.density_synthetic_ = fit_log_density(
        synthetic if keep.all() else synthetic[:, keep], role="synthetic", **spec
    )
    estimator.density_reference_ = None
    if reference is not None:
        estimator.density_reference_ = fit_log_density(
            reference if keep.all() else reference[:, keep],
            role="reference",
            population_mean=_subset_statistic(
                getattr(estimator, "population_mean", None), keep, matrix=False
            ),
            population_cov=_subset_statistic(
                getattr(estimator, "population_cov", None), keep, matrix=True
            ),
            **spec,
        )


def fit_prepared_densities(estimator, X, synthetic, reference):
    """Validate the constructor rows against ``X``, fit ``preprocessor_`` and the densities.

    ``X`` is the validated records given to ``fit``; returns them through ``preprocessor_``
    (the scale check of :func:`~sklearn_mace.queries._scale.prepared_rows` done).
    """
    sets = {"synthetic": validated_rows(synthetic, "synthetic", X.shape[1])}
    if reference is not None:
        sets["reference"] = validated_rows(reference, "reference", X.shape[1])
    X, sets = prepared_rows(estimator, X, sets, fitting=True)
    fit_domias_densities(estimator, sets["synthetic"], sets.get("reference"))
    return X


def log_density_ratio(estimator, X):
    """``log p_G(x) − log p_R(x)`` of the fitted densities, in log space (DOMIAS Eq. 2)."""
    X = X[:, estimator.features_]
    log_g = np.asarray(estimator.density_synthetic_.score_samples(X), dtype=float)
    log_r = np.asarray(estimator.density_reference_.score_samples(X), dtype=float)
    score = log_g - log_r
    if np.isnan(score).any():
        raise ValueError(
            f"log p_G(x) - log p_R(x) is NaN for {int(np.isnan(score).sum())} rows: a density "
            "returned an undefined log density (e.g. -inf in both, from a compact kernel); "
            "use density='kde'."
        )
    return score


class _DensityQueryMixin(QueryFeatureNamesMixin, TransformerMixin, BaseEstimator):
    """``fit`` validates ``X`` against the constructor rows and fits the densities."""

    def _fit_densities(self, X, reference):
        X = validate_data(self, X, dtype=np.float64)
        fit_prepared_densities(self, X, self.synthetic, reference)
        self._n_features_out = 1
        return self

    def _validated_query(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return apply_preprocessor(self, X)


class DOMIASQuery(_DensityQueryMixin):
    """DOMIAS's query: ``log p_G(x) − log p_R(x)``, how much the generator over-represents x.

    ``p_G`` is a density fitted on the released synthetic rows and ``p_R`` one fitted on the
    attacker's reference rows (population draws), both in ``fit`` on the rows given here;
    the ratio is computed in log space (DOMIAS Eq. 2, Thm. 1), so it stays finite in high
    dimension. A record the generator over-represents relative to the population (a local
    overfit) is likely a member of its training set: larger = more likely a member.

    The column is an attack score as it is (``compare_attacks``, ``roc_auc_score``, the ε
    auditor); ``make_pipeline(DOMIASQuery(syn, ref), ThresholdAttack())`` is the hard rule of
    DOMIAS App. A.1 and ``make_pipeline(DOMIASQuery(syn, ref), BayesOptimalMIA())`` the
    attack learnt from membership labels.

    Parameters
    ----------
    synthetic : array-like of shape (n_synthetic, n_features)
        The released synthetic rows ``D_syn``.
    reference : array-like of shape (n_reference, n_features)
        The attacker's real rows from the population, ``D_ref`` (DOMIAS §2).
    density : {"kde", "bnaf", "gaussian"} or estimator, default="kde"
        * ``"kde"``: :class:`~sklearn_mace.density.GaussianKDE` for both densities.
        * ``"bnaf"``: :class:`~sklearn_mace.density.BNAFDensity` (DOMIAS Table 3 defaults);
          pass a configured ``BNAFDensity(...)`` instead to change them.
        * ``"gaussian"``: prior-only ``p_R`` of App. C, a Gaussian from population statistics
          (``population_mean`` / ``population_cov``, else the reference rows' moments);
          ``p_G`` is a KDE.
        * any estimator with ``fit`` and ``score_samples`` (log densities), e.g.
          ``KernelDensity`` or ``GaussianMixture``; it is cloned for each density.
    bandwidth : {"scott", "silverman", "cv"} or float, default="scott"
        KDE bandwidth (``density="kde"`` / ``"gaussian"`` only). The rules scale each data
        set's covariance as ``scipy.stats.gaussian_kde`` (a singular covariance — dependent
        columns, fewer rows than features — is shrunk by Ledoit–Wolf, see
        :mod:`sklearn_mace.density._covariance`); a float is ``h`` in data units; ``"cv"``
        picks ``h`` by cross-validated likelihood with the one-standard-error rule on at most
        5 000 rows (:class:`~sklearn_mace.density._cv.CVBandwidthKDE`).
    cv : int >= 2, default=5
        Folds for ``bandwidth="cv"``.
    population_mean, population_cov : array-like, default=None
        Population statistics for ``density="gaussian"``: the mean (n_features,) and a
        covariance matrix or per-feature variances, where ``np.inf`` marks a feature nothing
        is known about (a flat prior, App. C). ``None`` uses the reference rows' moments.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where the KDE sums and BNAF training run. On the CPU, threads are chosen per pass
        (docs/design.md, "Devices and threads").
    random_state : int, RandomState instance or None, default=None
        Subsample and folds of ``bandwidth="cv"``, BNAF initialisation.
    verbose : int, default=0
        Progress bars of BNAF training.
    preprocessor : transformer or None, default=None
        Applied to the records, ``synthetic`` and ``reference`` alike: a clone fitted on the
        synthetic and reference rows stacked (``preprocessor_``), e.g. ``StandardScaler()``;
        the densities live on its output. A transformer placed *before* this query in a
        ``Pipeline`` changes the records only — ``fit`` warns
        (:class:`~sklearn_mace.ScaleMismatchWarning`) when they end up on another scale
        than the constructor rows; see docs/guide "Preprocessing records and constructor
        data".

    Attributes
    ----------
    density_synthetic_, density_reference_ : object
        The fitted ``p_G`` and ``p_R`` (their ``score_samples`` are log densities), on the
        columns ``features_``.
    features_ : ndarray of int
        Columns the densities use.
    ignored_features_ : ndarray of int
        Columns constant (up to rounding) in the synthetic or reference rows, left out of
        both densities with a warning (a point mass has no density; the ratio of the other
        columns' marginals is used).
    n_features_in_ : int
    preprocessor_ : transformer or None
        The fitted clone of ``preprocessor``.

    See Also
    --------
    SyntheticDensityQuery : the Eq. 1 ablation, ``log p_G`` alone.
    sklearn_mace.attacks.DOMIASAttack : the same score with a cut, as an attacker.

    References
    ----------
    van Breugel, Sun, Qian, van der Schaar. "Membership Inference Attacks against Synthetic
    Data through Overfitting Detection", AISTATS 2023: Eq. 2, App. A.1, App. C.

    Examples
    --------
    >>> from sklearn.metrics import roc_auc_score
    >>> from sklearn_mace.datasets import make_planted_leak
    >>> from sklearn_mace.queries import DOMIASQuery
    >>> data = make_planted_leak(n_synthetic=2000, n_reference=2000, leak_fraction=0.5,
    ...                          noise=0.2, random_state=0)
    >>> query = DOMIASQuery(data.synthetic, data.reference, device="cpu")
    >>> score = query.fit_transform(data.X_test)[:, 0]  # log p_G(x) - log p_R(x)
    >>> round(roc_auc_score(data.membership, score), 2)
    0.86
    """

    _parameter_constraints = {
        "synthetic": ["array-like"],
        "reference": ["array-like"],
        "density": [StrOptions(DENSITY_OPTIONS), HasMethods(["fit", "score_samples"])],
        "bandwidth": _BANDWIDTH,
        "cv": [Interval(Integral, 2, None, closed="left")],
        "population_mean": ["array-like", None],
        "population_cov": ["array-like", None],
        "device": [str, TorchDevice],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "preprocessor": [HasMethods(["fit", "transform"]), None],
    }

    def __init__(
        self,
        synthetic,
        reference,
        *,
        density="kde",
        bandwidth="scott",
        cv=5,
        population_mean=None,
        population_cov=None,
        device="auto",
        random_state=None,
        verbose=0,
        preprocessor=None,
    ):
        self.synthetic = synthetic
        self.reference = reference
        self.density = density
        self.bandwidth = bandwidth
        self.cv = cv
        self.population_mean = population_mean
        self.population_cov = population_cov
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.preprocessor = preprocessor

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit ``p_G`` on ``synthetic`` and ``p_R`` on ``reference``; validate ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records (only their width is used).
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted query (``density_synthetic_``, ``density_reference_`` set).
        """
        return self._fit_densities(X, self.reference)

    def transform(self, X):
        """``log p_G(x) − log p_R(x)`` of every row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to score, with the columns of ``synthetic`` and ``reference``.

        Returns
        -------
        Q : ndarray of shape (n_samples, 1)
            Larger = more over-represented by the generator = more likely a member.
        """
        return log_density_ratio(self, self._validated_query(X)).reshape(-1, 1)


class SyntheticDensityQuery(_DensityQueryMixin):
    """``log p_G(x)`` alone: the Eq. 1 ablation of DOMIAS (no reference rows).

    The assumption of earlier black-box attacks (DOMIAS Eq. 1, ``A(x) = f(p_G(x))``): a
    record where the synthetic data are dense is guessed a member. DOMIAS with a flat
    ``p_R``; compare with :class:`DOMIASQuery` to see what the reference rows add.

    Parameters
    ----------
    synthetic : array-like of shape (n_synthetic, n_features)
        The released synthetic rows.
    density : {"kde", "bnaf"} or estimator, default="kde"
        As in :class:`DOMIASQuery`.
    bandwidth : {"scott", "silverman", "cv"} or float, default="scott"
        As in :class:`DOMIASQuery`.
    cv : int >= 2, default=5
        Folds for ``bandwidth="cv"``.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where the KDE sums and BNAF training run. On the CPU, threads are chosen per pass
        (docs/design.md, "Devices and threads").
    random_state : int, RandomState instance or None, default=None
        Subsample and folds of ``bandwidth="cv"``, BNAF initialisation.
    verbose : int, default=0
        Progress bars of BNAF training.
    preprocessor : transformer or None, default=None
        Applied to the records and ``synthetic`` alike (a clone fitted on ``synthetic``), as
        in :class:`DOMIASQuery`.

    Attributes
    ----------
    density_synthetic_ : object
        The fitted ``p_G`` on the columns ``features_``.
    features_, ignored_features_ : ndarray of int
        As in :class:`DOMIASQuery` (constant synthetic columns are left out).
    n_features_in_ : int
    preprocessor_ : transformer or None
        The fitted clone of ``preprocessor``.

    References
    ----------
    van Breugel et al., AISTATS 2023, Eq. 1 and §5.2 (ablation "Eq. 1").

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.queries import SyntheticDensityQuery
    >>> synthetic = np.random.default_rng(0).normal(size=(500, 2))
    >>> Q = SyntheticDensityQuery(synthetic, device="cpu").fit_transform([[0.0, 0.0], [4.0, 4.0]])
    >>> bool(Q[0, 0] > Q[1, 0])  # denser near the synthetic rows
    True
    """

    _parameter_constraints = {
        "synthetic": ["array-like"],
        "density": [StrOptions({"kde", "bnaf"}), HasMethods(["fit", "score_samples"])],
        "bandwidth": _BANDWIDTH,
        "cv": [Interval(Integral, 2, None, closed="left")],
        "device": [str, TorchDevice],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "preprocessor": [HasMethods(["fit", "transform"]), None],
    }

    def __init__(
        self,
        synthetic,
        *,
        density="kde",
        bandwidth="scott",
        cv=5,
        device="auto",
        random_state=None,
        verbose=0,
        preprocessor=None,
    ):
        self.synthetic = synthetic
        self.density = density
        self.bandwidth = bandwidth
        self.cv = cv
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.preprocessor = preprocessor

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit ``p_G`` on ``synthetic``; validate ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records (only their width is used).
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted query (``density_synthetic_`` set).
        """
        return self._fit_densities(X, None)

    def transform(self, X):
        """``log p_G(x)`` of every row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to score, with the columns of ``synthetic``.

        Returns
        -------
        Q : ndarray of shape (n_samples, 1)
            Larger = denser synthetic data around the record = guessed a member.
        """
        X = self._validated_query(X)[:, self.features_]
        return np.asarray(self.density_synthetic_.score_samples(X), dtype=float).reshape(-1, 1)
