"""Every Python example of the README runs as written, with the data it defines.

Each ```python block is preceded by a marker: ``<!-- readme-test -->`` (runs on its own),
``<!-- readme-test: continues -->`` (runs after the block before it, in the same namespace,
as a reader pasting them in order would) and ``slow`` (in the slow suite: a Dask cluster, a
grid search). A block that prints a check prints ``True``: the test fails on a ``False``.
"""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text("utf-8")
MARKED = re.findall(r"<!-- readme-test(?::\s*([\w, ]+))? -->\n```python\n(.*?)```", TEXT, re.S)


def _blocks():
    """``(code to run, slow)`` per block; a continuing block runs after its predecessor."""
    blocks = []
    for options, code in MARKED:
        flags = {flag.strip() for flag in options.split(",") if flag.strip()}
        if "continues" in flags:
            code = blocks[-1][0] + "\n" + code
        blocks.append((code, "slow" in flags))
    return blocks


BLOCKS = _blocks()


def test_every_python_block_of_the_readme_is_run():
    assert TEXT.count("```python") == len(BLOCKS) >= 5


@pytest.mark.parametrize(
    "code",
    [pytest.param(code, marks=[pytest.mark.slow] if slow else []) for code, slow in BLOCKS],
    ids=[f"block{i}" for i in range(len(BLOCKS))],
)
def test_readme_example_runs(code, capsys, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)  # whatever a block writes lands here
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    plt.close("all")
    printed = capsys.readouterr().out
    assert "False" not in printed, printed


# -- statements of the README's prose, checked against the code -------------------------------


def _resolve(dotted):
    """The object a dotted ``sklearn_mace.…`` name refers to (the longest importable module,
    then attributes)."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


def test_every_dotted_name_of_the_readme_exists():
    dotted = set(re.findall(r"`(sklearn_mace(?:\.\w+)+)`", TEXT))
    assert "sklearn_mace.metrics.audit_epsilon" in dotted  # the pattern finds them
    missing = []
    for name in sorted(dotted):
        try:
            _resolve(name)
        except (ImportError, AttributeError):
            missing.append(name)
    assert not missing, f"the README names what does not exist: {missing}"


def test_every_import_location_of_the_readme_is_right():
    """ "`compare_attacks(...)` (in `sklearn_mace` and `sklearn_mace.attacks`)": each module
    named exports the name (``__all__``)."""
    import importlib

    modules = r"((?:`sklearn_mace[\w.]*`(?:,| and)?\s*)+)"
    stated = re.findall(r"`(\w+)(?:\([^`]*\))?`\s+\(in\s+" + modules + r"\)", TEXT)
    names = {name for name, _ in stated}
    assert {"compare_attacks", "compare_audits"} <= names, stated
    wrong = [
        (name, module)
        for name, modules in stated
        for module in re.findall(r"`(sklearn_mace[\w.]*)`", modules)
        if name not in importlib.import_module(module).__all__
    ]
    assert not wrong, f"the README places these names in modules that do not export them: {wrong}"


def _declared_expected_failures():
    """``{estimator class name: n}``: the checks that ``parametrize_with_checks`` marks
    ``xfail`` in the test modules (read from the marks pytest collects)."""
    import importlib
    import sys
    from collections import Counter

    tests = Path(__file__).resolve().parent
    counts = Counter()
    for path in sorted(tests.rglob("test_*.py")):  # the folders mirror the package
        if "parametrize_with_checks(" not in path.read_text("utf-8"):
            continue
        if str(path.parent) not in sys.path:
            sys.path.insert(0, str(path.parent))
        module = importlib.import_module(path.stem)
        for function in vars(module).values():
            for mark in getattr(function, "pytestmark", ()):
                if mark.name != "parametrize" or "check" not in str(mark.args[0]):
                    continue
                for param in mark.args[1]:
                    if any(m.name == "xfail" for m in getattr(param, "marks", ())):
                        estimator = param.values[0]
                        if type(estimator).__name__ == "Pipeline":
                            estimator = estimator.steps[-1][1]  # named by its head
                        counts[type(estimator).__name__] += 1
    return counts


def test_the_readme_counts_the_expected_failures_of_the_estimator_checks():
    """The README's "18 checks of other estimators are …" lists every xfail, by estimator."""
    bullet = re.search(r"no attacker's check is declared as an expected failure.*?\n\*", TEXT, re.S)
    assert bullet, "the README's sentence on expected failures is gone"
    text = " ".join(bullet.group(0).split())
    total = int(re.search(r"(\d+) checks of other estimators are", text).group(1))
    stated = {name: int(n) for name, n in re.findall(r"`(\w+)`(?: behind [^()]*?)? (\d+)\b", text)}
    declared = _declared_expected_failures()
    assert sum(declared.values()) >= 1  # the marks are found, or the test checks nothing
    assert stated == dict(declared), (stated, dict(declared))
    assert total == sum(declared.values())
    from sklearn_mace.utils._testing import expected_failed_checks

    assert expected_failed_checks(None) == {}  # "declares none"
