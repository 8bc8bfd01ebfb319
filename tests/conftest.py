"""Shared fixtures: every section script run once per test session, in-process.

Sections are computed with their figures written to a scratch folder, so the
tests can compare numbers with the golden record and SVG bytes with the
committed figures without touching the working tree.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "docs" / "diagrams"))

import section_kit  # noqa: E402
from check_page import GOLDEN_DIR  # noqa: E402,F401  (the tests' golden record)
from page_registry import page_config, page_packages, section_scripts  # noqa: E402



def page_sections() -> list[tuple[str, str]]:
    """(page package, section module) for every section script in the repo."""
    return [(package, name) for package in page_packages() for name in section_scripts(package)]


SECTIONS = page_sections()
SECTION_IDS = [name for _, name in SECTIONS]


class SectionRun:
    """One regenerated section, or the error it raised."""

    def __init__(self, package: str, name: str, out_dir: Path):
        self.package, self.name = package, name
        self.config = page_config(package)
        self.out_dir = out_dir / self.config.PAGE
        self.committed_dir = REPO_ROOT / "figures" / self.config.PAGE
        self.section = None
        self.error = None
        try:
            module = section_kit.section_module(package, name)
            self.section = section_kit.run_section(module, out_dir=self.out_dir)
        except Exception as error:  # reported by every test of this section
            self.error = error

    def get(self) -> section_kit.Section:
        if self.error is not None:
            raise self.error
        return self.section


@pytest.fixture(scope="session")
def regenerated(tmp_path_factory) -> dict[str, SectionRun]:
    out = tmp_path_factory.mktemp("figures")
    return {name: SectionRun(package, name, out) for package, name in SECTIONS}


@pytest.fixture(params=SECTIONS, ids=SECTION_IDS)
def run(request, regenerated) -> SectionRun:
    return regenerated[request.param[1]]
