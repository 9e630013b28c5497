"""Train a small MLP on digits with DP-SGD (opacus): a model whose ε is known from its accountant.

Used by ``test_dpsgd_audit.py`` and ``examples/plot_dpsgd_audit.py``. DP-SGD (Abadi et al. 2016)
clips each record's gradient to ``max_grad_norm`` and adds Gaussian noise to every batch sum;
Poisson sampling and the accountant (opacus's PRV accountant by default) turn the noise
multiplier into an (ε, δ) guarantee for the **member** records. No attack on the released
model can then certify more than that ε, which is the ground truth the audit tests check.

Everything is seeded (network weights, Poisson batches, noise) and runs on the CPU with one
torch thread: on a loaded 2-core machine, two torch threads fighting over the cores made a
tiny MLP's step 100× slower.
"""

import contextlib
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.datasets import load_digits

__all__ = ["DPSGDModel", "digits_membership_split", "train_dpsgd_mlp"]


@dataclass(frozen=True)
class DPSGDModel:
    """A trained model and what its training spent.

    ``epsilon`` is the accountant's ε at ``delta`` after training (``inf`` when trained
    without DP); ``noise_multiplier`` is 0 then.
    """

    module: torch.nn.Module
    epsilon: float
    delta: float
    noise_multiplier: float
    train_accuracy: float


def digits_membership_split(n_members=800, n_nonmembers=800, random_state=0):
    """Disjoint member and non-member records of ``load_digits``: pixels / 16, then the label.

    Returns
    -------
    members, nonmembers : ndarray of shape (n, 65), float32
        Records in ClassifierQuery's layout (true label in the last column).
    """
    X, y = load_digits(return_X_y=True)
    if n_members + n_nonmembers > y.size:
        raise ValueError(f"digits has {y.size} images; asked for {n_members + n_nonmembers}.")
    order = np.random.default_rng(random_state).permutation(y.size)
    records = np.column_stack([X / 16.0, y]).astype(np.float32)
    return records[order[:n_members]], records[order[n_members : n_members + n_nonmembers]]


@contextlib.contextmanager
def _one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def train_dpsgd_mlp(
    members,
    *,
    epsilon,
    delta=1e-5,
    epochs=8,
    batch_size=200,
    lr=0.5,
    hidden=32,
    max_grad_norm=1.0,
    random_state=0,
):
    """Train ``64 → hidden → 10`` (ReLU) on ``members`` with DP-SGD at ``(epsilon, delta)``.

    ``make_private_with_epsilon`` picks the noise multiplier that reaches ``epsilon`` after
    ``epochs`` epochs at sample rate ``batch_size / n`` (Poisson sampling). With
    ``epsilon=None`` the same network is trained with plain SGD (no clipping, no noise): the
    non-private control.

    Parameters
    ----------
    members : ndarray of shape (n, 65)
        Training records, label in the last column (see :func:`digits_membership_split`).
    epsilon : float or None
    delta : float, default=1e-5
    epochs, batch_size, lr, hidden, max_grad_norm : training settings
    random_state : int

    Returns
    -------
    DPSGDModel
    """
    from opacus import PrivacyEngine

    features = torch.as_tensor(members[:, :-1], dtype=torch.float32)
    labels = torch.as_tensor(members[:, -1], dtype=torch.long)
    with _one_torch_thread(), warnings.catch_warnings():
        # opacus warns that its RNG is not cryptographically secure: seeded on purpose here
        warnings.simplefilter("ignore")
        torch.manual_seed(random_state)
        module = torch.nn.Sequential(
            torch.nn.Linear(features.shape[1], hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10)
        )
        optimizer = torch.optim.SGD(module.parameters(), lr=lr, momentum=0.9)
        loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(features, labels),
            batch_size=batch_size,
            shuffle=True,
            generator=torch.Generator().manual_seed(random_state),
        )
        engine = None
        if epsilon is not None:
            engine = PrivacyEngine()
            module, optimizer, loader = engine.make_private_with_epsilon(
                module=module,
                optimizer=optimizer,
                data_loader=loader,
                target_epsilon=epsilon,
                target_delta=delta,
                epochs=epochs,
                max_grad_norm=max_grad_norm,
                noise_generator=torch.Generator().manual_seed(random_state + 1),
            )
        module.train()
        for _ in range(epochs):
            for batch, batch_labels in loader:
                optimizer.zero_grad()
                torch.nn.functional.cross_entropy(module(batch), batch_labels).backward()
                optimizer.step()
        spent = float("inf") if engine is None else float(engine.get_epsilon(delta))
        if hasattr(module, "_close"):  # opacus' GradSampleModule: drop its hooks, unwrap
            module._close()
            module = module._module
        module.eval()
        with torch.no_grad():
            accuracy = float((module(features).argmax(dim=1) == labels).float().mean())
    return DPSGDModel(
        module=module,
        epsilon=spent,
        delta=delta,
        noise_multiplier=float(getattr(optimizer, "noise_multiplier", 0.0)),
        train_accuracy=accuracy,
    )
