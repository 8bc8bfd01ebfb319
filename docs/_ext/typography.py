"""The site's typography: numbers in scientific notation and "a ± b" never
break across lines, hyphenated words in titles never break at the hyphen,
"section 3" in a page's prose links to that section, and table columns of
numbers are right-aligned."""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform

from site_ext.pages import site_pages


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


def setup(app):
    app.add_transform(UnbrokenNumbers)
    app.add_transform(UnbrokenTitleHyphens)
    app.add_transform(NumberColumns)
    app.add_transform(SectionLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
