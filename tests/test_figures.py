"""Figures regenerate byte-identical to the committed SVGs, and every number
drawn in them (tick labels aside) is the text of a registered quote."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from check_page import normalise, numbers_in
from conftest import REPO_ROOT


def drawn_texts(svg: Path) -> list[str]:
    """The strings matplotlib recorded as comments, outside tick labels."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.parse(svg, parser).getroot()
    texts = []

    def walk(element, in_tick: bool):
        for child in element:
            if child.tag is ET.Comment:
                if not in_tick:
                    texts.append(child.text.strip())
                continue
            tick = in_tick or child.get("id", "").startswith(("xtick_", "ytick_"))
            walk(child, tick)

    walk(root, False)
    return texts


def test_svgs_regenerate_byte_identical(run):
    section = run.get()
    assert section.figures, f"{run.name} draws no figures"
    for name in section.figures:
        committed = run.committed_dir / name
        assert committed.exists(), f"{committed.relative_to(REPO_ROOT)} is not committed: run `make figures`"
        assert committed.read_bytes() == (run.out_dir / name).read_bytes(), f"{name} differs: run `make figures`"


def test_no_stray_committed_figures(regenerated):
    """Every committed SVG is one a section still draws."""
    drawn = {(r.committed_dir, name) for r in regenerated.values() if r.section for name in r.section.figures}
    for committed_dir in {r.committed_dir for r in regenerated.values()}:
        for svg in committed_dir.glob("*.svg"):
            assert (committed_dir, svg.name) in drawn, f"{svg.relative_to(REPO_ROOT)} is drawn by no section"


def test_every_drawn_number_is_a_quote(run):
    section = run.get()
    texts = {normalise(t) for q in section.quotes.values() for _, _, t in q.items()}
    for name in section.figures:
        for text in drawn_texts(run.out_dir / name):
            strays = [m.group() for m in numbers_in(text) if normalise(m.group()) not in texts]
            assert not strays, f"{name}: {strays} in {text!r} are not registered quotes"


def test_drawn_texts_reader_sees_numbers_and_skips_ticks(tmp_path):
    """The reader must find annotation numbers and ignore tick labels, or the
    test above could pass vacuously."""
    from section_kit import new_figure

    fig = new_figure(3, 2)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 7])
    ax.set_title("peak 0.4773")
    path = tmp_path / "probe.svg"
    fig.savefig(path, format="svg", metadata={"Date": None})
    texts = drawn_texts(path)
    assert "peak 0.4773" in texts
    assert not any(t in ("0", "7", "0.0", "1.0") for t in texts)
