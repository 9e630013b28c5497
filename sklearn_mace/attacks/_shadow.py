"""Shadow models (Shokri et al., 2017; Carlini et al., 2022) and the shadow-model attack (SMA).

Shadow models imitate the target: clones of its learning procedure trained on disjoint
splits of data from the same population, so that for every queried record we know whether
it was in the shadow's training set. Their labelled query features fit any attacker here
(:class:`BTTAttack` reads the per-category statistics ``q_i``, ``p_i^train``, ``p_i^test``
from them; :class:`ShadowModelAttack` trains one attack model per class on them).
"""

from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from scipy.special import expit, logit
from sklearn.base import BaseEstimator, clone
from sklearn.neural_network import MLPClassifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from ..base import AttackerMixin, resolve_prior
from ..queries._classifier import DEFAULT_OUTPUTS, ClassifierQuery
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context
from ._btta import _log_odds

__all__ = ["ShadowModelAttack", "ShadowModels"]


def _seeded_clone(estimator, seed):
    """An unfitted clone whose unset ``random_state`` parameters take ``seed``.

    Seeds are drawn up front in the caller, so every shadow is the same for any ``n_jobs``
    and any joblib backend. A ``random_state`` the user fixed in the template is kept.
    """
    model = clone(estimator)
    params = model.get_params(deep=True)
    unset = {
        name: seed
        for name, value in params.items()
        if (name == "random_state" or name.endswith("__random_state")) and value is None
    }
    return model.set_params(**unset) if unset else model


def _train_and_query(estimator, X, y, train, queried, seed, outputs, layer):
    """One shadow: fit a seeded clone on ``X[train]``, query it on ``X[queried]``.

    Module-level (not a closure) so that joblib's process and Dask backends can pickle it.
    torch's global generator is seeded inside ``fork_rng``, so skorch nets are reproducible
    on CPU without touching the caller's generator state.
    """
    import torch

    model = _seeded_clone(estimator, seed)
    records = np.column_stack([X[queried], y[queried]])
    # torch's DataLoader draws from the generator even to predict: query inside fork_rng too
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model.fit(X[train], y[train])
        query = ClassifierQuery(model, outputs=outputs, layer=layer)
        Q = query.fit_transform(records)
        names = list(query.get_feature_names_out())
        if "correct" in names:
            correct = Q[:, names.index("correct")]
        else:
            correct = ClassifierQuery(model, outputs=("correct",)).fit_transform(records)[:, 0]
    return model, Q, np.asarray(names, dtype=object), correct


class ShadowModels(BaseEstimator):
    """Train clones of a classifier on population splits; label their queries.

    Two split designs:

    * ``split="disjoint"`` (Shokri et al.): the population is shuffled and cut into
      ``n_reference_models`` disjoint parts; in each part, ``train_size`` records train a
      clone of ``estimator`` (members) and the rest are held out (non-members). Every record
      is queried once, on its own part's shadow.
    * ``split="balanced"`` (Carlini et al.'s random halves): every shadow trains on a random
      subset of the whole population, drawn so that each record is a member of exactly
      ``round(train_size * n_reference_models)`` shadows (half of them at the default 0.5),
      and every record is queried on every shadow. This gives each record IN and OUT
      observations, as :class:`LiRAAttack` needs.
    * ``split="random"``: every shadow trains on its own random ``train_size`` fraction of
      the population, drawn independently of the other shadows, and every record is queried
      on every shadow. Unlike ``"balanced"`` it works with one shadow (a record may be IN
      or OUT of all of them): the offline design of :class:`RMIAAttack`, whose reference
      models train on population records only.

    Queries are :class:`~sklearn_mace.queries.ClassifierQuery` outputs of each shadow,
    giving labelled query features ``queries_`` and membership labels ``membership_``
    (1 = member). The shadows are independent tasks run through joblib (``n_jobs``), so
    ``joblib.parallel_config(backend="dask")`` runs them on a Dask cluster unchanged.

    Parameters
    ----------
    estimator : classifier
        An unfitted scikit-learn classifier with ``predict_proba`` or a skorch
        ``NeuralNetClassifier``, trained like the target. It is cloned, never fitted itself.
        ``random_state`` parameters left at None get a per-shadow seed drawn from
        ``random_state``; torch's generator is seeded with it too.
    n_reference_models : int, default=10
        Number of shadow (reference) models, each trained on population records, never on
        the target's data.
    train_size : float in (0, 1) or int, default=0.5
        ``"disjoint"``: training-set size of each shadow, a fraction of its part or a
        number of records (match the target's training-set size where you can).
        ``"balanced"``: the fraction of shadows each record trains (a float only).
        ``"random"``: the fraction of the population each shadow trains on (a float only).
    split : {"disjoint", "balanced", "random"}, default="disjoint"
        The split design described above.
    outputs : tuple of str, default=ClassifierQuery's default
        The query outputs (see :class:`~sklearn_mace.queries.ClassifierQuery`); the default
        is BTTAttack's layout. Use ``("true_label", "proba")`` for
        :class:`ShadowModelAttack`.
    layer : str, default=None
        Forwarded to ClassifierQuery for the ``"activations"`` output.
    n_jobs : int, default=None
        Shadows trained in parallel, one joblib task each (scikit-learn's semantics: None
        is 1 unless in a ``joblib.parallel_config`` context, -1 is all processors). The
        results do not depend on it.
    random_state : int, RandomState instance or None, default=None
        The splits and the per-shadow seeds, all drawn before any shadow is trained.
    verbose : int, default=0
        Show a progress bar over the shadow models when > 0.

    Attributes
    ----------
    estimators_ : list of fitted classifiers
        The shadow models.
    queries_ : ndarray of shape (n_records, n_query_features)
        Query features of every queried (record, shadow) pair: one row per record for
        ``"disjoint"``, ``n_reference_models`` rows per record for ``"balanced"`` and
        ``"random"``.
    membership_ : ndarray of shape (n_records,)
        1 if the record trained the shadow of that row, else 0.
    shadow_index_ : ndarray of shape (n_records,)
        Which shadow model each row of ``queries_`` comes from.
    sample_index_ : ndarray of shape (n_records,)
        Row of the population each row of ``queries_`` is.
    train_accuracies_, test_accuracies_ : ndarray of shape (n_reference_models,)
        Accuracy of every shadow on its members and on its queried non-members.
    feature_names_out_ : ndarray of str
        Names of the query columns.
    n_features_in_ : int
        Number of population features seen in ``fit``.

    References
    ----------
    R. Shokri, M. Stronati, C. Song, V. Shmatikov. Membership Inference Attacks Against
    Machine Learning Models. IEEE S&P 2017. N. Carlini, S. Chien, M. Nasr, S. Song,
    A. Terzis, F. Tramèr. Membership Inference Attacks From First Principles. IEEE S&P 2022,
    §IV-B and §V-A (shadow models on random halves).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_mace.attacks import BTTAttack, ShadowModels
    >>> X, y = load_iris(return_X_y=True)
    >>> shadows = ShadowModels(DecisionTreeClassifier(random_state=0), n_reference_models=3,
    ...                        random_state=0)
    >>> Q, m = shadows.fit_queries(X, y)
    >>> Q.shape, int(m.sum())
    ((150, 5), 75)
    >>> attack = BTTAttack(partition="predicted_label").fit(Q, m)
    >>> halves = ShadowModels(DecisionTreeClassifier(), n_reference_models=4, split="balanced",
    ...                       random_state=0).fit(X, y)
    >>> halves.queries_.shape, int(halves.membership_.sum())  # each record IN for 2 of 4
    ((600, 5), 300)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "n_reference_models": [Interval(Integral, 1, None, closed="left")],
        "train_size": [
            Interval(Real, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "split": [StrOptions({"disjoint", "balanced", "random"})],
        "outputs": [tuple, list],
        "layer": [None, str],
        "n_jobs": [None, Integral],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        *,
        n_reference_models=10,
        train_size=0.5,
        split="disjoint",
        outputs=DEFAULT_OUTPUTS,
        layer=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.n_reference_models = n_reference_models
        self.train_size = train_size
        self.split = split
        self.outputs = outputs
        self.layer = layer
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _split_sizes(self, part_size):
        if isinstance(self.train_size, Integral):
            n_train = int(self.train_size)
        else:
            n_train = int(round(self.train_size * part_size))
        if not 1 <= n_train < part_size:
            raise ValueError(
                f"Each of the n_reference_models={self.n_reference_models} population parts has "
                f"{part_size} records; train_size={self.train_size!r} must leave at least one "
                "member and one non-member in each. Give more data, fewer shadows or another "
                "train_size."
            )
        return n_train

    def _disjoint_tasks(self, n_samples, rng):
        """(train rows, queried rows, membership of the queried rows) per shadow."""
        parts = np.array_split(rng.permutation(n_samples), self.n_reference_models)
        sizes = [self._split_sizes(len(part)) for part in parts]
        return [
            (part[:size], part, (np.arange(len(part)) < size).astype(int))
            for part, size in zip(parts, sizes, strict=True)
        ]

    def _balanced_tasks(self, n_samples, rng):
        if isinstance(self.train_size, Integral):
            raise ValueError(
                f"split='balanced' needs train_size as a fraction of the shadows each record "
                f"trains, a float in (0, 1); got the count {self.train_size!r}."
            )
        n_in = int(round(self.train_size * self.n_reference_models))
        if not 1 <= n_in < self.n_reference_models:
            raise ValueError(
                f"split='balanced' with n_reference_models={self.n_reference_models} and "
                f"train_size={self.train_size!r} makes each record a member of {n_in} shadows; "
                "it must be a member of at least one and a non-member of at least one. Use more "
                "shadows."
            )
        # Carlini et al.'s design: per record, a uniformly random set of n_in shadows
        inside = rng.random_sample((self.n_reference_models, n_samples)).argsort(axis=0) < n_in
        everyone = np.arange(n_samples)
        return [(np.flatnonzero(row), everyone, row.astype(int)) for row in inside]

    def _random_tasks(self, n_samples, rng):
        if isinstance(self.train_size, Integral):
            raise ValueError(
                f"split='random' needs train_size as the fraction of the population each "
                f"shadow trains on, a float in (0, 1); got the count {self.train_size!r}."
            )
        n_in = int(round(self.train_size * n_samples))
        if not 1 <= n_in < n_samples:
            raise ValueError(
                f"split='random' with {n_samples} records and train_size={self.train_size!r} "
                f"trains each shadow on {n_in} records; it must leave at least one member and "
                "one non-member. Give more data or another train_size."
            )
        # per shadow, a uniformly random set of n_in records, independent across shadows
        inside = rng.random_sample((self.n_reference_models, n_samples)).argsort(axis=1) < n_in
        everyone = np.arange(n_samples)
        return [(np.flatnonzero(row), everyone, row.astype(int)) for row in inside]

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Train the shadow models and query them on their members and non-members.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Population records (features), drawn like the target's data; disjoint from the
            target's training set in an honest audit.
        y : array-like of shape (n_samples,)
            Their class labels (numeric).

        Returns
        -------
        self : ShadowModels
            The fitted shadow models, with ``queries_`` and ``membership_``.
        """
        # at least one member and one non-member in each of the n_reference_models parts
        X, y = validate_data(self, X, y, dtype=None, ensure_min_samples=2 * self.n_reference_models)
        rng = check_random_state(self.random_state)
        if self.split == "disjoint":
            tasks = self._disjoint_tasks(X.shape[0], rng)
        elif self.split == "balanced":
            tasks = self._balanced_tasks(X.shape[0], rng)
        else:
            tasks = self._random_tasks(X.shape[0], rng)
        seeds = rng.randint(np.iinfo(np.int32).max, size=self.n_reference_models)
        results = Parallel(n_jobs=self.n_jobs, return_as="generator")(
            delayed(_train_and_query)(
                self.estimator, X, y, train, queried, int(seed), self.outputs, self.layer
            )
            for (train, queried, _), seed in zip(tasks, seeds, strict=True)
        )
        results = list(
            tqdm(
                results,
                total=self.n_reference_models,
                desc="shadow models",
                disable=not self.verbose,
            )
        )
        self.estimators_ = [model for model, *_ in results]
        self.feature_names_out_ = results[-1][2]
        self.queries_ = np.concatenate([Q for _, Q, _, _ in results])
        self.membership_ = np.concatenate([member for *_, member in tasks])
        self.shadow_index_ = np.concatenate(
            [np.full(len(queried), k) for k, (_, queried, _) in enumerate(tasks)]
        )
        self.sample_index_ = np.concatenate([queried for _, queried, _ in tasks])
        # (correct, membership) per shadow
        pairs = [(res[3], task[2]) for res, task in zip(results, tasks, strict=True)]
        self.train_accuracies_ = np.array([c[m == 1].mean() for c, m in pairs])
        self.test_accuracies_ = np.array([c[m == 0].mean() for c, m in pairs])
        return self

    def fit_queries(self, X, y):
        """Fit, then return ``(queries_, membership_)`` to fit an attacker with.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Population records.
        y : array-like of shape (n_samples,)
            Their class labels.

        Returns
        -------
        queries : ndarray of shape (n_records, n_query_features)
            ``queries_``: the shadow models' queries of their own records.
        membership : ndarray of shape (n_records,)
            ``membership_``: 1 where the record was in its shadow model's training set.
        """
        self.fit(X, y)
        return self.queries_, self.membership_


class ShadowModelAttack(AttackerMixin, BaseEstimator):
    """Shokri et al.'s attack: one attack model per true class, trained on shadow queries.

    Query layout: **column 0 is the record's true label**, which picks the attack model;
    the remaining columns (Shokri: the model's probability vector) are that model's input.
    ``ClassifierQuery(model, outputs=("true_label", "proba"))`` and
    ``ShadowModels(..., outputs=("true_label", "proba"))`` produce it.

    A class whose shadow records are all members (or all non-members) gets a constant
    answer, that class; a class never seen in ``fit`` gets the prior (Take-the-Typical).

    The attack models learn P(member | query) at the member fraction ``π`` of the fitted
    records. With ``prior=p`` their log odds are moved by ``logit(p) − logit(π)`` (Bayes'
    rule with the class-conditional query densities unchanged), so shadows queried on a
    balanced split can attack at a real-world prior. ``predict`` says member where the
    resulting posterior exceeds 1/2, i.e. where ``decision_function`` is positive.

    Parameters
    ----------
    estimator : classifier, default=None
        The attack model, cloned for every class. None: an MLP with two hidden layers of
        50 ReLU units, as in the BTTA paper's replication.
    prior : float in (0, 1), default=None
        ``p = P(member)`` of the attack; None uses the member fraction of ``y``.
    random_state : int, RandomState instance or None, default=None
        Seeds the default MLP (ignored when ``estimator`` is given).
    member_label : object, default=None
        The label of the members in ``y``, like scikit-learn's ``pos_label``; it becomes
        ``classes_[1]``. ``None``: the greater label (``1`` of ``{0, 1}`` and ``{-1, 1}``,
        ``True`` of booleans); any other pair (e.g. strings) is accepted with a
        ``MembershipLabelWarning`` that names the label taken as the member.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels given to ``fit``, ``[non-member, member]``.
    n_features_in_ : int
        Query columns, label included.
    labels_ : ndarray
        True labels seen in ``fit``, one attack model each.
    estimators_ : list
        Per label: a fitted attack model, or the constant member probability (0.0 or 1.0)
        when the label's shadow records were of one membership class only.
    prior_ : float
        ``p``: the prior of the posteriors, and the answer for unseen labels.

    References
    ----------
    R. Shokri, M. Stronati, C. Song, V. Shmatikov. Membership Inference Attacks Against
    Machine Learning Models. IEEE S&P 2017. Bentley et al. (2021), Section "Description of
    SMA" and the Experimental Setup.

    Examples
    --------
    Shadow queries ``(true label, confidence)``: members get confidences in [0.8, 1],
    non-members in [0.4, 1], so a confidence below 0.8 gives a non-member away.

    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_mace.attacks import ShadowModelAttack
    >>> rng = np.random.default_rng(0)
    >>> membership = rng.integers(0, 2, 200)
    >>> confidence = np.where(membership == 1, rng.uniform(0.8, 1, 200), rng.uniform(0.4, 1, 200))
    >>> queries = np.column_stack([rng.integers(0, 2, 200), confidence])
    >>> attack = ShadowModelAttack(estimator=LogisticRegression()).fit(queries, membership)
    >>> attack.labels_.tolist(), attack.predict([[0, 0.5], [1, 0.5]]).tolist()
    ([0.0, 1.0], [0, 0])
    """

    _parameter_constraints: dict = {
        "estimator": [None, HasMethods(["fit", "predict_proba"])],
        "prior": [None, Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
        "member_label": "no_validation",
    }

    def __init__(self, estimator=None, *, prior=None, random_state=None, member_label=None):
        self.estimator = estimator
        self.prior = prior
        self.random_state = random_state
        self.member_label = member_label

    def _attack_model(self):
        if self.estimator is not None:
            return clone(self.estimator)
        return MLPClassifier(
            hidden_layer_sizes=(50, 50), max_iter=500, random_state=self.random_state
        )

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Train one attack model per true label (column 0 of ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features: true label, then the attack model's input.
        y : array-like of shape (n_samples,)
            Membership labels (``member_label`` names the member).

        Returns
        -------
        self : ShadowModelAttack
            The fitted attacker.
        """
        X, y = validate_data(self, X, y)
        if X.shape[1] < 2:
            raise ValueError(
                f"X has {X.shape[1]} feature(s) but ShadowModelAttack needs at least 2: the "
                "true label in column 0 and the attack model's input after it."
            )
        m = self._fit_membership_labels(y)
        self.prior_ = resolve_prior(self.prior, m)
        self._odds_shift = float(logit(self.prior_) - logit(m.mean()))
        self.labels_, inverse = np.unique(X[:, 0], return_inverse=True)
        self.estimators_ = []
        for k in range(self.labels_.size):
            rows = inverse == k
            if m[rows].min() == m[rows].max():
                self.estimators_.append(float(m[rows][0]))
            else:
                self.estimators_.append(self._attack_model().fit(X[rows, 1:], m[rows]))
        return self

    def predict_proba(self, X):
        """P(non-member), P(member) from the attack model of each record's true label.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features (true label in column 0).

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is P(member | query), column 0 its complement.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        member = np.full(X.shape[0], np.nan)
        position = np.clip(np.searchsorted(self.labels_, X[:, 0]), 0, self.labels_.size - 1)
        seen = self.labels_[position] == X[:, 0]
        for k in np.unique(position[seen]):
            rows = seen & (position == k)
            model = self.estimators_[k]
            if isinstance(model, float):
                member[rows] = model
            else:
                column = list(model.classes_).index(1)
                member[rows] = model.predict_proba(X[rows, 1:])[:, column]
        if self._odds_shift != 0.0:  # Bayes' rule at prior_ (constants 0 and 1 stay)
            with np.errstate(divide="ignore"):
                member = expit(logit(member) + self._odds_shift)
        member[~seen] = self.prior_
        return np.column_stack([1 - member, member])

    def predict(self, X):
        """``classes_[1]`` (member) where P(member | query) > 1/2, else ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features (true label in column 0).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` exactly where ``decision_function(X) > 0``.
        """
        return self._labels(self.decision_function(X) > 0)

    def decision_function(self, X):
        """Log odds of P(member | query) (clipped to [eps, 1 - eps]); positive means member.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features (true label in column 0).

        Returns
        -------
        decision : ndarray of shape (n_samples,)
            ``log(p / (1 - p))`` of ``p = predict_proba(X)[:, 1]`` (clipped); ``> 0`` exactly
            where ``predict`` says member.
        """
        return _log_odds(self.predict_proba(X)[:, 1])
