"""What LiRA and RMIA share: the pool of records, its reference models, the views they query.

Both attacks train clones of the target's recipe on random halves of a pool (the records of
known membership, then optional population records) with :class:`ShadowModels`
(``split="balanced"``: every record IN for half of the models), or take such a fitted set,
so that one set of reference models can serve several attacks. Records are matched by value.

RMIA's offline design trains them on the population rows alone (``split="random"`` for one
model, ``"balanced"`` for more): the records of known membership then train none of them.
"""

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ..base import AttackerMixin, ScoreCutMixin, resolve_prior
from ._shadow import ShadowModels

__all__ = [
    "ReferenceModelAttack",
    "check_reference_models",
    "population_reference_models",
    "pool_of",
    "pool_inside",
    "record_keys",
    "view_stack",
]


def record_keys(records):
    """Hashable identity of each record (``+ 0.0`` maps -0.0 to 0.0)."""
    records = np.ascontiguousarray(records + 0.0)
    return [row.tobytes() for row in records]


def pool_of(name, X, population, n_models):
    """``X`` with the ``population`` rows below it, checked to be wide and large enough."""
    pool = X
    if population is not None:
        population = check_array(population, dtype=np.float64, input_name="population")
        if population.shape[1] != X.shape[1]:
            raise ValueError(
                f"population has {population.shape[1]} columns but X has {X.shape[1]}; "
                "both hold records (input columns, then the true label)."
            )
        pool = np.vstack([X, population])
    if n_models is not None and pool.shape[0] < 2 * n_models:
        raise ValueError(
            f"{name} with {n_models} reference models needs at least {2 * n_models} pool "
            f"records (X plus population); got {pool.shape[0]}."
        )
    return pool


def check_reference_models(reference_models, pool, splits=("balanced",), what=None):
    """A fitted :class:`ShadowModels` of one of ``splits`` trained on ``pool`` (its rows
    counted); ``what`` names the pool in the error (default: X, then population)."""
    what = "the pool's {n} records (X, then population, in that order)" if what is None else what
    wanted = " or ".join(f"split={split!r}" for split in splits)
    if not isinstance(reference_models, ShadowModels):
        raise TypeError(
            f"reference_models must be a fitted ShadowModels ({wanted}) trained on the "
            f"pool; got {type(reference_models).__name__}."
        )
    check_is_fitted(reference_models, "estimators_")
    n_models = len(reference_models.estimators_)
    if reference_models.split not in splits or reference_models.membership_.size != (
        n_models * pool.shape[0]
    ):
        raise ValueError(
            f"reference_models must be ShadowModels({wanted}) fitted on "
            f"{what.format(n=pool.shape[0])}; got split={reference_models.split!r} with "
            f"{reference_models.membership_.size // n_models} records per model."
        )
    return reference_models


def train_reference_models(attack, estimator, n_models, pool, split="balanced"):
    """The attack's own reference models: ``n_models`` clones on halves of ``pool``
    (``split="balanced"``: each record IN for half of them; ``"random"``: each model on an
    independent random half)."""
    return ShadowModels(
        estimator,
        n_reference_models=n_models,
        split=split,
        outputs=("correct",),
        n_jobs=attack.n_jobs,
        random_state=attack.random_state,
        verbose=attack.verbose,
    ).fit(pool[:, :-1], pool[:, -1])


def pool_inside(reference_models, pool):
    """Unique pool records and which model each trained: ``(unique, inside (K, n_unique))``.

    The models were fitted on the last rows of ``pool`` (all of them, or the population
    alone in the offline design); the rows above trained none. A record trains a model if
    any of its copies in the pool does.
    """
    n_models = len(reference_models.estimators_)
    unique, inverse = np.unique(pool + 0.0, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    fitted = reference_models.membership_.reshape(n_models, -1)
    trained = np.zeros((n_models, pool.shape[0]), dtype=int)
    trained[:, pool.shape[0] - fitted.shape[1] :] = fitted
    inside = np.zeros((n_models, unique.shape[0]), dtype=int)
    np.add.at(inside.T, inverse, trained.T)
    return unique, inside > 0


def fit_views(views, pool):
    """A fitted clone of ``views`` (None: the records alone)."""
    return None if views is None else clone(views).fit(pool)


def view_stack(views, records):
    """``(n_views, n, d)``: the records' views, or the records alone when ``views`` is None."""
    if views is None:
        return records[None]
    return views.transform(records)


#: the fewest population rows the offline design takes: half train the one reference model,
#: the other half are the population records the targets are compared with
MIN_POPULATION = 20


def population_reference_models(attack, population, n_models):
    """Reference models on the ``population`` rows alone (every target OUT of every one):
    ``attack.reference_models`` checked, or ``n_models`` trained (``split="random"`` for
    one model, ``"balanced"`` for more)."""
    name = type(attack).__name__
    if population.shape[0] < max(MIN_POPULATION, 2 * n_models):
        raise ValueError(
            f"{name} with reference models trained on the population alone needs a "
            f"population of at least {max(MIN_POPULATION, 2 * n_models)} records (half train "
            f"the reference models, the rest are compared with); got {population.shape[0]}."
        )
    if attack.reference_models is not None:
        return check_reference_models(
            attack.reference_models,
            population,
            splits=("balanced", "random"),
            what="the {n} population records alone",
        )
    estimator = clone(attack.target) if attack.estimator is None else attack.estimator
    split = "random" if n_models == 1 else "balanced"
    return train_reference_models(attack, estimator, n_models, population, split=split)


class ReferenceModelAttack(ScoreCutMixin, AttackerMixin, BaseEstimator):
    """What LiRA and RMIA share as estimators: a fitted target that clones keep, the pool,
    its reference models and views, and a score cut at ``offset_``.

    Subclasses have the parameters ``target``, ``estimator``, ``views``,
    ``reference_models`` and ``prior``, call :meth:`_fit_reference` first in ``fit``, and
    implement ``score_samples``.
    """

    def __sklearn_clone__(self):
        """Clone the attack but keep the fitted target and reference models (never refitted)."""
        params = self.get_params(deep=False)
        target, shared = params.pop("target"), params.pop("reference_models")
        params = {k: clone(v, safe=False) for k, v in params.items()}
        return type(self)(target, reference_models=shared, **params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # y never trains the scores (the reference models do): no accuracy on y is promised
        tags.classifier_tags.poor_score = True
        return tags

    def _fit_reference(self, X, y, population, n_models, design="pool"):
        """Validate; set ``prior_``, ``reference_models_`` (trained on ``n_models`` halves of
        the pool, or the given ``reference_models``) and ``views_``; return ``(X, m, pool)``.

        ``design="population"``: the models train on the population rows only
        (:func:`population_reference_models`)."""
        name = type(self).__name__
        X, y = validate_data(self, X, y)
        if X.shape[1] < 2:
            raise ValueError(
                f"X has {X.shape[1]} feature(s) but {name} needs at least 2: the target's "
                "input columns and the true label in the last column."
            )
        m = self._fit_membership_labels(y)
        self.prior_ = resolve_prior(self.prior, m)
        if design == "population":
            pool = pool_of(name, X, population, None)
            self.reference_models_ = population_reference_models(self, pool[X.shape[0] :], n_models)
        elif self.reference_models is None:
            pool = pool_of(name, X, population, n_models)
            estimator = clone(self.target) if self.estimator is None else self.estimator
            self.reference_models_ = train_reference_models(self, estimator, n_models, pool)
        else:
            pool = pool_of(name, X, population, None)
            self.reference_models_ = check_reference_models(self.reference_models, pool)
        self.views_ = fit_views(self.views, pool)
        return X, m, pool
