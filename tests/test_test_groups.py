"""`make test` keeps each expensive shared set-up on one worker with
pytest-xdist's --dist loadgroup and the xdist_group marks conftest.py gives
as tests are collected. Under pytest 9.2 that grouping silently stopped
(pytest-dev/pytest-xdist#1386), and each set-up was then built on both
workers: this test runs a small session the same way and fails if the
grouped tests ever land on two workers."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CONFTEST = """
import pytest


def pytest_itemcollected(item):
    if item.name.startswith("test_shared"):
        item.add_marker(pytest.mark.xdist_group("shared"))
"""

TEST_FILE = """
import os
from pathlib import Path


def record(name):
    with open(Path(__file__).parent / "workers.txt", "a") as out:
        out.write(f"{name} {os.environ['PYTEST_XDIST_WORKER']}\\n")

""" + "".join(
    f"\ndef test_shared_{i}():\n    record('shared')\n\n\ndef test_alone_{i}():\n    record('alone')\n"
    for i in range(4)
)


def test_grouped_tests_share_one_worker(tmp_path):
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST), encoding="utf-8")
    for name in ("test_one.py", "test_two.py"):
        (tmp_path / name).write_text(TEST_FILE, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = [line.split() for line in (tmp_path / "workers.txt").read_text().splitlines()]
    assert len(seen) == 16
    assert len({worker for name, worker in seen}) == 2  # both workers ran tests
    assert len({worker for name, worker in seen if name == "shared"}) == 1, seen
