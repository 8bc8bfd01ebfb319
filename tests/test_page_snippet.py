"""The page's Python section runs as it stands and prints what the page shows.

The two tensors it prints must equal the comments under them, and those must
equal section 2's layer-norm and RMS-norm values (compared with the numbers
the section script computes, not with copied strings). The autocast facts the
section's prose states are checked against torch too.

The block is the page's content, not the project's code, so it runs guarded:
in a temporary directory (its working directory and HOME), with a minimal
environment (PATH, HOME, LANG, PYTHONHASHSEED and the pinned numeric
environment; nothing else of the test process's environment, so no secret
leaks) and a time limit. A probe snippet proves the isolation.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from pagekit import numeric_env
from pagekit.check_page import numbers_in, parse_page
from conftest import REPO_ROOT
from pagekit.registry import page_config

PYTHON_SECTION = 8
TIME_LIMIT = 120  # seconds; the block takes a few seconds
MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin"


def minimal_env(home: Path) -> dict[str, str]:
    """The whole environment a page's code block gets: nothing is copied from
    os.environ. The numeric pin is the page's own (as numeric_env.apply sets
    it, without the AVX2 kernels on a machine that cannot run them)."""
    pin = numeric_env.settings(numeric_env.PINNED)
    if not numeric_env.can_honour_pin():
        pin = {k: v for k, v in pin.items() if k not in numeric_env.NEEDS_AVX2}
    # -S and the installed packages' folder as a plain path entry: the block
    # sees numpy and torch, but not this project, which the venv installs in
    # place through a .pth file (only the site module reads those).
    return {
        "PATH": MINIMAL_PATH,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        **pin,
    }


def run_guarded(code: str, workdir: Path, timeout: float = TIME_LIMIT) -> subprocess.CompletedProcess:
    """Run ``code`` as a script in ``workdir`` with the minimal environment
    and a time limit; a run over the limit fails the test with one line."""
    script = workdir / "snippet.py"
    script.write_text(code, encoding="utf-8")
    try:
        return subprocess.run(
            [sys.executable, "-S", script.name],
            cwd=workdir,
            env=minimal_env(workdir),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"the page's code block did not finish within the {timeout:g} s time limit "
            f"(run in {workdir}); make it faster or raise TIME_LIMIT in {Path(__file__).name}",
            pytrace=False,
        )


@pytest.fixture(scope="module")
def snippet() -> str:
    config = page_config("normalisation_and_stability")
    page = parse_page(REPO_ROOT / config.PAGE_FILE)
    blocks = [b for b in page.code_blocks if b.section == PYTHON_SECTION and b.language == "python"]
    assert len(blocks) == 1, f"section {PYTHON_SECTION} must hold exactly one python block"
    return blocks[0].content


@pytest.fixture(scope="module")
def snippet_output(snippet, tmp_path_factory) -> str:
    done = run_guarded(snippet, tmp_path_factory.mktemp("snippet"))
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", f"the page's code prints warnings:\n{done.stderr}"
    return done.stdout


def shown_tensors(snippet: str) -> list[str]:
    return [line[2:] for line in snippet.splitlines() if line.startswith("# tensor(")]


def test_printed_tensors_equal_the_comments(snippet, snippet_output):
    printed = [line for line in snippet_output.splitlines() if line.startswith("tensor(")]
    shown = shown_tensors(snippet)
    assert len(shown) == 2
    assert printed == shown


def test_comments_equal_section_two(snippet, regenerated):
    quotes = regenerated[("normalisation_and_stability", "norm_worked_vector")].get()["quotes"]

    def printed(name: str) -> list[float]:  # the texts section 2 prints, with U+2212 minus signs
        return [float(t.replace("\u2212", "-")) for t in quotes[name]["text"]]

    layer, rms = ([float(m.group()) for m in numbers_in(t)] for t in shown_tensors(snippet))
    assert layer == pytest.approx(printed("ln_normalised"), abs=0)
    assert rms == pytest.approx(printed("rms_normalised"), abs=0)
    assert quotes["ln_normalised"]["value"] == pytest.approx(layer, abs=5e-5)


def test_training_loop_logs_the_clipped_norm(snippet_output):
    logged = re.findall(r"^step \d+: loss [\d.]+, gradient norm [\d.]+$", snippet_output, re.M)
    assert len(logged) == 4


def test_logged_lines_equal_the_comments(snippet, snippet_output):
    """The block is plain torch (a reader copies it, without the pin's
    routes), and its bfloat16 products round differently by processor: step
    50's gradient norm printed 0.102 on the AMD EPYC that made the page and
    0.096 on an Intel Xeon, under the same environment variables. So the
    lines that hold on any machine (step 25 and the held-out loss) must equal
    the comments everywhere; the others the block itself marks as differing
    by processor, and they are compared in form only."""
    pattern = r"^(step \d+: loss [\d.]+, gradient norm [\d.]+|held-out loss [\d.]+)$"
    printed = re.findall(pattern, snippet_output, re.M)
    shown = [line[2:] for line in snippet.splitlines() if re.match(pattern, line[2:]) and line.startswith("# ")]
    assert len(printed) == 5 and len(shown) == 5
    assert printed[0] == shown[0] and printed[-1] == shown[-1]  # step 25 and the held-out loss
    assert "from step 50 on the digits differ" in snippet, (
        "the block must say which printed lines depend on the processor"
    )


PROBE = """\
import importlib.util, json, os
result = {"secret": os.environ.get("SNIPPET_PROBE_SECRET"), "env": sorted(os.environ),
          "cwd": os.getcwd(), "home": os.environ.get("HOME"),
          "sees_repo": os.path.exists(os.path.join("docs", "normalisation-and-stability.md")),
          "repo_on_path": importlib.util.find_spec("pagekit") is not None}
with open("probe-written.txt", "w") as out:  # a relative write: where does it land?
    out.write("written by the probe")
result["written"] = os.path.abspath("probe-written.txt")
print(json.dumps(result))
"""


def test_the_block_runs_isolated(tmp_path, monkeypatch):
    """A probe in the block's place sees no variable of the test process,
    runs in the temp dir, cannot see or import the repository, and its
    writes land in the temp dir only."""
    monkeypatch.setenv("SNIPPET_PROBE_SECRET", "must-not-leak")
    done = run_guarded(PROBE, tmp_path, timeout=30)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["secret"] is None
    assert set(seen["env"]) <= set(minimal_env(tmp_path)), "the block saw variables beyond the minimal set"
    assert Path(seen["cwd"]).resolve() == tmp_path.resolve()
    assert Path(seen["home"]).resolve() == tmp_path.resolve()
    assert not seen["sees_repo"] and not seen["repo_on_path"]
    assert Path(seen["written"]).resolve() == (tmp_path / "probe-written.txt").resolve()
    assert (tmp_path / "probe-written.txt").read_text() == "written by the probe"
    assert not (REPO_ROOT / "probe-written.txt").exists()


def test_the_block_has_a_time_limit(tmp_path):
    with pytest.raises(pytest.fail.Exception, match=r"did not finish within the 1 s time limit"):
        run_guarded("import time\ntime.sleep(30)\n", tmp_path, timeout=1)


def test_autocast_facts_the_prose_states():
    from pagekit import torch_loader

    torch = torch_loader.import_torch()
    linear = torch.nn.Linear(4, 4)
    x = torch.ones(2, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        hidden = linear(x)
        loss = torch.nn.functional.mse_loss(hidden, torch.zeros(2, 4))
    assert hidden.dtype == torch.bfloat16  # linear layers run in bfloat16
    assert loss.dtype == torch.float32  # the loss runs in float32
    loss.backward()
    assert linear.weight.dtype == torch.float32 and linear.weight.grad.dtype == torch.float32
