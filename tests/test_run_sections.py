"""The runner behind `make figures`: what makes a section stale, and what it
must import before a section can fork."""

from __future__ import annotations

import os

import run_sections
from run_sections import NEEDS_NOTHING, NEEDS_OPTIMISER, NEEDS_TORCH, SectionScript


def scripts() -> dict[str, SectionScript]:
    return {s.name: s for s in run_sections.all_sections()}


def test_needs_are_read_from_code_not_comments():
    found = {name: run_sections.needs(s) for name, s in scripts().items()}
    assert found["unit_mismatch"] == NEEDS_NOTHING
    assert found["batch_dependence"] == NEEDS_NOTHING
    assert found["residual_placement"] == NEEDS_TORCH  # its docstring names torch.optim.Adam
    assert found["loss_spike_replay"] == NEEDS_OPTIMISER


def test_a_section_is_stale_when_an_input_is_newer(tmp_path, monkeypatch):
    section = scripts()["batch_dependence"]
    numbers = tmp_path / "batch_dependence.json"
    monkeypatch.setattr(SectionScript, "numbers_path", property(lambda self: numbers))
    assert run_sections.is_stale(section), "no numbers file yet"
    numbers.write_text("{}")
    newest = max(p.stat().st_mtime for p in run_sections.inputs_of(section))
    os.utime(numbers, (newest + 10, newest + 10))
    assert not run_sections.is_stale(section)
    # batch_dependence imports section 2's grid: a change there makes it stale.
    imported = run_sections.DIAGRAMS_DIR / section.package / "norm_worked_vector.py"
    assert imported in run_sections.inputs_of(section)
    os.utime(numbers, (newest - 10, newest - 10))
    assert run_sections.is_stale(section)
