"""A density fitted on a large release holds no copy of it (issue #28): the covariance is
summed over blocks of rows, and the KDE whitens its data tile by tile inside the kernel
sums (tests/density/test_kde_kernel.py checks those sums against direct float64 ones)."""

import tracemalloc

import numpy as np
import pytest
import torch  # noqa: F401  (imported before the trace: its first import allocates ~50 MiB)

from sklearn_mace.density._covariance import _COVARIANCE_BLOCK_BYTES, sample_covariance
from sklearn_mace.queries import DOMIASQuery


@pytest.mark.parametrize("n", [2, 3, 1000, 2 * _COVARIANCE_BLOCK_BYTES // 48 + 7])
def test_blocked_covariance_equals_numpy(rng, n):
    # several blocks (the last one short), a mean far from 0 and columns of unequal scale
    X = rng.normal(size=(n, 6)) * [1, 1e-3, 1e3, 1, 1, 1] + [0, 5, 1e4, -2, 0, 0]
    np.testing.assert_allclose(sample_covariance(X), np.cov(X, rowvar=False), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn_mace.ScaleMismatchWarning")
@pytest.mark.parametrize("bandwidth", ["scott", "cv"])
def test_domias_holds_no_copy_of_the_release(rng, bandwidth):
    """A 400 000-row, 6-column release (19 MiB): fitting DOMIAS's two KDEs and scoring 600
    records keeps NumPy's traced peak under half of one copy of the release (it held a
    whitened copy and, for the bandwidth, np.cov's centred copy: two more). What remains:
    the cross-validation's draw of its subsample (legacy ``choice`` permutes every row
    index: 8 bytes per row, 3.1 MiB), its kernel table and 1 MiB blocks of the covariance."""
    synthetic = rng.normal(size=(400_000, 6))
    reference, targets = rng.normal(size=(5_000, 6)), rng.normal(size=(600, 6))
    query = DOMIASQuery(synthetic, reference, bandwidth=bandwidth, random_state=0, device="cpu")
    tracemalloc.start()
    try:
        scores = query.fit_transform(targets)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.all(np.isfinite(scores))
    assert peak < synthetic.nbytes / 2, peak / 2**20
