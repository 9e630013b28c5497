"""Queries against released discriminators: D(z) (MACE Eq. 3) and privGAN's Eqs. 5–6."""

import torch

from ..utils._sklearn_compat import StrOptions
from ._base import TorchQueryMixin, as_module

__all__ = ["DiscriminatorQuery", "MultiDiscriminatorQuery"]

_OUTPUTS = {"logit": lambda raw: raw, "proba": torch.sigmoid}


class DiscriminatorQuery(TorchQueryMixin):
    """The discriminator score ``Q_S(z) = D(z)`` of a released GAN (MACE Eq. 3).

    The white-box query of Hayes et al. (LOGAN): records the discriminator scores high are
    more likely to be training records. Runs the module in ``eval()`` mode under
    ``torch.inference_mode()`` in batches, on CUDA when present; ``fit`` learns nothing.

    Parameters
    ----------
    discriminator : torch.nn.Module or fitted skorch net
        Maps a batch of records ``(b, n_features)`` (or ``(b, *input_shape)``) to one score per
        record, shape ``(b,)`` or ``(b, q)``. A skorch net is used through its ``module_``.
        Never moved or modified: on another device a copy is used.
    output : {"logit", "proba"}, default="logit"
        ``"logit"``: the module's raw output (a logit for a JS-GAN discriminator without a
        final sigmoid, a critic score for WGAN-GP); ``"proba"``: its sigmoid.
    input_shape : tuple of int, default=None
        Shape of one record as the module expects it, e.g. ``(1, 8, 8)`` for a convolutional
        discriminator; ``None`` passes the flat rows.
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        ``"auto"``: CUDA when available, else CPU.
    batch_size : int, default=1024
        Records per forward pass.
    verbose : int, default=0
        Show a progress bar in ``transform`` when > 0.

    Attributes
    ----------
    n_features_in_ : int
        Features seen in ``fit``.

    See Also
    --------
    MultiDiscriminatorQuery : several discriminators, max (Eq. 5) or vector (Eq. 6) query.

    References
    ----------
    MACE (Pan et al., TMLR 2023), §2.2.2, Eq. 3; Hayes et al. (2019), LOGAN.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from sklearn_mace.queries import DiscriminatorQuery
    >>> D = torch.nn.Linear(3, 1)
    >>> Q = DiscriminatorQuery(D, output="proba").fit_transform(np.ones((5, 3)))
    >>> Q.shape, bool(((Q > 0) & (Q < 1)).all())
    ((5, 1), True)
    """

    _parameter_constraints = {
        **TorchQueryMixin._parameter_constraints,
        "discriminator": "no_validation",
        "output": [StrOptions(set(_OUTPUTS))],
    }

    def __init__(
        self,
        discriminator,
        *,
        output="logit",
        input_shape=None,
        device="auto",
        batch_size=1024,
        verbose=0,
    ):
        self.discriminator = discriminator
        self.output = output
        self.input_shape = input_shape
        self.device = device
        self.batch_size = batch_size
        self.verbose = verbose

    def _modules(self):
        return [as_module(self.discriminator, "discriminator")]

    def _query_batch(self, batch, modules):
        return _OUTPUTS[self.output](self._run_module(modules[0], batch, "discriminator"))


class MultiDiscriminatorQuery(TorchQueryMixin):
    """Scores of several discriminators: privGAN's max query (Eq. 5) or the vector (Eq. 6).

    privGAN (Mukherjee et al., 2019) trains ``r`` generator–discriminator pairs, each on a
    part of the data. ``reduce="max"`` gives ``max_i D_i(z)`` (MACE Eq. 5, the query of the
    privGAN paper); ``reduce=None`` gives the vector ``(D_1(z), …, D_r(z))`` (MACE Eq. 6),
    which can reveal which part of the data a record was in, and so leaks more.

    Parameters
    ----------
    discriminators : list of torch.nn.Module or fitted skorch nets
        Each maps a batch of records to one score per record.
    reduce : {"max"} or None, default="max"
        ``"max"``: one feature, the largest score (Eq. 5); ``None``: one feature per
        discriminator (Eq. 6).
    output : {"logit", "proba"}, default="logit"
        Raw outputs or their sigmoids (the max is the same record either way: sigmoid is
        increasing).
    input_shape : tuple of int, default=None
        Shape of one record as the modules expect it; ``None`` passes the flat rows.
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default="auto"
        ``"auto"``: CUDA when available, else CPU.
    batch_size : int, default=1024
        Records per forward pass.
    verbose : int, default=0
        Show a progress bar in ``transform`` when > 0.

    Attributes
    ----------
    n_features_in_ : int
        Features seen in ``fit``.

    References
    ----------
    MACE (Pan et al., TMLR 2023), §2.2.2, Eqs. 5 and 6; Mukherjee et al. (2019), privGAN.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from sklearn_mace.queries import MultiDiscriminatorQuery
    >>> Ds = [torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)]
    >>> X = np.ones((4, 3))
    >>> MultiDiscriminatorQuery(Ds, reduce=None).fit_transform(X).shape
    (4, 2)
    >>> MultiDiscriminatorQuery(Ds, reduce="max").fit_transform(X).shape
    (4, 1)
    """

    _parameter_constraints = {
        **TorchQueryMixin._parameter_constraints,
        "discriminators": [list, tuple],
        "reduce": [StrOptions({"max"}), None],
        "output": [StrOptions(set(_OUTPUTS))],
    }

    def __init__(
        self,
        discriminators,
        *,
        reduce="max",
        output="logit",
        input_shape=None,
        device="auto",
        batch_size=1024,
        verbose=0,
    ):
        self.discriminators = discriminators
        self.reduce = reduce
        self.output = output
        self.input_shape = input_shape
        self.device = device
        self.batch_size = batch_size
        self.verbose = verbose

    def _modules(self):
        if len(self.discriminators) == 0:
            raise ValueError("discriminators must hold at least one module; got none.")
        return [as_module(d, f"discriminators[{i}]") for i, d in enumerate(self.discriminators)]

    def _query_batch(self, batch, modules):
        scores = []
        for i, module in enumerate(modules):
            score = self._run_module(module, batch, f"discriminators[{i}]")
            if score.shape[1] != 1:
                raise ValueError(
                    f"discriminators[{i}] must return one score per record; got "
                    f"{score.shape[1]} columns."
                )
            scores.append(score)
        Q = _OUTPUTS[self.output](torch.cat(scores, dim=1))
        return Q.amax(dim=1, keepdim=True) if self.reduce == "max" else Q
