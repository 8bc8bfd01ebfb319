"""Figures: each links to its full-size SVG, each page numbers its figures
from 1, every <img> carries its size and (but the first) loads lazily,
so the page does not jump and a slow link fetches only what the reader
reaches, and a phone gets each figure's phone rendering (``<figure>.phone.svg``,
drawn by the same script at a phone's width) through ``<picture>``."""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes

from pagekit.paths import PHONE_BREAKPOINT_PX, PHONE_SUFFIX


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


_SIZED_IMG = re.compile(r'<img\b[^>]*\bsrc="([^"]*_images/)([^"/]+)\.svg"[^>]*>')


def _serve_phone_renderings(app, exc) -> None:
    """Copy each figure's phone rendering beside the SVG the site serves, and
    wrap the figure's <img> in a <picture> whose <source> picks it below
    PHONE_BREAKPOINT_PX (with its own width and height, so the page keeps
    the right room on a phone too)."""
    if exc is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    served: dict[str, Path] = {}  # served stem -> the phone rendering beside its source
    for source, served_name in getattr(app.builder, "images", {}).items():
        source_path = Path(app.srcdir) / source
        phone = source_path.with_name(source_path.name.removesuffix(".svg") + PHONE_SUFFIX)
        if source_path.suffix == ".svg" and phone.exists():
            stem = served_name.removesuffix(".svg")
            target = outdir / "_images" / f"{stem}{PHONE_SUFFIX}"
            target.write_bytes(phone.read_bytes())
            served[stem] = target
    if not served:
        return
    for page in outdir.rglob("*.html"):
        html = page.read_text(encoding="utf-8")

        def picture(match: re.Match) -> str:
            folder, stem = match.group(1), match.group(2)
            if stem not in served:
                return match.group(0)
            size = _svg_size(served[stem])
            room = f' width="{size[0]}" height="{size[1]}"' if size else ""
            return (
                f'<picture><source media="(max-width: {PHONE_BREAKPOINT_PX}px)" '
                f'srcset="{folder}{stem}{PHONE_SUFFIX}"{room}>{match.group(0)}</picture>'
            )

        new = _SIZED_IMG.sub(picture, html)
        if new != html:
            page.write_text(new, encoding="utf-8")


def unquote_path(src: str) -> str:
    from urllib.parse import unquote

    return unquote(src.split("#")[0].split("?")[0])


def setup(app):
    app.connect("doctree-resolved", _link_figures_to_files)
    app.connect("env-get-updated", _number_figures_per_page, priority=900)
    app.connect("build-finished", _size_and_lazy_load_images)
    app.connect("build-finished", _serve_phone_renderings, priority=600)  # after the sizes
    return {"parallel_read_safe": True, "parallel_write_safe": True}
