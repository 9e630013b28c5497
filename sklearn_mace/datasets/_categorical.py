"""A categorical population with a canary outside its support: the algorithm audit's demo.

The data of ``sklearn-mace audit-algorithm``'s embedded demo and of
:func:`sklearn_mace.algorithm.dp_histogram_demo`, where a histogram synthesizer of known ε is
audited with two targets: a record of the most populated cell and one of the empty cell.
"""

from numbers import Integral

import numpy as np
from sklearn.utils import Bunch

from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["make_categorical_population"]


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "categories": ["array-like"],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def make_categorical_population(n_samples=3000, *, categories=(4, 3, 5), random_state=0):
    """Records over a small categorical domain with one empty cell, and two audit targets.

    The domain is the product of the columns' categories (``0 … k − 1`` each; 60 cells by
    default). The cell probabilities are drawn from a flat Dirichlet, one cell (the least
    likely) is then left empty, and ``n_samples`` records are drawn from the rest. The two
    targets are the worst cases of a histogram's audit: the most common record (a canary in
    a well-populated cell, where a noisy count is far from its clipping at 0) and a record
    of the empty cell (a canary outside the data's support).

    Parameters
    ----------
    n_samples : int >= 1, default=3000
        Number of records.
    categories : array-like of int, default=(4, 3, 5)
        Number of categories of each column; at least two cells in all.
    random_state : int >= 0 or None, default=0
        Seed of :func:`numpy.random.default_rng` (the cell probabilities, then the records).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (``n_samples``, n_columns) float codes; ``targets`` (2, n_columns), the
        most common record and the empty-cell canary; ``target_names``, their names;
        ``categories``, the tuple given; ``train_size``, a third of the records (what each
        run of the demos trains on, the targets aside); ``DESCR``.

    See Also
    --------
    sklearn_mace.algorithm.dp_histogram_demo : the audit this data was made for.

    Examples
    --------
    >>> from sklearn_mace.datasets import make_categorical_population
    >>> population = make_categorical_population()
    >>> population.data.shape, population.targets.shape, population.train_size
    ((3000, 3), (2, 3), 1000)
    >>> population.target_names
    ['most common record', 'empty-cell canary']
    """
    categories = tuple(int(k) for k in np.ravel(categories))
    if not categories or min(categories) < 1 or int(np.prod(categories)) < 2:
        raise ValueError(
            f"categories must list at least one column, each with at least one category, "
            f"and at least two cells in all; got {categories}."
        )
    rng = np.random.default_rng(random_state)
    n_cells = int(np.prod(categories))
    weights = rng.dirichlet(np.ones(n_cells))
    empty = int(np.argmin(weights))
    weights[empty] = 0.0
    cells = rng.choice(n_cells, size=n_samples, p=weights / weights.sum())
    population = np.column_stack(np.unravel_index(cells, categories)).astype(float)
    common = np.unravel_index(np.bincount(cells, minlength=n_cells).argmax(), categories)
    canary = np.unravel_index(empty, categories)
    return Bunch(
        data=population,
        targets=np.array([common, canary], dtype=float),
        target_names=["most common record", "empty-cell canary"],
        categories=categories,
        train_size=n_samples // 3,
        DESCR=(
            f"{n_samples} records over {n_cells} cells (categories {categories}) drawn from "
            "flat-Dirichlet cell probabilities with the least likely cell left empty"
        ),
    )
