"""MathJax served by the site itself, so that formulas render offline (issue #27).

``sphinx.ext.mathjax`` loads MathJax from a CDN by default: on a machine without network —
where a privacy team often reads these pages — the guide's formulas show as TeX source. This
extension takes the MathJax 3 files that the PyPI package ``sphinx-mathjax-offline`` ships
(installed by the ``docs`` and ``dev`` extras of ``pyproject.toml``, so ``make docs`` has
them), copies them into the site's ``_static/mathjax`` and points ``mathjax_path`` at the
local ``tex-chtml.js`` (its fonts and TeX extensions load from beside it). Nothing is fetched
at build time or at read time; ``tests/test_docs.py`` builds a page with a formula and checks
that no page references a remote script.
"""

import importlib.util
from pathlib import Path

from sphinx.errors import ExtensionError

PACKAGE = "sphinx-mathjax-offline"
ENTRY = "mathjax/tex-chtml.js"


def packaged_mathjax():
    """The folder that holds ``mathjax/`` in the installed package (an error naming it if none)."""
    spec = importlib.util.find_spec(PACKAGE)
    root = Path(spec.origin).parent / "static" if spec and spec.origin else None
    if root is None or not (root / ENTRY).is_file():
        raise ExtensionError(
            f"the documentation serves MathJax itself and needs the package {PACKAGE} "
            "(pip install -e '.[docs]', or make docs, which installs the dev extra)."
        )
    return root


def _serve_locally(app, config):
    config.html_static_path = [*config.html_static_path, str(packaged_mathjax())]
    config.mathjax_path = ENTRY


def setup(app):
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _serve_locally)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
