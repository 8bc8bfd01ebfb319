"""Each page's notebook is current, holds the page's own code only, and runs as a reader runs it.

- The committed notebook (figures/<page>/<page>.ipynb) is byte for byte what
  pagekit.notebooks builds now from the scripts, the committed numbers and
  the golden record: a script edited without `make notebooks` fails here.
- It is a valid nbformat 4 notebook with no machinery in it: its first code
  cell installs the project's package (and the pinned versions of what the
  pages import), the next holds the setting, and each experiment is one cell,
  ``%%section <package>.<script>`` followed by that script's own code, every
  section once, in the page's order. No cell writes a module or touches the
  module search path.
- The page links the notebook above its first section and in every section
  where an experiment first runs.
- Executed as a reader executes it (slow; tests/notebook_runs.py): in a fresh
  virtual environment made by the notebook's own install cell, each page in
  its quick setting prints every number equal to the golden record's pinned
  reduced run (the full run's for a section without a reduced
  configuration), timings aside; and one tinker per notebook (a changed
  rate, in the page setting) finishes, names the page's statements that
  stopped holding, and a reader's own plot shows; page 1 also runs whole in
  the page setting, every number equal to the page's.
"""

from __future__ import annotations

import ast
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

import notebook_runs
from conftest import PIN_HOLDS, REPO_ROOT, page_ids
from pagekit import executor, notebooks
from pagekit.paths import BUILD_DIR, golden_dir
from pagekit.registry import page_config, page_packages

PACKAGES = page_packages()
SECTION_CELL = re.compile(r"^%%section (\w+)\.(\w+)\n")


@pytest.mark.parametrize("package", PACKAGES, ids=page_ids(PACKAGES))
def test_notebook_is_current(package):
    path = notebooks.notebook_path(package)
    assert path.exists(), f"{path.relative_to(REPO_ROOT)} is missing: run `make notebooks`"
    assert path.read_text(encoding="utf-8") == notebooks.notebook_text(package), (
        f"{path.relative_to(REPO_ROOT)} is stale (its scripts, numbers or golden record changed): run `make notebooks`"
    )


@pytest.mark.parametrize("package", PACKAGES, ids=page_ids(PACKAGES))
def test_notebook_holds_the_pages_code_and_no_machinery(package):
    notebook = nbformat.read(notebooks.notebook_path(package), as_version=4)
    nbformat.validate(notebook)
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    install, setting = code[0], code[1]
    assert "pip" in install and "pagekit" in install, "the first code cell must install the project's package"
    for pin in notebooks.pinned_versions():
        assert f'"{pin}"' in install, f"the install cell does not pin {pin} (requirements.lock)"
    assert setting.count(notebooks.SETTING_LINE) == 1, "the second code cell must hold the setting"
    experiments = [(m.group(1), m.group(2), source) for source in code if (m := SECTION_CELL.match(source))]
    assert [s for _, s, _ in experiments] == [s for _, s in notebooks.sections_in_page_order(package)], (
        "the notebook must run every section once, in the page's order"
    )
    for cell_package, script, source in experiments:
        assert cell_package == package
        assert source == notebooks.section_cell_source(package, script)
        assert source.partition("\n")[2] in (REPO_ROOT / "docs" / "diagrams" / package / f"{script}.py").read_text(
            encoding="utf-8"
        ), f"{script}'s cell is not its script's code"
    machinery = [s.splitlines()[0] for s in code if "%%writefile" in s or touches_search_path(s)]
    assert not machinery, f"cells that write or load machinery: {machinery}"
    untimed = [
        c.source.splitlines()[0] for c in notebook.cells if c.cell_type == "markdown" and "not measured yet" in c.source
    ]
    assert not untimed, f"experiments without a measured time (run `make notebook-times`): {untimed}"


def touches_search_path(source: str) -> bool:
    """Whether code reads or edits the interpreter's module search path (sys's ``path``)."""
    body = "\n".join(line for line in source.splitlines() if not line.startswith("%%"))
    return any(
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
        for node in ast.walk(ast.parse(body))
    )


def test_install_cell_finds_the_clone_or_the_package_file(tmp_path):
    """The install cell installs from the clone around the notebook, from a
    package file beside it, and otherwise says where to get one."""
    source = notebook_runs.install_cell(PACKAGES[0])
    body = source.split("\nif importlib.util.find_spec")[0]  # the definitions, not the install
    found = {}

    def page_code(cwd: Path) -> list[str]:
        namespace: dict = {}
        previous = Path.cwd()
        os.chdir(cwd)
        try:
            exec(body, namespace)
            return namespace["page_code"]()
        finally:
            os.chdir(previous)

    found["clone"] = page_code(REPO_ROOT / "figures")
    assert found["clone"] == ["-e", str(REPO_ROOT)]
    (tmp_path / "pagekit-0.1.0-py3-none-any.whl").write_bytes(b"")
    assert page_code(tmp_path) == [str(tmp_path / "pagekit-0.1.0-py3-none-any.whl")]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="pagekit-<version>-py3-none-any.whl"):
        page_code(empty)


def printed_tables(notebook) -> dict[str, dict]:
    """{section: {"rows": {quote: (this run, expected)}, "figures": n, "text": printed}} from each experiment cell."""
    tables = {}
    for cell in notebook.cells:
        match = SECTION_CELL.match(cell.source) if cell.cell_type == "code" else None
        if not match:
            continue
        for output in cell.outputs:
            if output.output_type == "error":
                pytest.fail(f"{match.group(2)}: {output.ename}: {output.evalue}", pytrace=False)
        table = next(
            (
                o.data["text/markdown"]
                for o in cell.outputs
                if o.output_type == "display_data" and "text/markdown" in o.data
            ),
            None,
        )
        assert table is not None, f"{match.group(2)} printed no table of its numbers"
        rows = {}
        for line in table.splitlines()[2:]:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = (cells[1], cells[2])
        figures = sum(1 for o in cell.outputs if o.output_type == "display_data" and "image/svg+xml" in o.data)
        text = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
        tables[match.group(2)] = {"rows": rows, "figures": figures, "text": text}
    return tables


_RUN: dict = {}  # "process": the run of tests/notebook_runs.py, "scratch": its folder, "log": its output

# The runs' own budget, for whichever test waits for them first: they start
# at collection and work beside the suite's other tests. Alone on 2 cores
# they take about 135 s (about 205 CPU-s; tests/notebook_runs.py logs each
# step); beside the suite, on one core or less, 150 to 180 s here: the slow
# tests' 240 s was too short on a CI machine. A hang still ends here, naming the test.
NOTEBOOK_RUNS_TIMEOUT = 480


def start_executing() -> None:
    """Start tests/notebook_runs.py in a child process (its own session, so
    stop_executing ends its kernels with it; it dies with this process).
    conftest calls this as soon as the tests are collected, so the runs go on
    beside the other tests. Its folder is inside the clone (the install cell
    installs the clone around the notebook) and is removed at the end."""
    if _RUN:
        return
    BUILD_DIR.mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="notebook-runs-", dir=BUILD_DIR))
    _RUN["scratch"] = scratch
    _RUN["process"] = subprocess.Popen(
        [sys.executable, str(Path(notebook_runs.__file__)), str(scratch)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=executor.die_with_parent,
    )


def finished() -> dict:
    """Wait for the runs (started if they were not): {run: exit status}, or
    an error holding the end of the log."""
    start_executing()
    if "status" not in _RUN:
        log, _ = _RUN["process"].communicate(timeout=notebooks.EXECUTE_TIMEOUT)
        _RUN["log"] = log[-4000:]
        path = _RUN["scratch"] / "status.json"
        _RUN["status"] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    if _RUN["status"] is None:
        pytest.fail(f"the notebooks could not be run as a reader runs them:\n{_RUN['log']}", pytrace=False)
    return _RUN["status"]


def executed_notebook(run: str) -> nbformat.NotebookNode:
    status = finished()
    package = run.removesuffix("-tinker").removesuffix("-page")
    path = _RUN["scratch"] / run / f"{page_config(package).PAGE}-ran.ipynb"
    if status.get(run) != 0 or not path.exists():
        pytest.fail(f"{run}: jupyter execute failed:\n{_RUN['log']}", pytrace=False)
    return nbformat.read(path, as_version=4)


def stop_executing() -> None:
    """Stop the runs still going (a session that ended before their tests),
    kernels included, and remove what they wrote."""
    process = _RUN.get("process")
    if process is not None and process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    if "scratch" in _RUN:
        shutil.rmtree(_RUN["scratch"], ignore_errors=True)


@pytest.mark.slow
@pytest.mark.timeout(NOTEBOOK_RUNS_TIMEOUT)
@pytest.mark.parametrize("package", PACKAGES, ids=page_ids(PACKAGES))
def test_notebook_runs_and_prints_the_pinned_numbers(package):
    notebook = executed_notebook(package)
    page = page_config(package).PAGE
    tables = printed_tables(notebook)
    assert list(tables) == [s for _, s in notebooks.sections_in_page_order(package)]
    for section, printed in tables.items():
        golden = json.loads((golden_dir(page) / f"{section}.json").read_text(encoding="utf-8"))
        committed = json.loads(
            (REPO_ROOT / "figures" / page / "numbers" / f"{section}.json").read_text(encoding="utf-8")
        )
        heavy = committed.get("heavy")
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
        assert not wrong, f"{section} (quick): printed ≠ pinned for {wrong}"


@pytest.mark.slow
@pytest.mark.timeout(NOTEBOOK_RUNS_TIMEOUT)
@pytest.mark.parametrize("package", notebook_runs.PAGE_SETTING, ids=page_ids(notebook_runs.PAGE_SETTING))
def test_notebook_in_the_page_setting_prints_the_pages_numbers(package):
    """Run whole in the page's own configuration, the notebook prints every
    number the page's committed record holds, equal where the pin holds, and
    every experiment's statements hold (a failing one would be an error)."""
    notebook = executed_notebook(f"{package}-page")
    page = page_config(package).PAGE
    for section, printed in printed_tables(notebook).items():
        committed = json.loads(
            (REPO_ROOT / "figures" / page / "numbers" / f"{section}.json").read_text(encoding="utf-8")
        )
        expected = {
            name: text
            for name, text in notebooks.flat_texts(committed["quotes"]).items()
            if not committed["quotes"][name.split("[")[0]].get("measured")
        }
        rows = {name: texts[0] for name, texts in printed["rows"].items() if name in expected}
        assert set(rows) == set(expected), f"{section}: printed {sorted(set(rows) ^ set(expected))[:5]} unlike the page"
        assert "statement does not hold" not in printed["text"], printed["text"]
        if PIN_HOLDS:
            wrong = {name: (rows[name], text) for name, text in expected.items() if rows[name] != text}
            assert not wrong, f"{section} (page setting): printed ≠ the page for {wrong}"


@pytest.mark.slow
@pytest.mark.timeout(NOTEBOOK_RUNS_TIMEOUT)
@pytest.mark.parametrize("package", sorted(notebook_runs.TINKERS), ids=page_ids(sorted(notebook_runs.TINKERS)))
def test_a_changed_rate_finishes_and_names_the_statements_that_stopped_holding(package):
    """A reader's changed experiment raises nothing, shows its numbers and
    figures, and names each of the page's statements that no longer holds;
    the reader's own plot shows (the kernel's display backend is left alone)."""
    script = notebook_runs.TINKERS[package][0]
    notebook = executed_notebook(f"{package}-tinker")
    printed = printed_tables(notebook)[script]
    assert "your changes" in printed["text"], "the run does not say it is the reader's configuration"
    stopped = re.findall(r"the page's statement does not hold for your settings: (.+)", printed["text"])
    assert stopped, f"no statement named as no longer holding:\n{printed['text']}"
    assert printed["figures"] > 0 and printed["rows"], "the changed run showed no numbers or no figure"
    own_plot = notebook.cells[-1]
    assert any(o.output_type == "display_data" and "image/png" in o.data for o in own_plot.outputs), (
        "a reader's own plt.show() showed nothing"
    )


@pytest.mark.parametrize("package", PACKAGES, ids=page_ids(PACKAGES))
def test_page_links_its_notebook_at_the_top_and_at_each_experiment(package):
    """ "Run it yourself" before the first numbered section, and a link in every
    section where one of the page's experiments first runs, whose text names
    the section of the committed notebook that holds the experiment ("this
    experiment, section 4 of the page's notebook", under the notebook's
    heading "## Section 4. ..."; site review round 3, L8: no link said where
    to look), and no other section."""
    config = page_config(package)
    text = (REPO_ROOT / config.PAGE_FILE).read_text(encoding="utf-8")
    link = "](../" + notebooks.notebook_path(package).relative_to(REPO_ROOT).as_posix() + ")"
    parts = re.split(r"^## (\d+)\. .*$", text, flags=re.M)
    intro, sections = parts[0], dict(zip(map(int, parts[1::2]), parts[2::2], strict=True))
    assert "Run it yourself" in intro and link in intro, f"{config.PAGE_FILE}: no notebook link above section 1"
    experiments = sorted({n for n, _ in notebooks.sections_in_page_order(package)})
    missing = [n for n in experiments if link not in sections.get(n, "")]
    assert not missing, f"{config.PAGE_FILE}: sections {missing} run an experiment but do not link the notebook"
    notebook = nbformat.read(notebooks.notebook_path(package), as_version=4)
    headed = {
        int(m.group(1))
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for m in re.finditer(r"^## Section (\d+)\. ", cell.source, re.M)
    }
    wrong = []
    for n in experiments:
        texts = re.findall(r"\[([^\]]*)" + re.escape(link), sections[n])
        named = [re.findall(r"\bsection (\d+)\b", t, re.I) for t in texts]
        if not texts or any(found != [str(n)] for found in named) or n not in headed:
            wrong.append(f"section {n}: {texts} (the notebook's sections: {sorted(headed)})")
    assert not wrong, (
        f"{config.PAGE_FILE}: each experiment's notebook link names its own section of the notebook, "
        "as 'this experiment, section N of the page's notebook':\n" + "\n".join(wrong)
    )


def test_experiment_cell_runs_as_its_module_and_detects_changes():
    """The cell magic's core: a cell equal to its script (comments and layout
    aside) is the page's code; any other edit is the reader's."""
    from pagekit import notebook_kit

    package, script = "normalisation_and_stability", "norm_worked_vector"
    source = notebooks.section_cell_source(package, script).partition("\n")[2]
    assert notebook_kit.is_page_code(f"{package}.{script}", source)
    assert notebook_kit.is_page_code(f"{package}.{script}", "# a reader's note\n" + source)
    changed = re.sub(r"^(\w+) = (\d+)", r"\1 = \2 + 1", source, count=1, flags=re.M)
    assert changed != source
    assert not notebook_kit.is_page_code(f"{package}.{script}", changed)
