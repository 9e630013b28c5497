"""Several views of a record for LiRA and RMIA: the query augmentations of their papers.

Carlini et al. (2022) and Zarifzadeh et al. (2024) query every model not on a
record alone but on a few label-preserving variants of it (mirrored and shifted images), and
combine the per-view statistics: a member is fitted in every view, which averages the model's
noise away. :class:`RecordViews` makes those variants; the attacks query each model on each.
"""

import zlib
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import TransformerTags
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._sklearn_compat import Interval, StrOptions

__all__ = ["RecordViews"]


def _row_seeds(records, seed):
    """One 32-bit seed per row from its bytes: the same record gets the same noise anywhere."""
    rows = np.ascontiguousarray(records + 0.0)
    return [zlib.crc32(row.tobytes(), seed) for row in rows]


class RecordViews(BaseEstimator):
    """Label-preserving views of records, the first of them the record itself.

    Records are laid out as the model attacks take them: the model's input columns, then the
    true label in the last column, which no view changes.

    * ``kind="image"``: the input columns are an image of ``image_shape`` (rows, columns
      [, channels]) flattened in C order. The views are the image, then its shifts by
      ``shift`` pixels (right, left, down, up; the uncovered border is filled with zeros), then
      — with ``flip=True`` — the horizontal mirror image and its shifts, in that order; the
      first ``n_views`` are kept. Carlini et al. query CIFAR-10 models on mirrors and
      shifts; digits are not mirror-symmetric, so use ``flip=False`` for them.
    * ``kind="table"``: view ``v >= 1`` adds ``noise * scale_j * e`` to every numeric
      column ``j``, with ``scale_j`` the column's standard deviation in ``fit`` and ``e``
      standard normal. The perturbed columns are ``columns``, by default every column with
      more than two distinct values in ``fit`` (0/1 indicators and one-hot columns are left
      as they are). The noise of a
      record is drawn from a generator seeded by the record's own values and
      ``random_state``, so a record gets the same views whichever rows surround it (the
      attacks match records by value).

    Parameters
    ----------
    kind : {"table", "image"}, default="table"
        Which views to make.
    n_views : int, default=4
        Number of views, the record itself included (1 makes the identity).
    image_shape : tuple of int, default=None
        ``(rows, columns)`` or ``(rows, columns, channels)`` of an image record; needed for
        ``kind="image"``.
    shift : int, default=1
        Pixel shift of the image views.
    flip : bool, default=True
        Whether mirrored images are among the views.
    noise : float, default=0.1
        Noise of the table views, in standard deviations of each numeric column.
    columns : list of int, default=None
        Table views: the input columns to perturb (indices); None: the numeric ones.
    random_state : int, default=0
        Mixed into every record's noise seed (the views must be the same at every call).

    Attributes
    ----------
    n_features_in_ : int
        Record columns, the label included.
    scale_ : ndarray of shape (n_features_in_ - 1,)
        Table views: the noise scale of each input column (0 where it is not numeric).

    References
    ----------
    N. Carlini et al. Membership Inference Attacks From First Principles. IEEE S&P 2022
    (queries on mirrored and shifted images). S. Zarifzadeh, P. Liu, R. Shokri. Low-Cost
    High-Power Membership Inference Attacks. ICML 2024 (queries on augmented records).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.attacks import RecordViews
    >>> image = np.arange(4.0).reshape(1, 4)  # a 2x2 image, then its label 7
    >>> record = np.column_stack([image, [7.0]])
    >>> views = RecordViews("image", n_views=6, image_shape=(2, 2)).fit(record)
    >>> views.transform(record)[[0, 1, 5], 0].tolist()  # itself, shifted right, mirrored
    [[0.0, 1.0, 2.0, 3.0, 7.0], [0.0, 0.0, 0.0, 2.0, 7.0], [1.0, 0.0, 3.0, 2.0, 7.0]]
    """

    _parameter_constraints: dict = {
        "kind": [StrOptions({"table", "image"})],
        "n_views": [Interval(Integral, 1, None, closed="left")],
        "image_shape": [None, tuple, list],
        "shift": [Interval(Integral, 1, None, closed="left")],
        "flip": ["boolean"],
        "noise": [Interval(Real, 0, None, closed="left")],
        "columns": [None, list, tuple, np.ndarray],
        "random_state": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        kind="table",
        *,
        n_views=4,
        image_shape=None,
        shift=1,
        flip=True,
        noise=0.1,
        columns=None,
        random_state=0,
    ):
        self.kind = kind
        self.n_views = n_views
        self.image_shape = image_shape
        self.shift = shift
        self.flip = flip
        self.noise = noise
        self.columns = columns
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags()  # a transformer whose output stacks views
        return tags

    def fit(self, X, y=None):
        """Learn the record width and, for tables, each numeric column's noise scale.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features + 1)
            Records: input columns, then the true label.
        y : None
            Ignored.

        Returns
        -------
        self : RecordViews
            The fitted views.
        """
        self._validate_params()
        X = validate_data(self, X, dtype=np.float64)
        if X.shape[1] < 2:
            raise ValueError(
                f"X has {X.shape[1]} feature(s); records need input columns and the true label "
                "in the last column."
            )
        inputs = X[:, :-1]
        if self.kind == "image":
            if self.image_shape is None:
                raise ValueError("kind='image' needs image_shape=(rows, columns[, channels]).")
            shape = tuple(int(s) for s in self.image_shape)
            if len(shape) not in (2, 3) or int(np.prod(shape)) != inputs.shape[1]:
                raise ValueError(
                    f"image_shape={self.image_shape!r} must be (rows, columns) or (rows, "
                    f"columns, channels) with as many pixels as the {inputs.shape[1]} input "
                    "columns."
                )
            self.scale_ = np.zeros(inputs.shape[1])
        else:
            if self.columns is None:
                numeric = np.array([np.unique(c).size > 2 for c in inputs.T], dtype=bool)
            else:
                chosen = np.asarray(self.columns, dtype=int).ravel()
                if chosen.size and (chosen.min() < 0 or chosen.max() >= inputs.shape[1]):
                    raise ValueError(
                        f"columns={self.columns!r} must index the {inputs.shape[1]} input "
                        "columns (the label, last, is never perturbed)."
                    )
                numeric = np.zeros(inputs.shape[1], dtype=bool)
                numeric[chosen] = True
            self.scale_ = np.where(numeric, inputs.std(axis=0), 0.0)
        return self

    def _image_views(self, inputs):
        shape = tuple(int(s) for s in self.image_shape)
        images = inputs.reshape(len(inputs), *shape)
        s = int(self.shift)
        bases = [images, images[:, :, ::-1]] if self.flip else [images]
        views = []
        for base in bases:
            views.append(base)
            for axis, step in ((2, s), (2, -s), (1, s), (1, -s)):
                shifted = np.roll(base, step, axis=axis)
                index = [slice(None)] * base.ndim
                index[axis] = slice(0, step) if step > 0 else slice(step, None)
                shifted[tuple(index)] = 0.0
                views.append(shifted)
        return [view.reshape(len(inputs), -1) for view in views[: self.n_views]]

    def _table_views(self, X):
        inputs = X[:, :-1]
        views = [inputs]
        if self.n_views > 1:
            draws = np.stack(
                [
                    np.random.default_rng(seed).standard_normal((self.n_views - 1, inputs.shape[1]))
                    for seed in _row_seeds(X, int(self.random_state))
                ],
                axis=1,
            )
            views += [inputs + self.noise * self.scale_ * draw for draw in draws]
        return views

    def transform(self, X):
        """The views of every record, the label column unchanged.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Records: input columns, then the true label.

        Returns
        -------
        views : ndarray of shape (n_views_, n_samples, n_features_in_)
            ``views[0]`` is ``X`` itself.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        inputs = self._image_views(X[:, :-1]) if self.kind == "image" else self._table_views(X)
        label = X[:, -1:]
        return np.stack([np.hstack([view, label]) for view in inputs])

    def fit_transform(self, X, y=None):
        """``fit(X).transform(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features + 1)
            Records: input columns, then the true label.
        y : None
            Ignored.

        Returns
        -------
        views : ndarray of shape (n_views_, n_samples, n_features_in_)
            ``views[0]`` is ``X`` itself.
        """
        return self.fit(X, y).transform(X)

    @property
    def n_views_(self):
        """The number of views ``transform`` returns (fewer than ``n_views`` when an image
        has fewer distinct variants)."""
        check_is_fitted(self)
        per_base = 5
        available = per_base * (2 if self.flip else 1) if self.kind == "image" else self.n_views
        return min(self.n_views, available)
