"""The house rules of ``docs/design.md`` ("Imports"), checked on the source with ``ast``.

* No import cycle between the package's modules, counting imports inside functions: an
  import that only works because it is deferred to call time still ties the two modules.
* Each part of the package imports only the parts below it (``ALLOWED``).
* Public package ``__init__`` files import nothing but ``_lazy`` (their names load lazily),
  and the CLI reaches the report only from inside its functions.

A failure names the file, the line and the import, and what the importing part may use.
"""

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

import sklearn_mace

PACKAGE = "sklearn_mace"
ROOT = Path(sklearn_mace.__file__).parent

# part -> the parts it may import (besides itself). A part is the first name below
# ``sklearn_mace`` (``attacks`` for ``sklearn_mace.attacks._bayes``); "" is the package's own
# ``__init__``. Keep it in step with the table in docs/design.md.
_MODELS = {"_validation", "base", "metrics", "density", "queries", "utils"}
ALLOWED = {
    "_lazy": set(),
    "_version": set(),
    "_validation": set(),
    "utils": set(),
    "metrics": {"_validation", "utils"},
    "base": {"_validation", "metrics"},
    "density": {"_validation", "utils"},
    "experiment": {"_validation", "utils"},
    "queries": {"_validation", "density", "utils"},
    "generative": {"utils"},
    "datasets": {"_validation", "density", "utils"},
    "disclosure": {"_validation", "density", "utils"},
    "attacks": _MODELS,
    "estimation": _MODELS | {"attacks"},
    "algorithm": {"_validation", "datasets", "metrics", "queries", "utils"},
    "report": _MODELS
    | {"attacks", "estimation", "experiment", "datasets", "generative", "disclosure", "algorithm"},
    "cli": {"report"},
    "__main__": {"cli"},
    "": {"_lazy", "_version"},
}
# every part may import these (the lazy-export helper of the ``__init__`` files, the version)
ANYONE = {"_lazy", "_version"}
# parts that may reach these only from inside functions (never at import time)
LAZY_ONLY = {"cli": {"report"}}


def _module_name(path):
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
PACKAGES = {name for name, p in MODULES.items() if p.name == "__init__.py"}


def _part(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _lazy_exports(package):
    """``{name: defining module}`` from the ``attach(__name__, {...})`` call of a package."""
    tree = ast.parse(MODULES[package].read_text(encoding="utf-8"))
    exports = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "attach"
            and len(node.args) >= 2
        ):
            for key, value in zip(node.args[1].keys, node.args[1].values, strict=True):
                target = importlib.util.resolve_name(key.value, package)
                for name in value.elts:
                    exports[name.value] = target
    return exports


PUBLIC_PACKAGES = sorted(p for p in PACKAGES if not any(s.startswith("_") for s in p.split(".")))
EXPORTS = {package: _lazy_exports(package) for package in PUBLIC_PACKAGES}


def _base_module(node, module):
    if not node.level:
        return node.module
    package = module if module in PACKAGES else module.rpartition(".")[0]
    return importlib.util.resolve_name("." * node.level + (node.module or ""), package)


def _imports(module):
    """``(line, target module, at import time, statement)`` for each import of ours."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    top_level = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        eager = id(node) in top_level
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    found.append((node.lineno, alias.name, eager, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom):
            base = _base_module(node, module)
            if base.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                # a name re-exported by a package is an import of the module defining it
                target = EXPORTS.get(base, {}).get(alias.name)
                if target is None:
                    sub = f"{base}.{alias.name}"
                    target = sub if sub in MODULES else base
                found.append((node.lineno, target, eager, f"from {base} import {alias.name}"))
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def _where(module, line):
    return f"{MODULES[module].relative_to(ROOT.parent)}:{line}"


def test_every_module_is_in_a_known_part():
    unknown = sorted({_part(m) for m in MODULES} - ALLOWED.keys())
    assert not unknown, (
        f"new part(s) {unknown} of {PACKAGE}: add them to ALLOWED in this test and to the "
        "import table of docs/design.md"
    )


def test_allowed_table_is_layered():
    """The rule table is itself acyclic, so following it can never close a cycle."""
    state = {}

    def visit(part, path):
        if state.get(part) == "done":
            return
        assert state.get(part) != "open", f"ALLOWED has a cycle: {' -> '.join(path)}"
        state[part] = "open"
        for dep in sorted(ALLOWED[part]):
            visit(dep, [*path, dep])
        state[part] = "done"

    for part in ALLOWED:
        visit(part, [part])


def test_layer_rules():
    violations = []
    for module, imports in GRAPH.items():
        part = _part(module)
        for line, target, eager, statement in imports:
            dep = _part(target)
            if dep == part or dep in ANYONE:
                continue
            if dep not in ALLOWED[part]:
                may = ", ".join(sorted(ALLOWED[part])) or "nothing of the package"
                violations.append(
                    f"{_where(module, line)}: `{statement}` makes {part or PACKAGE!r} depend "
                    f"on {dep or PACKAGE!r} ({target}); {part or PACKAGE!r} may import {may}"
                )
            elif eager and dep in LAZY_ONLY.get(part, ()):
                violations.append(
                    f"{_where(module, line)}: `{statement}` at module level; {part!r} must "
                    f"import {dep!r} inside functions (keeps `sklearn-mace --help` fast)"
                )
    assert not violations, "import rules of docs/design.md broken:\n" + "\n".join(violations)


def test_no_import_cycles():
    """No cycle between modules, function-level imports included (Tarjan's SCCs)."""
    edges = {m: sorted({t for _, t, _, _ in GRAPH[m] if t in MODULES and t != m}) for m in GRAPH}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def strongconnect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            strongconnect(v)
    messages = []
    for component in cycles:
        members = set(component)
        lines = [
            f"  {_where(m, line)}: `{statement}`"
            for m in component
            for line, target, _, statement in GRAPH[m]
            if target in members and target != m
        ]
        messages.append(f"cycle between {', '.join(component)}:\n" + "\n".join(lines))
    assert not cycles, "\n".join(messages)


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_public_init_is_lazy(package):
    """Public ``__init__`` files import only ``_lazy`` (and the leaf ``_version``): every
    name loads on first access."""
    leaves = {f"{PACKAGE}._lazy", f"{PACKAGE}._version"}
    eager = [
        f"{_where(package, line)}: `{statement}`"
        for line, target, is_eager, statement in GRAPH[package]
        if is_eager and target not in leaves
    ]
    assert not eager, (
        f"{package}/__init__.py imports at module level (list the name in its attach() "
        "table instead):\n" + "\n".join(eager)
    )


@pytest.mark.parametrize("package", sorted(EXPORTS))
def test_lazy_exports_resolve(package):
    """Each exported name is defined by the module its ``attach()`` table names."""
    module = importlib.import_module(package)
    assert sorted(module.__all__) == sorted(EXPORTS[package])
    for name, defining in EXPORTS[package].items():
        assert defining in MODULES, f"{package}: {name!r} points at missing {defining}"
        assert getattr(module, name) is getattr(importlib.import_module(defining), name)
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018


def test_the_checker_sees_cycles_and_rule_breaks():
    """The resolution the rules rest on: a package name leads to the defining module."""
    # attacks/_bayes.py imports GaussianKDE from the density facade: the edge is to _kde
    targets = {target for _, target, _, _ in GRAPH["sklearn_mace.attacks._bayes"]}
    assert "sklearn_mace.density._kde" in targets
    assert "sklearn_mace.density" not in targets
    # function-level imports count: the CLI reaches the kinds from inside build_parser
    cli = {(target, eager) for _, target, eager, _ in GRAPH["sklearn_mace.cli"]}
    assert ("sklearn_mace.report._kinds._registry", False) in cli


def test_the_tests_mirror_the_package():
    """``tests/<part>/`` for a subpackage's tests (``tests/report/model/`` for a kind of
    audit), ``tests/test_<module>.py`` for a top-level module's and the project's own:
    every test folder names a part of the package, and every subpackage with code has one."""
    tests = Path(__file__).resolve().parent
    folders = {
        p.relative_to(tests).as_posix()
        for p in tests.rglob("*")
        if p.is_dir() and any(p.glob("test_*.py"))
    }
    parts = {name.split(".", 1)[1].replace(".", "/") for name in PACKAGES if "." in name}
    kinds = {f"report/{p.name}" for p in (ROOT / "report" / "_kinds").iterdir() if p.is_dir()}
    assert folders <= parts | kinds, folders - parts - kinds
    public = {p for p in parts if "/" not in p and not p.startswith("_")}
    assert len(public) >= 10  # the discovery sees the subpackages, or this checks nothing
    assert public <= folders, public - folders  # every subpackage has its tests
    assert kinds <= folders, kinds - folders  # and every kind of audit
