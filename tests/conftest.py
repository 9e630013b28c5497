"""Shared fixtures, and one thread per library for the whole suite.

The suite runs on shared 2-core machines beside other processes. Multi-threaded torch,
OpenMP and BLAS calls wait at every barrier for their slowest thread, and a thread that
shares its core with another process makes each barrier wait a scheduler slice: on such a
machine the full suite took 41 min instead of 4 (issue #18), mostly in code outside the
library's kernel passes (GAN, BNAF and skorch training, scikit-learn, opacus), which keep
their libraries' defaults. Tests use small data, where one thread costs little even on an
idle machine (``benchmarks/bench_threads.py``), and results then do not depend on the
machine's core count. The limits are set before NumPy and torch load (their thread pools
read the variables once); an explicit setting in the environment wins. Tests of the thread
choice itself (``tests/utils/test_threads.py``) raise torch's ceiling where they need to.
"""

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402 - after the thread limits, which must come first
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Property tests draw the same examples on every run, so CI cannot fail on a new draw.
settings.register_profile("sklearn_mace", derandomize=True)
settings.load_profile("sklearn_mace")


@pytest.fixture(autouse=True)
def _seed_everything():
    """Seed NumPy's legacy global RNG and torch so that every test is reproducible.

    torch is imported here, not at the top: pytest-xdist's controller process loads this
    file too and runs no test, so it need not pay torch's import (seconds on a busy machine).
    """
    import torch

    np.random.seed(0)  # noqa: NPY002 - seeds code that still draws from the global RNG
    torch.manual_seed(0)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="module")
def wine():
    """scikit-learn's wine table, shuffled: ``(frame, float32 features, labels)`` (the model
    loading and audit-model sweep tests)."""
    from sklearn.datasets import load_wine

    frame = load_wine(as_frame=True).frame.sample(frac=1.0, random_state=0)
    X = frame.drop(columns="target").to_numpy(dtype=np.float32)
    return frame.reset_index(drop=True), X, frame["target"].to_numpy()


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, which may not be installed
def pytest_xdist_auto_num_workers(config):
    """Workers for ``pytest -n auto`` (``make test``): the cores this process may use.

    pytest-xdist counts the machine's cores (psutil), which a CPU set or a container's CPU
    quota may cut; joblib's count reads both, as the library's thread choice does
    (``sklearn_mace.utils._threads.usable_cores``). ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still
    wins.
    """
    fixed = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if fixed:
        return int(fixed)
    from joblib import cpu_count

    return max(1, int(cpu_count()))
