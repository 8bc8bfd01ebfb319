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
import contextlib
import importlib
import json
import math
import multiprocessing
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import matplotlib

matplotlib.use("Agg")  # no display; SVGs are written by the svg backend anyway
from matplotlib.figure import Figure  # noqa: E402  (after the backend choice)
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.ticker import (  # noqa: E402
    FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator)

import numpy as np  # noqa: E402

from page_registry import page_config  # noqa: E402  (re-exported for the runner)

REPO_ROOT = Path(__file__).resolve().parents[2]
DIAGRAMS_DIR = REPO_ROOT / "docs" / "diagrams"
FIGURES_DIR = REPO_ROOT / "figures"
SEED_OFFSET_ENV = "SEED_OFFSET"
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

STYLE = {
    "svg.hashsalt": "normalisation-pages",  # fixed ids: byte-identical SVGs
    "svg.fonttype": "path",  # glyphs as paths: identical rendering everywhere
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
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
            fig.suptitle(suptitle, x=0.01, ha="left", fontsize=11, fontweight="bold")
        return fig
    fig = Figure(figsize=(width, height))
    left, bottom, right, top = margins
    if suptitle is not None:
        top += SUPTITLE_PAD + SUPTITLE_LINE * (suptitle.count("\n") + 1)
        fig.suptitle(suptitle, x=0.08 / width, y=1 - SUPTITLE_PAD / height, ha="left", va="top",
                     fontsize=11, fontweight="bold")
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


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
LOG_LABELS: dict[str, Callable[[float], str]] = {
    "plain": lambda v: f"{v:g}",  # 0.01, 1, 100
    "power": lambda v: "10" + str(round(math.log10(v))).translate(_SUPERSCRIPT),  # 10⁻², 10⁰
    "e": lambda v: "1" if round(math.log10(v)) == 0 else f"1e{round(math.log10(v))}",  # 1e-2, 1
}


def log_axis(
    ax,
    which: str = "y",
    *,
    ticks: Sequence[float] | None = None,
    labels: str = "plain",
    every: int = 1,
    base: float = 10,
) -> None:
    """Put one axis of ``ax`` (``which`` is "x" or "y") on a log scale with
    plain-text tick labels: matplotlib's mathtext powers of ten are slow to
    lay out, and minor ticks cost more drawing time than they help.

    ``labels`` is a style of ``LOG_LABELS``: "plain" (0.01, 1, 100), "power"
    (10⁻², 10⁰, 10²) or "e" (1e-2, 1, 1e2). The ticks are ``ticks`` if given,
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

    def items(self) -> list[tuple[str, float, str]]:
        """(printed name, raw value, text) for each element, in order."""
        if isinstance(self.text, list):
            return [
                (f"{self.name}[{i}]", v, t)
                for i, (v, t) in enumerate(zip(self.value, self.text))
            ]
        return [(self.name, self.value, self.text)]


@dataclass
class Claim:
    statement: str  # the same words at every seed, so seed reports can match them
    holds: bool
    detail: str = ""  # what was measured, e.g. the largest gap of an agreement
    # False for a statement about the page's own run only (which of two
    # close runs is ahead): it must hold at seed offset 0, and `make seeds`
    # reports, without failing, the seeds where it does not.
    every_seed: bool = True


def format_number(value: float, fmt: str | Callable[[float], str]) -> str:
    """The text form of one number: a format spec (``",d"``, ``".4f"``,
    ``".2%"``, ``".3e"``) or a callable for forms a spec cannot express."""
    if callable(fmt):
        text = fmt(value)
    elif fmt.endswith("d"):  # integer forms ("d", ",d") take whole numbers only
        if not float(value).is_integer():
            raise QuoteError(f"format {fmt!r} needs a whole number, got {value!r}")
        text = format(int(value), fmt)
    else:
        text = format(value, fmt)
    if not isinstance(text, str) or not text:
        raise QuoteError(f"format {fmt!r} gave {text!r} for {value!r}")
    return text


@dataclass
class Section:
    """The context one section script works in: seeds, quotes, claims, figures."""

    page: str
    name: str
    seed_offset: int = 0
    out_dir: Path | None = None  # figures/<page> by default
    echo: bool = True
    quotes: dict[str, Quote] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)

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
    ) -> str | list[str]:
        """Register a number the page may quote, print it, return its text.

        ``value`` may be a scalar or a 1-D sequence (each element formatted
        with ``fmt``). ``rel_tol``/``abs_tol`` are the golden-record
        tolerances: tight by default, looser only with a stated reason.
        A NaN, an unexpected infinity or a reused name is an error.
        """
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
        if array.ndim == 0:
            raw: float | list[float] = float(array)
            text: str | list[str] = format_number(raw, fmt)
        else:
            raw = [float(v) for v in array]
            text = [format_number(v, fmt) for v in raw]
        quote = Quote(name, raw, text, rel_tol, abs_tol)
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
    def claim(self, statement: str, holds: bool, detail: str = "", *, every_seed: bool = True) -> bool:
        """Record a statement the prose relies on; failures are collected and
        raised together by ``run_section`` (so a seed report sees them all).

        ``every_seed=False`` marks a statement about the page's own run (seed
        offset 0) that other seeds need not repeat; the prose must say so.
        """
        self.claims.append(Claim(statement, bool(holds), detail, every_seed))
        return bool(holds)

    def agree(self, what: str, a: Any, b: Any, *, rtol: float = 0.0, atol: float = 0.0) -> bool:
        """Claim that two computations of one quantity agree, e.g. a closed
        form and a loop; the statement records the largest difference seen."""
        a_arr = np.asarray(a, dtype=float)
        b_arr = np.asarray(b, dtype=float)
        gap = float(np.max(np.abs(a_arr - b_arr))) if a_arr.size else 0.0
        holds = bool(np.allclose(a_arr, b_arr, rtol=rtol, atol=atol, equal_nan=False))
        bound = " and ".join(
            part for part in (f"rtol {rtol:g}" if rtol else "", f"atol {atol:g}" if atol else "") if part
        )
        return self.claim(f"{what} agree within {bound or 'exactly'}", holds, f"largest gap {gap:.3g}")

    # -- figures -------------------------------------------------------------
    @property
    def figure_dir(self) -> Path:
        return self.out_dir if self.out_dir is not None else FIGURES_DIR / self.page

    def save_figure(self, fig: Figure, stem: str) -> Path:
        """Write ``<section>_<stem>.svg`` deterministically and atomically."""
        path = self.figure_dir / f"{self.name}_{stem}.svg"
        if path.name in self.figures:
            raise QuoteError(f"{self.name}: figure {path.name} saved twice")
        with atomic_write(path, "wb") as out:
            fig.savefig(out, format="svg", metadata={"Date": None})
        self.figures.append(path.name)
        return path

    # -- numbers file --------------------------------------------------------
    @property
    def numbers_path(self) -> Path:
        return self.figure_dir / "numbers" / f"{self.name}.json"

    def record(self) -> dict:
        """Everything the checker and the tests need, in registration order."""
        return {
            "page": self.page,
            "section": self.name,
            "seed_offset": self.seed_offset,
            "quotes": {
                q.name: {"value": q.value, "text": q.text, "rel_tol": q.rel_tol, "abs_tol": q.abs_tol}
                for q in self.quotes.values()
            },
            "claims": [
                {"statement": c.statement, "holds": c.holds, "detail": c.detail, "every_seed": c.every_seed}
                for c in self.claims
            ],
            "figures": list(self.figures),
        }

    def write_numbers(self) -> Path:
        """Write the numbers file via a temp file + rename: never half-written."""
        write_json_atomically(self.numbers_path, self.record())
        return self.numbers_path

    def failed_claims(self) -> list[str]:
        """Claims that fail here: all of them on the page's run (offset 0),
        only the every-seed ones at other offsets."""
        return [
            c.statement + (f" ({c.detail})" if c.detail else "")
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
    """Import torch with one thread per process: parallel sections must not
    fight over the two cores, and one thread fixes the order of every sum.

    (``torch.use_deterministic_algorithms`` is left alone: it concerns GPU
    kernels, and merely calling it imports torch's compiler, about a second.)
    """
    global _TORCH
    if _TORCH is None:
        import torch

        torch.set_num_threads(1)
        _TORCH = torch
    return _TORCH


def process_pool(processes: int = 2):
    """A pool of forked worker processes for a section's independent heavy
    jobs (use as a context manager, e.g. ``pool.starmap``). Forked workers
    inherit everything imported and, unlike threads, do not contend for the
    GIL. Jobs must be module-level functions; results come back in order."""
    return multiprocessing.get_context("fork").Pool(processes)


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
) -> Section:
    """Run one section module's ``compute`` (and ``draw`` if ``figures``).

    Writes the numbers file when ``write``; raises ``ClaimsFailed`` naming
    every failed claim unless ``raise_on_failed_claims`` is off (seed report).
    A section whose claims fail writes no numbers file.
    """
    package, _, name = module.__name__.rpartition(".")
    page = page_config(package).PAGE
    section = Section(page=page, name=name, seed_offset=seed_offset, out_dir=out_dir, echo=echo)
    results = module.compute(section)
    failed = section.failed_claims()
    if failed and raise_on_failed_claims:
        raise ClaimsFailed(f"{name}: claim failed: " + "; claim failed: ".join(failed))
    if figures:
        module.draw(section, results)
    if write:
        section.write_numbers()
    return section


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
    parser.add_argument("--quiet", action="store_true", help="do not print the quotes")
    args = parser.parse_args()
    if args.seed_offset is None:
        try:
            args.seed_offset = int(os.environ.get(SEED_OFFSET_ENV) or 0)
        except ValueError:
            parser.error(f"${SEED_OFFSET_ENV} must be a whole number, got {os.environ[SEED_OFFSET_ENV]!r}")
    try:
        run_section(
            module,
            seed_offset=args.seed_offset,
            figures=not args.no_figures,
            out_dir=args.out_dir,
            echo=not args.quiet,
            # A numbers file must list the figures drawn with it: without
            # figures, write one only into a separate --out-dir.
            write=not args.no_figures or args.out_dir is not None,
        )
    except (ClaimsFailed, QuoteError) as error:
        sys.exit(f"error: {error}")
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
