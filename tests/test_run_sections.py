"""The runner behind `make figures`: staleness by content, what it must import
before a section can fork, and one broken section failing alone."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pagekit import run_sections
from pagekit.executor import Job
from pagekit import inputs as section_inputs
from pagekit.registry import PageNameError, page_config
from pagekit.run_sections import NEEDS_NOTHING, NEEDS_OPTIMISER, NEEDS_TORCH, SectionScript


def scripts() -> dict[str, SectionScript]:
    return {s.name: s for s in run_sections.all_sections()}


def test_needs_are_read_from_code_not_comments():
    found = {name: run_sections.needs(s) for name, s in scripts().items()}
    assert found["unit_mismatch"] == NEEDS_NOTHING
    # batch_dependence imports section 2's module, so it needs what that needs.
    assert found["batch_dependence"] == found["norm_worked_vector"]
    # Their docstrings and comments name torch.optim.Adam; their code calls
    # torch.optim.adam.adam, which needs no Optimizer object (nor its compiler).
    assert found["residual_placement"] == NEEDS_TORCH
    assert found["loss_spike_replay"] == NEEDS_TORCH
    # An `import torch` at the top of a module counts as much as import_torch().
    assert found["loss_smoothness"] == NEEDS_TORCH
    assert found["lineage"] == NEEDS_NOTHING
    assert found["norm_placement"] == NEEDS_OPTIMISER  # builds torch.optim.AdamW


def test_inputs_follow_imports_and_the_shared_machinery():
    inputs = section_inputs.section_inputs("normalisation_and_stability", "batch_dependence")
    names = {p.name for p in inputs}
    # batch_dependence imports section 2's grid: a change there makes it stale.
    assert {"batch_dependence.py", "norm_worked_vector.py", "record.py", "numeric_env.py", "__init__.py"} <= names
    assert "unit_mismatch.py" not in names


def test_staleness_is_by_content_not_time(tmp_path, monkeypatch):
    section = scripts()["batch_dependence"]
    numbers = tmp_path / "batch_dependence.json"
    monkeypatch.setattr(SectionScript, "numbers_path", property(lambda self: numbers))
    assert run_sections.stale_reason(section) == "no numbers yet"
    numbers.write_text(json.dumps({"inputs_hash": run_sections.current_hash(section)}))
    assert run_sections.stale_reason(section) is None
    numbers.touch()  # a newer or older file time changes nothing
    assert run_sections.stale_reason(section) is None
    numbers.write_text(json.dumps({"inputs_hash": "0" * 64}))
    assert run_sections.stale_reason(section) == "inputs changed"


def test_the_numeric_environment_is_part_of_the_hash():
    section = scripts()["unit_mismatch"]
    pinned = section_inputs.inputs_hash(section.package, section.name, "pinned")
    other = section_inputs.inputs_hash(section.package, section.name, "openblas-sandybridge")
    assert pinned != other


def test_unknown_page_names_are_refused_without_importing_them():
    with pytest.raises(PageNameError, match="no page package named 'os'"):
        page_config("os")
    done = subprocess.run(
        [sys.executable, "-m", "pagekit.run_sections", "--page", "os"], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stderr.startswith("error: no page named 'os'")


def test_a_broken_section_fails_alone(tmp_path, monkeypatch):
    """A syntax error in one section is reported with its file and line; the
    other sections still run."""
    package = "normalisation_and_stability"
    broken = SectionScript(package, "broken_probe")
    # The broken script lives in a scratch folder that the page package also
    # searches (the forked workers inherit it): the source tree stays untouched.
    scratch = tmp_path / "package"
    scratch.mkdir()
    (scratch / "broken_probe.py").write_text("def compute(section):\n    return (\n", encoding="utf-8")
    page_package = page_config(package)
    monkeypatch.setattr(page_package, "__path__", [*page_package.__path__, str(scratch)])
    jobs = [
        Job(broken, figures=False, out_dir=str(tmp_path), write=False),
        Job(scripts()["norm_worked_vector"], figures=False, out_dir=str(tmp_path), write=False),
    ]
    results = run_sections.run_many(jobs, cores=2)
    assert not results[0]["ok"] and "broken_probe.py:2" in results[0]["error"]
    assert results[1]["ok"], results[1]["error"]
