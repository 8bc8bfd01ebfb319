"""Sphinx configuration for the documentation site (`make docs`).

Build (warnings are errors, so a broken figure path or link fails the build):

    .venv/bin/python -m sphinx -E -W --keep-going -b html docs build/site

-E (read every page afresh) matters: an incremental build skips unchanged pages,
so a broken `#anchor` that failed one build would pass the next.

The pages are Markdown (MyST), readable on GitHub as they stand. Figures live
outside this directory, in ../figures/<page>/; pages embed them as numbered,
captioned MyST figures, and Sphinx copies each image into the site's _images/.

Nothing here names a page. The site's pages are the Markdown files directly in
docs/ (besides index.md): the index lists each one with a link to its
robustness report, and robustness/index.md shows every page's report
(figures/<page>/robustness-report.md, or the older seed-report.md), or says it
has not been generated yet.

What the site adds to Sphinx is in docs/_ext/, one extension a concern,
each with its own setup(app): katex_node (KaTeX's server ends with the
build), generated_pages (the index and the robustness page), typography,
figures, code_listings, page_facts (the front-matter box) and
repository_only (no file from outside the repository). This file holds the
configuration and loads them.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent


def _load_site_extensions():
    """docs/_ext as the package ``site_ext``, registered by its location (it
    is not installed, and the import path is left alone): Sphinx then imports
    each extension by name from it."""
    if "site_ext" in sys.modules:
        return sys.modules["site_ext"]
    spec = importlib.util.spec_from_file_location(
        "site_ext", DOCS / "_ext" / "__init__.py", submodule_search_locations=[str(DOCS / "_ext")]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules["site_ext"] = package
    spec.loader.exec_module(package)
    return package


_load_site_extensions()

# What the tests and `make pdf` ask of the site: which pages it has.
from site_ext.pages import (  # noqa: E402, F401  (re-exported)
    ROBUSTNESS_DOC,
    duration,
    hands_on,
    reading_minutes,
    report_file,
    site_pages,
)

project = "Training notes"  # the site; each page has its own title
author = "the project's authors"
language = "en"

extensions = [
    "myst_parser",
    "sphinxcontrib.katex",  # the maths typeset when the site is built (see below)
    "site_ext.katex_node",  # its Node.js server ends with the build
    "sphinx_design",  # folded answers ({dropdown}) and tabs ({tab-set})
    "sphinx_copybutton",  # a copy button on every code block
    "site_ext.generated_pages",
    "site_ext.typography",
    "site_ext.figures",
    "site_ext.code_listings",
    "site_ext.page_facts",
    "site_ext.repository_only",
    "site_ext.page_package",  # the page's code as a package file beside each notebook
    "site_ext.early_script",  # site.js from the page's <head>, so its controls work while a page loads
]
# The button copies code, not the prompts or printed output of a console session.
copybutton_exclude = ".linenos, .gp, .go"

root_doc = "index"
source_suffix = {".md": "markdown"}

# Only the pages are documents: not the section scripts, not static files.
exclude_patterns = [
    "diagrams",
    "_ext",
    "_static",
    "_templates",
    "**/README.md",
    ".*",
]

# Figures are numbered ("Figure 4") and {numref}`fig-...` refers to them.
numfig = True
numfig_format = {"figure": "Figure %s", "table": "Table %s", "code-block": "Listing %s"}
numfig_secnum_depth = 0  # one count per page (see site_ext.figures)

# --- MyST -------------------------------------------------------------------
myst_enable_extensions = [
    "dollarmath",  # $...$ inline, $$...$$ display
    "amsmath",  # \begin{align} ... \end{align} blocks
    "colon_fence",  # :::{figure} ... ::: (the body stays Markdown on GitHub)
]
# Headings down to ### get GitHub-style anchors, so a contents list written as
# `[2. Layer ...](#2-layer-normalisation-and-rms-normalisation)` resolves both
# on GitHub and here (an unresolved `#slug` is a warning, hence an error).
myst_heading_anchors = 3
myst_heading_slug_func = "github"

# --- HTML -------------------------------------------------------------------
html_theme = "furo"
html_title = project
html_static_path = ["_static"]
html_css_files = ["site.css"]
# site.js (the figure zoom, folded answers opened for print, the theme toggle
# while the page loads) is added to each page's <head> by site_ext.early_script.
html_favicon = "_static/favicon.svg"  # else browsers ask for /favicon.ico and get a 404
html_show_sourcelink = False
html_show_copyright = False
html_copy_source = False
html_last_updated_fmt = None  # no dates in the output
# An image given a width links to the full-size file (see site_ext.figures).
html_scaled_image_link = True

# --- maths: typeset when the site is built -----------------------------------
# sphinxcontrib.katex runs KaTeX (its bundled 0.16.22) under Node.js for every
# formula as the site is built, so a page's HTML already holds the typeset
# maths, with hidden MathML for screen readers: nothing to wait for on a slow
# link, with scripts off, or in the PDF. The page needs only KaTeX's
# stylesheet and fonts, which the site serves (docs/_static/katex/, MIT).
katex_prerender = True
katex_css_path = "katex/katex.min.css"  # relative to _static/
