"""`make robustness` (also `make seeds`): which results survive another seed,
and which survive other rounding.

Every section of every page reruns at seed offsets 0, 1 and 2 under the
pinned numeric environment, and at seed offset 0 under each other numeric
variant of numeric_env (other OpenBLAS kernels, numpy's loops at its X86_V2
baseline, torch without AVX, two torch threads). Nothing is written to figures/ but the report,
figures/<page>/robustness-report.md:

- per claim, held or failed under every seed and variant, with the measured
  values of every failure. An every-seed claim must hold everywhere; a claim
  about the page's own run (every_seed=False) must hold at seed offset 0
  under every variant;
- per quote, its text under every seed and variant, with mean ± sd over the
  seeds; a quote whose text changes under a variant at seed 0 is marked
  rounding-sensitive, and the section lists its rounding-sensitive quotes.

The page's own run (seed offset 0, pinned) is not repeated: its committed
numbers are used when they are current for the section's inputs. A run
whose variant cannot change the section is not made (skip_reason): a
section its page lists in TORCH_ONLY_SECTIONS is not rerun under the
variant that changes only numpy's own loops (numpy only copies, compares and
formats its numbers), nor under the second OpenBLAS variant (its matrix
products' OpenBLAS rounding is sampled by the first, at less cost), and
a section whose code never loads torch is not rerun under the variants that
change only torch, and a section its page lists in THREAD_EXACT_SECTIONS
is not rerun under the variant that changes only the number of torch
threads (at its tensor sizes two threads are expected to compute the same
values as one).
The report gives the reason in those cells. The numpy skip and
the thread skip are checked here, on the runs (skip_check): each such
section's reduced run (the same code paths, with the full run's widths
and batch sizes, in a few steps) is made under every variant it is skipped for and under the pinned
environment, and must give the same values and claim outcomes; a
difference fails the report. A test checks that a section found not to
load torch never imports it.

Every finished run is kept under build/runs/robustness/cache/ with its
section's inputs hash: an interrupted report loses no finished run, and the
next one reruns only the runs whose inputs changed or that never finished.

The runs form one schedule (run_all, on executor.run_jobs): every section,
seed and variant in one list, longest first by the CPU time each took last
time, as many at a time as there are cores, the next starting as soon as one
ends, so no core idles while runs wait. A variant needs an interpreter of its
own (the libraries read the environment when they load): the pinned runs go
to workers forked from this process, each other variant to workers spawned
under it. `--scheduler ADDRESS` sends them to a running Dask cluster instead
(executor.DaskExecutors), whose workers declare the variant they run.
The report records each section's inputs hash, so a test can tell it is
current without rerunning anything. Its content is checked too: the run
writes its results (robustness.json, section_data) with a digest over them
(results_digest), and the Markdown is rendered from that data alone
(render_report), so a test re-renders the committed JSON and compares it
with the committed Markdown, and recomputes the digest (content_findings):
a cell edited by hand in either file fails. Exit status 1 if any claim fails or any
section errors.
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import json
import os
import signal
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pagekit import executor
from pagekit.run_sections import (
    BUILD_DIR,
    FIGURES_DIR,
    REPO_ROOT,
    SectionScript,
    all_sections,
    current_hash,
    interrupted,
    needs,
    resolve_pages,
)
from pagekit.run_sections import TIMES_FILE as FIGURES_TIMES
from pagekit.run_sections import load_for_workers, share_runs
from pagekit import numeric_env
from pagekit import inputs as section_inputs
from pagekit.registry import PageNameError, page_config, rel_path

SKIPPED = "n/a"  # a cell for a run that cannot change the section (see skip_reason)
OFFSETS = (0, 1, 2)
PAGE_RUN = (numeric_env.PINNED, 0)
# A run is (variant, seed offset), or (variant, 0, REDUCED): a section's
# reduced configuration, made only to check a skip (skip_check_runs).
REDUCED = "reduced"
RUNS_DIR = BUILD_DIR / "runs" / "robustness"
# Every finished run, keyed by its inputs hash: an interrupted or failed
# report loses no finished run, and the next one reruns only what is missing.
CACHE_DIR = RUNS_DIR / "cache"
HASH_LINE = "<!-- inputs {section} {hash} -->"


def report_path(page: str) -> Path:
    return FIGURES_DIR / page / "robustness-report.md"


def data_path(page: str) -> Path:
    """The report's results as JSON, read by a page's "across three seeds" section."""
    return FIGURES_DIR / page / "robustness.json"


def variants() -> list[str]:
    return [v for v in numeric_env.VARIANTS if v != numeric_env.PINNED]


def experiment_sections(pages: list[str]) -> list[SectionScript]:
    """The sections the report reruns: all but those a page lists in
    DERIVED_SECTIONS (computed from this report's own data)."""
    return [s for s in all_sections(pages) if s.name not in getattr(page_config(s.package), "DERIVED_SECTIONS", ())]


# The numeric variants' settings, by the library that reads them.
LIBRARY_OF_SETTING = {
    "OPENBLAS_": "OpenBLAS",
    "NPY_": "numpy",
    "ATEN_": "torch",
    "MKL_": "torch",
    "ONEDNN_": "torch",
    "TORCH_": "torch",
}


def variant_libraries(variant: str) -> frozenset[str]:
    """The libraries whose settings a variant changes; a setting of no
    library named here counts as every library's (it may change anything)."""
    found = set()
    for key in numeric_env.VARIANTS[variant]:
        owner = next((lib for prefix, lib in LIBRARY_OF_SETTING.items() if key.startswith(prefix)), None)
        found.add(owner or "any")
    return frozenset(found)


def openblas_only(variant: str) -> bool:
    """A variant that changes nothing but OpenBLAS's settings."""
    return variant_libraries(variant) == {"OpenBLAS"}


def threads_only(variant: str) -> bool:
    """A variant that changes nothing but the number of torch threads."""
    return set(numeric_env.VARIANTS[variant]) == {"TORCH_NUM_THREADS"}


# What loads torch in a section's code: the module itself, or pagekit's
# functions that import it.
TORCH_NAMES = frozenset({"torch", "import_torch", "torch_generator"})


@functools.cache  # the code does not change during a report
def loads_torch(script: SectionScript) -> bool:
    """Whether the section's code (its script and the page modules it
    imports, see section_inputs) can load torch: an import of torch, or a
    use of a name in TORCH_NAMES. Read from the code, so a section that
    starts using torch is rerun under the torch variants at once; a test
    checks that a section found not to load torch never imports it."""
    try:
        paths = [
            p
            for p in section_inputs.section_inputs(script.package, script.name)
            if p.suffix == ".py" and p.parent.name == script.package
        ]
    except section_inputs.InputError:
        return True  # its run reports the error
    for path in paths:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, OSError):
            return True
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [(node.module or "").split(".")[0]] + [alias.name for alias in node.names]
            elif isinstance(node, ast.Name):
                names = [node.id]
            elif isinstance(node, ast.Attribute):
                names = [node.attr]
            else:
                continue
            if TORCH_NAMES.intersection(names):
                return True
    return False


@dataclass(frozen=True)
class Skip:
    """Why a variant cannot change a section: the report's cell and sentence."""

    cell: str
    why: str


# The torch-only and thread skips are checked on the runs here (skip_check), the no-torch
# one by a test (a section found not to load torch never imports it). In
# ``why``, {change} becomes "that variant changes" or "those variants change".
# Under the pin torch's matrix products run on OpenBLAS (numeric_env), so an
# OpenBLAS variant changes a torch section too. One such variant is enough to
# learn which of a torch-only section's quotes survive another rounding of its
# products; Prescott's SSE3 kernels make those sections about 1.8 times slower
# than Sandybridge's, for the same kind of change, so they take Sandybridge's.
SAMPLING_OPENBLAS_VARIANT = "openblas-sandybridge"
TORCH_OPENBLAS_SAMPLED = Skip(
    f"{SKIPPED}: sampled",
    "its numbers come from torch alone, whose matrix products "
    f"`{SAMPLING_OPENBLAS_VARIANT}` already reruns on other OpenBLAS kernels, and "
    "{change} only OpenBLAS",
)
TORCH_ONLY_NUMPY = Skip(
    f"{SKIPPED}: numpy exact",
    "its numbers come from torch; numpy only copies, compares, "
    "selects (maximum, median) and formats them, operations whose results no SIMD loop "
    "changes, and {change} only numpy's own loops",
)
NO_TORCH = Skip(f"{SKIPPED}: no torch", "it never loads torch, and {change} only torch's settings")
# Whether torch splits one of its operators between threads depends on the
# tensors' sizes and the thread count, not on their values, and the reduced
# run has the full run's widths and batch sizes; so a reduced run with the
# same values under both thread counts is strong evidence (not proof: MKL's
# vector maths may split by rules of its own; torch's matrix products run on
# OpenBLAS, one thread whatever torch's count) that the full run's are the same;
# `make thread-check` compares a full run of each model on both thread counts.
THREAD_EXACT = Skip(
    f"{SKIPPED}: threads exact",
    "its page lists it as one that two torch threads compute as one "
    "thread does, at its tensor sizes (checked below on its reduced run, which has the full "
    "run's widths and batch sizes), and {change} only the number of torch threads",
)


def skip_reason(script: SectionScript, variant: str) -> Skip | None:
    """Why this variant cannot change this section's numbers, or None: it must run."""
    if variant == numeric_env.PINNED:
        return None
    libraries = variant_libraries(variant)
    if script.name in getattr(page_config(script.package), "TORCH_ONLY_SECTIONS", ()):
        if libraries == {"OpenBLAS"} and variant != SAMPLING_OPENBLAS_VARIANT:
            return TORCH_OPENBLAS_SAMPLED
        if libraries == {"numpy"}:
            return TORCH_ONLY_NUMPY
    if libraries == {"torch"} and not loads_torch(script):
        return NO_TORCH
    if threads_only(variant) and script.name in getattr(page_config(script.package), "THREAD_EXACT_SECTIONS", ()):
        return THREAD_EXACT
    return None


# The skips this report checks on the runs (skip_check_runs, skip_check).
CHECKED_SKIPS = (TORCH_ONLY_NUMPY, THREAD_EXACT)


def skip_check_runs(script: SectionScript) -> list[tuple]:
    """The reduced runs that check this section's checked skips (torch-only,
    threads exact): the pinned one to compare with, then one under every
    variant skipped for it so (none when no variant is). Reduced: the same
    code paths in a few steps, as the golden record pins them."""
    checked = [v for v in variants() if skip_reason(script, v) in CHECKED_SKIPS]
    return [(numeric_env.PINNED, 0, REDUCED)] + [(v, 0, REDUCED) for v in checked] if checked else []


def deterministic_part(record: dict) -> dict:
    """What a variant that cannot change a section must leave alone: its
    quotes that are not measurements, and its claims' words and results."""
    return {
        "quotes": {k: q["value"] for k, q in record["quotes"].items() if not q.get("measured")},
        "claims": [[c["statement"], c["holds"]] for c in record["claims"]],
    }


def differences(pinned: dict, other: dict) -> list[str]:
    """Where two deterministic parts differ (values compared as JSON text,
    so a NaN equals a NaN); [] when they are the same."""

    def same(a, b) -> bool:
        return json.dumps(a) == json.dumps(b)

    found = [
        f"quote {k}: {json.dumps(v)} -> {json.dumps(other['quotes'].get(k))}"
        for k, v in pinned["quotes"].items()
        if not same(v, other["quotes"].get(k))
    ]
    found += [f"quote {k}: only here" for k in other["quotes"] if k not in pinned["quotes"]]
    if len(pinned["claims"]) != len(other["claims"]):
        found.append(f"{len(pinned['claims'])} claims -> {len(other['claims'])}")
    else:
        found += [
            f"claim {a[0]!r}: holds {a[1]} -> {b[1]}" + ("" if a[0] == b[0] else f" ({b[0]!r})")
            for a, b in zip(pinned["claims"], other["claims"], strict=True)
            if not same(a, b)
        ]
    return found


def skip_check(script: SectionScript, results: dict) -> dict:
    """The data of the check of a section's checked skips ({} when it has
    none): its reduced run under each skipped variant must give exactly the
    values and claims of its pinned reduced run (render_skip_check shows it)."""
    runs = skip_check_runs(script)
    if not runs:
        return {}
    name = script.name
    missing = [run for run in runs if not (results.get((name, run)) or {}).get("record")]
    if missing:

        def last_line(run) -> str:
            error = ((results.get((name, run)) or {}).get("error") or "no result").strip()
            return error.splitlines()[-1] if error else "no output"

        return {
            "error": [
                f"{name}: the skip check's run under {run_label(*run)} failed: {last_line(run)}" for run in missing
            ]
        }
    parts = {run: deterministic_part(results[(name, run)]["record"]) for run in runs}
    pinned = parts[runs[0]]
    found = {run[0]: differences(pinned, parts[run]) for run in runs[1:]}
    return {
        "runs": [run_label(*run) for run in runs],
        "quotes": len(pinned["quotes"]),
        "claims": len(pinned["claims"]),
        "same": {v: not d for v, d in found.items()},
        "differences": {v: d for v, d in found.items() if d},
    }


def render_skip_check(name: str, data: dict) -> tuple[list[str], list[str]]:
    """(Markdown lines, failures) of a section's skip check, from its data."""
    if not data:
        return [], []
    if "error" in data:
        return [f"- **ERROR** {e}" for e in data["error"]] + [""], list(data["error"])
    found = {v: data["differences"].get(v, []) for v in data["same"]}
    variant_names = ", ".join(f"`{v}`" for v in found)
    if not any(found.values()):
        line = (
            f"Skip checked: its reduced run gives the same {data['quotes']} values and {data['claims']} "
            f"claims under {variant_names} as under the pinned environment."
        )
        return [line, ""], []
    lines, failures = [], []
    for variant, diffs in found.items():
        if diffs:
            lines.append(
                f"- **FAILS** skip check under `{variant}`: "
                + "; ".join(diffs[:5])
                + (f"; and {len(diffs) - 5} more" if len(diffs) > 5 else "")
            )
            failures.append(
                f"{name}: skipped under {variant}, but its reduced run there differs: " + "; ".join(diffs[:3])
            )
    return lines + [""], failures


def section_runs(script: SectionScript, runs: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The runs that can change this section (see skip_reason)."""
    return [run for run in runs if skip_reason(script, run[0]) is None]


def page_run_record(script: SectionScript, inputs_hash: str | None = None) -> dict | None:
    """The committed numbers of the page's own run, when current for the
    inputs (``inputs_hash``: their hash, if the caller has it)."""
    try:
        record = json.loads(script.numbers_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    current = inputs_hash or current_hash(script)
    if (
        not isinstance(record, dict)
        or current is None
        or record.get("inputs_hash") != current
        or record.get("seed_offset") != 0
        or record.get("variant") != numeric_env.PINNED
        or record.get("reduced")
    ):
        return None
    return record


def is_reduced(run: tuple) -> bool:
    return len(run) > 2 and run[2] == REDUCED


def cache_path(script: SectionScript, run: tuple) -> Path:
    suffix = f"-{REDUCED}" if is_reduced(run) else ""
    return CACHE_DIR / f"{script.package}.{script.name}-{run[0]}-seed{run[1]}{suffix}.json"


def cached_result(script: SectionScript, run: tuple[str, int], inputs_hash: str | None = None) -> dict | None:
    """A finished run of these very inputs, if one was kept."""
    try:
        kept = json.loads(cache_path(script, run).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(kept, dict)
        or kept.get("inputs_hash") is None
        or kept["inputs_hash"] != (inputs_hash or current_hash(script))
    ):
        return None
    return kept.get("result")


def keep_result(script: SectionScript, run: tuple[str, int], result: dict, inputs_hash: str | None = None) -> None:
    """Keep a successful run (a failed one reruns next time) under the hash
    of the inputs it ran with (default: now); a cache, so a failed write is
    not an error."""
    if not result.get("ok"):
        return
    from pagekit.atomic import write_json_atomically

    try:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        write_json_atomically(
            cache_path(script, run),
            {
                "inputs_hash": inputs_hash or current_hash(script),
                "result": {k: v for k, v in result.items() if k != "script"},
            },
        )
    except OSError:
        pass


def run_label(variant: str, offset: int, kind: str | None = None) -> str:
    label = f"seed {offset}" if variant == numeric_env.PINNED else f"{variant}"
    return f"{label}, {kind}" if kind else label


# ---------------------------------------------------------------------------
# Running: one schedule for every run, longest first, on every core.


# What each run cost last time, in CPU seconds, for the next schedule's order
# (a cache, not committed; beside make figures' own times, so emptying the
# run cache keeps it).
COSTS_FILE = BUILD_DIR / "robustness-costs.json"
# Where the last report's schedule is kept (each run's start, end and CPU),
# to see how busy the cores were.
SCHEDULE_FILE = RUNS_DIR / "last-schedule.json"


def cost_key(script: SectionScript, run: tuple) -> str:
    return f"{script.package}.{script.name} {run[0]}" + (f" {REDUCED}" if is_reduced(run) else "")


def estimated_cost(script: SectionScript, run: tuple, costs: dict, times: dict) -> float:
    """CPU seconds a run should take: its own last cost, else the section's
    under the pinned kernels, else make figures' last time for it (a
    reduced run without a cost of its own: a second)."""
    pinned = (numeric_env.PINNED, *run[1:])
    for key in (cost_key(script, run), cost_key(script, pinned)):
        if isinstance(costs.get(key), (int, float)):
            return float(costs[key])
    return 1.0 if is_reduced(run) else float(times.get(script.name) or 0.0)


def read_json_dict(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_cache_file(path: Path, data) -> None:
    """A cache or record under build/: a failed write is not an error."""
    from pagekit.atomic import write_json_atomically

    try:
        write_json_atomically(path, data)
    except OSError:
        pass


def run_all(
    jobs: list[tuple[SectionScript, tuple]],
    progress,
    cores: int | None = None,
    hashes: dict | None = None,
    executors=None,
) -> dict:
    """{(section name, run): result} for every job (a section and its run:
    variant, seed offset, and REDUCED for a reduced run), longest first on
    ``cores`` cores (default: all), on ``executors`` (default: local process
    pools), each kept in the cache as it ends under its section's inputs
    hash (``hashes``: as decided by the caller)."""
    if not jobs:
        return {}
    cores = cores or os.cpu_count() or 1
    hashes = {s: (hashes or {}).get(s) or current_hash(s) for s in {job[0] for job in jobs}}
    costs, times = read_json_dict(COSTS_FILE), read_json_dict(FIGURES_TIMES)
    estimate = {job: estimated_cost(job[0], job[1], costs, times) for job in jobs}
    # Longest first; among runs of unknown cost, the heavier sections first.
    ordered = sorted(jobs, key=lambda job: (-estimate[job], -needs(job[0])))
    section_jobs = [
        executor.Job(
            script,
            seed_offset=run[1],
            figures=False,
            write=False,
            inputs_hash=hashes[script],
            reduced=is_reduced(run),
            variant=run[0],
        )
        for script, run in ordered
    ]
    run_of = dict(zip(section_jobs, ordered, strict=True))
    started_at = time.perf_counter()
    began: dict = {}
    results, schedule = {}, []

    def announce(event: str, job: executor.Job, result: dict | None) -> None:
        script, run = run_of[job]
        if event == "start":
            began[job] = time.perf_counter()
            return
        result = dict(result)
        result.pop("script", None)
        results[(script.name, run)] = result
        keep_result(script, run, result, hashes[script])
        if result["ok"]:
            costs[cost_key(script, run)] = round(result["cpu"], 2)
        start = began.get(job, time.perf_counter())
        schedule.append(
            {
                "section": f"{script.package}.{script.name}",
                "variant": run[0],
                "seed_offset": run[1],
                "reduced": is_reduced(run),
                "start": round(start - started_at, 2),
                "end": round(time.perf_counter() - started_at, 2),
                "cpu": round(result["cpu"], 2),
                "estimate": round(estimate[run_of[job]], 2),
            }
        )
        progress(
            f"{script.name} under {run_label(*run)}: "
            + ("done" if result["ok"] else "ERROR")
            + f" ({time.perf_counter() - start:.1f} s, {result['cpu']:.1f} s CPU)"
        )

    if executors is None:  # the pinned runs fork from here: import what they need first
        load_for_workers(sorted({job.script for job in section_jobs}, key=lambda s: (s.package, s.name)))
    try:
        executor.run_jobs(
            section_jobs,
            cores=cores,
            executors=executors,
            priority=lambda job: estimate[run_of[job]],
            announce=announce,
        )
    finally:  # also on an interrupt: keep what finished
        write_cache_file(COSTS_FILE, costs)
    wall = time.perf_counter() - started_at
    busy = sum(entry["cpu"] for entry in schedule)
    write_cache_file(SCHEDULE_FILE, {"cores": cores, "wall": round(wall, 2), "cpu": round(busy, 2), "runs": schedule})
    progress(
        f"{len(jobs)} run(s) in {wall:.1f} s on {cores} core(s): {busy:.0f} CPU-s of runs, "
        f"the cores {min(1.0, busy / (wall * cores)):.0%} busy ({rel_path(SCHEDULE_FILE)})"
    )
    return results


# ---------------------------------------------------------------------------
# Reporting.


class ReportDataError(ValueError):
    """The report's data cannot be rendered (a run neither made nor skipped,
    a skip reason this report does not give)."""


def report_runs() -> list[tuple[str, int]]:
    """Every run of the report, in its columns' order: the seeds under the
    pinned environment, then seed offset 0 under each other variant."""
    return [(numeric_env.PINNED, off) for off in OFFSETS] + [(v, 0) for v in variants()]


# Every skip the report gives, to read a skipped run's cell back from its reason.
SKIPS = (TORCH_OPENBLAS_SAMPLED, TORCH_ONLY_NUMPY, NO_TORCH, THREAD_EXACT)
DIGEST_KEY = "results_sha256"


def results_digest(data: dict) -> str:
    """sha256 of the report's results: its data but this digest, as
    canonical JSON (keys sorted). The run that made the results writes it
    into them (page_report); a test recomputes it, so a cell edited by hand
    in robustness.json no longer matches its digest."""
    body = {k: v for k, v in data.items() if k != DIGEST_KEY}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def claim_cell(holds: bool | None, detail: str, must_hold: bool) -> tuple[str, bool]:
    """(cell text, is a failure) of a claim's result in one run (None: the
    run did not make the claim)."""
    if holds is None:
        return "**missing**", True
    if holds:
        return "holds", False
    detail = f" ({detail})" if detail else ""
    if must_hold:
        return f"**FAILS**{detail}", True
    return f"not here{detail}", False


def section_data(script: SectionScript, runs: list[tuple[str, int]], results: dict) -> dict:
    """One section's results, machine-readable: everything its part of the
    Markdown shows (render_section renders it from this alone)."""
    name = script.name
    applicable = section_runs(script, runs)
    skips = {run: skip_reason(script, run[0]) for run in runs if run not in applicable}
    mine = {
        "runs": [run_label(*run) for run in applicable],
        "claims": [],
        "quotes": {},
        "skipped": {run_label(*run): skip.why.format(change="that variant changes") for run, skip in skips.items()},
    }
    check = skip_check(script, results)
    if check:
        mine["skip_check"] = check
    errors = {}
    for run in applicable:
        if not results[(name, run)]["record"]:
            error = results[(name, run)]["error"] or ""
            errors[run_label(*run)] = error.strip().splitlines()[-1] if error.strip() else "no output"
    if errors:
        mine["errors"] = errors
        return mine
    records = {run: results[(name, run)]["record"] for run in applicable}
    by_statement = {run: {c["statement"]: c for c in records[run]["claims"]} for run in applicable}
    for claim in records[PAGE_RUN]["claims"]:
        found = {run_label(*run): by_statement[run].get(claim["statement"]) for run in applicable}
        entry = {
            "statement": claim["statement"],
            "every_seed": claim.get("every_seed", True),
            "holds": {label: (other or {}).get("holds") for label, other in found.items()},
        }
        # What was measured where the claim did not hold (the cell shows it).
        details = {
            label: other["detail"]
            for label, other in found.items()
            if other and not other["holds"] and other.get("detail")
        }
        if details:
            entry["detail"] = details
        if claim.get("sweep"):
            # A sweep claim: whether it held at each of its points, in each run.
            entry["sweep"] = {
                "over": claim["sweep"]["over"],
                "points": {
                    point: {
                        label: ((other or {}).get("sweep") or {}).get("points", {}).get(point)
                        for label, other in found.items()
                    }
                    for point in claim["sweep"]["points"]
                },
            }
        mine["claims"].append(entry)
    for element, texts, values, measured in quote_elements(records, applicable):
        mine["quotes"][element] = {
            "measured": measured,
            "text": {run_label(*run): texts[run] for run in applicable},
            "value": {run_label(*run): (None if values[run] != values[run] else values[run]) for run in applicable},
        }
    return mine


def skip_of(section: str, why: str) -> Skip:
    """The skip whose reason (as section_data words it) is ``why``."""
    for skip in SKIPS:
        if skip.why.format(change="that variant changes") == why:
            return skip
    raise ReportDataError(f"{section}: a skip reason this report does not give: {why!r}")


def render_section(name: str, mine: dict, runs: list[tuple[str, int]]) -> tuple[list[str], list[str], list[str]]:
    """Markdown lines for one section, its failures (one line each), and its
    rounding-sensitive quotes, from its data (section_data) alone."""
    lines = [f"## {name}", ""]
    failures: list[str] = []
    label = {run: run_label(*run) for run in runs}
    stray = [x for x in [*mine["runs"], *mine["skipped"]] if x not in label.values()]
    unaccounted = [label[run] for run in runs if label[run] not in mine["runs"] and label[run] not in mine["skipped"]]
    if stray or unaccounted:
        raise ReportDataError(
            f"{name}: the data's runs are not the report's: "
            + "; ".join(
                [f"{x} is no run of the report" for x in stray] + [f"{x} neither run nor skipped" for x in unaccounted]
            )
        )
    applicable = [run for run in runs if label[run] in mine["runs"]]
    skips = {run: skip_of(name, mine["skipped"][label[run]]) for run in runs if run not in applicable}
    for skip in dict.fromkeys(skips.values()):
        named = [f"`{run[0]}`" for run, s in skips.items() if s == skip]
        listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
        change = "that variant changes" if len(named) == 1 else "those variants change"
        lines += [f'Not rerun under {listed} ("{skip.cell}" below): {skip.why.format(change=change)}.', ""]
    check_lines, check_failures = render_skip_check(name, mine.get("skip_check", {}))
    lines += check_lines
    failures += check_failures
    if mine.get("errors"):
        for run in applicable:
            if label[run] in mine["errors"]:
                last = mine["errors"][label[run]]
                lines.append(f"- **ERROR** under {label[run]}: `{last}`")
                failures.append(f"{name} under {label[run]}: error: {last}")
        return lines + [""], failures, []
    header = " | ".join(label[run] for run in runs)
    lines += ["| claim | must hold | " + header + " |", "|---|---|" + "---|" * len(runs)]
    for claim in mine["claims"]:
        every_seed = claim["every_seed"]
        cells = []
        for run in runs:
            if run not in applicable:
                cells.append(skips[run].cell)
                continue
            holds = claim["holds"].get(label[run])
            detail = claim.get("detail", {}).get(label[run], "")
            cell, failed = claim_cell(holds, detail, every_seed or run[1] == 0)
            cells.append(cell)
            if failed:
                failures.append(
                    f"{name}: {claim['statement']} "
                    + ("is missing" if holds is None else "FAILS")
                    + f" under {label[run]}"
                    + (f" ({detail})" if detail else "")
                )
        scope = "every seed and variant" if every_seed else "seed 0, every variant"
        lines.append(f"| {claim['statement']} | {scope} | " + " | ".join(cells) + " |")
        sweep = claim.get("sweep")
        for point, outcomes in (sweep or {}).get("points", {}).items():
            # One row per point of a sweep claim: where in the range it held (its
            # failures are the claim's own, counted once above).
            point_cells = [
                skips[run].cell
                if run not in applicable
                else claim_cell(outcomes.get(label[run]), "", every_seed or run[1] == 0)[0]
                for run in runs
            ]
            lines.append(f"| at {sweep['over']} {point} | {scope} | " + " | ".join(point_cells) + " |")

    seed_runs = [run for run in runs if run[0] == numeric_env.PINNED]
    variant_runs = [run for run in applicable if run[0] != numeric_env.PINNED]
    sensitive = []
    quote_lines = [
        "",
        "| quote | page's text | mean ± sd over seeds | " + header + " | rounding |",
        "|---|---|---|" + "---|" * len(runs) + "---|",
    ]
    for element, quote in mine["quotes"].items():
        texts = {run: quote["text"][label[run]] if run in applicable else skips[run].cell for run in runs}
        if quote["measured"]:
            quote_lines.append(
                f"| {element} | {texts[PAGE_RUN]} | measured | "
                + " | ".join(texts[run] for run in runs)
                + " | measured |"
            )
            continue
        moved = [run for run in variant_runs if texts[run] != texts[PAGE_RUN]]
        if moved:
            sensitive.append(element)
        rounding = ("**sensitive** (" + ", ".join(label[r] for r in moved) + ")") if moved else "stable"
        values = [quote["value"][label[r]] for r in seed_runs]
        quote_lines.append(
            f"| {element} | {texts[PAGE_RUN]} | {spread([float('nan') if v is None else v for v in values])} | "
            + " | ".join(texts[run] for run in runs)
            + f" | {rounding} |"
        )
    lines.append("")
    lines.append("Rounding-sensitive quotes: " + (", ".join(sensitive) if sensitive else "none") + ".")
    return lines + quote_lines + [""], failures, sensitive


def quote_elements(records: dict, runs: list) -> list[tuple[str, dict, dict, bool]]:
    """(element name, text per run, value per run, measured) for every quote element."""
    rows = []
    base = records[PAGE_RUN]["quotes"]
    for name, quote in base.items():
        size = len(quote["text"]) if isinstance(quote["text"], list) else None
        for i in range(size or 1):
            element = f"{name}[{i}]" if size is not None else name
            texts, values = {}, {}
            for run in runs:
                if run not in records:
                    continue
                q = records[run]["quotes"].get(name)
                if q is None:
                    texts[run], values[run] = "missing", float("nan")
                elif size is not None:
                    texts[run], values[run] = q["text"][i], q["value"][i]
                else:
                    texts[run], values[run] = q["text"], q["value"]
            rows.append((element, texts, values, bool(quote.get("measured"))))
    return rows


def spread(values: list[float]) -> str:
    """Mean ± sd over the seeds where the quote exists (a quote can exist only
    when a run survives, or only when it diverges)."""
    present = [v for v in values if v == v]  # NaN marks a seed without the quote
    if not present:
        return "missing"
    over = "" if len(present) == len(values) else f" (over {len(present)} of {len(values)} seeds)"
    if all(v == present[0] for v in present):
        return "same at every seed" if not over else f"{present[0]:.4g}{over}"
    return f"{statistics.fmean(present):.4g} ± {statistics.pstdev(present):.2g}{over}"


def page_report(package: str, runs: list, results: dict) -> tuple[str, list[str], dict]:
    """(the report's Markdown, its failures, its data for data_path): the
    data first, with the digest of its results (results_digest), then the
    Markdown rendered from the data alone (render_report)."""
    config = page_config(package)
    scripts = experiment_sections([package])
    data = {
        "page": config.PAGE,
        "seed_runs": [run_label(*run) for run in runs if run[0] == numeric_env.PINNED],
        "sections": {script.name: section_data(script, runs, results) for script in scripts},
        "inputs": {s.name: current_hash(s) for s in scripts},
    }
    data[DIGEST_KEY] = results_digest(data)
    text, failures = render_report(data, runs)
    return text, failures, data


def render_report(data: dict, runs: list | None = None) -> tuple[str, list[str]]:
    """(the report's Markdown, its failures) from its data (robustness.json)
    alone; ``runs``: the report's runs (default report_runs())."""
    runs = report_runs() if runs is None else runs
    body, failures, summary = [], [], []
    for name, mine in data["sections"].items():
        lines, failed, sensitive = render_section(name, mine, runs)
        body += lines
        failures += failed
        verdict = f"{len(failed)} failure(s)" if failed else "every claim holds where it must"
        summary.append(
            f"- {name}: {verdict}; rounding-sensitive quotes: " + (", ".join(sensitive) if sensitive else "none")
        )
    variant_list = ", ".join(f"`{v}`" for v in variants())
    text = [
        f"# Robustness report: {data['page']}",
        "",
        f"Written by `make robustness` (`make seeds`): every section at seed offsets "
        f"{', '.join(map(str, OFFSETS))} under the pinned numeric environment, and at seed offset 0 "
        f"under the numeric variants {variant_list} (see `docs/diagrams/numeric_env.py`). A claim "
        '"every seed and variant" must hold in every run; one about the page\'s own run ("seed 0, '
        'every variant") must hold at seed offset 0 under every variant, and other seeds show '
        "whether it happens to hold there. A quote is *rounding-sensitive* when its printed text "
        "changes under a variant at seed 0. The seed-0 pinned column is the page's own run, taken "
        "from its committed numbers. A run whose variant cannot change a section, or (the thread "
        "skip) is checked on a reduced run not to change it, is not made: "
        f"its cells say `{SKIPPED}` with the reason (a section whose numbers come from torch alone "
        f"under the numpy variant, and under the OpenBLAS variants other than `{SAMPLING_OPENBLAS_VARIANT}`, "
        "which already reruns torch's matrix products on other OpenBLAS kernels; one that never loads "
        "torch under the torch variants; one its page lists as computed alike on one and two torch "
        "threads under the two-thread variant), and the section says why; the numpy skip and the thread "
        'skip are checked, each skipped variant\'s reduced run against the pinned one ("Skip checked"), '
        "the OpenBLAS one is not. "
        "The same results, "
        "machine-readable, are in "
        f"`{data_path(data['page']).name}` beside this file.",
        "",
        *summary,
        "",
        *body,
        *[HASH_LINE.format(section=name, hash=h) for name, h in data["inputs"].items()],
    ]
    return "\n".join(text).rstrip() + "\n", failures


def content_findings(markdown: str, data: dict, markdown_name: str, data_name: str) -> list[str]:
    """What is wrong with a committed report by its content: results that
    do not match the digest the run wrote into them (a cell edited in the
    JSON), and Markdown that is not the rendering of its JSON (a cell edited
    in the Markdown), by file and line; [] when neither."""
    found = []
    recorded = data.get(DIGEST_KEY)
    if recorded is None:
        found.append(f"{data_name}: no {DIGEST_KEY} (a digest of its results written by the run): `make robustness`")
    elif recorded != (computed := results_digest(data)):
        found.append(
            f"{data_name}: its results do not match the digest the run wrote into them "
            f"({DIGEST_KEY} {recorded[:12]}, the results now {computed[:12]}): a result was edited "
            "by hand or the file is not one run's; `make robustness`"
        )
    try:
        rendered, _ = render_report(data)
    except (KeyError, TypeError, ReportDataError) as error:
        return found + [f"{data_name}: cannot be rendered ({type(error).__name__}: {error}): `make robustness`"]
    if markdown != rendered:
        have, want = markdown.splitlines(), rendered.splitlines()
        line = next((i for i, (a, b) in enumerate(zip(have, want, strict=False)) if a != b), min(len(have), len(want)))
        found.append(
            f"{markdown_name}:{line + 1}: is not the rendering of {data_name}: the file has "
            f"{(have[line] if line < len(have) else '(end of file)')!r}, its data renders "
            f"{(want[line] if line < len(want) else '(end of file)')!r}"
        )
    return found


def build_reports(
    pages: list[str], progress=print, cores: int | None = None, executors=None
) -> dict[str, tuple[str, list[str], dict]]:
    scripts = experiment_sections(pages)
    runs = report_runs()
    progress(f"{len(scripts)} section(s) x {len(runs)} runs ({len(OFFSETS)} seeds, {len(variants())} variants)")
    results, jobs, page_runs, kept, skipped = {}, [], 0, 0, 0
    hashes = {script: current_hash(script) for script in scripts}  # once: the runs are decided now
    for script in scripts:
        for run in runs:
            if skip_reason(script, run[0]) is not None:
                skipped += 1
                continue
            record = page_run_record(script, hashes[script]) if run == PAGE_RUN else None
            if record is not None:
                results[(script.name, run)] = {"ok": True, "record": record, "error": None}
                page_runs += 1
            elif (result := cached_result(script, run, hashes[script])) is not None:
                results[(script.name, run)] = result
                kept += 1
            else:
                jobs.append((script, run))
        for run in skip_check_runs(script):
            if (result := cached_result(script, run, hashes[script])) is not None:
                results[(script.name, run)] = result
                kept += 1
            else:
                jobs.append((script, run))
    if skipped:
        progress(f"{skipped} run(s) skipped: their variant cannot change the section (the report says why)")
    if page_runs:
        progress(f"seed offset 0: {page_runs} section(s) use the page's committed run (current for their inputs)")
    if kept:
        progress(f"{kept} run(s) kept from an earlier report (same inputs; {rel_path(CACHE_DIR)})")
    results.update(run_all(jobs, progress, cores, hashes, executors))
    return {package: page_report(package, runs, results) for package in pages}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--page", action="append", default=[], help="only this page (repeatable)")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="runs at once (default: one per core)")
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on this Dask cluster (tcp://host:port) instead of local processes; "
        "its workers must declare the numeric variants they run (pagekit.executor.dask_worker_command)",
    )
    args = parser.parse_args(argv)
    share_runs()
    # Stop cleanly on either signal (its workers stop with it, finished runs stay cached).
    executor.die_with_parent()
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    try:
        pages = resolve_pages(args.page)
    except PageNameError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    try:
        executors = executor.DaskExecutors(args.scheduler) if args.scheduler else None
        reports = build_reports(
            pages,
            cores=args.jobs,
            progress=lambda m: print(f"[{time.perf_counter() - start:6.1f} s] {m}", flush=True),
            executors=executors,
        )
    except KeyboardInterrupt:
        print(
            f"interrupted: every finished run is kept ({rel_path(CACHE_DIR)}); the next report reruns only the others",
            file=sys.stderr,
        )
        return 130
    failures = []
    from pagekit.atomic import write_json_atomically, write_text_atomically

    for package, (text, failed, data) in reports.items():
        page = page_config(package).PAGE
        write_json_atomically(data_path(page), data)
        write_text_atomically(report_path(page), text)
        failures += failed
        print(f"wrote {report_path(page).relative_to(REPO_ROOT)} and {data_path(page).name}")
    for line in failures:
        print(f"FAIL {line}", file=sys.stderr)
    print(
        f"robustness: {len(failures)} failure(s) in {time.perf_counter() - start:.0f} s"
        + ("" if failures else "; every claim holds where it must"),
        file=sys.stderr if failures else sys.stdout,
    )
    return 1 if failures else 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
