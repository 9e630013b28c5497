"""Offline datasets with known ground truth, for tests, examples and benchmarks.

Nothing here downloads anything. The small GANs that train on these images live in
:mod:`sklearn_mace.generative`.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "._categorical": ["make_categorical_population"],
        "._images": ["add_white_box", "load_digit_images", "load_mnist_images", "split_members"],
        "._planted": ["make_planted_leak"],
    },
)
