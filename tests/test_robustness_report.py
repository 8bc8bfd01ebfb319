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
from conftest import REPO_ROOT, is_heavy, skip_bit_level
from page_registry import page_config, page_packages
import robustness_report
from robustness_report import HASH_LINE, data_path, experiment_sections, report_path
from run_sections import current_hash

HASH = re.compile(HASH_LINE.format(section=r"(?P<section>\w+)", hash=r"(?P<hash>[0-9a-f]+|None)"))


def read_report(package: str) -> str:
    path = report_path(page_config(package).PAGE)
    assert path.exists(), f"{path.relative_to(REPO_ROOT)} is missing: run `make robustness`"
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("package", page_packages())
def test_report_is_current_for_every_section(package):
    recorded = {m["section"]: m["hash"] for m in HASH.finditer(read_report(package))}
    stale = [s.name for s in experiment_sections([package]) if recorded.get(s.name) != current_hash(s)]
    assert not stale, f"the robustness report is stale for {', '.join(stale)}: run `make robustness`"
    data = json.loads(data_path(page_config(package).PAGE).read_text(encoding="utf-8"))
    assert data["inputs"] == recorded, "the report's data and its Markdown come from different runs"


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
    skip_bit_level()  # where the pin cannot hold, a variant's kernels are not applied either
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
        if len(texts) != len(fresh):  # a vector that changed length: no element goes uncompared
            moved.append(f"{name}: {len(texts)} elements -> {len(fresh)}")
            continue
        for i, (a, b) in enumerate(zip(texts, fresh, strict=True)):
            element = f"{name}[{i}]" if isinstance(q["text"], list) else name
            if a != b and element not in allowed:
                moved.append(f"{element}: {a} -> {b}")
    assert not moved, "texts changed under another variant but the report calls them stable:\n" + "\n".join(moved)


RUN_REDUCED = """
import json, sys
sys.path.insert(0, {diagrams!r})
import section_kit
records = {{name: section_kit.run_section(section_kit.section_module({package!r}, name), figures=False, write=False,
                                        reduced=reduced, raise_on_failed_claims=False).record()
           for name, reduced in {sections!r}}}
print(json.dumps({{"records": records, "torch_loaded": "torch" in sys.modules}}))
"""


def deterministic_part(record: dict) -> dict:
    """What a variant that cannot change a section must leave alone: its
    quotes that are not measurements, and its claims' words and results
    (compared after a JSON round trip, as the servers' records make one)."""
    return json.loads(json.dumps({
        "quotes": {k: q["value"] for k, q in record["quotes"].items() if not q.get("measured")},
        "claims": [(c["statement"], c["holds"]) for c in record["claims"]]}))


def start_under_variants(package: str, sections: list[str], variants: list[str]) -> dict:
    """{variant: child}: the sections rerun as the session runs them (reduced
    where heavy, as the report's skips are decided for every configuration),
    one fresh interpreter per variant, started now."""
    scripts = {s.name: s for s in experiment_sections([package])}
    runs = [(s, is_heavy(scripts[s])) for s in sections]
    code = RUN_REDUCED.format(diagrams=str(REPO_ROOT / "docs" / "diagrams"), package=package, sections=runs)
    return {v: subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={**os.environ, numeric_env.VARIANT_ENV: v})
            for v in variants}


def rerun_under_variants(package: str, sections: list[str], variants: list[str],
                         children: dict | None = None) -> dict:
    """{variant: (records, whether torch was loaded)} for the sections rerun
    under each variant (``children``: already started by start_under_variants)."""
    children = children or start_under_variants(package, sections, variants)
    outputs = {v: child.communicate(timeout=300) for v, child in children.items()}
    fresh = {}
    for v, (out, err) in outputs.items():
        assert children[v].returncode == 0, f"{v}: {err}"
        done = json.loads(out.strip().splitlines()[-1])
        fresh[v] = ({s: deterministic_part(r) for s, r in done["records"].items()}, done["torch_loaded"])
    return fresh


def assert_same_results(pinned: dict, fresh: dict, variant: str) -> None:
    changed = [f"{s}.{k}" for s in pinned for k, value in pinned[s]["quotes"].items()
               if fresh[s]["quotes"].get(k) != value]
    assert not changed, f"under {variant} these quotes of sections it is skipped for changed: {', '.join(changed)}"
    moved = [f"{s}: {len(pinned[s]['claims'])} claims -> {len(fresh[s]['claims'])}" for s in pinned
             if len(fresh[s]["claims"]) != len(pinned[s]["claims"])]
    moved += [f"{s}: {a} -> {b}" for s in pinned if len(fresh[s]["claims"]) == len(pinned[s]["claims"])
              for a, b in zip(pinned[s]["claims"], fresh[s]["claims"], strict=True) if a != b]
    assert not moved, f"under {variant} these claims of sections it is skipped for changed:\n" + "\n".join(moved)


TORCH_ONLY_PACKAGES = [p for p in page_packages() if getattr(page_config(p), "TORCH_ONLY_SECTIONS", ())]


def skipped_variants(package: str, section: str) -> list[str]:
    script = next(s for s in experiment_sections([package]) if s.name == section)
    return [v for v in robustness_report.variants() if robustness_report.skip_reason(script, v)]


@pytest.fixture(scope="session")
def skipped_variant_children() -> dict:
    """{package: {variant: child}}: each page's torch-only sections, run in a
    fresh interpreter under each variant the report skips for them. Asked for
    before `regenerated` computes anything, so the children run while the
    session's pinned runs are computed (the test's two halves overlap)."""
    children = {}
    for package in TORCH_ONLY_PACKAGES:
        sections = list(page_config(package).TORCH_ONLY_SECTIONS)
        children[package] = start_under_variants(package, sections, skipped_variants(package, sections[0]))
    yield children
    for child in (c for by_variant in children.values() for c in by_variant.values()):
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.slow
@pytest.mark.parametrize("package", TORCH_ONLY_PACKAGES)
def test_skipped_variants_cannot_change_torch_only_sections(package, skipped_variant_children, regenerated):
    """The report skips the OpenBLAS-only variants and numpy's X86_V2 loops
    for the sections a page lists as torch-only; here their reduced runs
    (the same code paths) give exactly the same values under those variants
    as the session's pinned runs (reused, not rerun: this test is among the
    slowest)."""
    sections = list(page_config(package).TORCH_ONLY_SECTIONS)
    # the session ran each heavy section reduced, as the children do; a light
    # one has no reduced configuration, so its full run is the same run
    assert all(regenerated[s].get()["reduced"] == regenerated[s].get()["heavy"] for s in sections)
    pinned = {s: deterministic_part(regenerated[s].get()) for s in sections}
    assert all(pinned[s]["claims"] for s in sections), "a torch-only section with no claims compares nothing"
    variants = skipped_variants(package, sections[0])
    assert {"openblas-sandybridge", "openblas-prescott", "numpy-x86-v2"} <= set(variants)
    children = skipped_variant_children[package]
    assert set(children) == set(variants)
    for v, (records, _) in rerun_under_variants(package, sections, variants, children).items():
        assert_same_results(pinned, records, v)


def test_a_finished_run_is_kept_for_its_inputs_only(tmp_path, monkeypatch):
    """An interrupted report loses no finished run; a run of older inputs is
    never reused, and a failed run is not kept."""
    script = experiment_sections([page_packages()[0]])[0]
    monkeypatch.setattr(robustness_report, "CACHE_DIR", tmp_path)
    run = ("torch-default", 0)
    result = {"script": script, "ok": True, "record": {"quotes": {}}, "error": None, "seconds": 1.0}
    robustness_report.keep_result(script, run, result)
    assert robustness_report.cached_result(script, run)["record"] == {"quotes": {}}
    assert robustness_report.cached_result(script, ("torch-default", 1)) is None
    monkeypatch.setattr(robustness_report, "current_hash", lambda s: "other inputs")
    assert robustness_report.cached_result(script, run) is None
    robustness_report.keep_result(script, ("pinned", 2), {**result, "ok": False})
    assert not robustness_report.cache_path(script, ("pinned", 2)).exists()
