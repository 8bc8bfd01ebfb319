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

The site serves its own maths: MathJax's startup, core, TeX input and
CommonHTML output components, its fonts and the TeX extensions it loads on
demand, about 1.3 MB, copied from the pinned sphinx-mathjax-offline package
(which holds all of MathJax, 24 MB, most of it never used by a page; it is a
source of files here, not a Sphinx extension). No CDN is reachable on these
machines or in CI.

The build refuses to include any file from outside the repository: a
{include}, {literalinclude}, raw or csv-table file, or an image whose real path
(symlinks resolved) is not under the repository fails the build naming the page
and the file.
"""

from __future__ import annotations

import os
import re
import shutil
from importlib import metadata
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.errors import SphinxError
from sphinx.transforms import SphinxTransform
from sphinx.util import logging as sphinx_logging

_logger = sphinx_logging.getLogger("site")
DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
FIGURES = REPO / "figures"

project = "Training notes"  # the site; each page has its own title
author = "the project's authors"
language = "en"

extensions = [
    "myst_parser",
    "sphinx.ext.mathjax",
    "sphinx_design",  # folded answers ({dropdown}) and tabs ({tab-set})
]

root_doc = "index"
source_suffix = {".md": "markdown"}

# Only the pages are documents: not the section scripts, not static files.
exclude_patterns = [
    "diagrams",
    "_static",
    "_templates",
    "**/README.md",
    ".*",
]

# Figures are numbered ("Figure 4") and {numref}`fig-...` refers to them.
numfig = True
numfig_format = {"figure": "Figure %s", "table": "Table %s", "code-block": "Listing %s"}
numfig_secnum_depth = 0  # one count per page (see _number_figures_per_page)

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
html_favicon = "_static/favicon.svg"  # else browsers ask for /favicon.ico and get a 404
html_show_sourcelink = False
html_show_copyright = False
html_copy_source = False
html_last_updated_fmt = None  # no dates in the output
# An image given a width links to the full-size file (see _link_figures_to_files).
html_scaled_image_link = True

# --- maths: MathJax served from the site itself -------------------------------
# MathJax's startup component loads only what the site needs: the TeX input
# (with the AMS macros), the CommonHTML output and the hidden MathML that
# screen readers read. No menu (400 kB of the combined components).
mathjax_path = "mathjax/startup.js"  # relative to _static/
mathjax3_config = {
    "loader": {"load": ["input/tex", "output/chtml", "a11y/assistive-mml"]},
    # The dollarmath extension already marks the maths, so MathJax only
    # typesets what Sphinx wraps in \( \) and \[ \] (its default delimiters).
    "chtml": {"matchFontHeight": False},
}
MATHJAX_PACKAGE = "sphinx-mathjax-offline"  # pinned in requirements.txt
# What the site ships of MathJax (about 1.3 MB of its 24 MB): the components
# above, the fonts the output draws with, and the TeX extensions its
# autoloader fetches on demand.
MATHJAX_FILES = (
    "startup.js", "core.js", "input/tex.js", "output/chtml.js", "output/chtml/fonts/tex.js",
    "a11y/assistive-mml.js",
) + tuple(f"input/tex/extensions/{name}.js" for name in (
    # The TeX packages MathJax's autoloader fetches when a formula uses one of
    # their macros (\boldsymbol, \cancel, \color, \coloneqq, ...); not
    # physics, bussproofs or mhchem, which no page of this kind needs.
    "action", "amscd", "bbox", "boldsymbol", "braket", "cancel", "cases", "centernot",
    "color", "colortbl", "empheq", "enclose", "extpfeil", "gensymb", "html", "mathtools",
    "unicode", "upgreek", "verb"))
MATHJAX_DIRS = ("output/chtml/fonts/woff-v2",)


class SiteError(SphinxError):
    category = "Site build error"


def _mathjax_source() -> Path:
    try:
        dist = metadata.distribution(MATHJAX_PACKAGE)
    except metadata.PackageNotFoundError as exc:
        raise SiteError(f"{MATHJAX_PACKAGE} is not installed: the site's maths comes from it "
                        "(pip install -r requirements.txt)") from exc
    root = Path(dist.locate_file("sphinx-mathjax-offline/static/mathjax"))
    if not (root / MATHJAX_FILES[0]).is_file():
        raise SiteError(f"{MATHJAX_PACKAGE} has no {MATHJAX_FILES[0]} under {root}")
    return root


def _copy_mathjax(app, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return
    source = _mathjax_source()
    target = Path(app.outdir) / "_static" / "mathjax"
    if target.exists():
        shutil.rmtree(target)
    for name in MATHJAX_FILES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, target / name)
    for folder in MATHJAX_DIRS:
        shutil.copytree(source / folder, target / folder)


# --- the pages: discovered, never named ---------------------------------------

REPORT_NAMES = ("robustness-report.md", "seed-report.md")  # preferred first
ROBUSTNESS_DOC = "robustness/index"


def site_pages() -> list[str]:
    """The site's pages: every Markdown file directly in docs/ but the index
    (and a README, which exclude_patterns keeps out of the site)."""
    return sorted(p.stem for p in DOCS.glob("*.md") if p.stem not in ("index", "README"))


def page_title(page: str) -> str:
    for line in (DOCS / f"{page}.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return page


def page_summary(page: str) -> str:
    """The first sentence of the page's opening paragraph (Markdown), or ""."""
    lines = (DOCS / f"{page}.md").read_text(encoding="utf-8").splitlines()
    start = next((k + 1 for k, line in enumerate(lines) if line.startswith("# ")), len(lines))
    paragraph: list[str] = []
    for line in lines[start:]:
        if not line.strip():
            if paragraph:
                break
            continue
        if not paragraph and not re.match(r"[A-Za-z*_\[]", line):
            return ""  # a list, a table, a directive: no plain opening paragraph
        paragraph.append(line.strip())
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", " ".join(paragraph), maxsplit=1)[0]


def report_file(page: str) -> Path | None:
    for name in REPORT_NAMES:
        path = FIGURES / page / name
        if path.is_file():
            return path
    return None


def _index_markdown() -> str:
    lines = []
    for page in site_pages():
        summary = page_summary(page)
        lines.append(f"- **{{doc}}`{page}`**{': ' + summary if summary else ''} "
                     f"({{ref}}`how robust its results are <robustness-{page}>`)")
    if not lines:
        lines.append("No pages yet.")
    toctree = ["```{toctree}", ":hidden:", ":maxdepth: 2", ""]
    toctree += site_pages() + [ROBUSTNESS_DOC, "```"]
    return "\n".join(lines + [""] + toctree) + "\n"


_HEADING_LINE = re.compile(r"^(#{1,5}) (.*)$", re.MULTILINE)


def _report_html(markdown: str) -> str:
    """A stretch of a report between two headings, as HTML. The reports are
    long tables of generated text: rendered straight to HTML (markdown-it, the
    parser under MyST), they cost the site build a few milliseconds instead of
    the seconds docutils takes over thousands of table cells. Links relative to
    the report's folder point at repository files, not at the site: they
    become their text."""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    html = html.replace("<table>", '<div class="table-wrapper"><table class="docutils report">')
    html = html.replace("</table>", "</table></div>")
    html = html.replace("<code>", '<code class="docutils literal notranslate">')
    html = re.sub(r'<a href="(?![a-z][a-z0-9+.-]*:|#)[^"]*">(.*?)</a>', r"\1", html, flags=re.S)
    return _curly_quotes(html)


def _curly_quotes(html: str) -> str:
    """Typographic quotes in the text of ``html`` (not in tags or code), as
    docutils' smart quotes give the rest of the site."""
    from docutils.utils.smartquotes import educateQuotes

    parts, in_code = [], False
    for piece in re.split(r"(<[^>]+>)", html):
        if piece.startswith("<"):
            in_code = piece.startswith("<code") or (in_code and not piece.startswith("</code"))
        elif not in_code and ('"' in piece or "'" in piece or "&quot;" in piece):
            # A space before: a quote opening the piece reads as opening.
            piece = educateQuotes(" " + piece.replace("&quot;", '"'), language="en")[1:]
        parts.append(piece)
    return "".join(parts)


def _report_markdown(page: str, path: Path) -> str:
    """The report under the page's heading: its own title dropped, its other
    headings one level down (MyST headings, so they get anchors and show in
    the page's contents), the text between them as raw HTML."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"\A\s*# [^\n]*\n", "", text)
    parts = []
    position = 0
    for match in list(_HEADING_LINE.finditer(text)) + [None]:
        body = text[position:match.start() if match else len(text)]
        if body.strip():
            parts.append("`````{raw} html\n" + _report_html(body).strip() + "\n`````\n")
        if match:
            level = min(len(match.group(1)) + 1, 6)
            parts.append(f"{'#' * level} {match.group(2)}\n")
            position = match.end()
    return "\n".join(parts)


def _robustness_markdown() -> str:
    parts = []
    for page in site_pages():
        parts.append(f"(robustness-{page})=\n## {page_title(page)}\n")
        parts.append(f"The page: {{doc}}`../{page}`.\n")
        path = report_file(page)
        if path is None:
            parts.append("No robustness report has been generated for this page yet "
                         "(`make seeds` writes it).\n")
        else:
            rel = path.relative_to(REPO).as_posix()
            parts.append(f"From `{rel}`.\n")
            parts.append(_report_markdown(page, path))
    return "\n".join(parts)


# A page source holds a fenced block ```{NAME}``` that is replaced by generated Markdown.
GENERATED_BLOCKS = {
    "index": ("page-index", _index_markdown),
    ROBUSTNESS_DOC: ("robustness-reports", _robustness_markdown),
}


def _generate(app, docname: str, source: list[str]) -> None:
    if docname not in GENERATED_BLOCKS:
        return
    name, make = GENERATED_BLOCKS[docname]
    block = re.compile(r"^```\{" + re.escape(name) + r"\}[^\n]*\n```[ \t]*$", re.MULTILINE)
    text, count = block.subn(lambda _m: make(), source[0])
    if count != 1:
        raise SiteError(f"{docname}.md must hold exactly one ```{{{name}}}``` block "
                        f"(found {count}); the site generates its content")
    source[0] = text


class RobustnessReportLinks(SphinxTransform):
    """A page links to its report file (figures/<page>/robustness-report.md,
    readable on GitHub); on the site the link leads to the report's section of
    the robustness page instead, whether or not the file exists yet."""

    default_priority = 100
    _target = re.compile(r"(?:^|/)figures/([^/]+)/(?:robustness|seed)-report(?:\.md)?(?:#.*)?$")

    def apply(self, **kwargs) -> None:
        for node in list(self.document.findall(addnodes.download_reference)) + list(
                self.document.findall(addnodes.pending_xref)):
            match = self._target.search(node.get("reftarget", ""))
            if not match:
                continue
            page = match.group(1)
            xref = addnodes.pending_xref(
                "", refdomain="std", reftype="ref", reftarget=f"robustness-{page}",
                refexplicit=True, refwarn=True, refdoc=self.env.docname)
            xref += nodes.inline("", node.astext())
            node.replace_self(xref)


# --- typography ---------------------------------------------------------------


class UnbrokenNumbers(SphinxTransform):
    """A number in scientific notation, "4.77 × 10⁻⁶", never breaks across
    lines (or inside a table cell): its spaces become no-break spaces. The
    page sources keep plain spaces; only the site's text changes."""

    default_priority = 700
    _pattern = re.compile(r"(\d) × (10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)")
    _skip = (nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.raw)

    def apply(self, **kwargs) -> None:
        for text in list(self.document.findall(nodes.Text)):
            if "×" not in text or isinstance(text.parent, self._skip):
                continue
            new = self._pattern.sub("\\1\u00a0×\u00a0\\2", str(text))
            if new != str(text):
                text.parent.replace(text, nodes.Text(new))


# --- figures ------------------------------------------------------------------


def _link_figures_to_files(app, doctree, docname) -> None:
    """Every figure links to its full-size SVG (a tap on a phone enlarges it):
    Sphinx links an image with a width to its file, so figures get one."""
    for figure in doctree.findall(nodes.figure):
        for image in figure.findall(nodes.image):
            if not isinstance(image.parent, nodes.reference):
                image.setdefault("width", "100%")


def _number_figures_per_page(app, env) -> list[str]:
    """Each page numbers its figures from 1 ("Figure 1" on every page), as a
    book's chapters would without chapter numbers; Sphinx would otherwise count
    on from one page to the next. Runs after Sphinx assigns the numbers, in
    document order, so a {numref} from any page gets the page's own number."""
    for figures in env.toc_fignumbers.values():
        for numbers in figures.values():
            for k, figure_id in enumerate(numbers, start=1):
                numbers[figure_id] = (k,)
    return []


# --- nothing from outside the repository --------------------------------------


def _inside_repo(path: Path) -> bool:
    try:
        path.resolve().relative_to(REPO)
    except ValueError:
        return False
    return True


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
    outside = sorted({p.resolve() for p in used if not _inside_repo(p)})
    if not outside:
        return
    lines = {}
    for node in doctree.findall(nodes.Element):
        source = node.get("source")
        if source and node.line and Path(source).resolve() in outside:
            lines.setdefault(Path(source).resolve(), node.line)
    for path in outside:
        _logger.error(
            "includes %s, which is outside the repository (%s): the site may include "
            "only the repository's own files", path, REPO,
            location=(docname, lines.get(path)), type="site", subtype="outside_include")
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
    app.connect("source-read", _generate)
    app.add_transform(RobustnessReportLinks)
    app.add_transform(UnbrokenNumbers)
    app.connect("doctree-read", _refuse_outside_files)
    app.connect("doctree-resolved", _link_figures_to_files)
    app.connect("env-get-updated", _number_figures_per_page, priority=900)
    app.connect("build-finished", _copy_mathjax)
    app.connect("build-finished", _fail_if_refused)
    app.connect("build-finished", _doctrees_out_of_the_site, priority=900)
    app.connect("build-finished", _no_source_maps)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
