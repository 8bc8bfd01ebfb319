"""Interrupts and kills never lose or corrupt an output: on a scratch copy of
the first page's machinery, `make figures` is interrupted mid-run, its `make`
killed alone, and run twice at once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO_ROOT

PACKAGE, PAGE = "normalisation_and_stability", "normalisation-and-stability"
pytestmark = pytest.mark.slow


def scratch_copy(tmp_path: Path) -> Path:
    """The runner, the shared machinery, one page and its outputs, in tmp."""
    copy = tmp_path / "repo"
    diagrams = copy / "docs" / "diagrams"
    diagrams.mkdir(parents=True)
    shutil.copytree(
        REPO_ROOT / "docs" / "diagrams" / "pagekit", diagrams / "pagekit", ignore=shutil.ignore_patterns("__pycache__")
    )
    # This machine's fingerprint answer (same code, packages and expectation), so
    # the runner does not probe the kernels again before its first section.
    if (REPO_ROOT / "build" / "kernel-fingerprint").is_dir():
        shutil.copytree(REPO_ROOT / "build" / "kernel-fingerprint", copy / "build" / "kernel-fingerprint")
    shutil.copytree(
        REPO_ROOT / "docs" / "diagrams" / PACKAGE, diagrams / PACKAGE, ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(REPO_ROOT / "figures" / PAGE, copy / "figures" / PAGE)
    shutil.copy2(REPO_ROOT / "requirements.txt", copy / "requirements.txt")
    shutil.copy2(REPO_ROOT / "requirements.lock", copy / "requirements.lock")  # make venv's input
    shutil.copy2(REPO_ROOT / "Makefile", copy / "Makefile")
    shutil.copy2(REPO_ROOT / "pyproject.toml", copy / "pyproject.toml")
    (copy / ".venv").symlink_to(REPO_ROOT / ".venv")
    # make's venv inputs older than any venv: the copy's `make` must never
    # reinstall the shared .venv (that would point its project at the copy).
    for name in ("requirements.lock", "pyproject.toml"):
        os.utime(copy / name, (0, 0))
    return copy


def outputs(copy: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in (copy / "figures").rglob("*") if p.is_file()}


def assert_whole(copy: Path, before: dict[Path, bytes]) -> None:
    """Every output is still there and whole; no temp file is left."""
    leftovers = [p.name for p in (copy / "figures").rglob("*.tmp")]
    assert not leftovers, f"temp files left behind: {leftovers}"
    for path in before:
        assert path.exists(), f"{path.name} was deleted"
        data = path.read_bytes()
        if path.suffix == ".json":
            json.loads(data)
        elif path.suffix == ".svg":
            assert data.rstrip().endswith(b"</svg>"), f"{path.name} is cut short"


def wait_for(process: subprocess.Popen, text: str, timeout: float = 60) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while text not in seen:
        line = process.stdout.readline()
        if not line or time.monotonic() > deadline:
            raise AssertionError(f"never saw {text!r}; output so far:\n{seen}")
        seen += line
    return seen


def copy_env(copy: Path) -> dict[str, str]:
    """The copy's packages first on the path (the venv installs the repository's)."""
    return {**os.environ, "PYTHONPATH": str(copy / "docs" / "diagrams")}


def runner(copy: Path, *args: str) -> subprocess.Popen:
    # The copy's own path to the interpreter, so its processes name the copy.
    return subprocess.Popen(  # its own process group: a test can signal the whole run
        [str(copy / ".venv" / "bin" / "python"), "-m", "pagekit.run_sections", *args],
        cwd=copy,
        env=copy_env(copy),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_loses_nothing(tmp_path, signum):
    copy = scratch_copy(tmp_path)
    before = outputs(copy)
    process = runner(copy, "--all")
    wait_for(process, "done")  # mid-run: one section finished, the others computing
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted" in err
    assert_whole(copy, before)


def test_killing_make_stops_the_runner(tmp_path):
    copy = scratch_copy(tmp_path)
    before = outputs(copy)
    make = subprocess.Popen(
        ["make", "-s", "-B", "figures"],
        cwd=copy,
        env=copy_env(copy),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(make, "start")
    pid = int((copy / "build" / "make-figures.lock").read_text())
    make.kill()  # make alone, as `kill -9 <make's pid>` would
    make.wait()
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the runner kept running after its make was killed")
    assert_whole(copy, before)


def test_a_second_run_waits_for_the_first(tmp_path):
    copy = scratch_copy(tmp_path)
    first = runner(copy, "--all")
    wait_for(first, "start")
    second = runner(copy, "unit_mismatch")
    try:
        deadline = time.monotonic() + 30
        message = ""
        while "waiting for it to finish" not in message and time.monotonic() < deadline:
            message += second.stderr.readline()
        assert "another `make figures` is running" in message
    finally:
        for process in (first, second):
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=60)


SLEEPY_PAGE = {
    "__init__.py": '''"""A scratch page whose one section keeps the workers busy."""
PAGE = "sleepy-page"
PAGE_FILE = "docs/sleepy-page.md"
SECTION_SCRIPTS = {1: ("sleepy",)}
''',
    "sleepy.py": '''"""A section whose two declared runs nap: workers outlive the run unless stopped."""
import time
from pagekit.section import main


def nap(seconds):
    print("worker napping", flush=True)
    time.sleep(seconds)
    return seconds


def independent_runs(section):
    return [(nap, (120,)), (nap, (120,))]


def compute(section, naps):
    section.quote("nap", naps[0], "d")
    return {}


def draw(section, results):
    pass
''',
}


def _wchan(line: str) -> str:
    try:
        return (Path("/proc") / line.split(":")[0] / "wchan").read_text() or "running"
    except OSError:
        return "gone"


def processes_under(path: Path) -> list[str]:
    """Command lines of live processes started from files under ``path``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = next(line for line in (proc / "status").read_text().splitlines() if line.startswith("State"))
        except (OSError, StopIteration):
            continue
        if str(path) in cmdline and "Z" not in state.split()[1]:
            found.append(f"{proc.name}: {cmdline}")
    return found


def outlived(copy: Path) -> list[str]:
    """The processes of ``copy`` still alive 5 s after its run ended (killed,
    so no test leaves them behind)."""
    deadline = time.monotonic() + 5
    while (left := processes_under(copy)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for line in left:
        os.kill(int(line.split(":")[0]), signal.SIGKILL)
    return left


@pytest.mark.parametrize("how", ["interrupt", "kill"])
def test_no_pool_worker_outlives_the_run(tmp_path, how):
    """A section's own pool workers stop with the run, whether it is
    interrupted or killed outright: no orphan keeps computing, writing or
    waiting for a job slot that nobody will give back. (SIGTERM to the whole
    group at once, as `timeout` sends it, still hangs about one run in six:
    the pool starts a new worker in place of one the signal ended, and its
    shutdown waits on it. See the commit that removed that case.)"""
    copy = scratch_copy(tmp_path)
    package = copy / "docs" / "diagrams" / "sleepy_page"
    package.mkdir()
    for name, text in SLEEPY_PAGE.items():
        (package / name).write_text(text, encoding="utf-8")
    process = runner(copy, "--all", "--page", "sleepy-page")
    wait_for(process, "worker napping")  # the pool is up (its workers forked) and computing
    if how == "interrupt":
        process.send_signal(signal.SIGINT)
    else:
        process.kill()
    try:
        process.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # say what is still alive, and where it waits
        left = [f"{line} (waiting in {_wchan(line)})" for line in processes_under(copy)]
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail(f"the run did not end within 60 s of the signal; alive: {left}", pytrace=False)
    left = outlived(copy)
    assert not left, "processes outlived the run:\n" + "\n".join(left)


# SIGINT or SIGTERM to a whole run (a terminal's Ctrl-C, a CI job cancelled,
# `kill -- -<pgid>`), early (while it imports) and while it works: nothing of
# the project is alive 5 s later, and the committed outputs are whole.
MAKE_RUNS = {
    # target: (arguments, what the run prints once it is working, or None: a time)
    "figures": (["-B", "figures"], "start"),
    "robustness": (["robustness"], "done"),
    "test": (["test", "PAGE=normalisation-and-stability"], None),
}
WORKING_AFTER = 6.0  # seconds: make test is computing sections and executing notebooks by then


def signal_group_at(copy: Path, target: str, signum: int, moment: str) -> subprocess.Popen:
    arguments, working = MAKE_RUNS[target]
    make = subprocess.Popen(
        ["make", "-s", *arguments],
        cwd=copy,
        env={**copy_env(copy), "CI": "true"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own group, as a terminal's job or a CI step
    )
    if moment == "starting":
        time.sleep(1.0)
    elif working is None:
        time.sleep(WORKING_AFTER)
    else:
        wait_for(make, working, timeout=120)
    os.killpg(make.pid, signum)
    return make


@pytest.mark.parametrize("moment", ["starting", "working"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("target", sorted(MAKE_RUNS))
def test_a_signal_to_the_whole_run_leaves_nothing_behind(tmp_path, target, signum, moment):
    copy = scratch_copy(tmp_path)
    shutil.copytree(REPO_ROOT / "tests", copy / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    before = outputs(copy)
    make = signal_group_at(copy, target, signum, moment)
    try:
        make.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        left = [f"{line} (waiting in {_wchan(line)})" for line in processes_under(copy)]
        os.killpg(make.pid, signal.SIGKILL)
        pytest.fail(f"make {target} did not end within 60 s of the signal; alive: {left}", pytrace=False)
    left = outlived(copy)
    assert not left, f"processes outlived make {target}:\n" + "\n".join(left)
    assert_whole(copy, before)
