"""Shared fixtures: every section of every page computed ONCE per test session,
in parallel forked workers (the runner's own machinery), figures written to a
scratch folder so the working tree is untouched.

A light section runs as the page's run (its claims asserted, its figures
compared byte for byte with the golden hashes). A heavy section (one with a
reduced configuration, see Section.choose) runs its reduced configuration:
a handful of steps through the same code, pinned in the golden record, while
its committed full-run numbers are checked for currency by content hash.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "docs" / "diagrams"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import section_kit  # noqa: E402,F401  (pins the numeric environment before numpy loads)
from check_page import GOLDEN_DIR  # noqa: E402,F401  (the tests' golden record)
from page_registry import page_config  # noqa: E402
from run_sections import all_sections, current_hash, run_many  # noqa: E402

SECTIONS = all_sections()
SECTION_IDS = [s.name for s in SECTIONS]


class SectionRun:
    """One regenerated section: its numbers record, or the error it raised."""

    def __init__(self, script, result: dict, out_dir: Path, reduced: bool):
        self.script = script
        self.package, self.name = script.package, script.name
        self.config = page_config(script.package)
        self.out_dir = out_dir / self.config.PAGE
        self.committed_dir = REPO_ROOT / "figures" / self.config.PAGE
        self.reduced = reduced
        self.result = result

    def get(self) -> dict:
        if not self.result["ok"]:
            pytest.fail(f"{self.name} failed:\n{self.result['error']}", pytrace=False)
        return self.result["record"]

    @property
    def committed(self) -> dict:
        path = self.committed_dir / "numbers" / f"{self.name}.json"
        if not path.exists():
            pytest.fail(f"{path.relative_to(REPO_ROOT)} is missing: run `make figures`", pytrace=False)
        return json.loads(path.read_text(encoding="utf-8"))

    @property
    def golden(self) -> dict:
        path = GOLDEN_DIR / self.config.PAGE / f"{self.name}.json"
        if not path.exists():
            pytest.fail(f"{path.relative_to(REPO_ROOT)} is missing: inspect the numbers, then `make golden`",
                        pytrace=False)
        record = json.loads(path.read_text(encoding="utf-8"))
        if self.reduced:  # the reduced run's pins, with the full run's figure hashes
            return {**record.get("reduced", {}), "figures": record.get("figures", {})}
        return record


def is_heavy(script) -> bool:
    """Heavy sections say so in their committed numbers (they called choose)."""
    path = REPO_ROOT / "figures" / page_config(script.package).PAGE / "numbers" / f"{script.name}.json"
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("heavy"))
    except (OSError, ValueError):
        return False


@pytest.fixture(scope="session")
def regenerated(tmp_path_factory) -> dict[str, SectionRun]:
    out = tmp_path_factory.mktemp("figures")
    jobs = []
    for script in SECTIONS:
        heavy = is_heavy(script)
        page_out = out / page_config(script.package).PAGE
        jobs.append((script, 0, True, str(page_out), True, current_hash(script), heavy))
    results = run_many(jobs)
    return {job[0].name: SectionRun(job[0], r, out, job[6]) for job, r in zip(jobs, results)}


@pytest.fixture(params=SECTIONS, ids=SECTION_IDS)
def run(request, regenerated) -> SectionRun:
    return regenerated[request.param.name]


def pytest_collection_finish(session) -> None:
    """Start the pages' notebooks executing (tests/test_notebooks.py) as soon
    as the tests are known, in child processes, so their kernels run beside
    the other tests instead of after them."""
    if any(item.module.__name__ == "test_notebooks" and item.get_closest_marker("slow")
           for item in session.items if getattr(item, "module", None)):
        import test_notebooks

        test_notebooks.start_executing()
