"""The pages' notebooks run as a reader runs them (tests/test_notebooks.py starts this).

In a fresh virtual environment that holds only what the page tells a reader
to install for the command-line route (nbclient and ipykernel) and what the
notebook's own first cell installs (the project's package from this clone,
numpy, matplotlib, threadpoolctl and torch at the pinned versions, from the
package index this machine is configured with: $TORCH_INDEX_URL empty), it
executes every page's notebook top to bottom in the quick setting with
`jupyter execute` (and PAGE_SETTING's in the page setting too), and one tinker per notebook (TINKERS: a changed rate in
one experiment's cell, run in the page setting after the set-up cells), and
reports the draw of a reader's own plot.

    python tests/notebook_runs.py SCRATCH

writes SCRATCH/<run>/<page>-ran.ipynb for each run (<package>, <package>-page, <package>-tinker)
and SCRATCH/status.json ({run: exit status}); the log goes to stdout.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
import venv
from pathlib import Path

import nbformat

from pagekit import notebooks
from pagekit.registry import page_packages

SETTING = "quick"
# One experiment per notebook whose cell a reader changes: (script, the
# line as the page has it, the reader's line). Both move a learning rate
# far enough that some of the page's statements stop holding.
TINKERS = {
    "normalisation_and_stability": (
        "residual_placement",
        "WARMUP_RATE, WARMUP_STEPS = 0.01, 50",
        "WARMUP_RATE, WARMUP_STEPS = 0.03, 50",
    ),
    "normalisation_layers": (
        "loss_smoothness",
        "RATE, STEPS, EVERY = 0.1, 300, 10",
        "RATE, STEPS, EVERY = 0.3, 300, 10",
    ),
}
# The pages whose notebook also runs whole in the page setting: page 1's
# takes about 13 s; page 2's takes minutes (make notebook-times measures it).
PAGE_SETTING = ("normalisation_and_stability",)
# A reader's own figure, drawn after the tinkered experiment: it must show.
OWN_PLOT = "import matplotlib.pyplot as plt\n\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.show()"
READER_TOOLS = ("nbclient", "ipykernel")  # what the page's command-line route installs first


def install_cell(package: str) -> str:
    notebook = nbformat.read(notebooks.notebook_path(package), as_version=4)
    return next(c.source for c in notebook.cells if c.cell_type == "code")


def tinkered(package: str):
    """The notebook as a reader who changed one experiment leaves it: the
    set-up cells, the changed experiment, a plot of their own."""
    script, old, new = TINKERS[package]
    notebook = nbformat.read(notebooks.notebook_path(package), as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    experiments = [c for c in code if c.source.startswith(notebooks.SECTION_MAGIC)]
    set_up = code[: code.index(experiments[0])]
    changed = next(c for c in experiments if c.source.splitlines()[0].endswith(f".{script}"))
    if old not in changed.source:
        raise ValueError(f"{script}'s cell no longer holds {old!r}: update TINKERS")
    changed.source = changed.source.replace(old, new)
    notebook.cells = [*set_up, changed, nbformat.v4.new_code_cell(OWN_PLOT)]
    return notebook


_COST = {"wall": time.monotonic(), "cpu": 0.0}


def log_cost(step: str) -> None:
    """Print what ``step`` (the child processes since the last call) cost, wall and CPU."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu, wall = usage.ru_utime + usage.ru_stime, time.monotonic()
    print(f"notebook runs: {step}: {wall - _COST['wall']:.1f} s wall, {cpu - _COST['cpu']:.1f} CPU-s", flush=True)
    _COST.update(wall=wall, cpu=cpu)


def main(scratch: Path) -> int:
    # A SIGTERM (the test session stopped) ends the runs; jupyter execute
    # shuts its kernel down on the way out.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    scratch = scratch.resolve()
    environment = scratch / "venv"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    # The install cell leaves byte-compiling to the first import, which keeps
    # what it compiles, as on a reader's machine (a test machine may say
    # PYTHONDONTWRITEBYTECODE).
    quiet = {**os.environ, "TORCH_INDEX_URL": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for name in ("VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE"):
        quiet.pop(name, None)
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-compile", *READER_TOOLS], check=True, env=quiet)
    log_cost("a fresh environment with the reader's tools")
    workdir = scratch / "install"
    workdir.mkdir()
    # The first notebook's install cell, as a reader's kernel runs it (once:
    # the second notebook's finds the package installed), and the next cell's
    # import in the same process: a kernel must not need a restart. Importing
    # torch and pyplot there too compiles them once, not in every kernel at once.
    install_then_import = (
        install_cell(page_packages()[0]) + "\nfrom pagekit import notebook_kit\nimport torch, matplotlib.pyplot"
    )
    subprocess.run([python, "-c", install_then_import], check=True, cwd=workdir, env=quiet)
    log_cost("the notebook's install cell")
    status = {}
    runs = {}  # name: (package, setting, folder, the changed notebook or None)
    for package in page_packages():
        runs[package] = (package, SETTING, scratch / package, None)
        if package in PAGE_SETTING:
            runs[f"{package}-page"] = (package, "page", scratch / f"{package}-page", None)
        if package in TINKERS:
            runs[f"{package}-tinker"] = (package, "page", scratch / f"{package}-tinker", tinkered(package))
    processes = {}
    for name, (package, setting, folder, notebook) in runs.items():
        if notebook is not None:
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, folder / "tinker.ipynb")
        processes[name] = subprocess.Popen(
            [python, "-c", EXECUTE, package, setting, str(folder), "tinker" if notebook else ""],
            env=quiet,
            stdout=sys.stdout,
            stderr=subprocess.STDOUT,
        )
    started = time.monotonic()
    names = {process.pid: name for name, process in processes.items()}
    while names:
        # wait4 in finishing order: each run's own CPU time (its kernel's
        # included: jupyter waits for it) and when it ended, for the log
        pid, wait_status, usage = os.wait4(-1, 0)
        if pid not in names:
            continue
        name = names.pop(pid)
        processes[name].returncode = status[name] = os.waitstatus_to_exitcode(wait_status)
        print(
            f"notebook run {name}: exit {status[name]}, {usage.ru_utime + usage.ru_stime:.1f} CPU-s, "
            f"{time.monotonic() - started:.1f} s after the runs started",
            flush=True,
        )
    (scratch / "status.json").write_text(json.dumps(status), encoding="utf-8")
    return 0


# Run inside the fresh environment: notebooks.execute with its own jupyter.
EXECUTE = """
import sys
from pathlib import Path
import nbformat
from pagekit import notebooks
package, setting, folder, tinker = sys.argv[1:5]
notebook = nbformat.read(Path(folder) / "tinker.ipynb", as_version=4) if tinker else None
notebooks.execute(package, setting, Path(folder), notebook=notebook)
"""


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
