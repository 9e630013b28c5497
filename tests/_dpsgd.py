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
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_digits

__all__ = [
    "DPSGDLogisticRegression",
    "DPSGDModel",
    "digits_membership_split",
    "dpsgd_noise_multiplier",
    "train_dpsgd_mlp",
]


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


class DPSGDLogisticRegression(ClassifierMixin, BaseEstimator):
    """Binary logistic regression trained with DP-SGD (opacus): a classifier recipe.

    scikit-learn's interface (``fit``/``predict_proba``/``decision_function``, ``classes_``)
    so that :class:`~sklearn_mace.algorithm.AlgorithmAudit` can clone, seed and train it.
    Poisson sampling at rate ``batch_size / n``, per-example clipping at ``max_grad_norm``
    and Gaussian noise ``noise_multiplier · max_grad_norm`` per step (Abadi et al. 2016);
    ``noise_multiplier=0`` trains with clipping and no noise (the non-private control).
    Weights start at zero, so the only randomness is the sampling and the noise, both drawn
    from generators seeded by ``random_state``.
    """

    def __init__(
        self,
        *,
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        epochs=4,
        batch_size=50,
        lr=1.0,
        random_state=None,
    ):
        self.noise_multiplier = noise_multiplier
        self.max_grad_norm = max_grad_norm
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.random_state = random_state

    def fit(self, X, y):
        from opacus import PrivacyEngine

        seed = 0 if self.random_state is None else int(self.random_state)
        features = torch.as_tensor(np.asarray(X), dtype=torch.float32)
        labels = torch.as_tensor(np.asarray(y), dtype=torch.float32)
        self.classes_ = np.array([0.0, 1.0])
        with _one_torch_thread(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = torch.nn.Linear(features.shape[1], 1)
            torch.nn.init.zeros_(module.weight)
            torch.nn.init.zeros_(module.bias)
            optimizer = torch.optim.SGD(module.parameters(), lr=self.lr)
            loader = torch.utils.data.DataLoader(
                torch.utils.data.TensorDataset(features, labels),
                batch_size=self.batch_size,
                generator=torch.Generator().manual_seed(seed),
            )
            module, optimizer, loader = PrivacyEngine().make_private(
                module=module,
                optimizer=optimizer,
                data_loader=loader,
                noise_multiplier=self.noise_multiplier,
                max_grad_norm=self.max_grad_norm,
                poisson_sampling=True,
                noise_generator=torch.Generator().manual_seed(seed + 1),
            )
            for _ in range(self.epochs):
                for batch, batch_labels in loader:
                    if len(batch) == 0:
                        continue
                    optimizer.zero_grad()
                    logits = module(batch).squeeze(1)
                    torch.nn.functional.binary_cross_entropy_with_logits(
                        logits, batch_labels
                    ).backward()
                    optimizer.step()
            module._close()
            inner = module._module
            self.coef_ = inner.weight.detach().numpy().astype(float).copy()
            self.intercept_ = inner.bias.detach().numpy().astype(float).copy()
        return self

    def decision_function(self, X):
        return np.asarray(X, dtype=float) @ self.coef_[0] + self.intercept_[0]

    def predict_proba(self, X):
        p = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        return (self.decision_function(X) > 0).astype(float)


def dpsgd_noise_multiplier(epsilon, delta, sample_rate, epochs):
    """The noise multiplier that spends (ε, δ) in ``epochs`` epochs (opacus' PRV accountant)."""
    from opacus.accountants.utils import get_noise_multiplier

    return float(
        get_noise_multiplier(
            target_epsilon=epsilon,
            target_delta=delta,
            sample_rate=sample_rate,
            epochs=epochs,
            accountant="prv",
        )
    )
