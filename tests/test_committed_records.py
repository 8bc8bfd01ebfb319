"""The committed records agree with each other, for every section, heavy ones
included, rerunning nothing: each committed numbers file (the page's own full
run, the numbers the page quotes) with its golden record (texts exactly,
values within the declared tolerances, claims and their conditions,
agreement decades, the figures it drew); the numbers drawn in each committed
SVG with that section's committed quotes; and page 2's across-seeds table's
seed-0 column with the committed numbers it summarises.

The tests of tests/test_golden_numbers.py compare fresh runs, which for a
heavy section are its reduced configuration; these read only files, so a
hand edit of a committed full-run value, of its golden record or of a drawn
number fails here even where no test reruns the section."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from pagekit.check_page import normalise, numbers_in
from pagekit.paths import golden_dir
from conftest import REPO_ROOT, SECTION_IDS, SECTIONS
from pagekit.golden import differences, pinned_part
from pagekit.registry import page_config
from svg_text import drawn_texts, write_probe_svg

ACCEPT = "a hand edit? restore the file; an intended change: `make figures`, inspect it, then `make golden`"
ACROSS_SEEDS_PAGE = "normalisation_layers"  # the page whose section 10 tabulates every seed
ELEMENT = re.compile(r"^(?P<name>[a-z][a-z0-9_]*)(?:\[(?P<index>\d+)\])?$")


def committed_numbers(script) -> tuple[str, dict]:
    path = REPO_ROOT / "figures" / page_config(script.package).PAGE / "numbers" / f"{script.name}.json"
    if not path.exists():
        pytest.fail(f"{path.relative_to(REPO_ROOT)} is missing: run `make figures`", pytrace=False)
    return str(path.relative_to(REPO_ROOT)), json.loads(path.read_text(encoding="utf-8"))


def golden_record(script) -> tuple[str, dict]:
    path = golden_dir(page_config(script.package).PAGE) / f"{script.name}.json"
    if not path.exists():
        pytest.fail(f"{path.relative_to(REPO_ROOT)} is missing: inspect the numbers, then `make golden`", pytrace=False)
    return str(path.relative_to(REPO_ROOT)), json.loads(path.read_text(encoding="utf-8"))


def record_mismatches(committed: dict, golden: dict) -> list[str]:
    """What differs between a committed numbers record and the full-run part
    of its golden record (golden -> committed), beyond declared tolerances."""
    changes = differences(golden, pinned_part(committed))
    if list(committed["figures"]) != list(golden.get("figures", {})):
        changes.append(f"figures {list(golden.get('figures', {}))} -> {list(committed['figures'])}")
    return changes


@pytest.mark.parametrize("script", SECTIONS, ids=SECTION_IDS)
def test_committed_numbers_equal_their_golden_record(script):
    """The golden record's full-run part (its top level) is what `make golden`
    took from the committed numbers file: any difference beyond the declared
    tolerances is an edit of one of the two since."""
    numbers_path, committed = committed_numbers(script)
    golden_path, golden = golden_record(script)
    changes = record_mismatches(committed, golden)
    assert not changes, (
        f"{numbers_path} differs from {golden_path} (golden -> committed):\n  " + "\n  ".join(changes) + f"\n({ACCEPT})"
    )


def drawn_numbers_not_quoted(svg, texts: set[str]) -> list[str]:
    """Each number drawn in ``svg`` outside its tick labels (the declared
    non-results) that is not one of ``texts``, with the string it is in."""
    return [
        f"{m.group()!r} in {text!r}"
        for text in drawn_texts(svg)
        for m in numbers_in(text)
        if normalise(m.group()) not in texts
    ]


def quote_texts(record: dict) -> set[str]:
    texts = set()
    for q in record["quotes"].values():
        texts.update(normalise(t) for t in (q["text"] if isinstance(q["text"], list) else [q["text"]]))
    return texts


def figure_strays(figures_dir: Path, committed: dict) -> list[str]:
    """Numbers drawn in the committed figures of one numbers record that are
    no quote of it, each with its file."""
    texts = quote_texts(committed)
    strays = []
    for name in committed["figures"]:
        svg = figures_dir / name
        if not svg.exists():
            strays.append(f"{name}: missing (run `make figures`)")
            continue
        strays += [f"{name}: {s}" for s in drawn_numbers_not_quoted(svg, texts)]
    return strays


@pytest.mark.parametrize("script", SECTIONS, ids=SECTION_IDS)
def test_committed_figures_draw_only_committed_quotes(script):
    """Every number a committed SVG draws (titles, labels, annotations,
    legends; tick labels aside) is the text of a quote in that section's
    committed numbers: a figure edited by hand, or drawn from another run
    than the numbers beside it, fails."""
    numbers_path, committed = committed_numbers(script)
    strays = figure_strays(REPO_ROOT / "figures" / committed["page"], committed)
    assert not strays, (
        f"numbers drawn in figures/{committed['page']}/ that are no quote of {numbers_path}:\n  "
        + "\n  ".join(strays)
        + f"\n({ACCEPT})"
    )


def test_the_drawn_numbers_check_finds_an_edited_number(tmp_path):
    """The reader sees an annotation's number, so an edited one is found."""
    svg = write_probe_svg(tmp_path / "probe.svg", "peak 0.4773")
    assert drawn_numbers_not_quoted(svg, {"0.4773"}) == []
    assert drawn_numbers_not_quoted(svg, {"0.4772"}) == ["'0.4773' in 'peak 0.4773'"]


def quote_element(record: dict, element: str) -> tuple[float, str, float, float]:
    """(value, text, rel_tol, abs_tol) of ``name`` or ``name[i]`` in a record."""
    match = ELEMENT.match(element)
    q = record["quotes"][match["name"]]
    if match["index"] is None:
        return q["value"], q["text"], q["rel_tol"], q["abs_tol"]
    i = int(match["index"])
    return q["value"][i], q["text"][i], q["rel_tol"], q["abs_tol"]


def across_seeds_mismatches(table: dict, records: dict[str, dict], rows) -> list[str]:
    """Rows of the across-seeds table whose seed-0 cell is not the committed
    number it stands for, or whose kernel range leaves it out."""
    wrong = []
    for key, _, script, element, *_ in rows:  # (the row label, fifth, is the table's)
        value, text, rel_tol, abs_tol = quote_element(records[script], element)
        cell = table["quotes"][f"{key}_seeds"]
        if cell["text"][0] != text:
            wrong.append(f"{key}_seeds[0]: {cell['text'][0]!r}, but {script}.{element} is {text!r}")
        elif not math.isclose(cell["value"][0], value, rel_tol=rel_tol, abs_tol=abs_tol):
            wrong.append(f"{key}_seeds[0]: value {cell['value'][0]!r}, but {script}.{element} is {value!r}")
        low, high = table["quotes"][f"{key}_kernels"]["value"]
        if not low <= cell["value"][0] <= high:
            wrong.append(f"{key}_kernels: [{low!r}, {high!r}] leaves out the page's run {cell['value'][0]!r}")
    return wrong


def test_across_seeds_seed_zero_column_is_the_committed_numbers():
    """Page 2's section 10 tabulates the robustness report's runs; its seed-0
    column must be the page's own run, the committed numbers the other
    sections quote (a report made before those numbers changed, or a table
    cell edited by hand, fails)."""
    from pagekit.section import section_module

    rows = section_module(ACROSS_SEEDS_PAGE, "across_seeds").ROWS
    scripts = {s.name: s for s in SECTIONS if s.package == ACROSS_SEEDS_PAGE}
    path, table = committed_numbers(scripts["across_seeds"])
    records = {name: committed_numbers(scripts[name])[1] for name in {row[2] for row in rows}}
    wrong = across_seeds_mismatches(table, records, rows)
    assert not wrong, (
        f"{path}: the seed-0 column is not the committed numbers it summarises:\n  "
        + "\n  ".join(wrong)
        + "\n(`make robustness PAGE=normalisation-layers`, then `make figures`)"
    )


def test_the_across_seeds_check_finds_an_edited_cell():
    rows = (("r", 1, "s", "v[1]"),)
    records = {"s": {"quotes": {"v": {"value": [1.0, 2.0], "text": ["1.0", "2.0"], "rel_tol": 1e-9, "abs_tol": 0}}}}
    table = {
        "quotes": {
            "r_seeds": {"value": [2.0, 2.1, 1.9], "text": ["2.0", "2.1", "1.9"]},
            "r_kernels": {"value": [2.0, 2.0], "text": ["2.0", "2.0"]},
        }
    }
    assert across_seeds_mismatches(table, records, rows) == []
    table["quotes"]["r_seeds"]["text"][0] = "2.1"
    assert across_seeds_mismatches(table, records, rows) == ["r_seeds[0]: '2.1', but s.v[1] is '2.0'"]
