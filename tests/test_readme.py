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
