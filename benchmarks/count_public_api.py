"""Count the public names of sklearn-mace: ``__all__`` of every public namespace.

A namespace is public when no part of its dotted name starts with an underscore (the
package, its subpackages and modules such as ``base`` or ``experiment``). Prints one row per
namespace and the totals; run from the repository root::

    python benchmarks/count_public_api.py          # this checkout
    PYTHONPATH=/path/to/other/checkout python benchmarks/count_public_api.py

Importing every namespace loads torch and pandas: this is a count, not a timing.
"""

import importlib
import pkgutil

import sklearn_mace


def public_namespaces(package=sklearn_mace):
    """Names of the importable public modules of ``package`` (itself included)."""
    names = [package.__name__]
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        parts = info.name.split(".")[1:]
        if any(part.startswith("_") for part in parts):
            continue
        names.append(info.name)
    return sorted(names)


def public_names(package=sklearn_mace):
    """``{namespace: sorted __all__}`` for every public namespace that declares ``__all__``."""
    table = {}
    for name in public_namespaces(package):
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", None)
        if exported is not None:
            table[name] = sorted(exported)
    return table


def main():
    table = public_names()
    width = max(len(name) for name in table)
    print(f"{'namespace':<{width}}  names")
    for name, exported in table.items():
        print(f"{name:<{width}}  {len(exported):5d}")
    distinct = {obj for exported in table.values() for obj in exported}
    total = sum(len(exported) for exported in table.values())
    print(f"{'total':<{width}}  {total:5d}  in {len(table)} namespaces, {len(distinct)} distinct")
    print(f"(counted in {sklearn_mace.__file__})")


if __name__ == "__main__":
    main()
