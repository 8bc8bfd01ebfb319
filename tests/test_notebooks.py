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
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

import notebooks
import numeric_env
from conftest import GOLDEN_DIR, REPO_ROOT
from page_registry import page_config, page_packages

PACKAGES = page_packages()
RUN_CELL = re.compile(r"^(\w+) = experiment\('(\w+)', '(\w+)', SETTING\)$")
# What each page's notebook runs under make test: the quick setting (a page
# without reduced configurations would run the same sizes in either, and
# could run "page" here to assert its claims too).
SETTING_UNDER_TEST = {"normalisation_and_stability": "quick", "normalisation_layers": "quick"}


@pytest.mark.parametrize("package", PACKAGES)
def test_notebook_is_current(package):
    path = notebooks.notebook_path(package)
    assert path.exists(), f"{path.relative_to(REPO_ROOT)} is missing: run `make notebooks`"
    assert path.read_text(encoding="utf-8") == notebooks.notebook_text(package), (
        f"{path.relative_to(REPO_ROOT)} is stale (its scripts, numbers or golden record changed): "
        "run `make notebooks`")


@pytest.mark.parametrize("package", PACKAGES)
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
            written[first[len(prefix):]] = body
    for relative, body in written.items():
        source = REPO_ROOT / relative
        if source.exists():
            assert body == source.read_text(encoding="utf-8"), f"the cell writing {relative} is not its file"
    scripts = [s for _, s in notebooks.sections_in_page_order(package)]
    for script in scripts:
        assert f"docs/diagrams/{package}/{script}.py" in written, f"{script}.py has no cell"
    runs = [RUN_CELL.match(c.source).group(3) for c in code if RUN_CELL.match(c.source)]
    assert runs == scripts, "the notebook must run every section once, in the page's order"
    untimed = [c.source.splitlines()[0] for c in notebook.cells
               if c.cell_type == "markdown" and "not measured yet" in c.source]
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
        table = next((o.data["text/markdown"] for o in cell.outputs
                      if o.output_type == "display_data" and "text/markdown" in o.data), None)
        assert table is not None, f"{match.group(3)} printed no table of its numbers"
        rows = {}
        for line in table.splitlines()[2:]:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = (cells[1], cells[2])
        figures = sum(1 for o in cell.outputs if o.output_type == "display_data" and "image/svg+xml" in o.data)
        tables[match.group(3)] = {"rows": rows, "figures": figures}
    return tables


_RUNS: dict[str, tuple[subprocess.Popen, Path]] = {}


def start_executing() -> None:
    """Start executing every page's notebook, each in a child process (its
    own kernel), so both cores work on them; conftest calls this as soon as
    the tests are collected, so the notebooks run beside the other tests."""
    if _RUNS:
        return
    scratch = Path(tempfile.mkdtemp(prefix="executed-notebooks-"))
    for package in PACKAGES:
        output = scratch / f"{package}.ipynb"
        command = [sys.executable, str(Path(notebooks.__file__)), "--page", package,
                   "--execute", SETTING_UNDER_TEST[package], str(output)]
        # A session of its own: stop_executing ends its kernel with it.
        _RUNS[package] = (subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                           text=True, start_new_session=True), output)


def stop_executing() -> None:
    """Stop the notebooks' runs still going (a session that ended before
    their tests, interrupted or failed fast), kernels included."""
    for process, output in _RUNS.values():
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        output.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def executed() -> dict:
    """{package: executed notebook, or the error output of its run}."""
    start_executing()
    results = {}
    for package, (process, output) in _RUNS.items():
        log, _ = process.communicate(timeout=notebooks.EXECUTE_TIMEOUT)
        results[package] = (nbformat.read(output, as_version=4) if process.returncode == 0
                            else RuntimeError(log[-3000:]))
        output.unlink(missing_ok=True)
    return results


@pytest.mark.slow
@pytest.mark.parametrize("package", PACKAGES)
def test_notebook_runs_and_prints_the_pinned_numbers(executed, package):
    setting, notebook = SETTING_UNDER_TEST[package], executed[package]
    if isinstance(notebook, Exception):
        pytest.fail(f"{package}'s notebook failed in the {setting} setting: {notebook}", pytrace=False)
    page = page_config(package).PAGE
    tables = printed_tables(notebook)
    assert list(tables) == [s for _, s in notebooks.sections_in_page_order(package)]
    for section, printed in tables.items():
        golden = json.loads((GOLDEN_DIR / page / f"{section}.json").read_text(encoding="utf-8"))
        committed = json.loads((REPO_ROOT / "figures" / page / "numbers" / f"{section}.json")
                               .read_text(encoding="utf-8"))
        heavy = committed.get("heavy")
        if setting == "page" and heavy:
            pytest.fail(f"{section} has a reduced configuration: run this page's notebook in the quick setting")
        pinned = notebooks.flat_texts(golden["reduced"]["quotes"] if heavy else golden["quotes"])
        measured = {name for name, q in committed["quotes"].items() if q.get("measured")}
        rows = {name: texts for name, texts in printed["rows"].items() if name.split("[")[0] not in measured}
        assert set(rows) == set(pinned), (
            f"{section}: the notebook printed {sorted(set(rows) ^ set(pinned))[:5]} unlike the golden record")
        assert printed["figures"] == len(golden["figures"]), f"{section}: not every figure was shown"
        if not numeric_env.can_honour_pin():
            continue  # other kernels: the last digits may differ (the golden tests say so too)
        wrong = {name: (rows[name][0], text) for name, text in pinned.items() if rows[name][0] != text}
        assert not wrong, f"{section} ({setting}): printed ≠ pinned for {wrong}"


@pytest.mark.parametrize("package", PACKAGES)
def test_page_links_its_notebook_at_the_top_and_at_each_experiment(package):
    """"Run it yourself" before the first numbered section, and a link in every
    section where one of the page's experiments first runs."""
    config = page_config(package)
    text = (REPO_ROOT / config.PAGE_FILE).read_text(encoding="utf-8")
    link = "](../" + notebooks.notebook_path(package).relative_to(REPO_ROOT).as_posix() + ")"
    parts = re.split(r"^## (\d+)\. .*$", text, flags=re.M)
    intro, sections = parts[0], dict(zip(map(int, parts[1::2]), parts[2::2], strict=True))
    assert "Run it yourself" in intro and link in intro, f"{config.PAGE_FILE}: no notebook link above section 1"
    missing = sorted({n for n, _ in notebooks.sections_in_page_order(package) if link not in sections.get(n, "")})
    assert not missing, f"{config.PAGE_FILE}: sections {missing} run an experiment but do not link the notebook"
