"""DOMIAS: membership inference on synthetic data by the density ratio p_G / p_R."""

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from ..density import BANDWIDTH_RULES
from ._densities import fit_log_density
from ._synthetic import SyntheticDataAttack

__all__ = ["DOMIASAttack"]

DENSITY_OPTIONS = {"kde", "bnaf", "gaussian"}


def _finite_log_ratio(log_num, log_den, name):
    score = np.asarray(log_num, dtype=float) - np.asarray(log_den, dtype=float)
    if np.isnan(score).any():
        raise ValueError(
            f"{name} is NaN for {int(np.isnan(score).sum())} rows: a density returned an "
            "undefined log density (e.g. -inf in both, from a compact kernel); use density='kde'."
        )
    return score


class DOMIASAttack(SyntheticDataAttack):
    """DOMIAS: score a record by how much the generator over-represents it (Eq. 2).

    ``decision_function(x) = log p_G(x) − log p_R(x)``, with ``p_G`` fitted on the synthetic
    rows and ``p_R`` on the reference rows, computed in log space (DOMIAS Eq. 2, Thm. 1). A
    record the generator over-represents relative to the population (a local overfit) is
    guessed to be a member of its training set.

    It is an ordinary binary classifier: ``fit(X, y)`` takes the synthetic rows stacked on
    the reference rows with ``y = 1`` synthetic / ``0`` reference (see
    :func:`stack_synthetic_reference` and :meth:`fit_synthetic_reference`), so
    ``GridSearchCV`` tunes it without membership labels. Test records are then scored;
    ``score(X_test, membership)`` is the membership advantage (MACE Def. 1).

    Parameters
    ----------
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
        set's covariance as ``scipy.stats.gaussian_kde``; a float is ``h`` in data units;
        ``"cv"`` picks each density's bandwidth by ``cv``-fold held-out log-likelihood
        (``h² Σ̂`` with ``h`` on a grid of multiples of Scott's factor).
    threshold : float or "median", default=0.0
        ``predict`` guesses "member" where the score exceeds it. ``0.0`` is the likelihood-
        ratio rule ``p_G(x) > p_R(x)`` and keeps ``predict == (decision_function > 0)``.
        ``"median"`` is the rule of DOMIAS App. A.1: the median of the scores of the records
        passed to ``predict`` (half of them are guessed members; the guesses depend on the
        batch, which is why it is not the default).
    cv : int >= 2, default=5
        Folds for ``bandwidth="cv"``.
    population_mean, population_cov : array-like, default=None
        Population statistics for ``density="gaussian"``: the mean (n_features,) and a
        covariance matrix or per-feature variances, where ``np.inf`` marks a feature nothing
        is known about (a flat prior, App. C). ``None`` uses the reference rows' moments.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where the KDE sums and BNAF training run.
    random_state : int, RandomState instance or None, default=None
        Folds of ``bandwidth="cv"`` and BNAF initialisation.
    verbose : int, default=0
        Progress bars of BNAF training.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``[0, 1]``.
    density_synthetic_, density_reference_ : object
        The fitted densities ``p_G`` and ``p_R`` (their ``score_samples`` are log densities).
    log_class_ratio_ : float
        ``log(n_synthetic / n_reference)`` of the fitted rows.
    n_synthetic_, n_reference_ : int
    n_features_in_ : int

    See Also
    --------
    SyntheticDensityAttack : the Eq. 1 ablation, ``p_G`` alone.
    compare_attacks : AUC, accuracy at the median rule, TPR at low FPR, top-q precision.

    Notes
    -----
    ``predict_proba(X)[:, 1] = σ(score + log_class_ratio_)`` is the posterior that a row is
    synthetic under the fitted class ratio (the ordinary classifier view). Its arg-max
    agrees with ``predict`` at ``threshold=0`` when synthetic and reference sets are equally
    large (the DOMIAS setting, 10 000 each) and otherwise differs by that ratio, a fact
    about how many rows were collected, not about membership.

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
    >>> attack = DOMIASAttack().fit_synthetic_reference(data.synthetic, data.reference)
    >>> score = attack.decision_function(data.X_test)  # log p_G(x) - log p_R(x)
    >>> round(roc_auc_score(data.membership, score), 2)
    0.86
    """

    _parameter_constraints = {
        "density": [StrOptions(DENSITY_OPTIONS), HasMethods(["fit", "score_samples"])],
        "bandwidth": [
            StrOptions(set(BANDWIDTH_RULES) | {"cv"}),
            Interval(Real, 0, None, closed="neither"),
        ],
        "threshold": [StrOptions({"median"}), Interval(Real, None, None, closed="neither")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "population_mean": ["array-like", None],
        "population_cov": ["array-like", None],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        density="kde",
        *,
        bandwidth="scott",
        threshold=0.0,
        cv=5,
        population_mean=None,
        population_cov=None,
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.density = density
        self.bandwidth = bandwidth
        self.threshold = threshold
        self.cv = cv
        self.population_mean = population_mean
        self.population_cov = population_cov
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit ``p_G`` on the synthetic rows and ``p_R`` on the reference rows.

        Parameters
        ----------
        X : array-like of shape (n_synthetic + n_reference, n_features)
            Synthetic rows stacked on reference rows (any order).
        y : array-like of shape (n_samples,)
            1 = synthetic, 0 (or -1, or False) = reference.

        Returns
        -------
        self : object
            The fitted attacker.
        """
        synthetic, reference = self._fit_sources(X, y)
        self.density_synthetic_ = fit_log_density(self, synthetic, role="synthetic")
        self.density_reference_ = fit_log_density(self, reference, role="reference")
        self.log_class_ratio_ = float(np.log(self.n_synthetic_ / self.n_reference_))
        return self

    def decision_function(self, X):
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
        X = self._validate_query(X)
        return _finite_log_ratio(
            self.density_synthetic_.score_samples(X),
            self.density_reference_.score_samples(X),
            "log p_G(x) - log p_R(x)",
        )

    def predict_proba(self, X):
        """``[P(reference | x), P(synthetic | x)]`` at the fitted class ratio.

        ``P(synthetic | x) = σ(log p_G(x) − log p_R(x) + log(n_synthetic / n_reference))``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of the records to attack.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is P(member | query), column 0 its complement.
        """
        p = expit(self.decision_function(X) + self.log_class_ratio_)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """Membership guess: 1 where the score exceeds ``threshold`` (see its description).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features of the records to attack.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the guess is "member", else ``classes_[0]``.
        """
        score = self.decision_function(X)
        cut = np.median(score) if self.threshold == "median" else self.threshold
        return self.classes_[(score > cut).astype(int)]
