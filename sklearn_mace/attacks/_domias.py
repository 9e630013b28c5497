"""DOMIAS: membership inference on synthetic data by the density ratio p_G / p_R."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import AttackerMixin, ScoreCutMixin
from ..density._fit import DENSITY_OPTIONS
from ..density._kde import BANDWIDTH_RULES
from ..queries._domias import fit_prepared_densities, log_density_ratio
from ..queries._scale import apply_preprocessor
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context
from ..utils._torch import TorchDevice
from ._threshold import fit_labels_and_prior, score_cut

__all__ = ["DOMIASAttack"]


class DOMIASAttack(AttackerMixin, ScoreCutMixin, BaseEstimator):
    """DOMIAS: guess "member" where the generator over-represents a record (Eq. 2).

    ``score_samples(x) = log p_G(x) − log p_R(x)``, with ``p_G`` fitted on the synthetic
    rows and ``p_R`` on the reference rows given to the constructor, computed in log space
    (DOMIAS Eq. 2, Thm. 1); ``predict`` says member where it exceeds the cut ``offset_``
    (``decision_function = score_samples − offset_``, as
    :class:`~sklearn.ensemble.IsolationForest`). It is
    ``make_pipeline(DOMIASQuery(synthetic, reference), ThresholdAttack(threshold))`` as one
    named estimator.

    ``fit(X, y=None)`` fits the densities on the constructor rows and the cut on ``X`` (the
    records under attack); ``y``, when given, is membership (1 = member) and only sets
    ``classes_`` and ``prior_``. ``score(X, y)`` is the membership advantage at ``prior_``
    (MACE Def. 1). There is no ``predict_proba``: the density ratio is not a posterior of
    membership (use ``make_pipeline(DOMIASQuery(...), BayesOptimalMIA())`` with labels).

    Parameters
    ----------
    synthetic : array-like of shape (n_synthetic, n_features)
        The released synthetic rows ``D_syn``.
    reference : array-like of shape (n_reference, n_features)
        The attacker's real rows from the population, ``D_ref`` (DOMIAS §2).
    density : {"kde", "bnaf", "gaussian"} or estimator, default="kde"
        As in :class:`~sklearn_mace.queries.DOMIASQuery`.
    bandwidth : {"scott", "silverman", "cv"} or float, default="scott"
        As in :class:`~sklearn_mace.queries.DOMIASQuery` (``"cv"``: cross-validated
        likelihood with the one-standard-error rule).
    threshold : float or "median", default=0.0
        The cut ``offset_``. ``0.0`` is the likelihood-ratio rule ``p_G(x) > p_R(x)``;
        ``"median"`` is the rule of DOMIAS App. A.1, the median of the scores of the records
        passed to ``fit`` (half of them are guessed members).
    cv : int >= 2, default=5
        Folds for ``bandwidth="cv"``.
    population_mean, population_cov : array-like, default=None
        Population statistics for ``density="gaussian"`` (App. C).
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where the KDE sums and BNAF training run. On the CPU, threads are chosen per pass
        (docs/design.md, "Devices and threads").
    random_state : int, RandomState instance or None, default=None
        ``bandwidth="cv"``'s subsample and folds, BNAF initialisation.
    verbose : int, default=0
        Progress bars of BNAF training.
    prior : float in (0, 1) or None, default=None
        ``prior_``: the membership prior of ``score``. ``None``: the member fraction of
        ``y``, or 0.5 when ``fit`` gets no labels.
    member_label : object, default=None
        The label of members in ``y``.
    preprocessor : transformer or None, default=None
        Applied to the records, ``synthetic`` and ``reference`` alike: a clone fitted on the
        synthetic and reference rows stacked (``preprocessor_``). Use it instead of a
        transformer placed before the attack in a ``Pipeline``, which changes the records
        only (``fit`` then warns, :class:`~sklearn_mace.ScaleMismatchWarning`); see
        docs/guide "Preprocessing records and constructor data".

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels of ``y`` (``[non-member, member]``), or ``[0, 1]`` without labels.
    prior_ : float
    offset_ : float
        The cut on ``score_samples``.
    density_synthetic_, density_reference_ : object
        The fitted ``p_G`` and ``p_R`` (``score_samples`` = log densities) on ``features_``.
    features_, ignored_features_ : ndarray of int
        Columns used, and columns left out as constant (see
        :class:`~sklearn_mace.queries.DOMIASQuery`).
    n_features_in_ : int
    preprocessor_ : transformer or None
        The fitted clone of ``preprocessor``.

    See Also
    --------
    sklearn_mace.queries.DOMIASQuery : the score as a query transformer.
    ThresholdAttack : the cut on any single score column.
    compare_attacks : AUC, accuracy at the median rule, TPR at low FPR, top-q precision.

    References
    ----------
    van Breugel, Sun, Qian, van der Schaar. "Membership Inference Attacks against Synthetic
    Data through Overfitting Detection", AISTATS 2023: Eq. 2, App. A.1 (median rule),
    App. C (prior-only reference).

    Examples
    --------
    >>> from sklearn.metrics import roc_auc_score
    >>> from sklearn_mace.attacks import DOMIASAttack
    >>> from sklearn_mace.datasets import make_planted_leak
    >>> data = make_planted_leak(n_synthetic=2000, n_reference=2000, leak_fraction=0.5,
    ...                          noise=0.2, random_state=0)
    >>> attack = DOMIASAttack(data.synthetic, data.reference, threshold="median", device="cpu")
    >>> attack.fit(data.X_test, data.membership)
    DOMIASAttack(...)
    >>> round(roc_auc_score(data.membership, attack.decision_function(data.X_test)), 2)
    0.86
    >>> round(attack.score(data.X_test, data.membership), 2)  # advantage at prior_ = 0.5
    0.58

    To standardise, give the scaler to the attack, which applies it to the records and to
    its own rows alike (a ``StandardScaler`` placed before it in a ``Pipeline`` would scale
    the records only):

    >>> from sklearn.preprocessing import StandardScaler
    >>> scaled = DOMIASAttack(data.synthetic, data.reference, threshold="median",
    ...                       preprocessor=StandardScaler(), device="cpu")
    >>> scaled.fit(data.X_test, data.membership)
    DOMIASAttack(...)
    >>> round(scaled.score(data.X_test, data.membership), 2)  # the same rule, scaled
    0.58
    """

    _parameter_constraints = {
        "synthetic": ["array-like"],
        "reference": ["array-like"],
        "density": [StrOptions(DENSITY_OPTIONS), HasMethods(["fit", "score_samples"])],
        "bandwidth": [
            StrOptions(set(BANDWIDTH_RULES) | {"cv"}),
            Interval(Real, 0, None, closed="neither"),
        ],
        "threshold": [StrOptions({"median"}), Interval(Real, None, None, closed="neither")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "population_mean": ["array-like", None],
        "population_cov": ["array-like", None],
        "device": [str, TorchDevice],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "prior": [Interval(Real, 0, 1, closed="neither"), None],
        "member_label": "no_validation",
        "preprocessor": [HasMethods(["fit", "transform"]), None],
    }

    def __init__(
        self,
        synthetic,
        reference,
        *,
        density="kde",
        bandwidth="scott",
        threshold=0.0,
        cv=5,
        population_mean=None,
        population_cov=None,
        device="auto",
        random_state=None,
        verbose=0,
        prior=None,
        member_label=None,
        preprocessor=None,
    ):
        self.synthetic = synthetic
        self.reference = reference
        self.density = density
        self.bandwidth = bandwidth
        self.threshold = threshold
        self.cv = cv
        self.population_mean = population_mean
        self.population_cov = population_cov
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.prior = prior
        self.member_label = member_label
        self.preprocessor = preprocessor

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The rule is not learnt from y (labels only set classes_ and prior_): no accuracy
        # on the training labels is promised.
        tags.classifier_tags.poor_score = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit ``p_G`` and ``p_R`` on the constructor rows and the cut on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The records under attack (they set the ``"median"`` cut).
        y : array-like of shape (n_samples,), default=None
            Membership labels, used for ``classes_`` and ``prior_`` only.

        Returns
        -------
        self : object
            The fitted attacker.
        """
        X = validate_data(self, X, dtype=np.float64)
        fit_labels_and_prior(self, y, len(X))  # labels first: their errors come first
        X = fit_prepared_densities(self, X, self.synthetic, self.reference)
        scores = log_density_ratio(self, X) if self.threshold == "median" else None
        self.offset_ = score_cut(scores, self.threshold)
        return self

    def score_samples(self, X):
        """DOMIAS score ``log p_G(x) − log p_R(x)`` (Eq. 2 in log space).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to attack.

        Returns
        -------
        score : ndarray of shape (n_samples,)
            Larger = more over-represented by the generator = more likely a member.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return log_density_ratio(self, apply_preprocessor(self, X))
