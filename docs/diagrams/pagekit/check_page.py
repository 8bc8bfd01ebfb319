"""The page check behind `make check`: every number in a page's prose must be
a number that the page section's own script printed, in the house style.

Reads each page with markdown-it-py (the parser under MyST) and MyST's dollar
maths and colon fences, splits it by its numbered `## N. Title` sections, and
extracts every number in the prose: paragraphs, lists, tables, headings,
image alt text, maths (`$...$`, `$$...$$`), and the captions and text of
colon-fence directives (`:::{figure}`, `:::{dropdown}`). Code (fenced,
inline), link targets and directive options other than `:alt:` are skipped.
Each number must equal the text of a quote registered by the section's
scripts (`SECTION_SCRIPTS` in the page package), a quote the page declares
shared, or a structural number the page allows ("section 4"). Inside maths,
the integers 0, 1 and 2 and superscripts/subscripts are structural (the 2 in
x², the ½ of a loss).

It refuses a page whose structure is broken (a registered section missing,
empty, out of order or swallowed by a code block; an indented code block;
prose hidden in a backtick-fenced directive), and numbers files that are not
the page's own run or are stale for their inputs (a section that failed, or
changed after its numbers were made). It checks the number style (minus
sign, 4.77 × 10⁻⁶, 2⁻¹⁴⁹, thousands separators), that the prose still says
what the claims back (the `% backs` lines beside the prose), that each number is still the quote
the golden record pinned at its place (so swapping two numbers or dropping a
sign is caught), and lists quotes nothing uses. The words around the
numbers are checked too (wording.py): direction, scope, one-run, causal and
negation words, wherever they stand in a sentence of a section with scripts,
need a claim, a comparison the quotes verify, or the allowlist; the unit after a
number and the runs its sentence names must be its quote's; each figure's
caption says the phrases its script declares.

A number no script prints gets a suggestion: the quote whose golden text it
equals (a stale number) or else the nearest printed value. `--fix` rewrites
the stale ones whose new text is unambiguous. Exit status: 0 clean,
1 mismatches, 2 bad input, 3 internal error.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin

from pagekit import numeric_env
from pagekit import inputs as section_inputs
from pagekit import check_citations, page_rules, wording
from pagekit.golden import allowlist_row
from pagekit.registry import PageNameError, claim_scripts, package_for_page, page_config, page_packages, rel_path

from pagekit.paths import REPO_ROOT
from pagekit.paths import golden_dir as golden_path

UNICODE_MINUS = "\u2212"
EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

SUP = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_SUP_DIGITS = str.maketrans("0123456789-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")
_FROM_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")

# One number as prose writes it: 4.77 × 10⁻⁶ (house style), a power 2⁻¹⁴⁹, or
# a signed decimal with optional thousands separators and percent sign; the
# old forms 4.77e-06 and 2^-24 are read too, to be reported. A number glued to
# a word ("float16", "x_3"), a decimal point or a caret is not a number.
SIGN = r"[-+\u2212]?"
NUMBER = re.compile(
    r"(?<![\w.^\u00b2\u00b3\u00b9\u2070-\u209f])"
    rf"(?:{SIGN}\d+(?:\.\d+)? \u00d7 10[⁻⁺]?[{SUP}]+"  # 4.77 × 10⁻⁶
    rf"|\d+[⁻⁺]?[{SUP}]+"  # 2⁻¹⁴⁹, 10⁶
    r"|\d+\^[-+\u2212]?\d+"  # 2^-24 (old form, reported)
    rf"|{SIGN}(?:\d{{1,3}}(?:,\d{{3}})+(?!\d)|\d+)(?:\.\d+)?(?:[eE][-+\u2212]?\d+)?%?"
    rf"|{SIGN}\.\d+(?:[eE][-+\u2212]?\d+)?%?)"
)
# Numbers inside maths: plain decimals; m \times 10^{e} and powers of 2 and 10
# read as prose writes them.
MATH_SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*\\times\s*10\^\{?([-+\u2212]?\d+)\}?")
MATH_POWER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\^\{?([-+\u2212]?\d+)\}?")
MATH_NUMBER = re.compile(r"(?<![\w.^_\\])(?<!\^\{)(?<!_\{)\d+(?:\.\d+)?(?![\w])")
SECTION_HEADING = re.compile(r"^(?P<n>\d+)\.\s+\S")
HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s+\d+\.\s")
SVG_COMMENT = re.compile(r"<!--(.*?)-->", re.S)
# Directives whose body is prose; in a backtick fence MyST would still render
# them, but the checker (rightly) reads backtick fences as code.
PROSE_DIRECTIVES = {
    "figure",
    "table",
    "dropdown",
    "note",
    "tip",
    "warning",
    "important",
    "admonition",
    "seealso",
    "tab-set",
    "tab-item",
    "card",
    "grid",
    "grid-item-card",
    "margin",
    "sidebar",
    "topic",
    "epigraph",
    "caution",
    "attention",
    "hint",
    "danger",
    "error",
}
CODE_DIRECTIVES = {
    "literalinclude",
    "code-block",
    "code",
    "code-cell",
    "math",
    "raw",
    "include",
    "eval-rst",
    "toctree",
    "list-table",
}


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
        if " \u00d7 " in t:
            mantissa, power = t.split(" \u00d7 ")
            return float(mantissa) * 10.0 ** int(power[2:].translate(_FROM_SUP))
        if any(c in SUP + "⁻⁺" for c in t):
            base = t.rstrip(SUP + "⁻⁺")
            return float(base) ** int(t[len(base) :].translate(_FROM_SUP))
        if "^" in t:
            base, power = t.split("^")
            return float(base) ** float(power)
        if t.endswith("%"):
            return float(t[:-1]) / 100
        return float(t)
    except (ValueError, OverflowError):
        return None


def style_problem(token: str, seed_like: bool = False) -> str | None:
    """How a prose number breaks the house number style, if it does
    (``seed_like``: an argument such as rng(1212), written as code writes it)."""
    if token.startswith("-"):
        return f"write the minus sign: {UNICODE_MINUS}{token[1:]}"
    if "^" in token:
        base, power = token.split("^")
        return f"write the power as {base}{power.translate(_SUP_DIGITS).replace('−', '⁻')}"
    match = re.fullmatch(r"([-+\u2212]?[\d.]+)[eE]([-+\u2212]?\d+)", token)
    if match:
        mantissa, power = match.groups()
        power = str(int(normalise(power)))
        return f"write scientific numbers as {mantissa} \u00d7 10{power.translate(_SUP_DIGITS)}"
    digits = re.fullmatch(r"[-+\u2212]?(\d+)(?:\.\d+)?%?", token)
    if digits and len(digits.group(1)) >= 4 and not seed_like:
        return (
            f"write thousands separators: {int(digits.group(1)):,}"
            + token[len(digits.group(1)) + (1 if token[0] in "-+\u2212" else 0) :]
        )
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


def load_json(path: Path, what: str, hint: str):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PageError(f"{rel(path)}: {what} is missing: {hint}") from None
    except IsADirectoryError:
        raise PageError(f"{rel(path)}: {what} is a directory, not a file: {hint}") from None
    except UnicodeDecodeError as error:
        raise PageError(f"{rel(path)}: byte {error.start}: {what} is not UTF-8: {hint}") from None
    except json.JSONDecodeError as error:
        raise PageError(f"{rel(path)}:{error.lineno}: {what} is not valid JSON ({error.msg}): {hint}") from None
    except OSError as error:
        raise PageError(f"{rel(path)}: cannot read {what} ({error.strerror})") from None


def validate_record(record, path: Path, hint: str) -> dict:
    """A numbers or golden record of the right shape, or one clear error."""

    def bad(why: str):
        return PageError(f"{rel(path)}: {why}: {hint}")

    if not isinstance(record, dict) or not isinstance(record.get("quotes"), dict):
        raise bad('not a numbers record (an object with a "quotes" object)')
    for name, q in record["quotes"].items():
        if not isinstance(q, dict) or "text" not in q or "value" not in q:
            raise bad(f'quote {name!r} has no "value" and "text"')
        text, value = q["text"], q["value"]
        if isinstance(text, list):
            if not all(isinstance(t, str) for t in text) or not isinstance(value, list) or len(value) != len(text):
                raise bad(f"quote {name!r}: a vector needs as many text strings as values")
        elif not isinstance(text, str):
            raise bad(f'quote {name!r}: "text" must be a string, got {type(text).__name__}')
    if not isinstance(record.get("figures", []), (list, dict)) or not isinstance(record.get("claims", []), list):
        raise bad('"figures" must be a list (or, in the golden record, an object) and "claims" a list')
    return record


rel = rel_path  # the one repo-relative form of a path in messages


# ---------------------------------------------------------------------------
# What the page says.


@dataclass
class ProseNumber:
    section: int  # 0 = the introduction before the first numbered section
    line: int  # 1-based line in the page file
    token: str  # as written
    ordinal: int  # how many identical tokens precede it on the same line
    structural: bool = False
    in_math: bool = False
    seed_like: bool = False  # an argument such as rng(1212)


@dataclass
class CodeBlock:
    section: int
    line: int  # 1-based line of the opening fence
    language: str
    content: str


@dataclass
class Passage:
    """One block of prose as written (paragraph, list item, table cell,
    caption or alt text), for the wording check: its first line and, for a
    caption or alt text, the SVG of its figure."""

    section: int
    line: int  # 1-based line of its first character
    text: str  # the Markdown source of the inline text
    kind: str = "prose"  # "prose", "caption" or "alt"
    figure: str = ""  # the SVG file name a caption or alt text describes


@dataclass(frozen=True)
class Backing:
    """A `% backs <script>:<claim key> "phrase" ...` line (a MyST comment,
    not rendered): the phrases of the prose just above it that rest on that
    claim of that script. The claim phrases live here, beside the prose they
    back, so rewording a sentence reruns no section."""

    section: int
    line: int
    script: str
    key: str
    phrases: tuple[str, ...]


BACKS_LINE = re.compile(r"^\s*backs\s+(?P<script>\w+):(?P<key>[\w-]+)\s+(?P<phrases>\".*)$")
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def parse_backing(comment: str, section: int, line: int, path: Path) -> Backing | None:
    """A `% backs` comment line, or None for any other comment."""
    if not re.match(r"\s*backs\b", comment):
        return None
    match = BACKS_LINE.match(comment)
    phrases = QUOTED.findall(match.group("phrases")) if match else []
    if not match or QUOTED.sub("", match.group("phrases")).strip() or not phrases:
        raise PageError(
            f'{rel(path)}:{line}: a backs line reads `% backs <script>:<claim key> "phrase" "phrase" ...`, '
            f"got {comment.strip()!r}"
        )
    try:
        decoded = tuple(json.loads(p) for p in phrases)
    except json.JSONDecodeError as problem:
        raise PageError(
            f"{rel(path)}:{line}: a backs line's phrase is not a valid quoted string ({problem.msg}; "
            "write a backslash as \\\\)"
        ) from None
    return Backing(section, line, match.group("script"), match.group("key"), decoded)


@dataclass(frozen=True)
class FigureSays:
    """A `% figure says "phrase" ...` line just above a {figure}: what the
    figure's caption and its alt text must both say (each phrase backed by
    a claim of the section, through a `% backs` line), so the two cannot
    tell the reader opposite things."""

    section: int
    line: int
    phrases: tuple[str, ...]
    figure: str = ""  # the SVG of the {figure} that follows


SAYS_LINE = re.compile(r"^\s*figure\s+says\s+(?P<phrases>\".*)$")


def parse_figure_says(comment: str, section: int, line: int, path: Path) -> FigureSays | None:
    """A `% figure says` comment line, or None for any other comment."""
    if not re.match(r"\s*figure\s+says\b", comment):
        return None
    match = SAYS_LINE.match(comment)
    phrases = QUOTED.findall(match.group("phrases")) if match else []
    if not match or QUOTED.sub("", match.group("phrases")).strip() or not phrases:
        raise PageError(
            f'{rel(path)}:{line}: a figure-says line reads `% figure says "phrase" "phrase" ...`, '
            f"got {comment.strip()!r}"
        )
    try:
        decoded = tuple(json.loads(p) for p in phrases)
    except json.JSONDecodeError as problem:
        raise PageError(
            f"{rel(path)}:{line}: a figure-says phrase is not a valid quoted string ({problem.msg})"
        ) from None
    return FigureSays(section, line, decoded)


@dataclass
class ParsedPage:
    path: Path
    sections: dict[int, int] = field(default_factory=dict)  # number -> heading line
    prose: list[ProseNumber] = field(default_factory=list)
    code_blocks: list[CodeBlock] = field(default_factory=list)
    text: dict[int, list[str]] = field(default_factory=dict)  # section -> its prose, for backed phrases
    passages: list[Passage] = field(default_factory=list)  # the prose with lines, for the wording check
    backing: list[Backing] = field(default_factory=list)  # the `% backs` lines
    figure_says: list[FigureSays] = field(default_factory=list)  # the `% figure says` lines, with their figures
    newline: str = "\n"


def markdown_parser() -> MarkdownIt:
    return (
        MarkdownIt("commonmark")
        .enable("table")
        .use(dollarmath_plugin, allow_space=True, double_inline=True)
        .use(colon_fence_plugin)
        .use(myst_block_plugin)  # MyST's `%` comment lines: the `% backs` lines
    )


def read_page(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PageError(f"{rel(path)}: the page does not exist") from None
    except IsADirectoryError:
        raise PageError(f"{rel(path)}: is a directory, not a page") from None
    except OSError as error:
        raise PageError(f"{rel(path)}: cannot read the page ({error.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise PageError(
            f"{rel(path)}:{line}: byte {column} of the line is not UTF-8 ({error.reason}); save the page as UTF-8"
        ) from None


def parse_page(path: Path, structural: tuple[str, ...] = ()) -> ParsedPage:
    """Split the page into numbered sections and collect its prose numbers."""
    source = read_page(path)
    page = ParsedPage(path, newline="\r\n" if "\r\n" in source else "\n")
    lines = source.splitlines()
    state = {"section": 0, "seen": {}, "figure": ""}
    patterns = [re.compile(p) for p in structural]
    walk_tokens(markdown_parser().parse(source), lines, 0, page, patterns, state)
    if state.get("says"):
        raise PageError(f"{rel(path)}:{state['says'][0].line}: a `% figure says` line with no {{figure}} after it")
    return page


def walk_tokens(tokens, lines: list[str], line_offset: int, page: ParsedPage, patterns, state) -> None:
    path = page.path
    heading_level = None
    for token in tokens:
        first_line = (token.map[0] + 1 + line_offset) if token.map else None
        pending = state.get("says")
        if pending and token.type in ("inline", "fence", "math_block", "colon_fence", "heading_open"):
            if not (token.type == "colon_fence" and directive_name(token.info) == "figure"):
                raise PageError(
                    f"{rel(path)}:{pending[0].line}: a `% figure says` line stands just above the {{figure}} "
                    "it describes, with nothing between"
                )
        if token.type == "code_block":
            raise PageError(
                f"{rel(path)}:{first_line}: an indented code block (four spaces): its numbers "
                "would go unchecked; unindent it, or fence real code with ```"
            )
        if token.type == "fence":
            if not fence_is_closed(token, lines, line_offset):
                raise PageError(f"{rel(path)}:{first_line}: code fence {token.markup!r} opened here is never closed")
            swallowed = [i for i, l in enumerate(token.content.splitlines()) if HEADING_LINE.match(l)]
            if swallowed:
                raise PageError(
                    f"{rel(path)}:{first_line + 1 + swallowed[0]}: a section heading inside the code "
                    f"fence opened at line {first_line}: is a ``` missing or stray?"
                )
            directive = directive_name(token.info)
            if directive in PROSE_DIRECTIVES:
                raise PageError(
                    f"{rel(path)}:{first_line}: write {{{directive}}} with a colon fence (:::), "
                    "so its text is read as prose and checked"
                )
            page.code_blocks.append(CodeBlock(state["section"], first_line, token.info.strip(), token.content))
            continue
        if token.type == "colon_fence":
            walk_directive(token, lines, line_offset, page, patterns, state)
            continue
        if token.type == "math_block":
            collect_math(token.content, state["section"], first_line + 1, page, state)
            continue
        if token.type == "myst_line_comment":  # consecutive `%` lines come as one token
            for i, comment in enumerate(token.content.split("\n")):
                backing = parse_backing(comment, state["section"], first_line + i, path)
                if backing:
                    page.backing.append(backing)
                says = parse_figure_says(comment, state["section"], first_line + i, path)
                if says:
                    state.setdefault("says", []).append(says)
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
                    f"{rel(path)}:{first_line}: a level-2 heading must be a numbered section "
                    f"('## N. Title'), got {content!r}"
                )
            number = int(match.group("n"))
            if number in page.sections:
                raise PageError(
                    f"{rel(path)}:{first_line}: section {number} appears twice (first at line {page.sections[number]})"
                )
            if page.sections and number <= max(page.sections):
                raise PageError(
                    f"{rel(path)}:{first_line}: section {number} is out of order (after section {max(page.sections)})"
                )
            page.sections[number] = first_line
            state["section"] = number
            skip_prefix = len(match.group("n"))  # the heading's own number is structure
        else:
            page.text.setdefault(state["section"], []).append(content)
            add_passages(token, content, first_line, page, state)
        collect_inline(token, lines, line_offset, skip_prefix, patterns, page, state)


def directive_name(info: str) -> str | None:
    match = re.match(r"\s*\{([\w-]+)\}", info or "")
    return match.group(1) if match else None


def walk_directive(token, lines, line_offset, page: ParsedPage, patterns, state) -> None:
    """A colon-fence directive: its `:alt:` option and its body are prose
    (parsed as Markdown); other options and code directives are not."""
    start = token.map[0] + line_offset  # 0-based line of the opening fence
    name = directive_name(token.info)
    if name in CODE_DIRECTIVES:
        page.code_blocks.append(CodeBlock(state["section"], start + 1, token.info.strip(), token.content))
        return
    if name == "table":  # a table's caption is its argument: prose
        caption = re.sub(r"^\s*\{table\}", "", token.info or "").strip()
        if caption:
            page.text.setdefault(state["section"], []).append(caption)
            page.passages.append(Passage(state["section"], start + 1, caption, "caption"))
            collect_text(caption, state["section"], start + 1, [], patterns, page, state)
    body_lines = token.content.splitlines()
    skip = 0
    for i, line in enumerate(body_lines):
        option = re.match(r"^:([\w-]+):\s*(.*)$", line)
        if option is None:
            break
        skip = i + 1
        if option.group(1) == "alt":
            page.text.setdefault(state["section"], []).append(option.group(2))
            page.passages.append(
                Passage(
                    state["section"],
                    start + 2 + i,
                    option.group(2),
                    "alt",
                    figure_of(token.info) if name == "figure" else "",
                )
            )
            collect_text(option.group(2), state["section"], start + 2 + i, [], patterns, page, state)
    body = "\n".join(body_lines[skip:])
    outer_figure = state["figure"]
    if name == "figure":  # its body is the caption of this SVG
        state["figure"] = figure_of(token.info)
        # The `% figure says` lines just above it are this figure's.
        page.figure_says += [replace(says, figure=state["figure"]) for says in state.pop("says", [])]
    walk_tokens(markdown_parser().parse(body), lines, start + 1 + skip, page, patterns, state)
    state["figure"] = outer_figure


def figure_of(info: str) -> str:
    """The SVG file name a {figure} directive shows."""
    return Path(re.sub(r"^\s*\{figure\}", "", info or "").strip()).name


def add_passages(token, content: str, line: int, page: ParsedPage, state) -> None:
    """The inline text as a passage (a figure's caption inside a figure), and
    each image's alt text as the alt text of its SVG."""
    kind = "caption" if state["figure"] else "prose"
    page.passages.append(Passage(state["section"], line, content, kind, state["figure"]))
    for child in token.children or []:
        if child.type == "image":
            alt = "".join(c.content for c in child.children or [] if c.type == "text")
            src = Path(child.attrGet("src") or "").name
            at = content.find(alt) if alt else -1
            page.passages.append(
                Passage(state["section"], line + (content.count("\n", 0, at) if at > 0 else 0), alt, "alt", src)
            )


def fence_is_closed(token, lines: list[str], line_offset: int) -> bool:
    start, end = token.map
    if end - start < 2:
        return False
    index = end - 1 + line_offset
    closing = lines[index].strip() if index < len(lines) else ""
    char = token.markup[0]
    return closing.startswith(token.markup) and set(closing) == {char}


def collect_inline(token, lines, line_offset, skip_prefix, patterns, page: ParsedPage, state) -> None:
    """Numbers of one inline token, each with its true line: text children are
    located in the source, so a code span or link spanning lines cannot
    shift the line numbers of what follows."""
    start = token.map[0] + line_offset
    source = "\n".join(lines[start : token.map[1] + line_offset])
    cursor = 0
    line = start + 1
    first = True
    for child in token.children or []:
        if child.type in ("softbreak", "hardbreak"):
            found = source.find("\n", cursor)
            if found >= 0:
                cursor = found + 1
                line = start + 1 + source.count("\n", 0, cursor)
            continue
        if child.type == "math_inline" or child.type == "math_inline_double":
            collect_math(child.content, state["section"], line, page, state)
            continue
        if child.type == "image":
            texts = [c.content for c in child.children or [] if c.type == "text"]  # alt text is prose
        elif child.type == "text":
            texts = [child.content]
        else:
            continue
        for text in texts:
            found = source.find(text, cursor) if text else -1
            if found >= 0:
                line = start + 1 + source.count("\n", 0, found)
                cursor = found + len(text)
            collect_text(text, state["section"], line, [skip_prefix] if first else [], patterns, page, state)
            first = False


def collect_text(text, section, line, skip_prefix, patterns, page: ParsedPage, state) -> None:
    for match in numbers_in(text):
        if skip_prefix and skip_prefix[0] and match.start() == 0:
            continue
        raw = match.group()
        structural = any(
            m.start("n") <= match.start() and match.end() <= m.end("n") for p in patterns for m in p.finditer(text)
        )
        add_number(
            page,
            state,
            section,
            line,
            raw,
            structural,
            in_math=False,
            seed_like=bool(re.search(r"\w\($", text[: match.start()])),
        )


def collect_math(content: str, section: int, line: int, page: ParsedPage, state) -> None:
    """Numbers inside maths, read as prose writes them: 1.19 \\times 10^{-7}
    as 1.19 × 10⁻⁷, 10^{-6} and 2^{20} as 10⁻⁶ and 2²⁰; in 1.07^2 the base is
    the number and the exponent structure. Other superscripts and subscripts,
    and the integers 0, 1 and 2, are structure (the 2 in x², the ½ of a loss)."""
    page.text.setdefault(section, []).append(content)
    covered: list[tuple[int, int]] = []
    for m in MATH_SCIENTIFIC.finditer(content):
        power = normalise(m.group(2)).translate(_SUP_DIGITS)
        add_number(page, state, section, line, f"{m.group(1)} \u00d7 10{power}", False, in_math=True)
        covered.append((m.start(), m.end()))
    for m in MATH_POWER.finditer(content):
        if any(a <= m.start() < b for a, b in covered):
            continue
        base, power = m.group(1), normalise(m.group(2))
        if base in ("2", "10"):
            add_number(page, state, section, line, base + power.translate(_SUP_DIGITS), False, in_math=True)
            covered.append((m.start(), m.end()))
    for m in MATH_NUMBER.finditer(content):
        if any(a <= m.start() < b for a, b in covered):
            continue
        token = m.group()
        # A minus right after an opening bracket, a comma, "=" or the start is
        # the number's sign ([−0.76, 0.5]); after anything else it subtracts.
        before = content[: m.start()]
        if before.endswith(("-", UNICODE_MINUS)) and re.search(r"(^|[(\[{,=])\s*$", before[:-1]):
            token = UNICODE_MINUS + token
        structural = token in ("0", "1", "2")
        add_number(page, state, section, line, token, structural, in_math=True)


def add_number(page: ParsedPage, state, section, line, raw, structural, in_math, seed_like=False) -> None:
    key = (line, raw)
    ordinal = state["seen"].get(key, 0)
    state["seen"][key] = ordinal + 1
    page.prose.append(ProseNumber(section, line, raw, ordinal, structural, in_math, seed_like))


# ---------------------------------------------------------------------------
# The check.


@dataclass
class Finding:
    line: int | None  # None: about a quote or a section, not a line of the page
    message: str
    fix: tuple[int, str, int, str] | None = None  # (line, old token, ordinal, new text)


@dataclass
class Report:
    page_path: Path
    page: str = ""
    findings: list[Finding] = field(default_factory=list)
    numbers_checked: int = 0
    wording: wording.Stats | None = None  # the wording check's counts

    @property
    def ok(self) -> bool:
        return not self.findings

    def lines(self) -> list[str]:
        out, seen = [], set()
        for f in sorted(self.findings, key=lambda f: (f.line is None, f.line or 0)):
            where = f"{rel(self.page_path)}:{f.line}" if f.line is not None else rel(self.page_path)
            line = f"{where}: {f.message}"
            if line not in seen:  # one finding, said once
                seen.add(line)
                out.append(line)
        return out


def check_page(
    config,
    *,
    page_path: Path | None = None,
    numbers_dir: Path | None = None,
    golden_dir: Path | None = None,
    only_section: int | None = None,
    check_hashes: bool | None = None,
    allowlist_path: Path | None = None,
    check_structure: bool | None = None,
) -> Report:
    """Check one page against its scripts' numbers files.

    ``only_section`` checks a draft that holds a single section.
    ``check_hashes`` (default: for the real numbers files) compares each
    numbers file's inputs hash with its inputs now. ``allowlist_path``
    replaces the wording allowlist (wording.ALLOWLIST), for tests.
    ``check_structure`` (default: for the page's own file) applies the
    page-structure rules (page_rules.py) too.
    """
    check_structure = page_path is None if check_structure is None else check_structure
    page_path = Path(page_path or REPO_ROOT / config.PAGE_FILE)
    real_numbers = numbers_dir is None
    numbers_dir = Path(numbers_dir or REPO_ROOT / "figures" / config.PAGE / "numbers")
    golden_dir = Path(golden_dir or golden_path(config.PAGE))
    check_hashes = real_numbers if check_hashes is None else check_hashes
    page = parse_page(page_path, tuple(config.STRUCTURAL))
    report = Report(page_path, config.PAGE)
    package = getattr(config, "__name__", "")

    if only_section is not None and set(page.sections) != {only_section}:
        raise PageError(f"{rel(page_path)}: a draft of section {only_section} must hold exactly that section")
    for number, line in page.sections.items():
        if number not in config.SECTION_SCRIPTS:
            raise PageError(
                f"{rel(page_path)}:{line}: section {number} has no entry in SECTION_SCRIPTS "
                f"of docs/diagrams/{package}/__init__.py"
            )
    expected = [only_section] if only_section is not None else sorted(config.SECTION_SCRIPTS)
    missing = [n for n in expected if n not in page.sections]
    if missing:
        raise PageError(
            f"{rel(page_path)}: section(s) {', '.join(map(str, missing))} missing: the page must have "
            f"every section of SECTION_SCRIPTS ({', '.join(map(str, expected))}), each as '## N. Title'"
        )
    empty = [n for n in page.sections if not "".join(page.text.get(n, [])).strip()]
    if empty:
        raise PageError(f"{rel(page_path)}:{page.sections[empty[0]]}: section {empty[0]} has no prose")

    scripts = {s for n in page.sections for s in config.SECTION_SCRIPTS[n]}
    shared = {entry.partition(".")[0] for entry in config.SHARED_QUOTES}
    hint = "run `make figures`"
    records = {}
    for script in sorted(scripts | shared):
        path = numbers_dir / f"{script}.json"
        records[script] = validate_record(load_json(path, f"the numbers of {script}", f"{hint} first"), path, hint)
        refuse_other_runs(records[script], path)
    numbers = {script: record["quotes"] for script, record in records.items()}
    golden = {}
    for script in sorted(scripts | shared):
        path = golden_dir / f"{script}.json"
        if path.exists():
            golden[script] = validate_record(
                load_json(path, f"the golden record of {script}", "run `make golden`"), path, "run `make golden`"
            )["quotes"]

    if check_hashes:
        for script in sorted(scripts | shared):
            finding = stale_inputs(package, script, records[script])
            if finding:
                report.findings.append(finding)

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
    used: set[tuple[str, str]] = set()  # (script, element name)
    binding: list[tuple[int, int, str, list[str]]] = []  # (section, line, token, quote ids)

    for number in page.prose:
        if number.structural:
            continue
        report.numbers_checked += 1
        token = normalise(number.token)
        candidates = [c for c in allowed_by_section[number.section] if c.text == token]
        if candidates:
            used.update((c.script, c.name) for c in candidates)
            binding.append(
                (number.section, number.line, number.token, sorted({f"{c.script}.{c.name}" for c in candidates}))
            )
            if not number.in_math:
                problem = style_problem(number.token, number.seed_like)
                if problem:
                    report.findings.append(
                        Finding(number.line, f"{number.token} in {where_of(number)}: {problem} (number style, README)")
                    )
            continue
        finding, stale = unmatched(number, token, config, golden, numbers, allowed_by_section[number.section])
        report.findings.append(finding)
        used.update(stale)
        binding.append((number.section, number.line, number.token, sorted({f"{s}.{n}" for s, n in stale})))

    report.findings += attach_backing(page, config, records)
    report.findings += check_backed_phrases(page, config, records)
    words, report.wording = wording.check(
        page,
        config,
        records,
        sys.modules[__name__],
        robustness_path=numbers_dir.parent / "robustness.json",
        allowlist_path=allowlist_path or wording.ALLOWLIST,
        error=PageError,
    )
    report.findings += [Finding(line, message) for line, message in words]
    if only_section is None:
        report.findings += check_binding(golden_dir / "page.json", binding, page)
        report.findings += check_pinned_allowlist(
            golden_dir / "page.json",
            wording.pinned_allowlist(allowlist_path or wording.ALLOWLIST, config.PAGE, PageError),
            (allowlist_path or wording.ALLOWLIST).name,
        )
        report.findings += check_pinned_passages(golden_dir / "page.json", check_citations.cited_passages(page_path))

    # Quotes nothing uses: not in the prose of a section allowed to use them
    # and not drawn in the script's figures (a code block does not count).
    figure_dir = numbers_dir.parent
    for script in sorted(scripts):
        record = records[script]
        drawn = figure_strings(figure_dir, record.get("figures", []))
        in_figures = {normalise(m.group()) for string in drawn for m in numbers_in(string)}
        sections_using = [n for n in page.sections if script in config.SECTION_SCRIPTS[n]]
        for name, text in quote_texts(record["quotes"]):
            if (script, name) in used or text in in_figures:
                continue
            if not is_number(text) and (
                any(text in string for string in drawn) or any(text in section_prose(page, n) for n in sections_using)
            ):
                continue  # a non-numeric text ("inf", a CPU's name), drawn or written as it is
            report.findings.append(
                Finding(
                    None,
                    f"{script}.{name} ({text}) is used nowhere: not in the prose of section "
                    f"{', '.join(map(str, sections_using))} or its figures; quote it or stop registering it",
                )
            )
    if check_structure and only_section is None:  # the page's structure (a draft of one section has none)
        text = page_path.read_text(encoding="utf-8")
        report.findings += [Finding(line, message) for line, message in page_rules.problems(config, text)]
    return report


def where_of(number: ProseNumber) -> str:
    return f"section {number.section}" if number.section else "the introduction"


def refuse_other_runs(record: dict, path: Path) -> None:
    """Only the page's own run may feed the page: not another seed offset, a
    numeric variant or a reduced run."""
    offset = record.get("seed_offset", 0)
    variant = record.get("variant", numeric_env.PINNED)
    if offset != 0 or variant != numeric_env.PINNED or record.get("reduced"):
        what = (
            f"seed offset {offset}"
            if offset != 0
            else f"numeric variant {variant}"
            if variant != numeric_env.PINNED
            else "the reduced test configuration"
        )
        raise PageError(
            f"{rel(path)}: made at {what}, not by the page's own run; the page must not quote "
            "it: run `make -B figures` to remake the page's run"
        )
    if why := numeric_env.foreign(record):
        raise PageError(f"{rel(path)}: {why}")


def stale_inputs(package: str, script: str, record: dict) -> Finding | None:
    if not package:
        return None
    try:
        current = section_inputs.inputs_hash(package, script, numeric_env.PINNED)
    except section_inputs.InputError as error:
        return Finding(None, f"{script}: {error}")
    if record.get("inputs_hash") != current:
        return Finding(
            None,
            f"{script}'s numbers are stale: its inputs changed since they were made, or its "
            "last run failed; run `make figures`",
        )
    return None


def section_prose(page: ParsedPage, number: int) -> str:
    return " ".join(" ".join(page.text.get(number, [])).split())


def attach_backing(page: ParsedPage, config, records: dict) -> list[Finding]:
    """Give each claim the phrases its `% backs` lines name (as the claim's
    ``backs``, which the phrase and wording checks read). A line must name a
    script of its own section and a key one of that script's claims has."""
    findings = []
    for claim in (c for record in records.values() for c in record.get("claims", [])):
        claim["backs"] = []
    for backing in page.backing:
        scripts = claim_scripts(config, backing.section)
        if backing.script not in scripts:
            findings.append(
                Finding(
                    backing.line,
                    f"backs line: {backing.script} is not a script of section {backing.section} "
                    f"({', '.join(scripts) or 'it has none'}); a claim backs prose of its own section",
                )
            )
            continue
        claims = {c["key"]: c for c in records[backing.script].get("claims", []) if c.get("key")}
        claim = claims.get(backing.key)
        if claim is None:
            near = difflib.get_close_matches(backing.key, list(claims), n=1)
            findings.append(
                Finding(
                    backing.line,
                    f"backs line: {backing.script} has no claim with key {backing.key!r}"
                    + (
                        f" (did you mean {near[0]!r}?)"
                        if near
                        else f" (its keys: {', '.join(sorted(claims)) or 'none'})"
                    ),
                )
            )
            continue
        claim["backs"] += [p for p in backing.phrases if p not in claim["backs"]]
    return findings


def check_backed_phrases(page: ParsedPage, config, records: dict) -> list[Finding]:
    """Each phrase a claim backs must still be in the prose of a section
    that uses the claim's script."""
    findings = []
    prose = {n: section_prose(page, n) for n in page.sections}
    for script in sorted({s for scripts in config.SECTION_SCRIPTS.values() for s in scripts}):
        sections = [n for n in sorted(page.sections) if script in claim_scripts(config, n)]
        if not sections:
            continue
        text = " ".join(prose[n] for n in sections)
        for claim in records.get(script, {}).get("claims", []):
            for phrase in claim.get("backs", []):
                words = " ".join(phrase.split())
                # A whole-word match: "float16 has" must not pass inside "bfloat16 has".
                if not wording.whole_phrase_in(words, text):
                    findings.append(
                        Finding(
                            page.sections[sections[0]],
                            (
                                f"section {'/'.join(map(str, sections))} no longer says {phrase!r}, which {script}'s "
                                f'claim "{claim["statement"]}" backs: restore the words, or change the claim'
                            ),
                        )
                    )
    return findings


def check_binding(pinned_path: Path, binding: list, page: ParsedPage) -> list[Finding]:
    """Each prose number must still be the quote pinned at its place (the
    golden record's page.json, written by `make golden`)."""
    if not pinned_path.exists():
        return [
            Finding(None, f"{rel(pinned_path)} is missing: `make golden` pins which quote each number of the page is")
        ]
    pinned = load_json(pinned_path, "the pinned prose numbers", "run `make golden`")
    if not isinstance(pinned, dict) or not isinstance(pinned.get("numbers"), list):
        raise PageError(f"{rel(pinned_path)}: not a pinned page record: run `make golden`")
    old = [(n["section"], n["quotes"], n["token"]) for n in pinned["numbers"]]
    new = [(section, quotes, token, line) for section, line, token, quotes in binding]
    findings = []
    hint = "if the prose change is intended, `make golden` re-pins it"

    def key(entry):  # a number's identity: its section and the quotes it can be
        return (entry[0], tuple(entry[1]))

    matcher = difflib.SequenceMatcher(a=[key(e) for e in old], b=[key(e) for e in new], autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            continue
        # A stale or unknown number (no quotes) is reported on its own already.
        changed = [e for e in new[b0:b1] if e[1]]
        if not changed and op != "delete":
            continue
        if op == "delete":
            gone = ", ".join(e[2] for e in old[a0:a1])
            line = new[b0][3] if b0 < len(new) else None
            findings.append(Finding(line, f"number(s) {gone} pinned here in section {old[a0][0]} are gone; {hint}"))
            continue
        for entry in changed:
            was = [e for e in old[a0:a1] if e[0] == entry[0]]
            detail = (
                f"the pinned page has {', '.join(e[2] + ' (' + '/'.join(e[1]) + ')' for e in was)} here"
                if was
                else "it is new here"
            )
            findings.append(
                Finding(
                    entry[3],
                    (
                        f"{entry[2]} ({'/'.join(entry[1])}) in section {entry[0]} is not the number pinned at this "
                        f"place: {detail}; {hint}"
                    ),
                )
            )
    counts_old = {}
    for e in old:
        counts_old[e[0]] = counts_old.get(e[0], 0) + 1
    counts_new = {}
    for e in new:
        counts_new[e[0]] = counts_new.get(e[0], 0) + 1
    for section, count in counts_old.items():
        if counts_new.get(section, 0) < count // 2:
            findings.append(
                Finding(
                    page.sections.get(section),
                    (
                        f"section {section} quotes {counts_new.get(section, 0)} numbers; the pinned page has {count} "
                        "here: is part of it missing?"
                    ),
                )
            )
    return findings


def check_pinned_passages(pinned_path: Path, passages: dict[str, list[str]]) -> list[Finding]:
    """The bibliography's passages the page's citations rest on must be the
    ones the golden record pinned (by hash): a passage trimmed of the
    sentence the page relies on, or reworded, is a reviewed change."""
    if not pinned_path.exists():
        return []  # check_binding names the missing record
    pinned = load_json(pinned_path, "the pinned prose numbers", "run `make golden`")
    listed = pinned.get("passages", {}) if isinstance(pinned, dict) else {}
    return [
        Finding(
            None,
            f"the passages quoted for the bibliography entry #{slug}, or what it is cited for and its key phrases, "
            f"changed since {rel(pinned_path)} was pinned (a passage trimmed, reworded or added, a key phrase "
            "added); check them against the paper, then `make golden` pins them",
        )
        for slug, digests in sorted(passages.items())
        if listed.get(slug) != digests
    ]


def check_pinned_allowlist(pinned_path: Path, entries: list[dict], name: str) -> list[Finding]:
    """Each allowlist entry of the page must be one the golden record
    (page.json, written by `make golden`) lists: a new or changed entry is a
    reviewed change, not a quiet one."""
    if not pinned_path.exists():
        return []  # check_binding names the missing record
    pinned = load_json(pinned_path, "the pinned prose numbers", "run `make golden`")
    listed = pinned.get("allowlist", []) if isinstance(pinned, dict) else []
    hint = "if the entry is intended, `make golden` pins it (and shows it in its diff)"
    findings = [
        Finding(None, f"{name}: the entry {allowlist_row(e)} is not in the golden record {rel(pinned_path)}; {hint}")
        for e in entries
        if e not in listed
    ]
    findings += [
        Finding(
            None, f"{rel(pinned_path)} lists the allowlist entry {allowlist_row(e)}, which {name} no longer has; {hint}"
        )
        for e in listed
        if e not in entries
    ]
    return findings


def pinned_binding(config, **paths) -> dict:
    """The page's numbers in order with the quotes each is, for `make golden`."""
    page_path = Path(paths.get("page_path") or REPO_ROOT / config.PAGE_FILE)
    page = parse_page(page_path, tuple(config.STRUCTURAL))
    numbers_dir = Path(paths.get("numbers_dir") or REPO_ROOT / "figures" / config.PAGE / "numbers")
    texts = {}
    for scripts in config.SECTION_SCRIPTS.values():
        for script in scripts:
            path = numbers_dir / f"{script}.json"
            record = validate_record(
                load_json(path, f"the numbers of {script}", "run `make figures` first"), path, "run `make figures`"
            )
            texts[script] = quote_texts(record["quotes"])
    shared = []
    for entry in config.SHARED_QUOTES:
        script, _, name = entry.partition(".")
        path = numbers_dir / f"{script}.json"
        record = load_json(path, f"the numbers of {script}", "run `make figures` first")
        shared += [(script, n, t) for n, t in quote_texts({name: record["quotes"][name]})]
    out = []
    for number in page.prose:
        if number.structural:
            continue
        token = normalise(number.token)
        quotes = sorted(
            {f"{s}.{n}" for s in config.SECTION_SCRIPTS.get(number.section, ()) for n, t in texts[s] if t == token}
            | {f"{s}.{n}" for s, n, t in shared if t == token}
        )
        out.append({"section": number.section, "token": number.token, "quotes": quotes})
    allowlist = wording.pinned_allowlist(Path(paths.get("allowlist_path") or wording.ALLOWLIST), config.PAGE, PageError)
    passages = check_citations.cited_passages(page_path)
    return {"page": config.PAGE, "numbers": out, "allowlist": allowlist, "passages": passages}


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
        except (OSError, UnicodeDecodeError):
            raise PageError(f"{rel(path)}: figure cannot be read as UTF-8 SVG: run `make figures`") from None
        found += [comment.strip() for comment in SVG_COMMENT.findall(svg)]
    return found


def unmatched(number: ProseNumber, token: str, config, golden, numbers, candidates):
    """Explain a prose number no script prints, with the most useful fix.
    Returns the finding and the quotes it stands for (a stale number)."""
    where = where_of(number)
    stale = []
    for script in config.SECTION_SCRIPTS.get(number.section, ()):
        old_texts = dict(quote_texts(golden.get(script, {})))
        new_texts = dict(quote_texts(numbers.get(script, {})))
        for name, old in old_texts.items():
            if old == token and name in new_texts and new_texts[name] != old:
                stale.append((script, name, new_texts[name]))
    if stale:
        described = "; ".join(
            f"{s}.{n} was {number.token}, now {new.replace('-', UNICODE_MINUS)}" for s, n, new in stale
        )
        news = {new for _, _, new in stale}
        fix = (number.line, number.token, number.ordinal, news.pop()) if len(news) == 1 else None
        hint = " (`make fix` applies it)" if fix else " (ambiguous: fix by hand)"
        return Finding(number.line, f"stale number {number.token} in {where}: {described}{hint}", fix), [
            (s, n) for s, n, _ in stale
        ]
    message = f"{number.token} in {where}{' (in maths)' if number.in_math else ''} is not a number its scripts print"
    value = as_float(token)
    scored = [
        (abs(as_float(c.text) - value) / max(abs(value), 1e-300), c)
        for c in candidates
        if value is not None and as_float(c.text) is not None
    ]
    if scored:
        _, nearest = min(scored, key=lambda sc: sc[0])
        message += f"; nearest printed: {nearest.script}.{nearest.name} = {nearest.text.replace('-', UNICODE_MINUS)}"
    elif not candidates:
        message += f" (no script serves {where}; is it a structural number to allow?)"
    return Finding(number.line, message), []


def apply_fixes(path: Path, findings: list[Finding]) -> int:
    """Replace each stale token on its line, keeping the file's line endings;
    writes (atomically) only when something changed. Returns how many."""
    from pagekit.atomic import atomic_write  # the one atomic writer

    source = read_page(path)
    lines = source.splitlines(keepends=True)
    fixed = 0
    for finding in findings:
        if finding.fix is None:
            continue
        line, old, ordinal, new = finding.fix
        if line - 1 >= len(lines):
            continue
        matches = [m for m in numbers_in(lines[line - 1]) if m.group() == old]
        if ordinal < len(matches):
            m = matches[ordinal]
            new_text = new.replace("-", UNICODE_MINUS)
            lines[line - 1] = lines[line - 1][: m.start()] + new_text + lines[line - 1][m.end() :]
            fixed += 1
            finding.fix = None
    if fixed:
        with atomic_write(path, "wb") as out:
            out.write("".join(lines).encode("utf-8"))
    return fixed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("pages", nargs="*", help="pages by slug or package name (default: every page)")
    parser.add_argument("--fix", action="store_true", help="rewrite stale numbers whose new text is unambiguous")
    parser.add_argument(
        "--citations",
        action="store_true",
        help="then check every citation against the bibliography (check_citations), in the same process",
    )
    parser.add_argument(
        "--wording-counts",
        action="store_true",
        help="also print how many sentences use direction or scope words and how they are backed",
    )
    parser.add_argument(
        "--section-draft",
        nargs=2,
        metavar=("N", "FILE"),
        help="check a draft file holding only section N of the page",
    )
    args = parser.parse_args(argv)
    try:
        packages = [package_for_page(p) for p in args.pages] if args.pages else page_packages()
    except PageNameError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.section_draft and len(packages) != 1:
        parser.error("--section-draft needs exactly one page")
    draft = {}
    if args.section_draft:
        try:
            draft = {"only_section": int(args.section_draft[0]), "page_path": Path(args.section_draft[1])}
        except ValueError:
            parser.error("--section-draft N must be a section number")
    status = EXIT_OK
    for package in packages:
        try:
            config = page_config(package)
            report = check_page(config, **draft)
            if args.fix:
                fixed = apply_fixes(report.page_path, report.findings)
                print(
                    f"{rel(report.page_path)}: fixed {fixed} stale number(s)"
                    if fixed
                    else f"{rel(report.page_path)}: nothing `make fix` can fix; the page is unchanged"
                )
                if fixed:
                    report = check_page(config, **draft)
                for finding in report.findings:  # what is left is for the author
                    finding.message = finding.message.replace(
                        "(`make fix` applies it)", "(`make fix` could not apply it: fix by hand)"
                    )
        except PageError as error:
            print(f"error: {error}", file=sys.stderr)
            status = max(status, EXIT_BAD_INPUT)
            continue
        for line in report.lines():
            print(line)
        name = getattr(config, "PAGE", package)
        if args.wording_counts and report.wording:
            w = report.wording
            print(
                f"{name}: {w.sentences} sentence(s) with direction, scope, one-run, range, causal or negation words; "
                f"{w.backed} backed "
                f"({w.by_claim} by a claim, {w.verified} verified from the quotes, {w.allowlisted} allowlisted), "
                f"{w.allowlist_entries} allowlist entries"
            )
            labels = {"direction": "direction words", "general": "scope words", "one_run": "one-run words"}
            labels |= {"range": "range words", "cause": "causal words", "negation": "negations"}
            labels["unit"] = "unit words after a quote"
            labels["table"] = "numbers in tables, read under their row and column"
            for kind, label in labels.items():
                by = w.words.get(kind, {})
                print(
                    f"{name}: {label}: {sum(by.values())} bound ("
                    + ", ".join(f"{n} by {how}" for how, n in sorted(by.items(), key=lambda kv: -kv[1]))
                    + ")"
                )
        if report.ok:
            print(f"{name}: all {report.numbers_checked} numbers match their scripts")
        else:
            print(f"{name}: {len(report.lines())} problem(s) in {rel(report.page_path)}", file=sys.stderr)
            status = max(status, EXIT_MISMATCH)
    if args.citations:
        status = max(status, check_citations.main([]))
    return status


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as error:
        print(f"internal error in check_page.py: {type(error).__name__}: {error} (please report it)", file=sys.stderr)
        sys.exit(EXIT_INTERNAL)
