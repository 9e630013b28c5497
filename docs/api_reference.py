"""The API reference, generated from the public names (``__all__``) at build time.

``conf.py`` calls :func:`write_api_page`, which writes ``generated/api.rst``: one section per
public module, one autosummary entry (so one page) per public name. A name re-exported by
several modules (``sklearn_mace.BTTAttack`` is ``sklearn_mace.attacks.BTTAttack``) has one page,
under the deepest module that exports it, and the top-level section links to it.
``tests/test_docs.py`` checks that every public name has its entry.

Nothing is listed by hand: a name added to an ``__all__`` gets its page on the next build.
"""

import importlib
import inspect
import pkgutil
from pathlib import Path

# private modules, helpers and the CLI have no pages (as in tests/test_docstrings.py); nor has
# ``sklearn_mace.base``: its base classes and validators (``AttackerMixin``, ``check_prior``,
# ``resolve_prior``) are for writing new attackers, importable without a stability promise
# (docs/design.md, "Public surface": base classes stay out of the public surface)
SKIPPED_MODULES = {"utils", "cli", "__main__", "base"}


def public_modules(package="sklearn_mace"):
    """Return the package and its public modules that declare ``__all__``, in name order."""
    root = importlib.import_module(package)
    modules = [root]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        parts = info.name.split(".")[1:]
        if any(part.startswith("_") or part in SKIPPED_MODULES for part in parts):
            continue
        module = importlib.import_module(info.name)
        if getattr(module, "__all__", None):
            modules.append(module)
    return sorted(modules, key=lambda module: module.__name__)


def canonical_paths(package="sklearn_mace"):
    """Return ``{id(obj): "module.name"}``: each public object named by its deepest exporter."""
    found = {}
    for module in sorted(public_modules(package), key=lambda m: -m.__name__.count(".")):
        for name in module.__all__:
            obj = getattr(module, name)
            found.setdefault(id(obj), f"{module.__name__}.{name}")
    return found


def _kind(obj):
    if inspect.isclass(obj):
        if issubclass(obj, Warning):
            return "warning"
        if issubclass(obj, Exception):
            return "exception"
        return "class"
    return "function"


def api_entries(package="sklearn_mace"):
    """Return ``{module name: [(name, canonical path, kind), ...]}`` for every public module."""
    canonical = canonical_paths(package)
    entries = {}
    for module in public_modules(package):
        rows = []
        for name in sorted(module.__all__, key=str.lower):
            obj = getattr(module, name)
            rows.append((name, canonical[id(obj)], _kind(obj)))
        entries[module.__name__] = rows
    return entries


def _summary(module):
    """The first paragraph of a module's docstring, on one line."""
    doc = inspect.getdoc(module) or ""
    return " ".join(doc.split("\n\n")[0].split())


def api_page(package="sklearn_mace"):
    """Return the reStructuredText of the API reference."""
    lines = [
        ".. _api_ref:",
        "",
        "API reference",
        "=============",
        "",
        "Every public name of ``sklearn_mace``, one page each, generated from the numpydoc",
        "docstrings. The :ref:`user guide <user_guide>` explains the methods; the",
        ":ref:`gallery <examples>` shows them at work.",
        "",
    ]
    entries = api_entries(package)
    for module_name, rows in entries.items():
        module = importlib.import_module(module_name)
        lines += [f"``{module_name}``", "-" * (len(module_name) + 4), ""]
        lines += [f".. currentmodule:: {module_name}", ""]
        summary = _summary(module)
        if summary:
            lines += [summary, ""]
        own = [row for row in rows if row[1] == f"{module_name}.{row[0]}"]
        reexported = [row for row in rows if row[1] != f"{module_name}.{row[0]}"]
        for kinds, title in (
            (("class",), "Classes"),
            (("function",), "Functions"),
            (("warning", "exception"), "Warnings and errors"),
        ):
            group = [row for row in own if row[2] in kinds]
            if not group:
                continue
            # the page templates are _templates/autosummary/{class,function}.rst, which
            # autosummary picks by the object's type
            lines += [
                f".. rubric:: {title}",
                "",
                ".. autosummary::",
                "   :toctree: .",
                "   :nosignatures:",
                "",
            ]
            lines += [f"   {name}" for name, _, _ in group]
            lines.append("")
        if reexported:
            links = [
                f":{'func' if kind == 'function' else 'class'}:`{name} <{path}>`"
                for name, path, kind in reexported
            ]
            lines += [
                ".. rubric:: Also importable from here",
                "",
                "Each is documented once, under the module that defines its family: "
                + ", ".join(links)
                + ".",
                "",
            ]
    return "\n".join(lines)


def write_api_page(folder, package="sklearn_mace"):
    """Write ``api.rst`` into ``folder`` (created), only if its text changed; return the path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "api.rst"
    text = api_page(package)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path
