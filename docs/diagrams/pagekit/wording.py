"""The words around the numbers, guarded like the numbers (part of `make check`).

A controlled vocabulary, declared once below, of the words that turn a number
into a conclusion:

- direction and comparison words next to a quoted number, built from their
  lemmas' inflections (DEGREE and VERBS: higher, highest, rose, fell,
  grown, raises, helps, best, exceeds, ...; above, times, ...);
- scope words that make a result general (every seed, each seed, across
  seeds, all three seeds, consistently, reliably, regardless of the seed,
  always, never, in general, ...);
- one-run words that make it one run's result (this run, the page's run, ...);
- range words that state a result over a set of settings (at larger rates,
  at every rate, at both rates, at rates up to 1, across its window, ...);
- causal words, from their verbs' inflections (because, due to, therefore,
  causes, explained, shows that, led to, ...), and negations (not, cannot,
  neither, nor, none, ...-n't).

Every such word counts wherever it stands in its sentence, with or without a
number in it, except spellings that compare nothing (NOT_A_COMPARISON: a
product "error times its input", "no longer", "the table below").

The check reads every sentence of the prose, the captions and the alt text of
a section that has scripts, and each occurrence of such a word must have
evidence, in this order:

1. it sits inside a phrase one of the section's claims backs (a ``% backs``
   line of the page, see check_page.attach_backing),
   and the claim's scope fits the word: a scope word needs an every-seed
   claim that held in every run of the page's robustness report (or a
   holding claim of a section computed from that report, DERIVED_SECTIONS,
   which the report does not rerun); a range word a sweep claim
   (``section.sweep_claim``: the same condition checked at every point of a
   declared set of rates or settings) that held at every point, never a
   claim tested at one point; a one-run word or a direction word any claim;
2. or the quotes verify it: the word is part of the unit its number's quote
   declares ("1,304 times bigger", a quote with unit "times bigger"); or a
   signed word (larger, below, fewer, ...) compares two quoted numbers the
   way their values do ("2.150, lower than 3.330"), or stands right before a
   quote whose recorded value lies that side of its printed text ("below
   1 × 10⁻⁶" for a loss printed as the power of ten above it); or a verb of
   change goes the way its two quoted ends do ("falls from 10,343,849 to
   1.12"); or a superlative or a verb of change stands by a number whose
   quote's name says that statistic (largest_qk, grad_max,
   clipped_divisor_rise, warmup_gain_post) or that is the extreme of its
   own vector quote;
3. or the sentence holds an entry of the allowlist (wording_allowlist.toml,
   one phrase per entry, each with its reason) that covers the word, unless
   the quotes contradict the word (an entry cannot silence a reversed
   direction). Every entry is listed in the page's golden record
   (page.json), so a new one fails the check until `make golden` pins it.

Sections without scripts (a reading list, a section on papers only) are
outside the rule: no run backs them.

Words inside the text of a link to one of the page's sections ("[across
three seeds](#10-across-three-seeds)") are that section's name and do not
count.

Besides, a quote knows what it is (``section.quote(..., unit=, run=)``): the
unit word written after a number must be its quote's declared unit (a quote
without unit= accepts none, and the allowlist cannot give one), and a sentence
that names runs of the quote's script must name the quote's own run. A
figure declares its caption's key phrases (``save_figure(...,
caption_phrases=)``), each backed by a claim, and the caption or alt text of
the figure that shows the SVG must say each.

Each quoted number in a table is read under its row's label and its
column's header, which must name its quote's run= and settings
(check_tables).

Light on purpose (re and tomllib): `make check` on both pages stays under 2 s.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import tomllib
from itertools import pairwise
from dataclasses import dataclass, field
from pathlib import Path

from pagekit.paths import PACKAGE_DIR
from pagekit.registry import claim_scripts

ALLOWLIST = PACKAGE_DIR / "wording_allowlist.toml"

# --- the vocabulary ---------------------------------------------------------

# Direction words, built from their lemmas' inflections (no lemmatiser is
# installed, so an explicit table: the regular forms by rule, the irregular
# ones spelled out). A sign of +1 says the number the word stands by is the
# larger, or went up ("A is higher than B": A > B; "rose from A to B": A < B);
# -1 the smaller, or went down; 0 a direction the quotes cannot verify
# ("better" may mean a higher accuracy or a lower loss): a claim or the
# allowlist backs it.
#
# Adjectives and adverbs of degree: lemma -> (sign, irregular comparative and
# superlative, or None for the regular -er/-est).
DEGREE = {
    "high": (+1, None),
    "large": (+1, None),
    "big": (+1, None),
    "great": (+1, None),
    "long": (+1, None),
    "wide": (+1, None),
    "fast": (+1, None),
    "low": (-1, None),
    "small": (-1, None),
    "few": (-1, None),
    "short": (-1, None),
    "narrow": (-1, None),
    "slow": (-1, None),
    "many": (+1, ("more", None)),  # "most" is a quantifier ("at most 3"), not an order
    "little": (-1, ("less", None)),  # and "least" ("at least 3")
    "good": (0, ("better", "best")),
    "bad": (0, ("worse", "worst")),
}
# Verbs: lemma -> (sign, role, irregular past and past participle, or None).
# A comparing verb sets two numbers side by side ("A exceeds B"); a verb of
# change moves one ("rose from A to B"); an appraising verb judges ("helps").
VERBS = {
    "exceed": (+1, "compare", None),
    "beat": (0, "compare", ("beat", "beaten")),
    "outperform": (0, "compare", None),
    "raise": (+1, "change", None),
    "rise": (+1, "change", ("rose", "risen")),
    "grow": (+1, "change", ("grew", "grown")),
    "increase": (+1, "change", None),
    "lower": (-1, "change", None),
    "fall": (-1, "change", ("fell", "fallen")),
    "shrink": (-1, "change", ("shrank", "shrunk")),
    "decrease": (-1, "change", None),
    "help": (0, "appraise", None),
    "hurt": (0, "appraise", ("hurt", "hurt")),
    "improve": (0, "appraise", None),
    "worsen": (0, "appraise", None),
}
# Comparison words that are no inflection of a lemma above.
OTHER_DIRECTION = {"above": +1, "below": -1, "ahead": 0, "times": 0, "twice": 0, "half as": 0}
VOWELS = "aeiou"


def _doubles(stem: str) -> bool:
    """big -> bigger, but high -> higher and exceed -> exceeded: a final
    consonant after one short vowel of a one-syllable stem doubles."""
    return (
        len(stem) >= 3
        and stem[-1] not in VOWELS + "wxy"
        and stem[-2] in VOWELS
        and stem[-3] not in VOWELS
        and sum(c in VOWELS for c in stem) == 1
    )


def _suffixed(stem: str, suffix: str) -> str:
    if stem.endswith("e") and suffix[0] in "ei":
        return stem[:-1] + suffix
    if stem.endswith("y") and stem[-2] not in VOWELS and suffix[0] == "e":
        return stem[:-1] + "i" + suffix
    return stem + stem[-1] + suffix if _doubles(stem) else stem + suffix


def degree_forms(lemma: str, irregular) -> dict[str, str]:
    """form -> "comparative" or "superlative"."""
    comparative, superlative = irregular or (_suffixed(lemma, "er"), _suffixed(lemma, "est"))
    return {f: role for f, role in ((comparative, "comparative"), (superlative, "superlative")) if f}


def verb_forms(lemma: str, irregular) -> list[str]:
    """The base form, third person, past, past participle and -ing form."""
    past, participle = irregular or (_suffixed(lemma, "ed"),) * 2
    third = lemma + ("es" if lemma.endswith(("s", "sh", "ch", "x")) else "s")
    return list(dict.fromkeys((lemma, third, past, participle, _suffixed(lemma, "ing"))))


@dataclass(frozen=True)
class Form:
    """One spelling of the vocabulary: its lemma, sign and role
    (comparative, superlative, compare, change, appraise or other)."""

    lemma: str
    sign: int
    role: str


def direction_vocabulary() -> dict[str, Form]:
    words = {}
    for lemma, (sign, irregular) in DEGREE.items():
        for form, role in degree_forms(lemma, irregular).items():
            words[form] = Form(lemma, sign, role)
    for lemma, (sign, role, irregular) in VERBS.items():
        for form in verb_forms(lemma, irregular):
            words.setdefault(form, Form(lemma, sign, role))  # "lower" stays the comparative of low
    for word, sign in OTHER_DIRECTION.items():
        words[word] = Form(word, sign, "other")
    return words


VOCABULARY = direction_vocabulary()
SIGNED_DIRECTION = {
    w: f.sign for w, f in VOCABULARY.items() if f.sign and f.role in ("comparative", "compare", "other")
}
# Direction words are found by looking each word up in a set (a regular
# expression alternating every form was the slowest step of `make check`).
WORD = re.compile(r"\b[A-Za-z]+\b")
FOLD = re.compile(r"\w+fold", re.I)  # "thousandfold"
SINGLE_WORDS = frozenset(w for w in VOCABULARY if w.isalpha())
PHRASES = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in VOCABULARY if not w.isalpha()) + r")\b", re.I)


# Spellings of the vocabulary that compare nothing, told apart by the words
# around them (each pattern matches the direction word itself, as a group):
# a product or a verb ("error times its input", "the next page times it":
# "times" compares only after a count, "ten times", "thousands of times",
# "MATH times"); a frequency ("run twice more": "twice" compares only before
# "as" or a comparative); "no longer", "any longer" (time, not length); and
# a place on the page ("measured below", "the table above", "(below)"),
# never one followed by what it would be above or below.
COUNTS = frozenset(
    "one two three four five six seven eight nine ten hundred thousand million billion many several few of a".split()
)
PAGE_PLACE_BEFORE = (
    r"(?:shown|see|seen|measured|measure it|described|given|counted|listed|noted|explained|derived|defined|"
    r"table|tables|block|blocks|figure|figures|notes|section|sections|code|list|forms|counts|scores|replay|"
    r"conclusion|conclusions|others|experiment|experiments)"
)
NOT_A_COMPARISON = re.compile(
    r"\b(?P<twice>twice)\b(?! as\b| (?:\w+er|more|less|the)\b)"
    r"|\b(?:no|any) (?P<longer>longer)\b"
    rf"|\b{PAGE_PLACE_BEFORE} (?:just )?(?P<place>above|below)\b(?! (?:\d|MATH|the|a|an|it|its|that|those|them|one|zero|both)\b)"
    r"|\((?P<bracketed>above|below)\)",
    re.I,
)
TIMES = re.compile(r"(\S+) (times)\b", re.I)


def not_comparing(text: str) -> set[int]:
    """Where a vocabulary spelling compares nothing (NOT_A_COMPARISON, and a
    "times" after no count): the start of each such word."""
    idle = {m.start(g) for m in NOT_A_COMPARISON.finditer(text) for g in m.groupdict() if m.group(g)}
    for m in TIMES.finditer(text):
        before = m.group(1).lower()
        if not (before[-1:].isdigit() or before == "math" or before in COUNTS):
            idle.add(m.start(2))
    return idle


def direction_words(text: str) -> list[re.Match]:
    """The direction words of ``text`` (VOCABULARY, and "thousandfold"), in
    order, without the spellings that compare nothing (NOT_A_COMPARISON)."""
    found = [m for m in WORD.finditer(text) if m.group().lower() in SINGLE_WORDS or FOLD.fullmatch(m.group())]
    found += PHRASES.finditer(text)
    if any(m.group().lower() in ("times", "twice", "longer", "above", "below") for m in found):
        idle = not_comparing(text)
        found = [m for m in found if m.start() not in idle]
    return sorted(found, key=lambda m: m.start())


# What a quote's name says it is: a superlative or a verb of change next to a
# number is verified when the number's quote names that statistic
# (largest_difference, grad_max, clipped_divisor_rise) and contradicted when
# it names the opposite one (peak_loss beside "smallest").
MAXIMUM = {"max", "maximum", "largest", "highest", "biggest", "greatest", "peak", "longest", "widest"}
MINIMUM = {"min", "minimum", "smallest", "lowest", "fewest", "shortest", "narrowest"}
RISE = {"rise", "raise", "increase", "growth", "grow", "up", "peak"}  # a loss rises to its peak
FALL = {"fall", "drop", "decrease", "reduction", "shrink", "down", "decline"}
# Lemmas whose superlative is an order of the quoted values themselves (the
# largest of a vector); "best", "worst", "fastest" and "slowest" say which
# end is good or quick, which the values cannot tell.
SIZE_LEMMAS = {lemma for lemma in DEGREE if lemma not in ("fast", "slow", "good", "bad", "many", "little")}


def name_groups(form: Form) -> tuple[set[str], set[str]]:
    """The name words that say a quote is what the word says, and those
    that say the opposite."""
    if form.role == "superlative" and form.lemma in SIZE_LEMMAS:
        return (MAXIMUM, MINIMUM) if form.sign > 0 else (MINIMUM, MAXIMUM)
    if form.role == "superlative":
        same = degree_forms(form.lemma, DEGREE[form.lemma][1])
        opposite = {"good": "bad", "bad": "good", "fast": "slow", "slow": "fast"}[form.lemma]
        return {f for f, r in same.items() if r == "superlative"}, {
            f for f, r in degree_forms(opposite, DEGREE[opposite][1]).items() if r == "superlative"
        }
    if form.role == "change" and form.sign:
        rising = RISE | {f for lemma, v in VERBS.items() if v[:2] == (+1, "change") for f in verb_forms(lemma, v[2])}
        falling = FALL | {f for lemma, v in VERBS.items() if v[:2] == (-1, "change") for f in verb_forms(lemma, v[2])}
        return (rising, falling) if form.sign > 0 else (falling, rising)
    if form.role == "appraise":  # warmup_gain_post: "warmup helps post-norm, by 0.61"
        good, bad = {"gain", "benefit", "improvement"}, {"cost", "harm", "penalty"}
        return (good, bad) if form.lemma in ("help", "improve") else (bad, good)
    return set(), set()


# Scope words: the result is general. "not at every seed" is a one-run phrase.
# ("with every seed shifted by one" describes the robustness report's method,
# not a result's scope.)
# "every run" and "all runs" are results' scope; "each run" and "both runs"
# usually walk through the runs shown ("each run's score"), so only seeds,
# seed offsets, variants and kernels count after "each", "both" and "across".
REPEATS = r"(?:seeds?(?! shifted)|seed offsets?|(?:numeric )?variants?|(?:numeric )?kernels?)"
SCOPE_NOUNS = rf"(?:{REPEATS}|runs?)"
COUNT_WORDS = r"(?:two|three|four|five|six|seven|eight|nine|ten|\d+)"
GENERAL = re.compile(
    rf"\b(?:(?:at|for|under|in|with|on) )?(?:every|any|all(?: of)?(?: the| these| those)?(?: {COUNT_WORDS})?) "
    rf"{SCOPE_NOUNS}\b|"
    rf"\b(?:(?:at|for|under|in|with|on) )?(?:each|both) {REPEATS}\b|"
    rf"\bacross (?:the |all (?:the )?|every |both )?(?:{COUNT_WORDS} )?{REPEATS}\b|"
    r"\bregardless of (?:the )?(?:seeds?|runs?|variants?|kernels?)\b|\bwhatever the (?:seed|run|variant|kernel)\b|"
    r"\b(?:consistently|reliably|robustly)\b|"
    r"\balways\b|\bnever\b|\bin general\b|"
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
FAR = 10**6  # words_between across a clause break: never near
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
    "minutes",
    "min",
    "hours",
    "s",
    "%",
)

# A ratio's unit as the prose writes it: "times bigger", "times as many", "times the usual size".
RATIO_UNIT = re.compile(r"(?:times|×)(?: (?:as|the|its|more|less))? (?!\d)[\w-]+")

# What may stand between a direction word and the number it compares with.
COMPARAND_GAP = re.compile(r"\s*(?:than\s+(?:[\w'’-]+\s+){0,3})?", re.I)

# Range words: a result stated over a set of settings. Such a word needs a
# sweep claim behind it, one that checked every point of the set; a claim
# measured at one point cannot back it (the page's covariate-shift result
# held at 0.1 and 0.3 and reversed at 1, inside the window its words named).
SETTING_NOUN = r"(?:(?:learning )?rate|setting|depth|width|(?:batch |step )size)"
RANGE_ADJECTIVES = r"(?:larger|higher|smaller|lower|large|high|small|low|other|several|many|more)"
# "at each learning rate" walks through the points shown ("the accuracy at
# each learning rate"), and "at every learning rate of 0.001, 0.01 and 0.1"
# or "for each batch size m in 2, 4, ..." lists a method's settings: neither
# is a range word. "at every rate" and "at each larger rate" are.
ENUMERATED = r"(?!,? (?:of|in|from)\b| [a-zA-Z]\b| \$)"
RANGE = re.compile(
    rf"\b(?:at|over|across|under|in) (?:every (?:{RANGE_ADJECTIVES} )?|each {RANGE_ADJECTIVES} ){SETTING_NOUN}\b"
    rf"{ENUMERATED}|"
    rf"\b(?:at|for|over|across|under|in) (?:all|both)(?: (?:the|these|those))?(?: {COUNT_WORDS})? "
    rf"(?:{RANGE_ADJECTIVES} )?{SETTING_NOUN}s\b|"
    rf"\b(?:at|for|over|across|under|in) (?:(?:the|these|those) )?(?:{COUNT_WORDS} )?{RANGE_ADJECTIVES} "
    rf"{SETTING_NOUN}s\b|"
    rf"\b(?:at|for|over|across|under|in) (?:the )?{SETTING_NOUN}s (?:up to|from|between|above|below|as "
    rf"(?:large|high|small|low) as)\b|"
    rf"\b(?:whatever|regardless of) the {SETTING_NOUN}\b|"
    r"\b(?:across|over|throughout|within) (?:the |its |this |that |each |every )?(?:(?:\w+ )?\w+(?:'s|’s) )?(?:own )?"
    r"(?:whole |entire )?(?:window|range)\b",
    re.I,
)

# Causal words: the sentence says why a result came out as it did, or that
# a run proves something. Verbs by their inflections (CAUSAL_VERBS, with the
# word that must follow where the bare verb is no verdict: "shows that", not
# "shows the loss"); the rest spelled out. "since" and "so that" are left
# out: on these pages they say when and what for, not why.
CAUSAL_VERBS = {
    "cause": ("", None),
    "explain": ("", None),
    "confirm": ("", None),
    "prove": ("", ("proved", "proven")),
    "show": (" that", ("showed", "shown")),
    "lead": (" to", ("led", "led")),
    "result": (" in", None),
}
NOUN_SPELLINGS = ("result in",)  # "the same result in both batches": the noun
CAUSAL_PHRASES = (
    "because",
    "due to",
    "owing to",
    "thanks to",
    "as a result",
    "therefore",
    "hence",
    "which is why",
    "that is why",
)


def causal_vocabulary() -> list[str]:
    words = list(CAUSAL_PHRASES)
    for lemma, (after, irregular) in CAUSAL_VERBS.items():
        words += [form + after for form in verb_forms(lemma, irregular)]
    return [w for w in words if w not in NOUN_SPELLINGS]


CAUSE = re.compile(
    r"\b(?:" + "|".join(sorted((re.escape(w) for w in causal_vocabulary()), key=len, reverse=True)) + r")\b", re.I
)
# Negations next to a quoted number: "did not diverge at 0.3" turned into
# "diverged at 0.3" flips a verdict. ("no" and "without" name runs and
# settings here: "no QK-norm", "post-norm without warmup"; "never" is a scope
# word above.)
NEGATION = re.compile(r"\b(?:not|cannot|neither|nor|none|\w+n't)\b", re.I)

KINDS = {
    "general": "a scope word",
    "one_run": "a one-run word",
    "direction": "a direction word",
    "range": "a range word",
    "cause": "a causal word",
    "negation": "a negation",
}


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


# The text of a link to a heading of the page ("[across three seeds](#10-...)")
# is that section's name, not a statement: its words are marked while the
# text is cleaned, and no vocabulary word inside one counts.
NAME_OPEN, NAME_CLOSE = "\ue000", "\ue001"


def _link_text(m: re.Match) -> str:
    if m.group(1) is None:
        return m.group(2)
    return NAME_OPEN + m.group(1) + NAME_CLOSE if m.group().split("](", 1)[1].startswith("#") else m.group(1)


def clean_with_names(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Markdown source as the reader reads it, one space between words:
    links as their text, code as its text, maths as one word; and the spans
    of the text of links to the page's own sections."""
    text = IMAGE.sub(" ", text)
    text = LINK.sub(_link_text, text)
    text = MATH.sub("MATH", text)
    text = CODE_SPAN.sub(lambda m: m.group(2), text)
    text = EMPHASIS.sub("", text)
    text = " ".join(text.split())
    if NAME_OPEN not in text:
        return text, []
    out, spans, start = [], [], None
    for c in text:
        if c == NAME_OPEN:
            start = len(out)
        elif c == NAME_CLOSE:
            spans.append((start or 0, len(out)))
        else:
            out.append(c)
    return "".join(out), spans


def clean(text: str) -> str:
    return clean_with_names(text)[0]


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
    kind: str  # general, one_run, direction or range
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
    # Each bound word by kind (direction, general, one_run; unit: a unit word
    # after a quoted number) and by its evidence (claim, verified, allowlist;
    # for units: declared).
    words: dict[str, dict[str, int]] = field(default_factory=dict)

    def count(self, kind: str, how: str) -> None:
        self.words.setdefault(kind, {}).setdefault(how, 0)
        self.words[kind][how] += 1


def read_allowlist(path: Path, error) -> dict:
    try:
        return copy.deepcopy(parsed_toml(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as problem:
        raise error(f"{path.name}: not valid TOML: {problem}") from None


@functools.lru_cache(maxsize=4)
def parsed_toml(text: str) -> dict:
    """The allowlist parsed once per text: the check reads it several times a page."""
    return tomllib.loads(text)


@functools.lru_cache(maxsize=None)
def unit_pattern(unit: str) -> re.Pattern:
    return re.compile(rf"{re.escape(unit)}(?![\w-])")


@functools.lru_cache(maxsize=None)
def cleaned(phrase: str) -> str:
    """clean(), once per backed phrase: every sentence of a section looks for every phrase."""
    return clean(phrase)


def load_allowlist(path: Path, page: str, error) -> list[Allowed]:
    """The allowlist's entries for one page; ``error`` builds the exception
    for a malformed file."""
    data = read_allowlist(path, error)
    if "unit" in data:
        raise error(
            f"{path.name}: [[unit]] entries are gone: declare the unit on the quote in its script "
            "(section.quote(..., unit=...))"
        )
    if set(data) - {"allow"}:
        raise error(f"{path.name}: only [[allow]] entries belong here, not {sorted(set(data) - {'allow'})}")
    entries = []
    for i, entry in enumerate(data.get("allow", []), 1):
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), str) and entry[k].strip() for k in ("page", "phrase", "reason")
        ):
            raise error(f"{path.name}: entry {i} needs a page, a phrase and a reason")
        if entry["page"] == page:
            entries.append(Allowed(page, " ".join(entry["phrase"].split()), entry["reason"]))
    return entries


def pinned_allowlist(path: Path, page: str, error=ValueError) -> list[dict]:
    """Every allowlist entry of a page, as the golden record (page.json)
    lists it: a new entry is a reviewed change that `make golden` shows."""
    return [{"phrase": e.phrase, "reason": e.reason} for e in load_allowlist(path, page, error)]


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


# The words without which a pattern cannot match: a sentence with none of
# them skips it (most sentences hold no scope, range or causal word).
NEGATING = frozenset({"not", "neither", "nor", "cannot", "none"})
ONE_RUN_WORDS = frozenset({"run", "runs", "seed", "seeds", "cpu"})
GENERAL_WORDS = frozenset(
    "every any all each both across regardless whatever consistently reliably robustly always never general "
    "generally time exception invariable invariably".split()
)
RANGE_WORDS = frozenset("rate rates setting settings depth depths width widths size sizes window range".split())
CAUSE_WORDS = frozenset(w for phrase in causal_vocabulary() for w in phrase.lower().split()[:1])


def find_occurrences(text: str) -> list[Occurrence]:
    found = []
    lowered = text.lower()
    words = set(WORD.findall(lowered))
    negating = bool(words & NEGATING) or "n't" in lowered
    negated = [(m.start(), m.end()) for m in NEGATED_GENERAL.finditer(text)] if negating else []
    if words & ONE_RUN_WORDS:
        for m in ONE_RUN.finditer(text):
            found.append(Occurrence("one_run", m.group(), m.start(), m.end()))
    if words & GENERAL_WORDS:
        for m in GENERAL.finditer(text):
            if any(a <= m.start() < b + 4 for a, b in negated) or any(o.start <= m.start() < o.end for o in found):
                continue  # "not at every seed" says it is one run's
            found.append(Occurrence("general", m.group(), m.start(), m.end()))
    for m in direction_words(text):
        found.append(Occurrence("direction", m.group(), m.start(), m.end()))
    if words & RANGE_WORDS:
        for m in RANGE.finditer(text):
            if not any(o.start <= m.start() < o.end for o in found if o.kind == "general"):
                found.append(Occurrence("range", m.group(), m.start(), m.end()))
    if words & CAUSE_WORDS:
        for m in CAUSE.finditer(text):
            found.append(Occurrence("cause", m.group(), m.start(), m.end()))
    if negating:
        for m in NEGATION.finditer(text):
            if not any(o.start <= m.start() < o.end for o in found):  # "not at every seed" is a one-run phrase
                found.append(Occurrence("negation", m.group(), m.start(), m.end()))
    return sorted(found, key=lambda o: o.start)


def words_between(text: str, a: int, b: int) -> int:
    """Words between two positions; a clause break between them counts as
    too far."""
    between = text[min(a, b) : max(a, b)]
    return FAR if CLAUSE_BREAK.search(between) else len(between.split())


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


NAME_WINDOW = NEAR_WORDS + 2  # words between a superlative or a verb of change and the number it names


def name_words(printed: str) -> set[str]:
    """The words of a quote's printed name (grad_ratio_pre[5]: grad, ratio, pre)."""
    return set(re.split(r"[_\[\]]+", printed.lower())) - {""}


def named_numbers(occurrence: Occurrence, sentence: Sentence) -> list[Bound]:
    """The quoted numbers a superlative or a verb of change speaks of: those
    after it in its clause, at most NAME_WINDOW words away ("the largest is
    7.37"), or, with none there, those before it ("65,504, its largest
    value"); nearest first."""
    text = sentence.text
    after = [
        n
        for n in sentence.bound
        if n.start >= occurrence.end and words_between(text, occurrence.end, n.start) <= NAME_WINDOW
    ]
    if after:
        return after
    before = [
        n
        for n in sentence.bound
        if n.end <= occurrence.start and words_between(text, n.end, occurrence.start) <= NAME_WINDOW
    ]
    return before[::-1]


def verify_change(occurrence: Occurrence, sentence: Sentence, sign: int) -> tuple[bool | None, str]:
    """A verb of change with its two ends quoted: "falls from A to B"."""
    text = sentence.text
    bound = [n for n in sentence.bound if n.start >= occurrence.end and n.value is not None]
    ends = []
    for a, b in pairwise(bound):
        lead = text[occurrence.end : a.start]
        if (
            re.search(r"\bfrom\s*$", lead)
            and words_between(text, occurrence.end, a.start) <= NAME_WINDOW
            and re.fullmatch(r"\s*(?:only )?to\s*", text[a.end : b.start])
        ):
            ends = [a, b]
            break
    if not ends and bound and re.search(r"\bto\s*$", text[occurrence.end : bound[0].start]):
        # "rose to 1.9550 and had fallen back only to 1.6276": from where the last change ended
        earlier = [n for n in sentence.bound if n.end <= occurrence.start and n.value is not None]
        if earlier and re.search(r"\bto\s*$", text[: earlier[-1].start]):
            if words_between(text, occurrence.end, bound[0].start) <= NAME_WINDOW:
                ends = [earlier[-1], bound[0]]
    if not ends:
        return None, ""
    a, b = ends
    if a.value == b.value:
        return False, f"from {a.token} to {b.token} is no change"
    went = "up" if b.value > a.value else "down"
    return (b.value > a.value) == (sign > 0), f"from {a.token} to {b.token} goes {went}"


def verify_order(occurrence: Occurrence, sentence: Sentence, form: Form) -> tuple[bool | None, str]:
    """A superlative or a verb of change against the numbers it speaks of:
    the values at both ends of a change, a vector quote's own order (10.5
    "the largest" of its vector), or the statistic the quote's name says it
    is (largest_qk, clipped_divisor_rise). None when the quotes cannot say."""
    if form.role == "change" and form.sign:
        verdict = verify_change(occurrence, sentence, form.sign)
        if verdict[0] is not None:
            return verdict
    same, opposite = name_groups(form)
    if not same:
        return None, ""
    named = named_numbers(occurrence, sentence)
    # What a quote's name says comes first: 10.5, the lowest of three largest
    # logits, is still a largest logit.
    contradiction = ""
    for number in named:
        for script, printed, _ in number.quotes:
            words = name_words(printed)
            if words & same:
                return True, ""
            if words & opposite and not contradiction:
                said = " or ".join(sorted(words & opposite))
                contradiction = f"{number.token} is {script}.{printed}, by its name {said}"
    if contradiction:
        return False, contradiction
    if form.role == "superlative" and form.lemma in SIZE_LEMMAS:
        for number in named:
            for _, printed, quote in number.quotes:
                index = re.search(r"\[(\d+)\]$", printed)
                if not index or not isinstance(quote["value"], list):
                    continue
                values = [v for v in quote["value"] if isinstance(v, (int, float))]
                mine = quote["value"][int(index.group(1))]
                # Another value is no contradiction: the number may be a rate, not the statistic.
                if len(values) > 1 and mine == (max(values) if form.sign > 0 else min(values)):
                    return True, ""
    return None, ""


def verify_direction(occurrence: Occurrence, sentence: Sentence) -> tuple[bool | None, str]:
    """Whether the quotes agree with a direction word: True, False with what
    they say instead, or None when they cannot say."""
    form = VOCABULARY.get(occurrence.word.lower())
    if form is not None and form.role in ("superlative", "change", "appraise"):
        return verify_order(occurrence, sentence, form)
    return verify_comparison(occurrence, sentence)


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


SETTING = re.compile(r"(?:seed offset )?[\d.,]+")


def is_setting(name: str) -> bool:
    """A run name that is a number, or a seed offset, names a setting of a
    sweep ("0.01" of a learning-rate column, "seed offset 1"): the table rule
    reads it under its column; the sentence rule leaves it out, since prose
    writes numbers for many reasons and one sentence often walks through
    several seeds."""
    return SETTING.fullmatch(name) is not None


@functools.lru_cache(maxsize=None)
def name_pattern(name: str) -> re.Pattern:
    """A run name (or any phrase) as whole words: not inside a longer word,
    nor a number inside a longer number ("3" in "0.3")."""
    return re.compile(rf"(?<![\w-])(?<!\d\.){re.escape(name)}(?![\w-])(?!\.\d)")


def script_run_names(records: dict) -> dict[str, set[str]]:
    """Every run name each script's quotes declare, settings included."""
    return {
        script: {r for q in record.get("quotes", {}).values() for r in run_names(q)}
        for script, record in records.items()
    }


def prose_names(by_script: dict[str, set[str]]) -> set[str]:
    """Every run name of script_run_names that prose may use (settings left out)."""
    return {n for names in by_script.values() for n in names if n and not is_setting(n)}


def name_spans(text: str, names: set[str]) -> list[tuple[int, int, str]]:
    """Where a sentence uses run names: (start, end, name); a name inside a
    longer one it also uses ("post-norm" in "post-norm without warmup") does
    not count, nor a number inside a longer one ("3" in "0.3")."""
    lowered = text.lower()
    spans = [(m.start(), m.end(), n) for n in names if n in lowered for m in name_pattern(n).finditer(lowered)]
    return [(a, b, n) for a, b, n in spans if not any(c <= a and b <= d and (d - c) > (b - a) for c, d, _ in spans)]


NAME_AFTER = frozenset({"with", "for", "on", "in", "under", "by", "from"})  # "2.150 with QK-norm", "1.6018 skipped"


def nearest_run(text: str, number: Bound, names: set[str], numbers: list[Bound]) -> str | None:
    """The run a quoted number is read under in its clause: a name right
    after it ("1.974 with QK-norm", "1.6018 skipped"), else the one run named
    between the number and the previous quoted number or clause break
    ("post-norm ends at 2.186 and pre-norm at 2.194"); None when neither, or
    when two runs are named there ("pre-norm ends below post-norm, at 2.150
    against 3.330" pairs them by order, which is not read here)."""
    start_at = max([n.end for n in numbers if n.end <= number.start] + [0])
    breaks = [m.end() for m in CLAUSE_BREAK.finditer(text, start_at, number.start)]
    start_at = max([start_at] + breaks)
    before, after = set(), []
    for start, end, name in name_spans(text, names):
        if start_at <= start and end <= number.start:
            before.add(name)
        elif start >= number.end:
            between = text[number.end : start]
            if len(between.split()) <= 1 and set(between.lower().split()) <= NAME_AFTER:
                after.append((start, name))
    if after:
        return min(after)[1]
    return next(iter(before)) if len(before) == 1 else None


def mentioned(text: str, names: set[str]) -> set[str]:
    """The run names a sentence uses (name_spans)."""
    return {name for _, _, name in name_spans(text, names)}


def quotes_by_text(config, records: dict, numbers, scripts) -> dict[str, list[tuple[str, str, dict]]]:
    """The quotes of ``scripts`` and the page's shared quotes by their
    printed text: text -> [(script, printed name, the quote's record)], an
    element of a vector by its index ("largest_qk[0]")."""
    shared = [tuple(e.partition(".")[::2]) for e in config.SHARED_QUOTES]
    by_text: dict[str, list] = {}
    for script, name in [(s, n) for s in scripts for n in records.get(s, {}).get("quotes", {})] + shared:
        quote = records.get(script, {}).get("quotes", {}).get(name)
        if quote is None:
            continue
        vector = isinstance(quote["text"], list)
        for i, t in enumerate(quote["text"] if vector else [quote["text"]]):
            by_text.setdefault(numbers.normalise(t), []).append((script, f"{name}[{i}]" if vector else name, quote))
    return by_text


def quoted_numbers(text: str, by_text: dict, numbers, patterns) -> list[tuple[re.Match, list]]:
    """The numbers of ``text`` that are quotes (quotes_by_text), with their
    quotes; numbers in a structural pattern ("section 4") left out."""
    structural = [(m.start("n"), m.end("n")) for p in patterns for m in p.finditer(text)]
    found = []
    for m in numbers.numbers_in(text):
        if not any(a <= m.start() and m.end() <= b for a, b in structural):
            quotes = by_text.get(numbers.normalise(m.group()))
            if quotes:
                found.append((m, quotes))
    return found


def page_sentences(page, config, records: dict, numbers) -> list[Sentence]:
    """Every sentence of the prose, captions and alt text of the sections
    that have scripts, with its vocabulary words and its quoted numbers
    (``numbers``: the page check's number reader, numbers_in, as_float and
    normalise)."""
    patterns = [re.compile(p) for p in config.STRUCTURAL]
    texts_of: dict[int, dict[str, list]] = {}  # section -> text -> [(script, printed name, quote record)]
    out = []
    for passage in page.passages:
        scripts = claim_scripts(config, passage.section)
        if not scripts:
            continue  # no script's evidence reaches it (a reading list, the paper-only sections)
        if passage.section not in texts_of:
            texts_of[passage.section] = quotes_by_text(config, records, numbers, scripts)
        by_text = texts_of[passage.section]
        for offset, raw in sentences(passage.text):
            text, names = clean_with_names(raw)
            occurrences = [o for o in find_occurrences(text) if not any(a <= o.start and o.end <= b for a, b in names)]
            if not occurrences and not any(c.isdigit() for c in text):
                continue
            bound = [
                Bound(m.start(), m.end(), m.group(), numbers.as_float(numbers.normalise(m.group())), quotes)
                for m, quotes in quoted_numbers(text, by_text, numbers, patterns)
            ]
            line = passage.line + passage.text.count("\n", 0, offset)
            # Every word of the vocabulary counts wherever it stands: a
            # comparison a clause away from any number ("post-norm ended far
            # above pre-norm") or a negation in a sentence without one ("the
            # learning rate is not to blame") states a result all the same.
            out.append(Sentence(passage.section, line, text, passage.kind, occurrences, bound, raw))
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
    lowered = sentence.text.lower()
    for script in scripts:
        for claim in records.get(script, {}).get("claims", []):
            for phrase in claim.get("backs", []):
                wanted = cleaned(phrase).lower()
                if wanted not in lowered:
                    continue  # most phrases are in no given sentence
                spans += [(a, b, script, claim) for a, b in literal_spans(sentence.text, lowered, wanted)]
    return spans


def whole_phrase_in(words: str, text: str) -> bool:
    """Whether ``words`` stands in ``text`` as whole words (case kept):
    "float16 has" is not in "bfloat16 has"."""
    at = text.find(words)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(words)] if at + len(words) < len(text) else " "
        if not (before.isalnum() or before in "_-") and not (after.isalnum() or after in "_-"):
            return True
        at = text.find(words, at + 1)
    return False


def literal_spans(text: str, lowered: str, wanted: str) -> list[tuple[int, int]]:
    """Where the lower-case phrase ``wanted`` stands in ``text`` (``lowered``
    is text.lower()), ignoring case: found with str.find, since compiling a
    pattern for each of several hundred phrases was most of `make check`'s
    time once they outgrew re's cache."""
    if len(lowered) != len(text):  # a character whose lower case is longer: positions would shift
        return [(m.start(), m.end()) for m in re.finditer(re.escape(wanted), text, re.I)]
    spans, at = [], lowered.find(wanted)
    while at >= 0:
        spans.append((at, at + len(wanted)))
        at = lowered.find(wanted, at + len(wanted))
    return spans


def check(
    page, config, records: dict, numbers, *, robustness_path: Path, allowlist_path: Path = ALLOWLIST, error=ValueError
) -> tuple[list[tuple[int | None, str]], Stats]:
    """Findings (line, message) of the wording rules for one page, and its
    counts. ``error`` builds the exception for a malformed allowlist."""
    findings: list[tuple[int | None, str]] = []
    stats = Stats()
    allowlist = load_allowlist(allowlist_path, config.PAGE, error)
    stats.allowlist_entries = len(allowlist)
    allowed_phrases = [(entry.phrase.lower(), entry) for entry in allowlist]
    held = robustness_holds(robustness_path)
    derived = set(getattr(config, "DERIVED_SECTIONS", ()))
    report_name = robustness_path.name
    units = known_units(records)
    by_script = script_run_names(records)
    names = prose_names(by_script)
    for sentence in page_sentences(page, config, records, numbers):
        scripts = claim_scripts(config, sentence.section)
        findings += check_units_and_runs(sentence, records, units, stats, names, by_script)
        if not sentence.occurrences:
            continue
        stats.sentences += 1
        spans = backed_spans(sentence, scripts, records)
        lowered = sentence.text.lower()
        allowed_here = [
            (a, b, entry)
            for phrase, entry in allowed_phrases
            if phrase in lowered
            for a, b in literal_spans(sentence.text, lowered, phrase)  # any case: "Largest" opens a sentence
        ]
        how = set()
        missing = []
        for occurrence in sentence.occurrences:
            detail = ""
            covering = [(s, c) for a, b, s, c in spans if a <= occurrence.start and occurrence.end <= b]
            fitting = [
                (s, c)
                for s, c in covering
                if (occurrence.kind != "general" or scope_fits(occurrence, s, c, held, derived))
                and (occurrence.kind != "range" or range_fits(c))
            ]
            if fitting:
                how.add("claim")
                stats.count(occurrence.kind, "claim")
                continue
            if occurrence.kind == "direction" and in_declared_unit(occurrence, sentence):
                how.add("verified")  # "1,304 times bigger": the quote says it is that ratio
                stats.count(occurrence.kind, "verified")
                continue
            verified = None
            if occurrence.kind == "direction":
                verified, detail = verify_direction(occurrence, sentence)
                if verified:
                    how.add("verified")
                    stats.count(occurrence.kind, "verified")
                    continue
            allowed = [entry for a, b, entry in allowed_here if a <= occurrence.start and occurrence.end <= b]
            if allowed and verified is False:  # an entry cannot silence what the quotes contradict
                allowed[0].used = True
                detail += f"; the allowlist entry {allowed[0].phrase!r} cannot cover a word its quotes contradict"
            elif allowed:
                allowed[0].used = True
                how.add("allowlist")
                stats.count(occurrence.kind, "allowlist")
                continue
            missing.append((occurrence, covering, detail))
        if not missing:
            stats.backed += 1
            stats.by_claim += "claim" in how
            stats.verified += "verified" in how and "claim" not in how
            stats.allowlisted += how == {"allowlist"}
        for occurrence, covering, detail in missing:
            findings.append(
                (
                    line_of(sentence, occurrence.start),
                    explain(occurrence, sentence, covering, detail, held, report_name),
                )
            )
    findings += check_captions(page, config, records)
    findings += check_tables(page, config, records, numbers, stats)
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


def range_fits(claim: dict) -> bool:
    """A range word fits a sweep claim that held at every one of its points
    (at least two); a claim made at one point never fits."""
    points = (claim.get("sweep") or {}).get("points", {})
    return len(points) >= 2 and all(points.values())


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
    elif occurrence.kind == "range":
        if covering:
            script, claim = covering[0]
            sweep = claim.get("sweep")
            if sweep:
                failed = [point for point, ok in sweep["points"].items() if not ok]
                why = (
                    f'{script}\'s sweep claim "{claim["statement"]}" fails at {sweep["over"]} '
                    + ", ".join(failed)
                    + ": narrow the words to the points where it holds"
                )
            else:
                why = (
                    f'the claim backing it, {script}\'s "{claim["statement"]}", is tested at one point: a range '
                    "needs a sweep claim (section.sweep_claim) that checks the condition at every point of the "
                    "range the words name; add one, or narrow the words to the point tested"
                )
        else:
            why = (
                "no phrase around it is backed by a sweep claim (section.sweep_claim) checked at every point of "
                "the range; back it (a `% backs script:key` line under it) or narrow the words to the points tested"
            )
    elif occurrence.kind == "one_run":
        why = "no phrase around it is backed by a claim of the section's scripts (% backs)"
    elif detail:
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


def check_units_and_runs(
    sentence: Sentence,
    records: dict,
    units: list[str] | None = None,
    stats: Stats | None = None,
    prose_run_names: set[str] | None = None,
    script_names: dict[str, set[str]] | None = None,
) -> list[tuple[int, str]]:
    """The unit after each quoted number, and the runs the sentence names
    (``units``: known_units(records), computed once for a page;
    ``prose_run_names``: prose_names(script_names),
    computed once for a page; ``script_names``: script_run_names(records))."""
    findings = []
    stats = stats or Stats()
    units = units if units is not None else known_units(records)
    by_script_names = script_names if script_names is not None else script_run_names(records)
    run_name_set = prose_run_names if prose_run_names is not None else prose_names(by_script_names)
    used_names = name_spans(sentence.text, run_name_set)
    for number in sentence.bound:
        if declared_unit_span(number, sentence.text):
            stats.count("unit", "declared")
        else:  # not the unit a quote of it declares
            declared = sorted({u for _, _, q in number.quotes for u in units_of(q)})
            after = sentence.text[number.end :].lstrip()
            written = next((u for u in units if unit_pattern(u).match(after)), None)
            ratio = RATIO_UNIT.match(after)  # "times smaller" after a quote that is "times bigger"
            if ratio and (written is None or len(ratio.group()) > len(written)):
                written = ratio.group()
            if written and not any(u.startswith(written + " ") for u in declared):
                names = "/".join(f"{s}.{n}" for s, n, _ in number.quotes)
                said = (
                    f"in {' or '.join(repr(u) for u in declared)}"
                    if declared
                    else "and declares no unit (a unit word after a number needs its quote's unit=)"
                )
                findings.append(
                    (
                        line_of(sentence, number.start),
                        (
                            f"{number.token} in section {sentence.section} is followed by the unit {written!r}, but it "
                            f'is {names}, {said}: "{shorten(sentence.text)}"'
                        ),
                    )
                )
        if any(a <= number.start and number.end <= b for a, b, _ in used_names):
            continue  # "0.003" of "post-norm, lr 0.003": part of a run's name, not a quote
        by_script: dict[str, list] = {}
        for script, name, quote in number.quotes:
            by_script.setdefault(script, []).append((name, quote))
        for script, quotes in by_script.items():
            if not all(run_names(q, n) for n, q in quotes):
                continue
            every_run = {r for r in by_script_names.get(script, set()) if not is_setting(r)}
            named = mentioned(sentence.text, every_run)
            own = {r for n, q in quotes for r in run_names(q, n) if not is_setting(r)}
            if not own:
                continue
            printed = "/".join(f"{script}.{n}" for n, _ in quotes)
            run = run_names(*quotes[0][::-1])[0]
            if named and not named & own:
                findings.append(
                    (
                        line_of(sentence, number.start),
                        (
                            f"{number.token} in section {sentence.section} is {printed}, a number of the "
                            f"{run!r} run, but its sentence names only "
                            f'{", ".join(sorted(named))}: "{shorten(sentence.text)}"'
                        ),
                    )
                )
                continue
            other = nearest_run(sentence.text, number, every_run, sentence.bound)
            if other is not None and other not in own and named & own:
                findings.append(
                    (
                        line_of(sentence, number.start),
                        (
                            f"{number.token} in section {sentence.section} is {printed}, a number of the "
                            f"{run!r} run, but its clause reads it under {other}: "
                            f'"{shorten(sentence.text)}"'
                        ),
                    )
                )
    return findings


TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
TABLE_RULE = re.compile(r"^[\s|:-]+$")
HEADING = re.compile(r"^## (\d+)\.")


def page_tables(source: str):
    """The pipe tables of a page's source: (section, line of the header,
    header cells, [(line, cells)] of the body rows)."""
    section, table = None, None
    lines = source.splitlines()
    for i, line in enumerate(lines + [""], start=1):
        heading = HEADING.match(line)
        if heading:
            section = int(heading.group(1))
        row = TABLE_ROW.match(line)
        if row is None:
            if table and table[3]:
                yield table
            table = None
            continue
        cells = [c.strip() for c in row.group(1).split("|")]
        if table is None:
            table = (section, i, cells, [])
        elif not TABLE_RULE.match(line):
            table[3].append((i, cells))


def check_tables(page, config, records: dict, numbers, stats: Stats) -> list[tuple[int | None, str]]:
    """Each quoted number in a table of a section with scripts is read under
    its labels: its row's first cell, the row's other cells that quote no
    number (the lineage's step), and its column's header. The run names the labels use must be
    its quote's (run=, or runs= element by element), among them the run's
    own name (the first) and each setting it declares (a run name that is a
    number: its column's rate): labels swapped around pinned numbers then
    fail, however the golden record was re-pinned, and every table number
    must declare its run."""
    findings = []
    patterns = [re.compile(p) for p in config.STRUCTURAL]
    by_script = script_run_names(records)
    for section, _, header, rows in page_tables(page.path.read_text(encoding="utf-8")):
        scripts = claim_scripts(config, section) if section is not None else ()
        if not scripts:
            continue
        by_text = quotes_by_text(config, records, numbers, scripts)
        for line, cells in rows:
            texts = [clean(c) for c in cells]
            quoted = [quoted_numbers(t, by_text, numbers, patterns) for t in texts]
            row_words = [texts[0]] + [t for t, q in zip(texts[1:], quoted[1:], strict=True) if not q]
            for column in range(1, len(texts)):
                heading = clean(header[column]) if column < len(header) else ""
                labels = " | ".join(row_words + [heading])
                for m, quotes in quoted[column]:
                    verdicts = []
                    for script, name, quote in quotes:
                        names = run_names(quote, name)
                        if names:
                            own = set(names)
                            named = mentioned(labels, by_script.get(script, set()))
                            # no other run's name, the run's own name, and every setting it declares
                            needed = {names[0]} | {r for r in names if is_setting(r)}
                            verdicts.append((named <= own and needed <= named, script, name, named, own))
                    if any(ok for ok, *_ in verdicts):
                        stats.count("table", "labels name its run")
                        continue
                    undeclared = [f"{s}.{n}" for s, n, q in quotes if not run_names(q, n)]
                    where = f"{m.group()} in the table of section {section} (row {texts[0]!r}, column {heading!r})"
                    if undeclared:
                        findings.append(
                            (
                                line,
                                f"{where} is {'/'.join(undeclared)}, which declares no run: give the quote run= (or "
                                "runs= for a vector) in the words of the table's labels, so they are checked",
                            )
                        )
                        continue
                    _, script, name, named, own = verdicts[0]
                    findings.append(
                        (
                            line,
                            f"{where} is {script}.{name}, a number of {', '.join(sorted(own))}, but its labels "
                            + (f"name {', '.join(sorted(named))}" if named else "name none of these"),
                        )
                    )
    return findings


def check_captions(page, config, records: dict) -> list[tuple[int | None, str]]:
    """Every figure of the page declares what its caption and its alt text
    must both say: phrases of a `% figure says` line just above it, or of
    its drawing script (``save_figure(..., caption_phrases=)``). Each phrase
    must stand in the caption and in the alt text, and be backed by a claim
    of the section (a `% backs` line), so neither can say the opposite of
    the other or of the run."""
    findings = []
    shown: dict[str, list] = {}
    for passage in page.passages:
        if passage.figure and passage.kind in ("caption", "alt"):
            shown.setdefault(passage.figure, []).append(passage)

    def backed_by(scripts) -> set[str]:
        return {
            clean(p) for name in scripts for c in records.get(name, {}).get("claims", []) for p in c.get("backs", [])
        }

    declared: dict[str, list[tuple[str, str, set[str]]]] = {}  # svg -> (phrase, who declares it, phrases backed)
    for script, record in sorted(records.items()):
        for svg, phrases in record.get("caption_phrases", {}).items():
            if not shown.get(svg):
                findings.append(
                    (None, f"{script} declares caption phrases for {svg}, but no figure of the page shows it")
                )
                continue
            declared.setdefault(svg, []).extend((phrase, script, backed_by([script])) for phrase in phrases)
    for says in page.figure_says:
        scripts = config.SECTION_SCRIPTS.get(says.section, ()) or tuple(records)
        declared.setdefault(says.figure, []).extend(
            (phrase, f"the `% figure says` line at line {says.line}", backed_by(scripts)) for phrase in says.phrases
        )
    for svg, passages in sorted(shown.items()):
        line = next((p.line for p in passages if p.kind == "caption"), passages[0].line)
        if not declared.get(svg):
            findings.append(
                (
                    line,
                    f"figure {svg} declares nothing its caption and alt text must both say: put a "
                    '`% figure says "phrase"` line just above it (a phrase a claim of its section backs)',
                )
            )
            continue
        caption = " ".join(clean(p.text) for p in passages if p.kind == "caption")
        alt = " ".join(clean(p.text) for p in passages if p.kind == "alt")
        for phrase, who, backed in declared[svg]:
            if clean(phrase) not in backed:
                findings.append(
                    (
                        line,
                        f"the phrase {phrase!r} that {who} declares for {svg} is backed by no claim of its "
                        "section (add it to a `% backs` line)",
                    )
                )
            # whole words: "float16 has" is not said by "bfloat16 has"
            said = name_pattern(clean(phrase))
            missing = [where for where, text in (("caption", caption), ("alt text", alt)) if not said.search(text)]
            if missing:
                findings.append(
                    (
                        line,
                        f"the {' and the '.join(missing)} of {svg} no longer say {phrase!r}, which {who} "
                        "declares for it (backed by a claim): both must say it; restore the words",
                    )
                )
    return findings
