"""Offline datasets with known ground truth, and small generative models, for tests,
examples and benchmarks. Nothing here downloads anything."""

from ._gans import JSGAN, WGANGP, PrivGAN, make_discriminator, make_generator
from ._images import add_white_box, load_digit_images, load_mnist_images, split_members
from ._planted import make_planted_leak

__all__ = [
    "JSGAN",
    "WGANGP",
    "PrivGAN",
    "add_white_box",
    "load_digit_images",
    "load_mnist_images",
    "make_discriminator",
    "make_generator",
    "make_planted_leak",
    "split_members",
]
