"""Figures: regenerated SVGs hash to the golden record's pins (so a
figure-only change is caught even after `make figures` rewrote the committed
file), the committed SVGs too, and every number drawn in a figure (tick
labels aside) is the text of a registered quote."""

from __future__ import annotations

import hashlib
import io
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import cairosvg
import pytest
from matplotlib.testing.compare import compare_images

from pagekit.check_page import normalise, numbers_in
from pagekit import preview_figures
from pagekit import cli, style
from conftest import REPO_ROOT, TEST_ARTIFACTS, skip_bit_level
from pagekit.golden import sha256
from svg_text import contrast_on_white, drawn_text_styles, drawn_texts, write_probe_svg

ACCEPT = "if intended, look at it (`make preview`), then `make golden`"
ARTIFACTS_DIR = TEST_ARTIFACTS  # where a figure mismatch leaves its pictures


def visual_diff(committed: Path, fresh: Path, page: str, labels=("committed", "new")) -> str:
    """Render the committed and the fresh SVG to PNG (cairosvg, as `make
    preview` does) and their difference (matplotlib's compare_images) under
    ARTIFACTS_DIR/<page>/; the message names the three files."""
    out = ARTIFACTS_DIR / page
    out.mkdir(parents=True, exist_ok=True)
    expected, actual = out / f"{fresh.stem}-{labels[0]}.png", out / f"{fresh.stem}-{labels[1]}.png"
    preview_figures.render(committed, expected, cairosvg)
    preview_figures.render(fresh, actual, cairosvg)
    try:
        result = compare_images(str(expected), str(actual), tol=0, in_decorator=True)
    except Exception as error:
        return f"{labels[0]} {rel(expected)}, {labels[1]} {rel(actual)} (no difference image: {error})"
    if result is None:
        return f"{labels[0]} {rel(expected)}, {labels[1]} {rel(actual)} (the renderings are identical: only the SVG text differs)"
    return (
        f"{labels[0]} {rel(expected)}, {labels[1]} {rel(actual)}, difference {rel(Path(result['diff']))} "
        f"(RMS {result['rms']:.2f})"
    )


def pinned_version(path: Path, pinned_hash: str) -> Path | None:
    """The version of a committed figure the golden record pinned, from git's
    HEAD when it is that version (None: not a git checkout, or HEAD differs)."""
    done = subprocess.run(
        ["git", "show", f"HEAD:{path.relative_to(REPO_ROOT)}"],
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=30,
        check=False,
    )
    if done.returncode != 0 or hashlib.sha256(done.stdout).hexdigest() != pinned_hash:
        return None
    copy = Path(tempfile.mkdtemp(prefix="pinned-figure-")) / path.name
    copy.write_bytes(done.stdout)
    return copy


def rel(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def test_figures_match_their_golden_hashes(run):
    record, pinned, committed = run.get(), run.golden.get("figures", {}), run.committed
    # A section draws figures unless its module says why it draws none (NO_FIGURES).
    no_figures = getattr(cli.section_module(run.package, run.name), "NO_FIGURES", None)
    if no_figures:
        assert not record["figures"], f"{run.name} says it draws no figure ({no_figures}) but drew some"
    else:
        assert record["figures"], f"{run.name} draws no figures"
    assert set(committed["figures"]) == set(pinned), f"{run.name} draws other figures than pinned; {ACCEPT}"
    for name in committed["figures"]:
        path = run.committed_dir / name
        assert path.exists(), f"{path.relative_to(REPO_ROOT)} is not committed: run `make figures`"
        if sha256(path) != pinned[name]:
            pinned_svg = pinned_version(path, pinned[name])
            pictures = (
                visual_diff(pinned_svg, path, run.config.PAGE, ("pinned", "committed"))
                if pinned_svg
                else "(git's HEAD holds no copy of the pinned version to draw)"
            )
            raise AssertionError(f"{name}: the committed file differs from the golden record; {ACCEPT}\n  {pictures}")
    if run.reduced:  # a reduced run draws other numbers; the full run's files are pinned above
        return
    assert record["figures"] == committed["figures"]
    skip_bit_level()  # the committed files' hashes hold anywhere; a fresh run's bytes need the pin
    for name in record["figures"]:
        fresh = run.out_dir / name
        if sha256(fresh) != pinned[name]:
            pictures = visual_diff(run.committed_dir / name, fresh, run.config.PAGE)
            raise AssertionError(f"{name}: a fresh run draws it differently; {ACCEPT}\n  {pictures}")


def test_no_stray_committed_figures(regenerated):
    """Every committed SVG is one a section still draws."""
    drawn = {(r.committed_dir, name) for r in regenerated.values() for name in r.committed.get("figures", [])}
    for committed_dir in {r.committed_dir for r in regenerated.values()}:
        for svg in committed_dir.glob("*.svg"):
            assert (committed_dir, svg.name) in drawn, f"{svg.relative_to(REPO_ROOT)} is drawn by no section"


def test_every_drawn_number_is_a_quote(run):
    record = run.get()
    texts = set()
    for q in record["quotes"].values():
        texts.update(normalise(t) for t in (q["text"] if isinstance(q["text"], list) else [q["text"]]))
    for name in record["figures"]:
        for text in drawn_texts(run.out_dir / name):
            strays = [m.group() for m in numbers_in(text) if normalise(m.group()) not in texts]
            assert not strays, f"{name}: {strays} in {text!r} are not registered quotes"


def test_drawn_texts_reader_sees_numbers_and_skips_ticks(tmp_path):
    """The reader must find annotation numbers and ignore tick labels, or the
    test above could pass vacuously."""
    texts = drawn_texts(write_probe_svg(tmp_path / "probe.svg", "peak 0.4773"))
    assert "peak 0.4773" in texts
    assert not any(t in ("0", "7", "0.0", "1.0") for t in texts)


def test_a_changed_figure_leaves_its_pictures(tmp_path, monkeypatch):
    """The mismatch message names a rendering of each version and their
    difference image, all written (so the figure test's failure shows a picture)."""
    monkeypatch.setattr(sys.modules[__name__], "ARTIFACTS_DIR", tmp_path / "artifacts")
    from pagekit.section import new_figure

    svgs = []
    for colour in ("#1f77b4", "#d62728"):
        fig = new_figure(3, 2)
        fig.add_subplot().plot([0, 1], [0, 1], color=colour, linewidth=4)
        svgs.append(tmp_path / colour[1:] / "probe.svg")
        svgs[-1].parent.mkdir()
        fig.savefig(svgs[-1], format="svg", metadata={"Date": None})
    message = visual_diff(svgs[0], svgs[1], "some-page")
    out = tmp_path / "artifacts" / "some-page"
    for png in ("probe-committed.png", "probe-new.png", "probe-new-failed-diff.png"):
        assert (out / png).stat().st_size > 0 and str(out / png) in message, message
    assert "RMS" in message


# Small text needs 4.5:1 against its background (WCAG 2, level AA).
SMALL_TEXT_CONTRAST = 4.5


def test_text_palette_is_dark_enough_and_keeps_each_hue():
    """Every text shade reads on white, and is a darker shade of the same
    colour (hue within 1 degree), so a label still matches its line."""
    import colorsys

    for name, shade in style.TEXT_PALETTE.items():
        assert contrast_on_white(shade) >= SMALL_TEXT_CONTRAST, (
            f"{name}: text shade {shade} has contrast {contrast_on_white(shade):.2f} on white"
        )
        line, text = (
            colorsys.rgb_to_hls(*(int(c[i : i + 2], 16) / 255 for i in (1, 3, 5))) for c in (style.PALETTE[name], shade)
        )
        if line[2] > 0:  # a grey has no hue
            gap = abs(line[0] - text[0]) * 360
            assert min(gap, 360 - gap) <= 1.0, f"{name}: text shade {shade} changes the hue by {gap:.1f}°"
        assert text[1] <= line[1], f"{name}: text shade {shade} is lighter than the line colour"
    assert style.text_colour(style.PALETTE["orange"]) == style.TEXT_PALETTE["orange"]
    assert style.text_colour("#123456") == "#123456"


def test_committed_figures_draw_no_small_or_faint_text():
    """No committed figure draws text below the house minimum, and none on
    white in a colour lighter than 4.5:1 (white text sits on a fill)."""
    svgs = sorted((REPO_ROOT / "figures").glob("*/*.svg"))
    assert svgs
    problems = []
    for svg in svgs:
        styles = drawn_text_styles(svg)
        assert styles, f"{svg.name}: no text found; has the SVG text format changed?"
        small = sorted({size for size, _ in styles if size < style.SMALLEST_TEXT_PT - 1e-9})
        faint = sorted(
            {fill for _, fill in styles if fill != "#ffffff" and contrast_on_white(fill) < SMALL_TEXT_CONTRAST}
        )
        if small:
            problems.append(f"{svg.name}: text at {small} pt")
        if faint:
            problems.append(
                f"{svg.name}: text in {faint} ({', '.join(f'{contrast_on_white(f):.2f}:1' for f in faint)})"
            )
    assert not problems, "regenerate with `make figures`:\n" + "\n".join(problems)


# Page weight (site review round 3, L12: page 1's 26 SVGs weighed 2.0 MB, one
# of them 299 kB). Drawn with their glyphs as paths, the figures weigh 47 to
# 112 kB, median 69 kB; the heaviest, Adam's excess over 10,000 steps, drew
# its lines through every step (306,627 bytes) and, thinned to what its axes
# can show, weighs 151,221 bytes. A figure above the budget draws far more
# points than it can show: thin its lines to the figure's resolution (as
# unit_mismatch.py's `thinned` does), or rasterise its densest layer. 160 KiB
# (163,840 bytes): the thinned figure with 8 % to spare, about half the one
# that prompted the budget.
SVG_BUDGET_BYTES = 160 * 1024


def test_committed_figures_stay_within_the_size_budget():
    svgs = sorted((REPO_ROOT / "figures").glob("*/*.svg"))  # a notebook's runs write theirs deeper
    assert svgs
    heavy = [
        f"{svg.relative_to(REPO_ROOT)}: {svg.stat().st_size:,} bytes"
        for svg in svgs
        if svg.stat().st_size > SVG_BUDGET_BYTES
    ]
    assert not heavy, f"figures over the {SVG_BUDGET_BYTES:,}-byte budget (see SVG_BUDGET_BYTES):\n" + "\n".join(heavy)


def test_the_saver_raises_small_sizes_and_darkens_light_colours(tmp_path):
    """A label a script draws at 8 pt in the palette's orange is saved at the
    house minimum in orange's text shade."""
    fig = style.new_figure(4.0, 2.0, margins=(0.5, 0.4, 0.1, 0.1))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color=style.PALETTE["orange"])
    ax.text(0.2, 0.5, "label", fontsize=8, color=style.PALETTE["orange"])
    style.make_text_legible(fig)
    path = tmp_path / "figure.svg"
    fig.savefig(path, format="svg")
    styles = drawn_text_styles(path)
    assert (style.SMALLEST_TEXT_PT, style.TEXT_PALETTE["orange"].lower()) in styles
    assert all(size >= style.SMALLEST_TEXT_PT for size, _ in styles)
    assert ax.lines[0].get_color() == style.PALETTE["orange"]  # lines keep their colour


# --- the phone rendering (site review round 3, M2) ------------------------------


def test_the_saver_draws_a_phone_rendering_with_stacked_panels(tmp_path):
    """save_figure calls the drawing function twice: the page rendering as
    drawn, and one inside phone_layout, PHONE_WIDTH inches wide with a row
    of panels stacked into a column, each panel keeping its page height."""
    from pagekit.record import Section

    section = Section(page="probe", name="probe", echo=False, out_dir=tmp_path)

    def two_panels():
        fig = style.new_figure(8.4, 3.0, margins=(0.6, 0.5, 0.1, 0.3), grid=(1, 2), wspace=0.5)
        left, right = fig.subplots(1, 2)
        left.plot([0, 1], [0, 1], label="rising")
        right.plot([0, 1], [1, 0], label="falling")
        left.set_title("A title long enough to need two lines on a phone's narrow column", loc="left")
        left.legend()
        return fig

    section.save_figure(two_panels, "panels")
    assert section.figures == ["probe_panels.svg", "probe_panels.phone.svg"]
    page, phone = (drawn_size(tmp_path / name) for name in section.figures)
    assert page[0] == pytest.approx(8.4 * 72) and phone[0] == pytest.approx(style.PHONE_WIDTH * 72)
    assert phone[1] > 1.8 * page[1], "the two panels stand one under the other on the phone"
    labels = section.figure_labels["probe_panels.svg"]
    assert [s["label"] for p in labels for s in p["series"]] == ["rising", "falling"]
    with pytest.raises(TypeError, match="takes the function that draws the figure"):
        section.save_figure(two_panels(), "again")


def test_phone_layout_maps_a_page_grid_column_by_column():
    with style.phone_layout():
        fig = style.new_figure(8.4, 3.0, margins=(0.6, 0.5, 0.1, 0.3), grid=(1, 3))
        axes = fig.subplots(1, 3)
        tops = [ax.get_position().y1 for ax in axes]
        assert tops[0] > tops[1] > tops[2], "the first panel stands on top"
        assert style.on_phone()
    assert not style.on_phone()


def test_wrap_to_width_breaks_only_at_spaces_and_keeps_every_word():
    text = "one two three four five six seven eight nine ten eleven twelve"
    wrapped = style.wrap_to_width(text, 1.2)
    assert wrapped.replace("\n", " ") == text and wrapped.count("\n") >= 2
    assert all(style.text_width_in(line, style.SMALLEST_TEXT_PT) <= 1.2 for line in wrapped.split("\n"))


def test_cells_wrap_into_even_lines_on_a_phone():
    with style.phone_layout():
        fig, ax = style.new_cell_figure(8.4, 2.0)
        tops = style.draw_cell_rows(ax, [("row", [f"−{i}.2345" for i in range(15)])])
        lines = sorted({round(t.get_position()[1] - 0.4, 6) for t in ax.texts if t.get_text().startswith("−")})
    assert len(lines) == 3 and tops == [0.6], lines  # 15 cells: three lines of five, not 7 + 7 + 1
    assert fig.get_figwidth() == pytest.approx(style.PHONE_WIDTH)


def test_texts_drawn_over_each_other_are_a_problem():
    from pagekit.figure_bounds import check_texts_apart, drawn_renderer

    fig = style.new_figure(4.0, 2.0, margins=(0.5, 0.4, 0.1, 0.1))
    ax = fig.add_subplot()
    ax.axis("off")  # (no tick labels: only the three texts)
    ax.text(0.5, 0.5, "first label")
    ax.text(0.52, 0.5, "second label")
    ax.text(0.1, 0.1, "apart")
    with drawn_renderer(fig) as drawn:
        fig.savefig(io.BytesIO(), format="svg")
    problems = check_texts_apart(fig, renderer=drawn[-1])
    assert len(problems) == 1 and "'first label' and text 'second label' overlap" in problems[0], problems


def drawn_size(path):
    """An SVG's width and height in points."""
    head = path.read_text(encoding="utf-8")[:600]
    width, height = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', head).groups()
    return float(width), float(height)
