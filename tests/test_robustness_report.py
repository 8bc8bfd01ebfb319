"""The committed robustness reports are current and every claim holds where
it must; one chaotic section rerun under another numeric variant keeps its
claims and its rounded texts (the report's promise, checked live)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import numeric_env
from conftest import REPO_ROOT
from page_registry import page_config, page_packages
from robustness_report import HASH_LINE, report_path
from run_sections import all_sections, current_hash

HASH = re.compile(HASH_LINE.format(section=r"(?P<section>\w+)", hash=r"(?P<hash>[0-9a-f]+|None)"))


def read_report(package: str) -> str:
    path = report_path(page_config(package).PAGE)
    assert path.exists(), f"{path.relative_to(REPO_ROOT)} is missing: run `make robustness`"
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("package", page_packages())
def test_report_is_current_for_every_section(package):
    recorded = {m["section"]: m["hash"] for m in HASH.finditer(read_report(package))}
    stale = [s.name for s in all_sections([package]) if recorded.get(s.name) != current_hash(s)]
    assert not stale, f"the robustness report is stale for {', '.join(stale)}: run `make robustness`"


@pytest.mark.parametrize("package", page_packages())
def test_every_claim_holds_where_it_must(package):
    failures = [line for line in read_report(package).splitlines()
                if "**FAILS**" in line or "**ERROR**" in line or "**missing**" in line]
    assert not failures, "the robustness report lists failures:\n" + "\n".join(failures)


def sensitive_quotes(package: str, section: str) -> set[str]:
    text = read_report(package)
    block = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    line = re.search(r"Rounding-sensitive quotes: (.*)\.", block).group(1)
    return set() if line == "none" else set(line.split(", "))


RUN_UNDER_VARIANT = """
import json, sys
sys.path.insert(0, {diagrams!r})
import section_kit
module = section_kit.section_module({package!r}, {section!r})
section = section_kit.run_section(module, figures=False, write=False)
print(json.dumps(section.record()))
"""


@pytest.mark.slow
def test_chaotic_section_under_another_variant_keeps_claims_and_rounded_texts():
    package, section, variant = "normalisation_and_stability", "residual_placement", "openblas-sandybridge"
    code = RUN_UNDER_VARIANT.format(diagrams=str(REPO_ROOT / "docs" / "diagrams"), package=package,
                                    section=section)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, numeric_env.VARIANT_ENV: variant})
    assert done.returncode == 0, done.stderr  # a failed claim fails the run, with its values
    record = json.loads(done.stdout.strip().splitlines()[-1])
    assert record["variant"] == variant and record["environment"]["openblas_core"] == "Sandybridge"
    committed = json.loads((REPO_ROOT / "figures" / page_config(package).PAGE / "numbers" /
                            f"{section}.json").read_text(encoding="utf-8"))
    allowed = sensitive_quotes(package, section)
    moved = []
    for name, q in committed["quotes"].items():
        texts = q["text"] if isinstance(q["text"], list) else [q["text"]]
        fresh = record["quotes"][name]["text"]
        fresh = fresh if isinstance(fresh, list) else [fresh]
        for i, (a, b) in enumerate(zip(texts, fresh)):
            element = f"{name}[{i}]" if isinstance(q["text"], list) else name
            if a != b and element not in allowed:
                moved.append(f"{element}: {a} -> {b}")
    assert not moved, "texts changed under another variant but the report calls them stable:\n" + "\n".join(moved)
