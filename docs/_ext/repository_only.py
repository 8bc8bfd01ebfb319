"""The site holds the repository's own files and nothing else: a page that
includes a file from outside the repository (a {include}, {literalinclude},
raw or csv-table file, or an image whose real path, symlinks resolved, is
not under it) fails the build naming the page and the file; the theme's
source maps and Sphinx's doctree cache are not left in the site."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util import logging as sphinx_logging

from site_ext.pages import REPO, inside_repo

_logger = sphinx_logging.getLogger("site")


def _refuse_outside_files(app, doctree) -> None:
    """A page that reads a file from outside the repository is an error: one
    line per file, with the page (and line, where known), and the build fails
    (with or without -W). The page's content is dropped, so nothing of the
    file reaches the site."""
    docname = app.env.docname
    srcdir = Path(app.srcdir)
    used: set[Path] = {Path(app.env.doc2path(docname))}  # a page may be a symlink itself
    deps = getattr(doctree.settings, "record_dependencies", None)
    if deps is not None:
        used.update(Path(os.getcwd(), d) for d in deps.list)
    used.update(srcdir / d for d in app.env.dependencies.get(docname, ()))
    for image in doctree.findall(nodes.image):
        uri = image.get("uri", "")
        if "://" not in uri and not uri.startswith("data:"):
            used.add(srcdir / uri)
    outside = sorted({p.resolve() for p in used if not inside_repo(p)})
    if not outside:
        return
    lines = {}
    for node in doctree.findall(nodes.Element):
        source = node.get("source")
        if source and node.line and Path(source).resolve() in outside:
            lines.setdefault(Path(source).resolve(), node.line)
    for path in outside:
        _logger.error(
            "includes %s, which is outside the repository (%s): the site may include only the repository's own files",
            path,
            REPO,
            location=(docname, lines.get(path)),
            type="site",
            subtype="outside_include",
        )
    doctree.children = []
    doctree += nodes.paragraph(text="(This page includes files from outside the repository.)")
    app.env._site_refused = True


def _no_source_maps(app, exc) -> None:
    """The theme's source maps (110 kB) serve a developer's browser tools, not a reader."""
    if exc is None and app.builder.format == "html":
        for path in (Path(app.outdir) / "_static").rglob("*.map"):
            path.unlink()


def _doctrees_out_of_the_site(app, exc) -> None:
    """Sphinx keeps its doctree cache in <site>/.doctrees unless told otherwise
    (-d): 2 MB of pickles that are not the site. Builds here read every page
    afresh (-E), so the cache is not needed afterwards."""
    doctrees, outdir = Path(app.doctreedir).resolve(), Path(app.outdir).resolve()
    if exc is None and doctrees.is_relative_to(outdir) and doctrees != outdir:
        shutil.rmtree(doctrees, ignore_errors=True)


def _fail_if_refused(app, exc) -> None:
    if exc is None and getattr(app.env, "_site_refused", False):
        app.statuscode = 1


def setup(app):
    app.connect("doctree-read", _refuse_outside_files)
    app.connect("build-finished", _fail_if_refused)
    app.connect("build-finished", _doctrees_out_of_the_site, priority=900)
    app.connect("build-finished", _no_source_maps)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
