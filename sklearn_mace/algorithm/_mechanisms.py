"""Reference mechanisms with a known ε: DP histogram synthesizers on a categorical domain.

A histogram over a fixed categorical domain with Laplace noise of scale Δ/ε on every cell
count is ε-DP (Dwork, McSherry, Nissim & Smith 2006, the Laplace mechanism): one record
changes one count by 1 when it is added or removed (Δ = 1) and two counts by 1 each when it
is substituted for another (Δ = 2, L1 sensitivity). Everything computed from the noisy
counts alone is post-processing and keeps ε. These generators are cheap enough to be run
thousands of times, so an auditor of a training *algorithm* can be checked against them
(``docs/design.md``, "Auditing an algorithm").
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._sklearn_compat import Interval, StrOptions, _fit_context

__all__ = ["DPHistogramSynthesizer", "WrongNoiseHistogramSynthesizer"]

#: Cells above this count are refused: every cell is noised, and an empty cell rounds to at
#: least one released row with probability P(Lap(Δ/ε) >= ½) = ½·e^(−ε/(2Δ)), so a huge domain
#: means a huge release.
MAX_CELLS = 2_000_000

#: L1 sensitivity of a histogram under each neighbour relation.
SENSITIVITY = {"add_remove": 1.0, "substitute": 2.0}


class DPHistogramSynthesizer(BaseEstimator):
    """Pure ε-DP synthetic data: a Laplace-noised histogram over a fixed categorical domain.

    ``fit`` counts the records in every cell of the domain (the product of the columns'
    categories) and adds independent Laplace noise of scale ``Δ/ε`` to each count, Δ = 1
    for ``relation="add_remove"`` and Δ = 2 for ``"substitute"`` (the Laplace mechanism,
    Dwork et al. 2006, Thm 1 / Dwork & Roth 2014, Thm 3.6). The noisy counts are the only
    thing that touches the data; everything ``sample`` returns is computed from them, so it
    is ε-DP too (post-processing, Dwork & Roth Prop. 2.1):

    * ``sample()`` — **the histogram release**: each noisy count rounded to the nearest
      integer and clipped at 0, expanded into that many rows of the cell (in cell order).
      An auditor who counts the release's rows in a cell sees the Laplace mechanism
      itself, so ε is reachable: this is the release to check a tight audit against.
    * ``sample(n_samples)`` — **the sampling variant**: ``n_samples`` rows drawn
      independently from the normalised released histogram (uniformly over the domain if
      every count is clipped to 0). Also ε-DP, but the sampling adds noise an auditor
      cannot remove, so audits of it stay well below ε: use it to check soundness only.

    The domain must be fixed before the data is seen: a domain read from the data (the
    categories that occur) leaks the presence of a record with a unique value, and the
    mechanism is then not DP at all.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        The ε of the guarantee (pure DP, δ = 0).
    categories : int or list of array-like, default=2
        The domain, one entry per column, fixed before seeing the data. A list: the
        categories of each column (numbers), and a value outside them is an error. An int
        ``k``: every column holds the integer codes ``0, …, k − 1``; other numbers are
        rounded to the nearest code and clipped into that range (a per-record
        transformation, so still DP), with a ``UserWarning`` that says how many values
        were moved.
    relation : {"add_remove", "substitute"}, default="add_remove"
        The neighbour relation of the guarantee: it sets the sensitivity Δ (1 or 2).
    random_state : int, RandomState instance or None, default=None
        The noise, and the rows drawn by ``sample(n_samples)``. Fixing it makes the
        mechanism deterministic (and so not private): an auditor sets a new seed per run.

    Attributes
    ----------
    categories_ : list of ndarray
        The categories of each column.
    counts_ : ndarray of shape (n_cells,)
        True cell counts (the private input; never part of a release).
    noisy_counts_ : ndarray of shape (n_cells,)
        ``counts_`` plus the Laplace noise: the ε-DP output.
    release_counts_ : ndarray of int of shape (n_cells,)
        ``noisy_counts_`` rounded and clipped at 0: the cell counts of ``sample()``.
    noise_scale_ : float
        The Laplace scale used, ``Δ/ε`` here.
    true_epsilon_ : float
        The ε the mechanism really satisfies under ``relation``: ``Δ / noise_scale_``.
    n_features_in_ : int
        Number of columns.

    See Also
    --------
    WrongNoiseHistogramSynthesizer : the same with half the noise (a deliberate bug).
    AlgorithmAudit : certifies a lower bound on the ε of a training recipe.

    References
    ----------
    C. Dwork, F. McSherry, K. Nissim, A. Smith. Calibrating Noise to Sensitivity in Private
    Data Analysis. TCC 2006. C. Dwork, A. Roth. The Algorithmic Foundations of Differential
    Privacy (2014), Thm 3.6 and Prop. 2.1. Annamalai, Balle, De Cristofaro & Hayes (2024),
    tight audits of DP synthetic-data generators.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import DPHistogramSynthesizer
    >>> X = np.array([[0, 1], [0, 1], [1, 0], [2, 1]] * 25)
    >>> dp = DPHistogramSynthesizer(epsilon=1.0, categories=3, random_state=0).fit(X)
    >>> dp.counts_.reshape(3, 3).tolist()
    [[0, 50, 0], [25, 0, 0], [0, 25, 0]]
    >>> release = dp.sample()
    >>> bool(release.shape[0] == dp.release_counts_.sum())
    True
    >>> dp.sample(10).shape
    (10, 2)
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "categories": [Interval(Integral, 1, None, closed="left"), list],
        "relation": [StrOptions({"add_remove", "substitute"})],
        "random_state": ["random_state"],
    }

    def __init__(self, epsilon=1.0, *, categories=2, relation="add_remove", random_state=None):
        self.epsilon = epsilon
        self.categories = categories
        self.relation = relation
        self.random_state = random_state

    def _noise_scale(self):
        """Laplace scale Δ/ε: calibrated to the claimed ε (Dwork & Roth Thm 3.6)."""
        return SENSITIVITY[self.relation] / self.epsilon

    def _domain(self, n_features):
        if isinstance(self.categories, Integral):
            return [np.arange(self.categories, dtype=float) for _ in range(n_features)]
        if len(self.categories) != n_features:
            raise ValueError(
                f"categories lists {len(self.categories)} column(s) but X has {n_features}."
            )
        domain = []
        for j, values in enumerate(self.categories):
            values = np.asarray(values, dtype=float).ravel()
            if values.size == 0 or np.unique(values).size != values.size:
                raise ValueError(
                    f"categories[{j}] must list distinct numbers, at least one; got {values!r}."
                )
            domain.append(np.sort(values))
        return domain

    def _codes(self, X):
        """Cell coordinates of every record (integer codes per column)."""
        codes = np.empty(X.shape, dtype=np.intp)
        if isinstance(self.categories, Integral):
            coded = np.clip(np.rint(X), 0, self.categories - 1)
            moved = int(np.count_nonzero(coded != X))
            if moved:
                warnings.warn(
                    f"{moved} value(s) of X are not among the integer codes 0..."
                    f"{self.categories - 1} of categories={self.categories}: rounded and "
                    "clipped into them.",
                    UserWarning,
                    stacklevel=3,
                )
            return coded.astype(np.intp)
        for j, values in enumerate(self.categories_):
            position = np.clip(np.searchsorted(values, X[:, j]), 0, values.size - 1)
            outside = values[position] != X[:, j]
            if outside.any():
                raise ValueError(
                    f"column {j} of X holds {float(X[outside, j][0])!r}, which is not among "
                    f"categories[{j}] = {values.tolist()!r}; the domain must cover the data."
                )
            codes[:, j] = position
        return codes

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Count the records per cell and add Laplace noise of scale Δ/ε to every count.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records, numeric (categories encoded as numbers).
        y : None
            Ignored.

        Returns
        -------
        self : DPHistogramSynthesizer
            The fitted mechanism.
        """
        X = validate_data(self, X, dtype=np.float64)
        self.categories_ = self._domain(X.shape[1])
        shape = tuple(values.size for values in self.categories_)
        n_cells = int(np.prod(shape, dtype=float))
        if n_cells > MAX_CELLS:
            raise ValueError(
                f"the domain has {n_cells} cells (the product of the columns' category "
                f"counts {list(shape)}); at most {MAX_CELLS} are supported, since every "
                "cell is noised and released. Use fewer columns or coarser categories."
            )
        self._shape = shape
        cells = np.ravel_multi_index(self._codes(X).T, shape)
        self.counts_ = np.bincount(cells, minlength=n_cells)
        self.noise_scale_ = float(self._noise_scale())
        rng = check_random_state(self.random_state)
        self.noisy_counts_ = self.counts_ + rng.laplace(0.0, self.noise_scale_, n_cells)
        self.release_counts_ = np.clip(np.rint(self.noisy_counts_), 0, None).astype(np.int64)
        self.true_epsilon_ = SENSITIVITY[self.relation] / self.noise_scale_
        # the rows of sample(n_samples) come from their own stream, drawn after the noise
        self._sample_seed = int(rng.randint(np.iinfo(np.int32).max))
        return self

    def _rows(self, cells):
        coordinates = np.unravel_index(cells, self._shape)
        return np.column_stack(
            [values[index] for values, index in zip(self.categories_, coordinates, strict=True)]
        )

    def sample(self, n_samples=None):
        """The histogram release (``n_samples=None``) or rows drawn from it.

        Parameters
        ----------
        n_samples : int >= 1 or None, default=None
            None: every cell expanded into ``release_counts_`` rows (the release an
            auditor can check tightly). An int: that many rows drawn independently from
            the normalised ``release_counts_`` (the sampling variant), from a seed drawn
            in ``fit``: the same rows on every call.

        Returns
        -------
        X : ndarray of shape (n_rows, n_features)
            Synthetic records, in the categories' values.
        """
        check_is_fitted(self)
        if n_samples is None:
            cells = np.repeat(np.arange(self.release_counts_.size), self.release_counts_)
            return self._rows(cells).reshape(-1, self.n_features_in_)
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be None or an int >= 1; got {n_samples!r}.")
        total = self.release_counts_.sum()
        n_cells = self.release_counts_.size
        weights = self.release_counts_ / total if total > 0 else np.full(n_cells, 1 / n_cells)
        rng = np.random.RandomState(self._sample_seed)
        return self._rows(rng.choice(n_cells, size=int(n_samples), p=weights))


class WrongNoiseHistogramSynthesizer(DPHistogramSynthesizer):
    """A deliberately buggy DP histogram: claims ε but adds noise of scale Δ/(2ε).

    The bug an audit must catch: the noise is calibrated to twice the claimed ε, so the
    mechanism is only ``2·epsilon``-DP (``true_epsilon_``). Everything else is
    :class:`DPHistogramSynthesizer`.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        The **claimed** ε; the true one is twice that.
    categories : int or list of array-like, default=2
        The domain (see :class:`DPHistogramSynthesizer`).
    relation : {"add_remove", "substitute"}, default="add_remove"
        The neighbour relation of the (false) claim.
    random_state : int, RandomState instance or None, default=None
        The noise and ``sample(n_samples)``'s draws.

    Attributes
    ----------
    categories_ : list of ndarray
        The categories of each column.
    counts_ : ndarray of shape (n_cells,)
        True cell counts.
    noisy_counts_ : ndarray of shape (n_cells,)
        ``counts_`` plus the (too small) Laplace noise.
    release_counts_ : ndarray of int of shape (n_cells,)
        Rounded and clipped noisy counts.
    noise_scale_ : float
        ``Δ/(2ε)``.
    true_epsilon_ : float
        ``2·epsilon``.
    n_features_in_ : int
        Number of columns.

    See Also
    --------
    DPHistogramSynthesizer : the correct mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.algorithm import WrongNoiseHistogramSynthesizer
    >>> X = np.zeros((20, 1))
    >>> WrongNoiseHistogramSynthesizer(epsilon=1.0, random_state=0).fit(X).true_epsilon_
    2.0
    """

    def _noise_scale(self):
        return SENSITIVITY[self.relation] / (2.0 * self.epsilon)
