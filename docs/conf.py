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
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.directives.code import LiteralInclude
from sphinx.errors import SphinxError
from sphinx.transforms import SphinxTransform
from sphinx.util import logging as sphinx_logging
from sphinx.util.docutils import SphinxDirective

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
    "sphinx_copybutton",  # a copy button on every code block
]
# The button copies code, not the prompts or printed output of a console session.
copybutton_exclude = ".linenos, .gp, .go"

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
# site.js: maths hidden until typeset, the figure zoom, folded answers opened
# for print. In <head> and not deferred, so a page is marked before it paints.
html_js_files = ["site.js"]
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
    # Formulas at the text's x-height, so inline symbols (λ_max, ε) do not
    # look a size smaller than the words around them.
    "chtml": {"matchFontHeight": True},
}
MATHJAX_PACKAGE = "sphinx-mathjax-offline"  # pinned in requirements.txt
# What the site ships of MathJax (about 1.3 MB of its 24 MB): the components
# above, the fonts the output draws with, and the TeX extensions its
# autoloader fetches on demand.
MATHJAX_FILES = (
    "startup.js",
    "core.js",
    "input/tex.js",
    "output/chtml.js",
    "output/chtml/fonts/tex.js",
    "a11y/assistive-mml.js",
) + tuple(
    f"input/tex/extensions/{name}.js"
    for name in (
        # The TeX packages MathJax's autoloader fetches when a formula uses one of
        # their macros (\boldsymbol, \cancel, \color, \coloneqq, ...); not
        # physics, bussproofs or mhchem, which no page of this kind needs.
        "action",
        "amscd",
        "bbox",
        "boldsymbol",
        "braket",
        "cancel",
        "cases",
        "centernot",
        "color",
        "colortbl",
        "empheq",
        "enclose",
        "extpfeil",
        "gensymb",
        "html",
        "mathtools",
        "unicode",
        "upgreek",
        "verb",
    )
)
MATHJAX_DIRS = ("output/chtml/fonts/woff-v2",)


class SiteError(SphinxError):
    category = "Site build error"


def _mathjax_source() -> Path:
    try:
        dist = metadata.distribution(MATHJAX_PACKAGE)
    except metadata.PackageNotFoundError as exc:
        raise SiteError(
            f"{MATHJAX_PACKAGE} is not installed: the site's maths comes from it (pip install -r requirements.txt)"
        ) from exc
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


def reading_order() -> list[str]:
    """The pages in the order to read them: a page after the one its
    {page-facts} box names in :after:, otherwise alphabetical."""
    pages = site_pages()
    after = {page: page_facts(page).get("after", "").strip() for page in pages}
    order: list[str] = []

    def place(page: str, path: tuple[str, ...] = ()) -> None:
        if page in order or page in path:
            return
        if after.get(page) in pages:
            place(after[page], path + (page,))
        order.append(page)

    for page in pages:
        place(page)
    return order


def _index_entry(number: int, page: str) -> str:
    facts = page_facts(page)
    minutes, _words, _figures = reading_minutes(page)
    record = hands_on(page)
    times = f"reading about {minutes} min"
    if record:
        times += f"; rerunning its experiments about {_duration(record['cpu_seconds'])} of CPU time"
    lines = [f"{number}. **{{doc}}`{page}`**", ""]
    subjects = facts.get("subjects") or page_summary(page)
    if subjects:
        lines += [f"   {subjects[0].upper() + subjects[1:]}.", ""]
    after = f" Read it after {{doc}}`{facts['after']}`." if facts.get("after") in site_pages() else ""
    lines.append(
        f"   {times[0].upper() + times[1:]}.{after} How robust its results are: "
        f"{{ref}}`the summary <robustness-{page}>`."
    )
    return "\n".join(lines)


def _index_markdown() -> str:
    pages = reading_order()
    lines = ["In the order to read them:", ""] if len(pages) > 1 else []
    lines += [_index_entry(k, page) + "\n" for k, page in enumerate(pages, start=1)]
    if not pages:
        lines.append("No pages yet.")
    toctree = ["```{toctree}", ":hidden:", ":maxdepth: 2", ":caption: Pages", ""]
    toctree += pages + ["```", "", "```{toctree}", ":hidden:", ":caption: About the results", "", ROBUSTNESS_DOC, "```"]
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
    html = re.sub(r"<td>([^<]*)</td>", lambda m: f"<td>{_report_cell(m.group(1))}</td>", html)
    return _curly_quotes(html)


_MEAN_SD = re.compile(r"^([−-]?\d+(?:\.\d+)?) ± (\d+(?:\.(\d+))?)$")


def _report_cell(cell: str) -> str:
    """One minus sign (U+2212) in a report's table cell, and a mean given to
    the precision of its spread ("-0.5267 ± 1.7" becomes "−0.5 ± 1.7")."""
    cell = re.sub(r"(?<![\w.])-(?=\d)", "\u2212", cell)
    match = _MEAN_SD.match(cell.strip())
    if match:
        decimals = len(match.group(3) or "")
        mean = round(float(match.group(1).replace("\u2212", "-")), decimals)
        text = f"{mean:.{decimals}f}".replace("-", "\u2212")
        if float(text.replace("\u2212", "-")) == 0:
            text = text.lstrip("\u2212")
        cell = f"{text}\u00a0±\u00a0{match.group(2)}"
    return cell


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


def _section_titles(page: str) -> dict[int, str]:
    """Numbered section headings of a page ("## 3. Batch norm ...") by number."""
    text = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    return {int(n): title.strip() for n, title in re.findall(r"^## (\d+)\. (.+)$", text, re.M)}


def _home_sections(page: str) -> dict[str, int]:
    """Each section script's first section on the page (page_registry's map)."""
    try:
        from pagekit.registry import package_for_page, page_config

        scripts = page_config(package_for_page(page)).SECTION_SCRIPTS
    except Exception:  # a page without a registered package: no map
        return {}
    home: dict[str, int] = {}
    for number in sorted(scripts):
        for name in scripts[number]:
            home.setdefault(name, number)
    return home


def _claim_verdict(claim: dict, runs: list[str]) -> str:
    holds = claim["holds"]
    seeds = [r for r in runs if r.startswith("seed ")]
    variants = [r for r in runs if not r.startswith("seed ")]
    if claim["every_seed"]:
        failed = [r for r in runs if not holds.get(r, False)]
        if not failed:
            return f"held at every seed ({len(seeds)}) and numeric variant ({len(variants)})"
        return "**did not hold** at " + ", ".join(failed)
    own = ["seed 0"] + variants
    if not all(holds.get(r, False) for r in own):
        return "**did not hold** on the page's own run under " + ", ".join(r for r in own if not holds.get(r, False))
    others = [r for r in seeds if r != "seed 0"]
    held = [r for r in others if holds.get(r, False)]
    tail = (
        "and at the other seeds too"
        if len(held) == len(others)
        else f"at the other seeds: held at {', '.join(held)}"
        if held
        else "not at the other seeds"
    )
    return f"a result of the page's own run: held under every numeric variant, {tail}"


def _robustness_summary(page: str) -> str:
    """Per page, in words: for each section, each claim its prose relies on
    and whether it held at every seed and numeric variant (from
    figures/<page>/robustness.json, which `make robustness` writes)."""
    import json

    path = FIGURES / page / "robustness.json"
    if not path.is_file():
        return ""
    data = json.loads(path.read_text(encoding="utf-8"))
    titles, home = _section_titles(page), _home_sections(page)
    sections = sorted(data["sections"].items(), key=lambda kv: (home.get(kv[0], 999), kv[0]))
    claims = [c for _, v in sections for c in v["claims"]]
    general = [c for c in claims if c["every_seed"]]
    general_held = sum(all(c["holds"].values()) for c in general)
    lines = [
        f"**In short.** Of the {len(claims)} statements this page's experiments check, "
        f"{len(general)} are stated generally and {general_held} of those held at every seed "
        f"and numeric variant; the other {len(claims) - len(general)} are about the page's "
        "own run, and the page says so where it makes them.",
        "",
    ]
    for name, section in sections:
        number = home.get(name)
        where = f"Section {number}, {titles[number]}" if number in titles else name
        link = f"[{where}](../{page}.md#{_github_slug(f'{number}. {titles[number]}')})" if number in titles else where
        runs = section["runs"]
        checks = section["claims"]
        plain = [c for c in checks if c["every_seed"] and all(c["holds"].values())]
        seeds = sum(r.startswith("seed ") for r in runs)
        line = f"- {link}: {len(checks)} checks"
        if len(plain) == len(checks):
            line += f", all held at every seed ({seeds}) and numeric variant ({len(runs) - seeds})."
        else:
            line += (
                f"; {len(plain)} held at every seed ({seeds}) and numeric variant "
                f"({len(runs) - seeds}), and these did not, or need not:"
            )
        lines.append(line)
        for claim in checks:
            if claim in plain:
                continue
            statement = claim["statement"].replace(" -", " \u2212")
            lines.append(f"  - {statement}: {_claim_verdict(claim, runs)}.")
    return "\n".join(lines) + "\n"


def _github_slug(title: str) -> str:
    """The anchor MyST gives a heading (myst_heading_slug_func = "github")."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _robustness_markdown() -> str:
    parts = []
    for page in reading_order():
        parts.append(f"(robustness-{page})=\n## {page_title(page)}\n")
        parts.append(f"The page: {{doc}}`../{page}`.\n")
        path = report_file(page)
        if path is None:
            parts.append("No robustness report has been generated for this page yet (`make seeds` writes it).\n")
            continue
        parts.append(_robustness_summary(page))
        rel = path.relative_to(REPO).as_posix()
        parts.append(
            '`````{raw} html\n<details class="report-tables"><summary>The full '
            f"tables: every claim and every quoted number under every run (from "
            f"<code>{rel}</code>)</summary>\n" + _report_html_with_headings(path) + "\n</details>\n`````\n"
        )
    return "\n".join(parts)


def _report_html_with_headings(path: Path) -> str:
    """The whole report as HTML, its headings as HTML headings (inside a
    folded block they cannot be the site's sections)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"\A\s*# [^\n]*\n", "", text)
    text = _HEADING_LINE.sub(lambda m: "#" * min(len(m.group(1)) + 2, 6) + " " + m.group(2), text)
    return _report_html(text)


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
        raise SiteError(
            f"{docname}.md must hold exactly one ```{{{name}}}``` block (found {count}); the site generates its content"
        )
    source[0] = text


class RobustnessReportLinks(SphinxTransform):
    """A page links to its report file (figures/<page>/robustness-report.md,
    readable on GitHub); on the site the link leads to the report's section of
    the robustness page instead, whether or not the file exists yet."""

    default_priority = 100
    _target = re.compile(r"(?:^|/)figures/([^/]+)/(?:robustness|seed)-report(?:\.md)?(?:#.*)?$")

    def apply(self, **kwargs) -> None:
        for node in list(self.document.findall(addnodes.download_reference)) + list(
            self.document.findall(addnodes.pending_xref)
        ):
            match = self._target.search(node.get("reftarget", ""))
            if not match:
                continue
            page = match.group(1)
            xref = addnodes.pending_xref(
                "",
                refdomain="std",
                reftype="ref",
                reftarget=f"robustness-{page}",
                refexplicit=True,
                refwarn=True,
                refdoc=self.env.docname,
            )
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

    _plus_minus = re.compile(r"(\d) ± (\d)")

    def apply(self, **kwargs) -> None:
        for text in list(self.document.findall(nodes.Text)):
            if ("×" not in text and "±" not in text) or isinstance(text.parent, self._skip):
                continue
            new = self._pattern.sub("\\1\u00a0×\u00a0\\2", str(text))
            new = self._plus_minus.sub("\\1\u00a0±\u00a0\\2", new)  # "0.824 ± 0.017" stays whole
            if new != str(text):
                text.parent.replace(text, nodes.Text(new))


class UnbrokenTitleHyphens(SphinxTransform):
    """A hyphen inside a word of a heading ("QK-norm") is a non-breaking
    hyphen on the site, so a narrow screen never breaks the title there. The
    anchors (made from the source) do not change."""

    default_priority = 710
    _pattern = re.compile(r"(?<=\w)-(?=\w)")

    def apply(self, **kwargs) -> None:
        for title in self.document.findall(nodes.title):
            for text in list(title.findall(nodes.Text)):
                new = self._pattern.sub("\u2011", str(text))
                if new != str(text):
                    text.parent.replace(text, nodes.Text(new))


class SectionLinks(SphinxTransform):
    """Every "section 3" (and "sections 4 and 5") in a page's prose links to
    that numbered section of the page, unless it names the other page's
    ("the first page's section 4", "section 3 of the first page"). Text
    already in a link, code, maths or a heading is left alone."""

    default_priority = 730
    _pattern = re.compile(
        r"(?<!page's )\b([Ss]ections?) (\d+)(?:( and | or | to |, )(\d+))?"
        r"(?!\d| of the (?:first|second|other|previous|next) page)"
    )
    _skip = (
        nodes.reference,
        nodes.literal,
        nodes.literal_block,
        nodes.math,
        nodes.math_block,
        nodes.raw,
        nodes.title,
        addnodes.pending_xref,
    )

    def apply(self, **kwargs) -> None:
        if self.env.docname not in site_pages():
            return
        targets = {}
        for section in self.document.findall(nodes.section):
            title = section.next_node(nodes.title)
            match = re.match(r"(\d+)\. ", title.astext()) if title is not None else None
            ids = [i for i in section["ids"] if re.match(r"\d+-", i)] or section["ids"]
            if match and ids:
                targets.setdefault(int(match.group(1)), ids[0])
        if not targets:
            return
        for text in list(self.document.findall(nodes.Text)):
            parent = text.parent
            if parent is None or any(isinstance(a, self._skip) for a in _ancestors(text)):
                continue
            pieces, position, source = [], 0, str(text)
            for match in self._pattern.finditer(source):
                numbers = [(match.group(2), match.start(2), match.end(2))]
                if match.group(4):
                    numbers.append((match.group(4), match.start(4), match.end(4)))
                if not all(int(n) in targets for n, _, _ in numbers):
                    continue
                pieces.append(nodes.Text(source[position : match.start()]))
                cursor = match.start()
                for k, (number, start, end) in enumerate(numbers):
                    label_start = cursor if k == 0 else start
                    if k:
                        pieces.append(nodes.Text(source[cursor:start]))
                    link = nodes.reference("", "", refid=targets[int(number)], internal=True)
                    link += nodes.Text(source[label_start:end])
                    pieces.append(link)
                    cursor = end
                position = cursor
            if not pieces:
                continue
            pieces.append(nodes.Text(source[position:]))
            index = parent.index(text)
            parent.remove(text)
            for k, piece in enumerate(pieces):
                parent.insert(index + k, piece)


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


class NumberColumns(SphinxTransform):
    """A table column whose body cells are all numbers (or "a ± b", or a
    dash) is set right-aligned, so the digits line up (site.css, class num)."""

    default_priority = 720
    _number = re.compile(
        r"^[−+-]?[\d,]*\.?\d+(?:\s?%)?(?:\s?±\s?[\d,]*\.?\d+%?)?"
        r"(?:\s?×\s?10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)?$|^[—–-]$"
    )

    def apply(self, **kwargs) -> None:
        for tgroup in self.document.findall(nodes.tgroup):
            bodies = [row.children for tbody in tgroup.findall(nodes.tbody) for row in tbody.findall(nodes.row)]
            if not bodies:
                continue
            width = max(len(cells) for cells in bodies)
            for column in range(width):
                cells = [cells[column] for cells in bodies if column < len(cells)]
                texts = [c.astext().strip().replace("\u00a0", " ") for c in cells]
                if not any(re.search(r"\d", t) for t in texts):
                    continue
                if all(self._number.match(t) for t in texts if t):
                    for cell in cells:
                        cell["classes"].append("num")
                    for thead in tgroup.findall(nodes.thead):
                        for row in thead.findall(nodes.row):
                            if column < len(row.children):
                                row.children[column]["classes"].append("num")


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


# --- figures load lazily and do not move the page ------------------------------

_IMG_TAG = re.compile(r'<img\b[^>]*\bsrc="([^"]*_images/[^"]+\.svg)"[^>]*>')
_SVG_SIZE = re.compile(r'<svg\b[^>]*?\bwidth="([\d.]+)(pt|px)?"[^>]*?\bheight="([\d.]+)(pt|px)?"', re.S)


def _svg_size(path: Path) -> tuple[int, int] | None:
    """The drawn size of an SVG in CSS px (matplotlib writes points: 1 pt = 4/3 px)."""
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4000]
    except OSError:
        return None
    match = _SVG_SIZE.search(head)
    if not match:
        return None
    scale = 4 / 3 if (match.group(2) or "px") == "pt" else 1.0
    return round(float(match.group(1)) * scale), round(float(match.group(3)) * scale)


def _size_and_lazy_load_images(app, exc) -> None:
    """Every figure's <img> carries its width and height (the browser keeps
    its room before it arrives, so the page does not jump) and, but the first
    on a page, loading="lazy": a slow link fetches the figures near the
    reader, not all 25 at once ahead of the maths."""
    if exc is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for page in outdir.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        seen = 0

        def attributes(match: re.Match, page: Path = page) -> str:
            nonlocal seen
            tag = match.group(0)
            size = _svg_size((page.parent / unquote_path(match.group(1))).resolve())
            extra = ""
            if size and " width=" not in tag:
                extra += f' width="{size[0]}" height="{size[1]}"'
            if "loading=" not in tag:
                extra += ' decoding="async"' + (' loading="lazy"' if seen else "")
            seen += 1
            return tag[:4] + extra + tag[4:]

        new = _IMG_TAG.sub(attributes, html)
        if new != html:
            page.write_text(new, encoding="utf-8")


def unquote_path(src: str) -> str:
    from urllib.parse import unquote

    return unquote(src.split("#")[0].split("?")[0])


# --- code listings: captioned with their file, which the site serves -----------

CODE_DIR = "_code"  # the site's copy of every script a page includes


class CaptionedLiteralInclude(LiteralInclude):
    """A {literalinclude} shows where its code comes from: its caption names
    the file (linked to the site's copy of the whole script, so a reader can
    read the constants and helpers it uses, or download it), the object
    (:pyobject:) and the lines. An explicit :caption: is kept."""

    def run(self):
        explicit = "caption" in self.options
        if not explicit:
            self.options["caption"] = Path(self.arguments[0]).name
        result = super().run()
        if explicit:
            return result
        rel_filename, filename = self.env.relfn2path(self.arguments[0])
        path = Path(filename).resolve()
        if not _inside_repo(path):
            return result  # _refuse_outside_files reports it
        rel = path.relative_to(REPO).as_posix()
        files = getattr(self.env, "site_code_files", set())
        files.add(rel)
        self.env.site_code_files = files
        for container in result:
            if not isinstance(container, nodes.container):
                continue
            caption = next(iter(container.findall(nodes.caption)), None)
            block = next(iter(container.findall(nodes.literal_block)), None)
            if caption is None or block is None:
                continue
            start, end = _lines_in_file(block.astext(), path)
            up = "../" * self.env.docname.count("/")
            link = nodes.reference("", "", refuri=f"{up}{CODE_DIR}/{rel}", internal=False, classes=["code-source"])
            link += nodes.literal(rel, rel)
            caption.children = []
            caption += link
            what = self.options.get("pyobject")
            caption += nodes.Text((f", {what}" if what else "") + f", lines {start}–{end}")
        return result


def _lines_in_file(text: str, path: Path) -> tuple[int, int]:
    """The first and last line numbers of ``text`` (a listing's lines, as
    included) in the file at ``path``; (1, n) when not found as one run."""
    wanted = text.rstrip("\n").split("\n")
    lines = path.read_text(encoding="utf-8").split("\n")
    for k in range(len(lines) - len(wanted) + 1):
        if lines[k : k + len(wanted)] == wanted:
            return k + 1, k + len(wanted)
    return 1, len(wanted)


def _merge_code_files(app, env, docnames, other) -> None:
    env.site_code_files = getattr(env, "site_code_files", set()) | getattr(other, "site_code_files", set())


def _copy_code_files(app, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return
    for rel in sorted(getattr(app.env, "site_code_files", ())):
        source = REPO / rel
        if _inside_repo(source) and source.is_file():
            target = Path(app.outdir) / CODE_DIR / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


# --- the front-matter box ---------------------------------------------------------

WORDS_PER_MINUTE = 200  # a technical text read with care; its figures add time below
SECONDS_PER_FIGURE = 30
PDF_DIR = "pdf"  # `make pdf` prints each page to build/site/pdf/<page>.pdf


def _prose_of(markdown: str) -> str:
    """The words a reader reads: the Markdown without code blocks, directive
    fences, maths, link targets, HTML comments and table rules."""
    text = re.sub(r"^(`{3,}|~{3,}).*?^\1\s*$", "", markdown, flags=re.S | re.M)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " ", text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"^:{3,}.*$|^:[a-z-]+:.*$|^\|?[-:| ]+\|?$", "", text, flags=re.M)
    return text


def reading_minutes(page: str) -> tuple[int, int, int]:
    """(minutes, words, figures) for reading the page: its words at
    WORDS_PER_MINUTE plus SECONDS_PER_FIGURE for each figure, rounded up to
    five minutes."""
    markdown = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    words = len(re.findall(r"[A-Za-z0-9][\w’'.,−-]*", _prose_of(markdown)))
    figures = len(re.findall(r"^:{3,}\{figure\}", markdown, flags=re.M))
    minutes = words / WORDS_PER_MINUTE + figures * SECONDS_PER_FIGURE / 60
    return max(5, 5 * -(-int(minutes) // 5)), words, figures


def hands_on(page: str) -> dict | None:
    """figures/<page>/hands-on.json, which `make bench` writes: the measured
    cold regeneration of the page (every experiment rerun)."""
    import json

    path = FIGURES / page / "hands-on.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def _hands_on_text(page: str) -> str:
    record = hands_on(page)
    if record is None:
        return "not measured yet (`make bench` measures it)"
    return (
        f"about {_duration(record['cpu_seconds'])} of CPU time to rerun every experiment "
        f"(measured by `make bench` on a {record['cores']}-core {record['machine']}; "
        f"{_duration(record['wall_seconds'])} of wall time there)"
    )


def page_facts(page: str) -> dict[str, str]:
    """The options of the page's {page-facts} block (level, subjects, after)."""
    markdown = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    block = re.search(r"^```\{page-facts\}[^\n]*\n(.*?)^```\s*$", markdown, flags=re.S | re.M)
    if not block:
        return {}
    return dict(re.findall(r"^:([a-z-]+):\s*(.*)$", block.group(1), flags=re.M))


class PageFacts(SphinxDirective):
    """```{page-facts}```: the short box a page opens with. The page gives its
    level (:level:), its subjects for the index (:subjects:), the page it
    builds on (:after:) and, as the block's body, what the reader should know
    (Markdown, with links to where each thing is taught). The site adds the
    reading time (computed from the page's words and figures), the hands-on
    time (measured by `make bench`), the printed edition and the robustness
    report. The box holds no number of the page's own: numbers belong in the
    prose, where `make check` checks them, so a digit in the body is an error."""

    has_content = True
    option_spec = {
        "level": directives.unchanged_required,
        "subjects": directives.unchanged,
        "after": directives.unchanged,
    }

    def run(self):
        page = self.env.docname
        body = "\n".join([*self.content, *self.options.values()])
        # A number, not a digit inside a name (float32 is a name).
        if re.search(r"(?<![\w.])\d", re.sub(r"\]\([^)]*\)", "]", body)):
            raise self.error(
                "a {page-facts} box holds no numbers (write them in the prose, where make check checks them)"
            )
        minutes, words, figures = reading_minutes(page)
        box = nodes.container(classes=["page-facts"])
        box["ids"].append("page-facts")
        items = nodes.definition_list()

        def item(term: str, *content: nodes.Node) -> None:
            entry = nodes.definition_list_item()
            entry += nodes.term(term, term)
            definition = nodes.definition()
            definition += content
            entry += definition
            items.append(entry)

        item("Level", nodes.paragraph(text=self.options["level"]))
        item(
            "Reading",
            nodes.paragraph(
                text=f"about {minutes} min ({words:,} words at {WORDS_PER_MINUTE} a minute, and {figures} figures)"
            ),
        )
        hands = nodes.paragraph()
        self.state.nested_parse(self.content.__class__([_hands_on_text(page)]), self.content_offset, hands)
        item("Hands-on", *hands.children)
        known = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, known)
        item("You should know", *known.children)
        extra = nodes.paragraph()
        up = "../" * page.count("/")
        pdf = nodes.reference("", "", refuri=f"{up}{PDF_DIR}/{Path(page).name}.pdf", internal=False)
        pdf += nodes.Text("the page as a PDF")
        extra += pdf
        extra += nodes.Text("; how its results hold at other seeds: ")
        xref = addnodes.pending_xref(
            "",
            refdomain="std",
            reftype="ref",
            reftarget=f"robustness-{page}",
            refexplicit=True,
            refwarn=True,
            refdoc=page,
        )
        xref += nodes.inline("", "the robustness summary")
        extra += xref
        item("Also", extra)
        box += items
        return [box]


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
    app.connect("source-read", _generate)
    app.add_transform(RobustnessReportLinks)
    app.add_transform(UnbrokenNumbers)
    app.add_transform(UnbrokenTitleHyphens)
    app.add_transform(NumberColumns)
    app.add_transform(SectionLinks)
    app.add_directive("literalinclude", CaptionedLiteralInclude, override=True)
    app.add_directive("page-facts", PageFacts)
    app.connect("env-merge-info", _merge_code_files)
    app.connect("build-finished", _copy_code_files)
    app.connect("build-finished", _size_and_lazy_load_images)
    app.connect("doctree-read", _refuse_outside_files)
    app.connect("doctree-resolved", _link_figures_to_files)
    app.connect("env-get-updated", _number_figures_per_page, priority=900)
    app.connect("build-finished", _copy_mathjax)
    app.connect("build-finished", _fail_if_refused)
    app.connect("build-finished", _doctrees_out_of_the_site, priority=900)
    app.connect("build-finished", _no_source_maps)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
