"""The record of one section run: its quotes (the numbers the page may
quote), its claims (the statements the prose relies on, each with the
source of its condition), its figures, and the numbers file they make.

A claim records the source text of its condition and the module constants it
reads, so a threshold cannot drift while the prose stays the same. The text
comes from the call itself, in one place (``condition_form``): the running
frame's current CALL instruction has a source span (``co_positions``), which
is parsed and ``ast.unparse``-normalised, so re-wrapping or reformatting the
call changes nothing. A helper that wraps ``claim`` would record its own
call instead; call ``claim``, ``claim_bound`` and ``agree`` directly from the
section script.
"""

from __future__ import annotations

import ast
import linecache
import math
import operator
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from pagekit import numeric_env

NUMERIC_VARIANT = numeric_env.applied_variant()  # before numpy loads

import numpy as np
from matplotlib.figure import Figure

from pagekit.atomic import atomic_write, write_json_atomically
from pagekit.figure_labels import figure_labels
from pagekit.figure_bounds import FigureBoundsError, check_figure_fits, check_texts_apart, drawn_renderer
from pagekit.numformat import QuoteError, format_number
from pagekit.paths import FIGURES_DIR, OTHER_RUNS_DIR, PHONE_SUFFIX
from pagekit.torch_loader import import_torch
from pagekit.style import make_text_legible, phone_layout, wrap_long_titles

PROGRESS_EVERY = 3.0  # seconds between a heavy section's progress lines
FIGURE_MARGIN_PX = 2.0  # everything drawn stays this far (1/72 inch units) inside a figure
QUOTE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

# Errors a section can raise; each message names what went wrong.


class ClaimsFailed(AssertionError):
    """One or more claims of a section did not hold."""


@dataclass
class Quote:
    """One number (or a vector of numbers) the page may quote."""

    name: str
    value: float | list[float]
    text: str | list[str]
    rel_tol: float
    abs_tol: float
    # A measurement of this machine (a timing): recorded with the machine it
    # came from, never pinned by the golden record, tested through claims.
    measured: bool = False
    # What the number is: its unit as the prose writes it ("nats per
    # character") and the run it comes from, as the words the prose names it
    # by ("clipped", "post-norm without warmup"); the page check reads both.
    unit: tuple[str, ...] = ()  # the forms the prose may write ("times larger", "times the usual")
    run: tuple[str, ...] = ()
    runs: tuple[tuple[str, ...], ...] = ()  # a vector's run names, element by element

    def items(self) -> list[tuple[str, float, str]]:
        """(printed name, raw value, text) for each element, in order."""
        if isinstance(self.text, list):
            return [(f"{self.name}[{i}]", v, t) for i, (v, t) in enumerate(zip(self.value, self.text, strict=True))]
        return [(self.name, self.value, self.text)]


@dataclass
class Claim:
    statement: str  # the same words at every seed, so seed reports can match them
    holds: bool
    detail: str = ""  # what was measured, e.g. the largest gap of an agreement
    # False for a statement about the page's own run only (which of two
    # close runs is ahead): it must hold at seed offset 0 under every numeric
    # variant; the robustness report shows, without failing, the seeds where
    # it does not.
    every_seed: bool = True
    # The claim's name for the page: a `% backs <script>:<key> "phrase"` line
    # under the prose ties those exact phrases to it (check_page.attach_backing),
    # and the page check fails when one is missing, so a reversed direction
    # word is caught. Several claims may share a key (one per loop pass).
    key: str | None = None
    # The form of the test that decided it, read from the calling script's
    # source (see condition_form): the golden record pins it, so a bound or
    # an operator cannot change while the statement stays the same.
    condition: str | None = None
    constants: dict[str, Any] = field(default_factory=dict)
    # A sweep claim (Section.sweep_claim): what the points are ("learning
    # rate") and whether the condition held at each, by the point's printed
    # label. The page check lets only such a claim back a range word ("at
    # larger rates", "across its window").
    sweep: dict[str, Any] | None = None


CONSTANT_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
PLAIN_ARRAY_SIZE = 64  # a constant array up to this size is recorded element by element
_CALLS: dict[tuple[str, int, str, int], ast.Call | None] = {}


def _calling_expression(frame) -> ast.Call | None:
    """The call expression the frame is executing (its current CALL
    instruction's source span, Python 3.11's co_positions), parsed; None when
    the source is not on disk (a test's stand-in)."""
    code = frame.f_code
    key = (code.co_filename, code.co_firstlineno, code.co_qualname, frame.f_lasti)
    if key not in _CALLS:
        _CALLS[key] = None
        positions = list(code.co_positions())[frame.f_lasti // 2]
        lines = linecache.getlines(code.co_filename)
        if None not in positions and lines:
            first, last, start, end = positions
            span = [line.encode("utf-8") for line in lines[first - 1 : last]]
            text = (
                span[0][start:end] if first == last else b"".join([span[0][start:], *span[1:-1], span[-1][:end]])
            ).decode("utf-8")
            try:
                node = ast.parse(text.strip(), mode="eval").body
            except SyntaxError:
                node = None
            if isinstance(node, ast.Call):
                _CALLS[key] = node
    return _CALLS[key]


def _plain(value: Any) -> Any:
    """A constant's value as JSON can hold it (a type name for anything else,
    a large array included: never a repr with an address in it)."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray) and value.size <= PLAIN_ARRAY_SIZE:
        return _plain(value.tolist())
    return f"<{type(value).__name__}>"


def condition_form(frame, arguments: Callable[[ast.Call], str | None]) -> tuple[str | None, dict[str, Any]]:
    """(source text of a claim's condition, the module constants it reads
    and their values) for the claim call the script's ``frame`` is making.
    ``arguments`` turns the parsed call into the condition's text (which
    arguments make the test: see claim, claim_bound, agree); ast.unparse
    normalises it, so re-wrapping a line changes nothing."""
    call = _calling_expression(frame)
    text = None if call is None else arguments(call)
    if text is None:
        return None, {}
    read = [n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)]
    constants = {
        name: _plain(frame.f_globals[name])
        for name in dict.fromkeys(read)
        if CONSTANT_NAME.match(name) and name in frame.f_globals and name not in frame.f_locals
    }
    return text, constants


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _source(node: ast.expr | None) -> str | None:
    return None if node is None else ast.unparse(node)


@dataclass
class Section:
    """The context one section script works in: seeds, quotes, claims, figures."""

    page: str
    name: str
    seed_offset: int = 0
    out_dir: Path | None = None  # figures/<page> for the page's own run
    echo: bool = True
    # The tests run heavy sections in a reduced configuration (see choose).
    reduced: bool = False
    variant: str = NUMERIC_VARIANT
    inputs_hash: str | None = None  # set by run_section from section_inputs
    # Measurements (timings) the committed numbers already hold for these very
    # inputs: reused, so rerunning the page (`make -B figures`) changes no byte;
    # REMEASURE=1 takes new ones.
    kept_measurements: dict = field(default_factory=dict)
    measured_on: dict | None = None
    quotes: dict[str, Quote] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    figure_labels: dict[str, list[dict]] = field(default_factory=dict)  # SVG name -> figure_labels()
    caption_phrases: dict[str, list[str]] = field(default_factory=dict)  # SVG name -> phrases
    heavy: bool = False  # the section has a reduced configuration (it called choose)
    untested: list[str] = field(default_factory=list)  # settings a changed configuration left out (index_of)
    results: Any = field(default=None, repr=False)  # what compute returned (the notebook shows it)
    _last_progress: float = -math.inf
    _started: float = field(default_factory=lambda: time.perf_counter())

    @property
    def is_page_run(self) -> bool:
        """The page's own run: seed offset 0 under the pinned numeric
        environment, full configuration. Only it writes into figures/."""
        return self.seed_offset == 0 and self.variant == numeric_env.PINNED and not self.reduced

    def choose(self, *, full: Any, reduced: Any) -> Any:
        """A setting of a heavy section: ``full`` on the page's run,
        ``reduced`` (a handful of steps, the same code path) under the tests."""
        self.heavy = True
        return reduced if self.reduced else full

    def progress(self, message: str, *, force: bool = False) -> None:
        """One progress line on stderr ("section: message"), at most one
        every few seconds unless ``force`` (a run's end, with its time)."""
        now = time.perf_counter()
        if force or now - self._last_progress >= PROGRESS_EVERY:
            self._last_progress = now
            print(f"  {self.name} [{now - self._started:5.1f} s] {message}", file=sys.stderr, flush=True)

    # -- seeds ---------------------------------------------------------------
    def rng(self, seed: int) -> np.random.Generator:
        """``numpy.random.default_rng(seed)``, shifted by the seed offset."""
        return np.random.default_rng(seed + self.seed_offset)

    def torch_generator(self, seed: int):
        """A CPU ``torch.Generator`` seeded with ``seed`` plus the offset."""
        torch = import_torch()
        return torch.Generator().manual_seed(seed + self.seed_offset)

    # -- quotes --------------------------------------------------------------
    def quote(
        self,
        name: str,
        value: Any,
        fmt: str | Callable[[float], str],
        *,
        rel_tol: float = 1e-9,
        abs_tol: float = 0.0,
        allow_inf: bool = False,
        measured: bool = False,
        unit: str | Sequence[str] = (),
        run: str | Sequence[str] = (),
        runs: Sequence[str | Sequence[str]] = (),
    ) -> str | list[str]:
        """Register a number the page may quote, print it, return its text.

        ``value`` may be a scalar or a 1-D sequence (each element formatted
        with ``fmt``). ``rel_tol``/``abs_tol`` are the golden-record
        tolerances: tight by default, looser only with a stated reason.
        ``measured`` marks a measurement of this machine (a timing): never
        pinned, tested only through its claims.
        ``unit`` is the unit the prose writes after the number ("nats per
        character"; for a ratio, its words: "times larger"), or several
        forms of it; ``run`` names the run the number comes from, in the
        words the prose uses for it (one name, or several synonyms, the first
        being its name); ``runs`` gives a vector's run element by element.
        The page check rejects another unit after the number
        and a sentence that names only another run of the same script.
        A NaN, an unexpected infinity or a reused name is an error.
        """
        run_names = (run,) if isinstance(run, str) else tuple(run)
        units = (unit,) if isinstance(unit, str) else tuple(unit)
        element_runs = tuple((r,) if isinstance(r, str) else tuple(r) for r in runs)
        if not all(isinstance(w, str) and w.strip() for w in (*run_names, *units, *sum(element_runs, ()))):
            raise QuoteError(f"{self.name}: quote {name!r}: unit and run must be non-empty words")
        if not QUOTE_NAME.match(name):
            raise QuoteError(f"{self.name}: quote name {name!r} must match {QUOTE_NAME.pattern}")
        if name in self.quotes:
            raise QuoteError(f"{self.name}: quote {name!r} registered twice")
        array = np.asarray(value, dtype=float)
        if array.ndim > 1:
            raise QuoteError(f"{self.name}: quote {name!r} must be a scalar or a 1-D vector")
        if np.isnan(array).any():
            raise QuoteError(f"{self.name}: quote {name!r} is NaN")
        if not allow_inf and np.isinf(array).any():
            raise QuoteError(f"{self.name}: quote {name!r} is infinite")
        if measured and name in self.kept_measurements:
            kept = self.kept_measurements[name]
            raw, text = kept["value"], kept["text"]
        elif array.ndim == 0:
            raw: float | list[float] = float(array)
            text: str | list[str] = format_number(raw, fmt)
        else:
            raw = [float(v) for v in array]
            text = [format_number(v, fmt) for v in raw]
        if element_runs and (not isinstance(text, list) or len(element_runs) != len(text)):
            raise QuoteError(f"{self.name}: quote {name!r}: runs= needs one run per element of a vector")
        quote = Quote(name, raw, text, rel_tol, abs_tol, measured, units, run_names, element_runs)
        self.quotes[name] = quote
        if self.echo:
            for printed, _, t in quote.items():
                print(f"{printed}  {t}")
        return text

    def text(self, name: str, index: int | None = None) -> str:
        """The registered text of a quote (one element of a vector with
        ``index``): the only way a figure gets a number to draw."""
        try:
            quote = self.quotes[name]
        except KeyError:
            raise QuoteError(f"{self.name}: no quote named {name!r} is registered") from None
        if isinstance(quote.text, list):
            if index is None:
                raise QuoteError(f"{self.name}: quote {name!r} is a vector; give an index")
            return quote.text[index]
        if index is not None:
            raise QuoteError(f"{self.name}: quote {name!r} is a scalar; no index")
        return quote.text

    def texts(self, name: str) -> list[str]:
        """All element texts of a vector quote."""
        quote = self.quotes.get(name)
        if quote is None or not isinstance(quote.text, list):
            raise QuoteError(f"{self.name}: no vector quote named {name!r} is registered")
        return list(quote.text)

    # -- claims --------------------------------------------------------------
    def claim(
        self, statement: str, holds: bool, detail: str = "", *, every_seed: bool = True, key: str | None = None
    ) -> bool:
        """Record a statement the prose relies on; failures are collected and
        raised together by ``run_section`` (so the robustness report sees
        them all). ``detail`` holds the measured values that decided it.

        ``every_seed=False`` marks a statement about the page's own run (seed
        offset 0, every numeric variant) that other seeds need not repeat;
        the prose must say so. ``key`` names the claim for the page's
        `% backs` lines, which tie exact phrases of the prose to it (see Claim). The source text of the
        ``holds`` expression and the module constants it reads are recorded
        with it (condition_form).
        """
        form = condition_form(sys._getframe(1), lambda call: _source(_argument(call, 1, "holds")))
        return self._add_claim(statement, holds, detail, every_seed, key, form)

    def sweep_claim(
        self,
        statement: str,
        points: Mapping[Any, bool],
        details: Mapping[Any, str] | None = None,
        *,
        over: str,
        every_seed: bool = True,
        key: str | None = None,
    ) -> bool:
        """Record a statement about a range: one condition checked at every
        point of a declared set (``points`` maps each point, a learning rate
        say, to whether the condition held there; ``over`` names what the
        points are). It holds when every point holds; the record keeps each
        point's outcome, the robustness report shows each point of each run,
        and only such a claim may back a range word in the prose ("at larger
        rates", "across its window"; see wording.py). The statement names
        the points, so a changed set changes the statement the golden record
        pins. ``details`` (optional) gives the measured values per point;
        those of the points that fail make the claim's detail.
        """
        if len(points) < 2:
            raise QuoteError(f"{self.name}: a sweep claim needs at least two points; use claim for one")
        labels = {point: format(point, "g") if isinstance(point, (int, float)) else str(point) for point in points}
        if len(set(labels.values())) != len(labels):
            raise QuoteError(f"{self.name}: sweep points {list(labels.values())} print alike")
        outcomes = {labels[point]: bool(held) for point, held in points.items()}
        failing = [point for point, held in points.items() if not held]
        detail = "; ".join(
            f"at {over} {labels[point]}" + (f": {details[point]}" if details and point in details else "")
            for point in failing
        )
        form = condition_form(sys._getframe(1), lambda call: _source(_argument(call, 1, "points")))
        words = f"{statement}, at every {over} of {', '.join(labels.values())}"
        holds = self._add_claim(words, not failing, detail, every_seed, key, form)
        self.claims[-1].sweep = {"over": over, "points": outcomes}
        return holds

    def _add_claim(
        self,
        statement: str,
        holds: bool,
        detail: str,
        every_seed: bool,
        key: str | None,
        form: tuple[str | None, dict[str, Any]],
    ) -> bool:
        if key is not None and not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", key):
            raise QuoteError(f"{self.name}: claim key {key!r}: use lower-case words joined by hyphens")
        self.claims.append(Claim(statement, bool(holds), detail, every_seed, key, *form))
        return bool(holds)

    RELATIONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}

    def claim_bound(
        self,
        subject: str,
        measured: float,
        relation: str,
        bound: float,
        *,
        fmt: str = "g",
        every_seed: bool = True,
        key: str | None = None,
    ) -> bool:
        """Claim ``subject relation bound`` with the words made from the same
        constant as the test, so a threshold cannot change while its
        statement stays the same; the detail records the measured value, the
        condition "<measured's source> <relation> <bound's source>"."""
        if relation not in self.RELATIONS:
            raise ValueError(f"claim_bound: relation must be one of {', '.join(self.RELATIONS)}")
        holds = bool(self.RELATIONS[relation](measured, bound))

        def form(call: ast.Call) -> str | None:
            parts = [_source(_argument(call, i, k)) for i, k in ((1, "measured"), (3, "bound"))]
            return None if None in parts else f"{parts[0]} {relation} {parts[1]}"

        return self._add_claim(
            f"{subject} {relation} {format(bound, fmt)}",
            holds,
            f"measured {measured:.6g}",
            every_seed,
            key,
            condition_form(sys._getframe(1), form),
        )

    def agree(self, what: str, a: Any, b: Any, *, rtol: float = 0.0, atol: float = 0.0) -> bool:
        """Claim that two computations of one quantity agree, e.g. a closed
        form and a loop; the statement records the largest difference seen
        and the tolerances (so they cannot change while it stays), the
        condition the two computations' source."""
        a_arr = np.asarray(a, dtype=float)
        b_arr = np.asarray(b, dtype=float)
        gap = float(np.max(np.abs(a_arr - b_arr))) if a_arr.size else 0.0
        holds = bool(np.allclose(a_arr, b_arr, rtol=rtol, atol=atol, equal_nan=False))
        bound = " and ".join(
            part for part in (f"rtol {rtol:g}" if rtol else "", f"atol {atol:g}" if atol else "") if part
        )

        def form(call: ast.Call) -> str | None:
            parts = [_source(_argument(call, i, k)) for i, k in ((1, "a"), (2, "b"))]
            return None if None in parts else f"allclose({parts[0]}, {parts[1]}, rtol={rtol!r}, atol={atol!r})"

        return self._add_claim(
            f"{what} agree within {bound or 'exactly'}",
            holds,
            f"largest gap {gap:.3g}",
            True,
            None,
            condition_form(sys._getframe(1), form),
        )

    def index_of(self, values: Sequence[Any], value: Any, what: str) -> int | None:
        """Where ``value`` sits in a configuration list (``what`` names the
        list), for the statements the page makes about that one setting.
        None when a reader's configuration (the notebook's tinker mode) left
        it out: the caller then skips those statements, and ``untested``
        says which setting they needed instead of an exception."""
        for i, v in enumerate(values):
            if v == value:
                return i
        self.untested.append(f"{what} has no {value!r}: the page's statements about it were not tested")
        return None

    # -- figures -------------------------------------------------------------
    @property
    def figure_dir(self) -> Path:
        """figures/<page> for the page's own run; any other run (seed
        offset, numeric variant, reduced) goes under build/runs/."""
        if self.out_dir is not None:
            return self.out_dir
        if self.is_page_run:
            return FIGURES_DIR / self.page
        kind = "reduced" if self.reduced else f"{self.variant}-seed{self.seed_offset}"
        return OTHER_RUNS_DIR / kind / self.page

    def save_figure(self, draw: Callable[[], Figure], stem: str, *, caption_phrases: Sequence[str] = ()) -> Path:
        """Draw and write ``<section>_<stem>.svg`` and its phone rendering
        ``<section>_<stem>.phone.svg``, deterministically and atomically.

        ``draw`` makes the figure (``lambda: draw_x(...)``); it is called
        twice, the second time inside ``style.phone_layout()``, where
        ``new_figure`` sizes the figure for a phone's column (panels stacked,
        titles wrapped), so the phone shows the same numbers at a legible size.

        ``caption_phrases``: what the figure's caption or alt text must say
        about it, each an exact phrase one of the section's claims backs
        (a `% backs` line of the page); the page check requires each in the caption or alt text
        of the figure that shows this SVG."""
        if isinstance(draw, Figure) or not callable(draw):
            raise TypeError(
                f"{self.name}: save_figure({stem!r}) takes the function that draws the figure "
                "(save_figure(lambda: draw_it(...), stem)), so it can draw the phone rendering too"
            )
        path = self.figure_dir / f"{self.name}_{stem}.svg"
        if path.name in self.figures:
            raise QuoteError(f"{self.name}: figure {path.name} saved twice")
        if isinstance(caption_phrases, str):
            caption_phrases = (caption_phrases,)
        if caption_phrases:
            self.caption_phrases[path.name] = [" ".join(p.split()) for p in caption_phrases]
        fig = draw()
        self.figure_labels[path.name] = figure_labels(fig)
        self._write_svg(fig, path)
        with phone_layout():
            fig = draw()
            make_text_legible(fig)  # (first: the wrapping measures the sizes drawn)
            wrap_long_titles(fig)
            # Texts apart is a rule for what readers see: the page's own run. Another
            # seed, variant or the reduced run moves the data under the labels.
            self._write_svg(fig, path.with_name(f"{path.stem}{PHONE_SUFFIX}"), texts_apart=self.is_page_run)
        return path

    def _write_svg(self, fig: Figure, path: Path, *, texts_apart: bool = False) -> None:
        make_text_legible(fig)
        with atomic_write(path, "wb") as out:
            with drawn_renderer(fig) as drawn:
                fig.savefig(out, format="svg", metadata={"Date": None})
            # Checked before the file replaces the old one: a figure whose
            # text or marks stick out of it (or, on a phone, whose texts
            # overlap) is an error, not an output.
            problems = check_figure_fits(fig, margin_px=FIGURE_MARGIN_PX, renderer=drawn[-1])
            if texts_apart:
                problems += check_texts_apart(fig, renderer=drawn[-1])
            if problems:
                raise FigureBoundsError(f"{self.name}: figure {path.name} does not fit: " + "; ".join(problems))
        self.figures.append(path.name)

    # -- numbers file --------------------------------------------------------
    @property
    def numbers_path(self) -> Path:
        return self.figure_dir / "numbers" / f"{self.name}.json"

    def record(self) -> dict:
        """Everything the checker and the tests need, in registration order."""
        quotes = {}
        for q in self.quotes.values():
            quotes[q.name] = {"value": q.value, "text": q.text, "rel_tol": q.rel_tol, "abs_tol": q.abs_tol}
            if q.measured:
                quotes[q.name]["measured"] = True
            if q.unit:
                quotes[q.name]["unit"] = list(q.unit)
            if q.run:
                quotes[q.name]["run"] = list(q.run)
            if q.runs:
                quotes[q.name]["runs"] = [list(r) for r in q.runs]
        record = {
            "page": self.page,
            "section": self.name,
            "seed_offset": self.seed_offset,
            "variant": self.variant,
            "reduced": self.reduced,
            "heavy": self.heavy,
            "inputs_hash": self.inputs_hash,
            "environment": numeric_env.record(),
            "quotes": quotes,
            "claims": [
                {
                    "statement": c.statement,
                    "holds": c.holds,
                    "detail": c.detail,
                    "every_seed": c.every_seed,
                    **({"key": c.key} if c.key else {}),
                    "condition": c.condition,
                    "constants": c.constants,
                    **({"sweep": c.sweep} if c.sweep else {}),
                }
                for c in self.claims
            ],
            "figures": list(self.figures),
            "figure_labels": dict(self.figure_labels),
            **({"caption_phrases": dict(self.caption_phrases)} if self.caption_phrases else {}),
        }
        if any(q.measured for q in self.quotes.values()):
            record["measured_on"] = self.measured_on or {
                "cpu": numeric_env.cpu_model(),
                **record["environment"]["packages"],
            }
        return record

    def write_numbers(self) -> Path:
        """Write the numbers file via a temp file + rename: never half-written."""
        write_json_atomically(self.numbers_path, self.record())
        return self.numbers_path

    def failed_claims(self) -> list[str]:
        """Claims that fail here, each with the run and the measured values:
        all of them at seed offset 0 (under any variant), only the every-seed
        ones at other offsets. A reduced run asserts none: its few steps
        test the code path, and its numbers are pinned instead."""
        if self.reduced:
            return []
        run = f"seed offset {self.seed_offset}, variant {self.variant}"
        return [
            f"{c.statement} [{run}" + (f"; {c.detail}]" if c.detail else "]")
            for c in self.claims
            if not c.holds and (c.every_seed or self.seed_offset == 0)
        ]
