"""Queries against released synthetic data: nearest-synthetic distance (MACE Eq. 2) and
Hilprecht et al.'s Monte-Carlo ε-ball query (MACE Eq. 1)."""

import hashlib
import importlib.util
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ..utils._chunks import DEFAULT_CHUNK_BYTES
from ..utils._neighbors import count_within_radius, nearest_sq_distances, sq_distance_blocks
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._torch import TorchDevice, resolve_device, to_numpy
from ._base import QueryFeatureNamesMixin
from ._scale import prepared_rows

__all__ = ["MonteCarloQuery", "NearestSyntheticDistance", "sq_distance_margin", "validated_rows"]

# float64 unit roundoff
_ROUNDOFF = 2.0**-53


def _content_key(X):
    """A digest of a float64 array's shape and values (which records a query was fit on)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    hasher = hashlib.blake2b(repr(X.shape).encode(), digest_size=16)
    hasher.update(memoryview(X).cast("B"))
    return hasher.digest()


def sq_distance_margin(X, Y):
    """Per row of ``X``: a bound on how far a squared distance to a row of ``Y`` computed in
    float64 — by the block expansion ``‖x‖² + ‖y‖² − 2·x·y`` of
    :func:`~sklearn_mace.utils.sq_distance_blocks` or by direct differences, both on data
    centred at the mean of ``Y`` — can lie below the exact one.

    Both are off by at most ``(d + 2)·u·(‖x‖ + max‖y‖)²`` in centred coordinates
    (``u = 2⁻⁵³``, Higham's ``γ_n`` bound for a length-``d`` dot product and two sums); the
    margin is 4 times that, so a row of ``X`` whose exact nearest squared distance exceeds
    ``ε² + margin`` has no row of ``Y`` within ``ε`` by either computation.
    """
    centre = Y.mean(axis=0)
    y_norm_max = 0.0
    for start in range(0, len(Y), 65536):
        block = Y[start : start + 65536] - centre
        y_norm_max = max(y_norm_max, float(np.sqrt(np.einsum("ij,ij->i", block, block).max())))
    x_norm = np.sqrt(np.einsum("ij,ij->i", X - centre, X - centre))
    return 4.0 * (X.shape[1] + 2) * _ROUNDOFF * (x_norm + y_norm_max) ** 2


def validated_rows(data, name, n_features):
    """``data`` (constructor rows such as ``synthetic``) as finite float64, ``n_features`` wide."""
    rows = np.asarray(data) if not hasattr(data, "iloc") else data.to_numpy()
    if rows.ndim != 2 or rows.shape[0] == 0:
        raise ValueError(
            f"{name} must be a non-empty 2-D array (n_{name}, n_features); got shape {rows.shape}."
        )
    rows = check_array(rows, dtype=np.float64, input_name=name)
    if rows.shape[1] != n_features:
        raise ValueError(
            f"{name} has {rows.shape[1]} feature(s) but X has {n_features} "
            f"feature(s); both must describe records the same way."
        )
    return rows


class _SyntheticQueryMixin(QueryFeatureNamesMixin, TransformerMixin, BaseEstimator):
    """Validation shared by the queries against a synthetic data set (not used directly)."""

    def _validated_synthetic(self, n_features):
        return validated_rows(self.synthetic, "synthetic", n_features)

    def _prepared(self, X, *, fitting):
        """``X`` and ``synthetic`` through ``preprocessor_`` (fitted and checked when fitting)."""
        synthetic = self._validated_synthetic(X.shape[1])
        X, sets = prepared_rows(self, X, {"synthetic": synthetic}, fitting=fitting)
        return X, sets["synthetic"]


class NearestSyntheticDistance(_SyntheticQueryMixin):
    """Distance from a record to its nearest synthetic record, ``min_j d(z, g_j)`` (MACE Eq. 2).

    The black-box query of Hilprecht et al. and GAN-leaks against released synthetic data: a
    generator that memorised its training records produces synthetic records close to them,
    so *smaller* means more likely a member: the query declares it
    (``membership_orientation()`` is ``-1``), and
    :func:`~sklearn_mace.metrics.membership_scores` turns it into a score, larger = member.
    Exact float64 distances computed in bounded memory (never an ``N × M`` matrix):
    a float32 screen by chunked torch matrix products (CUDA when present) or by faiss when it
    is installed, then exact re-ranking (see :func:`sklearn_mace.utils.nearest_sq_distances`).
    ``fit`` learns nothing; it validates ``X`` against ``synthetic``.

    Parameters
    ----------
    synthetic : array-like of shape (n_synthetic, n_features)
        The released synthetic records ``g_1, …, g_n``.
    metric : {"euclidean", "sqeuclidean"}, default="euclidean"
        ``d``: the Euclidean distance, or its square.
    k : int, default=1
        Number of nearest synthetic records; the query has ``k`` columns, ascending (the
        first is Eq. 2).
    backend : {"auto", "torch", "faiss"}, default="auto"
        ``"auto"``: faiss when the optional ``faiss`` package is installed, the device is
        the CPU and ``k = 1``, else torch. The torch path is exact in float64; faiss
        (``k = 1``) returns the exact distance to its float32 nearest candidate, off only for
        near-ties and then by at most twice the float32 rounding bound (see
        :func:`~sklearn_mace.utils.nearest_sq_distances`).
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        Device of the torch backend (``"auto"``: CUDA when available). On the CPU, threads are
        chosen per pass (docs/design.md, "Devices and threads").
    max_chunk_bytes : int, default=64 MiB
        Memory bound of one pairwise block.
    preprocessor : transformer or None, default=None
        Applied to the records *and* to ``synthetic`` alike: a clone fitted on ``synthetic``
        in ``fit`` (``preprocessor_``), e.g. ``StandardScaler()``. A transformer placed
        *before* this query in a ``Pipeline`` changes the records only — fit warns
        (:class:`~sklearn_mace.ScaleMismatchWarning`) when the two end up on different
        scales; see docs/guide "Preprocessing records and constructor data".

    Attributes
    ----------
    n_features_in_ : int
        Features seen in ``fit``.
    preprocessor_ : transformer or None
        The fitted clone of ``preprocessor``.

    See Also
    --------
    MonteCarloQuery : Hilprecht et al.'s ε-ball query (Eq. 1).

    References
    ----------
    MACE (Pan et al., TMLR 2023), §2.2.1, Eq. 2; Hilprecht et al. (2019); Chen et al. (2019).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.queries import NearestSyntheticDistance
    >>> synthetic = np.array([[0.0, 0.0], [3.0, 4.0]])
    >>> NearestSyntheticDistance(synthetic).fit_transform([[0.0, 1.0], [3.0, 0.0]])
    array([[1.],
           [3.]])
    """

    #: a record close to the release is more likely a member: smaller = member
    _membership_orientation = -1

    _parameter_constraints = {
        "synthetic": ["array-like"],
        "metric": [StrOptions({"euclidean", "sqeuclidean"})],
        "k": [Interval(Integral, 1, None, closed="left")],
        "backend": [StrOptions({"auto", "torch", "faiss"})],
        "device": [str, TorchDevice],
        "max_chunk_bytes": [Interval(Integral, 1, None, closed="left")],
        "preprocessor": [HasMethods(["fit", "transform"]), None],
    }

    def __init__(
        self,
        synthetic,
        *,
        metric="euclidean",
        k=1,
        backend="auto",
        device="auto",
        max_chunk_bytes=DEFAULT_CHUNK_BYTES,
        preprocessor=None,
    ):
        self.synthetic = synthetic
        self.metric = metric
        self.k = k
        self.backend = backend
        self.device = device
        self.max_chunk_bytes = max_chunk_bytes
        self.preprocessor = preprocessor

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate ``X`` and ``synthetic`` (same features, finite, ``k`` ≤ rows).

        Learns only ``preprocessor_`` (when ``preprocessor`` is set) and warns
        (:class:`~sklearn_mace.ScaleMismatchWarning`) when ``X`` and ``synthetic`` are on
        different scales.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to query, one per row.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            This query, checked and ready to ``transform``.
        """
        X = validate_data(self, X, dtype=np.float64)
        _, synthetic = self._prepared(X, fitting=True)
        if self.k > len(synthetic):
            raise ValueError(f"k={self.k} exceeds the {len(synthetic)} synthetic records.")
        self._resolved_backend()
        self._n_features_out = self.k
        return self

    def transform(self, X):
        """Distances to the ``k`` nearest synthetic records.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to query, one per row.

        Returns
        -------
        Q : ndarray of shape (n_samples, k), float64, ascending along axis 1
            Distance from each record to its ``k`` nearest synthetic records.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        X, synthetic = self._prepared(X, fitting=False)
        sq = nearest_sq_distances(
            X,
            synthetic,
            k=self.k,
            device=self.device,
            max_chunk_bytes=self.max_chunk_bytes,
            backend=self._resolved_backend(),
        )
        return np.sqrt(sq) if self.metric == "euclidean" else sq

    def _resolved_backend(self):
        device = resolve_device(self.device)
        has_faiss = importlib.util.find_spec("faiss") is not None
        if self.backend == "faiss" and not has_faiss:
            raise ImportError(
                "backend='faiss' needs the optional dependency faiss-cpu "
                "(pip install 'sklearn-mace[faiss]'); use backend='auto' or 'torch'."
            )
        if self.backend == "auto":  # faiss is fast for the single nearest neighbour only
            use_faiss = has_faiss and device.type == "cpu" and self.k == 1
            return "faiss" if use_faiss else "torch"
        return self.backend


class MonteCarloQuery(_SyntheticQueryMixin):
    """Hilprecht et al.'s Monte-Carlo ε-ball query (MACE Eq. 1); DOMIAS's ``MC`` baseline.

    ``Q_S(z) = −(1/n) Σ_i 1[g_i ∈ U_ε(z)] · log d(g_i, z)`` over the ``n`` synthetic records
    ``g_i``, with ``U_ε(z)`` the Euclidean ball of radius ε around ``z`` (``weighting="log"``);
    or the plain Monte-Carlo estimate ``(1/n) Σ_i 1[g_i ∈ U_ε(z)]`` of the probability mass
    the generator puts near ``z`` (``weighting="count"``). Computed in bounded-memory blocks,
    at a cost linear in the synthetic rows (one nearest-synthetic pass over the records passed
    to ``fit``, one ball count per transformed record; no synthetic × synthetic pass).

    ``MonteCarloQuery(synthetic, weighting="count")`` fitted on the target records is the
    reference ``MC`` attack: its column is the membership score (larger = member). The
    ball is closed (``d ≤ ε``); the reference counts ``d² < ε²``, which differs only for a
    record at distance exactly ``ε`` (with the median rule, one record when their number is
    odd) and lets ``ε = 0`` count exact copies.

    Parameters
    ----------
    synthetic : array-like of shape (n_synthetic, n_features)
        The synthetic records ``g_1, …, g_n``.
    radius : float >= 0 or "median", default="median"
        Radius of the ball (the papers' ε; no DP ε). ``"median"`` (Hilprecht et al.'s
        median heuristic, Eq. 4 there): ``radius² = median`` over the records given to
        ``fit`` (the targets) of their squared distance to the nearest synthetic record —
        the only thing ``fit`` learns, and the reference definition of DOMIAS's ``MC``
        baseline (``domias`` 0.0.5 ``baselines.MC``; for an odd number of records it is the
        median distance). A median of 0 is valid: at least half of the targets are exact
        copies of synthetic records (a perfect-copy release, maximally leaky), and the ball
        of radius 0 counts the exact copies of each record.
    weighting : {"log", "count"}, default="log"
        ``"log"``: Eq. 1 (distances are floored at ``min_distance`` so that an exact copy
        scores a large finite value rather than infinity); ``"count"``: the fraction of
        synthetic records within ε.
    min_distance : float, default=1e-12
        Floor on ``d(g_i, z)`` in the logarithm.
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        Device of the torch backend (``"auto"``: CUDA when available). On the CPU, threads are
        chosen per pass (docs/design.md, "Devices and threads").
    max_chunk_bytes : int, default=64 MiB
        Memory bound of one pairwise block.
    preprocessor : transformer or None, default=None
        Applied to the records *and* to ``synthetic`` alike: a clone fitted on ``synthetic``
        in ``fit`` (``preprocessor_``), e.g. ``StandardScaler()``. A transformer placed
        *before* this query in a ``Pipeline`` changes the records only — fit warns
        (:class:`~sklearn_mace.ScaleMismatchWarning`) when the two end up on different
        scales; see docs/guide "Preprocessing records and constructor data".

    Attributes
    ----------
    radius_ : float
        The radius used.
    n_features_in_ : int
        Features seen in ``fit``.
    preprocessor_ : transformer or None
        The fitted clone of ``preprocessor``.

    References
    ----------
    MACE (Pan et al., TMLR 2023), §2.2.1, Eq. 1; Hilprecht et al. (2019), Monte Carlo and
    reconstruction membership inference attacks against generative models.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.queries import MonteCarloQuery
    >>> synthetic = np.array([[0.0], [0.5], [3.0]])
    >>> MonteCarloQuery(synthetic, radius=1.0, weighting="count").fit_transform([[0.0], [3.0]])
    array([[0.66666667],
           [0.33333333]])
    """

    _parameter_constraints = {
        "synthetic": ["array-like"],
        "radius": [Interval(Real, 0, None, closed="left"), StrOptions({"median"})],
        "weighting": [StrOptions({"log", "count"})],
        "min_distance": [Interval(Real, 0, None, closed="neither")],
        "device": [str, TorchDevice],
        "max_chunk_bytes": [Interval(Integral, 1, None, closed="left")],
        "preprocessor": [HasMethods(["fit", "transform"]), None],
    }

    def __init__(
        self,
        synthetic,
        *,
        radius="median",
        weighting="log",
        min_distance=1e-12,
        device="auto",
        max_chunk_bytes=DEFAULT_CHUNK_BYTES,
        preprocessor=None,
    ):
        self.synthetic = synthetic
        self.radius = radius
        self.weighting = weighting
        self.min_distance = min_distance
        self.device = device
        self.max_chunk_bytes = max_chunk_bytes
        self.preprocessor = preprocessor

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate ``X`` and ``synthetic``; set ``radius_`` (the median heuristic on ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to query, one per row.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            This query, checked and ready to ``transform``.
        """
        X = validate_data(self, X, dtype=np.float64)
        X, synthetic = self._prepared(X, fitting=True)
        self._fit_nearest = None
        if self.radius == "median":
            sq = nearest_sq_distances(
                X, synthetic, device=self.device, max_chunk_bytes=self.max_chunk_bytes
            )[:, 0]
            # ε² is the median squared distance (the reference's ``np.median(min_dist)`` on
            # squared distances); 0 when most records are copies: the ball counts copies.
            self.radius_ = float(np.sqrt(np.median(sq)))
            # kept for transform on the same records (fit_transform): no ball to count
            # for the half of them whose nearest synthetic row lies beyond the radius
            self._fit_nearest = (_content_key(X), sq)
        else:
            self.radius_ = float(self.radius)
        self._n_features_out = 1
        return self

    def transform(self, X):
        """The ε-ball query of every row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to query, one per row.

        Returns
        -------
        Q : ndarray of shape (n_samples, 1), float64
            The (weighted) share of synthetic records within ``radius_`` of each record.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        X, synthetic = self._prepared(X, fitting=False)
        out = np.zeros((len(X), 1))
        rows = self._rows_near_a_ball(X, synthetic)
        if len(rows) == 0:
            return out
        X = X[rows]
        if self.weighting == "count":  # Hilprecht et al.'s plain Monte-Carlo estimate
            counts = count_within_radius(
                X,
                synthetic,
                self.radius_,
                device=self.device,
                max_chunk_bytes=self.max_chunk_bytes,
            )
            out[rows, 0] = counts / len(synthetic)
        else:
            out[rows] = self._log_weighted_ball_sum(X, synthetic) / len(synthetic)
        return out

    def _rows_near_a_ball(self, X, synthetic):
        """Rows of ``X`` whose ball may hold a synthetic row (all of them unless known).

        When ``X`` is the records given to ``fit`` with ``radius="median"`` (as in
        ``fit_transform``), their exact nearest-synthetic distances are known: a record
        whose nearest synthetic row lies beyond the radius by more than the rounding of the
        block expansion (:func:`sq_distance_margin`) has an empty ball, so its query is
        exactly 0 without a pass over the synthetic rows — half of the records, by the
        median rule. The other rows are computed as before, each row's value independent
        of the rows beside it (tests/queries/test_synthetic_reuse.py).
        """
        fitted = getattr(self, "_fit_nearest", None)
        if fitted is None or fitted[0] != _content_key(X):
            return np.arange(len(X))
        margin = sq_distance_margin(X, synthetic)
        return np.flatnonzero(fitted[1] <= self.radius_**2 + margin)

    def _log_weighted_ball_sum(self, X, synthetic):
        """``Σ_i 1[d(g_i, z) ≤ ε] · (−log d(g_i, z))`` per row, in bounded pairwise blocks.

        Near-copies get exact distances (see :func:`~sklearn_mace.utils.sq_distance_blocks`):
        a copy of a synthetic record has ``d = 0``, floored at ``min_distance``, not rounding
        noise.
        """
        import torch

        out = np.empty((len(X), 1))
        eps_sq, floor_sq = self.radius_**2, self.min_distance**2
        blocks = sq_distance_blocks(
            X, synthetic, device=self.device, max_chunk_bytes=self.max_chunk_bytes
        )
        for rows, d2 in blocks:
            inside = d2 <= eps_sq
            # −log d = −½ log d², with d floored at min_distance
            log_d = d2.clamp_(min=floor_sq).log_().mul_(-0.5)
            out[rows, 0] = to_numpy(torch.where(inside, log_d, 0.0).sum(dim=1))
        return out
