"""GAN-leaks: the distance from a record to the closest point the generator can produce."""

from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils import check_random_state
from tqdm.auto import tqdm

from ..utils._sklearn_compat import Interval
from ..utils._torch import resolve_device, to_numpy
from ._base import TorchQueryMixin, as_module, evaluation_mode, module_dtype, module_on

__all__ = ["GeneratorReconstructionQuery"]


class GeneratorReconstructionQuery(TorchQueryMixin):
    """``Q_S(z) = min_w ‖z − G(w)‖₂`` for a released generator (MACE §2.2.1, GAN-leaks).

    Chen et al.'s reconstruction query: a training record that the generator memorised can be
    reproduced closely from some latent ``w``, so *smaller* means more likely a member
    (``membership_orientation()`` is ``-1``). The minimum is searched by batched gradient
    descent (Adam) on the latent codes of ``batch_size`` records at once, each from the same
    ``n_restarts`` standard-normal starting points (so a record's value does not depend on
    the other records); the query is the smallest distance met over all restarts and steps.
    Only the latents are optimised: the generator's weights and their ``.grad`` are never
    touched (gradients are taken with ``torch.autograd.grad``).

    Parameters
    ----------
    generator : torch.nn.Module or fitted skorch net
        Maps latents ``(b, latent_dim)`` to records ``(b, n_features)`` (any output shape with
        ``n_features`` values per record, e.g. ``(b, 1, 8, 8)``, is flattened).
    latent_dim : int
        Dimension of the generator's input.
    n_restarts : int, default=5
        Random starting latents per record.
    n_steps : int, default=100
        Adam steps per restart.
    learning_rate : float, default=0.05
        Adam step size.
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
    batch_size : int, default=256
        Records optimised together (``batch_size × n_restarts`` latents per forward pass).
    random_state : int, RandomState instance or None, default=None
        Seeds the starting latents (drawn on the CPU, so CPU and CUDA runs start alike).
        Pass an int for the same values on every ``transform``.
    verbose : int, default=0
        Show a progress bar over optimisation steps when > 0.

    Attributes
    ----------
    n_features_in_ : int
        Features seen in ``fit``.

    References
    ----------
    MACE (Pan et al., TMLR 2023), §2.2.1; Chen et al. (2019), GAN-Leaks.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from sklearn_mace.queries import GeneratorReconstructionQuery
    >>> G = torch.nn.Linear(2, 3)        # its range is a plane in R^3
    >>> q = GeneratorReconstructionQuery(G, latent_dim=2, n_steps=300, random_state=0)
    >>> X = G(torch.randn(4, 2)).detach().double().numpy()  # points on the plane
    >>> bool((q.fit_transform(X) < 1e-2).all())
    True
    """

    #: a record the generator reproduces closely is more likely a member: smaller = member
    _membership_orientation = -1

    _parameter_constraints = {
        "generator": "no_validation",
        "latent_dim": [Interval(Integral, 1, None, closed="left")],
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "n_steps": [Interval(Integral, 0, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "device": [str, torch.device],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        generator,
        latent_dim,
        *,
        n_restarts=5,
        n_steps=100,
        learning_rate=0.05,
        device="auto",
        batch_size=256,
        random_state=None,
        verbose=0,
    ):
        self.generator = generator
        self.latent_dim = latent_dim
        self.n_restarts = n_restarts
        self.n_steps = n_steps
        self.learning_rate = learning_rate
        self.device = device
        self.batch_size = batch_size
        self.random_state = random_state
        self.verbose = verbose

    def _generate(self, generator, latents, n_features):
        """``G(w)`` flattened, with clear errors for a wrong width or non-finite values."""
        try:
            records = generator(latents)
        except RuntimeError as exc:
            raise ValueError(
                f"generator cannot be applied to latents of dimension "
                f"latent_dim={self.latent_dim}: {exc}"
            ) from exc
        records = records.reshape(len(latents), -1)
        if records.shape[1] != n_features:
            raise ValueError(
                f"generator produces records with {records.shape[1]} values but X has "
                f"{n_features} feature(s)."
            )
        if not torch.isfinite(records).all():
            raise ValueError("generator returned non-finite values (NaN or inf).")
        return records

    def _check_query(self, X):
        device = resolve_device(self.device)
        generator = module_on(as_module(self.generator, "generator"), device)
        latents = torch.zeros((2, self.latent_dim), dtype=module_dtype(generator), device=device)
        with evaluation_mode([generator]), torch.inference_mode():
            self._generate(generator, latents, X.shape[1])
        return 1

    def _query(self, X, *, progress):
        device = resolve_device(self.device)
        generator = module_on(as_module(self.generator, "generator"), device)
        dtype = module_dtype(generator)
        # The same n_restarts starting latents for every record (drawn on the CPU, so CPU and
        # CUDA runs start alike): a record's query depends on nothing but the record.
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        cpu_rng = torch.Generator().manual_seed(seed)
        starts_w = torch.randn((self.n_restarts, self.latent_dim), generator=cpu_rng)
        starts_w = starts_w.to(device=device, dtype=dtype)
        out = np.empty((len(X), 1))
        batches = range(0, len(X), self.batch_size)
        bar = tqdm(
            total=len(batches) * self.n_steps, disable=not progress, desc=type(self).__name__
        )
        with evaluation_mode([generator]), torch.enable_grad(), bar:
            for start in batches:
                rows = slice(start, start + self.batch_size)
                target = torch.tensor(X[rows], dtype=dtype, device=device)
                best = self._reconstruct(generator, target, starts_w, bar)
                out[rows, 0] = to_numpy(best.double().sqrt())
        return out

    def _reconstruct(self, generator, target, starts_w, bar):
        """Smallest squared distance per record over restarts and Adam steps.

        Restart ``r`` of record ``i`` is row ``r·b + i``; the loss is a sum of per-row terms
        and Adam acts elementwise, so every row follows its own trajectory.
        """
        b, n_features = target.shape
        target = target.repeat(self.n_restarts, 1)
        latents = starts_w.repeat_interleave(b, dim=0).requires_grad_(True)
        optimizer = torch.optim.Adam([latents], lr=self.learning_rate)
        best = torch.full((len(target),), torch.inf, dtype=target.dtype, device=target.device)
        for step in range(self.n_steps + 1):
            sq_distance = (self._generate(generator, latents, n_features) - target).square()
            sq_distance = sq_distance.sum(dim=1)
            best = torch.minimum(best, sq_distance.detach())
            if step == self.n_steps:
                break
            (latents.grad,) = torch.autograd.grad(sq_distance.sum(), latents)
            optimizer.step()
            bar.update()
        return best.reshape(self.n_restarts, b).amin(dim=0)
