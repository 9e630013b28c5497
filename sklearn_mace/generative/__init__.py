"""Small generative models to audit: torch GANs for 8 × 8 images (MACE App. E).

JS-GAN, WGAN-GP and a two-discriminator privGAN, each an estimator whose trained
``generator_`` / ``discriminator_`` feed the query transformers of
:mod:`sklearn_mace.queries`. They need torch, which loads when a model is first accessed.
"""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(__name__, {"._gans": ["JSGAN", "PrivGAN", "WGANGP"]})
