"""Offline datasets and small generative models for tests, examples and benchmarks."""

from ._gans import JSGAN, WGANGP, PrivGAN, make_discriminator, make_generator
from ._images import add_white_box, load_digit_images, load_mnist_images, split_members

__all__ = [
    "JSGAN",
    "WGANGP",
    "PrivGAN",
    "add_white_box",
    "load_digit_images",
    "load_mnist_images",
    "make_discriminator",
    "make_generator",
    "split_members",
]
