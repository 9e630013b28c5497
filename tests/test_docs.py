"""The documentation site's contract with the code (issue #20).

* Every public name — every entry of the ``__all__`` of ``sklearn_mace`` and of each public
  module — has an API page: one autosummary entry in the generated reference (or, for a
  re-export, a link to the page of the module that documents it). autosummary writes one
  page per entry, and ``make docs`` (warnings as errors) fails if one cannot be written.
* No public docstring holds a table (benchmark tables belong in the user guide; the
  docstring links it), and every ``:ref:`` a public docstring makes names a label that exists
  in ``docs/``.
* Every example states the question it answers in its title.

None of this needs Sphinx: the generator of the reference is plain Python.
"""

import importlib
import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import sklearn_mace

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# the modules without API pages: helpers, the CLI, and the base classes (docs/design.md,
# "Public surface"); docs/api_reference.py says why
_SKIPPED = {"utils", "cli", "__main__", "base"}


def _load_generator():
    spec = importlib.util.spec_from_file_location("api_reference", DOCS / "api_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


API = _load_generator()


def _public_names():
    """``(module, name)`` for every name of every public ``__all__`` (found independently)."""
    modules = [sklearn_mace]
    for info in pkgutil.walk_packages(sklearn_mace.__path__, prefix="sklearn_mace."):
        if any(part.startswith("_") or part in _SKIPPED for part in info.name.split(".")[1:]):
            continue
        modules.append(importlib.import_module(info.name))
    return [
        (module.__name__, name) for module in modules for name in getattr(module, "__all__", ())
    ]


PUBLIC_NAMES = _public_names()


def _autosummary_entries(text):
    """``{module: [names]}`` of the autosummary blocks of the generated page."""
    entries, module, in_block = {}, None, False
    for line in text.splitlines():
        if line.startswith(".. currentmodule:: "):
            module = line.split("::")[1].strip()
        elif line.startswith(".. autosummary::"):
            in_block = True
        elif in_block and line.startswith("   ") and not line.strip().startswith(":"):
            entries.setdefault(module, []).append(line.strip())
        elif in_block and line and not line.startswith(" "):
            in_block = False
    return entries


API_PAGE = API.api_page()
DOCUMENTED = [
    f"{module}.{name}" for module, names in _autosummary_entries(API_PAGE).items() for name in names
]


def test_public_names_are_found():
    """The discovery sees the API, or the tests below check nothing."""
    names = {name for _, name in PUBLIC_NAMES}
    assert len(PUBLIC_NAMES) > 100
    assert {
        "KDEAdvantageEstimator",
        "audit_epsilon",
        "MembershipRocDisplay",
        "audit_release",
    } <= names


@pytest.mark.parametrize("module_name, name", PUBLIC_NAMES, ids=lambda v: str(v))
def test_every_public_name_has_an_api_page(module_name, name):
    obj = getattr(importlib.import_module(module_name), name)
    # the page is the object's own: its autosummary entry resolves to this very object
    pages = [
        path
        for path in DOCUMENTED
        if getattr(importlib.import_module(path.rpartition(".")[0]), path.rpartition(".")[2]) is obj
    ]
    assert len(pages) == 1, f"{module_name}.{name}: pages {pages} (want exactly one)"
    if pages[0] != f"{module_name}.{name}":  # a re-export links to the page
        role = "func" if inspect.isfunction(obj) else "class"
        assert f":{role}:`{name} <{pages[0]}>`" in API_PAGE


def test_no_page_for_a_name_that_is_not_public():
    public = {f"{module}.{name}" for module, name in PUBLIC_NAMES}
    assert set(DOCUMENTED) <= public


# -- tables in docstrings ------------------------------------------------------------------

_TABLE_PATTERNS = {
    "simple table": re.compile(r"^\s*=+(\s+=+)+\s*$", re.M),
    "grid table": re.compile(r"^\s*\+[-=]+(\+[-=]+)*\+\s*$", re.M),
    "markdown table": re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$", re.M),
    "table directive": re.compile(r"^\s*\.\. (list-table|csv-table|table)::", re.M),
}


def _tables(doc):
    return [kind for kind, pattern in _TABLE_PATTERNS.items() if pattern.search(doc or "")]


def test_the_table_detector_finds_every_kind_of_table():
    """Each pattern fires on its kind of table and not on ordinary docstring text."""
    simple = "Text.\n\n====  ====\n  d   bias\n====  ====\n   1  0.02\n====  ====\n"
    grid = "+----+------+\n| d  | bias |\n+====+======+\n| 1  | 0.02 |\n+----+------+\n"
    markdown = "| d | bias |\n| --- | --- |\n| 1 | 0.02 |\n"
    directive = ".. list-table:: Bias\n   :header-rows: 1\n"
    assert _tables(simple) == ["simple table"]
    assert "grid table" in _tables(grid)
    assert _tables(markdown) == ["markdown table"]
    assert _tables(directive) == ["table directive"]
    ordinary = inspect.getdoc(sklearn_mace.metrics.audit_epsilon)
    assert "Parameters\n----------" in ordinary and _tables(ordinary) == []


def _public_docstrings():
    """``{path: docstring}``: public modules, names and their own public members."""
    docs, seen = {}, set()
    for module_name, name in PUBLIC_NAMES:
        module = importlib.import_module(module_name)
        docs.setdefault(module_name, inspect.getdoc(module))
        obj = getattr(module, name)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        docs[f"{module_name}.{name}"] = inspect.getdoc(obj)
        if inspect.isclass(obj):
            for member, attr in vars(obj).items():
                if member.startswith("_"):
                    continue
                target = attr.fget if isinstance(attr, property) else attr
                target = getattr(target, "__func__", target)
                if callable(target) or isinstance(attr, property):
                    docs[f"{module_name}.{name}.{member}"] = inspect.getdoc(target)
    return {path: doc for path, doc in docs.items() if doc}


PUBLIC_DOCSTRINGS = _public_docstrings()


def test_no_public_docstring_holds_a_table():
    offenders = {path: _tables(doc) for path, doc in PUBLIC_DOCSTRINGS.items() if _tables(doc)}
    assert not offenders, (
        "move these tables into the user guide (docs/guide/) and link it with "
        f"'Read more in the :ref:`User Guide <label>`.': {offenders}"
    )


def _labels():
    labels = set()
    for path in DOCS.rglob("*.rst"):
        if "_build" in path.parts or "generated" in path.parts:
            continue
        labels.update(re.findall(r"^\.\. _([\w-]+):\s*$", path.read_text("utf-8"), re.M))
    return labels


def test_every_guide_link_of_a_docstring_exists():
    labels = _labels()
    assert {"user_guide", "reading_cards", "un_bias"} <= labels
    links = {
        (path, match)
        for path, doc in PUBLIC_DOCSTRINGS.items()
        for match in re.findall(r":ref:`(?:[^`<]*<)?([\w-]+)>?`", doc)
    }
    assert any(p.endswith(".KDEAdvantageEstimator") and lab == "un_bias" for p, lab in links)
    missing = sorted((path, label) for path, label in links if label not in labels)
    assert not missing, f"links to labels that docs/ does not define: {missing}"


# -- examples ------------------------------------------------------------------------------

EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))


def test_examples_are_found():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_states_its_question_first(path):
    """The gallery shows the title: it is the question the example answers."""
    doc = inspect.getdoc(_module_docstring(path)) or ""
    title, underline = doc.splitlines()[:2]
    assert title.rstrip().endswith("?"), f"{path.name}: title {title!r} is not a question"
    assert set(underline) == {"="} and len(underline) >= len(title), path.name


class _Doc:
    def __init__(self, doc):
        self.__doc__ = doc


def _module_docstring(path):
    import ast

    return _Doc(ast.get_docstring(ast.parse(path.read_text("utf-8"))))


def test_the_readme_links_the_card_page():
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "docs/guide/reading_cards.rst" in readme
    assert (DOCS / "guide" / "reading_cards.rst").is_file()


# --- formulas offline (issue #27): MathJax is served by the site, never by a CDN ------------

_CHECK = importlib.util.spec_from_file_location("check_offline", DOCS / "check_offline.py")
check_offline = importlib.util.module_from_spec(_CHECK)
_CHECK.loader.exec_module(check_offline)  # the check `make docs` runs on the whole site
_REMOTE = check_offline.REMOTE
_FORMULA_PAGE = r"""Formulas
========

The advantage :math:`\mathrm{Adv}_p = 2\,P(\text{correct}) - 1`, and in display:

.. math::

   \varepsilon \ge \log\frac{\mathrm{TPR} - \delta}{\mathrm{FPR}}
"""


def test_the_site_loads_the_offline_math_extension():
    # read, not executed: conf.py builds the API pages when it runs
    conf = (DOCS / "conf.py").read_text("utf-8")
    assert re.search(r'^\s*"offline_math",', conf, re.MULTILINE)
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    with (ROOT / "pyproject.toml").open("rb") as file:
        extras = tomllib.load(file)["project"]["optional-dependencies"]
    for extra in ("docs", "dev"):  # make docs installs the dev extra
        assert any(r.startswith("sphinx-mathjax-offline") for r in extras[extra]), extra


def test_built_pages_reference_no_remote_script(tmp_path):
    """A page with formulas, built with the site's theme and its math extension: every
    script and stylesheet of every page is local, and MathJax is the packaged copy."""
    pytest.importorskip("sphinx")
    pytest.importorskip("pydata_sphinx_theme")
    from sphinx.cmd.build import build_main

    assert importlib.util.find_spec("sphinx-mathjax-offline"), (
        "sphinx-mathjax-offline (the packaged MathJax) is missing: pip install -e '.[dev]'"
    )
    source = tmp_path / "source"
    source.mkdir()
    (source / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(DOCS)!r})\n"
        "extensions = ['offline_math']\n"
        "html_theme = 'pydata_sphinx_theme'\n",
        encoding="utf-8",
    )
    (source / "index.rst").write_text(_FORMULA_PAGE, encoding="utf-8")
    out = tmp_path / "html"
    assert build_main(["-q", "-W", "-b", "html", str(source), str(out)]) == 0
    pages = sorted(out.rglob("*.html"))
    assert pages
    assert check_offline.remote_references(out) == {}
    assert check_offline.main([str(out)]) == 0
    index = (out / "index.html").read_text("utf-8")
    assert 'src="_static/mathjax/tex-chtml.js' in index  # MathJax itself, from the site
    assert (out / "_static" / "mathjax" / "tex-chtml.js").is_file()
    # its CommonHTML fonts sit where tex-chtml.js looks for them, beside it
    assert list((out / "_static" / "mathjax" / "output" / "chtml" / "fonts").rglob("*.woff"))
    assert r"\mathrm{Adv}_p" in index  # the TeX is there for MathJax to typeset


def test_the_site_check_fails_on_a_page_that_loads_from_the_network(tmp_path, capsys):
    page = '<script src="https://code.jquery.com/jquery-3.7.0.js"></script>'
    (tmp_path / "sg_execution_times.html").write_text(page, encoding="utf-8")
    assert check_offline.main([str(tmp_path)]) == 1
    assert "code.jquery.com" in capsys.readouterr().err
    assert check_offline.main([str(tmp_path / "nothing")]) == 1  # no page: not a pass


def test_remote_pattern_finds_cdn_scripts():
    # the check above can fail: the pattern catches what sphinx.ext.mathjax writes by default
    cdn = '<script async="async" src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js">'
    assert _REMOTE.findall(cdn) and _REMOTE.findall('<link href="//fonts.example/x.css">')
    assert not _REMOTE.findall('<script src="_static/mathjax/tex-chtml.js"></script>')


def test_the_readme_says_where_the_comparisons_are_imported_from():
    readme = " ".join((ROOT / "README.md").read_text("utf-8").split())
    assert "`compare_attacks` is imported from `sklearn_mace`" in readme
    from sklearn_mace import compare_attacks  # noqa: F401
    from sklearn_mace.metrics import compare_audits, tpr_at_fpr_test  # noqa: F401

    assert not hasattr(importlib.import_module("sklearn_mace.metrics"), "compare_attacks")
