"""The page check behind `make check`: every number in a page's prose must be
a number that the page section's own script printed.

Reads each page with markdown-it-py (the parser under MyST), splits it by its
numbered `## N. Title` sections, and extracts every number in the prose
(code blocks, inline code, link targets and image paths are skipped; image alt
text counts as prose). Each number must equal the text of a quote registered
by the section's scripts (`SECTION_SCRIPTS` in the page package), a quote the
page declares shared, or a structural number the page allows ("section 4").
It also reports quotes that nothing uses (neither prose, code nor figures).

A number that no script prints gets a suggestion: the quote whose golden text
it equals (a stale number: the quote has moved on) or else the nearest printed
value. `--fix` rewrites the stale ones whose new text is unambiguous.
Exit status: 0 clean, 1 mismatches, 2 bad input (malformed page, missing
numbers file).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from page_registry import page_config, page_packages

REPO_ROOT = Path(__file__).resolve().parents[2]
DIAGRAMS_DIR = REPO_ROOT / "docs" / "diagrams"
GOLDEN_DIR = REPO_ROOT / "tests" / "golden"  # <page>/<section>.json, written by make golden
UNICODE_MINUS = "\u2212"

# One number as prose writes it: a power (2^-24), or a signed decimal with
# optional thousands separators, exponent and percent sign. A number glued to
# a word ("float16", "x_3"), a decimal point or a caret is not a number.
NUMBER = re.compile(
    r"(?<![\w.^])"
    r"(?:\d+\^[-+\u2212]?\d+"
    r"|[-+\u2212]?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:[eE][-+\u2212]?\d+)?%?"
    r"|[-+\u2212]?\.\d+(?:[eE][-+\u2212]?\d+)?%?)"
)
SECTION_HEADING = re.compile(r"^(?P<n>\d+)\.\s+\S")
SVG_COMMENT = re.compile(r"<!--(.*?)-->", re.S)


class PageError(Exception):
    """Input the check cannot work with: the message names file and line."""


def normalise(token: str) -> str:
    """The Unicode minus and the hyphen-minus are the same sign."""
    return token.replace(UNICODE_MINUS, "-")


def numbers_in(text: str) -> list[re.Match]:
    return list(NUMBER.finditer(text))


def as_float(text: str) -> float | None:
    """The value a number's text stands for (percent as a fraction)."""
    t = normalise(text).replace(",", "")
    try:
        if "^" in t:
            base, power = t.split("^")
            return float(base) ** float(power)
        if t.endswith("%"):
            return float(t[:-1]) / 100
        return float(t)
    except (ValueError, OverflowError):
        return None


# ---------------------------------------------------------------------------
# What the scripts printed.


@dataclass
class QuoteText:
    script: str
    name: str  # "quote" or "quote[i]" for an element of a vector
    text: str


def quote_texts(quotes: dict) -> list[tuple[str, str]]:
    """(printed name, text) for every element of a numbers/golden record,
    with any Unicode minus in a text read as a hyphen-minus."""
    items = []
    for name, q in quotes.items():
        if isinstance(q["text"], list):
            items.extend((f"{name}[{i}]", normalise(t)) for i, t in enumerate(q["text"]))
        else:
            items.append((name, normalise(q["text"])))
    return items


def load_json(path: Path, what: str, hint: str) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PageError(f"{rel(path)}: {what} is missing: {hint}") from None
    except json.JSONDecodeError as error:
        raise PageError(f"{rel(path)}:{error.lineno}: {what} is not valid JSON ({error.msg}): {hint}") from None


def rel(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------
# What the page says.


@dataclass
class ProseNumber:
    section: int  # 0 = the introduction before the first numbered section
    line: int  # 1-based line in the page file
    token: str  # as written
    ordinal: int  # how many identical tokens precede it on the same line
    structural: bool = False


@dataclass
class CodeBlock:
    section: int
    line: int  # 1-based line of the opening fence
    language: str
    content: str


@dataclass
class ParsedPage:
    path: Path
    sections: dict[int, int] = field(default_factory=dict)  # number -> heading line
    prose: list[ProseNumber] = field(default_factory=list)
    code_numbers: set[str] = field(default_factory=set)
    code_blocks: list[CodeBlock] = field(default_factory=list)


def parse_page(path: Path, structural: tuple[str, ...] = ()) -> ParsedPage:
    """Split the page into numbered sections and collect its prose numbers."""
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PageError(f"{rel(path)}: the page does not exist") from None
    except UnicodeDecodeError as error:
        raise PageError(f"{rel(path)}: the page is not UTF-8 ({error.reason})") from None
    lines = source.splitlines()
    tokens = MarkdownIt("commonmark").enable("table").parse(source)
    page = ParsedPage(path)
    patterns = [re.compile(p) for p in structural]
    section = 0
    seen_on_line: dict[tuple[int, str], int] = {}
    heading_level = None

    for index, token in enumerate(tokens):
        if token.type in ("fence", "code_block"):
            if token.type == "fence" and not fence_is_closed(token, lines):
                raise PageError(
                    f"{rel(path)}:{token.map[0] + 1}: code fence {token.markup!r} opened here is never closed"
                )
            page.code_numbers.update(normalise(m.group()) for m in numbers_in(token.content))
            page.code_blocks.append(CodeBlock(section, token.map[0] + 1, token.info.strip(), token.content))
            continue
        if token.type == "heading_open":
            heading_level = token.tag
            continue
        if token.type == "heading_close":
            heading_level = None
            continue
        if token.type != "inline":
            continue
        content = token.content
        skip_prefix = 0
        if heading_level == "h2":
            match = SECTION_HEADING.match(content)
            if match is None:
                raise PageError(
                    f"{rel(path)}:{token.map[0] + 1}: a level-2 heading must be a numbered section "
                    f"('## N. Title'), got {content!r}"
                )
            number = int(match.group("n"))
            if number in page.sections:
                raise PageError(
                    f"{rel(path)}:{token.map[0] + 1}: section {number} appears twice "
                    f"(first at line {page.sections[number]})"
                )
            if page.sections and number <= max(page.sections):
                raise PageError(f"{rel(path)}:{token.map[0] + 1}: section {number} is out of order")
            page.sections[number] = token.map[0] + 1
            section = number
            skip_prefix = len(match.group("n"))  # the heading's own number is structure
        collect_inline(token, section, skip_prefix, patterns, page, seen_on_line)
    return page


def fence_is_closed(token, lines: list[str]) -> bool:
    start, end = token.map
    if end - start < 2:
        return False
    closing = lines[end - 1].strip()
    char = token.markup[0]
    return closing.startswith(token.markup) and set(closing) == {char}


def collect_inline(token, section, skip_prefix, patterns, page: ParsedPage, seen_on_line) -> None:
    line = token.map[0] + 1
    first = True
    for child in token.children or []:
        if child.type in ("softbreak", "hardbreak"):
            line += 1
            continue
        if child.type == "code_inline":
            page.code_numbers.update(normalise(m.group()) for m in numbers_in(child.content))
            continue
        if child.type == "image":
            # The path is not prose; the alt text is (its children).
            texts = [c.content for c in child.children or [] if c.type == "text"]
        elif child.type == "text":
            texts = [child.content]
        else:
            continue
        for text in texts:
            for match in numbers_in(text):
                if first and skip_prefix and match.start() == 0:
                    continue
                raw = match.group()
                key = (line, raw)
                ordinal = seen_on_line.get(key, 0)
                seen_on_line[key] = ordinal + 1
                structural = any(
                    m.start("n") <= match.start() and match.end() <= m.end("n")
                    for p in patterns
                    for m in p.finditer(text)
                )
                page.prose.append(ProseNumber(section, line, raw, ordinal, structural))
            first = False


# ---------------------------------------------------------------------------
# The check.


@dataclass
class Finding:
    line: int | None  # None: about a quote, not a line of the page
    message: str
    fix: tuple[int, str, int, str] | None = None  # (line, old token, ordinal, new text)


@dataclass
class Report:
    page_path: Path
    findings: list[Finding] = field(default_factory=list)
    numbers_checked: int = 0

    @property
    def ok(self) -> bool:
        return not self.findings

    def lines(self) -> list[str]:
        out = []
        for f in sorted(self.findings, key=lambda f: (f.line is None, f.line or 0)):
            where = f"{rel(self.page_path)}:{f.line}" if f.line is not None else rel(self.page_path)
            out.append(f"{where}: {f.message}")
        return out


def check_page(
    config,
    *,
    page_path: Path | None = None,
    numbers_dir: Path | None = None,
    golden_dir: Path | None = None,
    only_section: int | None = None,
) -> Report:
    """Check one page against its scripts' numbers files.

    ``only_section`` checks a draft that holds a single section.
    """
    page_path = Path(page_path or REPO_ROOT / config.PAGE_FILE)
    numbers_dir = Path(numbers_dir or REPO_ROOT / "figures" / config.PAGE / "numbers")
    golden_dir = Path(golden_dir or GOLDEN_DIR / config.PAGE)
    page = parse_page(page_path, tuple(config.STRUCTURAL))
    report = Report(page_path)

    if only_section is not None and set(page.sections) != {only_section}:
        raise PageError(f"{rel(page_path)}: a draft of section {only_section} must hold exactly that section")
    for number, line in page.sections.items():
        if number not in config.SECTION_SCRIPTS:
            raise PageError(
                f"{rel(page_path)}:{line}: section {number} has no entry in SECTION_SCRIPTS "
                f"of docs/diagrams/{config.__name__}/__init__.py"
            )

    scripts = {s for n in page.sections for s in config.SECTION_SCRIPTS[n]}
    shared = {entry.partition(".")[0] for entry in config.SHARED_QUOTES}
    records = {
        script: load_json(numbers_dir / f"{script}.json", f"the numbers of {script}", "run `make figures` first")
        for script in sorted(scripts | shared)
    }
    numbers = {script: record["quotes"] for script, record in records.items()}
    golden = {}
    for script in sorted(scripts | shared):
        path = golden_dir / f"{script}.json"
        if path.exists():
            golden[script] = load_json(path, f"the golden record of {script}", "run `make golden`")["quotes"]

    shared_texts = []
    for entry in config.SHARED_QUOTES:
        script, _, name = entry.partition(".")
        if name not in numbers[script]:
            raise PageError(f"SHARED_QUOTES names {entry}, which {script} does not register")
        shared_texts += [QuoteText(script, n, t) for n, t in quote_texts({name: numbers[script][name]})]

    def allowed(section: int) -> list[QuoteText]:
        own = [
            QuoteText(script, n, t)
            for script in config.SECTION_SCRIPTS.get(section, ())
            for n, t in quote_texts(numbers[script])
        ]
        return own + shared_texts

    allowed_by_section = {n: allowed(n) for n in set(page.sections) | {0}}
    used_texts: dict[int, set[str]] = {n: set() for n in allowed_by_section}

    for number in page.prose:
        if number.structural:
            continue
        report.numbers_checked += 1
        token = normalise(number.token)
        candidates = allowed_by_section[number.section]
        if any(c.text == token for c in candidates):
            used_texts[number.section].add(token)
            continue
        report.findings.append(unmatched(number, token, config, golden, numbers, candidates))

    # Quotes nothing uses: not in the prose of a section allowed to use them,
    # not in a code block, not drawn in the script's figures.
    figure_dir = numbers_dir.parent
    for script in sorted(scripts):
        record = records[script]
        drawn = figure_strings(figure_dir, record.get("figures", []))
        in_figures = {normalise(m.group()) for string in drawn for m in numbers_in(string)}
        sections_using = [n for n in page.sections if script in config.SECTION_SCRIPTS[n]]
        in_prose = set().union(*(used_texts[n] for n in sections_using)) if sections_using else set()
        for name, text in quote_texts(record["quotes"]):
            if text in in_prose or text in in_figures or text in page.code_numbers:
                continue
            if not is_number(text) and any(text in string for string in drawn):
                continue  # a non-numeric text such as "inf", drawn as it is
            report.findings.append(Finding(
                None,
                f"{script}.{name} ({text}) is used nowhere: not in the prose of section "
                f"{', '.join(map(str, sections_using))}, its figures or a code block; "
                f"quote it or stop registering it",
            ))
    return report


def is_number(text: str) -> bool:
    return NUMBER.fullmatch(text) is not None


def figure_strings(figure_dir: Path, figures: list[str]) -> list[str]:
    """Every string drawn in the figures (matplotlib records each as a comment)."""
    found = []
    for name in figures:
        path = figure_dir / name
        try:
            svg = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise PageError(f"{rel(path)}: figure listed in the numbers file is missing: run `make figures`") from None
        found += [comment.strip() for comment in SVG_COMMENT.findall(svg)]
    return found


def unmatched(number: ProseNumber, token: str, config, golden, numbers, candidates) -> Finding:
    """Explain a prose number no script prints, with the most useful fix."""
    where = f"section {number.section}" if number.section else "the introduction"
    stale = []
    for script in config.SECTION_SCRIPTS.get(number.section, ()):
        old_texts = dict(quote_texts(golden.get(script, {})))
        new_texts = dict(quote_texts(numbers.get(script, {})))
        for name, old in old_texts.items():
            if old == token and name in new_texts and new_texts[name] != old:
                stale.append((script, name, new_texts[name]))
    if stale:
        described = "; ".join(f"{s}.{n} was {token}, now {new}" for s, n, new in stale)
        news = {new for _, _, new in stale}
        fix = (number.line, number.token, number.ordinal, news.pop()) if len(news) == 1 else None
        hint = " (`make fix` applies it)" if fix else " (ambiguous: fix by hand)"
        return Finding(number.line, f"stale number {number.token} in {where}: {described}{hint}", fix)
    message = f"{number.token} in {where} is not a number its scripts print"
    value = as_float(token)
    scored = [
        (abs(as_float(c.text) - value) / max(abs(value), 1e-300), c)
        for c in candidates
        if value is not None and as_float(c.text) is not None
    ]
    if scored:
        _, nearest = min(scored, key=lambda sc: sc[0])
        message += f"; nearest printed: {nearest.script}.{nearest.name} = {nearest.text}"
    elif not candidates:
        message += f" (no script serves {where}; is it a structural number to allow?)"
    return Finding(number.line, message)


def apply_fixes(path: Path, findings: list[Finding]) -> int:
    """Replace each stale token on its line; returns how many were fixed."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    fixed = 0
    for finding in findings:
        if finding.fix is None:
            continue
        line, old, ordinal, new = finding.fix
        matches = [m for m in numbers_in(lines[line - 1]) if m.group() == old]
        if ordinal < len(matches):
            m = matches[ordinal]
            new_text = new.replace("-", UNICODE_MINUS) if old.startswith(UNICODE_MINUS) else new
            lines[line - 1] = lines[line - 1][: m.start()] + new_text + lines[line - 1][m.end():]
            fixed += 1
    path.write_text("".join(lines), encoding="utf-8")
    return fixed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("pages", nargs="*", help="page packages under docs/diagrams (default: all)")
    parser.add_argument("--fix", action="store_true", help="rewrite stale numbers whose new text is unambiguous")
    parser.add_argument(
        "--section-draft", nargs=2, metavar=("N", "FILE"),
        help="check a draft file holding only section N of the page",
    )
    args = parser.parse_args(argv)
    packages = args.pages or page_packages()
    if args.section_draft and len(packages) != 1:
        parser.error("--section-draft needs exactly one page package")
    draft = {}
    if args.section_draft:
        draft = {"only_section": int(args.section_draft[0]), "page_path": Path(args.section_draft[1])}
    status = 0
    for package in packages:
        try:
            config = page_config(package)
            report = check_page(config, **draft)
            if args.fix:
                fixed = apply_fixes(report.page_path, report.findings)
                if fixed:
                    print(f"{rel(report.page_path)}: fixed {fixed} stale number(s)")
                    report = check_page(config, **draft)
        except PageError as error:
            print(f"error: {error}", file=sys.stderr)
            status = max(status, 2)
            continue
        for line in report.lines():
            print(line)
        if report.ok:
            print(f"{rel(report.page_path)}: all {report.numbers_checked} numbers match their scripts")
        else:
            print(f"{rel(report.page_path)}: {len(report.findings)} problem(s)", file=sys.stderr)
            status = max(status, 1)
    return status


if __name__ == "__main__":
    sys.exit(main())
