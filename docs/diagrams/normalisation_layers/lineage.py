"""Section 2, "The lineage": the five generations of normalisation layers
on a time axis, each labelled with what it normalises or where, and the
year of the paper the page cites for it (not necessarily the idea's first
use: pre-norm was in code and papers in 2018, before GPT-2), and the published figures the page's lineage table cites
(14 times fewer steps, 7% to 64% less running time), registered as quotes
so the page check can match them. The table's year column and the years of
citations are structure (STRUCTURAL in the package). No computation: facts
from the papers the page's reading list gives.
"""

from __future__ import annotations


from pagekit.section import PALETTE, main, new_figure, on_phone

# (quote name, year of the cited paper, step, what it normalises or where, row of the figure:
#  above 0 or below, 2.4 = higher, clear of its neighbour's label)
GENERATIONS = (
    ("batch_norm", 2015, "batch norm", "normalises each feature\nwith batch statistics", 1),
    ("layer_norm", 2016, "layer norm", "normalises each example\nwith its own mean and spread", -1),
    ("pre_norm", 2019, "pre-norm", "moves the norm to the\nbranch inputs, off the stream", 1),
    ("rms_norm", 2019, "RMS norm", "divides by the root mean\nsquare; no mean removed", -1),
    ("qk_norm", 2020, "QK-norm", "normalises the queries and\nkeys before their dot product", 2.4),
)

INCEPTION_STEP_FACTOR = 14  # Ioffe and Szegedy: 14 times fewer training steps
RMS_SPEEDUP = (0.07, 0.64)  # Zhang and Sennrich: 7% to 64% less running time


def compute(section):
    q = section.quote
    for name, year, *_ in GENERATIONS:
        q(f"year_{name}", year, "d")  # years are written without a comma
    # Each paper's number, named by the step of the lineage table it stands in.
    q("inception_step_factor", INCEPTION_STEP_FACTOR, "d", unit="times fewer", run="batch norm")
    q("rms_speedup_low", RMS_SPEEDUP[0], ".0%", run="RMS norm")
    q("rms_speedup_high", RMS_SPEEDUP[1], ".0%", run="RMS norm")
    years = [g[1] for g in GENERATIONS]
    section.claim("the generations are in order of year", years == sorted(years), key="generations-in-order-of-year")
    return {}


def draw(section, results):
    t = section.text

    def timeline_figure():
        fig = new_figure(
            8.4,
            3.9 + (1.1 if on_phone() else 0.0),  # on a phone: a generation to a row, down the page
            margins=(0.2, 0.45, 0.2, 0.1),
            suptitle="Five generations, each changing what is normalised, or where",
        )
        ax = fig.add_subplot()
        colours = [PALETTE[c] for c in ("blue", "orange", "green", "red", "purple")]
        if on_phone():
            _timeline_down_the_page(ax, colours, t)
            return fig
        first, last = GENERATIONS[0][1], GENERATIONS[-1][1]
        ax.axhline(0, color=PALETTE["ink"], linewidth=1.2)
        # Two generations share 2019: their dots sit exactly at the year, one just
        # above the axis and one just below, so neither reads as another year.
        shared = {year for year in (g[1] for g in GENERATIONS) if [g[1] for g in GENERATIONS].count(year) > 1}
        for (name, year, step, change, row), colour in zip(GENERATIONS, colours):
            x = year
            sign = 1 if row > 0 else -1
            ax.plot([x], [0.06 * sign if year in shared else 0], "o", color=colour, markersize=9, zorder=3)
            ax.plot([x, x], [0, 0.42 * row], color=colour, linewidth=1.2)
            va = "bottom" if row > 0 else "top"
            ax.text(
                x,
                0.42 * row + 0.04 * sign,
                f"{step}, {t('year_' + name)}",
                ha="center",
                va=va,
                fontsize=10,
                fontweight="bold",
                color=colour,
            )
            ax.text(x, 0.42 * row + 0.24 * sign, change, ha="center", va=va, fontsize=9, color=PALETTE["ink"])
        ax.set_xlim(first - 0.8, last + 0.8)
        ax.set_ylim(-1.3, 1.95)
        ax.set_xticks(range(first, last + 1))  # tick labels: the time axis, not quoted results
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        ax.spines["bottom"].set_position(("data", -1.3))
        ax.set_xlabel("year of the paper this page cites for it")
        return fig

    section.save_figure(timeline_figure, "timeline")


def _timeline_down_the_page(ax, colours, t) -> None:
    """The timeline on a phone: the generations one under another, in order
    of year, each with its year and what it changed beside its dot."""
    n = len(GENERATIONS)
    ax.plot([0.03, 0.03], [0, n - 1], color=PALETTE["ink"], linewidth=1.2)
    for i, ((name, _, step, change, _), colour) in enumerate(zip(GENERATIONS, colours)):
        ax.plot([0.03], [i], "o", color=colour, markersize=9, zorder=3)
        ax.text(
            0.09,
            i - 0.12,
            f"{step}, {t('year_' + name)}",
            ha="left",
            va="center",
            fontsize=10,
            fontweight="bold",
            color=colour,
        )
        ax.text(0.09, i + 0.08, change.replace("\n", " "), ha="left", va="top", fontsize=9, color=PALETTE["ink"])
    ax.set_xlim(0, 1)
    ax.set_ylim(n - 0.45, -0.45)
    ax.axis("off")


if __name__ == "__main__":
    main(__name__)
