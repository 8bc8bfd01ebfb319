"""Every statement about a paper cites one entry of the shared bibliography.

The bibliography is one Markdown file shared by every page,
docs/references/bibliography.md. Each entry is a level-2 heading in
author-year form ("Ba, Kiros and Hinton, 2016"), then the full reference with
a link to the paper, then one or more statements a page makes of the paper,
each a paragraph starting "**Cited for**" followed by a quoted passage of the
paper that supports it, whose last paragraph says where it was found:

    > "... the passage ..."
    >
    > — abstract, <https://...>          (or: — text, section 3, <https://...>)

A page cites an entry with a plain Markdown link whose text is the entry's
heading (or the same with the year in brackets, "Xiong and colleagues (2020)")
and whose target is the bibliography's anchor for that heading:
[Ba, Kiros and Hinton, 2016](references/bibliography.md#ba-kiros-and-hinton-2016).
That reads as an ordinary author-year citation in any Markdown viewer, and on
the site (MyST heading anchors, GitHub's slug rule) it links to the entry,
whose reference links to the paper. Chosen over sphinxcontrib-bibtex, whose
{cite} roles show as raw markup outside Sphinx.

Pages opt in by being listed in the bibliography itself, in its paragraph
starting "**Pages checked against this bibliography:**" (links to the pages;
the second page joins when its prose is converted). For those pages this fails on:
a citation whose target is not an entry, or whose text is not the entry's
name; an author-year mention in the prose that is not such a link; an entry
nothing cites; an entry without a link to the paper, without a "Cited for"
statement, or without a supporting passage that says where it was found.
Exit status 0 when clean, 1 on a finding, 2 on bad input.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from pagekit.registry import REPO_ROOT, rel_path

BIBLIOGRAPHY = REPO_ROOT / "docs" / "references" / "bibliography.md"
CITED_FOR = "Cited for"
PAGES_CHECKED = "Pages checked against this bibliography:"
# Where a passage was found: the abstract, or the paper's text (a section, a page).
SOURCE_LINE = re.compile(r"^—\s*(abstract|text)\b.*<https?://[^>]+>", re.IGNORECASE)
PAPER_LINK = re.compile(r"https?://\S+")
# An author-year mention: "Ba, Kiros and Hinton, 2016", "Xiong and colleagues (2020)", "Wu and He, 2018".
YEAR = re.compile(r"\b(?:19|20)\d\d\b")
YEAR_REACH = 24  # characters beside a citation link in which a year is read as the cited paper's
AUTHOR_YEAR = re.compile(r"\b(?:[A-Z][\w-]+|colleagues|et al\.)(?:,| \(|,? \()\s?(?:19|20)\d\d\b\)?")


@dataclass
class Statement:
    """One "**Cited for**" paragraph: what a page says of the paper, and the
    passages quoted under it (each its text, without the source line)."""

    line: int
    text: str
    passages: list[str] = field(default_factory=list)


@dataclass
class Entry:
    name: str
    slug: str
    line: int
    reference: str = ""
    statements: int = 0
    passages: list[str] = field(default_factory=list)  # each passage's source line
    unsourced: int = 0  # passages with no "— abstract/text, <url>" line
    cited_for: list[Statement] = field(default_factory=list)
    quoted: list[str] = field(default_factory=list)  # each passage's text with its source line

    @property
    def year(self) -> str:
        return self.name.rsplit(", ", 1)[-1]

    def passage_digests(self) -> list[str]:
        """A hash of each passage as quoted (its words and its source line):
        pinned by `make golden`, so a trimmed or reworded passage is a
        reviewed change."""
        return [hashlib.sha256(" ".join(q.split()).encode()).hexdigest()[:16] for q in self.quoted]


@dataclass
class Citation:
    page: Path
    line: int
    text: str
    target: str
    years_beside: list[str] = field(default_factory=list)  # years written right before or after the link


def github_slug(heading: str) -> str:
    """The anchor GitHub and MyST (myst_heading_slug_func = "github") give a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def parser() -> MarkdownIt:
    return MarkdownIt("commonmark").use(front_matter_plugin)


def read_bibliography(path: Path = BIBLIOGRAPHY) -> dict[str, Entry]:
    """The entries by anchor, read with a Markdown parser."""
    if not path.is_file():
        raise FileNotFoundError(f"{rel_path(path)}: the bibliography is missing")
    tokens = parser().parse(path.read_text(encoding="utf-8"))
    entries: dict[str, Entry] = {}
    entry: Entry | None = None
    depth = 0  # inside a blockquote
    quote: list[str] = []
    for k, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            name = tokens[k + 1].content.strip()
            entry = Entry(name, github_slug(name), token.map[0] + 1)
            if entry.slug in entries:
                raise ValueError(f"{rel_path(path)}:{entry.line}: two entries named {name!r}")
            entries[entry.slug] = entry
        elif token.type == "blockquote_open":
            depth += 1
            quote = []
        elif token.type == "blockquote_close":
            depth -= 1
            if entry is not None and quote:
                source = quote[-1]
                if SOURCE_LINE.match(source) and len(quote) > 1:
                    entry.passages.append(source)
                    entry.quoted.append("\n".join(quote))
                    if entry.cited_for:
                        entry.cited_for[-1].passages.append("\n".join(quote[:-1]))
                else:
                    entry.unsourced += 1
        elif token.type == "inline" and entry is not None and tokens[k - 1].type == "paragraph_open":
            if depth:
                quote.append(token.content.strip())
            elif token.content.startswith(f"**{CITED_FOR}**"):
                entry.statements += 1
                entry.cited_for.append(Statement(token.map[0] + 1, token.content))
            elif not entry.reference:
                entry.reference = token.content
    return entries


def citations_and_mentions(page: Path) -> tuple[list[Citation], list[tuple[int, str]]]:
    """Links into the bibliography, and author-year mentions outside any link,
    in the page's prose (code and maths are not prose). Each citation keeps
    the years written within YEAR_REACH characters before or after it."""
    lines = page.read_text(encoding="utf-8")
    citations: list[Citation] = []
    mentions: list[tuple[int, str]] = []
    for token in parser().parse(lines):
        if token.type != "inline" or not token.children:
            continue
        line = token.map[0] + 1 if token.map else 0  # advanced at each line break
        in_link: str | None = None
        link_text = ""
        before = ""  # the text just before the current link
        last: Citation | None = None  # a citation the text now read follows directly
        for child in token.children:
            if child.type == "link_open":
                in_link, link_text, link_line = child.attrGet("href") or "", "", line
            elif child.type == "link_close":
                last = None
                if in_link is not None and "bibliography.md#" in in_link:
                    last = Citation(page, link_line, link_text, in_link, YEAR.findall(before[-YEAR_REACH:]))
                    citations.append(last)
                in_link, before = None, ""
            elif child.type == "text":
                if in_link is not None:
                    link_text += child.content
                    continue
                mentions += [(line, m.group(0)) for m in AUTHOR_YEAR.finditer(child.content)]
                if last is not None:
                    last.years_beside += YEAR.findall(child.content[:YEAR_REACH])
                    last = None
                before += child.content
            elif child.type in ("softbreak", "hardbreak"):
                line += 1
                if in_link is not None:
                    link_text += " "
                else:
                    before += " "
    return citations, mentions


def cited_passages(page: Path, bibliography: Path = BIBLIOGRAPHY) -> dict[str, list[str]]:
    """For each entry ``page`` cites: the hashes of its quoted passages
    (Entry.passage_digests), which `make golden` pins in the page's
    golden record."""
    entries = read_bibliography(bibliography)
    citations, _ = citations_and_mentions(page)
    slugs = sorted({c.target.rsplit("#", 1)[1] for c in citations} & set(entries))
    return {slug: entries[slug].passage_digests() for slug in slugs}


def opted_in_pages(bibliography: Path = BIBLIOGRAPHY) -> list[Path]:
    """The pages the bibliography lists as checked against it."""
    tokens = parser().parse(bibliography.read_text(encoding="utf-8"))
    for token in tokens:
        if token.type == "inline" and token.content.startswith(f"**{PAGES_CHECKED}**"):
            pages = [
                (bibliography.parent / child.attrGet("href")).resolve()
                for child in token.children
                if child.type == "link_open"
            ]
            for page in pages:
                if not page.is_file():
                    raise FileNotFoundError(f"{rel_path(bibliography)}: listed page {rel_path(page)} does not exist")
            return pages
    raise ValueError(f"{rel_path(bibliography)}: no paragraph starting **{PAGES_CHECKED}**")


def check(pages: list[Path], bibliography: Path = BIBLIOGRAPHY) -> list[str]:
    """Every finding, as "file:line: what is wrong"."""
    entries = read_bibliography(bibliography)
    findings: list[str] = []
    cited: set[str] = set()
    for page in pages:
        citations, mentions = citations_and_mentions(page)
        for citation in citations:
            where = f"{rel_path(page)}:{citation.line}"
            slug = citation.target.rsplit("#", 1)[1]
            entry = entries.get(slug)
            if entry is None:
                findings.append(
                    f"{where}: citation {citation.text!r} links to #{slug}, "
                    f"which is no entry of {rel_path(bibliography)}"
                )
                continue
            text = re.sub(r" \(((?:19|20)\d\d)\)$", r", \1", " ".join(citation.text.split()))
            if text != entry.name:
                findings.append(f"{where}: citation text {citation.text!r} is not the entry's name {entry.name!r}")
            for year in citation.years_beside:
                if year != entry.year:
                    findings.append(
                        f"{where}: the year {year} beside the citation {citation.text!r} is not its entry's, {entry.year}"
                    )
            cited.add(slug)
        for line, mention in mentions:
            findings.append(
                f"{rel_path(page)}:{line}: {mention!r} reads as a citation but links to no bibliography entry"
            )
    for entry in entries.values():
        where = f"{rel_path(bibliography)}:{entry.line}"
        if entry.slug not in cited:
            findings.append(f"{where}: entry {entry.name!r} is cited by no page")
        if not PAPER_LINK.search(entry.reference):
            findings.append(f"{where}: entry {entry.name!r} has no link to the paper")
        if entry.statements == 0:
            findings.append(f"{where}: entry {entry.name!r} says of nothing what it is cited for")
        if not entry.passages:
            findings.append(
                f"{where}: entry {entry.name!r} has no supporting passage with its "
                "source (a last line '— abstract, <url>' or '— text, ..., <url>')"
            )
        for statement in entry.cited_for:
            said = " ".join(statement.passages)
            missing = [n for n in statement_numbers(statement.text) if n not in said]
            if missing:
                findings.append(
                    f"{rel_path(bibliography)}:{statement.line}: entry {entry.name!r} is cited for "
                    f"{', '.join(missing)}, which no passage quoted under that statement says"
                )
        if entry.unsourced:
            findings.append(
                f"{where}: entry {entry.name!r} has {entry.unsourced} passage(s) that do not say where they were found"
            )
    return findings


def statement_numbers(statement: str) -> list[str]:
    """The numbers a "Cited for" statement says of the paper: digits outside
    its opening parenthesis (the pages and sections citing it) and outside
    links; "14" of "14 times fewer", "20" of "roughly 20 times"."""
    body = statement.split("):", 1)[1] if "):" in statement else statement
    body = re.sub(r"\[[^\]]*\]\([^)]*\)", "", body)
    body = re.sub(r"\((?:[Ss]ections?|Table|Figure) [^)]*\)", "", body)  # where in the paper, not what it says
    return [n.rstrip(".,") for n in re.findall(r"(?<![\w.])\d[\d,.]*\d|(?<![\w.])\d(?![\w])", body)]


def main(argv: list[str] | None = None) -> int:
    try:
        pages = opted_in_pages()
        findings = check(pages)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for finding in findings:
        print(finding)
    names = ", ".join(rel_path(p) for p in pages) or "no page"
    if findings:
        print(f"citations: {len(findings)} problem(s) ({names})")
        return 1
    print(f"citations: every citation resolves and every entry is cited and supported ({names})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
