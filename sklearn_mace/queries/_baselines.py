"""The published baselines DOMIAS compares against (DOMIAS §4), as query transformers.

* :class:`GANLeaksQuery` — GAN-leaks 0 and CAL (Chen et al. 2020): closeness to the nearest
  synthetic row, calibrated by the nearest reference row.
* :class:`LOGANQuery` — LOGAN D1 (Hayes et al. 2019): a classifier of synthetic vs
  reference rows, trained on both classes.

MC (Hilprecht et al. 2019) is :class:`~sklearn_mace.queries.MonteCarloQuery` with
``weighting="count"`` fitted on the target records. Each column is a membership score,
larger = more likely a member.
"""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._neighbors import nearest_sq_distances
from ..utils._sklearn_compat import HasMethods, StrOptions, _fit_context
from ..utils._torch import TorchDevice
from ._base import QueryFeatureNamesMixin
from ._scale import apply_preprocessor, prepared_rows
from ._synthetic import validated_rows

__all__ = ["GANLeaksQuery", "LOGANQuery"]


class GANLeaksQuery(QueryFeatureNamesMixin, TransformerMixin, BaseEstimator):
    """GAN-leaks (Chen et al. 2020): ``−min_g d(x, g)``, calibrated ``+ min_r d(x, r)`` (CAL).

    ``reference=None`` (GAN-leaks 0): ``Q(x) = −min_g d(x, g)`` over the synthetic rows.
    With ``reference`` (GAN-leaks CAL): ``Q(x) = −min_g d(x, g) + min_r d(x, r)``, the
    reconstruction loss calibrated by that of a reference model (here the reference rows,
    as in DOMIAS §4). With the default ``metric="sqeuclidean"`` (the L2 reconstruction loss
    of the paper) the column is the log of the reference implementation's scores
    ``exp(−d²_G)`` and ``exp(−d²_G + d²_R)`` (``domias`` 0.0.5 ``GAN_leaks``,
    ``GAN_leaks_cal``), so it ranks records exactly as they do. ``metric="euclidean"``
    calibrates plain distances instead, which ranks CAL differently.

    One exact nearest-neighbour pass per transformed record over each set: the cost is
    linear in the synthetic (and reference) rows, with no synthetic × synthetic pass.

    Parameters
    ----------
    synthetic : array-like of shape (n_synthetic, n_features)
        The released synthetic rows.
    reference : array-like of shape (n_reference, n_features), default=None
        The attacker's reference rows; ``None`` for GAN-leaks 0.
    metric : {"sqeuclidean", "euclidean"}, default="sqeuclidean"
        ``d``.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where the nearest-neighbour search runs. On the CPU, threads are chosen per pass
        (docs/design.md, "Devices and threads").
    preprocessor : transformer or None, default=None
        Applied to the records and the constructor rows alike: a clone fitted on
        ``synthetic`` (and ``reference``) stacked. A transformer placed *before* this query
        in a ``Pipeline`` changes the records only (``fit`` then warns,
        :class:`~sklearn_mace.ScaleMismatchWarning`).

    Attributes
    ----------
    n_features_in_ : int
    preprocessor_ : transformer or None
        The fitted clone of ``preprocessor``.

    References
    ----------
    Chen, Yu, Zhang, Fritz, "GAN-Leaks: A Taxonomy of Membership Inference Attacks against
    Generative Models", CCS 2020 (§5, calibration); DOMIAS §4.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.queries import GANLeaksQuery
    >>> synthetic, reference = np.array([[0.0, 0.0]]), np.array([[3.0, 0.0]])
    >>> GANLeaksQuery(synthetic, reference).fit_transform([[1.0, 0.0]])  # -1 + 4
    array([[3.]])
    """

    _parameter_constraints = {
        "synthetic": ["array-like"],
        "reference": ["array-like", None],
        "metric": [StrOptions({"sqeuclidean", "euclidean"})],
        "device": [str, TorchDevice],
        "preprocessor": [HasMethods(["fit", "transform"]), None],
    }

    def __init__(
        self, synthetic, reference=None, *, metric="sqeuclidean", device="auto", preprocessor=None
    ):
        self.synthetic = synthetic
        self.reference = reference
        self.metric = metric
        self.device = device
        self.preprocessor = preprocessor

    def _rows(self, X, *, fitting):
        sets = {"synthetic": validated_rows(self.synthetic, "synthetic", X.shape[1])}
        if self.reference is not None:
            sets["reference"] = validated_rows(self.reference, "reference", X.shape[1])
        X, sets = prepared_rows(self, X, sets, fitting=fitting)
        return X, sets["synthetic"], sets.get("reference")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Validate ``X`` against the constructor rows; learns nothing.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records (only their width is used, to check the constructor rows).
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted query (``n_features_in_`` set).
        """
        X = validate_data(self, X, dtype=np.float64)
        self._rows(X, fitting=True)
        self._n_features_out = 1
        return self

    def _distance(self, X, Y):
        sq = nearest_sq_distances(X, Y, device=self.device)[:, 0]
        return sq if self.metric == "sqeuclidean" else np.sqrt(sq)

    def transform(self, X):
        """``−d_G(x)`` or ``−d_G(x) + d_R(x)`` per row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to score, with the columns of ``synthetic``.

        Returns
        -------
        Q : ndarray of shape (n_samples, 1)
            Larger = closer to the synthetic rows than expected = more likely a member.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        X, synthetic, reference = self._rows(X, fitting=False)
        score = -self._distance(X, synthetic)
        if reference is not None:
            score += self._distance(X, reference)
        return score.reshape(-1, 1)


def _default_classifier(random_state):
    return make_pipeline(
        StandardScaler(),
        MLPClassifier(hidden_layer_sizes=(64, 64), max_iter=500, random_state=random_state),
    )


class LOGANQuery(QueryFeatureNamesMixin, TransformerMixin, BaseEstimator):
    """LOGAN D1 (Hayes et al. 2019): log-odds of "synthetic" from a synthetic-vs-reference model.

    In ``fit`` a classifier is trained on the synthetic rows (class 1) and the reference rows
    (class 0); the query is its log-odds ``log P(synthetic | x) − log P(reference | x)``,
    larger = more likely a member. The reference implementation's sampler draws only
    synthetic rows, so its classifier never sees a reference row; here both classes are
    used.

    Parameters
    ----------
    synthetic : array-like of shape (n_synthetic, n_features)
        The released synthetic rows.
    reference : array-like of shape (n_reference, n_features)
        The attacker's reference rows.
    classifier : estimator with predict_proba, default=None
        Cloned before fitting. ``None``: standardisation + a 64-64 ``MLPClassifier``.
    random_state : int, RandomState instance or None, default=None
        Passed to the default classifier.
    preprocessor : transformer or None, default=None
        Applied to the records and the constructor rows alike: a clone fitted on
        ``synthetic`` and ``reference`` stacked. A transformer placed *before* this query in
        a ``Pipeline`` changes the records only (``fit`` then warns,
        :class:`~sklearn_mace.ScaleMismatchWarning`).

    Attributes
    ----------
    classifier_ : estimator
        The fitted clone.
    n_features_in_ : int
    preprocessor_ : transformer or None
        The fitted clone of ``preprocessor``.

    References
    ----------
    Hayes, Melis, Danezis, De Cristofaro, "LOGAN: Membership Inference Attacks Against
    Generative Models", PoPETs 2019, discriminative setting D1; DOMIAS §4.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_mace.queries import LOGANQuery
    >>> rng = np.random.default_rng(0)
    >>> query = LOGANQuery(rng.normal(2, 1, (100, 1)), rng.normal(-2, 1, (100, 1)),
    ...                    classifier=LogisticRegression())
    >>> Q = query.fit_transform([[2.0], [-2.0]])
    >>> bool(Q[0, 0] > 0 > Q[1, 0])
    True
    """

    _parameter_constraints = {
        "synthetic": ["array-like"],
        "reference": ["array-like"],
        "classifier": [HasMethods(["fit", "predict_proba"]), None],
        "random_state": ["random_state"],
        "preprocessor": [HasMethods(["fit", "transform"]), None],
    }

    def __init__(
        self, synthetic, reference, *, classifier=None, random_state=None, preprocessor=None
    ):
        self.synthetic = synthetic
        self.reference = reference
        self.classifier = classifier
        self.random_state = random_state
        self.preprocessor = preprocessor

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Train the classifier on the synthetic (1) and reference (0) rows; validate ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records (only their width is used, to check the constructor rows).
        y : None
            Ignored: the classes are the sources of the constructor rows.

        Returns
        -------
        self : object
            The fitted query (``classifier_`` set).
        """
        X = validate_data(self, X, dtype=np.float64)
        sets = {
            "synthetic": validated_rows(self.synthetic, "synthetic", X.shape[1]),
            "reference": validated_rows(self.reference, "reference", X.shape[1]),
        }
        _, sets = prepared_rows(self, X, sets, fitting=True)
        synthetic, reference = sets["synthetic"], sets["reference"]
        base = self.classifier
        base = _default_classifier(self.random_state) if base is None else clone(base)
        source = np.r_[np.ones(len(synthetic), dtype=int), np.zeros(len(reference), dtype=int)]
        self.classifier_ = base.fit(np.vstack([synthetic, reference]), source)
        self._n_features_out = 1
        return self

    def transform(self, X):
        """Log-odds of "synthetic" per row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to score, with the columns of ``synthetic`` and ``reference``.

        Returns
        -------
        Q : ndarray of shape (n_samples, 1)
            ``log P(synthetic | x) − log P(reference | x)`` of ``classifier_`` (probabilities
            clipped at ``1e-300``); larger = more likely a member.
        """
        check_is_fitted(self)
        X = apply_preprocessor(self, validate_data(self, X, dtype=np.float64, reset=False))
        column = list(self.classifier_.classes_).index(1)
        p = np.clip(self.classifier_.predict_proba(X)[:, column], 1e-300, 1.0)
        q = np.clip(1.0 - p, 1e-300, 1.0)
        return (np.log(p) - np.log(q)).reshape(-1, 1)
