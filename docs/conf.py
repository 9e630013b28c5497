"""Sphinx configuration of the sklearn-mace documentation (``make docs``).

The API reference is generated from ``__all__`` (``api_reference.py``), the examples run as a
sphinx-gallery gallery, and the demo's cards are audited at build time
(``demo_cards.py``), so every number the site shows comes from the code it documents.
``SKLEARN_MACE_EXAMPLES_QUICK=1`` (``make docs``, CI) runs the examples in their reduced mode.
"""

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this tree's package, not an installed one

from api_reference import write_api_page  # noqa: E402

import sklearn_mace  # noqa: E402

project = "sklearn-mace"
author = "the sklearn-mace developers"
copyright = "2026, the sklearn-mace developers"
release = sklearn_mace.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "offline_math",  # MathJax served from _static, never from a CDN (docs/offline_math.py)
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "demo_cards",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**/sg_execution_times.rst"]
templates_path = ["_templates"]
default_role = "literal"

# -- API reference ---------------------------------------------------------------------------
write_api_page(HERE / "generated")
autosummary_generate = True
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- Markdown (CHANGELOG.md, design.md) ------------------------------------------------------
myst_heading_anchors = 3

# -- Gallery ---------------------------------------------------------------------------------
# the examples' progress bars (the GANs' epochs) would fill the gallery's printed output
os.environ.setdefault("TQDM_DISABLE", "1")
# SKLEARN_MACE_DOCS_PLOT_GALLERY=0 (``make docs-noplot``) builds the pages without running the
# examples, as scikit-learn's ``make html-noplot`` does
PLOT_GALLERY = os.environ.get("SKLEARN_MACE_DOCS_PLOT_GALLERY", "1") not in ("", "0")
sphinx_gallery_conf = {
    "plot_gallery": PLOT_GALLERY,
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py|/_",
    "backreferences_dir": "generated/backreferences",
    "doc_module": ("sklearn_mace",),
    "reference_url": {"sklearn_mace": None},
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "min_reported_time": 5,
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "show_memory": False,
    # the execution-times page loads jQuery and DataTables from CDNs: the site stays offline
    "write_computation_times": False,
}

# -- HTML ------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sklearn-mace {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": True,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}


# -- Docstring hooks -------------------------------------------------------------------------
_SHAPE = re.compile(r"of shape \(([^)]*)\)")


def _escape_shape_names(app, what, name, obj, options, lines):
    """``of shape (n_samples, n_features_in_)``: a name ending in ``_`` is an RST link.

    The attribute names that shapes refer to (``n_features_in_``) would be read as links
    to undefined targets; their trailing underscore is escaped.
    """
    for i, line in enumerate(lines):
        lines[i] = _SHAPE.sub(
            lambda m: "of shape (" + re.sub(r"(\w)_\b", r"\1\\_", m.group(1)) + ")", line
        )


def _skip_metadata_requests(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_<method>_request`` (metadata routing).

    scikit-learn adds them to every estimator; their docstrings link scikit-learn's own
    glossary, and they are documented there.
    """
    if re.fullmatch(r"set_\w+_request", name):
        return True
    return None


def setup(app):
    app.connect("autodoc-process-docstring", _escape_shape_names)
    app.connect("autodoc-skip-member", _skip_metadata_requests)
