"""Small torch GANs for 8 × 8 images in the spirit of MACE App. E: JS-GAN, WGAN-GP and a
two-discriminator privGAN-style model, with a plain training loop (progress bar, device auto)
that can deliberately overfit a small training set (MACE §6.1).

Each model is an estimator: ``fit(X)`` trains on the rows of ``X`` (flattened images in
[−1, 1]); ``sample(n, random_state)`` returns synthetic records; the trained modules are
``generator_`` / ``discriminator_`` (lists for privGAN), on the CPU, ready for the query
transformers (``DiscriminatorQuery``, ``MultiDiscriminatorQuery``,
``GeneratorReconstructionQuery``).
"""

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import trange

from ..utils._sklearn_compat import Interval, _fit_context
from ..utils._torch import resolve_device, to_numpy

__all__ = ["JSGAN", "PrivGAN", "WGANGP", "make_discriminator", "make_generator"]


def make_generator(latent_dim, n_features, hidden_dim=128):
    """MLP generator (App. E.1 scaled down): Dense–LeakyReLU(0.2) ×2, Dense with tanh.

    Parameters
    ----------
    latent_dim : int
        Dimension of the Gaussian input.
    n_features : int
        Dimension of a generated record (flattened image), in [−1, 1].
    hidden_dim : int, default=128
        Width of both hidden layers.

    Returns
    -------
    generator : torch.nn.Sequential
        Maps ``(n, latent_dim)`` to ``(n, n_features)``.

    Examples
    --------
    >>> import torch
    >>> from sklearn_mace.generative._gans import make_generator
    >>> fake = make_generator(latent_dim=4, n_features=64, hidden_dim=8)(torch.randn(5, 4))
    >>> tuple(fake.shape), bool(fake.abs().max() <= 1)
    ((5, 64), True)
    """
    return torch.nn.Sequential(
        torch.nn.Linear(latent_dim, hidden_dim),
        torch.nn.LeakyReLU(0.2),
        torch.nn.Linear(hidden_dim, hidden_dim),
        torch.nn.LeakyReLU(0.2),
        torch.nn.Linear(hidden_dim, n_features),
        torch.nn.Tanh(),
    )


def make_discriminator(n_features, hidden_dim=128, n_outputs=1):
    """MLP discriminator (App. E.1 scaled down): Dense–LeakyReLU(0.2) ×2, Dense, no sigmoid.

    Outputs logits (JS-GAN, trained with ``BCEWithLogitsLoss``) or critic scores (WGAN-GP).

    Parameters
    ----------
    n_features : int
        Dimension of a record (flattened image).
    hidden_dim : int, default=128
        Width of the second hidden layer; the first has ``2 * hidden_dim`` units.
    n_outputs : int, default=1
        Scores per record (privGAN's privacy discriminator has one per generator).

    Returns
    -------
    discriminator : torch.nn.Sequential
        Maps ``(n, n_features)`` to ``(n, n_outputs)``.

    Examples
    --------
    >>> import torch
    >>> from sklearn_mace.generative._gans import make_discriminator
    >>> make_discriminator(n_features=64, hidden_dim=8)(torch.zeros(5, 64)).shape
    torch.Size([5, 1])
    """
    return torch.nn.Sequential(
        torch.nn.Linear(n_features, 2 * hidden_dim),
        torch.nn.LeakyReLU(0.2),
        torch.nn.Linear(2 * hidden_dim, hidden_dim),
        torch.nn.LeakyReLU(0.2),
        torch.nn.Linear(hidden_dim, n_outputs),
    )


class _GAN(BaseEstimator):
    """Shared training loop; subclasses build their modules and define one training step."""

    _parameter_constraints = {
        "latent_dim": [Interval(Integral, 1, None, closed="left")],
        "hidden_dim": [Interval(Integral, 1, None, closed="left")],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "device": [str, torch.device],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train on the rows of ``X`` for ``n_epochs`` passes (few rows + many epochs = overfit).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Flattened images scaled to [−1, 1] (the generator ends in tanh).
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The trained model.
        """
        X = validate_data(self, X, dtype=np.float32, ensure_min_samples=self._min_samples())
        device = resolve_device(self.device)
        random_state = check_random_state(self.random_state)
        seed = int(random_state.randint(np.iinfo(np.int32).max))
        self._prepare(len(X), random_state)
        data = torch.as_tensor(X, device=device)
        with torch.random.fork_rng(devices=[]):  # seeded, without touching the global stream
            torch.manual_seed(seed)
            self._build(X.shape[1], device)
            rng = torch.Generator().manual_seed(seed)
            self.loss_history_ = []
            for _ in trange(self.n_epochs, disable=not self.verbose, desc=type(self).__name__):
                losses = [self._step(batch, rng) for batch in self._epoch_batches(data, rng)]
                self.loss_history_.append(np.mean(losses, axis=0))
        self.loss_history_ = np.asarray(self.loss_history_)
        for module in self._trained_modules():
            module.to("cpu").eval().requires_grad_(False)
        if not np.all(np.isfinite(self.loss_history_)):
            raise ValueError(
                f"{type(self).__name__} training diverged (non-finite losses); lower learning_rate."
            )
        return self

    _betas = (0.5, 0.999)  # Adam betas of the DCGAN / JS-GAN practice

    def _adam(self, parameters):
        return torch.optim.Adam(parameters, self.learning_rate, betas=self._betas)

    def _min_samples(self):
        return 2

    def _prepare(self, n_samples, random_state):
        """Hook run before training (privGAN splits the records here)."""

    def _epoch_batches(self, data, rng):
        """Shuffled mini-batches covering the data once."""
        order = torch.randperm(len(data), generator=rng).to(data.device)
        for start in range(0, len(data), self.batch_size):
            yield data[order[start : start + self.batch_size]]

    def _latents(self, n, rng, device):
        return torch.randn((n, self.latent_dim), generator=rng).to(device)

    def sample(self, n_samples=1, random_state=None):
        """Synthetic records from the trained generator(s).

        Parameters
        ----------
        n_samples : int, default=1
            Number of records to generate.
        random_state : int, RandomState instance or None, default=None
            Seed of the latent draws.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features), float64
            Generated records, in [−1, 1].
        """
        check_is_fitted(self)
        seed = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
        rng = torch.Generator().manual_seed(seed)
        generators = self._generators()
        which = torch.randint(len(generators), (n_samples,), generator=rng)
        out = torch.empty((n_samples, self.n_features_in_))
        with torch.inference_mode():
            for i, generator in enumerate(generators):
                rows = torch.nonzero(which == i).flatten()
                out[rows] = generator(self._latents(len(rows), rng, "cpu"))
        return to_numpy(out).astype(np.float64)


class JSGAN(_GAN):
    """The original GAN (Goodfellow et al., 2014): Jensen–Shannon loss, non-saturating G loss.

    Parameters
    ----------
    latent_dim : int, default=16
        Dimension of the generator's Gaussian input.
    hidden_dim : int, default=128
        Width of the MLPs (see :func:`make_generator`, :func:`make_discriminator`).
    n_epochs : int, default=500
        Passes over the training records.
    batch_size : int, default=64
        Records per mini-batch.
    learning_rate : float, default=2e-4
        Adam, betas (0.5, 0.999), for both networks.
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        Training device; the fitted modules are returned on the CPU.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the latent draws and the batch order.
    verbose : int, default=0
        Progress bar over epochs when > 0.

    Attributes
    ----------
    generator_, discriminator_ : torch.nn.Module
        Trained, in eval mode, on the CPU; the discriminator returns logits.
    loss_history_ : ndarray of shape (n_epochs, 2)
        Mean discriminator and generator losses per epoch.
    n_features_in_ : int

    References
    ----------
    MACE (Pan et al., TMLR 2023), §6.1 and App. E.

    Examples
    --------
    >>> from sklearn_mace.datasets import load_digit_images
    >>> from sklearn_mace.generative import JSGAN
    >>> gan = JSGAN(n_epochs=2, random_state=0).fit(load_digit_images().data[:100])
    >>> gan.sample(3, random_state=0).shape
    (3, 64)
    """

    def __init__(
        self,
        *,
        latent_dim=16,
        hidden_dim=128,
        n_epochs=500,
        batch_size=64,
        learning_rate=2e-4,
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.latent_dim = latent_dim
        self.hidden_dim = hidden_dim
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _build(self, n_features, device):
        self.generator_ = make_generator(self.latent_dim, n_features, self.hidden_dim).to(device)
        self.discriminator_ = make_discriminator(n_features, self.hidden_dim).to(device)
        self._opt_g = self._adam(self.generator_.parameters())
        self._opt_d = self._adam(self.discriminator_.parameters())

    def _step(self, real, rng):
        bce = torch.nn.functional.binary_cross_entropy_with_logits
        fake = self.generator_(self._latents(len(real), rng, real.device))
        real_logit, fake_logit = self.discriminator_(real), self.discriminator_(fake.detach())
        loss_d = bce(real_logit, torch.ones_like(real_logit)) + bce(
            fake_logit, torch.zeros_like(fake_logit)
        )
        self._opt_d.zero_grad()
        loss_d.backward()
        self._opt_d.step()
        fake_logit = self.discriminator_(fake)
        loss_g = bce(fake_logit, torch.ones_like(fake_logit))
        self._opt_g.zero_grad()
        loss_g.backward()
        self._opt_g.step()
        return loss_d.item(), loss_g.item()

    def _trained_modules(self):
        del self._opt_g, self._opt_d
        return [self.generator_, self.discriminator_]

    def _generators(self):
        return [self.generator_]


class WGANGP(JSGAN):
    """Wasserstein GAN with gradient penalty (Gulrajani et al., 2017).

    ``n_critic`` critic steps per generator step; the critic loss
    ``E[D(fake)] − E[D(real)] + λ·E[(‖∇D(x̂)‖ − 1)²]`` on random interpolates ``x̂``.
    The critic (``discriminator_``) outputs unbounded scores, no sigmoid (App. E).

    Parameters
    ----------
    latent_dim : int, default=16
        Dimension of the generator's Gaussian input.
    hidden_dim : int, default=128
        Width of the MLPs (see :func:`make_generator`, :func:`make_discriminator`).
    n_epochs : int, default=500
        Passes over the training records.
    batch_size : int, default=64
        Records per mini-batch.
    learning_rate : float, default=1e-4
        Adam, betas (0.5, 0.9).
    n_critic : int, default=5
        Critic steps per generator step.
    gradient_penalty : float, default=10.0
        λ.
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        Training device; the fitted modules are returned on the CPU.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the latent draws and the batch order.
    verbose : int, default=0
        Progress bar over epochs when > 0.

    Attributes
    ----------
    generator_, discriminator_ : torch.nn.Module
    loss_history_ : ndarray of shape (n_epochs, 2)
        Mean critic and generator losses per epoch.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn_mace.datasets import load_digit_images
    >>> from sklearn_mace.generative import WGANGP
    >>> X = load_digit_images().data[:60]
    >>> gan = WGANGP(n_epochs=2, n_critic=2, hidden_dim=16, random_state=0).fit(X)
    >>> gan.loss_history_.shape, gan.sample(3, random_state=0).shape
    ((2, 2), (3, 64))
    """

    _betas = (0.5, 0.9)  # Gulrajani et al.

    _parameter_constraints = {
        **_GAN._parameter_constraints,
        "n_critic": [Interval(Integral, 1, None, closed="left")],
        "gradient_penalty": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        latent_dim=16,
        hidden_dim=128,
        n_epochs=500,
        batch_size=64,
        learning_rate=1e-4,
        n_critic=5,
        gradient_penalty=10.0,
        device="auto",
        random_state=None,
        verbose=0,
    ):
        super().__init__(
            latent_dim=latent_dim,
            hidden_dim=hidden_dim,
            n_epochs=n_epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            device=device,
            random_state=random_state,
            verbose=verbose,
        )
        self.n_critic = n_critic
        self.gradient_penalty = gradient_penalty

    def _build(self, n_features, device):
        super()._build(n_features, device)
        self._n_steps = 0

    def _step(self, real, rng):
        fake = self.generator_(self._latents(len(real), rng, real.device)).detach()
        mix = torch.rand((len(real), 1), generator=rng).to(real.device)
        between = (mix * real + (1 - mix) * fake).requires_grad_(True)
        (grad,) = torch.autograd.grad(
            self.discriminator_(between).sum(), between, create_graph=True
        )
        penalty = (grad.norm(dim=1) - 1).square().mean()
        loss_d = (
            self.discriminator_(fake).mean()
            - self.discriminator_(real).mean()
            + self.gradient_penalty * penalty
        )
        self._opt_d.zero_grad()
        loss_d.backward()
        self._opt_d.step()
        self._n_steps += 1
        loss_g = -self.discriminator_(
            self.generator_(self._latents(len(real), rng, real.device))
        ).mean()
        if self._n_steps % self.n_critic == 0:
            self._opt_g.zero_grad()
            loss_g.backward()
            self._opt_g.step()
        return loss_d.item(), loss_g.item()


class PrivGAN(_GAN):
    """A privGAN-style model (Mukherjee et al., 2019): ``n_splits`` generator–discriminator pairs.

    The training records are split at random into ``n_splits`` parts; pair ``i`` is a JS-GAN
    on part ``i``. A privacy discriminator ``D_p`` learns which generator produced a sample,
    and each generator is also trained to fool it (non-saturating form: ``D_p`` should name
    another generator), weighted by ``privacy_weight``. Each ``D_i`` has seen only its part:
    the vector query ``(D_1(z), …, D_r(z))`` (MACE Eq. 6) can exploit that where the max
    query (Eq. 5) cannot.

    Parameters
    ----------
    n_splits : int, default=2
        Number of parts of the data, one generator–discriminator pair each.
    privacy_weight : float, default=1.0
        λ of the privacy loss.
    latent_dim : int, default=16
        Dimension of the generator's Gaussian input.
    hidden_dim : int, default=128
        Width of the MLPs (see :func:`make_generator`, :func:`make_discriminator`).
    n_epochs : int, default=500
        Passes over the training records (over each part).
    batch_size : int, default=64
        Records per mini-batch.
    learning_rate : float, default=2e-4
        Adam, betas (0.5, 0.999), for every network.
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        Training device; the fitted modules are returned on the CPU.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the latent draws and the batch order.
    verbose : int, default=0
        Progress bar over epochs when > 0.

    Attributes
    ----------
    generators_, discriminators_ : list of torch.nn.Module
    privacy_discriminator_ : torch.nn.Module
    split_ : ndarray of shape (n_samples,)
        Part (0 … n_splits − 1) each training record was assigned to.
    loss_history_ : ndarray of shape (n_epochs, 3)
        Mean discriminator, generator and privacy-discriminator losses per epoch.
    n_features_in_ : int

    References
    ----------
    MACE (Pan et al., TMLR 2023), §2.2.2 and §6.2.1 (Fig. 2a).

    Examples
    --------
    >>> from sklearn_mace.datasets import load_digit_images
    >>> from sklearn_mace.generative import PrivGAN
    >>> X = load_digit_images().data[:60]
    >>> gan = PrivGAN(n_splits=2, n_epochs=1, hidden_dim=16, random_state=0).fit(X)
    >>> len(gan.generators_), sorted(set(gan.split_.tolist())), gan.sample(4).shape
    (2, [0, 1], (4, 64))
    """

    _parameter_constraints = {
        **_GAN._parameter_constraints,
        "n_splits": [Interval(Integral, 2, None, closed="left")],
        "privacy_weight": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        n_splits=2,
        privacy_weight=1.0,
        latent_dim=16,
        hidden_dim=128,
        n_epochs=500,
        batch_size=64,
        learning_rate=2e-4,
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.n_splits = n_splits
        self.privacy_weight = privacy_weight
        self.latent_dim = latent_dim
        self.hidden_dim = hidden_dim
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def _min_samples(self):
        return 2 * self.n_splits

    def _prepare(self, n_samples, random_state):
        self.split_ = random_state.permutation(np.arange(n_samples) % self.n_splits)

    def _epoch_batches(self, data, rng):
        """One mini-batch from every part at a time (parts differ in size by at most one)."""
        parts = [
            torch.as_tensor(np.flatnonzero(self.split_ == i), device=data.device)
            for i in range(self.n_splits)
        ]
        parts = [p[torch.randperm(len(p), generator=rng).to(data.device)] for p in parts]
        for start in range(0, min(len(p) for p in parts), self.batch_size):
            yield [data[p[start : start + self.batch_size]] for p in parts]

    def _build(self, n_features, device):
        hidden = self.hidden_dim
        self.generators_ = [
            make_generator(self.latent_dim, n_features, hidden).to(device)
            for _ in range(self.n_splits)
        ]
        self.discriminators_ = [
            make_discriminator(n_features, hidden).to(device) for _ in range(self.n_splits)
        ]
        self.privacy_discriminator_ = make_discriminator(n_features, hidden, self.n_splits)
        self.privacy_discriminator_.to(device)
        params_g = [p for g in self.generators_ for p in g.parameters()]
        params_d = [p for d in self.discriminators_ for p in d.parameters()]
        self._opt_g, self._opt_d = self._adam(params_g), self._adam(params_d)
        self._opt_p = self._adam(self.privacy_discriminator_.parameters())

    def _step(self, batches, rng):
        bce = torch.nn.functional.binary_cross_entropy_with_logits
        ce = torch.nn.functional.cross_entropy
        device = batches[0].device
        pairs = zip(self.generators_, batches, strict=True)
        fakes = [g(self._latents(len(b), rng, device)) for g, b in pairs]
        loss_d = 0.0
        for real, fake, disc in zip(batches, fakes, self.discriminators_, strict=True):
            real_logit, fake_logit = disc(real), disc(fake.detach())
            loss_d = loss_d + bce(real_logit, torch.ones_like(real_logit))
            loss_d = loss_d + bce(fake_logit, torch.zeros_like(fake_logit))
        self._opt_d.zero_grad()
        loss_d.backward()
        self._opt_d.step()
        source = torch.cat([torch.full((len(f),), i, device=device) for i, f in enumerate(fakes)])
        loss_p = ce(self.privacy_discriminator_(torch.cat(fakes).detach()), source)
        self._opt_p.zero_grad()
        loss_p.backward()
        self._opt_p.step()
        loss_g = 0.0
        for i, (fake, disc) in enumerate(zip(fakes, self.discriminators_, strict=True)):
            fake_logit = disc(fake)
            other = torch.full((len(fake),), (i + 1) % self.n_splits, device=device)
            loss_g = loss_g + bce(fake_logit, torch.ones_like(fake_logit))
            loss_g = loss_g + self.privacy_weight * ce(self.privacy_discriminator_(fake), other)
        self._opt_g.zero_grad()
        loss_g.backward()
        self._opt_g.step()
        return loss_d.item(), loss_g.item(), loss_p.item()

    def _trained_modules(self):
        del self._opt_g, self._opt_d, self._opt_p
        return [*self.generators_, *self.discriminators_, self.privacy_discriminator_]

    def _generators(self):
        return self.generators_
