import numpy as np
import pytest
import torch


@pytest.fixture(autouse=True)
def _seed_everything():
    """Seed NumPy's legacy global RNG and torch so that every test is reproducible."""
    np.random.seed(0)  # noqa: NPY002 - seeds code that still draws from the global RNG
    torch.manual_seed(0)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
