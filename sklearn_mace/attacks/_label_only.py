"""A label-only membership attack: how robust the predicted label is to noise.

Choquette-Choo, Tramèr, Carlini & Papernot (ICML 2021) show that a model that reveals only its
predicted label still leaks membership: training records lie farther from the decision
boundary than other records, and the distance can be measured with labels alone — by an
adversarial search (HopSkipJump) or, nearly as well, by how often the label survives random
noise and augmentations (their §4–5 and the "random noise" variant of the boundary distance).
"""

from numbers import Integral, Real

import numpy as np
from scipy.stats import norm
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import AttackerMixin, ScoreCutMixin, resolve_prior
from ..utils._sklearn_compat import HasMethods, Interval, _fit_context
from ._lira import best_cut
from ._reference import view_stack
from ._views import _row_seeds

__all__ = ["LabelOnlyAttack"]


def linear_robustness(distance, noise):
    """Chance that Gaussian noise of scale ``noise`` leaves a linear decision unchanged.

    For a linear boundary at (scaled) distance ``distance`` from a record, the noise's
    component across the boundary is ``N(0, noise^2)``, so the label survives with
    probability ``Phi(distance / noise)``: the label-only score is a monotone function of the
    boundary distance, which is what Choquette-Choo et al. threshold.

    Parameters
    ----------
    distance : array-like
        Signed distance to the boundary (positive on the side of the true label).
    noise : float
        Standard deviation of the noise, in the same units.

    Returns
    -------
    probability : ndarray
        ``Phi(distance / noise)``.

    Examples
    --------
    >>> print(f"{float(linear_robustness(1.0, 1.0)):.3f}")
    0.841
    """
    return norm.cdf(np.asarray(distance, dtype=float) / noise)


class LabelOnlyAttack(ScoreCutMixin, AttackerMixin, BaseEstimator):
    """Label-only membership attack: robustness of the predicted label to noise.

    The target is only asked for its predicted labels (``target.predict``). For a record
    ``x`` with true label ``y``, the attack queries ``x`` and ``n_queries`` noisy copies
    ``x + s·scale ⊙ e_i`` (``e_i`` standard normal, ``scale`` each input column's standard
    deviation in ``fit``, ``s`` every level of ``noise``) and scores

    ``score(x) = 1[f(x) = y] + mean_{s, i} 1[f(x + s·scale ⊙ e_i) = y]``,

    in ``[0, 2]``. The first term is the gap attack (a misclassified record is at boundary
    distance 0, Choquette-Choo et al. §4), the second the noise-robustness estimate of the
    distance to the decision boundary (§5, "decision boundary distance", its random-noise
    variant): for a linear boundary at distance ``d`` it is ``mean_s Phi(d / s)``
    (:func:`linear_robustness`), increasing in ``d``. Training records lie farther from the
    boundary, so a larger score means member. With ``views`` (e.g. image shifts,
    :class:`RecordViews`), the score is averaged over the views of the record: the
    data-augmentation attack (§4) and the noise one together.

    The noise of a record is drawn from a generator seeded by its own values and
    ``random_state``, so a record gets the same score in any batch. Input columns with two
    distinct values or fewer in ``fit`` (indicators, one-hot columns) are not perturbed.

    ``fit(X, y)`` learns the column scales and sets ``offset_`` to the cut of the largest
    prior-weighted accuracy on the fitted records; ``y`` sets nothing else. Certify leakage
    from scores of records the cut was not chosen on (:func:`~sklearn_mace.metrics.audit_epsilon`
    splits them itself).

    Parameters
    ----------
    target : object
        The fitted classifier under audit; only its ``predict`` is called, on the input
        columns. Kept as it is by ``clone``.
    noise : float or tuple of float, default=(0.25, 0.5, 1.0)
        Noise levels, in standard deviations of each input column.
    n_queries : int, default=16
        Noisy copies of a record per noise level.
    views : RecordViews, default=None
        Views of each record to query (fitted on ``X``); None: the record alone.
    prior : float in (0, 1), default=None
        P(member) for the decision rule; None: the member fraction of ``y``.
    random_state : int, default=0
        Mixed into every record's noise seed.
    member_label : object, default=None
        The label of the members in ``y``, like scikit-learn's ``pos_label``; it becomes
        ``classes_[1]``. ``None``: the greater label; any other pair (e.g. strings) is
        accepted with a ``MembershipLabelWarning`` naming the label taken.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels given to ``fit``, ``[non-member, member]``.
    prior_ : float
        The prior of the decision rule.
    offset_ : float
        The cut on ``score_samples``.
    scale_ : ndarray of shape (n_features_in_ - 1,)
        The noise unit of each input column (0 where it is not perturbed).
    views_ : RecordViews or None
        The fitted views.
    n_features_in_ : int
        Record columns, the label included.

    See Also
    --------
    LiRAAttack : The attack when the target gives its confidences.

    References
    ----------
    C. A. Choquette-Choo, F. Tramèr, N. Carlini, N. Papernot. Label-Only Membership Inference
    Attacks. ICML 2021: §4 (gap and data-augmentation attacks), §5 (decision-boundary
    distance ``dist(x, y) = min_{x'} d(x, x')`` s.t. ``f(x') ≠ y``, 0 when ``f(x) ≠ y``; its
    random-noise estimate).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from sklearn_mace.attacks import LabelOnlyAttack
    >>> from sklearn.metrics import roc_auc_score
    >>> X, y = load_digits(return_X_y=True)
    >>> records = np.column_stack([X, y])[:600]
    >>> member = np.arange(600) < 300
    >>> target = RandomForestClassifier(50, random_state=0).fit(X[:300], y[:300])
    >>> attack = LabelOnlyAttack(target).fit(records, member)
    >>> bool(roc_auc_score(member, attack.decision_function(records)) > 0.6)
    True
    """

    _parameter_constraints: dict = {
        "target": [HasMethods(["predict"])],
        "noise": [Interval(Real, 0, None, closed="neither"), tuple, list],
        "n_queries": [Interval(Integral, 1, None, closed="left")],
        "views": [None, HasMethods(["fit", "transform"])],
        "prior": [None, Interval(Real, 0, 1, closed="neither")],
        "random_state": [Interval(Integral, 0, None, closed="left")],
        "member_label": "no_validation",
    }

    def __init__(
        self,
        target,
        *,
        noise=(0.25, 0.5, 1.0),
        n_queries=16,
        views=None,
        prior=None,
        random_state=0,
        member_label=None,
    ):
        self.target = target
        self.noise = noise
        self.n_queries = n_queries
        self.views = views
        self.prior = prior
        self.random_state = random_state
        self.member_label = member_label

    def __sklearn_clone__(self):
        """Clone the attack but keep the fitted target (it is only queried)."""
        params = self.get_params(deep=False)
        target = params.pop("target")
        return type(self)(target, **{k: clone(v, safe=False) for k, v in params.items()})

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # y sets only the cut: the scores come from the target alone
        tags.classifier_tags.poor_score = True
        return tags

    def _levels(self):
        levels = np.atleast_1d(np.asarray(self.noise, dtype=float))
        if levels.ndim != 1 or levels.size == 0 or not np.all(np.isfinite(levels) & (levels > 0)):
            raise ValueError(
                f"noise must be a positive float or a tuple of them; got {self.noise!r}."
            )
        return levels

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Learn the noise unit of each column and the cut of the decision rule.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features + 1)
            Records: the target's input columns, then the true label in the last column.
        y : array-like of shape (n_samples,)
            Their membership in the target's training set (``member_label`` names the
            member).

        Returns
        -------
        self : LabelOnlyAttack
            The fitted attacker.
        """
        self._levels()
        X, y = validate_data(self, X, y, dtype=np.float64)
        if X.shape[1] < 2:
            raise ValueError(
                f"X has {X.shape[1]} feature(s) but LabelOnlyAttack needs at least 2: the "
                "target's input columns and the true label in the last column."
            )
        m = self._fit_membership_labels(y)
        self.prior_ = resolve_prior(self.prior, m)
        inputs = X[:, :-1]
        varied = np.array([np.unique(c).size > 2 for c in inputs.T], dtype=bool)
        self.scale_ = np.where(varied, inputs.std(axis=0), 0.0)
        self.views_ = None if self.views is None else clone(self.views).fit(X)
        self.offset_ = best_cut(m, self._scores(X), self.prior_)
        return self

    def _correct(self, inputs, labels):
        return np.asarray(self.target.predict(inputs)).ravel() == labels

    def _scores(self, X):
        levels = self._levels()
        labels = X[:, -1]
        total = np.zeros(len(X))
        stack = view_stack(self.views_, X)
        for view in stack:
            inputs = view[:, :-1]
            draws = np.stack(  # (n_queries, n, d): the same draws at every level
                [
                    np.random.default_rng(seed).standard_normal((self.n_queries, inputs.shape[1]))
                    for seed in _row_seeds(view, int(self.random_state))
                ],
                axis=1,
            )
            robust = np.zeros(len(X))
            for level in levels:
                noisy = inputs[None] + level * self.scale_ * draws
                flat = noisy.reshape(-1, inputs.shape[1])
                hits = self._correct(flat, np.tile(labels, self.n_queries))
                robust += hits.reshape(self.n_queries, -1).mean(axis=0)
            total += self._correct(inputs, labels) + robust / levels.size
        return total / len(stack)

    def score_samples(self, X):
        """Label-only score of each record, larger = more likely a member.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Records (input columns, true label last).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            ``1[f(x) = y]`` plus the fraction of noisy copies still labelled ``y``, averaged
            over the views; in ``[0, 2]``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._scores(X)
