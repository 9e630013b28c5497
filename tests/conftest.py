import numpy as np
import pytest
import torch
from hypothesis import settings

# Property tests draw the same examples on every run, so CI cannot fail on a new draw.
settings.register_profile("sklearn_mace", derandomize=True)
settings.load_profile("sklearn_mace")


@pytest.fixture(autouse=True)
def _seed_everything():
    """Seed NumPy's legacy global RNG and torch so that every test is reproducible."""
    np.random.seed(0)  # noqa: NPY002 - seeds code that still draws from the global RNG
    torch.manual_seed(0)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
