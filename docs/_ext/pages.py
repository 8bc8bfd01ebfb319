"""The site's pages, discovered rather than named, and what the site
computes from a page's source: its title, its opening sentence, its
front-matter options, its reading time, its measured hands-on time, its
robustness report. Shared by the extensions; not an extension itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sphinx.errors import SphinxError

DOCS = Path(__file__).resolve().parents[1]
REPO = DOCS.parent
FIGURES = REPO / "figures"


class SiteError(SphinxError):
    category = "Site build error"


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

    path = FIGURES / page / "hands-on.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def page_facts(page: str) -> dict[str, str]:
    """The options of the page's {page-facts} block (level, subjects, after)."""
    markdown = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    block = re.search(r"^```\{page-facts\}[^\n]*\n(.*?)^```\s*$", markdown, flags=re.S | re.M)
    if not block:
        return {}
    return dict(re.findall(r"^:([a-z-]+):\s*(.*)$", block.group(1), flags=re.M))


def inside_repo(path: Path) -> bool:
    try:
        path.resolve().relative_to(REPO)
    except ValueError:
        return False
    return True


def section_titles(page: str) -> dict[int, str]:
    """Numbered section headings of a page ("## 3. Batch norm ...") by number."""
    text = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    return {int(n): title.strip() for n, title in re.findall(r"^## (\d+)\. (.+)$", text, re.M)}


def github_slug(title: str) -> str:
    """The anchor MyST gives a heading (myst_heading_slug_func = "github")."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def robustness_link(page: str, refdoc: str, text: str):
    """A link to the page's section of the site's robustness page."""
    from docutils import nodes
    from sphinx import addnodes

    xref = addnodes.pending_xref(
        "",
        refdomain="std",
        reftype="ref",
        reftarget=f"robustness-{page}",
        refexplicit=True,
        refwarn=True,
        refdoc=refdoc,
    )
    xref += nodes.inline("", text)
    return xref
