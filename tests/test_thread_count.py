"""Section 4's numbers do not depend on how many threads torch uses (its
issue's acceptance): the section runs in fresh interpreters with one and with
two torch threads, and every raw value must be identical."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO_ROOT

RUN_WITH_THREADS = """
import json, sys
sys.path.insert(0, {diagrams!r})
import section_kit
section_kit.import_torch().set_num_threads({threads})
module = section_kit.section_module("normalisation_and_stability", "residual_placement")
section = section_kit.run_section(module, figures=False, write=False)
print(json.dumps({{name: q.value for name, q in section.quotes.items()}}))
"""


def quotes_with_threads(threads: int) -> dict:
    code = RUN_WITH_THREADS.format(diagrams=str(REPO_ROOT / "docs" / "diagrams"), threads=threads)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_residual_placement_same_with_one_and_two_torch_threads():
    assert quotes_with_threads(1) == quotes_with_threads(2)
