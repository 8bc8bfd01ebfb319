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
from conftest import REPO_ROOT, skip_bit_level
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


def rerun_under_variants(package: str, sections: list[str], variants: list[str], regenerated) -> dict:
    """{variant: (records, whether torch was loaded)} for the sections rerun
    as the session ran them (reduced where heavy, as the report's skips are
    decided for every configuration), one fresh interpreter per variant."""
    runs = [(s, regenerated[s].reduced) for s in sections]
    code = RUN_REDUCED.format(diagrams=str(REPO_ROOT / "docs" / "diagrams"), package=package, sections=runs)
    children = {v: subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env={**os.environ, numeric_env.VARIANT_ENV: v})
                for v in variants}
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


@pytest.mark.slow
@pytest.mark.parametrize("package", [p for p in page_packages()
                                     if getattr(page_config(p), "TORCH_ONLY_SECTIONS", ())])
def test_skipped_variants_cannot_change_torch_only_sections(package, regenerated):
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
    script = next(s for s in experiment_sections([package]) if s.name == sections[0])
    variants = [v for v in robustness_report.variants() if robustness_report.skip_reason(script, v)]
    assert {"openblas-sandybridge", "openblas-prescott", "numpy-x86-v2"} <= set(variants)
    for v, (records, _) in rerun_under_variants(package, sections, variants, regenerated).items():
        assert_same_results(pinned, records, v)


NO_TORCH_SECTIONS = [s for s in experiment_sections(page_packages()) if not robustness_report.loads_torch(s)]


@pytest.mark.slow
@pytest.mark.parametrize("package", sorted({s.package for s in NO_TORCH_SECTIONS}))
def test_sections_that_never_load_torch_cannot_change_under_torch_variants(package, regenerated):
    """The report skips the torch variants for a section whose code never
    loads torch (robustness_report.loads_torch, read from the code). Here
    those sections run in a fresh interpreter under a torch variant: torch
    is never imported, so no torch setting can reach them, and their values
    are exactly the session's pinned ones."""
    sections = [s.name for s in NO_TORCH_SECTIONS if s.package == package]
    pinned = {s: deterministic_part(regenerated[s].get()) for s in sections}
    assert all(pinned[s]["claims"] or pinned[s]["quotes"] for s in sections), "a section that compares nothing"
    script = next(s for s in NO_TORCH_SECTIONS if s.package == package)
    variants = [v for v in robustness_report.variants() if robustness_report.skip_reason(script, v)]
    assert set(variants) == {"torch-default", "torch-two-threads"}
    # One fresh interpreter suffices for both: torch never loading is what makes them unable to matter.
    (records, torch_loaded), = rerun_under_variants(package, sections, ["torch-default"], regenerated).values()
    assert not torch_loaded, f"{', '.join(sections)} imported torch: robustness_report.loads_torch missed how"
    assert_same_results(pinned, records, "torch-default")


def test_every_variant_is_run_for_some_section():
    """A skip is for a section that cannot change under a variant; no rule
    may skip a variant everywhere (it would then test nothing)."""
    scripts = experiment_sections(page_packages())
    unused = [v for v in robustness_report.variants()
              if all(robustness_report.skip_reason(s, v) for s in scripts)]
    assert not unused, f"no section is rerun under {', '.join(unused)}"
    assert all("any" not in robustness_report.variant_libraries(v) for v in robustness_report.variants()), \
        "a variant changes a setting robustness_report.LIBRARY_OF_SETTING does not know"


@pytest.mark.slow  # two interpreters import numpy and matplotlib
def test_one_schedule_runs_every_job_and_keeps_each(tmp_path, monkeypatch):
    """run_all sends each run to its variant's server, several at once, and
    keeps each finished run in the cache and its CPU time for the next order."""
    monkeypatch.setattr(robustness_report, "RUNS_DIR", tmp_path / "runs")
    monkeypatch.setattr(robustness_report, "CACHE_DIR", tmp_path / "runs" / "cache")
    monkeypatch.setattr(robustness_report, "COSTS_FILE", tmp_path / "costs.json")
    monkeypatch.setattr(robustness_report, "SCHEDULE_FILE", tmp_path / "schedule.json")
    script = NO_TORCH_SECTIONS[0]  # light: no torch to import
    jobs = [(script, (numeric_env.PINNED, 1)), (script, (numeric_env.PINNED, 2)), (script, ("numpy-x86-v2", 0))]
    said = []
    results = robustness_report.run_all(jobs, said.append, cores=2)
    assert set(results) == {(script.name, run) for _, run in jobs}
    for (_, (variant, offset)), result in results.items():
        assert result["ok"], result["error"]
        assert (result["record"]["variant"], result["record"]["seed_offset"]) == (variant, offset)
        assert robustness_report.cached_result(script, (variant, offset))["record"] == result["record"]
    costs = json.loads((tmp_path / "costs.json").read_text(encoding="utf-8"))
    assert {robustness_report.cost_key(script, v) for v in (numeric_env.PINNED, "numpy-x86-v2")} <= set(costs)
    schedule = json.loads((tmp_path / "schedule.json").read_text(encoding="utf-8"))
    assert sorted((r["variant"], r["seed_offset"]) for r in schedule["runs"] if "section" in r) == \
        sorted(run for _, run in jobs)
    assert not list((tmp_path / "runs").glob("run-*.json")), "a run's result file was left behind"


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
