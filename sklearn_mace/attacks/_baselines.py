"""The published baselines DOMIAS compares against (DOMIAS §4, Table 1), as classifiers.

Each is fitted like :class:`DOMIASAttack` on synthetic rows stacked on reference rows
(y = 1 / 0) and scores records, larger = more likely a member:

* :class:`SyntheticDensityAttack` — the Eq. 1 ablation: ``log p_G(x)`` alone.
* :class:`LOGANAttack` — LOGAN D1 (Hayes et al. 2019): a classifier of synthetic vs
  reference rows, trained on both classes.
* :class:`MonteCarloAttack` — MC (Hilprecht et al. 2019): the fraction of synthetic rows
  in an ε-ball around ``x``.
* :class:`GANLeaksAttack` — GAN-leaks 0 (Chen et al. 2020): minus the distance to the nearest
  synthetic row; ``calibrated=True`` is GAN-leaks CAL, calibrated by the distance to the
  nearest reference row.

Except LOGAN, whose classifier has its own posterior, ``decision_function`` is the raw score
minus ``threshold_``: the cut that best separates (Youden's J) the fitted synthetic rows from
the reference rows, each scored without its own self-match. Scores, not the cut, are what
AUC, TPR at low FPR and top-q precision use.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context, clone
from sklearn.metrics import roc_curve
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..density import BANDWIDTH_RULES
from ..utils import count_within_radius, nearest_sq_distances
from ._densities import fit_log_density
from ._synthetic import SyntheticDataAttack

__all__ = ["GANLeaksAttack", "LOGANAttack", "MonteCarloAttack", "SyntheticDensityAttack"]


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


class SyntheticDensityAttack(_ThresholdedScoreAttack):
    """The Eq. 1 ablation of DOMIAS: a record's synthetic-data density ``log p_G(x)``.

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

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.attacks import SyntheticDensityAttack
    >>> rng = np.random.default_rng(0)
    >>> attack = SyntheticDensityAttack(device="cpu").fit_synthetic_reference(
    ...     rng.normal(size=(200, 2)), rng.normal(size=(200, 2)))
    >>> attack.attack_score(np.zeros((1, 2))).shape
    (1,)
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
        self.density_synthetic_ = fit_log_density(self, synthetic, role="synthetic")
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


class MonteCarloAttack(_ThresholdedScoreAttack):
    """MC (Hilprecht et al. 2019): fraction of synthetic rows within ``ε`` of a record.

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


class GANLeaksAttack(_ThresholdedScoreAttack):
    """GAN-leaks (Chen et al. 2020): closeness to the nearest synthetic row.

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


def _default_classifier(random_state):
    return make_pipeline(
        StandardScaler(),
        MLPClassifier(hidden_layer_sizes=(64, 64), max_iter=500, random_state=random_state),
    )


class LOGANAttack(SyntheticDataAttack):
    """LOGAN D1 (Hayes et al. 2019): a classifier trained on synthetic vs reference rows.

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
