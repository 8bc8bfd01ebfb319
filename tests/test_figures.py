"""Figures: regenerated SVGs hash to the golden record's pins (so a
figure-only change is caught even after `make figures` rewrote the committed
file), the committed SVGs too, and every number drawn in a figure (tick
labels aside) is the text of a registered quote."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from check_page import normalise, numbers_in
import section_kit
from conftest import REPO_ROOT, skip_bit_level
from golden_record import sha256

ACCEPT = "if intended, look at it (`make preview`), then `make golden`"


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


def test_figures_match_their_golden_hashes(run):
    record, pinned, committed = run.get(), run.golden.get("figures", {}), run.committed
    # A section draws figures unless its module says why it draws none (NO_FIGURES).
    no_figures = getattr(section_kit.section_module(run.package, run.name), "NO_FIGURES", None)
    if no_figures:
        assert not record["figures"], f"{run.name} says it draws no figure ({no_figures}) but drew some"
    else:
        assert record["figures"], f"{run.name} draws no figures"
    assert set(committed["figures"]) == set(pinned), f"{run.name} draws other figures than pinned; {ACCEPT}"
    for name in committed["figures"]:
        path = run.committed_dir / name
        assert path.exists(), f"{path.relative_to(REPO_ROOT)} is not committed: run `make figures`"
        assert sha256(path) == pinned[name], f"{name}: the committed file differs from the golden record; {ACCEPT}"
    if run.reduced:  # a reduced run draws other numbers; the full run's files are pinned above
        return
    assert record["figures"] == committed["figures"]
    skip_bit_level()  # the committed files' hashes hold anywhere; a fresh run's bytes need the pin
    for name in record["figures"]:
        assert sha256(run.out_dir / name) == pinned[name], f"{name}: a fresh run draws it differently; {ACCEPT}"


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
