"""Numpydoc validation of every public docstring (issue #11, item 4).

The public API is found at run time: every public subpackage or module of ``sklearn_mace``
(``pkgutil``, skipping ``_private`` modules, ``utils`` and modules without ``__all__``), every
name in its ``__all__`` that is a class or a function, and the public methods and properties
of each class that are defined in ``sklearn_mace`` (methods inherited from scikit-learn are
scikit-learn's to document). Each object is one test case, so a failure names it.

The error codes that fail the test, each with why a user cares:

* GL06 -- an unknown section title (a typo such as ``Return``) hides that section.
* GL07 -- sections out of order render in a surprising order.
* GL08 -- no docstring: ``help(obj)`` tells the user nothing.
* SS01 -- no one-line summary: autosummary tables and ``help`` show nothing.
* SS02 -- summary does not start with a capital letter (it is a sentence in tables).
* SS03 -- summary does not end with a period (it is a sentence in tables).
* SS04 -- summary starts with whitespace (renders as a block quote).
* PR01 -- a parameter of the signature is not documented.
* PR02 -- a documented parameter is not in the signature (stale docs after a rename).
* PR03 -- parameters documented in another order than the signature's.
* PR04 -- a parameter has no type: the user cannot tell what to pass.
* PR06 -- a type spelled ``integer``/``boolean``/``string`` instead of ``int``/``bool``/``str``.
* PR07 -- a parameter has no description.
* PR10 -- ``name: type`` without the space before the colon is not parsed as a parameter.
* RT01 -- a function or method that returns something has no Returns section.
* RT03 -- a return value has no description.
* YD01 -- a generator has no Yields section.
* EX01 -- a public class or function has no Examples section (methods are exempt: the class
  example shows them). The examples run as doctests under ``--doctest-modules``.

Deprecated objects are left out, with their methods: they leave in the next release, so
their docstrings are not brought up to the standard. An object is deprecated when
``sklearn.utils.deprecated`` wraps it (older scikit-learn also starts its docstring with
``DEPRECATED``) or when it is defined in a ``_deprecated`` module (the base class
``SyntheticDataAttack`` warns on subclassing instead of being wrapped).

Result records (dataclasses such as ``EpsilonAudit``) and exceptions are made by the library,
not by the user: their fields are checked as an Attributes section instead of PR01/PR02 (every
field documented, nothing documented that is not a field), and they need no Examples of their
own -- the function that returns or raises them shows them.

Codes left out, and why: ES01 (extended summary) and SA01 (See Also) are optional for small
helpers; SS05 (infinitive verb) misfires on summaries of classes and properties; SS06 (one-line
summary) and PR08/PR09/RT04/RT05 (capitalisation and full stops inside descriptions) are
cosmetic; GL01/GL02/GL03 are layout already fixed by ``ruff format``.
"""

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

validate = pytest.importorskip("numpydoc.validate").validate
NumpyDocString = pytest.importorskip("numpydoc.docscrape").NumpyDocString

import sklearn_mace  # noqa: E402

CHECKED_CODES = {
    "GL06",
    "GL07",
    "GL08",
    "SS01",
    "SS02",
    "SS03",
    "SS04",
    "PR01",
    "PR02",
    "PR03",
    "PR04",
    "PR06",
    "PR07",
    "PR10",
    "RT01",
    "RT03",
    "YD01",
    "EX01",
}

# Error codes that apply only to some kinds of object.
_NOT_FOR_METHODS = {"EX01"}
_NOT_FOR_PROPERTIES = {"EX01", "RT01", "RT03"}
_NOT_FOR_RECORDS = {"EX01", "PR01", "PR02", "PR03"}

_SKIPPED_MODULES = {"utils", "cli", "__main__"}


def _public_modules():
    """Return the public modules of ``sklearn_mace`` that declare ``__all__``."""
    modules = [sklearn_mace]
    for info in pkgutil.walk_packages(sklearn_mace.__path__, prefix="sklearn_mace."):
        parts = info.name.split(".")[1:]
        if any(part.startswith("_") or part in _SKIPPED_MODULES for part in parts):
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            modules.append(module)
    return modules


def _is_deprecated(obj):
    """Whether ``obj`` is deprecated (left out: it leaves in the next release)."""
    if (inspect.getdoc(obj) or "").startswith("DEPRECATED"):
        return True
    if getattr(obj, "__module__", "").rpartition(".")[2] == "_deprecated":
        return True
    # sklearn.utils.deprecated wraps a function, or a class's __new__, in a closure that
    # holds the message "... is deprecated"
    wrapper = vars(obj).get("__new__") if inspect.isclass(obj) else obj
    for cell in getattr(wrapper, "__closure__", None) or ():
        try:
            if isinstance(cell.cell_contents, str) and " is deprecated" in cell.cell_contents:
                return True
        except ValueError:  # an empty cell
            continue
    return False


def _own_members(cls):
    """Yield ``(name, kind)`` for the public methods and properties ``sklearn_mace`` defines."""
    seen = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("sklearn_mace"):
            continue
        for name, attr in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if isinstance(attr, property):
                yield name, "property"
            elif inspect.isfunction(attr) or isinstance(attr, classmethod | staticmethod):
                yield name, "method"


def _public_objects():
    """Return ``{import path: kind}`` for every public class, function, method and property.

    An object exported from several modules is named once, by the deepest module that
    exports it (``sklearn_mace.attacks.BTTAttack`` rather than ``sklearn_mace.BTTAttack``).
    An inherited method is named once, by the first public class that has it.
    """
    found = {}
    # deepest module first, so that a re-export does not name the object
    for module in sorted(_public_modules(), key=lambda m: -m.__name__.count(".")):
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if id(obj) in found or _is_deprecated(obj):
                continue
            path = f"{module.__name__}.{name}"
            if inspect.isfunction(obj):
                kind = "function"
            elif dataclasses.is_dataclass(obj) or issubclass(obj, Exception):
                kind = "record"
            else:
                kind = "class"
            found[id(obj)] = (path, kind)
            if kind != "function":
                for member, member_kind in _own_members(obj):
                    attr = inspect.getattr_static(obj, member)
                    target = attr.fget if isinstance(attr, property) else attr
                    key = id(target)
                    if key not in found and not _is_deprecated(target):
                        found[key] = (f"{path}.{member}", member_kind)
    return dict(sorted(found.values()))


PUBLIC_OBJECTS = _public_objects()


def _record_field_errors(path):
    """Check that the Attributes section of a dataclass documents exactly its fields."""
    module, _, name = path.rpartition(".")
    record = getattr(importlib.import_module(module), name)
    if not dataclasses.is_dataclass(record):
        return []
    documented = set()
    for entry in NumpyDocString(inspect.getdoc(record) or "")["Attributes"]:
        documented.update(part.strip() for part in entry.name.split(","))
    fields = {field.name for field in dataclasses.fields(record)}
    errors = []
    if fields - documented:
        errors.append(f"AT01: fields {sorted(fields - documented)} not in Attributes")
    if documented - fields:
        errors.append(f"AT02: Attributes {sorted(documented - fields)} are not fields")
    return errors


def _errors(path, kind):
    skipped = {
        "method": _NOT_FOR_METHODS,
        "property": _NOT_FOR_PROPERTIES,
        "record": _NOT_FOR_RECORDS,
    }.get(kind, set())
    result = validate(path)
    errors = [
        f"{code}: {message}"
        for code, message in result["errors"]
        if code in CHECKED_CODES - skipped
    ]
    if kind == "record":
        errors += _record_field_errors(path)
    return errors


def test_public_api_is_found():
    """The discovery must see the API, or the parametrized test below checks nothing."""
    assert len(PUBLIC_OBJECTS) > 100
    assert PUBLIC_OBJECTS["sklearn_mace.metrics.membership_advantage"] == "function"
    assert PUBLIC_OBJECTS["sklearn_mace.attacks.BTTAttack"] == "class"
    assert PUBLIC_OBJECTS["sklearn_mace.attacks.BTTAttack.fit"] == "method"
    assert PUBLIC_OBJECTS["sklearn_mace.attacks.ThresholdAttack"] == "class"
    # deprecated names (wrapped, or defined in a _deprecated module) and their methods
    for path in (
        "sklearn_mace.attacks.GANLeaksAttack",
        "sklearn_mace.attacks.GANLeaksAttack.score",
        "sklearn_mace.attacks.SyntheticDataAttack",
        "sklearn_mace.attacks.stack_synthetic_reference",
    ):
        assert path not in PUBLIC_OBJECTS


def test_deprecation_is_detected():
    """The wrapper of ``sklearn.utils.deprecated`` is recognised, not just the module name."""
    from sklearn.utils import deprecated

    @deprecated("gone soon")
    def old():
        """Old."""

    @deprecated("gone soon")
    class Old:
        """Old."""

    assert _is_deprecated(old) and _is_deprecated(Old)
    assert not _is_deprecated(sklearn_mace.attacks.ThresholdAttack)


@pytest.mark.parametrize("path", sorted(PUBLIC_OBJECTS))
def test_docstring(path):
    errors = _errors(path, PUBLIC_OBJECTS[path])
    assert not errors, f"{path}:\n" + "\n".join(errors)
