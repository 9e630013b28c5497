"""The optional generator adapters (sdv, ctgan, smartnoise-synth) as AlgorithmAudit recipes.

Each test skips when its package is absent (they are extras, not in the default environment:
``pip install torch`` for the CPU first, then ``sklearn-mace[sdv]``, ``[ctgan]`` or
``[smartnoise]``). What is checked: the scikit-learn contract, that a seed fixes the release
and another seed changes it (sdv samples from a fixed seed unless told otherwise: without the
adapter's seeding every run of an audit would release the same rows), and that the adapter
runs as a recipe of :class:`~sklearn_mace.algorithm.AlgorithmAudit`.
"""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_mace.algorithm import (
    AlgorithmAudit,
    CTGANGenerator,
    SDVGenerator,
    SmartNoiseGenerator,
)
from sklearn_mace.utils._testing import expected_failed_checks


def _installed(module):
    try:
        __import__(module)
    except ImportError:
        return False
    return True


HAS_SDV, HAS_CTGAN, HAS_SNSYNTH = (_installed(m) for m in ("sdv", "ctgan", "snsynth"))
TINY_CTGAN = dict(epochs=1, batch_size=20, pac=10)


def _checked():
    estimators = []
    if HAS_SDV:
        estimators.append(SDVGenerator(random_state=0))
    if HAS_CTGAN:
        estimators.append(CTGANGenerator(**TINY_CTGAN, random_state=0))
    return estimators


@pytest.mark.skipif(not (HAS_SDV or HAS_CTGAN), reason="neither sdv nor ctgan installed")
@parametrize_with_checks(_checked(), expected_failed_checks=expected_failed_checks)
def test_adapters_pass_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    ("make", "available"),
    [
        (lambda seed: SDVGenerator(random_state=seed), HAS_SDV),
        (lambda seed: CTGANGenerator(**TINY_CTGAN, random_state=seed), HAS_CTGAN),
    ],
    ids=["sdv", "ctgan"],
)
def test_a_seed_fixes_the_release_and_another_changes_it(make, available):
    if not available:
        pytest.skip("package not installed")
    X = np.random.default_rng(0).normal(size=(100, 3))
    release = make(0).fit(X).sample(20)
    assert release.shape == (20, 3) and np.isfinite(release).all()
    np.testing.assert_array_equal(release, make(0).fit(X).sample(20))
    assert not np.array_equal(release, make(1).fit(X).sample(20))


@pytest.mark.skipif(not HAS_SDV, reason="sdv not installed")
def test_sdv_generator_is_a_recipe():
    X = np.random.default_rng(0).normal(size=(200, 2))
    audit = AlgorithmAudit(
        SDVGenerator(),
        targets=[[5.0, 5.0]],
        n_runs=10,
        train_size=50,
        n_synthetic=50,
        random_state=0,
    ).fit(X)
    assert audit.run_features_.shape[:2] == (1, 20)
    assert 0.0 <= audit.epsilon_lower_bounds_[0] < np.inf


@pytest.mark.skipif(not HAS_SNSYNTH, reason="smartnoise-synth not installed")
def test_smartnoise_generator_releases_the_domain():
    X = np.random.default_rng(0).integers(0, 3, size=(300, 3))
    release = SmartNoiseGenerator(epsilon=5.0, random_state=0).fit(X).sample(50)
    assert release.shape == (50, 3) and set(np.unique(release)) <= {0.0, 1.0, 2.0}


def test_missing_packages_get_a_clear_error():
    X = np.zeros((10, 2))
    for available, estimator, extra in (
        (HAS_SDV, SDVGenerator(), "sdv"),
        (HAS_CTGAN, CTGANGenerator(), "ctgan"),
        (HAS_SNSYNTH, SmartNoiseGenerator(), "smartnoise"),
    ):
        if not available:
            with pytest.raises(ImportError, match=f"sklearn-mace\\[{extra}\\]"):
                estimator.fit(X)
