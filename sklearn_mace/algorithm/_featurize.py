"""What one release tells about a record: the features a shadow-run attack learns from.

TAPAS (Houssiau et al. 2022) and Stadler, Oprisanu & Troncoso (2022) attack a synthetic-data
generator by featurizing each of many releases: closest distances, local-neighbourhood
counts, the density at the target, naive summary statistics. :class:`ReleaseFeatures` is
that featurizer as a query transformer: the release is constructor data (as for every
synthetic-data query, ``docs/design.md``), the rows to transform are the targets.
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._chunks import chunk_rows
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context

__all__ = ["ReleaseFeatures"]

_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


def _check_ints(values, name):
    values = tuple(values)
    if any(isinstance(v, bool) or not isinstance(v, Integral) or v < 1 for v in values):
        raise ValueError(f"{name} must hold ints >= 1; got {values!r}.")
    return values


def _check_radii(values):
    values = tuple(values)
    if any(
        isinstance(v, bool) or not isinstance(v, Real) or not np.isfinite(v) or v < 0
        for v in values
    ):
        raise ValueError(f"radii must hold finite numbers >= 0; got {values!r}.")
    return values


class ReleaseFeatures(TransformerMixin, BaseEstimator):
    """Features of records with respect to one synthetic release (TAPAS-style).

    For each record ``x`` (a target) and the release ``G = {g_1, …, g_m}``, after dividing
    every column by ``scale``:

    * ``distance_k`` for ``k`` in ``n_neighbors``: the Euclidean distance from ``x`` to its
      ``k``-th nearest row of ``G`` (TAPAS' closest-distance feature; GAN-leaks for k = 1);
    * ``count_r`` for ``r`` in ``radii``: how many rows of ``G`` lie within distance ``r``
      (TAPAS' local-neighbourhood counts); ``r = 0`` counts exact copies of ``x`` — on a
      categorical release, the count of ``x``'s cell, which is what a DP histogram release
      leaks through;
    * ``log_density``: the log of a Gaussian kernel density of ``G`` at ``x`` (isotropic
      bandwidth ``h`` in scaled units, Scott's ``m^(−1/(d+4))`` by default), in raw units;
    * with ``summary=True``, the mean and standard deviation of every scaled column of
      ``G`` (TAPAS' naive statistics): the same for every record of one release, they
      change from release to release.

    A shadow-run audit (:class:`AlgorithmAudit`) sets ``synthetic`` to each run's release
    and transforms the targets; its attack learns which features move when the target
    trains the generator.

    Parameters
    ----------
    synthetic : array-like of shape (m, n_features)
        The release.
    scale : array-like of shape (n_features,) or None, default=None
        Every column is divided by it before distances are taken (e.g. the population's
        standard deviations); None: raw units.
    n_neighbors : tuple of int, default=(1,)
        Which nearest-row distances to return.
    radii : tuple of float, default=(0.0, 0.5)
        Radii of the neighbourhood counts, in scaled units.
    bandwidth : float > 0, "scott" or None, default="scott"
        Kernel bandwidth of ``log_density`` in scaled units; None leaves the column out.
    summary : bool, default=False
        Add the release's column means and standard deviations.

    Attributes
    ----------
    n_features_in_ : int
        Columns of the records.

    See Also
    --------
    AlgorithmAudit : the shadow-run audit that uses it.
    sklearn_mace.queries.NearestSyntheticDistance : the distance alone, for one release.

    References
    ----------
    F. Houssiau, J. Jordon, S. N. Cohen, O. Daniel, A. Elliott, J. Geddes, C. Mole,
    C. Rangel-Smith, L. Szpruch. TAPAS: a Toolbox for Adversarial Privacy Auditing of
    Synthetic Data. NeurIPS 2022 SyntheticData4ML workshop. T. Stadler, B. Oprisanu,
    C. Troncoso. Synthetic Data — Anonymisation Groundhog Day. USENIX Security 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import ReleaseFeatures
    >>> release = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [3.0, 4.0]])
    >>> features = ReleaseFeatures(release, bandwidth=None).fit([[0.0, 0.0]])
    >>> features.get_feature_names_out().tolist()
    ['distance_1', 'count_0', 'count_0.5']
    >>> features.transform([[0.0, 0.0], [3.0, 0.0]]).tolist()
    [[0.0, 2.0, 2.0], [2.0, 0.0, 0.0]]
    """

    _parameter_constraints: dict = {
        "synthetic": ["array-like"],
        "scale": [None, "array-like"],
        "n_neighbors": [tuple, list],
        "radii": [tuple, list],
        "bandwidth": [None, Interval(Real, 0, None, closed="neither"), StrOptions({"scott"})],
        "summary": ["boolean"],
    }

    def __init__(
        self,
        synthetic,
        *,
        scale=None,
        n_neighbors=(1,),
        radii=(0.0, 0.5),
        bandwidth="scott",
        summary=False,
    ):
        self.synthetic = synthetic
        self.scale = scale
        self.n_neighbors = n_neighbors
        self.radii = radii
        self.bandwidth = bandwidth
        self.summary = summary

    def _scale(self, n_features):
        if self.scale is None:
            return np.ones(n_features)
        scale = check_array(np.reshape(self.scale, (1, -1)), ensure_all_finite=True).ravel()
        if scale.size != n_features or np.any(scale <= 0):
            raise ValueError(
                f"scale must hold {n_features} positive numbers (one per column of X); "
                f"got {scale.size} value(s), smallest {scale.min():g}."
            )
        return scale

    def _release(self, n_features):
        synthetic = check_array(self.synthetic, dtype=np.float64, ensure_min_samples=0)
        if synthetic.shape[1] != n_features:
            raise ValueError(
                f"synthetic has {synthetic.shape[1]} columns but X has {n_features}; the "
                "release and the records must share their columns."
            )
        needed = max((*self.n_neighbors, 1 if self.bandwidth is not None else 0), default=0)
        if synthetic.shape[0] < needed:
            raise ValueError(
                f"the release has {synthetic.shape[0]} row(s); n_neighbors={self.n_neighbors!r}"
                f" and the density need at least {needed}."
            )
        return synthetic

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the parameters and the release against the records' width.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records (targets).
        y : None
            Ignored.

        Returns
        -------
        self : ReleaseFeatures
            The fitted featurizer.
        """
        X = validate_data(self, X, dtype=np.float64)
        _check_ints(self.n_neighbors, "n_neighbors")
        _check_radii(self.radii)
        if not (self.n_neighbors or self.radii or self.bandwidth is not None or self.summary):
            raise ValueError(
                "ReleaseFeatures computes nothing: give n_neighbors, radii, a bandwidth or "
                "summary=True."
            )
        # checked once here, not at every transform: a shadow-run audit featurizes
        # thousands of releases, and validation would cost more than the features
        self._column_scale = self._scale(X.shape[1])
        self._scaled_release = self._release(X.shape[1]) / self._column_scale
        return self

    def transform(self, X):
        """Features of every record with respect to ``synthetic``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records (targets).

        Returns
        -------
        features : ndarray of shape (n_samples, n_output_features)
            Columns in the order of :meth:`get_feature_names_out`.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scale, release = self._column_scale, self._scaled_release
        records = X / scale
        m, d = release.shape
        columns = []
        step = chunk_rows(max(m, 1) * d)
        blocks = [
            self._local_features(records[start : start + step], release)
            for start in range(0, records.shape[0], step)
        ]
        if blocks and blocks[0].shape[1]:
            columns.append(np.vstack(blocks))
        if self.bandwidth is not None:
            columns.append(self._log_density(records, release, step) - np.log(scale).sum())
        if self.summary:
            stats = np.r_[release.mean(axis=0), release.std(axis=0)] if m else np.zeros(2 * d)
            columns.append(np.tile(stats, (records.shape[0], 1)))
        return np.column_stack(columns)

    def _local_features(self, records, release):
        """Nearest distances and neighbourhood counts of one block of records."""
        sq = ((records[:, None, :] - release[None, :, :]) ** 2).sum(axis=2)
        out = [np.sqrt(np.partition(sq, k - 1, axis=1)[:, k - 1]) for k in self.n_neighbors]
        out += [np.count_nonzero(sq <= r * r, axis=1).astype(float) for r in self.radii]
        return np.column_stack(out) if out else np.empty((records.shape[0], 0))

    def _log_density(self, records, release, step):
        m, d = release.shape
        h = m ** (-1.0 / (d + 4)) if self.bandwidth == "scott" else float(self.bandwidth)
        out = np.empty(records.shape[0])
        for start in range(0, records.shape[0], step):
            block = records[start : start + step]
            sq = ((block[:, None, :] - release[None, :, :]) ** 2).sum(axis=2)
            out[start : start + step] = logsumexp(-0.5 * sq / h**2, axis=1)
        return out[:, None] - np.log(m) - d * (np.log(h) + _LOG_SQRT_2PI)

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns.

        Parameters
        ----------
        input_features : None
            Ignored (the output names do not depend on the input's).

        Returns
        -------
        names : ndarray of str
            ``distance_k``, ``count_r``, ``log_density``, then ``mean_j`` and ``std_j``.
        """
        check_is_fitted(self)
        return np.asarray(self._names(self.n_features_in_), dtype=object)

    def _names(self, n_features):
        names = [f"distance_{k}" for k in self.n_neighbors]
        names += [f"count_{r:g}" for r in self.radii]
        if self.bandwidth is not None:
            names.append("log_density")
        if self.summary:
            names += [f"mean_{j}" for j in range(n_features)]
            names += [f"std_{j}" for j in range(n_features)]
        return names
