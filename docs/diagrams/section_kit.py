"""Shared machinery for every page-section script under docs/diagrams/.

A section script defines two functions and ends with ``main(__name__)``:

    def compute(section):        # numbers, quotes and claims; returns results
    def draw(section, results):  # figures, every drawn number via section.text()

``compute`` draws randomness only from ``section.rng(k)`` or
``section.torch_generator(k)`` (seeds shifted by the seed offset), registers
every number the page quotes with ``section.quote`` and states the claims the
prose relies on with ``section.claim`` / ``section.agree``. ``draw`` builds
figures with ``new_figure`` (axes placed by hand from margins in inches) or
``new_cell_figure`` and saves them with ``section.save_figure``.
``run_section`` runs both and writes ``figures/<page>/numbers/<section>.json``
atomically; the tests, the seed report and the command line all go through it.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import json
import linecache
import math
import multiprocessing
import multiprocessing.pool
import operator
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import job_slots
import numeric_env

# Pin the kernels that decide rounding before numpy (under matplotlib) or torch
# loads; see numeric_env for why.
NUMERIC_VARIANT = numeric_env.apply()

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # no display; SVGs are written by the svg backend anyway
from matplotlib.figure import Figure  # noqa: E402  (after the backend choice)
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import (  # noqa: E402
    FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator)

import numpy as np  # noqa: E402

from figure_bounds import FigureBoundsError, check_figure_fits, drawn_renderer  # noqa: E402
from page_registry import page_config, rel_path  # noqa: E402  (re-exported for the runner)
import section_inputs  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
DIAGRAMS_DIR = REPO_ROOT / "docs" / "diagrams"
FIGURES_DIR = REPO_ROOT / "figures"
# Runs that are not the page's own (another seed offset or numeric variant).
OTHER_RUNS_DIR = REPO_ROOT / "build" / "runs"
SEED_OFFSET_ENV = "SEED_OFFSET"
PROGRESS_EVERY = 3.0  # seconds between a heavy section's progress lines
FIGURE_MARGIN_PX = 2.0  # everything drawn stays this far (1/72 inch units) inside a figure
QUOTE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

# ---------------------------------------------------------------------------
# House style: one palette and one set of font sizes for every figure.

PALETTE = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "red": "#D55E00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "grey": "#7F7F7F",
    "light": "#EEF3F8",
    "ink": "#222222",
}

# Text in a palette colour is drawn in a darker shade of the same hue: most of
# the palette is too light for small text on white (orange 2.25:1, sky 2.31:1,
# green 3.42:1, red 3.87:1, grey 4.00:1; WCAG AA asks 4.5:1). Each shade keeps
# the colour's hue and saturation (HLS) at the lightness that reaches at least
# 4.6:1 against white; blue and ink are dark enough already. Lines and fills
# keep PALETTE; tests/test_figures.py checks the ratios.
TEXT_PALETTE = {
    "blue": "#0072B2",    # 5.19:1
    "orange": "#9C6C00",  # 4.61:1
    "green": "#008460",   # 4.70:1
    "red": "#C05500",     # 4.62:1
    "purple": "#BB4D8A",  # 4.62:1
    "sky": "#177BB3",     # 4.65:1
    "yellow": "#80770A",  # 4.60:1
    "grey": "#757575",    # 4.61:1
    "ink": "#222222",     # 15.91:1
}
_TEXT_SHADE = {PALETTE[name].upper(): shade for name, shade in TEXT_PALETTE.items()}


def text_colour(colour):
    """The colour to draw text in for a line or fill of ``colour``: its darker
    shade from TEXT_PALETTE when it is a palette colour, else ``colour`` itself."""
    if isinstance(colour, str):
        return _TEXT_SHADE.get(colour.upper(), colour)
    return colour


# Sizes in points for a figure drawn 8.4 inches (806 px) wide. Shown at the
# column's 736 px (furo's 46 em) that figure is 0.91 of its drawn size, so
# 10.6 pt text reads at 12.9 px, 0.8 of the 16 px body text; at 1,280 px,
# where the figure takes 912 px, at 14.9 px. No text is smaller: the saver
# raises any smaller size a script asks for to SMALLEST_TEXT_PT.
SMALLEST_TEXT_PT = 10.6
TITLE_PT = 11  # titles stay at their old size, set apart by bold; ticks and labels grew to it
MARGIN_SCALE = 1.15  # new_figure's margins: ticks grew from 9 to 10.6 pt, labels from 10 to 11

STYLE = {
    "svg.hashsalt": "normalisation-pages",  # fixed ids: byte-identical SVGs
    "svg.fonttype": "path",  # glyphs as paths: identical rendering everywhere
    "font.size": 11,
    "axes.titlesize": TITLE_PT,
    "axes.titleweight": "bold",
    "axes.labelsize": 11,
    "xtick.labelsize": SMALLEST_TEXT_PT,
    "ytick.labelsize": SMALLEST_TEXT_PT,
    "legend.fontsize": SMALLEST_TEXT_PT,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": PALETTE["ink"],
    "axes.labelcolor": PALETTE["ink"],
    "text.color": PALETTE["ink"],
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.prop_cycle": matplotlib.cycler(
        color=[PALETTE[c] for c in ("blue", "orange", "green", "red", "purple", "sky")]
    ),
    "lines.linewidth": 1.8,
}


def make_text_legible(fig: Figure) -> None:
    """Apply the house rules for text to everything a figure writes: no size
    below SMALLEST_TEXT_PT and no text in a palette colour too light to read
    (its TEXT_PALETTE shade instead). The saver calls it, so a script's
    ``fontsize=9`` or ``color=PALETTE["orange"]`` on a label is legible
    without a per-figure edit."""
    # Tick labels not yet made take the rcParams sizes above (no section
    # sets a tick label size or colour of its own), so no draw is needed here.
    for text in fig.findobj(Text):
        if text.get_fontsize() < SMALLEST_TEXT_PT:
            text.set_fontsize(SMALLEST_TEXT_PT)
        shade = _TEXT_SHADE.get(matplotlib.colors.to_hex(text.get_color()).upper())
        if shade is not None:
            text.set_color(shade)


# Matplotlib's own defaults plus the house style only: a matplotlibrc in the
# working directory or $MATPLOTLIBRC must not change a byte of the figures.
matplotlib.rcdefaults()
matplotlib.rcParams.update(STYLE)


# A figure title (``suptitle``) sits in a band of this many inches per line
# above the top margin, its top this far below the figure's edge.
SUPTITLE_LINE, SUPTITLE_PAD = 0.185, 0.045


def new_figure(
    width: float = 8.0,
    height: float = 3.2,
    *,
    margins: tuple[float, float, float, float] | None = None,
    grid: tuple[int, int] = (1, 1),
    wspace: float = 0.0,
    hspace: float = 0.0,
    suptitle: str | None = None,
) -> Figure:
    """A figure in the house style, sized in inches for a page-width image.

    Built without pyplot, so no global figure state survives between sections.

    Page figures place their axes by hand: ``margins`` = (left, bottom,
    right, top) in inches between the figure's edges and the block of axes,
    room for everything outside the axes (tick labels, axis labels, axes
    titles; look at the figure to size them). ``grid`` = (rows, columns) is
    the grid the axes are then made on (``fig.subplots``, ``fig.add_gridspec``
    or ``fig.add_subplot()`` for one), ``wspace`` and ``hspace`` the gaps in
    inches between its columns and rows. ``suptitle`` draws the figure's
    bold, left-aligned title in its own band above the top margin.

    Without ``margins`` matplotlib's constrained layout engine places the
    axes instead: no sizing by hand, but about a third of the drawing time.
    """
    if margins is None:
        fig = Figure(figsize=(width, height), layout="constrained")
        if suptitle is not None:
            fig.suptitle(suptitle, x=0.01, ha="left", fontsize=TITLE_PT, fontweight="bold")
        return fig
    fig = Figure(figsize=(width, height))
    # Margins hold text, so they grow with it: a script gives them for 10 pt
    # text, and they scale with the house font size.
    left, bottom, right, top = (m * MARGIN_SCALE for m in margins)
    if suptitle is not None:
        top += SUPTITLE_PAD + SUPTITLE_LINE * (suptitle.count("\n") + 1)
        fig.suptitle(suptitle, x=0.08 / width, y=1 - SUPTITLE_PAD / height, ha="left", va="top",
                     fontsize=TITLE_PT, fontweight="bold")
    rows, columns = grid
    inner_width = width - left - right - wspace * (columns - 1)
    inner_height = height - bottom - top - hspace * (rows - 1)
    if inner_width <= 0 or inner_height <= 0:
        raise ValueError(f"margins {margins} and gaps leave no room for the axes "
                         f"in a {width} x {height} inch figure")
    # GridSpec gaps are fractions of the average axes width (height).
    fig.subplots_adjust(left=left / width, right=1 - right / width,
                        bottom=bottom / height, top=1 - top / height,
                        wspace=wspace * columns / inner_width, hspace=hspace * rows / inner_height)
    return fig


def new_cell_figure(width: float, height: float, title_lines: int = 1):
    """A figure for rows of cells (see ``draw_cell_rows``): one axes under a
    band for a left-aligned title, placed by hand. Constrained layout has
    nothing to arrange on an axes without ticks and would cost about a third
    of the drawing time. Returns (figure, axes)."""
    fig = Figure(figsize=(width, height))
    band = (0.12 + 0.24 * title_lines) / height
    ax = fig.add_axes((0.005, 0.01, 0.99, 0.99 - band))
    return fig, ax


def label_line_ends(ax, labels: Sequence[tuple[float, str, str]], *, gap_pt: float | None = None) -> None:
    """Label lines at their right ends, in the margin right of the axes,
    instead of in a legend the eye must travel to. ``labels`` holds (the
    line's last y value, text, line colour); the labels keep the lines' order
    and are pushed apart to at least ``gap_pt`` (default: one line of the
    smallest text) where lines end close together. Call after the limits are set."""
    gap_pt = gap_pt if gap_pt is not None else SMALLEST_TEXT_PT * 1.2
    height_pt = ax.get_position().height * ax.figure.get_figheight() * 72
    gap = gap_pt / height_pt  # in axes fractions
    to_axes = ax.transData + ax.transAxes.inverted()
    wanted = sorted((float(to_axes.transform((ax.get_xlim()[1], y))[1]), text, colour)
                    for y, text, colour in labels)
    placed: list[float] = []
    for y, _, _ in wanted:  # upwards from the lowest, each at least a gap above the last
        placed.append(max(y, placed[-1] + gap) if placed else y)
    overshoot = placed[-1] - 1.0 if placed else 0.0
    if overshoot > 0:  # the top one left the axes: shift down, keeping the gaps
        for i in range(len(placed) - 1, -1, -1):
            limit = 1.0 if i == len(placed) - 1 else placed[i + 1] - gap
            placed[i] = min(placed[i], limit)
    for (y, text, colour), at in zip(wanted, placed, strict=True):
        ax.annotate(text, xy=(1.0, y), xycoords="axes fraction", xytext=(6, (at - y) * height_pt),
                    textcoords="offset points", ha="left", va="center", color=text_colour(colour),
                    annotation_clip=False)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
LOG_LABELS: dict[str, Callable[[float], str]] = {
    "plain": lambda v: f"{v:g}",  # 0.01, 1, 100
    "power": lambda v: "10" + str(round(math.log10(v))).translate(_SUPERSCRIPT),  # 10⁻², 10⁰
}


def log_axis(
    ax,
    which: str = "y",
    *,
    ticks: Sequence[float] | None = None,
    labels: str = "power",
    every: int = 1,
    base: float = 10,
) -> None:
    """Put one axis of ``ax`` (``which`` is "x" or "y") on a log scale with
    plain-text tick labels: matplotlib's mathtext powers of ten are slow to
    lay out, and minor ticks cost more drawing time than they help.

    ``labels`` is a style of ``LOG_LABELS``: "power" (10⁻², 10⁰, 10²), the
    house style, or "plain" (0.01, 1, 100) for axes of settings such as
    learning rates. The ticks are ``ticks`` if given,
    else every power of ``base``, with only every ``every``-th decade (the
    exponents divisible by it) labelled and the decades between as short
    unlabelled ticks.
    """
    if which not in ("x", "y"):
        raise ValueError(f"log_axis: which must be 'x' or 'y', not {which!r}")
    label = LOG_LABELS[labels]
    (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=base)
    axis = ax.xaxis if which == "x" else ax.yaxis
    if ticks is not None:
        axis.set_major_locator(FixedLocator(list(ticks)))
    else:
        axis.set_major_locator(LogLocator(base=base**every, numticks=30))
    axis.set_major_formatter(FuncFormatter(lambda v, _: label(v)))
    if ticks is None and every > 1:
        axis.set_minor_locator(LogLocator(base=base, subs=(1.0,), numticks=30))
    else:
        axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


# ---------------------------------------------------------------------------
# Errors a section can raise; each message names what went wrong.


class QuoteError(ValueError):
    """A quote that cannot be registered (bad name, duplicate, NaN, ...)."""


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
            return [
                (f"{self.name}[{i}]", v, t)
                for i, (v, t) in enumerate(zip(self.value, self.text, strict=True))
            ]
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
    # Exact phrases of the section's prose this claim backs: the page check
    # fails when one is missing, so a reversed direction word is caught.
    backs: tuple[str, ...] = ()
    # The form of the test that decided it, read from the calling script's
    # source (see condition_form): the golden record pins it, so a bound or
    # an operator cannot change while the statement stays the same.
    condition: str | None = None
    constants: dict[str, Any] = field(default_factory=dict)


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
            span = [line.encode("utf-8") for line in lines[first - 1:last]]
            text = (span[0][start:end] if first == last
                    else b"".join([span[0][start:], *span[1:-1], span[-1][:end]])).decode("utf-8")
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
    constants = {name: _plain(frame.f_globals[name]) for name in dict.fromkeys(read)
                 if CONSTANT_NAME.match(name) and name in frame.f_globals and name not in frame.f_locals}
    return text, constants


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _source(node: ast.expr | None) -> str | None:
    return None if node is None else ast.unparse(node)


MINUS, TIMES = "\u2212", "\u00d7"
SCIENTIFIC = re.compile(r"^\.(\d+)x$")  # ".2x" (or ".2e"): 4.77 × 10⁻⁶


def superscript(exponent: int) -> str:
    return str(exponent).translate(_SUPERSCRIPT)


def scientific(value: float, decimals: int) -> str:
    """The house form of a very small or large number: "4.77 × 10⁻⁶"."""
    mantissa, _, exponent = f"{value:.{decimals}e}".partition("e")
    power = int(exponent)
    return mantissa if power == 0 else f"{mantissa} {TIMES} 10{superscript(power)}"


def power_of_two(value: float) -> str:
    """An exact power of two as "2⁻¹⁴⁹" or "2²⁰"."""
    mantissa, exponent = math.frexp(value)
    if mantissa != 0.5:
        raise QuoteError(f"{value!r} is not a power of two")
    return "2" + superscript(exponent - 1)


# Fixed-point and percent specs, which get thousands separators ("1,234.50"),
# and the general spec ("g", ".3g"), whose e-notation becomes the house form.
FIXED = re.compile(r"^,?(?P<spec>(?:\.\d+)?[f%])$")
GENERAL = re.compile(r"^,?(?:\.(?P<precision>\d+))?g$")


def general(value: float, precision: str | None = None) -> str:
    """Python's "g" (shortest of fixed and scientific, trailing zeros dropped)
    in the house style: "0.001", "1,234.5", "1 × 10⁻⁵", "−4.82 × 10⁶"."""
    text = format(value, f",.{precision}g" if precision else ",g")
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa} {TIMES} 10{superscript(int(exponent))}" if e else text


def format_number(value: float, fmt: str | Callable[[float], str]) -> str:
    """The text form of one number, in the one house style (README, "Number
    style"): a format spec (``",d"``, ``".4f"``, ``".2%"``, ``"g"``), ``".2x"``
    for "4.77 × 10⁻⁶", ``"pow2"`` for "2⁻¹⁴⁹", or a callable for other forms.
    Fixed, percent and general specs get thousands separators and never print
    e-notation; ``"d"`` alone stays ungrouped for years and seeds (2020, rng(1212)).
    Every minus sign comes out as U+2212, as in the prose."""
    if callable(fmt):
        text = fmt(value)
    elif fmt == "pow2":
        text = power_of_two(value)
    elif SCIENTIFIC.match(fmt):
        text = scientific(value, int(SCIENTIFIC.match(fmt).group(1)))
    elif fmt.endswith("d"):  # integer forms ("d", ",d") take whole numbers only
        if not float(value).is_integer():
            raise QuoteError(f"format {fmt!r} needs a whole number, got {value!r}")
        text = format(int(value), fmt)
    elif re.fullmatch(r"\.\d+[eE]", fmt):  # scientific: always in the house form
        text = scientific(value, int(fmt[1:-1]))
    elif GENERAL.match(fmt):
        text = general(value, GENERAL.match(fmt).group("precision"))
    elif FIXED.match(fmt):  # ".2f", ".1%": thousands separators from 1,000 up
        text = format(value, "," + FIXED.match(fmt).group("spec"))
    else:
        text = format(value, fmt)
    if not isinstance(text, str) or not text:
        raise QuoteError(f"format {fmt!r} gave {text!r} for {value!r}")
    return text.replace("-", MINUS)


def nice_limits(values: Sequence[float], *, log: bool = False, pad: float = 0.05) -> tuple[float, float]:
    """Axis limits that show every value, rounded outward to two significant
    digits, so a figure's bytes do not depend on digits below the printed
    precision. ``log`` pads and rounds in decades."""
    data = np.asarray(values, dtype=float)
    data = data[np.isfinite(data)]
    if log:
        data = data[data > 0]
    if data.size == 0:
        raise ValueError("nice_limits: no finite values to show")
    low, high = float(data.min()), float(data.max())
    if log:
        span = math.log10(high) - math.log10(low) or 1.0
        low, high = low / 10 ** (pad * span), high * 10 ** (pad * span)
        return _round_sig(low, 2, math.floor), _round_sig(high, 2, math.ceil)
    span = (high - low) or abs(high) or 1.0
    low, high = low - pad * span, high + pad * span
    step = 10 ** (math.floor(math.log10(span)) - 1)  # two significant digits of the span
    return round(math.floor(low / step) * step, 12), round(math.ceil(high / step) * step, 12)


def _round_sig(value: float, digits: int, direction) -> float:
    scale = 10 ** (math.floor(math.log10(abs(value))) - digits + 1)
    return float(f"{direction(value / scale) * scale:.{digits}g}")


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
    caption_phrases: dict[str, list[str]] = field(default_factory=dict)  # SVG name -> phrases
    heavy: bool = False  # the section has a reduced configuration (it called choose)
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
    def claim(self, statement: str, holds: bool, detail: str = "", *, every_seed: bool = True,
              backs: Sequence[str] = ()) -> bool:
        """Record a statement the prose relies on; failures are collected and
        raised together by ``run_section`` (so the robustness report sees
        them all). ``detail`` holds the measured values that decided it.

        ``every_seed=False`` marks a statement about the page's own run (seed
        offset 0, every numeric variant) that other seeds need not repeat;
        the prose must say so. ``backs`` lists exact phrases of the section's
        prose that rest on this claim (see Claim). The source text of the
        ``holds`` expression and the module constants it reads are recorded
        with it (condition_form).
        """
        form = condition_form(sys._getframe(1), lambda call: _source(_argument(call, 1, "holds")))
        return self._add_claim(statement, holds, detail, every_seed, backs, form)

    def _add_claim(self, statement: str, holds: bool, detail: str, every_seed: bool,
                   backs: Sequence[str], form: tuple[str | None, dict[str, Any]]) -> bool:
        if isinstance(backs, str):
            backs = (backs,)
        self.claims.append(Claim(statement, bool(holds), detail, every_seed, tuple(backs), *form))
        return bool(holds)

    RELATIONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}

    def claim_bound(self, subject: str, measured: float, relation: str, bound: float, *,
                    fmt: str = "g", every_seed: bool = True, backs: Sequence[str] = ()) -> bool:
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

        return self._add_claim(f"{subject} {relation} {format(bound, fmt)}", holds, f"measured {measured:.6g}",
                               every_seed, backs, condition_form(sys._getframe(1), form))

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

        return self._add_claim(f"{what} agree within {bound or 'exactly'}", holds, f"largest gap {gap:.3g}",
                               True, (), condition_form(sys._getframe(1), form))

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

    def save_figure(self, fig: Figure, stem: str, *, caption_phrases: Sequence[str] = ()) -> Path:
        """Write ``<section>_<stem>.svg`` deterministically and atomically.

        ``caption_phrases``: what the figure's caption or alt text must say
        about it, each an exact phrase one of the section's claims backs
        (``backs=``); the page check requires each in the caption or alt text
        of the figure that shows this SVG."""
        path = self.figure_dir / f"{self.name}_{stem}.svg"
        if path.name in self.figures:
            raise QuoteError(f"{self.name}: figure {path.name} saved twice")
        if isinstance(caption_phrases, str):
            caption_phrases = (caption_phrases,)
        if caption_phrases:
            self.caption_phrases[path.name] = [" ".join(p.split()) for p in caption_phrases]
        make_text_legible(fig)
        with atomic_write(path, "wb") as out:
            with drawn_renderer(fig) as drawn:
                fig.savefig(out, format="svg", metadata={"Date": None})
            # Checked before the file replaces the old one: a figure whose
            # text or marks stick out of it is an error, not an output.
            problems = check_figure_fits(fig, margin_px=FIGURE_MARGIN_PX, renderer=drawn[-1])
            if problems:
                raise FigureBoundsError(f"{self.name}: figure {path.name} does not fit: " + "; ".join(problems))
        self.figures.append(path.name)
        return path

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
                {"statement": c.statement, "holds": c.holds, "detail": c.detail, "every_seed": c.every_seed,
                 **({"backs": list(c.backs)} if c.backs else {}),
                 "condition": c.condition, "constants": c.constants}
                for c in self.claims
            ],
            "figures": list(self.figures),
            **({"caption_phrases": dict(self.caption_phrases)} if self.caption_phrases else {}),
        }
        if any(q.measured for q in self.quotes.values()):
            record["measured_on"] = self.measured_on or {"cpu": numeric_env.cpu_model(),
                                                         **record["environment"]["packages"]}
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


@contextlib.contextmanager
def atomic_write(path: Path, mode: str = "w"):
    """Write ``path`` through a temp file in the same folder, renamed into
    place only when writing succeeded: an interrupted run leaves the old file
    whole and no temp file behind. The file gets the usual permissions
    (0666 less the umask), not the temp file's private 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.NamedTemporaryFile(
        mode, dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False,
        **({} if "b" in mode else {"encoding": "utf-8"}),
    )
    try:
        with tmp:
            yield tmp
        os.chmod(tmp.name, 0o666 & ~_umask())
        os.replace(tmp.name, path)
    except BaseException:
        os.unlink(tmp.name)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomically(path: Path, text: str) -> None:
    with atomic_write(path) as out:
        out.write(text)


def write_json_atomically(path: Path, data: Any) -> None:
    write_text_atomically(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------
# Torch, imported once per process and only by the sections that use it.

_TORCH = None


def import_torch():
    """Import torch with one thread per process (the numeric environment's
    TORCH_NUM_THREADS): parallel sections must not fight over the two cores,
    and one thread fixes the order of every sum. Says once if torch runs
    other kernels than the pinned ones.

    (``torch.use_deterministic_algorithms`` is left alone: it concerns GPU
    kernels, and merely calling it imports torch's compiler, about a second.)
    """
    global _TORCH
    if _TORCH is None:
        import torch

        torch.set_num_threads(int(os.environ.get("TORCH_NUM_THREADS", "1")))
        wanted = numeric_env.settings(NUMERIC_VARIANT)["ATEN_CPU_CAPABILITY"].upper()
        running = torch.backends.cpu.get_cpu_capability().upper()
        if numeric_env.can_honour_pin() and running != wanted and not os.environ.get(numeric_env.WARNED_ENV):
            print(f"note: torch runs {running} kernels, not the pinned {wanted}", file=sys.stderr)
            os.environ[numeric_env.WARNED_ENV] = "1"
        _TORCH = torch
    return _TORCH


def process_pool(processes: int = 2):
    """A pool of forked worker processes for a section's independent heavy
    jobs (use as a context manager, e.g. ``pool.starmap``). Forked workers
    inherit everything imported and, unlike threads, do not contend for the
    GIL. Jobs must be module-level functions; results come back in order.

    Under `make figures` every job holds one of the run's job slots while it
    trains, and the section lends its own slot to its jobs while the pool is
    open (job_slots.py): the runs of all sections share the cores, never more
    at once than there are cores."""
    return _SlotPool(processes, initializer=_default_signals, context=multiprocessing.get_context("fork"))


class _SlotPool(multiprocessing.pool.Pool):
    """A fork pool whose jobs hold a job slot each; its section's slot is lent
    to them from ``with`` to its end."""

    def __enter__(self):
        self._lent = job_slots.lent()
        self._lent.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            self._lent.__exit__(None, None, None)

    def apply(self, func, args=(), kwds=None):
        return super().apply(job_slots.InSlot(func), args, kwds or {})

    def map(self, func, iterable, chunksize=None):
        return super().map(job_slots.InSlot(func), iterable, chunksize)

    def starmap(self, func, iterable, chunksize=None):
        return super().starmap(job_slots.InSlot(func), iterable, chunksize)

    def starmap_async(self, func, iterable, chunksize=None, callback=None, error_callback=None):
        return super().starmap_async(job_slots.InSlot(func), iterable, chunksize, callback, error_callback)


def _default_signals() -> None:
    """A pool worker stops quietly when its pool is terminated (the runner's
    own workers turn SIGTERM into an exception, which would print here), and
    when its section's process dies without terminating it; it holds none
    of its section's job slot (it takes one per job)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    terminate_with_parent()
    job_slots.forget_held()


def terminate_with_parent() -> None:
    """Linux: this process gets SIGTERM when its parent dies (PR_SET_PDEATHSIG),
    so no worker outlives an interrupted run; elsewhere, nothing."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent is already gone
        os.kill(os.getpid(), signal.SIGTERM)


# ---------------------------------------------------------------------------
# Running a section: in-process (tests, seed report) or from the command line.


def section_module(page_package: str, section: str):
    """Import ``docs/diagrams/<page_package>/<section>.py`` as a module."""
    page_config(page_package)
    return importlib.import_module(f"{page_package}.{section}")


def run_section(
    module,
    *,
    seed_offset: int = 0,
    figures: bool = True,
    out_dir: Path | None = None,
    echo: bool = False,
    write: bool = True,
    raise_on_failed_claims: bool = True,
    reduced: bool = False,
    inputs_hash: str | None = None,
) -> Section:
    """Run one section module's ``compute`` (and ``draw`` if ``figures``).

    Writes the numbers file when ``write`` (into figures/ only for the
    page's own run, see ``Section.figure_dir``); raises ``ClaimsFailed``
    naming every failed claim unless ``raise_on_failed_claims`` is off
    (robustness report). A section whose claims fail writes no numbers file.
    ``inputs_hash`` is the hash of the inputs as they were when the run was
    decided (the runner hashes before it imports); by default, now.
    """
    package, _, name = module.__name__.rpartition(".")
    page = page_config(package).PAGE
    if inputs_hash is None and getattr(module, "__file__", None):  # (a test's stand-in module has no file)
        inputs_hash = section_inputs.inputs_hash(package, name)
    section = Section(page=page, name=name, seed_offset=seed_offset, out_dir=out_dir, echo=echo,
                      reduced=reduced, inputs_hash=inputs_hash)
    keep_measurements(section)
    results = module.compute(section)
    failed = section.failed_claims()
    if failed and raise_on_failed_claims:
        raise ClaimsFailed(f"{name}: claim failed: " + "; claim failed: ".join(failed))
    if figures:
        module.draw(section, results)
    if write:
        section.write_numbers()
    return section


def keep_measurements(section: Section) -> None:
    """On the page's own run into figures/, reuse the committed measurements
    when they were made for the same inputs (unless $REMEASURE is set)."""
    if not section.is_page_run or section.out_dir is not None or os.environ.get("REMEASURE"):
        return
    try:
        committed = json.loads(section.numbers_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(committed, dict) or committed.get("inputs_hash") != section.inputs_hash:
        return
    section.kept_measurements = {n: q for n, q in committed.get("quotes", {}).items()
                                 if isinstance(q, dict) and q.get("measured")}
    section.measured_on = committed.get("measured_on")


def main(module_name: str) -> None:
    """Command line of a section script: ``python <script>.py [--seed-offset K]``."""
    module = sys.modules[module_name]
    if module_name == "__main__":
        # Re-import under the package name so quotes know their page.
        path = Path(module.__file__).resolve()
        module = section_module(path.parent.name, path.stem)
    parser = argparse.ArgumentParser(description=(module.__doc__ or "").strip().splitlines()[0])
    parser.add_argument(
        "--seed-offset",
        type=int,
        default=None,
        help=f"shift every seed by K (default: ${SEED_OFFSET_ENV} or 0)",
    )
    parser.add_argument("--no-figures", action="store_true",
                        help="compute and print only (writes no numbers file unless --out-dir is given)")
    parser.add_argument("--out-dir", type=Path, help="write figures and numbers here instead")
    parser.add_argument("--reduced", action="store_true",
                        help="the tests' reduced configuration of a heavy section (written under build/)")
    parser.add_argument("--quiet", action="store_true", help="do not print the quotes")
    args = parser.parse_args()
    if args.seed_offset is None:
        try:
            args.seed_offset = int(os.environ.get(SEED_OFFSET_ENV) or 0)
        except ValueError:
            parser.error(f"${SEED_OFFSET_ENV} must be a whole number, got {os.environ[SEED_OFFSET_ENV]!r}")
    try:
        section = run_section(
            module,
            seed_offset=args.seed_offset,
            figures=not args.no_figures,
            out_dir=args.out_dir,
            echo=not args.quiet,
            # A numbers file must list the figures drawn with it: without
            # figures, write one only into a separate --out-dir.
            write=not args.no_figures or args.out_dir is not None,
            reduced=args.reduced,
        )
    except (ClaimsFailed, QuoteError, FigureBoundsError, section_inputs.InputError) as error:
        sys.exit(f"error: {error}")
    except OSError as error:
        sys.exit(f"error: cannot write {error.filename or 'the outputs'}: {error.strerror}")
    if not section.is_page_run and (not args.no_figures or args.out_dir is not None):
        print(f"note: not the page's own run (seed offset {section.seed_offset}, variant "
              f"{section.variant}{', reduced' if section.reduced else ''}): wrote under "
              f"{rel_path(section.figure_dir)}, not figures/", file=sys.stderr)
    # Everything is written: skip the interpreter's teardown, which takes
    # most of a second once torch is loaded.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# ---------------------------------------------------------------------------
# Drawing helpers shared by the worked-example figures (cells of numbers).


def draw_cell_rows(
    ax,
    rows: Sequence[tuple[str, Sequence[str]]],
    *,
    fills: Sequence[Sequence[str] | str] | None = None,
    highlight_column: int | None = None,
    column_labels: Sequence[str] | None = None,
    label_width: float = 2.6,
    fontsize: float = 9.5,
    footnote: str | None = None,
) -> None:
    """Draw rows of labelled cells, one row per step of a worked example.

    ``rows`` holds (row label, cell texts); ``fills`` an optional colour per
    row (or per cell); ``highlight_column`` outlines one column, the element
    followed by hand. Axes are switched off and limits set to fit the cells.
    """
    n_rows = len(rows)
    n_cols = max(len(cells) for _, cells in rows)
    for i, (label, cells) in enumerate(rows):
        y = i
        ax.text(-0.15, y + 0.4, label, ha="right", va="center", fontsize=fontsize)
        row_fill = fills[i] if fills is not None else PALETTE["light"]
        for j, cell in enumerate(cells):
            colour = row_fill[j] if isinstance(row_fill, (list, tuple)) else row_fill
            ax.add_patch(
                Rectangle((j + 0.04, y + 0.04), 0.92, 0.72, facecolor=colour,
                          edgecolor="white", linewidth=1.0)
            )
            ax.text(j + 0.5, y + 0.4, cell, ha="center", va="center", fontsize=fontsize)
    if highlight_column is not None:
        ax.add_patch(
            Rectangle((highlight_column + 0.01, 0.0), 0.98, n_rows - 0.2, fill=False,
                      edgecolor=PALETTE["red"], linewidth=1.8)
        )
    if column_labels is not None:
        for j, label in enumerate(column_labels):
            ax.text(j + 0.5, -0.25, label, ha="center", va="bottom", fontsize=fontsize - 0.5,
                    color=PALETTE["grey"])
    bottom = n_rows
    if footnote is not None:
        ax.text(n_cols, n_rows + 0.1, footnote, ha="right", va="top", fontsize=fontsize - 0.5,
                color=PALETTE["grey"])
        bottom = n_rows + 0.6
    ax.set_xlim(-label_width, n_cols + 0.05)
    ax.set_ylim(bottom, -0.6 if column_labels is not None else -0.05)
    ax.axis("off")
