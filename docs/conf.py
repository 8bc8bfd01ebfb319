"""Sphinx configuration for the documentation site (`make docs`).

Build (warnings are errors, so a broken figure path or link fails the build):

    .venv/bin/python -m sphinx -E -W --keep-going -b html docs build/site

-E (read every page afresh) matters: an incremental build skips unchanged pages,
so a broken `#anchor` that failed one build would pass the next.

The pages are plain Markdown (MyST), readable on GitHub as they stand. Figures
live outside this directory, in ../figures/<page>/, and pages embed them as
`![alt](../figures/<page>/<file>.svg)`; Sphinx resolves such paths relative to
the page and copies each image into the site's _images/ folder.
"""

project = "Training notes"  # the site; each page has its own title
author = "the project's authors"
language = "en"

extensions = [
    "myst_parser",
    "sphinx.ext.mathjax",
    # Serves MathJax from the site itself (no CDN): the site renders its maths
    # offline, and the browser test sees no failed network request.
    "sphinx-mathjax-offline",
]

root_doc = "index"
source_suffix = {".md": "markdown"}

# Only the pages are documents: not the section scripts, not static files.
exclude_patterns = [
    "diagrams",
    "_static",
    "**/README.md",
    ".*",
]

# --- MyST -------------------------------------------------------------------
myst_enable_extensions = [
    "dollarmath",  # $...$ inline, $$...$$ display
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
html_favicon = "_static/favicon.svg"  # else browsers ask for /favicon.ico and get a 404
html_show_sourcelink = False
html_show_copyright = False
html_copy_source = False
html_last_updated_fmt = None  # no dates in the output

# MathJax 3 configuration: the dollarmath extension already marks the maths,
# so MathJax only typesets what Sphinx wraps in \( \) and \[ \].
mathjax3_config = {
    "options": {"enableMenu": False},
}
