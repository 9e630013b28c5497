"""LiRA, the likelihood-ratio membership attack (Carlini et al., 2022).

Per record, shadow models trained with it (IN) and without it (OUT) give two samples of its
logit-scaled confidence; LiRA fits a Gaussian to each and scores the target model's
confidence on the record by their likelihood ratio (online) or by how far it lies in the
OUT Gaussian's upper tail (offline). Per-record reference distributions are what make it
strong at low false-positive rates: an easy record that every model fits well is not
mistaken for a member.
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from scipy.stats import norm
from sklearn.metrics import roc_curve
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ..queries import ClassifierQuery
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context
from ._reference import (
    ReferenceModelAttack,
    pool_inside,
    record_keys,
    view_stack,
)

__all__ = ["FIXED_VARIANCE_BELOW", "LiRAAttack", "logit_confidence", "resolution_bound"]

_EPS = np.finfo(float).eps
# Variance floor on the logit scale (phi spans about +-36 at the eps clip): keeps a record
# whose shadows all agree exactly (e.g. pure tree leaves) from giving an infinite score.
_VAR_FLOOR = 1e-4
#: ``fix_variance="auto"`` fixes the variance below this many reference models, as Carlini et
#: al. do (§VI-B: per-example variances only pay off with 64 or more shadow models).
FIXED_VARIANCE_BELOW = 64


def logit_confidence(model, records):
    """Logit-scaled true-label confidence ``phi = log(p_y / (1 - p_y))`` of every record.

    Computed as ``log p_y - log sum_{j != y} p_j``: the complement is summed from the other
    classes, not taken as ``1 - p_y``, which cancels to 0 for confident predictions.
    Probabilities are clipped at machine epsilon, so ``phi`` lies in about ``[-36, 36]``;
    a label the model does not know gets ``p_y = 0`` (the floor).

    Parameters
    ----------
    model : object
        A fitted classifier as accepted by :class:`~sklearn_mace.queries.ClassifierQuery`.
    records : ndarray of shape (n_samples, n_features + 1)
        The model's input columns, then the true label in the last column.

    Returns
    -------
    phi : ndarray of shape (n_samples,)
        The logit-scaled confidence in each record's true label (LiRA's statistic).

    References
    ----------
    Carlini et al., Membership Inference Attacks From First Principles, IEEE S&P 2022,
    §IV-C ("logit scaling the loss function"), Eq. (4).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_mace.attacks import logit_confidence
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> model = LogisticRegression().fit(X, [0, 0, 1, 1])
    >>> phi = logit_confidence(model, np.column_stack([X, [0, 0, 1, 1]]))
    >>> bool(np.all(phi > 0)), bool(np.isclose(phi[0], phi[3]))
    (True, True)
    """
    query = ClassifierQuery(model, outputs=("proba",)).fit(records[:1])
    proba = query.transform(records)
    true_class = records[:, -1][:, None] == np.asarray(query.classes_)[None, :]
    p_true = np.where(true_class, proba, 0.0).sum(axis=1)
    p_rest = np.where(true_class, 0.0, proba).sum(axis=1)
    return np.log(np.clip(p_true, _EPS, None)) - np.log(np.clip(p_rest, _EPS, None))


#: ``|phi|`` of a probability of exactly 0 or 1 (clipped at machine epsilon)
_SATURATED = float(-np.log(_EPS))


def resolution_bound(phi):
    """Largest ``|phi|`` the reference models' own probability resolution supports.

    A model whose probabilities come in steps (a forest of ``m`` trees: multiples of
    ``1/m``) gives exactly 0 or 1 for many records, which the epsilon clip turns into
    ``|phi| = 36``, far from every other value (``log 49 = 3.9`` one step below, at 50
    trees): a bimodal ``phi`` that no Gaussian fits. A probability of 1 from such a model
    means "within one step of 1", so it is read as half a step: with ``delta`` the smallest
    tail probability ``min(p, 1 − p)`` of the unsaturated values, the bound is
    ``logit(1 − delta/2)`` (4.6 at 50 trees). Models with continuous outputs (a softmax)
    rarely saturate and get a bound above all their values; without saturated values the
    bound is the epsilon clip itself (no change).

    Parameters
    ----------
    phi : ndarray
        Logit-scaled confidences (:func:`logit_confidence`) of the reference models.

    Returns
    -------
    bound : float
        Clip ``phi`` to ``[-bound, bound]``.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.log(np.array([49.0, 1 / 49, 1.0]))  # p = 0.98, 0.02, 0.5
    >>> saturated = -np.log(np.finfo(float).eps)  # p = 1 after the epsilon clip
    >>> print(f"{resolution_bound(np.r_[phi, saturated]):.2f} {resolution_bound(phi):.2f}")
    4.60 36.04
    """
    magnitude = np.abs(np.asarray(phi, dtype=float)).ravel()
    saturated = magnitude >= _SATURATED - 1e-6
    if not saturated.any() or saturated.all():
        return _SATURATED
    delta = float(expit(-magnitude[~saturated].max()))
    return float(np.log1p(-delta / 2) - np.log(delta / 2))


def _gaussian_fit(phi, inside):
    """Per-record mean, variance (NaN below 2 values), count; pooled within-record variance.

    The pooled variance is the within-record one (records with 2 or more values); when no
    record has 2 values on this side (2 reference models, one IN and one OUT each), it is the
    variance of every value about their common mean, as Carlini et al.'s code fixes it
    (``np.std(dat_in)``): it holds the spread between records too, so it is larger.
    """
    count = inside.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, np.where(inside, phi, 0.0).sum(axis=0) / count, np.nan)
        squares = np.where(inside, (phi - mean) ** 2, 0.0).sum(axis=0)
        var = np.where(count >= 2, squares / (count - 1), np.nan)
    dof = np.clip(count - 1, 0, None).sum()
    if dof > 0:
        pooled = squares[count >= 2].sum() / dof
    else:
        values = phi[inside]
        pooled = float(np.var(values, ddof=1)) if values.size >= 2 else np.nan
    return mean, var, count, pooled


def best_cut(m, scores, prior):
    """Cut on ``scores`` of the largest prior-weighted accuracy on the fitted records."""
    fpr, tpr, thresholds = roc_curve(m, scores)
    accuracy = prior * tpr + (1 - prior) * (1 - fpr)
    best = int(np.argmax(accuracy))
    if best == 0:  # nobody is a member: cut at the top score
        return float(scores.max())
    below = scores[scores < thresholds[best]]
    lower = below.max() if below.size else thresholds[best] - 1.0
    return float((thresholds[best] + lower) / 2)


class LiRAAttack(ReferenceModelAttack):
    """Likelihood-ratio attack (LiRA) against a fitted classifier, with shadow models.

    ``fit`` trains ``n_reference_models`` clones of ``estimator`` (the shadow models) on
    random halves of a pool of records, drawn so that each record trains exactly half of them
    (Carlini et al.'s design, :class:`ShadowModels` with ``split="balanced"``). For every pool
    record it fits Gaussians to the logit-scaled confidence ``phi`` (:func:`logit_confidence`)
    of the shadows that trained on it (IN) and of those that did not (OUT). The target's
    ``phi`` on a record is then scored:

    * online: ``log N(phi; mu_in, s_in^2) - log N(phi; mu_out, s_out^2)`` (Eq. 3 with
      Gaussians, §IV-C), the log likelihood ratio;
    * offline (``online=False``): ``-log P(Z > phi)``, ``Z ~ N(mu_out, s_out^2)``, the one-sided
      test against the OUT distribution alone (§VI-A).

    **Variance.** With few reference models a per-record variance rests on a handful of
    values (2 IN and 2 OUT at 4 models) and is the weak part of the attack; Carlini et al.
    fix it below 64 shadow models (§VI-B). ``fix_variance="auto"`` (the default) does the
    same: below ``FIXED_VARIANCE_BELOW`` (64) reference models, one global variance per side
    (pooled within-record; at 2 models, where a record has one IN and one OUT value, the
    variance of all values of that side, as their code does), per-record variances from 64
    models up. ``True`` or ``False`` force either. ``benchmarks/bench_peers_lira.py`` measures
    both at 2 to 16 models on digits: the fixed variance is at least as strong in AUC and in
    TPR at 1 % FPR on a regularised logistic regression, an MLP and (with the saturated
    probabilities below read at their resolution) a fully grown random forest.

    **Saturated probabilities.** A model whose probabilities come in steps (a random
    forest's vote shares) outputs exactly 0 or 1 for many records, which the epsilon clip of
    :func:`logit_confidence` puts at ``|phi| = 36``, far from every other value; ``phi`` is
    clipped at half a step of the reference models' own resolution
    (:func:`resolution_bound`, ``phi_bound_``). On the digits forest this lifts online
    LiRA with the fixed variance at 4 models from AUC 0.67 / TPR 0.05 at 1 % FPR to 0.90 /
    0.26 (``benchmarks/bench_peers_lira.py``).

    **Views.** With ``views`` (a :class:`RecordViews`), every model is queried on every view
    of a record, one Gaussian is fitted per view and record, and the per-view scores are
    averaged (Carlini et al.'s queries on augmented records).

    **Shared reference models.** ``reference_models`` takes shadows already trained on the
    pool (``ShadowModels(split="balanced")`` fitted on ``X`` then ``population``), so that
    one set serves LiRA, :class:`RMIAAttack` and the shadow-model attack;
    ``n_reference_models`` and ``estimator`` are then unused.

    **Records.** ``X`` holds records as :class:`~sklearn_mace.queries.ClassifierQuery`
    takes them: the target's input columns, then the numeric true label in the last column.
    ``y`` holds their membership in the target's training set (1 member, 0 or -1 not); it
    only sets ``classes_`` and the prior, and, offline, the cut of ``predict``: the Gaussians
    come from the shadows alone. The pool is ``X`` plus the optional ``population`` records
    passed to ``fit``. Records are matched by value: scoring a pool record uses its fitted
    IN/OUT Gaussians; any other record is queried on every shadow (all are OUT for it), and
    online its IN mean is the OUT mean plus the average IN-OUT shift of the pool, with the
    global IN variance.

    **Decisions.** ``score_samples`` is the LiRA score (larger = member);
    ``decision_function = score_samples - offset_``, whose sign is ``predict``'s decision.
    Online, ``offset_ = log((1 - prior_) / prior_)``, so the decision function is the log
    posterior odds under the fitted Gaussians and ``predict_proba`` its sigmoid. Offline
    there is no likelihood, so ``offset_`` is the cut that maximizes the prior-weighted
    accuracy on the fitted records, and ``predict_proba`` is absent.

    Parameters
    ----------
    target : object
        The fitted classifier under audit: a scikit-learn classifier with
        ``predict_proba``, a skorch net, or a torch module (see ClassifierQuery). It is
        only queried, never refitted or cloned (``clone(attack)`` keeps it).
    estimator : classifier, default=None
        Unfitted template of the shadow models; None clones ``target`` (same
        hyper-parameters, unfitted), which is what LiRA assumes: shadows trained like the
        target.
    n_reference_models : int, default=16
        Number of shadow (reference) models (at least 4, so that each record has 2 IN and 2 OUT).
        Unused with ``reference_models`` (which may hold 2 models, with a fixed variance).
    online : bool, default=True
        Online (IN and OUT) or offline (OUT only) LiRA.
    fix_variance : bool or "auto", default="auto"
        One global variance per side instead of per-record variances; ``"auto"``: fixed
        below ``FIXED_VARIANCE_BELOW`` = 64 reference models (Carlini et al. §VI-B).
    views : RecordViews, default=None
        The views of each record to query (cloned and fitted on the pool); None queries the
        record alone.
    reference_models : ShadowModels, default=None
        Fitted ``split="balanced"`` shadows of the pool (``X``, then ``population``), used
        as they are (kept by ``clone``); None trains ``n_reference_models`` of them.
    prior : float in (0, 1), default=None
        P(member) for the decision rule; None: the member fraction of ``y``.
    n_jobs : int, default=None
        Shadows trained in parallel (joblib; see :class:`ShadowModels`).
    random_state : int, RandomState instance or None, default=None
        The halves and the shadows' seeds.
    verbose : int, default=0
        Progress bar over the shadows when > 0.
    member_label : object, default=None
        The label of the members in ``y``, like scikit-learn's ``pos_label``; it becomes
        ``classes_[1]``. ``None``: the greater label (``1`` of ``{0, 1}`` and ``{-1, 1}``,
        ``True`` of booleans); any other pair (e.g. strings) is accepted with a
        ``MembershipLabelWarning`` that names the label taken as the member.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels given to ``fit``, ``[non-member, member]``.
    prior_ : float
        The prior of the decision rule.
    offset_ : float
        The cut on ``score_samples``.
    reference_models_ : ShadowModels
        The fitted shadows: ``reference_models`` when given, else the ``n_reference_models``
        trained ones (``estimators_``, ``membership_`` per shadow and pool record).
    views_ : RecordViews or None
        The fitted views.
    fix_variance_ : bool
        Whether the variance was fixed (``fix_variance`` resolved against the number of
        reference models).
    phi_bound_ : float
        ``phi`` (of the reference models and the target) is clipped to ``[-phi_bound_,
        phi_bound_]``, the reference models' probability resolution
        (:func:`resolution_bound`; 36 for continuous outputs, 4.6 for a forest of 50 trees).
    mean_shift_ : float
        Average ``mu_in - mu_out`` over the pool records (and views).
    var_in_, var_out_ : float
        Pooled within-record variances of ``phi`` for IN and OUT shadows (averaged over
        views).
    n_features_in_ : int
        Record columns, the label included.

    References
    ----------
    N. Carlini, S. Chien, M. Nasr, S. Song, A. Terzis, F. Tramèr. Membership Inference
    Attacks From First Principles. IEEE S&P 2022: §IV (Alg. 1, Eq. 3-4), §VI-A (offline),
    §VI-B (fixed variance).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_mace.attacks import LiRAAttack
    >>> from sklearn_mace.metrics import tpr_at_fpr
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> records = np.column_stack([X, y])
    >>> member = np.random.default_rng(0).random(len(y)) < 0.5
    >>> target = DecisionTreeClassifier(min_samples_leaf=2, random_state=0)
    >>> target = target.fit(X[member], y[member])
    >>> attack = LiRAAttack(target, n_reference_models=8, random_state=0).fit(records, member)
    >>> scores = attack.decision_function(records)
    >>> bool(tpr_at_fpr(member, scores, fpr=0.05) > 0.05)
    True
    """

    _parameter_constraints: dict = {
        "target": "no_validation",
        "estimator": [None, HasMethods(["fit", "predict_proba"])],
        "n_reference_models": [Interval(Integral, 4, None, closed="left")],
        "online": ["boolean"],
        "fix_variance": ["boolean", StrOptions({"auto"})],
        "views": [None, HasMethods(["fit", "transform"])],
        "reference_models": "no_validation",
        "prior": [None, Interval(Real, 0, 1, closed="neither")],
        "n_jobs": [None, Integral],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "member_label": "no_validation",
    }

    def __init__(
        self,
        target,
        estimator=None,
        *,
        n_reference_models=16,
        online=True,
        fix_variance="auto",
        views=None,
        reference_models=None,
        prior=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
        member_label=None,
    ):
        self.target = target
        self.estimator = estimator
        self.n_reference_models = n_reference_models
        self.online = online
        self.fix_variance = fix_variance
        self.views = views
        self.reference_models = reference_models
        self.prior = prior
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.member_label = member_label

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, population=None):
        """Train the shadows on halves of the pool and fit the per-record Gaussians.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features + 1)
            Records (target input columns, true label last) of known membership.
        y : array-like of shape (n_samples,)
            Their membership in the target's training set (``member_label`` names the
            member).
        population : array-like of shape (n_population, n_features + 1), default=None
            More records of the same population, membership unknown, added to the shadows'
            pool (each trains half the shadows too).

        Returns
        -------
        self : LiRAAttack
            The fitted attacker.
        """
        X, m, pool = self._fit_reference(X, y, population, self.n_reference_models)
        n_models = len(self.reference_models_.estimators_)
        if self.fix_variance == "auto":
            self.fix_variance_ = n_models < FIXED_VARIANCE_BELOW
        else:
            self.fix_variance_ = bool(self.fix_variance)
        self._fit_gaussians(pool)
        if self.online:  # Bayes rule at the prior: log LR > log((1 - p) / p)
            self.offset_ = float(np.log1p(-self.prior_) - np.log(self.prior_))
        else:
            self.offset_ = 0.0
            self.offset_ = best_cut(m, self.score_samples(X), self.prior_)
        return self

    def _fit_gaussians(self, pool):
        unique, inside = pool_inside(self.reference_models_, pool)
        self.phi_bound_ = np.inf
        phi = self._shadow_phi(unique)  # (views, shadows, records)
        self.phi_bound_ = resolution_bound(phi)
        phi = np.clip(phi, -self.phi_bound_, self.phi_bound_)  # the target's too, when scored
        fits = [(_gaussian_fit(p, inside), _gaussian_fit(p, ~inside)) for p in phi]
        var_in = np.array([fit_in[3] for fit_in, _ in fits])
        var_out = np.array([fit_out[3] for _, fit_out in fits])
        if not (np.isfinite(var_in).all() and np.isfinite(var_out).all()):
            raise ValueError(
                "every pool record is IN (or OUT) for fewer than 2 shadows, so no variance "
                "can be estimated; use more shadows."
            )
        self._pooled_in, self._pooled_out = var_in, var_out
        self.var_in_, self.var_out_ = float(var_in.mean()), float(var_out.mean())
        _, _, n_in, _ = fits[0][0]
        _, _, n_out, _ = fits[0][1]
        if not self.fix_variance_ and not ((n_in >= 2).any() and (n_out >= 2).any()):
            raise ValueError(
                f"{len(self.reference_models_.estimators_)} reference models leave every record "
                "fewer than 2 IN (or OUT) models, so no per-record variance can be estimated; use "
                "fix_variance=True or 'auto', or more models."
            )
        both = (n_in > 0) & (n_out > 0)
        shifts = np.array([np.mean(fi[0][both] - fo[0][both]) for fi, fo in fits])
        self._shifts = shifts
        self.mean_shift_ = float(shifts.mean())
        mean_in = np.stack([fi[0] for fi, _ in fits])
        mean_out = np.stack([fo[0] for _, fo in fits])
        self._mean_in = np.where(n_in > 0, mean_in, mean_out + shifts[:, None])
        self._mean_out = np.where(n_out > 0, mean_out, mean_in - shifts[:, None])
        self._var_in = self._variance(np.stack([fi[1] for fi, _ in fits]), var_in)
        self._var_out = self._variance(np.stack([fo[1] for _, fo in fits]), var_out)
        self._index = dict(zip(record_keys(unique), range(unique.shape[0]), strict=True))

    def _variance(self, per_record, pooled):
        """Per view and record: the record's variance, or its view's pooled one."""
        pooled = np.asarray(pooled, dtype=float).reshape(-1, 1)
        var = np.broadcast_to(pooled, per_record.shape).copy()
        if not self.fix_variance_:
            var = np.where(np.isfinite(per_record), per_record, var)
        return np.maximum(var, _VAR_FLOOR)

    def _shadow_phi(self, records):
        """``phi`` of every shadow on every view of ``records``: (views, shadows, records)."""
        views = view_stack(self.views_, records)
        phi = np.stack(
            [
                np.stack(
                    [logit_confidence(model, view) for model in self.reference_models_.estimators_]
                )
                for view in views
            ]
        )
        return np.clip(phi, -self.phi_bound_, self.phi_bound_)

    # ------------------------------------------------------------------ scores
    def _gaussians(self, X):
        """(mu_in, var_in, mu_out, var_out), (views, rows): fitted for pool records, else OUT."""
        position = np.array([self._index.get(key, -1) for key in record_keys(X)])
        known = position >= 0
        mean_in = self._mean_in[:, position]
        mean_out = self._mean_out[:, position]
        var_in = self._var_in[:, position]
        var_out = self._var_out[:, position]
        if not known.all():
            phi = self._shadow_phi(X[~known])  # every shadow is OUT for an unseen record
            everyone = np.ones_like(phi[0], dtype=bool)
            for v, p in enumerate(phi):
                mean, var, _, _ = _gaussian_fit(p, everyone)
                mean_out[v, ~known] = mean
                var_out[v, ~known] = self._variance(var[None], self._pooled_out[v])[0]
                mean_in[v, ~known] = mean + self._shifts[v]
                var_in[v, ~known] = max(self._pooled_in[v], _VAR_FLOOR)
        return mean_in, var_in, mean_out, var_out

    def score_samples(self, X):
        """LiRA score of each record, larger = more likely a member.

        With ``views``, the target is queried on every view of a record, each view scored
        against its own Gaussians, and the per-view scores averaged (online: the mean log
        likelihood ratio, the product of the per-view likelihoods, as Carlini et al. do).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Records (target input columns, true label last).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            Online: the log likelihood ratio; offline: ``-log`` of the OUT Gaussian's
            upper-tail probability of the target's ``phi``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        views = view_stack(self.views_, X)
        phi = np.stack([logit_confidence(self.target, view) for view in views])
        phi = np.clip(phi, -self.phi_bound_, self.phi_bound_)
        mean_in, var_in, mean_out, var_out = self._gaussians(X)
        if self.online:
            score = norm.logpdf(phi, mean_in, np.sqrt(var_in)) - norm.logpdf(
                phi, mean_out, np.sqrt(var_out)
            )
        else:
            score = -norm.logsf(phi, mean_out, np.sqrt(var_out))
        return score.mean(axis=0)

    @available_if(lambda self: self.online)
    def predict_proba(self, X):
        """P(non-member), P(member) under the fitted Gaussians at ``prior_`` (online only).

        The sigmoid of :meth:`decision_function`. Log odds above about 37 round to a
        probability of exactly 1, so rank records (ROC curves, TPR at low FPR) by
        ``decision_function``, not by these probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Records.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is P(member | query), column 0 its complement.
        """
        member = expit(self.decision_function(X))
        return np.column_stack([1 - member, member])
