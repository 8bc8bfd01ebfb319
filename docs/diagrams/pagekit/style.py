"""The house style of every figure: one palette, one set of text sizes, axes
placed by hand from margins in inches, and the helpers the section scripts
draw with (log axes, labelled line ends, cells of numbers, axis limits that
do not depend on digits below the printed precision).

Decides SVG bytes, so it is one of the inputs of every section (inputs.py).
"""

from __future__ import annotations

import math
import sys
from typing import Callable, Sequence

from pagekit import numeric_env

numeric_env.applied_variant()  # the pin, before matplotlib loads numpy

import matplotlib

if "ipykernel" not in sys.modules:
    # No display. Inside a Jupyter kernel the kernel's backend stays, so a
    # reader's own plt.show() shows; the figures here are drawn without
    # pyplot and written by the svg backend either way.
    matplotlib.use("Agg")
from matplotlib.figure import Figure  # (after the backend choice)
from matplotlib.patches import Rectangle
from matplotlib.text import Text
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
                Rectangle((j + 0.04, y + 0.04), 0.92, 0.72, facecolor=colour, edgecolor="white", linewidth=1.0)
            )
            ax.text(j + 0.5, y + 0.4, cell, ha="center", va="center", fontsize=fontsize)
    if highlight_column is not None:
        ax.add_patch(
            Rectangle(
                (highlight_column + 0.01, 0.0), 0.98, n_rows - 0.2, fill=False, edgecolor=PALETTE["red"], linewidth=1.8
            )
        )
    if column_labels is not None:
        for j, label in enumerate(column_labels):
            ax.text(j + 0.5, -0.25, label, ha="center", va="bottom", fontsize=fontsize - 0.5, color=PALETTE["grey"])
    bottom = n_rows
    if footnote is not None:
        ax.text(n_cols, n_rows + 0.1, footnote, ha="right", va="top", fontsize=fontsize - 0.5, color=PALETTE["grey"])
        bottom = n_rows + 0.6
    ax.set_xlim(-label_width, n_cols + 0.05)
    ax.set_ylim(bottom, -0.6 if column_labels is not None else -0.05)
    ax.axis("off")
