"""The site's own script (docs/_static/site.js) loads from each page's
<head>, async, instead of at the end of <body> where furo puts the theme's
scripts: on a slow link the theme toggle and the figure zoom work as soon as
their own HTML has arrived, not once the whole page has (site review round 3,
L10: at 400 kbit/s both were missing for the first 8 s)."""

from __future__ import annotations

import hashlib
from pathlib import Path

SCRIPT = "site.js"


def script_tag(app, context) -> str:
    """The <script> element: relative to the page, with the file's checksum
    as its version, so a browser never runs a stale copy after a change."""
    source = Path(app.confdir) / "_static" / SCRIPT
    version = hashlib.sha256(source.read_bytes()).hexdigest()[:8]
    src = context["pathto"](f"_static/{SCRIPT}", 1)
    return f'<script async src="{src}?v={version}"></script>'


def add_to_head(app, pagename, templatename, context, doctree) -> None:
    context["metatags"] = context.get("metatags", "") + "\n" + script_tag(app, context)


def setup(app):
    app.connect("html-page-context", add_to_head)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
