"""Each page's notebook is current, valid, and runs to the pinned numbers.

- The committed notebook (figures/<page>/<page>.ipynb) is byte for byte what
  docs/diagrams/notebooks.py builds now from the scripts, the committed
  numbers and the golden record: a script edited without `make notebooks`
  fails here. It is a valid nbformat 4 notebook whose first code cell holds
  the setting, every module cell is the repository file it names, every
  section runs once in the page's order, and every experiment states a
  measured time.
- The page links the notebook above its first section and in every section
  where an experiment first runs.
- Executed top to bottom with nbclient in a temporary directory (slow):
  each page in its quick setting, every number it prints equal to the
  golden record's pinned reduced run (the full run's for a section without a
  reduced configuration). Timings (measured quotes) are not compared.
  The sections' numbers and figures the runs leave there serve the session
  as its reduced runs (conftest's ``regenerated``): the golden-number and
  figure tests check them, so no section is computed twice.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from pagekit import executor, notebooks
from conftest import PIN_HOLDS, REPO_ROOT, page_ids
from pagekit.paths import golden_dir
from pagekit.registry import page_config, page_packages

PACKAGES = page_packages()
RUN_CELL = re.compile(r"^(\w+) = experiment\('(\w+)', '(\w+)', SETTING\)$")
# Every page's notebook runs in its quick setting under make test (one
# setting for all, so a new page needs no entry here).
SETTING_UNDER_TEST = "quick"


@pytest.mark.parametrize("package", PACKAGES, ids=page_ids(PACKAGES))
def test_notebook_is_current(package):
    path = notebooks.notebook_path(package)
    assert path.exists(), f"{path.relative_to(REPO_ROOT)} is missing: run `make notebooks`"
    assert path.read_text(encoding="utf-8") == notebooks.notebook_text(package), (
        f"{path.relative_to(REPO_ROOT)} is stale (its scripts, numbers or golden record changed): run `make notebooks`"
    )


@pytest.mark.parametrize("package", PACKAGES, ids=page_ids(PACKAGES))
def test_notebook_is_valid_and_holds_the_repository_code(package):
    notebook = nbformat.read(notebooks.notebook_path(package), as_version=4)
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert code[0].source.count(notebooks.SETTING_LINE) == 1, "the first code cell must hold the setting"
    prefix = f"%%writefile {notebooks.code_dir_name(package)}/"
    written = {}
    for cell in code:
        first, _, body = cell.source.partition("\n")
        if first.startswith(prefix):
            written[first[len(prefix) :]] = body
    for relative, body in written.items():
        source = REPO_ROOT / relative
        if source.exists():
            assert body == source.read_text(encoding="utf-8"), f"the cell writing {relative} is not its file"
    scripts = [s for _, s in notebooks.sections_in_page_order(package)]
    for script in scripts:
        assert f"docs/diagrams/{package}/{script}.py" in written, f"{script}.py has no cell"
    runs = [RUN_CELL.match(c.source).group(3) for c in code if RUN_CELL.match(c.source)]
    assert runs == scripts, "the notebook must run every section once, in the page's order"
    untimed = [
        c.source.splitlines()[0] for c in notebook.cells if c.cell_type == "markdown" and "not measured yet" in c.source
    ]
    assert not untimed, f"experiments without a measured time (run `make notebook-times`): {untimed}"


def printed_tables(notebook) -> dict[str, dict[str, str]]:
    """{section: {quote: text this run printed}} from each run cell's table."""
    tables = {}
    for cell in notebook.cells:
        match = RUN_CELL.match(cell.source) if cell.cell_type == "code" else None
        if not match:
            continue
        for output in cell.outputs:
            if output.output_type == "error":
                pytest.fail(f"{match.group(3)}: {output.ename}: {output.evalue}", pytrace=False)
        table = next(
            (
                o.data["text/markdown"]
                for o in cell.outputs
                if o.output_type == "display_data" and "text/markdown" in o.data
            ),
            None,
        )
        assert table is not None, f"{match.group(3)} printed no table of its numbers"
        rows = {}
        for line in table.splitlines()[2:]:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = (cells[1], cells[2])
        figures = sum(1 for o in cell.outputs if o.output_type == "display_data" and "image/svg+xml" in o.data)
        tables[match.group(3)] = {"rows": rows, "figures": figures}
    return tables


_RUNS: dict[str, tuple[subprocess.Popen, Path]] = {}  # package: (its run, its working directory)
_FINISHED: dict[str, tuple[int, str]] = {}  # package: (exit status, the end of its log)


def start_executing() -> None:
    """Start executing every page's notebook, each in a child process (its
    own kernel), so both cores work on them; conftest calls this as soon as
    the tests are collected, so the notebooks run beside the other tests.
    Each runs in a working directory that is kept to the end of the session:
    the sections' outputs the notebook leaves there are the session's
    reduced runs too (``section_runs``)."""
    if _RUNS:
        return
    scratch = Path(tempfile.mkdtemp(prefix="executed-notebooks-"))
    for package in PACKAGES:
        workdir = scratch / package
        command = [
            sys.executable,
            str(Path(notebooks.__file__)),
            "--page",
            package,
            "--execute",
            SETTING_UNDER_TEST,
            str(scratch / f"{package}.ipynb"),
            "--workdir",
            str(workdir),
        ]
        # A session of its own: stop_executing ends its kernel with it. And it
        # dies with this process (a SIGTERM to the test run skips stop_executing),
        # shutting its kernel down on the way (notebooks.py --execute).
        _RUNS[package] = (
            subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
                preexec_fn=executor.die_with_parent,
            ),
            workdir,
        )


def finished(package: str) -> tuple[int, str]:
    """Wait for a page's notebook run (started if it was not): its exit
    status and the end of its log."""
    start_executing()
    if package not in _FINISHED:
        process, _ = _RUNS[package]
        log, _ = process.communicate(timeout=notebooks.EXECUTE_TIMEOUT)
        _FINISHED[package] = (process.returncode, log[-3000:])
    return _FINISHED[package]


def executed_notebook(package: str) -> Path:
    return _RUNS[package][1].parent / f"{package}.ipynb"


def stop_executing() -> None:
    """Stop the notebooks' runs still going (a session that ended before
    their tests, interrupted or failed fast), kernels included, and remove
    what they wrote."""
    for process, _ in _RUNS.values():
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    for scratch in {workdir.parent for _, workdir in _RUNS.values()}:
        shutil.rmtree(scratch, ignore_errors=True)


def section_runs() -> dict[tuple[str, str], tuple[dict, Path]]:
    """{(package, section): (its numbers record, the folder above its page's
    outputs)} for every section this session's notebook runs made cleanly:
    the quick setting (the tests' reduced configuration of a heavy section,
    the page's own of the others), a committed notebook that is current (so
    its code is the repository's), the section's cell without an error.
    conftest's ``regenerated`` takes these instead of running the sections
    again; a section missing here it runs itself, so a broken one fails
    alone, with its own error."""
    runs = {}
    for package in PACKAGES:
        setting = SETTING_UNDER_TEST
        path = notebooks.notebook_path(package)
        if (
            setting != "quick"
            or not path.exists()
            or path.read_text(encoding="utf-8") != notebooks.notebook_text(package)
        ):
            continue
        status, _ = finished(package)
        output = executed_notebook(package)
        if status != 0 or not output.exists():
            continue  # nbclient stops at a failing cell: the sections run themselves
        out = notebooks.runs_dir(package, setting, _RUNS[package][1])
        numbers = out / page_config(package).PAGE / "numbers"
        for cell in nbformat.read(output, as_version=4).cells:
            match = RUN_CELL.match(cell.source) if cell.cell_type == "code" else None
            if match and not any(o.output_type == "error" for o in cell.outputs):
                record_path = numbers / f"{match.group(3)}.json"
                if record_path.exists():
                    runs[(package, match.group(3))] = (json.loads(record_path.read_text(encoding="utf-8")), out)
    return runs


@pytest.fixture(scope="module")
def executed() -> dict:
    """{package: executed notebook, or the error output of its run}."""
    results = {}
    for package in PACKAGES:
        status, log = finished(package)
        output = executed_notebook(package)
        results[package] = nbformat.read(output, as_version=4) if status == 0 and output.exists() else RuntimeError(log)
    return results


@pytest.mark.slow
@pytest.mark.parametrize("package", PACKAGES, ids=page_ids(PACKAGES))
def test_notebook_runs_and_prints_the_pinned_numbers(executed, package):
    setting, notebook = SETTING_UNDER_TEST, executed[package]
    if isinstance(notebook, Exception):
        pytest.fail(f"{package}'s notebook failed in the {setting} setting: {notebook}", pytrace=False)
    page = page_config(package).PAGE
    tables = printed_tables(notebook)
    assert list(tables) == [s for _, s in notebooks.sections_in_page_order(package)]
    for section, printed in tables.items():
        golden = json.loads((golden_dir(page) / f"{section}.json").read_text(encoding="utf-8"))
        committed = json.loads(
            (REPO_ROOT / "figures" / page / "numbers" / f"{section}.json").read_text(encoding="utf-8")
        )
        heavy = committed.get("heavy")
        if setting == "page" and heavy:
            pytest.fail(f"{section} has a reduced configuration: run this page's notebook in the quick setting")
        pinned = notebooks.flat_texts(golden["reduced"]["quotes"] if heavy else golden["quotes"])
        measured = {name for name, q in committed["quotes"].items() if q.get("measured")}
        rows = {name: texts for name, texts in printed["rows"].items() if name.split("[")[0] not in measured}
        assert set(rows) == set(pinned), (
            f"{section}: the notebook printed {sorted(set(rows) ^ set(pinned))[:5]} unlike the golden record"
        )
        assert printed["figures"] == len(golden["figures"]), f"{section}: not every figure was shown"
        if not PIN_HOLDS:
            continue  # other kernels (no pin, or make doctor's foreign fingerprint): last digits may differ
        wrong = {name: (rows[name][0], text) for name, text in pinned.items() if rows[name][0] != text}
        assert not wrong, f"{section} ({setting}): printed ≠ pinned for {wrong}"


@pytest.mark.parametrize("package", PACKAGES, ids=page_ids(PACKAGES))
def test_page_links_its_notebook_at_the_top_and_at_each_experiment(package):
    """ "Run it yourself" before the first numbered section, and a link in every
    section where one of the page's experiments first runs."""
    config = page_config(package)
    text = (REPO_ROOT / config.PAGE_FILE).read_text(encoding="utf-8")
    link = "](../" + notebooks.notebook_path(package).relative_to(REPO_ROOT).as_posix() + ")"
    parts = re.split(r"^## (\d+)\. .*$", text, flags=re.M)
    intro, sections = parts[0], dict(zip(map(int, parts[1::2]), parts[2::2], strict=True))
    assert "Run it yourself" in intro and link in intro, f"{config.PAGE_FILE}: no notebook link above section 1"
    missing = sorted({n for n, _ in notebooks.sections_in_page_order(package) if link not in sections.get(n, "")})
    assert not missing, f"{config.PAGE_FILE}: sections {missing} run an experiment but do not link the notebook"


def test_only_sections_a_current_notebook_ran_cleanly_stand_in_for_the_reduced_runs(tmp_path, monkeypatch):
    """section_runs takes a section's outputs from a notebook run only when
    the committed notebook is current, its run ended well and the section's
    cell raised nothing; conftest runs every other section itself."""
    package, page = "normalisation_and_stability", "normalisation-and-stability"
    workdir = tmp_path / package
    numbers = notebooks.runs_dir(package, "quick", workdir) / page / "numbers"
    numbers.mkdir(parents=True)
    for section in ("unit_mismatch", "batch_dependence", "mixed_precision"):
        (numbers / f"{section}.json").write_text(json.dumps({"name": section}), encoding="utf-8")
    run_cell = "{0} = experiment('{1}', '{0}', SETTING)"
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(run_cell.format("unit_mismatch", package)),
            nbformat.v4.new_code_cell(
                run_cell.format("batch_dependence", package),
                outputs=[nbformat.v4.new_output("error", ename="ClaimsFailed", evalue="a claim failed", traceback=[])],
            ),
            nbformat.v4.new_code_cell(run_cell.format("norm_worked_vector", package)),  # wrote no numbers
        ]
    )
    nbformat.write(notebook, tmp_path / f"{package}.ipynb")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGES", [package])
    committed = notebooks.notebook_path(package).read_text(encoding="utf-8")
    monkeypatch.setattr(notebooks, "notebook_text", lambda package: committed)  # current (the test of that is above)
    monkeypatch.setitem(_RUNS, package, (None, workdir))
    monkeypatch.setitem(_FINISHED, package, (0, ""))
    assert set(section_runs()) == {(package, "unit_mismatch")}
    assert section_runs()[(package, "unit_mismatch")] == (
        {"name": "unit_mismatch"},
        notebooks.runs_dir(package, "quick", workdir),
    )
    monkeypatch.setitem(_FINISHED, package, (1, "a cell failed"))
    assert section_runs() == {}
    monkeypatch.setitem(_FINISHED, package, (0, ""))
    monkeypatch.setattr(notebooks, "notebook_text", lambda package: "a newer build")
    assert section_runs() == {}, "a stale notebook holds older code: its runs must not stand in"
