"""What the documentation site and the terminal show a new user (issue #27).

* The algorithm audit's page documents every column of the files a real
  ``audit_algorithm`` run writes (so a new column cannot go undocumented), and is reachable
  from the index and the user guide.
* The API reference lists the public surface only: not ``sklearn_mace.base``'s base classes
  and validators (docs/design.md, "Public surface").
* The design page's navigation label is "Design".
* Nested progress bars are drawn only on a terminal: in a log they leave ``\\x1b[A``
  escapes. The gallery's examples draw their GAN bars only in a terminal.
* ``--decimal`` shows a word in the help, not argparse's ``{,,.}``.
"""

import argparse
import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGE = DOCS / "guide" / "algorithm_cli.rst"


@pytest.fixture(scope="module")
def algorithm_run(tmp_path_factory):
    """A small real run of the algorithm audit (20 runs per side), its stderr and files."""
    from sklearn_mace.report import write_report
    from sklearn_mace.report._kinds.algorithm._audit import audit_algorithm

    stderr = io.StringIO()  # not a terminal, as a log or a pipe
    with contextlib.redirect_stderr(stderr):
        result = audit_algorithm(n_runs=20, verbose=True)
    out = tmp_path_factory.mktemp("algorithm")
    write_report(result, out)
    return stderr.getvalue(), out


def _documented(name, text):
    if name.startswith("score: "):
        name = "score: <target>"
    return f"``{name}``" in text


@pytest.mark.parametrize("file", ["summary.csv", "records.csv", "comparisons.csv"])
def test_the_algorithm_page_documents_every_column_of_its_files(algorithm_run, file):
    _, out = algorithm_run
    columns = list(pd.read_csv(out / file, nrows=1).columns)
    assert len(columns) >= 5
    text = PAGE.read_text("utf-8")
    assert f"``{file}``" in text
    missing = [name for name in columns if not _documented(name, text)]
    assert not missing, f"{PAGE.name} does not document these columns of {file}: {missing}"


def test_the_algorithm_page_is_reachable():
    label = re.search(r"^\.\. _([\w-]+):", PAGE.read_text("utf-8")).group(1)
    assert f":ref:`{label}`" in (DOCS / "index.rst").read_text("utf-8")
    assert "sklearn-mace audit-algorithm" in (DOCS / "index.rst").read_text("utf-8")
    toctree = (DOCS / "guide" / "index.rst").read_text("utf-8")
    assert re.search(rf"^\s+{PAGE.stem}\s*$", toctree, re.M)
    assert f"docs/guide/{PAGE.name}" in (ROOT / "README.md").read_text("utf-8")


def test_the_inner_progress_bar_is_not_drawn_into_a_log(algorithm_run):
    stderr, _ = algorithm_run
    assert "recipes" in stderr  # the outer bar is drawn: the test sees the bars
    assert not re.search(r"shadow runs:\s+\d+%", stderr)  # the inner bar (the outer one's
    assert "\x1b[A" not in stderr  # postfix names its step "shadow runs" too)


EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_draw_progress_bars_only_in_a_terminal(path):
    """sphinx-gallery captures stderr (not a terminal): a bar there is hundreds of lines."""
    code = path.read_text("utf-8")
    fixed_on = re.findall(r"\b(?:verbose|progress)=(?:True|[1-9])\b", code)
    assert not fixed_on, f"{path.name}: a progress bar always on: {fixed_on}"
    if "verbose=PROGRESS" in code:
        assert "PROGRESS = int(sys.stderr.isatty())" in code


def _api_reference():
    spec = importlib.util.spec_from_file_location("api_reference", DOCS / "api_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_api_reference_lists_no_internals():
    page = _api_reference().api_page()
    for internal in ("sklearn_mace.base", "AttackerMixin", "check_prior", "resolve_prior"):
        assert internal not in page
    assert "KDEAdvantageEstimator" in page and "audit_epsilon" in page


def test_the_design_page_is_called_design_in_the_navigation():
    assert re.search(r"^\s+Design <design>\s*$", (DOCS / "index.rst").read_text("utf-8"), re.M)


def test_the_decimal_option_names_its_values_in_the_help():
    from sklearn_mace.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    text = commands.choices["audit"].format_help()
    assert "{,,.}" not in text
    assert "--decimal MARK" in text and "',' or '.'" in text


READING = DOCS / "guide" / "reading_cards.rst"
# the numbers "How to read a card" may type: the method's constants, never a demo's facts
# (Thm 6, 95 % confidence, 80 % power, the 0.1 margin and FPR levels, the release-size
# points 10/25/50 %, the safe mixture's 3 components, figure widths, the papers' years)
CONSTANTS = {"0", "1", "2", "3", "5", "6", "10", "25", "50", "80", "90", "95", "100", "000"}
CONSTANTS |= {"0.1", "2017", "2022", "2024"}


def test_the_card_page_covers_the_three_audits_with_their_printed_summaries():
    spec = importlib.util.spec_from_file_location("demo_cards", DOCS / "demo_cards.py")
    demo_cards = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo_cards)
    # the three kinds on this page; the one-run card has its own page (algorithm_card.rst)
    assert set(demo_cards.AUDITS) == {"release", "model", "algorithm", "one_run"}
    text = READING.read_text("utf-8")
    for title in ("The release card", "The model card", "The algorithm card"):
        assert f"\n{title}\n" in text
    assert ":ref:`algorithm_cli`" in text
    for audit in ("release", "model", "algorithm"):
        block = f".. literalinclude:: /generated/demo/{audit}/printed.txt"
        # the printed summaries are wider than the page: their block wraps (custom.css)
        assert f"{block}\n   :language: text\n   :class: mace-printed\n" in text
    css = (DOCS / "_static" / "custom.css").read_text("utf-8")
    assert re.search(r"div\.mace-printed pre[^{]*\{[^}]*white-space: pre-wrap", css)


def test_the_card_page_types_no_fact_of_the_demos():
    # every number about a demo is a substitution read from its files at build time
    # (docs/demo_cards.py), so the page cannot contradict the reports it embeds
    prose = re.sub(
        r"^\.\. (figure|raw|literalinclude)::.*$", "", READING.read_text("utf-8"), flags=re.M
    )
    prose = re.sub(r"^\s+:width: .*$", "", prose, flags=re.M)
    typed = set(re.findall(r"(?<![\w|])\d+(?:\.\d+)?(?![\w|])", prose))
    assert typed <= CONSTANTS, f"numbers typed into the page: {sorted(typed - CONSTANTS)}"
    for name in ("RMIA", "LiRA", "shadow-model attack", "BTTA", "CBTTA"):
        assert name in _model_section(prose)


def _model_section(text):
    return text[text.index("\nThe model card\n") : text.index("\nThe algorithm card\n")]
