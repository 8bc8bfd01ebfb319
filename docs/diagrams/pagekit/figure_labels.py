"""What a figure's words say its data is: each panel's title and each
labelled series' label, beside a fingerprint of the data they stand for.

    panels = figure_labels(fig)
    # [{"title": "pre-norm", "data": "3f2a...", "series": [{"label": "lr 0.01", "data": "9c1e..."}]}]

The saver records this for every page figure (``Section.save_figure``), and
``make golden`` pins it. A label or title that moves to other data while the
data stay the same (two legend labels swapped in a script, two panel titles
exchanged) is refused by ``golden.relabelled`` unless the author says why: nothing
else ties a word on a figure to what it labels.

A fingerprint is a hash of the drawn data in the data's own coordinates (a
line's points, a bar's rectangle, a patch's outline) to six significant
digits, so it changes when the run changes, not when the layout does; a panel's is the hash of everything it
draws, its texts but its title included, so a cell figure's panel is known
by its numbers.
"""

from __future__ import annotations

import hashlib

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import Collection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text


def _hash(parts: list[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()[:16]


def _data(artist) -> bytes:
    """The bytes of what ``artist`` draws, in data coordinates."""
    if isinstance(artist, Line2D):
        points = artist.get_xydata()
    elif isinstance(artist, BarContainer):
        points = [(r.get_x(), r.get_y(), r.get_width(), r.get_height()) for r in artist.patches]
    elif isinstance(artist, Patch):
        points = artist.get_patch_transform().transform(artist.get_path().vertices)
    elif isinstance(artist, Collection):
        points = np.concatenate(
            [np.asarray(artist.get_offsets(), float).ravel()]
            + [np.asarray(p.vertices, float).ravel() for p in artist.get_paths()]
        )
    elif isinstance(artist, Text):
        return f"{artist.get_text()}@{artist.get_position()}".encode()
    else:
        return b""
    # Six significant digits, as the SVG draws them: a last-bit difference
    # from another machine is not other data.
    return ",".join(f"{v:.6g}" for v in np.asarray(points, dtype=float).ravel()).encode()


def _labelled(ax: Axes):
    """(label, artist) for each series of ``ax`` a legend would name."""
    in_containers = set()
    for container in ax.containers:
        if isinstance(container, BarContainer):
            in_containers |= {id(p) for p in container.patches}
            label = container.get_label()
            if label and not label.startswith("_"):
                yield label, container
    for artist in [*ax.lines, *ax.patches, *ax.collections]:
        label = artist.get_label()
        if id(artist) not in in_containers and label and not label.startswith("_"):
            yield label, artist


def figure_labels(fig: Figure) -> list[dict]:
    """Per panel (axes, in the figure's order): its title (the texts of its
    left, centre and right titles, joined), a fingerprint of all it draws
    but its title, and its labelled series with their fingerprints."""
    panels = []
    for ax in fig.axes:
        titles = [ax.get_title(loc=loc) for loc in ("left", "center", "right")]
        drawn = [
            _data(a)
            for a in [*ax.lines, *ax.patches, *ax.collections, *ax.containers, *ax.texts]
            if not (isinstance(a, Text) and a.get_text() in titles)
        ]
        panels.append(
            {
                "title": " | ".join(t for t in titles if t),
                "data": _hash(drawn),
                "series": [{"label": label, "data": _hash([_data(artist)])} for label, artist in _labelled(ax)],
            }
        )
    return panels
