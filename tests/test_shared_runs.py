"""Runs shared between sections (pagekit.shared_runs): kept and read only
when the runner asks for it, under a key that changes with everything the
result depends on, and never half-written."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from pagekit import shared_runs  # noqa: E402

CALLS = []


def trained(rate, steps):
    """A stand-in for a training run: records that it ran."""
    CALLS.append((rate, steps))
    return {"losses": [rate * steps, 0.1], "accuracy": None, "correct": [True, False]}


@pytest.fixture
def code(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("WIDTH = 128\n", encoding="utf-8")
    return path


def test_without_the_runner_nothing_is_kept(tmp_path, code, monkeypatch):
    monkeypatch.delenv(shared_runs.SHARED_RUNS_ENV, raising=False)
    CALLS.clear()
    assert shared_runs.shared(trained, (0.1, 4), code=[code]) == trained(0.1, 4)
    assert CALLS == [(0.1, 4), (0.1, 4)]


def test_a_second_section_reads_the_first_ones_run(tmp_path, code, monkeypatch):
    folder = tmp_path / "shared"
    monkeypatch.setenv(shared_runs.SHARED_RUNS_ENV, str(folder))
    CALLS.clear()
    first = shared_runs.shared(trained, (0.1, 4), code=[code])
    again = shared_runs.shared(trained, (0.1, 4), code=[code])
    assert first == again and CALLS == [(0.1, 4)]
    [kept] = folder.glob("*.json")
    assert json.loads(kept.read_text()) == first
    assert not list(folder.glob("*.tmp")), "written atomically: no temporary file is left"


def test_the_key_changes_with_arguments_code_and_threads(tmp_path, code, monkeypatch):
    monkeypatch.setenv(shared_runs.SHARED_RUNS_ENV, str(tmp_path / "shared"))
    key = shared_runs.run_key(trained, (0.1, 4), [code])
    assert shared_runs.run_key(trained, (0.1, 4), [code]) == key
    assert shared_runs.run_key(trained, (0.3, 4), [code]) != key
    code.write_text("WIDTH = 64\n", encoding="utf-8")
    changed = shared_runs.run_key(trained, (0.1, 4), [code])
    assert changed != key
    code.write_text("WIDTH  =  64  # a comment changes nothing\n", encoding="utf-8")
    assert shared_runs.run_key(trained, (0.1, 4), [code]) == changed
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(threads + 1)
        assert shared_runs.run_key(trained, (0.1, 4), [code]) != changed, "a thread count is part of the key"
    finally:
        torch.set_num_threads(threads)


def test_a_broken_entry_is_retrained_not_trusted(tmp_path, code, monkeypatch):
    folder = tmp_path / "shared"
    monkeypatch.setenv(shared_runs.SHARED_RUNS_ENV, str(folder))
    folder.mkdir()
    (folder / f"{shared_runs.run_key(trained, (0.1, 4), [code])}.json").write_text("{half", encoding="utf-8")
    CALLS.clear()
    assert shared_runs.shared(trained, (0.1, 4), code=[code]) == trained(0.1, 4)
    assert CALLS[0] == (0.1, 4)
