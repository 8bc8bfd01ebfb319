"""The words around the numbers, guarded like the numbers (part of `make check`).

A controlled vocabulary, declared once below, of the words that turn a number
into a conclusion:

- direction and comparison words next to a quoted number (larger, lower,
  above, faster, more, times, better, beats, ...);
- scope words that make a result general (every seed, always, never, in
  general, ...);
- one-run words that make it one run's result (this run, the page's run, ...).

The check reads every sentence of the prose, the captions and the alt text of
a section that has scripts, and each occurrence of such a word must have
evidence, in this order:

1. it sits inside a phrase one of the section's claims backs (a ``% backs``
   line of the page, see check_page.attach_backing),
   and the claim's scope fits the word: a scope word needs an every-seed
   claim that held in every run of the page's robustness report (or a
   holding claim of a section computed from that report, DERIVED_SECTIONS,
   which the report does not rerun); a one-run word or a direction word any
   claim;
2. or the quotes verify it: the word is part of the unit its number's quote
   declares ("1,304 times bigger", a quote with unit "times bigger"); or a
   signed word (larger, below, fewer, ...) compares two quoted numbers the
   way their values do ("2.150, lower than 3.330"), or stands right before a
   quote whose recorded value lies that side of its printed text ("below
   1 × 10⁻⁶" for a loss printed as the power of ten above it);
3. or the sentence holds an entry of the allowlist (wording_allowlist.toml,
   one phrase per entry, each with its reason) that covers the word.

A section the allowlist lists as pending (not yet brought into line) has its
unbacked sentences counted, not failed. Sections without scripts (a reading
list, a section on papers only) are outside the rule: no run backs them.

Besides, a quote knows what it is (``section.quote(..., unit=, run=)``): the
unit word written after a number must be its quote's unit, and a sentence
that names runs of the quote's script must name the quote's own run. A
figure declares its caption's key phrases (``save_figure(...,
caption_phrases=)``), each backed by a claim, and the caption or alt text of
the figure that shows the SVG must say each.

Light on purpose (re and tomllib): `make check` stays under a second.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pagekit.paths import PACKAGE_DIR

ALLOWLIST = PACKAGE_DIR / "wording_allowlist.toml"

# --- the vocabulary ---------------------------------------------------------

# Direction words with a sign: +1 says the number before it is the larger,
# -1 the smaller ("A is lower than B": A < B).
SIGNED_DIRECTION = {
    **dict.fromkeys(
        (
            "larger",
            "bigger",
            "higher",
            "greater",
            "above",
            "more",
            "faster",
            "exceeds",
            "exceeded",
            "exceed",
            "longer",
            "wider",
        ),
        +1,
    ),
    **dict.fromkeys(("smaller", "lower", "below", "fewer", "less", "slower", "shorter", "narrower"), -1),
}
# Comparison words without a sign the quotes could verify (better may mean a
# higher accuracy or a lower loss): a claim or the allowlist backs them.
UNSIGNED_DIRECTION = (
    "better",
    "worse",
    "beats",
    "beat",
    "outperforms",
    "outperformed",
    "ahead",
    "times",
    "twice",
    "half as",
)
DIRECTION = re.compile(
    r"\b(?:"
    + "|".join(sorted((re.escape(w) for w in (*SIGNED_DIRECTION, *UNSIGNED_DIRECTION)), key=len, reverse=True))
    + r"|\w+fold)\b",
    re.I,
)
# Scope words: the result is general. "not at every seed" is a one-run phrase.
# ("with every seed shifted by one" describes the robustness report's method,
# not a result's scope.)
GENERAL = re.compile(
    r"\b(?:(?:at|for|under|in|with) )?(?:every|all(?: the)?|any) (?:seeds?(?! shifted)|runs?|"
    r"(?:numeric )?variants?|(?:numeric )?kernels?|seed offsets?)\b|\balways\b|\bnever\b|\bin general\b|"
    r"\bgenerally\b|\bevery time\b|\bwithout exception\b|\binvariabl[ey]\b",
    re.I,
)
# Scope over the numeric kernels only: a claim about the page's own run holds
# under every variant at seed offset 0, so it may back these.
KERNEL_SCOPE = re.compile(r"variant|kernel", re.I)
NEGATED_GENERAL = re.compile(r"\b(?:not|neither|nor) (?:at |for |under |in )?(?:every|each|all|always)\b", re.I)
# One-run words: the result is this run's.
ONE_RUN = re.compile(
    r"\b(?:this|one|that) (?:run|seed)(?:'s)?\b|\b(?:on|in|for) this run\b|"
    r"\bthe page's (?:own )?(?:runs?|seeds?)\b|\bthis page's (?:own )?(?:runs?|seeds?|CPU)\b|"
    r"\bone run's\b|\bnot (?:at |for |under |in )?(?:every|each|all) seeds?\b",
    re.I,
)
NEAR_WORDS = 3  # a direction word is "next to" a number with at most this many words between them
CLAUSE_BREAK = re.compile(r"[;:()\u2014]|, (?:and|but|while|where|which) ")  # "next to" stays inside a clause

# Unit words the prose writes after a number, beyond the units the quotes
# declare: another unit after a number is a finding.
UNIT_WORDS = (
    "nats per character",
    "bits per character",
    "nats per token",
    "bits per token",
    "nats",
    "bits",
    "seconds",
    "milliseconds",
    "microseconds",
    "ms",
    "µs",
    "steps",
    "epochs",
    "bytes",
    "kB",
    "MB",
    "GB",
    "percentage points",
)

# A ratio's unit as the prose writes it: "times bigger", "times as many", "times the usual size".
RATIO_UNIT = re.compile(r"(?:times|×)(?: (?:as|the|its|more|less))? [\w-]+")

# What may stand between a direction word and the number it compares with.
COMPARAND_GAP = re.compile(r"\s*(?:than\s+(?:[\w'’-]+\s+){0,3})?", re.I)

KINDS = {"general": "a scope word", "one_run": "a one-run word", "direction": "a direction word"}


# --- sentences ---------------------------------------------------------------

ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "cf.", "vs.", "Fig.", "approx.", "etc.")
# A sentence ends at . ! or ? before a space and a capital, a digit, a minus
# or a number format's name ("float16 has ...").
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[*_`$]*(?:[A-Z0-9\u2212]|b?float\d))")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)|\{ref\}`([^`<]*)(?:<[^>]*>)?`")
MATH = re.compile(r"\$\$?[^$]+\$\$?")
EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?!\s)|(?<=\S)\*(?![\w*])")


def clean(text: str) -> str:
    """Markdown source as the reader reads it, one space between words:
    links as their text, code as its text, maths as one word."""
    text = IMAGE.sub(" ", text)
    text = LINK.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    text = MATH.sub("MATH", text)
    text = CODE_SPAN.sub(lambda m: m.group(2), text)
    text = EMPHASIS.sub("", text)
    return " ".join(text.split())


def sentences(text: str) -> list[tuple[int, str]]:
    """(character offset, sentence) of the raw passage text."""
    out, start = [], 0
    for m in SENTENCE_END.finditer(text):
        before = text[: m.start()]
        if before.endswith(ABBREVIATIONS):
            continue
        out.append((start, text[start : m.start()]))
        start = m.end()
    out.append((start, text[start:]))
    return [(o, s) for o, s in out if s.strip()]


# --- evidence ------------------------------------------------------------------


@dataclass
class Bound:
    """A number of a sentence that is a quote of the section."""

    start: int
    end: int
    token: str
    value: float | None
    quotes: list[tuple[str, str, dict]]  # (script, printed name, the quote's record)


@dataclass
class Occurrence:
    kind: str  # general, one_run or direction
    word: str
    start: int
    end: int


@dataclass
class Sentence:
    section: int
    line: int
    text: str  # cleaned
    kind: str  # prose, caption or alt
    occurrences: list[Occurrence] = field(default_factory=list)
    bound: list[Bound] = field(default_factory=list)
    raw: str = ""  # the Markdown source, for line numbers


@dataclass
class Allowed:
    page: str
    phrase: str
    reason: str
    used: bool = False


@dataclass
class Stats:
    """How many sentences use the vocabulary, and how their words are backed."""

    sentences: int = 0
    backed: int = 0  # every occurrence has evidence (claim, verified comparison or allowlist)
    by_claim: int = 0
    verified: int = 0
    allowlisted: int = 0
    allowlist_entries: int = 0
    pending: int = 0  # sentences without evidence in sections not yet brought into line


def read_allowlist(path: Path, error) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as problem:
        raise error(f"{path.name}: not valid TOML: {problem}") from None


def pending_sections(path: Path, page: str, error) -> set[int]:
    """Sections whose prose is not yet brought into line with the wording
    rules (the allowlist's [[pending]] tables): counted, not failed."""
    pending = set()
    for i, entry in enumerate(read_allowlist(path, error).get("pending", []), 1):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("sections"), list)
            and isinstance(entry.get("reason"), str)
            and entry["reason"].strip()
        ):
            raise error(f"{path.name}: pending entry {i} needs a page, its sections and a reason")
        if entry.get("page") == page:
            pending.update(entry["sections"])
    return pending


def load_allowlist(path: Path, page: str, error) -> list[Allowed]:
    """The allowlist's entries for one page; ``error`` builds the exception
    for a malformed file."""
    data = read_allowlist(path, error)
    entries = []
    for i, entry in enumerate(data.get("allow", []), 1):
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), str) and entry[k].strip() for k in ("page", "phrase", "reason")
        ):
            raise error(f"{path.name}: entry {i} needs a page, a phrase and a reason")
        if entry["page"] == page:
            entries.append(Allowed(page, " ".join(entry["phrase"].split()), entry["reason"]))
    return entries


def robustness_holds(path: Path) -> dict[tuple[str, str], dict[str, bool]] | None:
    """(script, statement) -> whether the claim held in every run of the
    page's robustness report, and in every numeric variant at the page's
    seeds; None when the page has no report."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    held = {}
    for script, section in report.get("sections", {}).items():
        for claim in section.get("claims", []):
            holds = claim.get("holds", {})
            held[script, claim["statement"]] = {
                "every run": bool(holds) and all(holds.values()),
                "every kernel": bool(holds)
                and all(ok for run, ok in holds.items() if not run.startswith("seed ") or run == "seed 0"),
            }
    return held


def find_occurrences(text: str) -> list[Occurrence]:
    found = []
    negated = [(m.start(), m.end()) for m in NEGATED_GENERAL.finditer(text)]
    for m in ONE_RUN.finditer(text):
        found.append(Occurrence("one_run", m.group(), m.start(), m.end()))
    for m in GENERAL.finditer(text):
        if any(a <= m.start() < b + 4 for a, b in negated) or any(o.start <= m.start() < o.end for o in found):
            continue  # "not at every seed" says it is one run's
        found.append(Occurrence("general", m.group(), m.start(), m.end()))
    for m in DIRECTION.finditer(text):
        found.append(Occurrence("direction", m.group(), m.start(), m.end()))
    return sorted(found, key=lambda o: o.start)


def words_between(text: str, a: int, b: int) -> int:
    """Words between two positions; a clause break between them counts as
    too far."""
    between = text[min(a, b) : max(a, b)]
    return NEAR_WORDS + 1 if CLAUSE_BREAK.search(between) else len(between.split())


def near_a_number(occurrence: Occurrence, bound: list[Bound], text: str) -> bool:
    return any(
        words_between(text, occurrence.end, n.start) <= NEAR_WORDS
        if n.start >= occurrence.end
        else words_between(text, n.end, occurrence.start) <= NEAR_WORDS
        for n in bound
    )


def raw_values(number: Bound) -> list[float]:
    """The recorded values of the quotes a number is (an element of a vector
    quote by its index)."""
    values = []
    for _, printed, quote in number.quotes:
        index = re.search(r"\[(\d+)\]$", printed)
        value = quote["value"][int(index.group(1))] if index else quote["value"]
        if isinstance(value, (int, float)):
            values.append(float(value))
    return values


def verify_comparison(occurrence: Occurrence, sentence: Sentence) -> tuple[bool | None, str]:
    """Whether a signed direction word agrees with the quotes: "below N" with
    the recorded value of N's quote below its printed bound (a loss printed as
    the power of ten above it), or "A is lower than B" with two quoted numbers
    in one clause. None when the quotes cannot say."""
    sign = SIGNED_DIRECTION.get(occurrence.word.lower())
    if sign is None:
        return None, ""
    text = sentence.text
    after = [
        n
        for n in sentence.bound
        if n.start >= occurrence.end and n.value is not None and COMPARAND_GAP.fullmatch(text[occurrence.end : n.start])
    ]
    if not after:
        return None, ""
    b = after[0]
    than = "than" in text[occurrence.end : b.start].lower()
    if not than:  # "below 1 × 10⁻⁶": the quote's recorded value against its printed text
        strict = [v > b.value if sign > 0 else v < b.value for v in raw_values(b) if v != b.value]
        if strict and all(strict):
            return True, ""
    # "A is lower than B", or "A above B" with nothing between A and the word.
    before = [
        n
        for n in sentence.bound
        if n.end <= occurrence.start
        and n.value is not None
        and words_between(text, n.end, occurrence.start) <= (NEAR_WORDS if than else 0)
        and not re.match(r"\s*(?:times|×)\b", text[n.end : occurrence.start])
    ]
    if not before:
        return None, ""
    a = before[-1]
    if a.value == b.value:
        return False, f"{a.token} and {b.token} are equal"
    holds = (a.value > b.value) == (sign > 0)
    return holds, f"{a.token} is {'larger' if a.value > b.value else 'smaller'} than {b.token}"


def units_of(quote: dict) -> list[str]:
    """The unit forms a quote declares (none: an empty list)."""
    unit = quote.get("unit", [])
    return [unit] if isinstance(unit, str) else list(unit)


def declared_unit_span(number: Bound, text: str) -> tuple[int, int] | None:
    """Where a unit the number's quotes declare follows it, if one does
    ("1,304 times bigger": the quote is that ratio, unit "times bigger")."""
    gap = len(text[number.end :]) - len(text[number.end :].lstrip())
    start = number.end + gap
    for unit in sorted({u for _, _, q in number.quotes for u in units_of(q)}, key=len, reverse=True):
        if re.match(rf"{re.escape(unit)}(?![\w-])", text[start:]):
            return start, start + len(unit)
    return None


def in_declared_unit(occurrence: Occurrence, sentence: Sentence) -> bool:
    for number in sentence.bound:
        span = declared_unit_span(number, sentence.text)
        if span and span[0] <= occurrence.start and occurrence.end <= span[1]:
            return True
    return False


def run_names(quote: dict, printed: str | None = None) -> list[str]:
    """The words naming the run a quote (or the element ``printed`` of a
    vector quote) comes from; without ``printed``, every run it names."""
    if "runs" in quote:
        index = re.search(r"\[(\d+)\]$", printed or "")
        per_element = quote["runs"]
        names = per_element[int(index.group(1))] if index else [r for rs in per_element for r in rs]
    else:
        names = quote.get("run", [])
    return [r.lower() for r in names]


def mentioned(text: str, names: set[str]) -> set[str]:
    """The run names a sentence uses; a name inside a longer one it also
    uses ("post-norm" in "post-norm without warmup") does not count."""
    spans = []
    lowered = text.lower()
    for name in names:
        for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", lowered):
            spans.append((m.start(), m.end(), name))
    return {name for a, b, name in spans if not any(c <= a and b <= d and (d - c) > (b - a) for c, d, _ in spans)}


def page_sentences(page, config, records: dict, numbers) -> list[Sentence]:
    """Every sentence of the prose, captions and alt text of the sections
    that have scripts, with its vocabulary words and its quoted numbers
    (``numbers``: the page check's number reader, numbers_in, as_float and
    normalise)."""
    patterns = [re.compile(p) for p in config.STRUCTURAL]
    shared = [tuple(e.partition(".")[::2]) for e in config.SHARED_QUOTES]
    texts_of: dict[int, dict[str, list]] = {}  # section -> text -> [(script, printed name, quote record)]
    out = []
    for passage in page.passages:
        scripts = config.SECTION_SCRIPTS.get(passage.section, ())
        if not scripts:
            continue  # no script's evidence reaches it (a reading list, the paper-only sections)
        if passage.section not in texts_of:
            by_text: dict[str, list] = {}
            for script, name in [(s, n) for s in scripts for n in records.get(s, {}).get("quotes", {})] + shared:
                quote = records.get(script, {}).get("quotes", {}).get(name)
                if quote is None:
                    continue
                vector = isinstance(quote["text"], list)
                for i, t in enumerate(quote["text"] if vector else [quote["text"]]):
                    by_text.setdefault(numbers.normalise(t), []).append(
                        (script, f"{name}[{i}]" if vector else name, quote)
                    )
            texts_of[passage.section] = by_text
        by_text = texts_of[passage.section]
        for offset, raw in sentences(passage.text):
            text = clean(raw)
            occurrences = find_occurrences(text)
            units = any(q.get("unit") or q.get("run") for qs in by_text.values() for _, _, q in qs)
            if not occurrences and not units:
                continue
            structural = [(m.start("n"), m.end("n")) for p in patterns for m in p.finditer(text)]
            bound = []
            for m in numbers.numbers_in(text):
                if any(a <= m.start() and m.end() <= b for a, b in structural):
                    continue
                quotes = by_text.get(numbers.normalise(m.group()))
                if quotes:
                    bound.append(
                        Bound(m.start(), m.end(), m.group(), numbers.as_float(numbers.normalise(m.group())), quotes)
                    )
            line = passage.line + passage.text.count("\n", 0, offset)
            sentence = Sentence(passage.section, line, text, passage.kind, [], bound, raw)
            sentence.occurrences = [o for o in occurrences if o.kind != "direction" or near_a_number(o, bound, text)]
            out.append(sentence)
    return out


def line_of(sentence: Sentence, start: int) -> int:
    """The page line of a position in the cleaned sentence (found again in
    the raw text by the words before it)."""
    words = sentence.text[:start].split()
    raw = sentence.raw
    position = 0
    for word in words[-3:] if words else []:
        found = raw.find(word, position)
        if found >= 0:
            position = found + len(word)
    return sentence.line + raw.count("\n", 0, position)


def backed_spans(sentence: Sentence, scripts, records: dict) -> list[tuple[int, int, str, dict]]:
    """Where the sentence holds a phrase a claim of the section backs:
    (start, end, script, claim)."""
    spans = []
    for script in scripts:
        for claim in records.get(script, {}).get("claims", []):
            for phrase in claim.get("backs", []):
                wanted = clean(phrase)
                for m in re.finditer(re.escape(wanted), sentence.text, re.I):
                    spans.append((m.start(), m.end(), script, claim))
    return spans


def check(
    page, config, records: dict, numbers, *, robustness_path: Path, allowlist_path: Path = ALLOWLIST, error=ValueError
) -> tuple[list[tuple[int | None, str]], Stats]:
    """Findings (line, message) of the wording rules for one page, and its
    counts. ``error`` builds the exception for a malformed allowlist."""
    findings: list[tuple[int | None, str]] = []
    stats = Stats()
    allowlist = load_allowlist(allowlist_path, config.PAGE, error)
    pending = pending_sections(allowlist_path, config.PAGE, error)
    stats.allowlist_entries = len(allowlist)
    held = robustness_holds(robustness_path)
    derived = set(getattr(config, "DERIVED_SECTIONS", ()))
    report_name = robustness_path.name
    units = known_units(records)
    for sentence in page_sentences(page, config, records, numbers):
        scripts = config.SECTION_SCRIPTS[sentence.section]
        findings += check_units_and_runs(sentence, records, units)
        if not sentence.occurrences:
            continue
        stats.sentences += 1
        spans = backed_spans(sentence, scripts, records)
        allowed_here = [
            (m.start(), m.end(), entry)
            for entry in allowlist
            for m in re.finditer(re.escape(entry.phrase), sentence.text)
        ]
        how = set()
        missing = []
        for occurrence in sentence.occurrences:
            detail = ""
            covering = [(s, c) for a, b, s, c in spans if a <= occurrence.start and occurrence.end <= b]
            fitting = [
                (s, c)
                for s, c in covering
                if occurrence.kind != "general" or scope_fits(occurrence, s, c, held, derived)
            ]
            if fitting:
                how.add("claim")
                continue
            if occurrence.kind == "direction" and in_declared_unit(occurrence, sentence):
                how.add("verified")  # "1,304 times bigger": the quote says it is that ratio
                continue
            if occurrence.kind == "direction":
                verified, detail = verify_comparison(occurrence, sentence)
                if verified:
                    how.add("verified")
                    continue
            allowed = [entry for a, b, entry in allowed_here if a <= occurrence.start and occurrence.end <= b]
            if allowed:
                allowed[0].used = True
                how.add("allowlist")
                continue
            missing.append((occurrence, covering, detail))
        if not missing:
            stats.backed += 1
            stats.by_claim += "claim" in how
            stats.verified += "verified" in how and "claim" not in how
            stats.allowlisted += how == {"allowlist"}
        if missing and sentence.section in pending:
            stats.pending += 1
            continue
        for occurrence, covering, detail in missing:
            findings.append(
                (
                    line_of(sentence, occurrence.start),
                    explain(occurrence, sentence, covering, detail, held, report_name),
                )
            )
    findings += check_captions(page, config, records)
    for entry in allowlist:
        if not entry.used:
            findings.append(
                (
                    None,
                    f"{allowlist_path.name}: the entry {entry.phrase!r} ({config.PAGE}) covers no "
                    "word the check would flag: remove it",
                )
            )
    return findings, stats


def scope_fits(occurrence: Occurrence, script: str, claim: dict, held, derived=frozenset()) -> bool:
    """A scope word fits its claim: every seed needs an every-seed claim that
    held in every run of the robustness report; every kernel, a claim that
    held under every variant at the page's seeds. A derived section's claim
    is computed from the report's runs themselves (the report does not rerun
    it), so it fits when it holds and the report exists."""
    if script in derived:
        return held is not None and bool(claim.get("holds")) and claim.get("every_seed", True)
    record = (held or {}).get((script, claim["statement"]))
    if record is None:
        return False
    if KERNEL_SCOPE.search(occurrence.word):
        return record["every kernel"]
    return claim.get("every_seed", True) and record["every run"]


def explain(occurrence: Occurrence, sentence: Sentence, covering, detail: str, held, report_name: str) -> str:
    """What evidence the word lacks."""
    where = {"prose": "", "caption": " (in a figure caption)", "alt": " (in alt text)"}[sentence.kind]
    said = f"{KINDS[occurrence.kind]} {occurrence.word!r} in section {sentence.section}{where}"
    if occurrence.kind == "general":
        if covering:
            script, claim = covering[0]
            if not claim.get("every_seed", True) and not KERNEL_SCOPE.search(occurrence.word):
                why = (
                    f"the claim backing it, {script}'s \"{claim['statement']}\", is about the page's run only "
                    "(every_seed=False): say it is this run's result, or back it with an every-seed claim"
                )
            elif held is None:
                why = f"the page has no robustness report ({report_name}) to show the claim held in every run"
            elif (script, claim["statement"]) not in held:
                why = (
                    f'{script}\'s claim "{claim["statement"]}" is not in the robustness report: '
                    "`make robustness` reruns it"
                )
            else:
                why = (
                    f'{script}\'s claim "{claim["statement"]}" did not hold in every run of the robustness '
                    "report: narrow the words to the page's run"
                )
        else:
            why = (
                "no phrase around it is backed by an every-seed claim that held in every run of the robustness "
                "report; back it (a `% backs script:key` line under it), narrow it, or allowlist it with a reason"
            )
    elif occurrence.kind == "one_run":
        why = "no phrase around it is backed by a claim of the section's scripts (% backs)"
    elif detail and SIGNED_DIRECTION.get(occurrence.word.lower()):
        why = f"the quotes say the opposite: {detail}; and no claim backs the phrase"
    else:
        why = (
            "no claim backs the phrase around it and the sentence has no quoted number on each side to "
            "compare; back it (a `% backs script:key` line under it), or allowlist it with a reason"
        )
    return f'{said}: {why}: "{shorten(sentence.text)}"'


def shorten(text: str, width: int = 140) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def known_units(records: dict) -> list[str]:
    """Every unit a quote of the page declares and every unit word, longest
    first (so "times as fast" is read before "times")."""
    return sorted(
        {u for r in records.values() for q in r.get("quotes", {}).values() for u in units_of(q)} | set(UNIT_WORDS),
        key=len,
        reverse=True,
    )


def check_units_and_runs(sentence: Sentence, records: dict, units: list[str] | None = None) -> list[tuple[int, str]]:
    """The unit after each quoted number, and the runs the sentence names
    (``units``: known_units(records), computed once for a page)."""
    findings = []
    units = units if units is not None else known_units(records)
    for number in sentence.bound:
        declared = [units_of(q) for _, _, q in number.quotes]
        if not all(declared) or declared_unit_span(number, sentence.text):
            pass  # a quote without a unit, or the unit it declares
        else:
            declared = sorted({u for forms in declared for u in forms})
            after = sentence.text[number.end :].lstrip()
            written = next((u for u in units if re.match(rf"{re.escape(u)}(?![\w-])", after)), None)
            ratio = RATIO_UNIT.match(after)  # "times smaller" after a quote that is "times bigger"
            if ratio and (written is None or len(ratio.group()) > len(written)):
                written = ratio.group()
            if written and not any(u.startswith(written + " ") for u in declared):
                names = "/".join(f"{s}.{n}" for s, n, _ in number.quotes)
                findings.append(
                    (
                        line_of(sentence, number.start),
                        (
                            f"{number.token} in section {sentence.section} is followed by the unit {written!r}, but it "
                            f'is {names}, in {" or ".join(repr(u) for u in declared)}: "{shorten(sentence.text)}"'
                        ),
                    )
                )
        by_script: dict[str, list] = {}
        for script, name, quote in number.quotes:
            by_script.setdefault(script, []).append((name, quote))
        for script, quotes in by_script.items():
            if not all(run_names(q, n) for n, q in quotes):
                continue
            every_run = {r for q in records.get(script, {}).get("quotes", {}).values() for r in run_names(q)}
            named = mentioned(sentence.text, every_run)
            own = {r for n, q in quotes for r in run_names(q, n)}
            if named and not named & own:
                names = "/".join(f"{script}.{n}" for n, _ in quotes)
                findings.append(
                    (
                        line_of(sentence, number.start),
                        (
                            f"{number.token} in section {sentence.section} is {names}, a number of the "
                            f"{run_names(*quotes[0][::-1])[0]!r} run, but its sentence names only "
                            f'{", ".join(sorted(named))}: "{shorten(sentence.text)}"'
                        ),
                    )
                )
    return findings


def check_captions(page, config, records: dict) -> list[tuple[int | None, str]]:
    """Each caption phrase a drawing script declares must be in the caption
    or alt text of the figure that shows its SVG, and backed by a claim."""
    findings = []
    shown: dict[str, list] = {}
    for passage in page.passages:
        if passage.figure and passage.kind in ("caption", "alt"):
            shown.setdefault(passage.figure, []).append(passage)
    for script, record in sorted(records.items()):
        backed = {clean(p) for c in record.get("claims", []) for p in c.get("backs", [])}
        for svg, phrases in record.get("caption_phrases", {}).items():
            passages = shown.get(svg, [])
            if not passages:
                findings.append(
                    (None, f"{script} declares caption phrases for {svg}, but no figure of the page shows it")
                )
                continue
            said = " ".join(clean(p.text) for p in passages)
            line = next((p.line for p in passages if p.kind == "caption"), passages[0].line)
            for phrase in phrases:
                if clean(phrase) not in backed:
                    findings.append(
                        (
                            line,
                            f"{script}'s caption phrase {phrase!r} for {svg} is backed "
                            "by no claim of the script (add it to a `% backs` line of the section)",
                        )
                    )
                if clean(phrase) not in said:
                    findings.append(
                        (
                            line,
                            f"the caption and alt text of {svg} no longer say "
                            f"{phrase!r}, which {script} declares for it (backed by a "
                            "claim): restore the words, or change the script",
                        )
                    )
    return findings
