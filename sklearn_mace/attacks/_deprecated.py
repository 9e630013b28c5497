"""Deprecated synthetic-data attacks (one release): fitted on stacked ``(X, y)`` rows.

.. deprecated::
    These classes fit on the synthetic rows stacked on the reference rows, with ``y``
    meaning the source of each row (1 = synthetic, 0 = reference) in ``fit`` and
    membership in ``score``: against the attacker contract (``docs/design.md``), under which
    ``y`` always means membership. They are excluded from the contract and its tests and
    will be removed in the next release. Use the query transformers, whose column is the
    membership score (larger = member), with :class:`ThresholdAttack` for a hard rule:

    * ``SyntheticDensityAttack`` → :class:`~sklearn_mace.queries.SyntheticDensityQuery`;
    * ``LOGANAttack`` → :class:`~sklearn_mace.queries.LOGANQuery`;
    * ``MonteCarloAttack`` → :class:`~sklearn_mace.queries.MonteCarloQuery` with
      ``weighting="count"`` fitted on the targets;
    * ``GANLeaksAttack`` → :class:`~sklearn_mace.queries.GANLeaksQuery`
      (``calibrated=True``: pass ``reference``; ``metric="euclidean"`` ranks as before);
    * ``stack_synthetic_reference`` / ``SyntheticDataAttack`` → constructor data
      (``DOMIASQuery(synthetic, reference)``).

Old behaviour is kept: ``decision_function`` is the raw score minus ``threshold_``, the cut
that best separates (Youden's J) the fitted synthetic rows from the reference rows, each
scored without its own self-match; ``score`` is ``2·accuracy − 1`` at the sample's class mix.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.metrics import roc_curve
from sklearn.utils import deprecated
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .._validation import fit_membership_labels
from ..base import AttackerMixin
from ..density._fit import fit_log_density
from ..density._kde import BANDWIDTH_RULES
from ..metrics._membership import membership_advantage
from ..queries._baselines import _default_classifier
from ..utils._neighbors import count_within_radius, nearest_sq_distances

__all__ = [
    "GANLeaksAttack",
    "LOGANAttack",
    "MonteCarloAttack",
    "SyntheticDataAttack",
    "SyntheticDensityAttack",
    "stack_synthetic_reference",
]

_REMOVAL = "it will be removed in the next release (issue #11)"


@deprecated(f"use constructor data (DOMIASQuery(synthetic, reference)); {_REMOVAL}")
def stack_synthetic_reference(synthetic, reference):
    """``X, y`` for fitting a synthetic-data attack from separate arrays.

    Parameters
    ----------
    synthetic : array-like of shape (n_synthetic, n_features)
        The released synthetic rows ``D_syn``.
    reference : array-like of shape (n_reference, n_features)
        The attacker's real rows from the population, ``D_ref`` (DOMIAS §2).

    Returns
    -------
    X : ndarray of shape (n_synthetic + n_reference, n_features)
    y : ndarray of shape (n_synthetic + n_reference,)
        1 for synthetic rows, 0 for reference rows.

    Examples
    --------
    >>> import warnings
    >>> from sklearn_mace.attacks import stack_synthetic_reference
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     X, y = stack_synthetic_reference([[0.0, 1.0]], [[2.0, 3.0], [4.0, 5.0]])
    >>> y
    array([1, 0, 0])
    """
    arrays = {}
    for name, data in (("synthetic", synthetic), ("reference", reference)):
        arrays[name] = check_array(data, dtype=np.float64, ensure_min_samples=0, input_name=name)
        if len(arrays[name]) == 0:
            raise ValueError(f"{name} has no rows; both synthetic and reference rows are needed.")
    syn, ref = arrays["synthetic"], arrays["reference"]
    if syn.shape[1] != ref.shape[1]:
        raise ValueError(
            f"synthetic and reference must have the same columns; got {syn.shape[1]} "
            f"synthetic and {ref.shape[1]} reference features."
        )
    y = np.r_[np.ones(len(syn), dtype=int), np.zeros(len(ref), dtype=int)]
    return np.vstack([syn, ref]), y


def _stack(synthetic, reference):
    return stack_synthetic_reference.__wrapped__(synthetic, reference)


def _source_labels(y):
    """``(source, classes)``: ``source`` 1 = synthetic, 0 = reference; errors say what y means.

    ``{1, 0 or -1, bool}`` give ``classes = [0, 1]``; any other pair of labels is accepted
    the scikit-learn way, the greater label marking the synthetic rows.
    """
    try:
        return fit_membership_labels(y)
    except ValueError as exc:
        raise ValueError(
            f"{exc} Here y marks the source of each row of X: 1 = synthetic, 0 or -1 = "
            "reference; both synthetic and reference rows are needed."
        ) from exc


class SyntheticDataAttack(AttackerMixin, BaseEstimator):
    """Deprecated base class: fit on stacked synthetic + reference rows (y = source).

    .. deprecated:: Subclassing it warns; it is excluded from the attacker contract (``y``
       means the source of a row in ``fit``) and will be removed in the next release. Use
       the query transformers of :mod:`sklearn_mace.queries` with constructor data.

    Subclasses implement ``fit(X, y)``, starting with
    ``synthetic, reference = self._fit_sources(X, y)``, and ``decision_function``, whose
    queries go through ``self._validate_query(X)``; ``decision_function(X) > 0`` is the
    membership guess of ``predict`` (the threshold the class documents). ``classes_`` is
    ``[0, 1]`` for 0/1 labels (any other label pair is echoed, the greater one meaning
    synthetic); in ``fit`` the classes mean reference / synthetic, at prediction time
    non-member / member.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__ != __name__:  # the deprecated attacks here warn on instantiation
            warnings.warn(
                f"Class SyntheticDataAttack is deprecated; use the query transformers of "
                f"sklearn_mace.queries; {_REMOVAL}",
                FutureWarning,
                stacklevel=2,
            )

    def _fit_sources(self, X, y):
        """Validate ``(X, y)``, set ``classes_``; return the synthetic and reference rows."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        source, self.classes_ = _source_labels(y)
        self.n_synthetic_ = int(source.sum())
        self.n_reference_ = int(len(source) - self.n_synthetic_)
        return X[source == 1], X[source == 0]

    def score(self, X, y, sample_weight=None):
        """Membership advantage ``2·accuracy − 1`` at the sample's class mix (old behaviour).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Membership labels.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        advantage : float
        """
        m_true = self._encode_membership(y)
        m_pred = self._encode_membership(self.predict(X), input_name="predict(X)")
        return membership_advantage(m_true, m_pred, sample_weight=sample_weight)

    def _validate_query(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def fit_synthetic_reference(self, synthetic, reference):
        """Fit from separate arrays: ``fit(*stack_synthetic_reference(synthetic, reference))``.

        Parameters
        ----------
        synthetic : array-like of shape (n_synthetic, n_features)
        reference : array-like of shape (n_reference, n_features)

        Returns
        -------
        self : object
        """
        return self.fit(*_stack(synthetic, reference))

    def predict(self, X):
        """Membership guess: 1 where ``decision_function(X) > 0``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records whose membership is guessed.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            1 = member (over-represented by the generator), 0 = non-member.
        """
        guess = (self.decision_function(X) > 0).astype(int)
        return self.classes_[guess]


def youden_threshold(score_synthetic, score_reference):
    """The cut ``t`` maximizing TPR − FPR of ``score > t`` (synthetic = positive).

    ``t`` lies midway between two consecutive distinct scores, so no fitted row sits on it.
    """
    scores = np.r_[score_synthetic, score_reference]
    labels = np.r_[np.ones(len(score_synthetic)), np.zeros(len(score_reference))]
    fpr, tpr, thresholds = roc_curve(labels, scores, drop_intermediate=False)
    best = int(np.argmax(tpr - fpr))
    distinct = np.unique(scores)
    if best == 0 or thresholds[best] <= distinct[0]:
        return float(distinct[0]) - 1.0
    lower = distinct[np.searchsorted(distinct, thresholds[best]) - 1]
    return float((thresholds[best] + lower) / 2)


def _nearest_distance(X, Y, device, *, leave_one_out=False):
    """Euclidean distance from each row of X to the nearest row of Y (excluding itself)."""
    k = 2 if leave_one_out else 1
    return np.sqrt(nearest_sq_distances(X, Y, k=k, device=device)[:, k - 1])


def _need_two_rows(synthetic, reference):
    for name, rows in (("synthetic", synthetic), ("reference", reference)):
        if len(rows) < 2:
            raise ValueError(
                f"at least 2 {name} rows are needed (a row's score leaves out its "
                f"own match); got {len(rows)}."
            )


class _ThresholdedScoreAttack(SyntheticDataAttack):
    """A score attack: ``decision_function = score − threshold_`` (see the module doc)."""

    def decision_function(self, X):
        """The attack's score minus ``threshold_``; larger = more likely a member.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records to attack.

        Returns
        -------
        score : ndarray of shape (n_samples,)
            ``attack_score(X) - threshold_``; positive where the guess is "member".
        """
        return self.attack_score(X) - self.threshold_


@deprecated(f"use sklearn_mace.queries.SyntheticDensityQuery(synthetic); {_REMOVAL}")
class SyntheticDensityAttack(_ThresholdedScoreAttack):
    """The Eq. 1 ablation of DOMIAS: a record's synthetic-data density ``log p_G(x)``.

    .. deprecated:: Excluded from the attacker contract (``y`` is the source of a row in
       ``fit``); removed in the next release. See the module docstring for the replacement.

    The assumption of earlier black-box attacks (DOMIAS Eq. 1, ``A(x) = f(p_G(x))``), i.e.
    DOMIAS with a flat ``p_R``; the reference rows only set ``threshold_``.

    Parameters
    ----------
    density : {"kde", "bnaf"} or estimator, default="kde"
        As in :class:`DOMIASAttack`.
    bandwidth : {"scott", "silverman", "cv"} or float, default="scott"
        Bandwidth of the KDE of ``p_G``, as in :class:`DOMIASAttack`.
    cv : int, default=5
        Folds of the ``bandwidth="cv"`` search.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where the densities are evaluated.
    random_state : int, RandomState instance or None, default=None
        Seeds the fold draw of ``bandwidth="cv"`` and the BNAF training.
    verbose : int, default=0
        Progress output of the density fit.

    Attributes
    ----------
    density_synthetic_ : object
        The fitted ``p_G``.
    threshold_ : float
        Cut on ``log p_G`` best separating the synthetic from the reference fit rows.

    References
    ----------
    van Breugel et al., AISTATS 2023, Eq. 1 and §5.2 (ablation "Eq. 1").

    """

    _parameter_constraints = {
        "density": [StrOptions({"kde", "bnaf"}), HasMethods(["fit", "score_samples"])],
        "bandwidth": [
            StrOptions(set(BANDWIDTH_RULES) | {"cv"}),
            Interval(Real, 0, None, closed="neither"),
        ],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        density="kde",
        *,
        bandwidth="scott",
        cv=5,
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.density = density
        self.bandwidth = bandwidth
        self.cv = cv
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit ``p_G`` on the synthetic rows (y = 1) and the cut on both row sets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Synthetic rows stacked on reference rows
            (:func:`~sklearn_mace.attacks.stack_synthetic_reference`).
        y : array-like of shape (n_samples,)
            Source of each row: 1 = synthetic, 0 or -1 = reference.

        Returns
        -------
        self : object
            The fitted attacker.
        """
        synthetic, reference = self._fit_sources(X, y)
        self.density_synthetic_ = fit_log_density(
            synthetic,
            density=self.density,
            bandwidth=self.bandwidth,
            cv=self.cv,
            device=self.device,
            random_state=self.random_state,
            verbose=self.verbose,
        )
        self.threshold_ = youden_threshold(
            self.density_synthetic_.score_samples(synthetic),
            self.density_synthetic_.score_samples(reference),
        )
        return self

    def attack_score(self, X):
        """``log p_G(x)`` (Eq. 1 up to the monotone ``f``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of the records to attack.

        Returns
        -------
        score : ndarray of shape (n_samples,)
            Membership score of each record, larger = more likely a member.
        """
        X = self._validate_query(X)
        return np.asarray(self.density_synthetic_.score_samples(X), dtype=float)


@deprecated(f"use sklearn_mace.queries.MonteCarloQuery(weighting='count'); {_REMOVAL}")
class MonteCarloAttack(_ThresholdedScoreAttack):
    """MC (Hilprecht et al. 2019): fraction of synthetic rows within ``ε`` of a record.

    .. deprecated:: Excluded from the attacker contract (``y`` is the source of a row in
       ``fit``); removed in the next release. See the module docstring for the replacement.

    ``score(x) = |{g ∈ D_syn : ‖x − g‖ <= ε}| / |D_syn|``, a Monte-Carlo estimate of the
    generator's mass near ``x``. By default ``ε`` is the median over the reference rows of
    their distance to the nearest synthetic row: the reference implementation takes this
    median over the test rows, which makes the score depend on the batch; reference rows are
    population draws like the non-members of the test set.

    Parameters
    ----------
    radius : float > 0 or None, default=None
        ``ε`` in data units; ``None`` = the median rule above.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where the distances are computed.

    Attributes
    ----------
    radius_ : float
    threshold_ : float

    References
    ----------
    Hilprecht, Härterich, Bernau, "Monte Carlo and Reconstruction Membership Inference
    Attacks against Generative Models", PoPETs 2019; DOMIAS §4 ("MC").

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import roc_auc_score
    >>> rng = np.random.default_rng(0)
    >>> members = rng.normal(size=(20, 2))
    >>> synthetic = members + 0.05 * rng.normal(size=(20, 2))  # a generator that copies
    >>> reference, non_members = rng.normal(size=(40, 2)), rng.normal(size=(20, 2))
    >>> X_test, membership = np.vstack([members, non_members]), np.repeat([1, 0], 20)
    >>> from sklearn_mace.attacks import MonteCarloAttack
    >>> attack = MonteCarloAttack(device="cpu").fit_synthetic_reference(synthetic, reference)
    >>> round(roc_auc_score(membership, attack.decision_function(X_test)), 2)
    0.75
    """

    _parameter_constraints = {
        "radius": [Interval(Real, 0, None, closed="neither"), None],
        "device": [str],
    }

    def __init__(self, radius=None, *, device="auto"):
        self.radius = radius
        self.device = device

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Store the synthetic rows, fix ``ε`` and the cut.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Synthetic rows stacked on reference rows
            (:func:`~sklearn_mace.attacks.stack_synthetic_reference`).
        y : array-like of shape (n_samples,)
            Source of each row: 1 = synthetic, 0 or -1 = reference.

        Returns
        -------
        self : object
            The fitted attacker.
        """
        synthetic, reference = self._fit_sources(X, y)
        _need_two_rows(synthetic, reference)
        self.synthetic_ = synthetic
        if self.radius is None:
            self.radius_ = float(np.median(_nearest_distance(reference, synthetic, self.device)))
            if self.radius_ == 0.0:
                # An ε-ball of radius 0 counts only exact copies: a degenerate score.
                raise ValueError(
                    "radius=None takes the median distance from the reference rows to their "
                    "nearest synthetic row, which is 0 here (at least half of the reference "
                    "rows are also synthetic rows); pass a radius > 0."
                )
        else:
            self.radius_ = float(self.radius)
        n = len(synthetic)
        own = (count_within_radius(synthetic, synthetic, self.radius_, device=self.device) - 1) / n
        other = count_within_radius(reference, synthetic, self.radius_, device=self.device) / n
        self.threshold_ = youden_threshold(own, other)
        return self

    def attack_score(self, X):
        """Fraction of synthetic rows within ``radius_`` of each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of the records to attack.

        Returns
        -------
        score : ndarray of shape (n_samples,)
            Membership score of each record, larger = more likely a member.
        """
        X = self._validate_query(X)
        counts = count_within_radius(X, self.synthetic_, self.radius_, device=self.device)
        return counts / len(self.synthetic_)


@deprecated(f"use sklearn_mace.queries.GANLeaksQuery(synthetic[, reference]); {_REMOVAL}")
class GANLeaksAttack(_ThresholdedScoreAttack):
    """GAN-leaks (Chen et al. 2020): closeness to the nearest synthetic row.

    .. deprecated:: Excluded from the attacker contract (``y`` is the source of a row in
       ``fit``); removed in the next release. See the module docstring for the replacement.

    ``calibrated=False`` (GAN-leaks 0): ``score(x) = −min_g ‖x − g‖`` over the synthetic
    rows (the reference implementation's ``exp(−min ‖x − g‖²)`` ranks records identically).
    ``calibrated=True`` (GAN-leaks CAL): ``score(x) = −(min_g ‖x − g‖ − min_r ‖x − r‖)``,
    calibrated by the nearest reference row (the reference's sigmoid is monotone, so the
    ranking is the same) — a DOMIAS ratio of KDEs with vanishing bandwidth (DOMIAS §4).

    Parameters
    ----------
    calibrated : bool, default=False
        Subtract the distance to the nearest reference row (GAN-leaks CAL).
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where the distances are computed.

    Attributes
    ----------
    threshold_ : float

    References
    ----------
    Chen, Yu, Zhang, Fritz, "GAN-Leaks: A Taxonomy of Membership Inference Attacks against
    Generative Models", CCS 2020; DOMIAS §4.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import roc_auc_score
    >>> rng = np.random.default_rng(0)
    >>> members = rng.normal(size=(20, 2))
    >>> synthetic = members + 0.05 * rng.normal(size=(20, 2))  # a generator that copies
    >>> reference, non_members = rng.normal(size=(40, 2)), rng.normal(size=(20, 2))
    >>> X_test, membership = np.vstack([members, non_members]), np.repeat([1, 0], 20)
    >>> from sklearn_mace.attacks import GANLeaksAttack
    >>> attack = GANLeaksAttack(device="cpu").fit_synthetic_reference(synthetic, reference)
    >>> round(roc_auc_score(membership, attack.decision_function(X_test)), 2)
    0.96
    """

    _parameter_constraints = {"calibrated": ["boolean"], "device": [str]}

    def __init__(self, calibrated=False, *, device="auto"):
        self.calibrated = calibrated
        self.device = device

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Store the synthetic (and reference) rows and fix the cut.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Synthetic rows stacked on reference rows
            (:func:`~sklearn_mace.attacks.stack_synthetic_reference`).
        y : array-like of shape (n_samples,)
            Source of each row: 1 = synthetic, 0 or -1 = reference.

        Returns
        -------
        self : object
            The fitted attacker.
        """
        synthetic, reference = self._fit_sources(X, y)
        _need_two_rows(synthetic, reference)
        self.synthetic_, self.reference_ = synthetic, reference
        dev = self.device
        own = -_nearest_distance(synthetic, synthetic, dev, leave_one_out=True)
        other = -_nearest_distance(reference, synthetic, dev)
        if self.calibrated:
            own += _nearest_distance(synthetic, reference, dev)
            other += _nearest_distance(reference, reference, dev, leave_one_out=True)
        self.threshold_ = youden_threshold(own, other)
        return self

    def attack_score(self, X):
        """``−d_syn(x)``, or ``−(d_syn(x) − d_ref(x))`` when calibrated.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of the records to attack.

        Returns
        -------
        score : ndarray of shape (n_samples,)
            Membership score of each record, larger = more likely a member.
        """
        X = self._validate_query(X)
        score = -_nearest_distance(X, self.synthetic_, self.device)
        if self.calibrated:
            score += _nearest_distance(X, self.reference_, self.device)
        return score


@deprecated(f"use sklearn_mace.queries.LOGANQuery(synthetic, reference); {_REMOVAL}")
class LOGANAttack(SyntheticDataAttack):
    """LOGAN D1 (Hayes et al. 2019): a classifier trained on synthetic vs reference rows.

    .. deprecated:: Excluded from the attacker contract (``y`` is the source of a row in
       ``fit``); removed in the next release. See the module docstring for the replacement.

    The classifier's log-odds of "synthetic" is the membership score. It is fitted on both
    classes of the stacked rows (the reference implementation's sampler draws only
    synthetic rows, so its classifier never sees a reference row).

    Parameters
    ----------
    classifier : estimator with predict_proba, default=None
        Cloned before fitting. ``None``: standardisation + a 64-64 ``MLPClassifier``.
    random_state : int, RandomState instance or None, default=None
        Passed to the default classifier.

    Attributes
    ----------
    classifier_ : estimator
        The fitted clone.

    References
    ----------
    Hayes, Melis, Danezis, De Cristofaro, "LOGAN: Membership Inference Attacks Against
    Generative Models", PoPETs 2019, discriminative setting D1; DOMIAS §4.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import roc_auc_score
    >>> rng = np.random.default_rng(0)
    >>> members = rng.normal(size=(20, 2))
    >>> synthetic = members + 0.05 * rng.normal(size=(20, 2))  # a generator that copies
    >>> reference, non_members = rng.normal(size=(40, 2)), rng.normal(size=(20, 2))
    >>> X_test, membership = np.vstack([members, non_members]), np.repeat([1, 0], 20)
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn_mace.attacks import LOGANAttack
    >>> attack = LOGANAttack(classifier=KNeighborsClassifier(n_neighbors=3))
    >>> attack = attack.fit_synthetic_reference(synthetic, reference)
    >>> round(roc_auc_score(membership, attack.decision_function(X_test)), 2)
    0.66
    """

    _parameter_constraints = {
        "classifier": [HasMethods(["fit", "predict_proba"]), None],
        "random_state": ["random_state"],
    }

    def __init__(self, classifier=None, *, random_state=None):
        self.classifier = classifier
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the classifier on the stacked rows, 1 = synthetic.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Synthetic rows stacked on reference rows
            (:func:`~sklearn_mace.attacks.stack_synthetic_reference`).
        y : array-like of shape (n_samples,)
            Source of each row: 1 = synthetic, 0 or -1 = reference.

        Returns
        -------
        self : object
            The fitted attacker.
        """
        synthetic, reference = self._fit_sources(X, y)
        base = self.classifier
        base = _default_classifier(self.random_state) if base is None else clone(base)
        source = np.r_[np.ones(len(synthetic)), np.zeros(len(reference))]
        self.classifier_ = base.fit(np.vstack([synthetic, reference]), source)
        return self

    def predict_proba(self, X):
        """``[P(reference | x), P(synthetic | x)]`` from the classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of the records to attack.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is P(member | query), column 0 its complement.
        """
        X = self._validate_query(X)
        synthetic = list(self.classifier_.classes_).index(1.0)
        p = self.classifier_.predict_proba(X)[:, synthetic]
        return np.column_stack([1.0 - p, p])

    def decision_function(self, X):
        """Log-odds ``log P(synthetic | x) − log P(reference | x)`` of the classifier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of the records to attack.

        Returns
        -------
        decision : ndarray of shape (n_samples,)
            Positive where the guess is "member" (for a probabilistic attacker: the log
            posterior odds).
        """
        check_is_fitted(self)
        p = np.clip(self.predict_proba(X)[:, 1], 1e-300, 1.0)
        q = np.clip(1.0 - p, 1e-300, 1.0)
        return np.log(p) - np.log(q)
