"""Lazy re-exports for package ``__init__`` files (PEP 562), as scikit-learn and SciPy do.

A package lists its public names by the private module that defines them::

    __getattr__, __dir__, __all__ = attach(__name__, {"._kde": ["GaussianKDE"]})

``from sklearn_mace.density import GaussianKDE`` then imports ``density._kde`` on first
access only, so ``import sklearn_mace`` stays cheap: torch, skorch and pandas load when a
name that needs them is used, never at package import (``docs/design.md``, "Imports").
``submodules`` are subpackages reachable as attributes (``sklearn_mace.metrics``) before
they were imported.

This module imports nothing of the package: every ``__init__`` may depend on it.
"""

import importlib
import sys

__all__ = ["attach"]


def attach(package, exports, submodules=()):
    """``(__getattr__, __dir__, __all__)`` for the package named ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : dict of str to list of str
        Relative module name (``"._kde"``) to the public names it defines.
    submodules : iterable of str, default=()
        Names of subpackages or modules loaded when accessed as attributes.

    Returns
    -------
    __getattr__ : callable
        Module-level ``__getattr__`` (PEP 562): imports the defining module and caches the
        name in the package namespace.
    __dir__ : callable
        Module-level ``__dir__``: the package's globals, the exports and the submodules.
    __all__ : list of str
        The exported names, sorted.
    """
    where = {name: module for module, names in exports.items() for name in names}
    if len(where) != sum(len(names) for names in exports.values()):
        raise ValueError(f"{package}: a name is exported by two modules.")
    submodules = frozenset(submodules)

    def __getattr__(name):
        if name in where:
            value = getattr(importlib.import_module(where[name], package), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | where.keys() | submodules)

    return __getattr__, __dir__, sorted(where)
