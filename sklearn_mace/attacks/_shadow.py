"""Shadow models (Shokri et al., 2017) and the per-class shadow-model attack (SMA).

Shadow models imitate the target: clones of its learning procedure trained on disjoint
splits of data from the same population, so that for every queried record we know whether
it was in the shadow's training set. Their labelled query features fit any attacker here
(:class:`BTTAttack` reads the per-category statistics ``q_i``, ``p_i^train``, ``p_i^test``
from them; :class:`ShadowModelAttack` trains one attack model per class on them).
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.neural_network import MLPClassifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from ..base import AttackerMixin
from ..queries._classifier import DEFAULT_OUTPUTS, ClassifierQuery
from ._btta import _log_odds

__all__ = ["ShadowModelAttack", "ShadowModels"]


class ShadowModels(BaseEstimator):
    """Train clones of a classifier on disjoint population splits; label their queries.

    The population is shuffled and cut into ``n_shadow`` disjoint parts; in each part,
    ``train_size`` records train a clone of ``estimator`` (members) and the rest are held
    out (non-members). Every record of every part is then queried with
    :class:`~sklearn_mace.queries.ClassifierQuery` on its own shadow model, giving labelled
    query features ``queries_`` and membership labels ``membership_`` (1 = member).

    Parameters
    ----------
    estimator : classifier
        An unfitted scikit-learn classifier with ``predict_proba`` or a skorch
        ``NeuralNetClassifier``, trained like the target. It is cloned, never fitted itself.
    n_shadow : int, default=10
        Number of shadow models (and disjoint population parts).
    train_size : float in (0, 1) or int, default=0.5
        Training-set size of each shadow: a fraction of its part, or a number of records.
        Match the target's training-set size where you can.
    outputs : tuple of str, default=ClassifierQuery's default
        The query outputs (see :class:`~sklearn_mace.queries.ClassifierQuery`); the default
        is BTTAttack's layout. Use ``("true_label", "proba")`` for
        :class:`ShadowModelAttack`.
    layer : str, default=None
        Forwarded to ClassifierQuery for the ``"activations"`` output.
    random_state : int, RandomState instance or None, default=None
        Shuffling of the population.
    verbose : int, default=0
        Show a progress bar over the shadow models when > 0.

    Attributes
    ----------
    estimators_ : list of fitted classifiers
        The shadow models.
    queries_ : ndarray of shape (n_records, n_query_features)
        Query features of every record of every part, on its own shadow model.
    membership_ : ndarray of shape (n_records,)
        1 if the record trained its shadow model, else 0.
    shadow_index_ : ndarray of shape (n_records,)
        Which shadow model each row of ``queries_`` comes from.
    sample_index_ : ndarray of shape (n_records,)
        Row of the population each row of ``queries_`` is.
    train_accuracies_, test_accuracies_ : ndarray of shape (n_shadow,)
        Accuracy of every shadow on its training part and on its held-out part.
    feature_names_out_ : ndarray of str
        Names of the query columns.
    n_features_in_ : int
        Number of population features seen in ``fit``.

    References
    ----------
    R. Shokri, M. Stronati, C. Song, V. Shmatikov. Membership Inference Attacks Against
    Machine Learning Models. IEEE S&P 2017.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_mace.attacks import BTTAttack, ShadowModels
    >>> X, y = load_iris(return_X_y=True)
    >>> shadows = ShadowModels(DecisionTreeClassifier(random_state=0), n_shadow=3,
    ...                        random_state=0)
    >>> Q, m = shadows.fit_queries(X, y)
    >>> Q.shape, int(m.sum())
    ((150, 5), 75)
    >>> attack = BTTAttack(partition="predicted_label").fit(Q, m)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "n_shadow": [Interval(Integral, 1, None, closed="left")],
        "train_size": [
            Interval(Real, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "outputs": [tuple, list],
        "layer": [None, str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        *,
        n_shadow=10,
        train_size=0.5,
        outputs=DEFAULT_OUTPUTS,
        layer=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.n_shadow = n_shadow
        self.train_size = train_size
        self.outputs = outputs
        self.layer = layer
        self.random_state = random_state
        self.verbose = verbose

    def _split_sizes(self, part_size):
        if isinstance(self.train_size, Integral):
            n_train = int(self.train_size)
        else:
            n_train = int(round(self.train_size * part_size))
        if not 1 <= n_train < part_size:
            raise ValueError(
                f"Each of the n_shadow={self.n_shadow} population parts has {part_size} "
                f"records; train_size={self.train_size!r} must leave at least one member and "
                "one non-member in each. Give more data, fewer shadows or another train_size."
            )
        return n_train

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
        """
        # at least one member and one non-member in each of the n_shadow parts
        X, y = validate_data(self, X, y, dtype=None, ensure_min_samples=2 * self.n_shadow)
        rng = check_random_state(self.random_state)
        parts = np.array_split(rng.permutation(X.shape[0]), self.n_shadow)
        n_train = [self._split_sizes(len(part)) for part in parts]
        self.estimators_ = []
        queries, membership, shadow_index, sample_index = [], [], [], []
        self.train_accuracies_ = np.empty(self.n_shadow)
        self.test_accuracies_ = np.empty(self.n_shadow)
        iterator = tqdm(
            enumerate(zip(parts, n_train, strict=True)),
            total=self.n_shadow,
            desc="shadow models",
            disable=not self.verbose,
        )
        for k, (part, size) in iterator:
            model = clone(self.estimator).fit(X[part[:size]], y[part[:size]])
            query = ClassifierQuery(model, self.outputs, layer=self.layer)
            records = np.column_stack([X[part], y[part]])
            Q = query.fit_transform(records)
            member = (np.arange(len(part)) < size).astype(int)
            names = list(query.get_feature_names_out())
            if "correct" in names:
                correct = Q[:, names.index("correct")]
            else:
                correct = ClassifierQuery(model, ("correct",)).fit_transform(records)[:, 0]
            self.train_accuracies_[k] = correct[member == 1].mean()
            self.test_accuracies_[k] = correct[member == 0].mean()
            self.estimators_.append(model)
            queries.append(Q)
            membership.append(member)
            shadow_index.append(np.full(len(part), k))
            sample_index.append(part)
        self.feature_names_out_ = query.get_feature_names_out()
        self.queries_ = np.concatenate(queries)
        self.membership_ = np.concatenate(membership)
        self.shadow_index_ = np.concatenate(shadow_index)
        self.sample_index_ = np.concatenate(sample_index)
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
        membership : ndarray of shape (n_records,)
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
    answer, that class; a class never seen in ``fit`` gets the overall member fraction
    (Take-the-Typical).

    Parameters
    ----------
    estimator : classifier, default=None
        The attack model, cloned for every class. None: an MLP with two hidden layers of
        50 ReLU units, as in the BTTA paper's replication.
    random_state : int, RandomState instance or None, default=None
        Seeds the default MLP (ignored when ``estimator`` is given).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``[0, 1]``, or the two labels given to ``fit`` (the greater = member).
    n_features_in_ : int
        Query columns, label included.
    labels_ : ndarray
        True labels seen in ``fit``, one attack model each.
    estimators_ : list
        Per label: a fitted attack model, or the constant member probability (0.0 or 1.0)
        when the label's shadow records were of one membership class only.
    prior_ : float
        Member fraction of the fitted records, the answer for unseen labels.

    References
    ----------
    R. Shokri, M. Stronati, C. Song, V. Shmatikov. Membership Inference Attacks Against
    Machine Learning Models. IEEE S&P 2017. Bentley et al. (2021), Section "Description of
    SMA" and the Experimental Setup.
    """

    _parameter_constraints: dict = {
        "estimator": [None, HasMethods(["fit", "predict_proba"])],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, random_state=None):
        self.estimator = estimator
        self.random_state = random_state

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
            Membership labels.

        Returns
        -------
        self : ShadowModelAttack
        """
        X, y = validate_data(self, X, y)
        if X.shape[1] < 2:
            raise ValueError(
                f"X has {X.shape[1]} feature(s) but ShadowModelAttack needs at least 2: the "
                "true label in column 0 and the attack model's input after it."
            )
        m = self._fit_membership_labels(y)
        self.prior_ = float(m.mean())
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
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        member = np.full(X.shape[0], self.prior_)
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
        return np.column_stack([1 - member, member])

    def predict(self, X):
        """``classes_[1]`` (member) where P(member | query) > 1/2, else ``classes_[0]``."""
        member = (self.predict_proba(X)[:, 1] > 0.5).astype(int)
        return self.classes_[member]

    def decision_function(self, X):
        """Log odds of the attack models' member probability (clipped to [eps, 1 - eps])."""
        return _log_odds(self.predict_proba(X)[:, 1])
