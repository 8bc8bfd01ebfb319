"""`make lint` as a test, so `make test` (and a bare `pytest`) lints too.

The rule set and its reasons are in pyproject.toml; ruff reads it from there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")


def ruff(*args: str) -> subprocess.CompletedProcess:
    # --no-cache: ruff would otherwise write .ruff_cache into the tree.
    return subprocess.run(
        [str(RUFF), *args, "--no-cache", "."], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False
    )


def test_ruff_finds_nothing():
    done = ruff("check", "--output-format", "concise")
    assert done.returncode == 0, f"make lint finds:\n{done.stdout}{done.stderr}"


def test_the_code_is_laid_out_as_ruff_format_lays_it_out():
    done = ruff("format", "--check")
    assert done.returncode == 0, f"`ruff format .` would change:\n{done.stdout}{done.stderr}"
