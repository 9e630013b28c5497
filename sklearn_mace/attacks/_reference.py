"""What LiRA and RMIA share: the pool of records, its reference models, the views they query.

Both attacks train clones of the target's recipe on random halves of a pool (the records of
known membership, then optional population records) with :class:`ShadowModels`
(``split="balanced"``: every record IN for half of the models), or take such a fitted set,
so that one set of reference models can serve several attacks. Records are matched by value.
"""

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_array, check_is_fitted

from ._shadow import ShadowModels

__all__ = ["check_reference_models", "pool_of", "pool_inside", "record_keys", "view_stack"]


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


def check_reference_models(reference_models, pool):
    """A fitted balanced :class:`ShadowModels` trained on ``pool`` (its row count checked)."""
    if not isinstance(reference_models, ShadowModels):
        raise TypeError(
            "reference_models must be a fitted ShadowModels (split='balanced') trained on the "
            f"pool; got {type(reference_models).__name__}."
        )
    check_is_fitted(reference_models, "estimators_")
    n_models = len(reference_models.estimators_)
    if reference_models.split != "balanced" or reference_models.membership_.size != (
        n_models * pool.shape[0]
    ):
        raise ValueError(
            "reference_models must be ShadowModels(split='balanced') fitted on the pool's "
            f"{pool.shape[0]} records (X, then population, in that order); got split="
            f"{reference_models.split!r} with {reference_models.membership_.size // n_models} "
            "records per model."
        )
    return reference_models


def train_reference_models(attack, estimator, n_models, pool):
    """The attack's own reference models: ``n_models`` clones on balanced halves of ``pool``."""
    return ShadowModels(
        estimator,
        n_shadow=n_models,
        split="balanced",
        outputs=("correct",),
        n_jobs=attack.n_jobs,
        random_state=attack.random_state,
        verbose=attack.verbose,
    ).fit(pool[:, :-1], pool[:, -1])


def pool_inside(reference_models, pool):
    """Unique pool records and which model each trained: ``(unique, inside (K, n_unique))``.

    A record trains a model if any of its copies in the pool does.
    """
    n_models = len(reference_models.estimators_)
    unique, inverse = np.unique(pool + 0.0, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    trained = reference_models.membership_.reshape(n_models, pool.shape[0])
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
