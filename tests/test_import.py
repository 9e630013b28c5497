"""Lazy imports (``docs/design.md``, "Imports"): what ``import sklearn_mace`` loads.

Each check runs in a fresh interpreter, since this test process has long imported torch.
scikit-learn itself imports pandas whenever ``sklearn.utils`` loads (``sklearn.utils.fixes``),
so pandas is checked only where nothing of scikit-learn is imported yet.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "skorch", "pandas", "matplotlib")


def _loaded_after(code):
    """Which of ``HEAVY`` (and ``sklearn``) are in ``sys.modules`` after running ``code``."""
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps([m for m in {(*HEAVY, 'sklearn')!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"},
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "statement",
    [
        "import sklearn_mace",
        "import sklearn_mace.metrics",
        "import sklearn_mace.attacks",
        "import sklearn_mace.algorithm, sklearn_mace.attacks, sklearn_mace.datasets, "
        "sklearn_mace.density, "
        "sklearn_mace.estimation, sklearn_mace.generative, sklearn_mace.metrics, "
        "sklearn_mace.queries, sklearn_mace.report, sklearn_mace.utils",
    ],
)
def test_package_import_loads_nothing_heavy(statement):
    loaded = _loaded_after(statement)
    assert not loaded & set(HEAVY), f"`{statement}` imported {sorted(loaded & set(HEAVY))}"
    # not even scikit-learn: the namespaces are lazy
    assert "sklearn" not in loaded


def test_numpy_estimators_do_not_load_torch():
    """NumPy-usable names import without torch or skorch (they load it to compute, if ever)."""
    loaded = _loaded_after(
        "from sklearn_mace import (BayesOptimalMIA, BTTAttack, DOMIASAttack, "
        "GeneralizedMetricAttack, KDEAdvantageEstimator, NearestSyntheticDistance, "
        "MonteCarloQuery, ClassifierQuery, ShadowModels, LiRAAttack, compare_attacks)\n"
        "from sklearn_mace.metrics import (membership_advantage, tpr_at_fpr, audit_epsilon, "
        "MembershipRocDisplay, get_scorer)\n"
        "from sklearn_mace.density import GaussianKDE, HistogramDensity\n"
        "from sklearn_mace.datasets import make_planted_leak, load_digit_images"
    )
    assert not loaded & {"torch", "skorch", "matplotlib"}, sorted(loaded)


def test_torch_names_load_torch_on_access():
    assert "torch" in _loaded_after("from sklearn_mace.generative import JSGAN")
    assert "torch" in _loaded_after("import sklearn_mace; sklearn_mace.density.BNAFDensity")


@pytest.mark.parametrize("argv", [["--help"], ["audit", "--help"], ["audit-model", "--help"]])
def test_cli_help_does_not_load_torch(argv):
    loaded = _loaded_after(
        f"from sklearn_mace.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    )
    assert not loaded & {"torch", "skorch", "pandas", "matplotlib"}, sorted(loaded)


def test_lazy_namespace_behaves_like_an_eager_one():
    import sklearn_mace
    from sklearn_mace import KDEAdvantageEstimator
    from sklearn_mace.estimation._advantage import KDEAdvantageEstimator as defined

    assert KDEAdvantageEstimator is defined
    assert set(sklearn_mace.__all__) <= set(dir(sklearn_mace))
    assert {"metrics", "generative", "__version__"} <= set(dir(sklearn_mace))
    assert sklearn_mace.metrics.tpr_at_fpr.__module__ == "sklearn_mace.metrics._membership"
    namespace = {}
    exec("from sklearn_mace import *", namespace)
    assert set(sklearn_mace.__all__) <= namespace.keys()
    with pytest.raises(AttributeError, match="has no attribute 'SCORERS'"):
        sklearn_mace.metrics.SCORERS  # noqa: B018  (removed from the public surface)
    with pytest.raises(ImportError):
        from sklearn_mace.datasets import JSGAN  # noqa: F401  (moved to generative)
