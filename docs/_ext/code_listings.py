"""Code listings: a {literalinclude} is captioned with the file it comes
from, linked to the site's copy of the whole script (under _code/), with the
object and the lines it shows."""

from __future__ import annotations

import shutil
from pathlib import Path

from docutils import nodes
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


def setup(app):
    app.add_directive("literalinclude", CaptionedLiteralInclude, override=True)
    app.connect("env-merge-info", _merge_code_files)
    app.connect("build-finished", _copy_code_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
