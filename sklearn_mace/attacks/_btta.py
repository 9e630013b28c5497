"""Bayesian Take-the-Typical (BTTA), its categorical form (CBTTA) and Take-the-Typical.

Bentley et al., "Quantifying Membership Inference Vulnerability via Generalization Gap and
Other Model Metrics" (2021): Alg. 1, Lemmas 1-3, Theorems 1-3, the partitions PTL, PPL,
PTC, PPC and their intersections.

The query is what a black-box adversary sees of a classifier on a labelled record. Its columns
follow one fixed layout, the default output of
:class:`~sklearn_mace.queries.ClassifierQuery`, so that one query matrix serves every
partition:

====== ============================== ===================================================
column name                           meaning
====== ============================== ===================================================
0      ``correct``                    1 if the model's prediction equals the true label
1      ``true_label``                 the true label ``y``
2      ``predicted_label``            the model's prediction ``M(x)``
3      ``true_label_confidence``      the probability the model gives the true label
4      ``predicted_label_confidence`` the largest probability, ``max_j M_j(x)``
====== ============================== ===================================================

An attack reads column 0 and the columns its partition needs; the others are ignored.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import AttackerMixin, check_prior, resolve_prior
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context

__all__ = ["BTTAttack", "TakeTheTypicalAttack", "btta_expected_metrics"]

#: Query column of each named piece of information (see the module docstring).
QUERY_COLUMNS = {
    "correct": 0,
    "true_label": 1,
    "predicted_label": 2,
    "true_label_confidence": 3,
    "predicted_label_confidence": 4,
}
PARTITIONS = tuple(QUERY_COLUMNS)[1:]
_CONFIDENCE_PARTITIONS = ("true_label_confidence", "predicted_label_confidence")

# Log posterior odds are reported for posteriors clipped to [EPS, 1 - EPS], so that a cell
# that only members (or only non-members) reach gets a large finite score instead of ±inf.
_EPS = np.finfo(float).eps
_TINY = np.finfo(float).tiny


def _correct_flag(Q):
    """Column 0 read as a boolean: values >= 0.5 mean "correctly classified"."""
    return (Q[:, 0] >= 0.5).astype(int)


def _log_odds(posterior):
    p = np.clip(posterior, _EPS, 1.0 - _EPS)
    return np.log(p) - np.log1p(-p)


def _signed_log_odds(posterior, reports_member):
    """Log posterior odds whose sign is the report: positive exactly where it says member.

    Alg. 1 reports a tie (posterior exactly 1/2, log odds 0) as a member (``>=``); there the
    value is the smallest positive float, above 0 and below the log odds of any posterior
    above 1/2, so the ranks of ``predict_proba`` are kept.
    """
    odds = _log_odds(posterior)
    return np.where(reports_member, np.maximum(odds, _TINY), np.minimum(odds, 0.0))


def btta_expected_metrics(prior, train_accuracy, test_accuracy):
    """Case, expected accuracy, precision and recall of the unpartitioned BTTA (Alg. 1).

    With ``q`` = ``prior``, ``p0`` = ``train_accuracy`` and ``p1`` = ``test_accuracy``, the
    paper's Cases are

    * Case 1, ``q·p0 >= (1-q)·p1`` and ``q(1-p0) >= (1-q)(1-p1)``: always report member;
      accuracy ``q``, precision ``q``, recall 1;
    * Case 2, both inequalities strict the other way: never report member; accuracy
      ``1-q``, recall 0, precision undefined (no record is reported a member, the ratio is
      0/0) and returned as NaN - the only NaN this module produces (the same 0/0 arises,
      and NaN is returned, in the degenerate Case 3 with ``p0 = p1 = 0`` and Case 4 with
      ``p0 = p1 = 1``: the branch that reports member is never taken);
    * Case 3, ``q·p0 >= (1-q)·p1`` and ``q(1-p0) < (1-q)(1-p1)``: report member iff the
      model is correct; accuracy ``q·p0 + (1-q)(1-p1)`` (Eq. 1), precision
      ``q·p0 / (q·p0 + (1-q)·p1)`` (Eq. 2), recall ``p0``;
    * Case 4 (excluded by Lemma 2 when ``p0 >= p1``, except at the edge ``p0 = p1 = 1``,
      ``q < 1/2``, which the Lemma's proof misses and where the misclassified branch is
      never taken; otherwise reached only when the test accuracy exceeds the training
      accuracy): report member iff the model is wrong; accuracy
      ``q(1-p0) + (1-q)·p1``, precision ``q(1-p0) / (q(1-p0) + (1-q)(1-p1))``, recall
      ``1-p0``.

    The paper prints Case 1's precision as ``q / (q + (1-q)) = 1``; always reporting member
    is right for a fraction ``q`` of the records, so its precision is ``q`` (checked by
    simulation in the tests).

    Parameters
    ----------
    prior : float in (0, 1)
        ``q``, the probability that a record is a member.
    train_accuracy, test_accuracy : float in [0, 1]
        ``p0`` and ``p1``, the model's accuracy on members and on non-members.

    Returns
    -------
    case : int in {1, 2, 3, 4}
        Which of the paper's Cases applies (see above).
    accuracy, precision, recall : float
        ``precision`` is NaN in Case 2 only.

    Examples
    --------
    >>> from sklearn_mace.attacks import btta_expected_metrics
    >>> case, acc, prec, rec = btta_expected_metrics(0.5, 1.0, 0.673)  # Table 1, Location
    >>> case, round(prec, 3)
    (3, 0.598)
    """
    q = check_prior(prior)
    p0 = _check_accuracy(train_accuracy, "train_accuracy")
    p1 = _check_accuracy(test_accuracy, "test_accuracy")
    member_if_correct = q * p0 >= (1 - q) * p1
    member_if_wrong = q * (1 - p0) >= (1 - q) * (1 - p1)
    if member_if_correct and member_if_wrong:
        return 1, q, q, 1.0
    if not member_if_correct and not member_if_wrong:
        return 2, 1 - q, float("nan"), 0.0
    if member_if_correct:
        reported = q * p0 + (1 - q) * p1
        precision = q * p0 / reported if reported > 0 else float("nan")
        return 3, q * p0 + (1 - q) * (1 - p1), precision, p0
    reported = q * (1 - p0) + (1 - q) * (1 - p1)
    precision = q * (1 - p0) / reported if reported > 0 else float("nan")
    return 4, q * (1 - p0) + (1 - q) * p1, precision, 1 - p0


def _check_accuracy(value, name):
    if isinstance(value, bool) or not isinstance(value, Real | np.number):
        raise TypeError(f"{name} must be a float in [0, 1]; got {value!r}.")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]; got {value!r}.")
    return float(value)


def _warn_if_test_above_train(train_accuracy, test_accuracy):
    if test_accuracy > train_accuracy:
        warnings.warn(
            f"The test accuracy ({test_accuracy:.4g}) exceeds the training accuracy "
            f"({train_accuracy:.4g}); the BTTA paper assumes the opposite (Lemma 2). Bayes' "
            "rule is applied all the same (Case 4: misclassified records are the likelier "
            "members).",
            UserWarning,
            stacklevel=3,
        )


class BTTAttack(AttackerMixin, BaseEstimator):
    """Bayesian Take-the-Typical attack and its categorical form (BTTA / CBTTA).

    Bentley et al. (2021), Alg. 1: a record on which the model is correct is reported a
    member iff ``q·p0 >= (1-q)·p1`` (Lemma 1), a misclassified one iff
    ``q(1-p0) >= (1-q)(1-p1)``, where ``q`` is the membership prior, ``p0`` the training
    and ``p1`` the test accuracy. It is the most accurate attack that knows only these
    numbers (Theorems 1-2). The categorical form (CBTTA, Theorem 3) partitions the records
    into categories ``D_i`` and applies Alg. 1 inside each with its own ``q_i``,
    ``p_i^train`` and ``p_i^test``; it is never less accurate in expectation than BTTA.

    **Query columns** (``X``; the default output of
    :class:`~sklearn_mace.queries.ClassifierQuery`):

    0. ``correct`` - the correctness flag; values ``>= 0.5`` count as correct (0/1 or
       booleans in practice);
    1. ``true_label`` - read by ``"true_label"``;
    2. ``predicted_label`` - read by ``"predicted_label"``;
    3. ``true_label_confidence`` - read by ``"true_label_confidence"``;
    4. ``predicted_label_confidence`` - read by ``"predicted_label_confidence"``.

    An attack needs the columns up to the last one its partition reads (one column for
    ``partition=None``) and ignores any further ones; a callable partition receives the
    whole matrix.

    Parameters
    ----------
    partition : None, str, list of str or callable, default=None
        How records are put into categories:

        * ``None``: one category (plain BTTA);
        * ``"true_label"`` (PTL) or ``"predicted_label"`` (PPL): one category per label;
        * ``"true_label_confidence"`` (PTC): ``n_bins`` equal intervals of ``[0, 1]`` for
          the probability of the true label;
        * ``"predicted_label_confidence"`` (PPC): ``n_bins`` equal intervals of
          ``[1/m, 1]`` for the largest probability (``m`` = ``n_classes``; ``[0, 1]`` when
          ``n_classes`` is None);
        * a list of these names: the intersection of their categories (e.g.
          ``["predicted_label", "predicted_label_confidence"]``);
        * a callable ``partition(Q)`` returning, for every row of the query matrix, its
          category key: a numeric array of shape ``(n_samples,)`` or
          ``(n_samples, n_keys)``.

    n_bins : int, default=10
        Number of confidence intervals ``n`` for the confidence partitions. Confidences
        outside the interval are put in its first or last bin.
    n_classes : int >= 2, default=None
        Number of classes ``m`` of the target model; only used to place the PPC bins on
        ``[1/m, 1]`` as in the paper.
    prior : float in (0, 1), default=None
        ``q = P(member)``. None uses the fraction of members in the labels given to
        ``fit``. The per-category ``q_i`` are re-weighted to this prior.
    member_label : object, default=None
        The label of the members in ``y``, like scikit-learn's ``pos_label``; it becomes
        ``classes_[1]``. ``None``: the greater label (``1`` of ``{0, 1}`` and ``{-1, 1}``,
        ``True`` of booleans); any other pair (e.g. strings) is accepted with a
        ``MembershipLabelWarning`` that names the label taken as the member.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels given to ``fit``, ``[non-member, member]`` (``[0, 1]`` after
        :meth:`from_accuracies`).
    n_features_in_ : int
        Number of query columns seen in ``fit``.
    prior_ : float
        The prior ``q`` used.
    train_accuracy_, test_accuracy_ : float
        Overall accuracy of the target on members (``p0``) and non-members (``p1``).
    case_ : int in {1, 2, 3, 4}
        Which Case of the paper the unpartitioned attack is in.
    categories_ : ndarray of shape (n_categories, n_keys)
        Category keys seen in ``fit`` (a single all-zero key when ``partition`` is None).
    category_likelihoods_ : ndarray of shape (n_categories, 2, 2)
        ``[i, m, c]`` = P(category ``i`` and correctness ``c`` | membership ``m``): the
        statistics the attack is built on. ``p_i^train`` is
        ``[i, 1, 1] / [i, 1, :].sum()``, ``p_i^test`` is ``[i, 0, 1] / [i, 0, :].sum()``.
    category_priors_ : ndarray of shape (n_categories,)
        ``q_i``, the member fraction in each category at prior ``prior_``.
    category_posteriors_ : ndarray of shape (n_categories, 2)
        P(member | category ``i``, correctness ``c``), column ``c`` = 0 wrong, 1 correct.
    category_reports_member_ : ndarray of bool, shape (n_categories, 2)
        Alg. 1's report in each category for wrong (column 0) and correct (column 1).
    degenerate_categories_ : ndarray of int
        Indices of categories that held only members or only non-members in ``fit``. Their
        ``q_i`` is 1 or 0, so Alg. 1 reports the one class seen there whatever the
        correctness (Take-the-Typical inside the category; the undefined ``p_i^test`` or
        ``p_i^train`` is multiplied by zero). This is the documented fallback, not an error,
        because confidence bins of an overfit model routinely hold no members at all.
    category_counts_ : ndarray of shape (n_categories, 2, 2)
        Record counts ``[i, m, c]`` (only when fitted on data, not via
        :meth:`from_accuracies`).
    expected_accuracy_, expected_precision_, expected_recall_ : float
        Expected metrics of this attack on records drawn like the fitted statistics. For
        ``partition=None`` they are the paper's closed forms (Cases 1-3, see
        :func:`btta_expected_metrics`); for a partition they are the same sums taken cell
        by cell. Precision is NaN only when no record is ever reported a member (Case 2):
        the ratio is then 0/0 and undefined, as the paper says.
    typical_accuracy_ : float
        ``max(q, 1 - q)``, the accuracy of Take-the-Typical (Lemma 3 lower bound).

    See Also
    --------
    TakeTheTypicalAttack : the trivial baseline that ignores the model.
    sklearn_mace.queries.ClassifierQuery : produces the query columns.

    Notes
    -----
    Cells (category, correctness) that no fitted record reached have no Alg. 1 answer (both
    sides of the comparison are 0); they fall back to the category's Take-the-Typical
    answer ``q_i >= 1/2``. A category never seen in ``fit`` falls back to the unpartitioned
    BTTA. Exact ties are reported as members (Alg. 1 uses ``>=``); there
    ``predict_proba`` is exactly 1/2 and ``decision_function`` the smallest positive float,
    so that its sign is ``predict``'s decision everywhere.

    References
    ----------
    J. W. Bentley, D. Gibney, G. Hoppenworth, S. K. Jha. Quantifying Membership Inference
    Vulnerability via Generalization Gap and Other Model Metrics. AAAI, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.attacks import BTTAttack
    >>> attack = BTTAttack.from_accuracies(0.848, 0.842, prior=0.5)  # Adult, Table 1
    >>> round(attack.expected_precision_, 3), round(attack.expected_accuracy_, 3)
    (0.502, 0.503)
    >>> attack.predict(np.array([[1], [0]]))
    array([1, 0])
    """

    _parameter_constraints: dict = {
        "partition": [None, StrOptions(set(PARTITIONS)), list, tuple, callable],
        "n_bins": [Interval(Integral, 1, None, closed="left")],
        "n_classes": [None, Interval(Integral, 2, None, closed="left")],
        "prior": [None, Interval(Real, 0, 1, closed="neither")],
        "member_label": "no_validation",
    }

    def __init__(self, *, partition=None, n_bins=10, n_classes=None, prior=None, member_label=None):
        self.partition = partition
        self.n_bins = n_bins
        self.n_classes = n_classes
        self.prior = prior
        self.member_label = member_label

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The attack reads one bit (column 0) and a few category keys of the query: it is
        # not meant to fit arbitrary data well.
        tags.classifier_tags.poor_score = True
        return tags

    # ------------------------------------------------------------------ partition
    def _partition_names(self):
        if self.partition is None or callable(self.partition):
            return ()
        names = (self.partition,) if isinstance(self.partition, str) else tuple(self.partition)
        if not names:
            raise ValueError("partition must not be an empty list; use None for plain BTTA.")
        for name in names:
            if name not in PARTITIONS:
                raise ValueError(f"partition entries must be among {PARTITIONS}; got {name!r}.")
        if len(set(names)) != len(names):
            raise ValueError(f"partition lists a name twice: {list(names)!r}.")
        return names

    def _n_required_columns(self):
        names = self._partition_names()
        return 1 + max((QUERY_COLUMNS[name] for name in names), default=0)

    def _category_keys(self, Q):
        """Category key rows, shape (n_samples, n_keys)."""
        if self.partition is None:
            return np.zeros((Q.shape[0], 1))
        if callable(self.partition):
            keys = np.asarray(self.partition(Q))
            if keys.ndim == 1:
                keys = keys[:, None]
            if keys.ndim != 2 or keys.shape[0] != Q.shape[0]:
                raise ValueError(
                    "partition(Q) must return one category key per row of Q, as an array "
                    f"of shape (n_samples,) or (n_samples, n_keys); got shape {keys.shape}."
                )
            if not np.issubdtype(keys.dtype, np.number) and keys.dtype != bool:
                raise TypeError(
                    f"partition(Q) must return numeric category keys; got dtype {keys.dtype}."
                )
            return keys.astype(float)
        columns = []
        for name in self._partition_names():
            values = Q[:, QUERY_COLUMNS[name]]
            if name in _CONFIDENCE_PARTITIONS:
                values = self._confidence_bin(values, name)
            columns.append(values)
        return np.column_stack(columns).astype(float)

    def _confidence_bin(self, confidence, name):
        """Index of the interval I_1..I_n (0-based) that holds each confidence."""
        low = 0.0
        if name == "predicted_label_confidence" and self.n_classes is not None:
            low = 1.0 / self.n_classes
        width = (1.0 - low) / self.n_bins
        return np.clip(np.floor((confidence - low) / width), 0, self.n_bins - 1)

    def _category_index(self, keys):
        """Index into ``categories_`` of every key row; -1 for a category never fitted."""
        n_cat = self.categories_.shape[0]
        if keys.shape[1] != self.categories_.shape[1]:
            raise ValueError(
                f"partition(Q) returned {keys.shape[1]} key column(s) but {n_cat} categories "
                f"with {self.categories_.shape[1]} key column(s) were fitted."
            )
        _, inverse = np.unique(np.vstack([self.categories_, keys]), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        category_of_unique = np.full(inverse.max() + 1, -1)
        category_of_unique[inverse[:n_cat]] = np.arange(n_cat)
        return category_of_unique[inverse[n_cat:]]

    # ------------------------------------------------------------------ fitting
    def _validate_query(self, X, y=None, *, reset):
        if reset:
            X, y = validate_data(self, X, y)
        else:
            X = validate_data(self, X, reset=False)
        needed = self._n_required_columns()
        if X.shape[1] < needed:
            raise ValueError(
                f"X has {X.shape[1]} feature(s) but partition={self.partition!r} needs "
                f"{needed} query columns: {list(QUERY_COLUMNS)[:needed]} (see BTTAttack)."
            )
        return X, y

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Estimate ``q_i``, ``p_i^train`` and ``p_i^test`` per category from labelled queries.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features in the layout of the module docstring (column 0 = correctness
            flag), typically from shadow models (:class:`~sklearn_mace.attacks.ShadowModels`).
        y : array-like of shape (n_samples,)
            Membership labels: 1 member, 0 or -1 non-member, booleans, or any two labels
            with ``member_label`` naming the member.

        Returns
        -------
        self : BTTAttack
            The fitted attacker.
        """
        self._partition_names()  # validates list entries
        Q, y = self._validate_query(X, y, reset=True)
        m = self._fit_membership_labels(y)
        correct = _correct_flag(Q)
        categories, inverse = np.unique(self._category_keys(Q), axis=0, return_inverse=True)
        counts = np.zeros((categories.shape[0], 2, 2), dtype=np.int64)
        np.add.at(counts, (inverse.ravel(), m, correct), 1)
        n_per_class = np.bincount(m, minlength=2).astype(float)
        self.category_counts_ = counts
        self._set_statistics(
            categories, counts / n_per_class[None, :, None], resolve_prior(self.prior, m)
        )
        return self

    @classmethod
    def from_accuracies(cls, train_accuracy, test_accuracy, prior=0.5):
        """A fitted, unpartitioned BTTA from published statistics (Alg. 1 inputs).

        Parameters
        ----------
        train_accuracy : float in [0, 1]
            ``p0``, the target's accuracy on its training set.
        test_accuracy : float in [0, 1]
            ``p1``, its accuracy on non-members. Above ``train_accuracy`` a warning is
            raised and Bayes' rule is applied all the same (Case 4).
        prior : float in (0, 1), default=0.5
            ``q``, the probability that an attacked record is a member.

        Returns
        -------
        attack : BTTAttack
            Fitted; its ``predict(Q)`` takes the correctness flag as ``Q``'s single column.
        """
        p0 = _check_accuracy(train_accuracy, "train_accuracy")
        p1 = _check_accuracy(test_accuracy, "test_accuracy")
        attack = cls(prior=check_prior(prior))
        attack.classes_ = np.array([0, 1])
        attack.n_features_in_ = 1
        likelihoods = np.array([[[1 - p1, p1], [1 - p0, p0]]])
        attack._set_statistics(np.zeros((1, 1)), likelihoods, attack.prior)
        return attack

    def _set_statistics(self, categories, likelihoods, prior):
        """Derive every fitted table from ``likelihoods[i, m, c]`` and the prior."""
        self.prior_ = prior
        self.categories_ = categories
        self.category_likelihoods_ = likelihoods
        # sums of per-category likelihoods can round to 1 + 1e-16
        overall = np.clip(likelihoods.sum(axis=0), 0.0, 1.0)
        self.train_accuracy_ = float(overall[1, 1])
        self.test_accuracy_ = float(overall[0, 1])
        _warn_if_test_above_train(self.train_accuracy_, self.test_accuracy_)

        member_mass = prior * likelihoods[:, 1, :]  # P(member, i, c)
        non_member_mass = (1 - prior) * likelihoods[:, 0, :]
        category_member = member_mass.sum(axis=1)
        category_total = category_member + non_member_mass.sum(axis=1)
        self.category_priors_ = category_member / category_total
        self.degenerate_categories_ = np.flatnonzero(
            (likelihoods[:, 1, :].sum(axis=1) == 0) | (likelihoods[:, 0, :].sum(axis=1) == 0)
        )
        self.category_posteriors_, self.category_reports_member_ = _cell_rule(
            member_mass, non_member_mass, self.category_priors_[:, None]
        )
        overall_posterior, overall_member = _cell_rule(
            prior * overall[1], (1 - prior) * overall[0], np.full(2, prior)
        )
        self._overall_posterior, self._overall_reports_member = overall_posterior, overall_member

        self.case_ = btta_expected_metrics(prior, self.train_accuracy_, self.test_accuracy_)[0]
        self.typical_accuracy_ = max(prior, 1 - prior)
        if self.partition is None:
            _, accuracy, precision, recall = btta_expected_metrics(
                prior, self.train_accuracy_, self.test_accuracy_
            )
        else:
            accuracy, precision, recall = _cellwise_metrics(
                member_mass, non_member_mass, self.category_reports_member_, prior
            )
        self.expected_accuracy_ = float(accuracy)
        self.expected_precision_ = float(precision)
        self.expected_recall_ = float(recall)

    # ------------------------------------------------------------------ prediction
    def _lookup(self, X):
        check_is_fitted(self)
        Q, _ = self._validate_query(X, reset=False)
        correct = _correct_flag(Q)
        category = self._category_index(self._category_keys(Q))
        seen = category >= 0
        posterior = self._overall_posterior[correct]
        member = self._overall_reports_member[correct]
        posterior[seen] = self.category_posteriors_[category[seen], correct[seen]]
        member[seen] = self.category_reports_member_[category[seen], correct[seen]]
        return posterior, member

    def predict(self, X):
        """Alg. 1 in the category of each record: ``classes_[1]`` (member) or ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features (column 0 = correctness flag).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the guess is "member", else ``classes_[0]``.
        """
        return self._labels(self._lookup(X)[1])

    def predict_proba(self, X):
        """P(non-member | query), P(member | query) from the category statistics (Lemma 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features (column 0 = correctness flag).

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Column 1 is P(member | query), column 0 its complement.
        """
        posterior = self._lookup(X)[0]
        return np.column_stack([1 - posterior, posterior])

    def decision_function(self, X):
        """Log posterior odds of membership; positive exactly where ``predict`` says member.

        Posteriors are clipped to ``[eps, 1 - eps]``; a tie reported as a member (Alg. 1's
        ``>=``) gets the smallest positive float instead of 0.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features (column 0 = correctness flag).

        Returns
        -------
        log_odds : ndarray of shape (n_samples,)
            Log posterior odds of membership; positive where the guess is "member".
        """
        return _signed_log_odds(*self._lookup(X))


def _cell_rule(member_mass, non_member_mass, fallback_prior):
    """Posterior and Alg. 1 report per cell; empty cells take the fallback prior's answer."""
    total = member_mass + non_member_mass
    empty = total == 0
    fallback = np.broadcast_to(fallback_prior, total.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        posterior = np.where(empty, fallback, member_mass / np.where(empty, 1.0, total))
    reports_member = np.where(empty, fallback >= 0.5, member_mass >= non_member_mass)
    return posterior, reports_member


def _cellwise_metrics(member_mass, non_member_mass, reports_member, prior):
    """Expected accuracy, precision, recall of a cell-wise rule (the Case sums, per cell)."""
    true_positive = member_mass[reports_member].sum()
    false_positive = non_member_mass[reports_member].sum()
    accuracy = true_positive + non_member_mass[~reports_member].sum()
    reported = true_positive + false_positive
    precision = true_positive / reported if reported > 0 else float("nan")
    return accuracy, precision, true_positive / prior


class TakeTheTypicalAttack(AttackerMixin, BaseEstimator):
    """Take-the-Typical: report every record a member iff ``q >= 1/2`` (Bentley et al., 2021).

    The trivial baseline that ignores the model; its accuracy ``max(q, 1 - q)`` is the floor
    BTTA never falls below (Lemma 3). Membership advantage at ``q = 1/2``: 0.

    It has no ``predict_proba``: the posterior is the prior, and at the usual ``q = 1/2``
    the paper's answer (member, ``q >= 1/2``) and scikit-learn's argmax convention
    (the first class on a tie) would disagree. ``decision_function`` is the constant log
    prior odds (the smallest positive float at ``q = 1/2``), so its sign is ``predict``'s.

    Parameters
    ----------
    prior : float in (0, 1), default=None
        ``q = P(member)``; None uses the member fraction of the labels given to ``fit``.
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
        Number of query columns seen in ``fit`` (all ignored).
    prior_ : float
        ``q``.
    expected_accuracy_ : float
        ``max(q, 1 - q)``.

    Examples
    --------
    >>> from sklearn_mace.attacks import TakeTheTypicalAttack
    >>> TakeTheTypicalAttack().fit([[0], [1], [1]], [1, 1, 0]).predict([[0], [1]])
    array([1, 1])
    """

    _parameter_constraints: dict = {
        "prior": [None, Interval(Real, 0, 1, closed="neither")],
        "member_label": "no_validation",
    }

    def __init__(self, *, prior=None, member_label=None):
        self.prior = prior
        self.member_label = member_label

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True  # a constant prediction by design
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Record the prior ``q`` (from ``y`` unless ``prior`` is given).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features (ignored apart from validation).
        y : array-like of shape (n_samples,)
            Membership labels.

        Returns
        -------
        self : TakeTheTypicalAttack
            The fitted attacker.
        """
        _, y = validate_data(self, X, y)
        self.prior_ = resolve_prior(self.prior, self._fit_membership_labels(y))
        self.expected_accuracy_ = max(self.prior_, 1 - self.prior_)
        return self

    def decision_function(self, X):
        """The log prior odds ``log(q / (1 - q))`` for every record; positive iff ``q >= 1/2``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features (ignored apart from validation).

        Returns
        -------
        decision : ndarray of shape (n_samples,)
            Constant; at ``q = 1/2`` the smallest positive float (the paper's tie: member).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        q = np.full(X.shape[0], self.prior_)
        return _signed_log_odds(q, q >= 0.5)

    def predict(self, X):
        """``classes_[1]`` (member) for every record iff ``q >= 1/2``, else ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query features (ignored apart from validation).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The same label for every row: ``classes_[1]`` if ``prior_ >= 1/2``, else
            ``classes_[0]``.
        """
        return self._labels(self.decision_function(X) > 0)
