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

import copy
import functools
import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from pagekit import wording
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
# A link in a statement's opening parenthesis: the page, then its sections ("#7-where-...").
STATEMENT_LINK = re.compile(r"\]\((?P<path>[^)#]+)(?:#(?P<section>\d+)-[^)]*)?\)")
# The line under a statement listing its key phrases, a MyST comment (not shown
# on the site): % key phrases: "pre-norm" = "Pre-LN"; "warmup"
KEY_PHRASES = "% key phrases:"
READING_LIST_REASON = "cited here for"  # a reading list's item that says what the paper is cited for
KEY_PHRASE = re.compile(r'"([^"]+)"(?:\s*=\s*"([^"]+)")?')
AUTHOR_YEAR = re.compile(r"\b(?:[A-Z][\w-]+|colleagues|et al\.)(?:,| \(|,? \()\s?(?:19|20)\d\d\b\)?")


@dataclass
class Statement:
    """One "**Cited for**" paragraph: what a page says of the paper, and the
    passages quoted under it (each its text, without the source line)."""

    line: int
    text: str
    passages: list[str] = field(default_factory=list)
    page: str = ""  # the citing page's file name, from the statement's opening parenthesis
    sections: set[int] = field(default_factory=set)  # the page's sections it names
    # The words the citing sentences use for what the paper is cited for: each
    # (phrase on the page, the paper's own term for it in the passage).
    key_phrases: list[tuple[str, str]] = field(default_factory=list)
    key_line: int = 0

    def __post_init__(self):
        opening = self.text.split("):", 1)[0]
        for m in STATEMENT_LINK.finditer(opening):
            if m.group("section"):
                self.sections.add(int(m.group("section")))
            else:
                self.page = Path(m.group("path")).name


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
        """A hash of each passage as quoted (its words and its source line),
        then of each "Cited for" statement with its key phrases: pinned by
        `make golden`, so a trimmed or reworded passage, or a key phrase
        added to let a sentence credit this paper, is a reviewed change."""
        texts = list(self.quoted) + [
            "statement: " + s.text + " key phrases: " + repr(s.key_phrases) for s in self.cited_for
        ]
        return [hashlib.sha256(" ".join(t.split()).encode()).hexdigest()[:16] for t in texts]


@dataclass
class Citation:
    page: Path
    line: int
    text: str
    target: str
    years_beside: list[str] = field(default_factory=list)  # years written right before or after the link
    section: int | None = None  # the page's numbered section it stands in
    sentence: str = ""  # the sentence it stands in (a table's whole row), in plain words


def github_slug(heading: str) -> str:
    """The anchor GitHub and MyST (myst_heading_slug_func = "github") give a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").use(front_matter_plugin)


def read_bibliography(path: Path = BIBLIOGRAPHY) -> dict[str, Entry]:
    """The entries by anchor, read with a Markdown parser (once per text:
    the page check asks for each page)."""
    if not path.is_file():
        raise FileNotFoundError(f"{rel_path(path)}: the bibliography is missing")
    return copy.deepcopy(_parsed_bibliography(str(path), path.read_text(encoding="utf-8")))


@functools.lru_cache(maxsize=4)
def _parsed_bibliography(path_name: str, text: str) -> dict[str, Entry]:
    path = Path(path_name)
    tokens = parser().parse(text)
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
            elif token.content.startswith(KEY_PHRASES):
                if not entry.cited_for:
                    raise ValueError(f"{rel_path(path)}:{token.map[0] + 1}: key phrases before any **{CITED_FOR}**")
                statement = entry.cited_for[-1]
                if statement.key_phrases:
                    raise ValueError(
                        f"{rel_path(path)}:{token.map[0] + 1}: a second key-phrases line for one statement"
                    )
                statement.key_line = token.map[0] + 1
                statement.key_phrases = [
                    (page, paper or page) for page, paper in KEY_PHRASE.findall(token.content[len(KEY_PHRASES) :])
                ]
                if not statement.key_phrases:
                    raise ValueError(f"{rel_path(path)}:{statement.key_line}: a key-phrases line with no quoted phrase")
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
    section: int | None = None
    row: list[Citation] = []  # the citations of the table row being read, and its cells
    cells: list[str] = []
    tokens = parser().parse(lines)
    for k, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            number = re.match(r"(\d+)\.", tokens[k + 1].content)
            section = int(number.group(1)) if number else None
        if token.type == "tr_open":
            row, cells = [], []
        if token.type == "tr_close":
            for citation in row:
                citation.sentence = wording.clean(" | ".join(cells))
        if token.type != "inline" or not token.children:
            continue
        in_row = tokens[k - 1].type in ("td_open", "th_open")
        if in_row:
            cells.append(token.content)
        sentence_of = citing_sentences(token.content)
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
                    last = Citation(page, link_line, link_text, in_link, YEAR.findall(before[-YEAR_REACH:]), section)
                    last.sentence = next(sentence_of, "")
                    citations.append(last)
                    if in_row:
                        row.append(last)
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


BIBLIOGRAPHY_LINK = re.compile(r"\[[^\]]*\]\([^)#\s]*bibliography\.md#(?P<slug>[\w-]+)\)")


def citing_sentences(content: str):
    """For each link into the bibliography in a paragraph's source, in order:
    the words of the sentence it stands in (wording's sentences, cleaned)."""
    spans = wording.sentences(content)
    for m in BIBLIOGRAPHY_LINK.finditer(content):
        raw = next((text for offset, text in reversed(spans) if offset <= m.start()), content)
        sentence = wording.clean(raw)
        # A reading list's item opens with the citation alone ("Ba, Kiros and
        # Hinton (2016)."): what it is cited for is the rest of the item.
        yield wording.clean(content) if sentence.rstrip(".") == wording.clean(m.group()) else sentence


def cited_passages(page: Path, bibliography: Path = BIBLIOGRAPHY) -> dict[str, list[str]]:
    """For each entry ``page`` cites: the hashes of its quoted passages
    (Entry.passage_digests), which `make golden` pins in the page's
    golden record."""
    entries = read_bibliography(bibliography)
    # The link targets alone: the page check calls this for every page, and a
    # full parse of the page (citations_and_mentions) is most of its cost.
    targets = {m.group("slug") for m in BIBLIOGRAPHY_LINK.finditer(page.read_text(encoding="utf-8"))}
    return {slug: entries[slug].passage_digests() for slug in sorted(targets & set(entries))}


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
        reading_list = reading_list_section(page)
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
            findings += check_citing_sentence(citation, entry, where, reading_list)
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
            if not statement.key_phrases:
                findings.append(
                    f"{rel_path(bibliography)}:{statement.line}: entry {entry.name!r}: the statement lists no key "
                    f'phrases (a line under it: {KEY_PHRASES} "phrase on the page" = "the paper\'s term")'
                )
            passage_words = wording.clean(said).lower()
            for phrase, term in statement.key_phrases:
                if " ".join(term.lower().split()) not in passage_words:
                    findings.append(
                        f"{rel_path(bibliography)}:{statement.key_line}: entry {entry.name!r}: the key phrase "
                        f"{phrase!r} stands for {term!r}, which no passage quoted under its statement says"
                    )
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


def check_citing_sentence(citation: Citation, entry: Entry, where: str, reading_list: int | None) -> list[str]:
    """A citation stands in a section one of its entry's statements names
    for that page (a page's opening and its reading list restate the
    sections' citations: any statement for the page covers them), and its
    sentence says one of that statement's key phrases: a finding credited to
    the wrong, still cited, paper says none of that paper's phrases. A
    reading list's item that only names the paper says nothing to check."""
    page = citation.page.name
    for_page = [s for s in entry.cited_for if s.page == page]
    restating = citation.section in (None, reading_list)
    fitting = for_page if restating else [s for s in for_page if citation.section in s.sections]
    if not fitting:
        return [
            f"{where}: {entry.name!r} is cited in section {citation.section}, but no statement of the entry is for "
            f"that section of {page} (its statements name "
            + ("; ".join(f"sections {sorted(s.sections)}" for s in for_page) or "no section of the page")
            + "): add the section to the statement that says what this sentence cites it for"
        ]
    said = citation.sentence.lower()
    if citation.section is not None and citation.section == reading_list and READING_LIST_REASON not in said:
        return []
    phrases = [phrase for s in fitting for phrase, _ in s.key_phrases]
    if phrases and not any(phrase.lower() in said for phrase in phrases):
        return [
            f"{where}: the sentence citing {entry.name!r} says none of the key phrases of what the entry is cited "
            f"for ({', '.join(repr(p) for p in phrases)}): {wording.shorten(citation.sentence)}"
        ]
    return []


def reading_list_section(page: Path) -> int | None:
    """The page's reading list: the numbered section whose heading says where to read next or further reading."""
    m = re.search(r"^## (\d+)\. (?:Where to read next|Further reading)\b", page.read_text(encoding="utf-8"), re.M)
    return int(m.group(1)) if m else None


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
