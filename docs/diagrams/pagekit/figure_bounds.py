"""Does everything drawn in a figure lie inside it?

    problems = check_figure_fits(fig, margin_px=2.0)

For a matplotlib Figure that has just been drawn (right after ``savefig``),
returns a list of human-readable problems, empty when everything fits: every
visible text (titles, axis labels, tick labels, annotations, figure texts),
legend, patch, line, collection, image and table must lie inside the figure,
at least ``margin_px`` from each edge. What an artist's clip box or clip path
cuts off (a line clipped to its axes) does not count: only what is drawn.

Units: pixels of the drawing the figure was last saved as. For an SVG that
is 1/72 inch (the SVG's own user unit, the "pt" of its width); for a PNG,
pixels at the dpi it was saved at.

Speed: given the renderer of the savefig that just drew the figure (caught
with ``drawn_renderer``, from matplotlib's public ``draw_event``), the text
layouts come from matplotlib's cache and nothing is drawn again: a few
milliseconds for a page figure. Without one, the figure is drawn once as an
SVG (into memory) first.

Public matplotlib API only (``get_tightbbox``, ``get_window_extent``, the
tick and clip getters, ``draw_event``): a matplotlib upgrade changes no
private name under it.

Run it on a saved SVG file's figure from the command line? No: it needs the
Figure object. The figure saver calls it (see ``check_figure_fits``'s
docstring); ``python docs/diagrams/figure_bounds.py`` runs a small demonstration.
"""

from __future__ import annotations

import contextlib
import io
import math

from pagekit import numeric_env

numeric_env.applied_variant()  # the pin, before matplotlib loads numpy

import matplotlib
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure, SubFigure
from matplotlib.legend import Legend
from matplotlib.patches import Patch
from matplotlib.spines import Spine
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

__all__ = ["check_figure_fits", "drawn_renderer", "FigureBoundsError"]


class FigureBoundsError(ValueError):
    """Raised by callers that turn the problems into an error (see ``check_figure_fits``)."""


@contextlib.contextmanager
def drawn_renderer(fig: Figure):
    """Catch the renderer of the draws inside the block (a savefig)::

        with drawn_renderer(fig) as drawn:
            fig.savefig(out, format="svg")
        problems = check_figure_fits(fig, renderer=drawn[-1])

    The list fills from the canvas's public ``draw_event`` (which every
    Figure.draw sends, whichever backend's canvas savefig switched to)."""
    drawn: list = []
    connection = fig.canvas.mpl_connect("draw_event", lambda event: drawn.append(event.renderer))
    try:
        yield drawn
    finally:
        fig.canvas.mpl_disconnect(connection)


def _describe(artist: Artist, where: str) -> str:
    if isinstance(artist, Text):
        text = artist.get_text().replace("\n", " ")
        if len(text) > 40:
            text = text[:37] + "..."
        kind = "annotation" if isinstance(artist, Annotation) else "text"
        return f"{where}{kind} {text!r}"
    if isinstance(artist, Legend):
        labels = [t.get_text() for t in artist.get_texts()][:3]
        return f"{where}legend {labels}"
    name = type(artist).__name__
    label = artist.get_label()
    if label and not label.startswith("_"):
        name += f" {label!r}"
    gid = artist.get_gid()
    if gid:
        name += f" (gid {gid})"
    return where + name


def _axes_name(ax: Axes, index: int) -> str:
    title = ax.get_title() or ax.get_title("left") or ax.get_title("right")
    if title:
        title = title.replace("\n", " ")
        return f"axes {index + 1} ({title[:30]!r}): "
    return f"axes {index + 1}: "


def _inside(bbox: Bbox, inner: tuple[float, float, float, float]) -> bool:
    return (
        bbox.x0 >= inner[0] - 1e-6
        and bbox.y0 >= inner[1] - 1e-6
        and bbox.x1 <= inner[2] + 1e-6
        and bbox.y1 <= inner[3] + 1e-6
    )


def _clipped_inside(artist: Artist, inner) -> bool:
    """True when the artist's clip box alone keeps it inside: no need to measure it
    (a line, patch, collection or image clipped to an axes that fits)."""
    if not artist.get_clip_on() or isinstance(artist, Text):
        return False
    clip = artist.get_clip_box()
    return clip is not None and _inside(clip, inner)


def _extent(artist: Artist, renderer) -> Bbox | None:
    if isinstance(artist, Spine):
        # The spine's own line: Spine.get_window_extent also measures the ticks,
        # which are checked one by one.
        path = artist.get_path()
        if len(path.vertices) == 0:
            return None
        return path.get_extents(artist.get_transform())
    if isinstance(artist, Text):
        if not artist.get_text().strip():
            return None
    elif isinstance(artist, Patch):
        if not artist.get_fill() and artist.get_linewidth() == 0:
            return None
        face, edge = artist.get_facecolor(), artist.get_edgecolor()
        if face[3] == 0 and (edge[3] == 0 or artist.get_linewidth() == 0):
            return None
    try:
        # What is drawn, after the clip box and clip path; null for an
        # annotation whose point is clipped away (it is not drawn).
        bbox = artist.get_tightbbox(renderer)
    except Exception:
        return None
    if bbox is None or not all(math.isfinite(v) for v in bbox.bounds):
        return None
    if bbox.width == 0 and bbox.height == 0 and not isinstance(artist, Text):
        return None
    return bbox


def _drawn_ticks(axis: Axis) -> list:
    """The ticks the last draw drew. A draw positions a tick for every
    location of the locators and draws those inside the view limits (to a
    relative 1e-10, in the scale's coordinates); it keeps spare ticks beyond."""
    transform = axis.get_transform()
    low, high = sorted(float(v) for v in transform.transform([[v] for v in axis.get_view_interval()]).ravel())
    tolerance = 1e-10 * (high - low)
    drawn = []
    for tick in axis.get_major_ticks() + axis.get_minor_ticks():
        where = float(transform.transform([[tick.get_loc()]]).ravel()[0])
        if low - tolerance <= where <= high + tolerance:
            drawn.append(tick)
    return drawn


def _axis_artists(axis: Axis, marks: bool):
    """The tick labels, tick marks (if ``marks``), label and offset text the axis draws."""
    for tick in _drawn_ticks(axis):
        if not tick.get_visible():
            continue
        for part in (tick.label1, tick.label2):
            if part.get_visible():
                yield part, "tick label "
        if marks:
            for part in (tick.tick1line, tick.tick2line):
                if part.get_visible():
                    yield part, "tick mark "
    for part in (axis.label, axis.offsetText):
        if part.get_visible():
            yield part, ""


def _artists(container, renderer, inner, where: str = ""):
    """(artist, description prefix) for everything drawn, legends and tables whole."""
    if isinstance(container, (Figure, SubFigure)):
        children = [c for c in container.get_children() if c is not container.patch]
        axes_index = {id(ax): k for k, ax in enumerate(container.axes)}
        for child in children:
            if not child.get_visible():
                continue
            if isinstance(child, Axes):
                yield from _artists(child, renderer, inner, _axes_name(child, axes_index.get(id(child), 0)))
            elif isinstance(child, SubFigure):
                yield from _artists(child, renderer, inner, where + "subfigure: ")
            else:
                yield child, where
        return
    ax: Axes = container
    frame = ax.axison and ax.get_frame_on()
    # Tick marks stick out of the axes by at most their length: measure them
    # one by one only when the axes comes that close to the figure's edge.
    reach = renderer.points_to_pixels(
        max([8.0] + [abs(float(matplotlib.rcParams[f"{a}tick.major.size"])) for a in "xy"])
    )
    marks = not _inside(ax.bbox.expanded(1, 1).padded(reach), inner)
    for child in ax.get_children():
        if child is ax.patch or not child.get_visible():
            continue
        if isinstance(child, Axis):
            if ax.axison:
                for part, kind in _axis_artists(child, marks):
                    yield part, where + kind
            continue
        if child in ax.spines.values():
            if frame:
                yield child, where + "spine "
            continue
        if isinstance(child, Axes):  # an inset
            yield from _artists(child, renderer, inner, where + "inset " + _axes_name(child, 0))
            continue
        yield child, where


def check_figure_fits(fig: Figure, margin_px: float = 2.0, *, renderer=None) -> list[str]:
    """Problems with what lies outside ``fig`` (or within ``margin_px`` of its edge).

    Call it right after ``fig.savefig(...)``; each problem is one line naming
    the artist, where it sits (axes and kind) and by how much it crosses which
    edge, e.g.::

        axes 1 ('Running total'): text '1.07' crosses the right edge by 3.4 px
        (x 601.2 to 606.3; the figure ends at 604.8, margin 2)

    How the figure saver uses it (``record.Section.save_figure``)::

        with drawn_renderer(fig) as drawn:
            fig.savefig(out, format="svg", metadata={"Date": None})
        problems = check_figure_fits(fig, renderer=drawn[-1])
        if problems:
            raise FigureBoundsError(f"{path.name}: " + "; ".join(problems))

    Legends, tables and annotations (text and arrow) are judged whole; lines,
    patches, collections and images by what their clipping leaves drawn.
    """
    if renderer is None:  # draw it as the page does (an SVG), into memory
        with drawn_renderer(fig) as drawn:
            fig.savefig(io.BytesIO(), format="svg", metadata={"Date": None})
        renderer = drawn[-1]
    # The renderer's pixels per inch: 72 for the SVG the figure was just saved
    # as. Positions are computed at that dpi, as in the drawing.
    dpi = renderer.points_to_pixels(72.0)
    problems: list[str] = []
    saved_dpi = fig.dpi
    fig.dpi = dpi
    try:
        width, height = fig.bbox.width, fig.bbox.height
        inner = (margin_px, margin_px, width - margin_px, height - margin_px)
        for artist, where in _artists(fig, renderer, inner):
            if _clipped_inside(artist, inner):
                continue
            bbox = _extent(artist, renderer)
            if bbox is None:
                continue
            crossings = []
            if bbox.x0 < inner[0] - 1e-6:
                crossings.append(f"the left edge by {inner[0] - bbox.x0:.1f} px")
            if bbox.x1 > inner[2] + 1e-6:
                crossings.append(f"the right edge by {bbox.x1 - inner[2]:.1f} px")
            if bbox.y0 < inner[1] - 1e-6:
                crossings.append(f"the bottom edge by {inner[1] - bbox.y0:.1f} px")
            if bbox.y1 > inner[3] + 1e-6:
                crossings.append(f"the top edge by {bbox.y1 - inner[3]:.1f} px")
            if crossings:
                problems.append(
                    f"{_describe(artist, where)} crosses {' and '.join(crossings)} "
                    f"(x {bbox.x0:.1f} to {bbox.x1:.1f}, y {bbox.y0:.1f} to {bbox.y1:.1f}; "
                    f"the figure is {width:.1f} x {height:.1f} px, margin {margin_px:g})"
                )
    finally:
        fig.dpi = saved_dpi
    return problems


def check_texts_apart(fig: Figure, *, renderer, gap_px: float = 1.0) -> list[str]:
    """Problems with texts drawn over or against each other: every pair of
    visible texts (titles, labels, tick labels, annotations, legend entries)
    whose boxes come closer than ``gap_px`` in both directions (two tick
    labels that touch read as one word). Call it right after ``savefig``
    with the renderer that drew the figure, as ``check_figure_fits``."""
    dpi = renderer.points_to_pixels(72.0)
    saved_dpi = fig.dpi
    fig.dpi = dpi
    try:
        tick_labels, drawn = set(), set()
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                    tick_labels |= {id(tick.label1), id(tick.label2)}
                if ax.axison:
                    for tick in _drawn_ticks(axis):
                        if tick.get_visible():
                            drawn |= {id(tick.label1), id(tick.label2)}
        boxes = []
        for artist in fig.findobj(Text):
            if not artist.get_visible() or not artist.get_text().strip():
                continue
            if id(artist) in tick_labels and id(artist) not in drawn:
                continue
            bbox = artist.get_window_extent(renderer)
            if bbox.width > 0 and bbox.height > 0:
                boxes.append((artist, bbox))
        problems = []
        for i, (a, box_a) in enumerate(boxes):
            for b, box_b in boxes[i + 1 :]:
                dx = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
                dy = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
                if dx > -gap_px and dy > -gap_px:
                    how = f"overlap ({dx:.1f} x {dy:.1f} px)" if dx > 0 and dy > 0 else "touch"
                    problems.append(f"text {_short(a.get_text())!r} and text {_short(b.get_text())!r} {how}")
        return problems
    finally:
        fig.dpi = saved_dpi


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:37] + "..."


if __name__ == "__main__":  # a demonstration: one figure that fits, one that does not
    import time

    demo = Figure(figsize=(6, 3))
    ax = demo.add_subplot()
    ax.plot([0, 1, 2], [1, 3, 2], label="a line")
    ax.set_title("A figure that fits")
    ax.set_xlabel("x")
    ax.legend()
    demo.subplots_adjust(left=0.12, bottom=0.18)
    demo.savefig(io.BytesIO(), format="svg")
    start = time.perf_counter()
    print("fits:", check_figure_fits(demo) or "no problems", f"({(time.perf_counter() - start) * 1e3:.1f} ms)")
    ax.text(2.0, 2.0, "a label running off the right edge")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    demo.savefig(io.BytesIO(), format="svg")
    for problem in check_figure_fits(demo):
        print("problem:", problem)
