"""figure_bounds.check_figure_fits: everything drawn lies inside the figure, with a margin."""

from __future__ import annotations

import ast
import io
import time
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from pagekit import figure_bounds
from pagekit.figure_bounds import check_figure_fits, drawn_renderer


def _saved(fig: Figure) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def _plot(width: float = 6.0, height: float = 3.0) -> tuple[Figure, object]:
    """A page-like figure laid out by hand, with room for its labels."""
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=0.12, right=0.95, bottom=0.18, top=0.85)
    ax = fig.add_subplot()
    ax.plot([0, 1, 2, 3], [1, 3, 2, 4], label="loss")
    ax.plot([0, 1, 2, 3], [2, 1, 3, 1], label="other")
    ax.set_title("A title that fits")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend(loc="upper left")
    ax.annotate("peak", xy=(3, 4), xytext=(2.2, 3.5), arrowprops={"arrowstyle": "->"})
    return fig, ax


def test_a_figure_that_fits_has_no_problems():
    fig, _ = _plot()
    _saved(fig)
    assert check_figure_fits(fig) == []


def test_text_off_the_right_edge_is_named():
    fig, ax = _plot()
    ax.text(2.5, 2.0, "a label that runs off the right edge")
    _saved(fig)
    problems = check_figure_fits(fig)
    assert len(problems) == 1, problems
    assert "'a label that runs off the right edge'" in problems[0]
    assert "right edge by" in problems[0]


def test_a_legend_outside_the_figure_is_named():
    fig, ax = _plot()
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    _saved(fig)
    problems = check_figure_fits(fig)
    assert any("legend ['loss', 'other']" in p and "right edge" in p for p in problems), problems


def test_a_title_above_the_top_and_a_label_below_the_bottom():
    fig, ax = _plot()
    fig.suptitle("A figure title pushed out", y=1.05)
    ax.set_xlabel("step\n(second line)\n(third line)")
    _saved(fig)
    problems = check_figure_fits(fig)
    assert any("'A figure title pushed out'" in p and "top edge" in p for p in problems), problems
    assert any("step (second line)" in p and "bottom edge" in p for p in problems), problems


def test_tick_labels_past_the_edge():
    fig = Figure(figsize=(6, 3))
    fig.subplots_adjust(left=0.12, right=0.995, bottom=0.18)
    ax = fig.add_subplot()
    ax.plot([0, 2], [0, 1])
    ax.set_xlim(0, 2)
    ax.set_xticks([0, 1, 2], ["0.0", "1.0", "2.0000"])
    _saved(fig)
    problems = check_figure_fits(fig)
    assert any("tick label text '2.0000'" in p and "right edge" in p for p in problems), problems


def test_what_clipping_cuts_off_does_not_count():
    fig, ax = _plot()
    ax.set_xlim(0, 3)
    ax.plot([-5, 10], [0, 10], color="gray")  # runs far past the axes, clipped to them
    _saved(fig)
    assert check_figure_fits(fig) == []


def test_an_unclipped_line_and_patch_outside_are_named():
    from matplotlib.patches import Rectangle

    fig, ax = _plot()
    ax.plot([0, 5], [1, 1], clip_on=False, label="escaping line")
    ax.add_patch(Rectangle((-2, 0), 0.5, 1, clip_on=False))
    ax.set_xlim(0, 3)
    ax.set_ylim(0, 4.5)
    _saved(fig)
    problems = check_figure_fits(fig)
    assert any("Line2D 'escaping line'" in p and "right edge" in p for p in problems), problems
    assert any("Rectangle" in p and "left edge" in p for p in problems), problems


def test_an_annotation_arrow_running_outside_is_named():
    fig, ax = _plot()
    ax.annotate(
        "note", xy=(3, 1), xytext=(4.5, 1), xycoords="data", arrowprops={"arrowstyle": "->"}, annotation_clip=False
    )
    _saved(fig)
    problems = check_figure_fits(fig)
    assert any("annotation 'note'" in p and "right edge" in p for p in problems), problems


def test_the_margin_counts():
    fig = Figure(figsize=(4, 2))
    # A text whose right end sits 1 px (at 72 dpi) inside the right edge.
    fig.text(1 - 1 / (4 * 72), 0.5, "edge", ha="right")
    _saved(fig)
    assert check_figure_fits(fig, margin_px=0) == []
    problems = check_figure_fits(fig, margin_px=2)
    assert len(problems) == 1 and "right edge by 1.0 px" in problems[0], problems


def test_cell_figures_with_axis_off():
    """Rows of cells (axes without ticks or frame) spanning the figure."""
    from matplotlib.patches import Rectangle

    fig = Figure(figsize=(6, 1.5))
    ax = fig.add_axes((0.005, 0.01, 0.99, 0.9))
    ax.set_axis_off()
    ax.set_xlim(0, 6)
    ax.set_ylim(0, 1)
    for k in range(6):
        ax.add_patch(Rectangle((k + 0.05, 0.1), 0.9, 0.8, facecolor="#ddd"))
        ax.text(k + 0.5, 0.5, f"{k}.25", ha="center", va="center")
    _saved(fig)
    assert check_figure_fits(fig) == []
    ax.text(5.9, 0.5, "9.9992e+09", va="center")  # spills past the last cell and the edge
    _saved(fig)
    problems = check_figure_fits(fig)
    assert any("'9.9992e+09'" in p for p in problems), problems


def test_a_figure_never_drawn_is_laid_out_first():
    fig, ax = _plot()
    ax.text(2.5, 2.0, "a label that runs off the right edge")
    problems = check_figure_fits(fig)
    assert any("runs off the right edge" in p for p in problems), problems


def test_checking_leaves_the_figure_as_it_was():
    fig, _ = _plot()
    dpi = fig.dpi
    first = _saved(fig)
    check_figure_fits(fig)
    assert fig.dpi == dpi
    assert _saved(fig) == first, "saving after the check gave different SVG bytes"


@pytest.mark.parametrize("panels", [2])
def test_it_is_fast_after_a_save(panels):
    """It reuses the save's renderer: a two-panel figure with a few dozen texts
    takes milliseconds (the bound here is loose: the machine may be busy)."""
    fig = Figure(figsize=(8.4, 3.4))
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.84, wspace=0.3)
    axes = fig.subplots(1, panels)
    for k, ax in enumerate(axes):
        ax.plot(range(50), [i**1.5 for i in range(50)], label=f"run {k}")
        ax.set_yscale("log")
        ax.set_title(f"panel {k}")
        ax.set_xlabel("step")
        ax.legend()
        for i in range(8):
            ax.annotate(f"{i}.5", xy=(i * 5, (i * 5 + 1) ** 1.5), fontsize=8)
    fig.suptitle("Two panels", x=0.01, ha="left")
    with drawn_renderer(fig) as drawn:
        _saved(fig)
    best = min(_timed(fig, drawn[-1]) for _ in range(3))
    assert best < 0.25, f"check_figure_fits took {best * 1e3:.0f} ms after a save"


def _timed(fig, renderer) -> float:
    start = time.perf_counter()
    assert check_figure_fits(fig, renderer=renderer) == []
    return time.perf_counter() - start


def test_only_public_matplotlib_names_are_used():
    """A matplotlib upgrade may rename any private name (``_update_ticks``,
    ``Text._renderer``): the checker uses none, so a pinned upgrade cannot
    silently change what it measures."""
    source = Path(figure_bounds.__file__)
    private = sorted(
        {
            f"{source.name}:{node.lineno}: .{node.attr}"
            for node in ast.walk(ast.parse(source.read_text()))
            if isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not (node.attr.startswith("__") and node.attr.endswith("__"))
        }
    )
    private += [
        f"{source.name}:{node.lineno}: getattr(..., {node.args[1].value!r})"
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "getattr"
        and len(node.args) > 1
        and isinstance(node.args[1], ast.Constant)
        and str(node.args[1].value).startswith("_")
    ]
    private += [
        f"{source.name}: imports matplotlib.cbook"
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.ImportFrom) and "cbook" in {a.name for a in node.names}
    ]
    assert not private, "private matplotlib names in the figure-bounds checker:\n" + "\n".join(private)
