"""The README's examples marked ``<!-- readme-test -->`` run as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"<!-- readme-test -->\n```python\n(.*?)```", README.read_text("utf-8"), re.S)


def test_the_readme_marks_its_runnable_examples():
    assert len(BLOCKS) >= 2  # the Displays example and encode_tables


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code, capsys):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    plt.close("all")
