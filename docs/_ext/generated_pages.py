"""The two pages the site writes itself: the index (every page, in reading
order, with its subjects, reading and hands-on times and a link to its
robustness summary) and the robustness page (each page's claims in words,
and its whole report). A page source holds a fenced block ```{NAME}``` that
is replaced by the generated Markdown; a page's link to its report file
leads to that report's section of the robustness page."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sphinx import addnodes
from sphinx.transforms import SphinxTransform

from site_ext.pages import (
    REPO,
    ROBUSTNESS_DOC,
    FIGURES,
    SiteError,
    duration,
    github_slug,
    hands_on,
    page_facts,
    page_summary,
    page_title,
    robustness_link,
    reading_minutes,
    reading_order,
    report_file,
    section_titles,
    site_pages,
)


def _index_entry(number: int, page: str) -> str:
    facts = page_facts(page)
    minutes, _words, _figures = reading_minutes(page)
    record = hands_on(page)
    times = f"reading about {minutes} min"
    if record:
        times += f"; rerunning its experiments about {duration(record['cpu_seconds'])} of CPU time"
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

    path = FIGURES / page / "robustness.json"
    if not path.is_file():
        return ""
    data = json.loads(path.read_text(encoding="utf-8"))
    titles, home = section_titles(page), _home_sections(page)
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
        link = f"[{where}](../{page}.md#{github_slug(f'{number}. {titles[number]}')})" if number in titles else where
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
    folded block they cannot be the site's sections). The report's own title
    (its `#`) is dropped: the page's section for it (an h2) stands in its
    place, so the report's `##` sections are h3s, one level down, and no
    level is skipped (a screen reader's list of headings read h2 straight to
    h4: site review round 3, L9)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"\A\s*# [^\n]*\n", "", text)
    text = _HEADING_LINE.sub(lambda m: "#" * min(len(m.group(1)) + 1, 6) + " " + m.group(2), text)
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
            xref = robustness_link(match.group(1), self.env.docname, node.astext())
            node.replace_self(xref)


def setup(app):
    app.connect("source-read", _generate)
    app.add_transform(RobustnessReportLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
