"""The page's Python section runs as it stands and prints what the page shows.

The two tensors it prints must equal the comments under them, and those must
equal section 2's layer-norm and RMS-norm values (compared with the numbers
the section script computes, not with copied strings). The autocast facts the
section's prose states are checked against torch too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from check_page import numbers_in, parse_page
from conftest import REPO_ROOT
from page_registry import page_config

PYTHON_SECTION = 8


@pytest.fixture(scope="module")
def snippet() -> str:
    config = page_config("normalisation_and_stability")
    page = parse_page(REPO_ROOT / config.PAGE_FILE)
    blocks = [b for b in page.code_blocks if b.section == PYTHON_SECTION and b.language == "python"]
    assert len(blocks) == 1, f"section {PYTHON_SECTION} must hold exactly one python block"
    return blocks[0].content


@pytest.fixture(scope="module")
def snippet_output(snippet, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("snippet") / "snippet.py"
    path.write_text(snippet)
    # One thread, as for the section scripts: tests may run beside other work.
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, env=env)
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
    section = regenerated["norm_worked_vector"].get()
    layer, rms = ([float(m.group()) for m in numbers_in(t)] for t in shown_tensors(snippet))
    assert layer == pytest.approx([float(v) for v in section.texts("ln_normalised")], abs=0)
    assert rms == pytest.approx([float(v) for v in section.texts("rms_normalised")], abs=0)
    assert section.quotes["ln_normalised"].value == pytest.approx(layer, abs=5e-5)


def test_training_loop_logs_the_clipped_norm(snippet_output):
    logged = re.findall(r"^step \d+: loss [\d.]+, gradient norm [\d.]+$", snippet_output, re.M)
    assert len(logged) == 4


def test_autocast_facts_the_prose_states():
    import section_kit

    torch = section_kit.import_torch()
    linear = torch.nn.Linear(4, 4)
    x = torch.ones(2, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        hidden = linear(x)
        loss = torch.nn.functional.mse_loss(hidden, torch.zeros(2, 4))
    assert hidden.dtype == torch.bfloat16  # linear layers run in bfloat16
    assert loss.dtype == torch.float32  # the loss runs in float32
    loss.backward()
    assert linear.weight.dtype == torch.float32 and linear.weight.grad.dtype == torch.float32
