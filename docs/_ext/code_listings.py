"""Code listings: a {literalinclude} is captioned with the file it comes
from, linked to the site's copy of the whole script (under _code/), with the
object and the lines it shows; and every line of highlighted code is a box
of its own, so that a line too long for the column wraps with a hanging
indent (site.css) instead of restarting at column 0, which in Python reads
as a dedent."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from docutils import nodes
from pygments.formatters import HtmlFormatter
from sphinx.directives.code import LiteralInclude

from site_ext.pages import REPO, inside_repo

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
        if not inside_repo(path):
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
        if inside_repo(source) and source.is_file():
            target = Path(app.outdir) / CODE_DIR / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


_TAG_OR_TEXT = re.compile(r"(<[^>]*>)|([^<]+)")
_LEADING_BLANKS = re.compile(r"^[ \t]+")


def _hanging_line(html: str) -> str:
    """One line of Pygments' HTML as ``<span class="code-line" style="--lead:
    N">``, N its leading blanks in characters, with those blanks in a
    ``<span class="code-lead">`` (which never breaks, so a line never wraps
    right after its indentation). The text, the newline included, is
    unchanged: the copy button and a reader's selection copy the same code."""
    pieces, lead, leading = [], 0, True
    for tag, text in _TAG_OR_TEXT.findall(html):
        if tag or not leading:
            pieces.append(tag or text)
            continue
        blanks = _LEADING_BLANKS.match(text)
        if blanks:
            lead += len(blanks.group().expandtabs(8))
            pieces.append(f'<span class="code-lead">{blanks.group()}</span>')
            text = text[blanks.end() :]
        if text and text != "\n":
            leading = False
        pieces.append(text)
    return f'<span class="code-line" style="--lead: {lead}">{"".join(pieces)}</span>'


class HangingIndentFormatter(HtmlFormatter):
    """Pygments' HTML, each line of code wrapped by ``_hanging_line`` (not
    with line numbers, which no page uses)."""

    def wrap(self, source):
        if self.linenos:
            return super().wrap(source)
        return super().wrap((kind, _hanging_line(line) if kind == 1 else line) for kind, line in source)


def _use_hanging_indent(app) -> None:
    highlighter = getattr(app.builder, "highlighter", None)
    if highlighter is not None and getattr(highlighter, "dest", None) == "html":
        highlighter.formatter = HangingIndentFormatter


def setup(app):
    app.add_directive("literalinclude", CaptionedLiteralInclude, override=True)
    app.connect("builder-inited", _use_hanging_indent)
    app.connect("env-merge-info", _merge_code_files)
    app.connect("build-finished", _copy_code_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
