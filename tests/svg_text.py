"""The text a matplotlib SVG draws, read back from the file: the strings
(matplotlib writes each as a comment before its glyphs), and each string's
size in points and its fill colour.

With ``svg.fonttype: path`` matplotlib writes every string as a group of glyph
outlines, ``<g style="fill: #rrggbb" transform="translate(x y) [rotate(a)]
scale(s -s)">``, where s is the font size over 100 (the glyphs are drawn at
100 units an em); a group without a fill style is black."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

GLYPH_GROUP = re.compile(r'<g (?:style="(?P<style>[^"]*)" )?transform="[^"]*scale\((?P<s>[0-9.]+) -[0-9.]+\)"')
FILL = re.compile(r"fill:\s*(#[0-9a-fA-F]{6})")


def drawn_texts(svg: Path) -> list[str]:
    """The strings matplotlib recorded as comments, outside tick labels."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.parse(svg, parser).getroot()
    texts = []

    def walk(element, in_tick: bool):
        for child in element:
            if child.tag is ET.Comment:
                if not in_tick:
                    texts.append(child.text.strip())
                continue
            tick = in_tick or child.get("id", "").startswith(("xtick_", "ytick_"))
            walk(child, tick)

    walk(root, False)
    return texts


def drawn_text_styles(svg: Path) -> list[tuple[float, str]]:
    """(size in points, fill as #rrggbb) of every string the figure draws."""
    styles = []
    for match in GLYPH_GROUP.finditer(svg.read_text(encoding="utf-8")):
        fill = FILL.search(match["style"] or "")
        styles.append((round(float(match["s"]) * 100, 3), fill[1].lower() if fill else "#000000"))
    return styles


def relative_luminance(colour: str) -> float:
    """WCAG 2's relative luminance of an sRGB colour #rrggbb."""

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def contrast_on_white(colour: str) -> float:
    """WCAG 2's contrast ratio of ``colour`` against white (1 to 21)."""
    return 1.05 / (relative_luminance(colour) + 0.05)


def write_probe_svg(path: Path, title: str = "peak 0.4773") -> Path:
    """A small figure saved as the sections save theirs: a line with ticks 0
    to 7 and one drawn number, ``title``; for the tests of the readers above."""
    from pagekit.section import new_figure

    fig = new_figure(3, 2)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 7])
    ax.set_title(title)
    fig.savefig(path, format="svg", metadata={"Date": None})
    return path
