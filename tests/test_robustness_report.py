"""The committed robustness reports are current and every claim holds where
it must; their content is one run's (the Markdown is the rendering of the
JSON, the JSON's results match the digest the run wrote into them, the seed-0
column is the committed numbers); one chaotic section rerun under another
numeric variant keeps its claims and its rounded texts (the report's promise,
checked live)."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys

import pytest

from pagekit import numeric_env
from conftest import REPO_ROOT, page_ids, skip_bit_level
from pagekit.registry import page_config, page_packages
from pagekit import robustness_report
from pagekit.robustness_report import (
    DIGEST_KEY,
    HASH_LINE,
    content_findings,
    data_path,
    experiment_sections,
    render_report,
    report_path,
    results_digest,
)
from pagekit.run_sections import current_hash

HASH = re.compile(HASH_LINE.format(section=r"(?P<section>\w+)", hash=r"(?P<hash>[0-9a-f]+|None)"))


def read_report(package: str) -> str:
    path = report_path(page_config(package).PAGE)
    assert path.exists(), f"{path.relative_to(REPO_ROOT)} is missing: run `make robustness`"
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("package", page_packages(), ids=page_ids(page_packages()))
def test_report_is_current_for_every_section(package):
    recorded = {m["section"]: m["hash"] for m in HASH.finditer(read_report(package))}
    stale = [s.name for s in experiment_sections([package]) if recorded.get(s.name) != current_hash(s)]
    assert not stale, f"the robustness report is stale for {', '.join(stale)}: run `make robustness`"
    data = json.loads(data_path(page_config(package).PAGE).read_text(encoding="utf-8"))
    assert data["inputs"] == recorded, "the report's data and its Markdown come from different runs"


@pytest.mark.parametrize("package", page_packages(), ids=page_ids(page_packages()))
def test_every_claim_holds_where_it_must(package):
    failures = [
        line
        for line in read_report(package).splitlines()
        if "**FAILS**" in line or "**ERROR**" in line or "**missing**" in line
    ]
    assert not failures, "the robustness report lists failures:\n" + "\n".join(failures)


def committed_report(package: str) -> tuple[str, dict, str, str]:
    """(Markdown, data, the Markdown's and the data's file names) of a page's committed report."""
    page = page_config(package).PAGE
    data = json.loads(data_path(page).read_text(encoding="utf-8"))
    return read_report(package), data, rel(report_path(page)), rel(data_path(page))


def rel(path) -> str:
    return str(path.relative_to(REPO_ROOT))


@pytest.mark.parametrize("package", page_packages(), ids=page_ids(page_packages()))
def test_report_is_its_data_rendered_and_its_data_match_their_digest(package):
    """The Markdown is the report's own rendering of its JSON (a cell edited
    in the Markdown fails, by line), and the JSON's results match the digest
    the run that made them wrote into them (a cell edited in the JSON fails,
    even with the Markdown re-rendered to match)."""
    markdown, data, markdown_name, data_name = committed_report(package)
    findings = content_findings(markdown, data, markdown_name, data_name)
    assert not findings, "\n".join(findings)


@pytest.mark.parametrize("package", page_packages(), ids=page_ids(page_packages()))
def test_report_seed_zero_column_is_the_committed_numbers(package):
    """The seed-0 pinned run of the report is the page's own run, taken from
    its committed numbers: each claim's result and each quote's text there are
    the committed ones (a report made from other numbers, or a seed-0 cell
    edited with its digest recomputed, fails)."""
    _, data, _, data_name = committed_report(package)
    page = page_config(package).PAGE
    wrong = []
    for name, section in data["sections"].items():
        record = json.loads((REPO_ROOT / "figures" / page / "numbers" / f"{name}.json").read_text(encoding="utf-8"))
        held = {c["statement"]: c["holds"] for c in record["claims"]}
        if [c["statement"] for c in section["claims"]] != list(held):
            wrong.append(f"{name}: its claims are not the committed numbers' claims")
        wrong += [
            f"{name}: claim {c['statement']!r} at seed 0: {c['holds'].get('seed 0')} in the report, "
            f"{held.get(c['statement'])} in the numbers"
            for c in section["claims"]
            if c["holds"].get("seed 0") != held.get(c["statement"])
        ]
        for element, quote in section["quotes"].items():
            base, _, index = element.partition("[")
            text = record["quotes"].get(base, {}).get("text")
            text = text[int(index[:-1])] if index and isinstance(text, list) else text
            if quote["text"].get("seed 0") != text:
                wrong.append(f"{name}: quote {element} at seed 0: {quote['text'].get('seed 0')!r}, numbers {text!r}")
    assert not wrong, f"{data_name}: the seed-0 column is not the committed numbers:\n" + "\n".join(wrong)


def a_cell_that_did_not_hold(data: dict) -> tuple[str, int, str]:
    """(section, claim index, run) of a page-run claim that did not hold at
    another seed: the committed reports of both pages have one."""
    for name, section in data["sections"].items():
        for i, claim in enumerate(section["claims"]):
            for run, holds in claim["holds"].items():
                if holds is False:
                    return name, i, run
    raise AssertionError("no claim failed anywhere in the report: this mutation needs one")


def line_of(markdown: str, statement: str) -> int:
    """The 1-based line of a claim's row in the Markdown."""
    return next(i for i, line in enumerate(markdown.splitlines(), 1) if line.startswith(f"| {statement} |"))


@pytest.mark.parametrize("package", page_packages(), ids=page_ids(page_packages()))
def test_a_cell_edited_by_hand_to_read_holds_is_caught(package):
    """A result that did not hold edited to "holds": in the Markdown only
    (caught by line), in the JSON only, and in both with the Markdown
    re-rendered from the edited JSON (caught by the digest)."""
    markdown, data, markdown_name, data_name = committed_report(package)
    name, i, run = a_cell_that_did_not_hold(data)
    statement = data["sections"][name]["claims"][i]["statement"]
    row = line_of(markdown, statement)
    lines = markdown.splitlines(keepends=True)
    cells = lines[row - 1].split(" | ")
    column = 2 + [robustness_report.run_label(*r) for r in robustness_report.report_runs()].index(run)
    assert cells[column].startswith("not here"), cells
    cells[column] = "holds"
    lines[row - 1] = " | ".join(cells)
    edited_markdown = "".join(lines)
    found = content_findings(edited_markdown, data, markdown_name, data_name)
    assert len(found) == 1 and found[0].startswith(f"{markdown_name}:{row}: is not the rendering of {data_name}"), found
    assert "| holds |" in found[0] and "| not here" in found[0], found

    edited = copy.deepcopy(data)
    edited["sections"][name]["claims"][i]["holds"][run] = True
    edited["sections"][name]["claims"][i].get("detail", {}).pop(run, None)
    found = content_findings(markdown, edited, markdown_name, data_name)
    assert any(f.startswith(f"{data_name}: its results do not match the digest the run wrote") for f in found), found
    assert any(f.startswith(f"{markdown_name}:{row}: is not the rendering") for f in found), found
    rendered, _ = render_report(edited)
    found = content_findings(rendered, edited, markdown_name, data_name)
    assert len(found) == 1 and "its results do not match the digest" in found[0], found


@pytest.mark.parametrize("package", page_packages(), ids=page_ids(page_packages()))
def test_a_failure_edited_to_hold_is_caught(package):
    """A run whose report lists a failure (an every-seed claim failing at seed
    1, made here from the committed data with its digest), edited so the
    failure reads as holding: the check of the Markdown alone
    (test_every_claim_holds_where_it_must) passes it; the digest or the
    rendering does not."""
    markdown, data, markdown_name, data_name = committed_report(package)
    failing = copy.deepcopy(data)
    name, section = next((n, s) for n, s in failing["sections"].items() if s["claims"] and "seed 1" in s["runs"])
    claim = next(c for c in section["claims"] if c["every_seed"])
    claim["holds"]["seed 1"] = False
    claim["detail"] = {"seed 1": "measured 9.99"}
    failing[DIGEST_KEY] = results_digest(failing)
    failing_markdown, failures = render_report(failing)
    assert failures == [f"{name}: {claim['statement']} FAILS under seed 1 (measured 9.99)"], failures
    assert content_findings(failing_markdown, failing, markdown_name, data_name) == []
    # The hand edit: the cell, the section's verdict, the JSON's result.
    forged_markdown = failing_markdown.replace("| **FAILS** (measured 9.99) |", "| holds |").replace(
        f"- {name}: 1 failure(s);", f"- {name}: every claim holds where it must;"
    )
    assert "**FAILS**" not in forged_markdown
    forged = copy.deepcopy(failing)
    forged["sections"][name]["claims"][section["claims"].index(claim)]["holds"]["seed 1"] = True
    found = content_findings(forged_markdown, forged, markdown_name, data_name)
    assert [f.split(":")[0] for f in found] == [data_name], found
    assert "its results do not match the digest the run wrote into them" in found[0], found
    found = content_findings(forged_markdown, failing, markdown_name, data_name)
    assert len(found) == 1 and found[0].startswith(f"{markdown_name}:"), found


def sensitive_quotes(package: str, section: str) -> set[str]:
    text = read_report(package)
    block = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    line = re.search(r"Rounding-sensitive quotes: (.*)\.", block).group(1)
    return set() if line == "none" else set(line.split(", "))


RUN_UNDER_VARIANT = """
import json, sys
from pagekit import cli
module = cli.section_module({package!r}, {section!r})
section = cli.run_section(module, figures=False, write=False)
print(json.dumps(section.record()))
"""


@pytest.mark.slow
def test_chaotic_section_under_another_variant_keeps_claims_and_rounded_texts():
    skip_bit_level()  # where the pin cannot hold, a variant's kernels are not applied either
    # unit_mismatch: under this variant five of its quotes move (the report
    # lists them as rounding-sensitive) and the rest must not, so both sides
    # of the promise are checked; a second of CPU.
    package, section, variant = "normalisation_and_stability", "unit_mismatch", "openblas-sandybridge"
    code = RUN_UNDER_VARIANT.format(package=package, section=section)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, numeric_env.VARIANT_ENV: variant},
    )
    assert done.returncode == 0, done.stderr  # a failed claim fails the run, with its values
    record = json.loads(done.stdout.strip().splitlines()[-1])
    assert record["variant"] == variant and record["environment"]["openblas_core"] == "Sandybridge"
    committed = json.loads(
        (REPO_ROOT / "figures" / page_config(package).PAGE / "numbers" / f"{section}.json").read_text(encoding="utf-8")
    )
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


TORCH_ONLY_PACKAGES = [p for p in page_packages() if getattr(page_config(p), "TORCH_ONLY_SECTIONS", ())]
THREAD_EXACT_PACKAGES = [p for p in page_packages() if getattr(page_config(p), "THREAD_EXACT_SECTIONS", ())]
TWO_THREADS = [v for v in robustness_report.variants() if robustness_report.threads_only(v)]


def skipped_variants_checked(package: str, section: str) -> list[str]:
    script = next(s for s in experiment_sections([package]) if s.name == section)
    return [
        v
        for v in robustness_report.variants()
        if robustness_report.skip_reason(script, v) in robustness_report.CHECKED_SKIPS
    ]


def assert_skips_checked(package: str, section: str, variants: list[str]) -> None:
    """The committed report checked this section's skips under these
    variants (among others) and found no difference."""
    data = json.loads(data_path(page_config(package).PAGE).read_text(encoding="utf-8"))
    check = data["sections"][section].get("skip_check")
    assert check, f"{section}: the report did not check its skips: run `make robustness`"
    assert set(variants) <= set(check["same"]), f"{section}: skips under {variants} not checked: run `make robustness`"
    assert check["same"] == {v: True for v in skipped_variants_checked(package, section)}, (
        f"{section}: skipped under variants that change it: {check.get('differences')}"
    )
    assert check["quotes"] > 0 and check["claims"] > 0, f"{section}: a skip check that compares nothing"


@pytest.mark.parametrize("package", TORCH_ONLY_PACKAGES, ids=page_ids(TORCH_ONLY_PACKAGES))
def test_skipped_variants_were_checked_to_change_nothing(package):
    """The report skips numpy's X86_V2 loops for the sections a page lists
    as torch-only, and checks that skip on the runs: the section's reduced
    run (the same code paths) under that variant gave exactly the pinned
    reduced run's values and claims. (Under the pin torch's products run on
    OpenBLAS, so an OpenBLAS variant does change them: they are rerun under
    the first, SAMPLING_OPENBLAS_VARIANT, and skipped, unchecked, under the
    second; see test_torch_only_sections_are_rerun_under_one_openblas_variant.)
    The check is the report's (it fails the report); here, that the
    committed report made it for every such section and variant and found
    no difference. The report is current for the sections' inputs
    (test_report_is_current_for_every_section), so the check is too: a
    section that starts to depend on numpy or OpenBLAS makes the report
    stale, and its rerun checks the skip again."""
    for section in page_config(package).TORCH_ONLY_SECTIONS:
        variants = skipped_variants_checked(package, section)
        assert {"numpy-x86-v2"} <= set(variants), section
        assert not any(v.startswith("openblas") for v in variants), section
        assert_skips_checked(package, section, variants)


@pytest.mark.parametrize("package", TORCH_ONLY_PACKAGES, ids=page_ids(TORCH_ONLY_PACKAGES))
def test_torch_only_sections_are_rerun_under_one_openblas_variant(package):
    """torch's products run on OpenBLAS under the pin: a torch-only section
    runs under SAMPLING_OPENBLAS_VARIANT and no other OpenBLAS variant; a
    section that computes with numpy runs under every OpenBLAS variant."""
    openblas = [v for v in robustness_report.variants() if robustness_report.openblas_only(v)]
    assert robustness_report.SAMPLING_OPENBLAS_VARIANT in openblas and len(openblas) > 1
    torch_only = set(page_config(package).TORCH_ONLY_SECTIONS)
    for script in experiment_sections([package]):
        run = {v for v in openblas if robustness_report.skip_reason(script, v) is None}
        expected = {robustness_report.SAMPLING_OPENBLAS_VARIANT} if script.name in torch_only else set(openblas)
        assert run == expected, script.name


@pytest.mark.parametrize("package", THREAD_EXACT_PACKAGES, ids=page_ids(THREAD_EXACT_PACKAGES))
def test_sections_not_retrained_on_two_threads_were_checked_to_give_the_same_values(package):
    """The report does not retrain a section its page lists in
    THREAD_EXACT_SECTIONS on two torch threads: its reduced run there (the
    full run's widths and batch sizes, a few steps) gave exactly the one-thread reduced run's
    values and claims. Such a section measures nothing (a measured quote is
    not compared, so a timing would pass the check while its numbers move)
    and its numbers come from torch alone (a numpy or OpenBLAS thread
    count is not the variant's)."""
    assert TWO_THREADS == ["torch-two-threads"], TWO_THREADS
    config = page_config(package)
    for section in config.THREAD_EXACT_SECTIONS:
        assert section in config.TORCH_ONLY_SECTIONS, f"{section}: thread-exact but not torch-only"
        script = next(s for s in experiment_sections([package]) if s.name == section)
        assert robustness_report.skip_reason(script, TWO_THREADS[0]) is robustness_report.THREAD_EXACT, section
        measured = [
            k
            for k, q in json.loads(script.numbers_path.read_text(encoding="utf-8"))["quotes"].items()
            if q.get("measured")
        ]
        assert not measured, f"{section} measures {measured[:3]}: two threads change it"
        assert_skips_checked(package, section, TWO_THREADS)


def test_only_a_thread_count_variant_is_skipped_as_thread_exact():
    """The thread skip applies to the variant that changes nothing but
    torch's thread count, for the listed sections only."""
    package = THREAD_EXACT_PACKAGES[0]
    listed = set(page_config(package).THREAD_EXACT_SECTIONS)
    for script in experiment_sections([package]):
        for variant in robustness_report.variants():
            thread_skip = robustness_report.skip_reason(script, variant) is robustness_report.THREAD_EXACT
            assert thread_skip == (variant in TWO_THREADS and script.name in listed), (script.name, variant)


def test_a_skip_check_finds_a_changed_value_or_claim():
    """The comparison the report's skip check makes: a changed value, a
    missing quote, a flipped claim and a lost claim are each found; NaN
    equals NaN; measured quotes are not compared."""
    record = {
        "quotes": {"a": {"value": 1.0}, "b": {"value": [2.0, float("nan")]}, "t": {"value": 3.1, "measured": True}},
        "claims": [{"statement": "x < y", "holds": True}, {"statement": "z", "holds": False}],
    }
    pinned = robustness_report.deterministic_part(record)

    def changed(edit) -> list[str]:
        other = json.loads(json.dumps(record))
        edit(other)
        return robustness_report.differences(pinned, robustness_report.deterministic_part(other))

    assert changed(lambda r: None) == []
    assert changed(lambda r: r["quotes"]["t"].update(value=9.9)) == []
    assert changed(lambda r: r["quotes"]["a"].update(value=1.0000001)) == ["quote a: 1.0 -> 1.0000001"]
    assert changed(lambda r: r["quotes"]["b"]["value"].__setitem__(1, 0.0)) == ["quote b: [2.0, NaN] -> [2.0, 0.0]"]
    assert changed(lambda r: r["quotes"].pop("a")) == ["quote a: 1.0 -> null"]
    assert changed(lambda r: r["claims"][0].update(holds=False)) == ["claim 'x < y': holds True -> False"]
    assert changed(lambda r: r["claims"].pop()) == ["2 claims -> 1"]


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


RUN_WITHOUT_TORCH = """
import json, sys
from pagekit import cli
for package, name in {sections!r}:
    cli.run_section(cli.section_module(package, name), figures=False, write=False)
print(json.dumps(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))))
"""


def test_sections_skipped_under_the_torch_variants_never_import_torch():
    """The report skips the torch variants for a section whose code it
    finds never loads torch (robustness_report.loads_torch, read from the
    code): run in a fresh interpreter, those sections leave torch unimported."""
    sections = [
        (s.package, s.name)
        for s in experiment_sections(page_packages())
        if robustness_report.skip_reason(s, "torch-default") is robustness_report.NO_TORCH
    ]
    assert sections, "no section is skipped under the torch variants: this test checks nothing"
    code = RUN_WITHOUT_TORCH.format(sections=sections)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert not imported, f"{sections} imported {imported[:5]}: the report must rerun them under the torch variants"


@pytest.mark.parametrize("package", page_packages(), ids=page_ids(page_packages()))
def test_a_sweep_claim_is_reported_point_by_point(package):
    """Every sweep claim of the committed report (issue 39) has one row per
    point, each with a cell per run, and a point that did not hold in a run
    where it must shows as a failure in the claim's own row."""
    markdown, data, _, _ = committed_report(package)
    sweeps = [
        (section, claim)
        for section, mine in data["sections"].items()
        for claim in mine.get("claims", [])
        if claim.get("sweep")
    ]
    if package == "normalisation_layers":
        assert len(sweeps) >= 5, "page 2's sections 3 to 5 state their results as sweeps"
    for section, claim in sweeps:
        for point, outcomes in claim["sweep"]["points"].items():
            row = f"| at {claim['sweep']['over']} {point} |"
            assert row in markdown, f"{section}: no row for {row}"
            for run, held in outcomes.items():
                if held is False and claim["every_seed"]:
                    assert claim["holds"][run] is False, f"{section}: {point} failed under {run} but the claim held"
