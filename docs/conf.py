"""Sphinx configuration of the gradhub documentation.

Build (warnings are errors)::

    sphinx-build -W -b html docs docs/_build/html
    sphinx-build -W -b doctest docs docs/_build/doctest
"""

from __future__ import annotations

import doctest
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# gradhub itself is installed (pip install -e .); the example plugins are importable from here so
# that the tutorials' doctests can load them in-process.
for example in ("gradhub-mish", "gradhub-toy-device"):
    sys.path.insert(0, str(HERE / "examples" / example))
# doctests print plugin warnings, never pick up the developer's plugin switches
for var in (
    "GRADHUB_PLUGINS",
    "GRADHUB_BLOCK_PLUGINS",
    "GRADHUB_DISABLE_PLUGIN_AUTOLOAD",
    "GRADHUB_STRICT_PLUGINS",
):
    os.environ.pop(var, None)

import gradhub  # noqa: E402

project = "gradhub"
author = "the gradhub developers"
copyright = "2025, the gradhub developers"
release = gradhub.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "examples/*/README.md", "examples/*/build", "**/*.egg-info"]

# -- MyST (Markdown) ---------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3

# -- autodoc -----------------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}

# -- doctest -----------------------------------------------------------------------------------
# Every ``{doctest}`` block of the pages, and the ``>>>`` blocks of the docstrings that autodoc
# pulls in, run with ``sphinx-build -b doctest``. Each page starts from a freshly loaded registry.
# The setup imports under private names only, so a page that uses ``np`` or ``gh`` without
# importing them fails here, as it would for a reader who copies its blocks.
doctest_global_setup = """
import gradhub as _gh_doc
import gradhub.plugins as _gh_doc_plugins
_gh_doc_plugins.reset()
_gh_doc.clear_parameters()
"""
doctest_global_cleanup = """
_gh_doc_plugins.reset()
_gh_doc.clear_parameters()
"""
doctest_default_flags = (
    doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.DONT_ACCEPT_TRUE_FOR_1
)

# -- HTML --------------------------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"gradhub {release}"
html_static_path: list[str] = []
