"""RMIA, the relative membership inference attack (Zarifzadeh, Liu & Shokri, ICML 2024).

A record ``x`` is compared with population records ``z``: the target model makes ``x`` more
likely, relative to how likely the reference models make it on average, than it makes the
typical ``z``. A pairwise likelihood-ratio test, strong with one to four reference models,
where LiRA's per-record Gaussians cannot be estimated.
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context
from ._lira import best_cut, logit_confidence
from ._reference import (
    ReferenceModelAttack,
    pool_inside,
    record_keys,
    view_stack,
)

__all__ = ["RMIAAttack"]


def _true_label_probability(model, views):
    """``Pr(x | theta)``: the model's probability of each view's true label, (views, n)."""
    return np.stack([expit(logit_confidence(model, view)) for view in views])


_BELOW_ONE = 1.0 - 1e-6  # the tie-break stays below the next count


def _tie_break(log_x, log_z, count):
    """In [0, 1): where ``log_x`` lies between its neighbours in sorted ``log_z``."""
    n = log_z.size
    lower = log_z[np.clip(count - 1, 0, n - 1)]
    upper = log_z[np.clip(count, 0, n - 1)]
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = np.clip((log_x - lower) / (upper - lower), 0.0, 1.0)
    inside = np.where(np.isfinite(inside), inside, 0.0)
    above = log_x - log_z[-1]  # > 0 beyond the largest z
    below = log_z[0] - log_x  # >= 0 at or below the smallest z
    frac = np.where(
        count >= n,
        above / (1.0 + above),
        np.where(count == 0, 1.0 / (1.0 + np.maximum(below, 0.0)), inside),
    )
    return _BELOW_ONE * frac


class RMIAAttack(ReferenceModelAttack):
    """Relative membership inference attack (RMIA): a pairwise likelihood-ratio test.

    For a record ``x`` (input and true label) and the target model ``theta``, with
    ``Pr(x | theta)`` the model's probability of the true label:

    * the pairwise likelihood ratio against a population record ``z`` (the paper's
      ``LR_theta(x, z)``)::

          LR(x, z) = [Pr(x | theta) / Pr(x)] / [Pr(z | theta) / Pr(z)]

    * the score, the fraction of population records that ``x`` dominates by more than
      ``gamma`` (the paper's ``Score_MIA(x; theta) = Pr_z(LR(x, z) > gamma)``)::

          score(x) = #{z in Z : LR(x, z) > gamma} / |Z|

    * ``Pr(x)``, the probability of ``x`` under a model trained on population data, is the
      average of ``Pr(x | theta')`` over reference models ``theta'``. **Online** (the
      default) the reference models are trained on random halves of a pool holding ``x``,
      so the average runs over IN and OUT models alike. **Offline** (``online=False``) only
      the OUT models of ``x`` are used, with the paper's linear correction for the missing IN
      models (the paper's offline approximation): ``Pr_IN(x) ~ a Pr_OUT(x) + (1 - a)``,
      hence::

          Pr(x) = ((1 + a) Pr_OUT(x) + (1 - a)) / 2

      with ``a = offline_a`` (the paper tunes ``a`` per data set on reference models; ``a = 1``
      takes IN = OUT, ``a = 0`` takes IN models to fit every record perfectly).

    **Offline with the population alone** (``reference_data="population"``, the default
    when ``online=False`` and ``n_reference_models=1``): the reference models train on random
    halves of the ``population`` rows only (one model: a random half; more: balanced halves),
    so every target is OUT of every model and ``Pr(x)`` is the corrected mean over all of them,
    the paper's offline setting with a single reference model. ``Z`` is then the population
    records that are OUT of at least one model (with one model, the half it did not train on),
    and the population needs at least 20 records. Online needs IN models of every record: it
    takes ``n_reference_models >= 2`` and the pool design.

    ``Pr(z)`` is computed the same way as ``Pr(x)`` (a record OUT of no model, possible only
    when it also appears among the population rows that trained them, takes the mean over
    all models in the correction). With ``views``
    (:class:`RecordViews`), ``Pr(x | theta) / Pr(x)`` is averaged over the views of a record
    (the paper's queries on augmented records).

    For a fixed target and population ``Z``, the score is the empirical CDF of the ``z``
    ratios at ``[Pr(x | theta) / Pr(x)] / gamma``: it ranks records as their own ratio does,
    in at most ``|Z| + 1`` distinct values. ``score_samples`` adds a tie-break below
    ``1 / |Z|`` (see there), so that a population of a few hundred records still resolves
    false-positive rates of 0.1 %; ``floor(|Z| * score) / |Z|`` is the paper's score.

    **Records.** ``X`` holds records as :class:`~sklearn_mace.queries.ClassifierQuery` takes
    them: the target's input columns, then the numeric true label in the last column; ``y``
    holds their membership (it only sets ``classes_``, the prior and the cut of ``predict``).
    The pool that trains the reference models is ``X`` then ``population``; ``Z`` is the
    ``population`` records (all pool records when no population is given: a ``z`` that is a
    member of the target only makes the score coarser, never reorders it). Records are
    matched by value; a record outside the pool is OUT for every reference model and its
    ``Pr(x)`` takes the linear correction, with ``a_`` (online: fitted on the pool by least
    squares of ``Pr_IN - 1`` on ``Pr_OUT - 1``; offline: ``offline_a``).

    **Decisions.** ``score_samples`` is the score (tie-broken), in [0, 1]; ``offset_`` is
    the cut that maximizes the prior-weighted accuracy on the fitted records;
    ``decision_function = score_samples - offset_``, whose sign is ``predict``'s decision.

    Parameters
    ----------
    target : object
        The fitted classifier under audit (scikit-learn classifier with ``predict_proba``,
        skorch net or torch module, see ClassifierQuery); only queried, kept by ``clone``.
    estimator : classifier, default=None
        Unfitted template of the reference models; None clones ``target``.
    n_reference_models : int, default=4
        Reference models. The pool design needs at least 2 (each pool record trains half of
        them); 1 is allowed offline only, where it selects the population design. Unused with
        ``reference_models``.
    online : bool, default=True
        Online (IN and OUT reference models) or offline (OUT only, linear correction).
    reference_data : {"auto", "pool", "population"}, default="auto"
        What the reference models train on: ``"pool"``, balanced halves of ``X`` and
        ``population``; ``"population"``, halves of the population alone (offline only, needs
        ``population``). ``"auto"``: ``"population"`` when ``online=False`` and
        ``n_reference_models=1``, or when the given ``reference_models`` were fitted on the
        population rows alone; else ``"pool"``.
    offline_a : float in [0, 1], default=0.3
        The ``a`` of the offline correction.
    gamma : float > 0, default=1.0
        The threshold on the pairwise likelihood ratio.
    views : RecordViews, default=None
        The views of each record to query (cloned and fitted on the pool).
    reference_models : ShadowModels, default=None
        Fitted ``split="balanced"`` reference models of the pool (``X``, then
        ``population``), or, in the population design, ``split="random"`` or ``"balanced"``
        models of the ``population`` rows alone; shared with other attacks and kept by
        ``clone``; None trains ``n_reference_models`` of them.
    prior : float in (0, 1), default=None
        P(member) for the decision rule; None: the member fraction of ``y``.
    n_jobs : int, default=None
        Reference models trained in parallel (joblib; see :class:`ShadowModels`).
    random_state : int, RandomState instance or None, default=None
        The halves and the reference models' seeds.
    verbose : int, default=0
        Progress bar over the reference models when > 0.
    member_label : object, default=None
        The label of the members in ``y`` (``classes_[1]``); None: the greater label.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels given to ``fit``, ``[non-member, member]``.
    prior_ : float
        The prior of the decision rule.
    offset_ : float
        The cut on ``score_samples``.
    reference_models_ : ShadowModels
        The reference models: ``reference_models`` when given, else the
        ``n_reference_models`` trained ones (``estimators_``, ``membership_``).
    views_ : RecordViews or None
        The fitted views.
    a_ : float
        The ``a`` of the linear correction used for records without IN models.
    n_population_ : int
        ``|Z|``, the population records the scores compare against.
    design_ : {"pool", "population"}
        What the reference models were trained on (see ``reference_data``).
    n_features_in_ : int
        Record columns, the label included.

    References
    ----------
    S. Zarifzadeh, P. Liu, R. Shokri. Low-Cost High-Power Membership Inference Attacks.
    ICML 2024 (arXiv:2312.03262): the pairwise likelihood ratio ``LR_theta(x, z)``, the
    score ``Score_MIA(x; theta)``, ``Pr(x)`` as the average over reference models, and the
    offline linear approximation of ``Pr(x)`` with parameter ``a``, as written above (the
    paper's equation numbers were not checked against its text).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_mace import RMIAAttack
    >>> from sklearn_mace.metrics import tpr_at_fpr
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> records = np.column_stack([X, y])
    >>> member = np.random.default_rng(0).random(len(y)) < 0.5
    >>> target = DecisionTreeClassifier(min_samples_leaf=2, random_state=0)
    >>> target = target.fit(X[member], y[member])
    >>> attack = RMIAAttack(target, n_reference_models=2, random_state=0).fit(records, member)
    >>> scores = attack.decision_function(records)
    >>> bool(tpr_at_fpr(member, scores, fpr=0.05) > 0.05)
    True
    """

    _parameter_constraints: dict = {
        "target": "no_validation",
        "estimator": [None, HasMethods(["fit", "predict_proba"])],
        "n_reference_models": [Interval(Integral, 1, None, closed="left")],
        "online": ["boolean"],
        "reference_data": [StrOptions({"auto", "pool", "population"})],
        "offline_a": [Interval(Real, 0, 1, closed="both")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
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
        n_reference_models=4,
        online=True,
        reference_data="auto",
        offline_a=0.3,
        gamma=1.0,
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
        self.reference_data = reference_data
        self.offline_a = offline_a
        self.gamma = gamma
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
        """Train (or take) the reference models and compute ``Pr(x)`` of every pool record.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features + 1)
            Records (target input columns, true label last) of known membership.
        y : array-like of shape (n_samples,)
            Their membership in the target's training set.
        population : array-like of shape (n_population, n_features + 1), default=None
            Population records, membership unknown: they join the reference models' pool and
            are the ``z`` of the pairwise test.

        Returns
        -------
        self : RMIAAttack
            The fitted attacker.
        """
        self.design_ = self._design(population)
        X, m, pool = self._fit_reference(X, y, population, self.n_reference_models, self.design_)
        unique, inside = pool_inside(self.reference_models_, pool)
        self._index = dict(zip(record_keys(unique), range(unique.shape[0]), strict=True))
        p = self._reference_probability(unique)  # (views, models, records)
        self._marginal = self._pool_marginal(p, inside)
        self._population = pool[X.shape[0] :] if population is not None else pool
        if self.design_ == "population":  # Z: the population records some model did not train
            outside = (~inside).any(axis=0)
            keep = [outside[self._index[key]] for key in record_keys(self._population)]
            self._population = self._population[np.asarray(keep, dtype=bool)]
        self.n_population_ = int(self._population.shape[0])
        self.offset_ = 0.0
        self.offset_ = best_cut(m, self.score_samples(X), self.prior_)
        return self

    def _design(self, population):
        """``"pool"`` or ``"population"`` from ``reference_data``, ``online`` and
        ``n_reference_models`` (or the given models), checked."""
        design = self.reference_data
        given = self.reference_models
        if design == "auto":
            fitted_on = None
            if given is not None and hasattr(given, "membership_") and population is not None:
                fitted_on = given.membership_.size // max(len(given.estimators_), 1)
            on_population = fitted_on is not None and fitted_on == len(population)
            one_model = given is None and self.n_reference_models == 1
            design = "population" if on_population or (one_model and not self.online) else "pool"
        if self.online and (
            design == "population" or (given is None and self.n_reference_models < 2)
        ):
            raise ValueError(
                "online RMIA needs IN and OUT reference models of every record: "
                "n_reference_models must be at least 2 with reference_data='pool' (got "
                f"n_reference_models={self.n_reference_models}, reference_data="
                f"{self.reference_data!r}); use online=False for one reference model trained on "
                "the population alone."
            )
        if design == "pool" and given is None and self.n_reference_models < 2:
            raise ValueError(
                "n_reference_models=1 cannot train balanced halves of the pool (each record IN "
                "for one model and OUT for another); use reference_data='population' or 'auto'."
            )
        if design == "population" and population is None:
            raise ValueError(
                "reference_data='population' (offline RMIA with reference models trained on "
                "the population alone, the default for n_reference_models=1) needs population "
                "records: pass population= to fit."
            )
        return design

    def _reference_probability(self, records):
        views = view_stack(self.views_, records)
        return np.stack(
            [_true_label_probability(model, views) for model in self.reference_models_.estimators_],
            axis=1,
        )

    def _pool_marginal(self, p, inside):
        """``Pr(x)`` of every pool record and view; sets ``a_``."""
        n_in, n_out = inside.sum(axis=0), (~inside).sum(axis=0)
        mean_out = np.where(~inside, p, 0.0).sum(axis=1) / np.maximum(n_out, 1)
        mean_out = np.where(n_out > 0, mean_out, p.mean(axis=1))  # OUT of none: all models
        if self.online:
            mean_in = np.where(inside, p, 0.0).sum(axis=1) / np.maximum(n_in, 1)
            both = (n_in > 0) & (n_out > 0)
            out, into = mean_out[:, both] - 1.0, mean_in[:, both] - 1.0
            denominator = float((out * out).sum())
            a = float((out * into).sum()) / denominator if denominator > 0 else 1.0
            self.a_ = float(np.clip(a, 0.0, 1.0))
            return p.mean(axis=1)
        self.a_ = float(self.offline_a)
        return self._corrected(mean_out)

    def _corrected(self, mean_out):
        """The offline linear correction ``((1 + a) Pr_OUT + (1 - a)) / 2``."""
        return 0.5 * ((1.0 + self.a_) * mean_out + (1.0 - self.a_))

    def _marginal_of(self, records):
        """``Pr(x)`` per view of ``records``: fitted for pool records, else all-OUT corrected."""
        position = np.array([self._index.get(key, -1) for key in record_keys(records)])
        known = position >= 0
        marginal = self._marginal[:, np.clip(position, 0, None)]
        if not known.all():
            p = self._reference_probability(records[~known])
            marginal[:, ~known] = self._corrected(p.mean(axis=1))
        return marginal

    def _relative_likelihood(self, records):
        """``Pr(x | theta) / Pr(x)``, averaged over the views of each record."""
        views = view_stack(self.views_, records)
        likelihood = _true_label_probability(self.target, views)
        return (likelihood / self._marginal_of(records)).mean(axis=0)

    # ------------------------------------------------------------------ scores
    def score_samples(self, X):
        """RMIA score: the fraction of population records ``z`` with ``LR(x, z) > gamma``,
        its ties ordered by the record's own ratio.

        ``floor(n_population_ * score) / n_population_`` is the paper's ``Score_MIA`` exactly.
        The fractional part, in [0, 1), orders the records that ``Score_MIA`` ties (those
        between the same two neighbouring ``z``): linear in ``log`` of the record's ratio
        between its neighbours, bounded beyond the extreme ``z``. It changes no comparison
        the paper's score makes, only breaks its ties, which otherwise cap the resolution of
        false-positive rates at ``1 / n_population_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Records (target input columns, true label last).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            In [0, 1], larger = more likely a member.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        log_z = np.log(np.sort(self._relative_likelihood(self._population)))
        # LR(x, z) > gamma  <=>  ratio_z < ratio_x / gamma
        log_x = np.log(self._relative_likelihood(X)) - np.log(self.gamma)
        count = np.searchsorted(log_z, log_x, side="left")
        return (count + _tie_break(log_x, log_z, count)) / log_z.size
