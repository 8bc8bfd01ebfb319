"""Every test has a time limit (pytest-timeout), and a hung worker stops the
run in seconds with a message naming the test, not after CI's 90 minutes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

from conftest import SESSION_FIXTURE_TIMEOUT

HUNG_WORKER_TEST = """
import multiprocessing, time
from pathlib import Path


def hang():
    time.sleep(3600)


def test_waits_for_a_hung_worker():
    worker = multiprocessing.get_context("fork").Process(target=hang)
    worker.start()
    Path("worker.pid").write_text(str(worker.pid))
    try:
        worker.join()  # as run_many waits for its section workers
    finally:  # as run_many's finally: the timeout's exception stops the worker
        worker.terminate()
        worker.join()
"""


def test_every_test_has_a_limit_and_the_session_fixture_its_own(request):
    assert float(request.config.getini("timeout")) == 60
    assert request.config.getini("timeout_method") == "signal"
    regenerating = [item for item in request.session.items if "regenerated" in item.fixturenames]
    if regenerating:  # the first one builds the session fixture: its legitimate time is not cut
        assert regenerating[0].get_closest_marker("timeout").args[0] == SESSION_FIXTURE_TIMEOUT


def test_a_hung_worker_fails_its_test_in_seconds(tmp_path):
    (tmp_path / "test_hung.py").write_text(textwrap.dedent(HUNG_WORKER_TEST), encoding="utf-8")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "timeout=2", "test_hung.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    seconds = time.perf_counter() - start
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Timeout (>2.0s) from pytest-timeout" in done.stdout, done.stdout
    assert "test_hung.py::test_waits_for_a_hung_worker" in done.stdout, done.stdout
    assert seconds < 30, f"the hung test took {seconds:.0f} s to stop"
    pid = int((tmp_path / "worker.pid").read_text())
    assert not os.path.exists(f"/proc/{pid}"), "the hung worker outlived its test"
