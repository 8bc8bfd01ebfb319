"""The house style of every figure: one palette, one set of text sizes, axes
placed by hand from margins in inches, and the helpers the section scripts
draw with (log axes, labelled line ends, cells of numbers, axis limits that
do not depend on digits below the printed precision).

Decides SVG bytes, so it is one of the inputs of every section (inputs.py).
"""

from __future__ import annotations

import contextlib
import math
import sys
from typing import Callable, Iterator, Sequence

from pagekit import numeric_env

numeric_env.applied_variant()  # the pin, before matplotlib loads numpy

import matplotlib

if "ipykernel" not in sys.modules:
    # No display. Inside a Jupyter kernel the kernel's backend stays, so a
    # reader's own plt.show() shows; the figures here are drawn without
    # pyplot and written by the svg backend either way.
    matplotlib.use("Agg")
from matplotlib.figure import Figure  # (after the backend choice)
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.textpath import TextToPath
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator
import numpy as np

from pagekit.numformat import superscript


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
    "blue": "#0072B2",  # 5.19:1
    "orange": "#9C6C00",  # 4.61:1
    "green": "#008460",  # 4.70:1
    "red": "#C05500",  # 4.62:1
    "purple": "#BB4D8A",  # 4.62:1
    "sky": "#177BB3",  # 4.65:1
    "yellow": "#80770A",  # 4.60:1
    "grey": "#757575",  # 4.61:1
    "ink": "#222222",  # 15.91:1
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

# Every figure is drawn twice: for the page, and for a phone. The site shows
# the phone rendering below paths.PHONE_BREAKPOINT_PX (docs/_ext/figures.py). On a
# 360 px phone furo's column is 328 px wide; a figure drawn PHONE_WIDTH inches
# (403 px) wide is shown at 0.81 of its size there, so 10.6 pt text reads at
# 11.5 px. Panels side by side on the page stand one under another on the
# phone; each keeps its page height.
PHONE_WIDTH = 4.2
PHONE_RIGHT_MARGIN = 0.2  # inches, at least, for a tick label at the axis' right end
_layout = {"phone": False}


@contextlib.contextmanager
def phone_layout() -> Iterator[None]:
    """Inside it, new_figure and new_cell_figure draw a figure's phone
    rendering: PHONE_WIDTH inches wide, panels stacked in one column, long
    titles wrapped. The saver draws each figure once outside it and once in."""
    previous, _layout["phone"] = _layout["phone"], True
    try:
        yield
    finally:
        _layout["phone"] = previous


def on_phone() -> bool:
    """True while the phone rendering is drawn: for the few choices a script
    makes for itself (a shorter label, a legend placed elsewhere)."""
    return _layout["phone"]


def text_width_in(text: str, size: float, weight: str = "normal") -> float:
    """The width of one line of ``text`` in inches, in the house font,
    measured from its glyphs (no figure or renderer needed)."""
    font = FontProperties(family=matplotlib.rcParams["font.family"], size=size, weight=weight)
    width, _, _ = TextToPath().get_text_width_height_descent(text.replace("$", ""), font, ismath=False)
    return width / 72


def wrap_to_width(text: str, width_in: float, size: float = SMALLEST_TEXT_PT, weight: str = "normal") -> str:
    """``text`` with its lines broken at spaces so none is wider than
    ``width_in`` inches (a single word wider than that keeps its own line)."""
    lines = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            trial = f"{line} {word}" if line else word
            if line and text_width_in(trial, size, weight) > width_in:
                lines.append(line)
                line = word
            else:
                line = trial
        lines.append(line)
    return "\n".join(lines)


class HouseFigure(Figure):
    """A Figure that, in the phone layout, makes a row of panels a column:
    ``subplots(1, n)`` and ``add_gridspec(r, c)`` give the same axes in the
    same order (column by column), stacked, so a script draws both
    renderings with one code path."""

    def subplots(self, nrows=1, ncols=1, **kwargs):
        if not on_phone() or ncols == 1:
            return super().subplots(nrows, ncols, **kwargs)
        kwargs.pop("width_ratios", None)
        gridspec_kw = dict(kwargs.pop("gridspec_kw", None) or {})
        gridspec_kw.pop("wspace", None)
        gridspec_kw.pop("width_ratios", None)
        squeeze = kwargs.pop("squeeze", True)
        stacked = super().subplots(nrows * ncols, 1, squeeze=False, gridspec_kw=gridspec_kw, **kwargs)[:, 0]
        # Column by column: the page's (row r, column c) is the phone's row c * nrows + r.
        axes = np.empty((nrows, ncols), dtype=object)
        for c in range(ncols):
            for r in range(nrows):
                axes[r, c] = stacked[c * nrows + r]
        if squeeze:
            return axes.item() if axes.size == 1 else axes.squeeze()
        return axes

    def add_gridspec(self, nrows=1, ncols=1, **kwargs):
        if not on_phone() or ncols == 1:
            return super().add_gridspec(nrows, ncols, **kwargs)
        kwargs.pop("width_ratios", None)
        kwargs.pop("wspace", None)
        return _StackedGrid(super().add_gridspec(nrows * ncols, 1, **kwargs), nrows, ncols)


class _StackedGrid:
    """A page grid of ``rows`` x ``columns`` seen on the phone as one column:
    ``grid[r, c]`` (or a span) is the phone's rows c * rows + r."""

    def __init__(self, stacked, rows: int, columns: int):
        self.stacked, self.rows, self.columns = stacked, rows, columns

    def __getitem__(self, key):
        row_key, column_key = key if isinstance(key, tuple) else (key, slice(None)) if self.rows > 1 else (0, key)
        rows = range(self.rows)[row_key] if isinstance(row_key, slice) else [range(self.rows)[row_key]]
        columns = (
            range(self.columns)[column_key] if isinstance(column_key, slice) else [range(self.columns)[column_key]]
        )
        cells = sorted(c * self.rows + r for c in columns for r in rows)
        if cells != list(range(cells[0], cells[-1] + 1)):
            raise ValueError(f"grid[{key}] is not one block of panels on the phone")
        return self.stacked[cells[0] : cells[-1] + 1, 0]


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
    if on_phone():
        width, height, margins, grid, wspace, hspace, suptitle = _phone_geometry(
            width, height, margins, grid, wspace, hspace, suptitle
        )
    if margins is None:
        fig = HouseFigure(figsize=(width, height), layout="constrained")
        if suptitle is not None:
            fig.suptitle(suptitle, x=0.01, ha="left", fontsize=TITLE_PT, fontweight="bold")
        return fig
    fig = HouseFigure(figsize=(width, height))
    # Margins hold text, so they grow with it: a script gives them for 10 pt
    # text, and they scale with the house font size.
    left, bottom, right, top = (m * MARGIN_SCALE for m in margins)
    if suptitle is not None:
        top += SUPTITLE_PAD + SUPTITLE_LINE * (suptitle.count("\n") + 1)
        fig.suptitle(
            suptitle,
            x=0.08 / width,
            y=1 - SUPTITLE_PAD / height,
            ha="left",
            va="top",
            fontsize=TITLE_PT,
            fontweight="bold",
        )
    rows, columns = grid
    inner_width = width - left - right - wspace * (columns - 1)
    inner_height = height - bottom - top - hspace * (rows - 1)
    if inner_width <= 0 or inner_height <= 0:
        raise ValueError(f"margins {margins} and gaps leave no room for the axes in a {width} x {height} inch figure")
    # GridSpec gaps are fractions of the average axes width (height).
    fig.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        bottom=bottom / height,
        top=1 - top / height,
        wspace=wspace * columns / inner_width,
        hspace=hspace * rows / inner_height,
    )
    return fig


def new_cell_figure(width: float, height: float, title_lines: int = 1):
    """A figure for rows of cells (see ``draw_cell_rows``): one axes under a
    band for a left-aligned title, placed by hand. Constrained layout has
    nothing to arrange on an axes without ticks and would cost about a third
    of the drawing time. Returns (figure, axes)."""
    if on_phone():
        width = PHONE_WIDTH  # draw_cell_rows sets the height: on a phone each row's label stands above it
    fig = HouseFigure(figsize=(width, height))
    band = (0.12 + 0.24 * title_lines) / height
    ax = fig.add_axes((0.005, 0.01, 0.99, 0.99 - band))
    fig.title_band_in = 0.12 + 0.24 * title_lines
    return fig, ax


def _phone_geometry(width, height, margins, grid, wspace, hspace, suptitle):
    """new_figure's arguments for the phone rendering of a figure the script
    sizes for the page: PHONE_WIDTH wide, the grid's columns stacked under
    each other (each panel keeps its page height), the gap between stacked
    panels as wide as the page's bottom and top margins together (one
    panel's tick labels, the next one's title), the title wrapped."""
    rows, columns = grid

    def band(title):  # the suptitle's band above the top margin, as new_figure makes it
        return SUPTITLE_PAD + SUPTITLE_LINE * (title.count("\n") + 1) if title is not None else 0.0

    page_band = band(suptitle)
    if suptitle is not None:
        suptitle = wrap_to_width(suptitle, PHONE_WIDTH - 0.16, TITLE_PT, "bold")
    if margins is None:
        return PHONE_WIDTH, height, margins, grid, wspace, hspace, suptitle
    # A narrower axis has fewer ticks, often one at its right end: room for half a tick label.
    margins = (margins[0], margins[1], max(margins[2], PHONE_RIGHT_MARGIN), margins[3])
    _, bottom, _, top = (m * MARGIN_SCALE for m in margins)
    panel = (height - bottom - top - page_band - hspace * (rows - 1)) / rows
    if columns > 1:
        hspace = max(hspace, bottom + top)
        rows, columns, wspace = rows * columns, 1, 0.0
    height = bottom + top + band(suptitle) + panel * rows + hspace * (rows - 1)
    return PHONE_WIDTH, height, margins, (rows, columns), wspace, hspace, suptitle


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
    wanted = sorted((float(to_axes.transform((ax.get_xlim()[1], y))[1]), text, colour) for y, text, colour in labels)
    placed: list[float] = []
    for y, _, _ in wanted:  # upwards from the lowest, each at least a gap above the last
        placed.append(max(y, placed[-1] + gap) if placed else y)
    overshoot = placed[-1] - 1.0 if placed else 0.0
    if overshoot > 0:  # the top one left the axes: shift down, keeping the gaps
        for i in range(len(placed) - 1, -1, -1):
            limit = 1.0 if i == len(placed) - 1 else placed[i + 1] - gap
            placed[i] = min(placed[i], limit)
    for (y, text, colour), at in zip(wanted, placed, strict=True):
        ax.annotate(
            text,
            xy=(1.0, y),
            xycoords="axes fraction",
            xytext=(6, (at - y) * height_pt),
            textcoords="offset points",
            ha="left",
            va="center",
            color=text_colour(colour),
            annotation_clip=False,
        )


LOG_LABELS: dict[str, Callable[[float], str]] = {
    "plain": lambda v: f"{v:g}",  # 0.01, 1, 100
    "power": lambda v: "10" + superscript(round(math.log10(v))),  # 10⁻², 10⁰
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
) -> list[float]:
    """Draw rows of labelled cells, one row per step of a worked example.

    ``rows`` holds (row label, cell texts); ``fills`` an optional colour per
    row (or per cell); ``highlight_column`` outlines one column, the element
    followed by hand. Axes are switched off and limits set to fit the cells.
    Returns where each row's cells start (y, in data units growing
    downward), for a script's own marks beside the rows.

    On a phone (``phone_layout``) each row's label stands on its own line
    above its cells, which span the figure's width, as many to a line as fit
    (a long row takes several lines), and a new_cell_figure is sized to fit.
    """
    n_rows = len(rows)
    n_cols = max(len(cells) for _, cells in rows)
    phone = on_phone()
    per_line = _cells_per_phone_line(rows, max(fontsize, SMALLEST_TEXT_PT)) if phone else n_cols
    lines_of = [max(1, math.ceil(len(cells) / per_line)) for _, cells in rows]
    tops, y = [], 0.0
    for (label, _), lines in zip(rows, lines_of, strict=True):
        # on a phone: the label's line (0.6; none for a row without a label), then lines of cells
        above = 0.6 if phone and label else 0.0
        tops.append(y + above)
        y += above + lines if phone else 1.0
    for i, (label, cells) in enumerate(rows):
        top = tops[i]
        if phone:
            ax.text(0.04, top - 0.3, label, ha="left", va="center", fontsize=fontsize)
        else:
            ax.text(-0.15, top + 0.4, label, ha="right", va="center", fontsize=fontsize)
        row_fill = fills[i] if fills is not None else PALETTE["light"]
        for k, cell in enumerate(cells):
            colour = row_fill[k] if isinstance(row_fill, (list, tuple)) else row_fill
            x, yc = k % per_line, top + k // per_line
            ax.add_patch(
                Rectangle((x + 0.04, yc + 0.04), 0.92, 0.72, facecolor=colour, edgecolor="white", linewidth=1.0)
            )
            ax.text(x + 0.5, yc + 0.4, cell, ha="center", va="center", fontsize=fontsize)
    last = tops[-1] + lines_of[-1] - 0.2  # where the last row's cells end
    if highlight_column is not None:
        # On a phone the labels stand between the rows: each cell is outlined.
        column, line = highlight_column % per_line, highlight_column // per_line
        spans = [(t + line, 0.8) for t in tops] if phone else [(0.0, n_rows - 0.2)]
        for span_top, span in spans:
            ax.add_patch(
                Rectangle(
                    (column + 0.01, span_top),
                    0.98,
                    span,
                    fill=False,
                    edgecolor=PALETTE["red"],
                    linewidth=1.8,
                )
            )
    upper = 0.0  # above the first row (its label line, on a phone)
    if column_labels is not None:
        for j, label in enumerate(column_labels):
            ax.text(
                j + 0.5, upper - 0.25, label, ha="center", va="bottom", fontsize=fontsize - 0.5, color=PALETTE["grey"]
            )
        upper -= 0.55
    bottom = last + 0.2
    if footnote is not None:
        if phone:
            footnote = wrap_to_width(footnote, PHONE_WIDTH - 0.1, SMALLEST_TEXT_PT)
        ax.text(
            min(n_cols, per_line),
            bottom + 0.1,
            footnote,
            ha="right",
            va="top",
            fontsize=fontsize - 0.5,
            color=PALETTE["grey"],
        )
        bottom += 0.6 * (footnote.count("\n") + 1)
    ax.set_xlim(-0.05 if phone else -label_width, min(n_cols, per_line) + 0.05)
    ax.set_ylim(bottom, upper - 0.05)
    ax.axis("off")
    if phone and hasattr(ax.figure, "title_band_in"):  # a new_cell_figure: it is sized to its rows
        fit_cell_figure(ax)
    return tops


def _cells_per_phone_line(rows, fontsize: float) -> int:
    """How many cells fit a line of a phone figure: each as wide as the
    widest cell text plus a little room, never more than a row has."""
    widest = max((text_width_in(cell, fontsize) for _, cells in rows for cell in cells), default=0.0)
    fit = max(1, int((PHONE_WIDTH - 0.1) // (widest + 0.06)))
    longest = max(len(cells) for _, cells in rows)
    lines = math.ceil(longest / fit)
    return math.ceil(longest / lines)  # as even as the lines can be: 8 and 7, not 14 and 1


# On a phone a cell figure's data unit (one line of cells) is PHONE_CELL_UNIT inches.
PHONE_CELL_UNIT = 0.4


def fit_cell_figure(ax) -> None:
    """Size a phone cell figure to its axes' y limits (data units of
    PHONE_CELL_UNIT inches) under the figure's title band."""
    fig = ax.figure
    low, high = ax.get_ylim()
    axes_in = abs(low - high) * PHONE_CELL_UNIT
    height = axes_in + fig.title_band_in + 0.06
    fig.set_size_inches(PHONE_WIDTH, height)
    ax.set_position((0.012, 0.04 / height, 0.976, axes_in / height))


TITLE_LINE_IN = TITLE_PT * 1.25 / 72  # one more line of an axes title


def wrap_long_titles(fig: Figure, margin_in: float = 0.06) -> None:
    """On a phone, break every axes title, legend entry and x-axis label
    wider than its room into lines, and make room for a title's or label's
    extra lines: what stands above the title (or from the label's axes up)
    moves up, the figure grows. (A legend grows inside its axes.)"""
    width = fig.get_figwidth()
    for ax in list(fig.axes):
        if not ax.get_visible():
            continue
        box = ax.get_position()
        room = width * (1 - box.x0) - margin_in
        titles = [ax.get_title(loc=loc) for loc in ("left", "center", "right")]
        for child in ax.get_children():
            if isinstance(child, Text) and child.get_text() and child.get_text() in titles:
                extra = _wrap_text(child, room)
                if extra:
                    _make_room(fig, box.y1 * fig.get_figheight(), extra * TITLE_LINE_IN)
        _wrap_texts_at_edges(ax, width, margin_in)
        legend = ax.get_legend()
        if legend is not None:  # each entry's text beside its handle, within the axes
            room_per_column = width * box.width / max(1, getattr(legend, "_ncols", 1)) - 0.55
            for entry in legend.get_texts():
                _wrap_text(entry, room_per_column)
        label = ax.xaxis.label
        if label.get_visible() and label.get_text():
            # centred under the axes: as far past each end as the nearer margin allows
            sides = 2 * min(box.x0, 1 - box.x1) * width - 2 * margin_in
            extra = _wrap_text(label, width * box.width + max(sides, 0.0))
            if extra:
                _make_room(fig, ax.get_position().y0 * fig.get_figheight(), extra * label.get_fontsize() * 1.25 / 72)


def _wrap_texts_at_edges(ax, width_in: float, margin_in: float) -> None:
    """Break a text or annotation of ``ax`` that runs past the figure's
    right edge, or (anchored inside the axes) past the axes' left edge onto
    the tick labels, into lines that fit between its anchor and that edge."""
    dpi = ax.figure.dpi
    axes_left = ax.get_position().x0 * width_in
    for text in ax.texts:
        if not text.get_visible() or " " not in text.get_text():
            continue
        box = text.get_window_extent()  # (the figure's own renderer: no draw needed)
        left, right = box.x0 / dpi, box.x1 / dpi
        align = text.get_horizontalalignment()
        anchor = {"left": left, "right": right}.get(align, (left + right) / 2)
        floor = axes_left if anchor > axes_left else margin_in
        if left >= floor and right <= width_in - margin_in:
            continue
        if align == "left":
            room = width_in - margin_in - left
        elif align == "right":
            room = right - floor
        else:
            room = 2 * min(anchor - floor, width_in - margin_in - anchor)
        _wrap_text(text, room)


def _wrap_text(text: Text, room_in: float) -> int:
    """Wrap ``text`` to ``room_in`` inches; the number of lines it gained."""
    old = text.get_text()
    new = wrap_to_width(old, room_in, text.get_fontsize(), text.get_fontweight())
    if new == old:
        return 0
    text.set_text(new)
    return new.count("\n") - old.count("\n")


def _make_room(fig: Figure, boundary_in: float, extra_in: float) -> None:
    """Grow ``fig`` by ``extra_in`` inches, moving up everything placed at
    or above ``boundary_in`` (inches from the bottom): axes and figure texts."""
    old = fig.get_figheight()
    new = old + extra_in
    for ax in fig.axes:
        box = ax.get_position()
        y0 = box.y0 * old + (extra_in if box.y0 * old >= boundary_in - 1e-6 else 0.0)
        ax.set_position((box.x0, y0 / new, box.width, box.height * old / new))
    for text in fig.texts:  # the suptitle is one of them
        x, y = text.get_position()
        y_in = y * old + (extra_in if y * old >= boundary_in - 1e-6 else 0.0)
        text.set_position((x, y_in / new))
    fig.set_size_inches(fig.get_figwidth(), new)
