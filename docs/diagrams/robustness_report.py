"""`make robustness` (also `make seeds`): which results survive another seed,
and which survive other rounding.

Every section of every page reruns at seed offsets 0, 1 and 2 under the
pinned numeric environment, and at seed offset 0 under each other numeric
variant of numeric_env (other OpenBLAS kernels, torch without AVX, two torch
threads). Nothing is written to figures/ but the report,
figures/<page>/robustness-report.md:

- per claim, held or failed under every seed and variant, with the measured
  values of every failure. An every-seed claim must hold everywhere; a claim
  about the page's own run (every_seed=False) must hold at seed offset 0
  under every variant;
- per quote, its text under every seed and variant, with mean ± sd over the
  seeds; a quote whose text changes under a variant at seed 0 is marked
  rounding-sensitive, and the section lists its rounding-sensitive quotes.

The page's own run (seed offset 0, pinned) is not repeated: its committed
numbers are used when they are current for the section's inputs. A section
its page lists in TORCH_ONLY_SECTIONS is not rerun under the variants that
change only OpenBLAS (torch never calls OpenBLAS); the report says so in its
cells, and a test checks it on the reduced runs.

Every finished run is kept under build/runs/robustness/cache/ with its
section's inputs hash: an interrupted report loses no finished run, and the
next one reruns only the runs whose inputs changed or that never finished.

Variant runs need a fresh interpreter (the libraries read the environment
when they load): one child process per variant. The children and the seed
runs all start at once, so the two cores stay busy until the last run ends;
each child reports its sections as they finish. The report records each section's inputs hash, so a test can tell
it is current without rerunning anything. Exit status 1 if any claim fails
or any section errors.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from run_sections import (
    FIGURES_DIR, REPO_ROOT, SectionScript, all_sections, current_hash, resolve_pages, run_many,
)
import numeric_env
from page_registry import PageNameError, page_config, rel_path

SKIPPED = "n/a"  # a cell for a run that cannot change the section (see section_runs)
OFFSETS = (0, 1, 2)
PAGE_RUN = (numeric_env.PINNED, 0)
RUNS_DIR = REPO_ROOT / "build" / "runs" / "robustness"
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
    return [s for s in all_sections(pages)
            if s.name not in getattr(page_config(s.package), "DERIVED_SECTIONS", ())]


def openblas_only(variant: str) -> bool:
    """A variant that changes nothing but OpenBLAS's settings."""
    changed = numeric_env.VARIANTS[variant]
    return bool(changed) and all(key.startswith("OPENBLAS_") for key in changed)


def section_runs(script: SectionScript, runs: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The runs that can change this section: all of them, except the
    OpenBLAS-only variants for a section whose numbers come from torch alone."""
    torch_only = script.name in getattr(page_config(script.package), "TORCH_ONLY_SECTIONS", ())
    return [run for run in runs if not (torch_only and openblas_only(run[0]))]


def page_run_record(script: SectionScript) -> dict | None:
    """The committed numbers of the page's own run, when current for the inputs."""
    try:
        record = json.loads(script.numbers_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    current = current_hash(script)
    if (not isinstance(record, dict) or current is None or record.get("inputs_hash") != current
            or record.get("seed_offset") != 0 or record.get("variant") != numeric_env.PINNED
            or record.get("reduced")):
        return None
    return record


def cache_path(script: SectionScript, run: tuple[str, int]) -> Path:
    return CACHE_DIR / f"{script.package}.{script.name}-{run[0]}-seed{run[1]}.json"


def cached_result(script: SectionScript, run: tuple[str, int]) -> dict | None:
    """A finished run of these very inputs, if one was kept."""
    try:
        kept = json.loads(cache_path(script, run).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("inputs_hash") is None or kept["inputs_hash"] != current_hash(script):
        return None
    return kept.get("result")


def keep_result(script: SectionScript, run: tuple[str, int], result: dict) -> None:
    """Keep a successful run (a failed one reruns next time); a cache, so a
    failed write is not an error."""
    if not result.get("ok"):
        return
    from section_kit import write_json_atomically

    try:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        write_json_atomically(cache_path(script, run), {
            "inputs_hash": current_hash(script),
            "result": {k: v for k, v in result.items() if k != "script"}})
    except OSError:
        pass


def run_label(variant: str, offset: int) -> str:
    return f"seed {offset}" if variant == numeric_env.PINNED else f"{variant}"


# ---------------------------------------------------------------------------
# Running.


def run_pinned(scripts: list[SectionScript], offsets, progress, on_event=lambda: None) -> dict:
    """{(section name, (variant, offset)): result} for the pinned seeds, in
    this process; the page's own run comes from its committed numbers when
    they are current. ``on_event()`` is called as each run starts and ends."""
    results, jobs, page_runs, kept = {}, [], 0, 0
    for script in scripts:
        for off in offsets:
            run = (numeric_env.PINNED, off)
            record = page_run_record(script) if off == 0 else None
            if record is not None:
                results[(script.name, run)] = {"ok": True, "record": record, "error": None}
                page_runs += 1
            elif (result := cached_result(script, run)) is not None:
                results[(script.name, run)] = result
                kept += 1
            else:
                jobs.append((script, off, False, None, False, None))
    if page_runs:
        progress(f"seed offset 0: {page_runs} section(s) use the page's committed run (current for their inputs)")
    if kept:
        progress(f"seed offsets {', '.join(map(str, offsets))}: {kept} run(s) kept from an earlier report "
                 f"(same inputs; {rel_path(CACHE_DIR)})")

    def announce(event, job, result):
        if event == "end":
            keep_result(job[0], (numeric_env.PINNED, job[1]), result)
            progress(f"{job[0].name} at seed offset {job[1]}: "
                     + ("done" if result["ok"] else "ERROR") + f" ({result['seconds']:.1f} s)")
        on_event()

    for job, r in zip(jobs, run_many(jobs, announce=announce), strict=True):
        results[(job[0].name, (numeric_env.PINNED, job[1]))] = r
    return results


def start_variant(variant: str, pages: list[str], scripts: list[SectionScript]):
    """Start one child process under ``variant`` running ``scripts`` at seed 0."""
    RUNS_DIR.mkdir(parents=True, exist_ok=True)
    out = RUNS_DIR / f"{variant}-{'-'.join(pages)}-{os.getpid()}.json"  # concurrent reports stay apart
    out.unlink(missing_ok=True)
    command = ([sys.executable, __file__, "--worker", str(out)] + [a for p in pages for a in ("--page", p)]
               + [a for s in scripts for a in ("--section", s.name)])
    # The child writes its output to a file, not a pipe: a pipe would need a
    # thread to drain it, and this process forks the pinned runs meanwhile
    # (a fork while threads run can deadlock; Python 3.12+ warns).
    log_path = out.with_suffix(".log")
    with open(log_path, "w", encoding="utf-8") as log:
        child = subprocess.Popen(command, env={**os.environ, **QUIET_THREADS, numeric_env.VARIANT_ENV: variant},
                                 stdout=log, stderr=subprocess.STDOUT)
    child.log_path, child.lines, child.partial = log_path, [], ""
    child.log = open(log_path, encoding="utf-8")  # read as the child writes; closed once it exits
    return child, out


def relay_variant(variant: str, child, progress, started: float) -> bool:
    """Relay the progress lines the child wrote since the last call and keep
    every line for an error message; True once it has exited and all is read."""
    if child.log.closed:  # exited and read to the end by an earlier call
        return True
    exited = child.poll() is not None  # polled first: its output is then all on disk
    lines = (child.partial + child.log.read()).split("\n")
    child.partial = "" if exited else lines.pop()
    for line in filter(None, lines):
        child.lines.append(line + "\n")
        if line.startswith(PROGRESS_MARK):
            progress(f"{variant}: {line[len(PROGRESS_MARK):].strip()}")
    if exited and not child.log.closed:
        child.log.close()
        child.log_path.unlink(missing_ok=True)
        if child.returncode == 0:
            progress(f"variant {variant}: done ({time.perf_counter() - started:.1f} s)")
    return exited


def variant_results(variant: str, child, out: Path) -> dict:
    if child.returncode != 0 or not out.exists():
        raise SystemExit(f"error: the run under variant {variant} failed:\n{''.join(child.lines)}")
    records = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    return {(name, (variant, 0)): r for name, r in records.items()}


PROGRESS_MARK = "progress: "
# Idle OpenMP threads sleep instead of spinning: with every run started at
# once, a spinning two-thread variant burnt the cores the others needed
# (loss_smoothness took 428 s instead of 15). Changes no number.
QUIET_THREADS = {"OMP_WAIT_POLICY": "PASSIVE", "KMP_BLOCKTIME": "0"}


def worker(out: Path, pages: list[str], names: list[str]) -> int:
    """In the child: run the named sections at seed 0 under this process's variant."""
    scripts = [s for s in experiment_sections(pages) if s.name in names]
    # One section at a time: the seed runs and the other variants run beside
    # this child, and the heavy sections fork pools of their own.
    workers = 1

    variant = numeric_env.variant_name()

    def announce(event, job, result):
        if event == "end":
            keep_result(job[0], (variant, 0), result)
            print(f"{PROGRESS_MARK}{job[0].name}: " + ("done" if result["ok"] else "ERROR")
                  + f" ({result['seconds']:.1f} s)", flush=True)

    results = run_many([(s, 0, False, None, False, None) for s in scripts], workers, announce=announce,
                       isolate=True)
    records = {r["script"].name: {k: v for k, v in r.items() if k != "script"} for r in results}
    out.write_text(json.dumps(records), encoding="utf-8")
    return 0


# ---------------------------------------------------------------------------
# Reporting.


def claim_cell(claim: dict | None, must_hold: bool) -> tuple[str, bool]:
    """(cell text, is a failure)."""
    if claim is None:
        return "**missing**", True
    if claim["holds"]:
        return "holds", False
    detail = f" ({claim['detail']})" if claim.get("detail") else ""
    if must_hold:
        return f"**FAILS**{detail}", True
    return f"not here{detail}", False


def section_report(script: SectionScript, runs: list[tuple[str, int]], results: dict,
                   data: dict | None = None) -> tuple[list[str], list[str], list[str]]:
    """Markdown lines for one section, its failures (one line each), and its
    rounding-sensitive quotes. ``data``, when given, receives the same
    results in machine-readable form under the section's name."""
    name = script.name
    lines = [f"## {name}", ""]
    failures: list[str] = []
    applicable = section_runs(script, runs)
    if len(applicable) < len(runs):
        skipped = ", ".join(f"`{run[0]}`" for run in runs if run not in applicable)
        lines += [f"Not rerun under {skipped} ({SKIPPED} below): its numbers come from torch alone, "
                  "and those variants change only OpenBLAS.", ""]
    errors = [(run, results[(name, run)]["error"]) for run in applicable if not results[(name, run)]["record"]]
    if errors:
        for (variant, off), error in errors:
            last = error.strip().splitlines()[-1] if error.strip() else "no output"
            lines.append(f"- **ERROR** under {run_label(variant, off)}: `{last}`")
            failures.append(f"{name} under {run_label(variant, off)}: error: {last}")
        return lines + [""], failures, []
    records = {run: results[(name, run)]["record"] for run in applicable}
    base = records[PAGE_RUN]
    header = " | ".join(run_label(*run) for run in runs)
    lines += ["| claim | must hold | " + header + " |", "|---|---|" + "---|" * len(runs)]
    by_statement = {run: {c["statement"]: c for c in records[run]["claims"]} for run in applicable}
    mine = {"runs": [run_label(*run) for run in applicable], "claims": [], "quotes": {}}
    if data is not None:
        data[name] = mine
    for claim in base["claims"]:
        every_seed = claim.get("every_seed", True)
        cells = []
        for run in runs:
            if run not in applicable:
                cells.append(SKIPPED)
                continue
            other = by_statement[run].get(claim["statement"])
            must = every_seed or run[1] == 0
            cell, failed = claim_cell(other, must)
            cells.append(cell)
            if failed:
                failures.append(f"{name}: {claim['statement']} "
                                + ("is missing" if other is None else "FAILS") + f" under {run_label(*run)}"
                                + (f" ({other['detail']})" if other and other.get("detail") else ""))
        mine["claims"].append({
            "statement": claim["statement"], "every_seed": every_seed,
            "holds": {run_label(*run): (by_statement[run].get(claim["statement"]) or {}).get("holds")
                      for run in applicable}})
        scope = "every seed and variant" if every_seed else "seed 0, every variant"
        lines.append(f"| {claim['statement']} | {scope} | " + " | ".join(cells) + " |")

    seed_runs = [run for run in runs if run[0] == numeric_env.PINNED]
    variant_runs = [run for run in applicable if run[0] != numeric_env.PINNED]
    sensitive = []
    quote_lines = ["", "| quote | page's text | mean ± sd over seeds | " + header + " | rounding |",
                   "|---|---|---|" + "---|" * len(runs) + "---|"]
    for element, texts, values, measured in quote_elements(records, runs):
        mine["quotes"][element] = {
            "measured": measured,
            "text": {run_label(*run): texts[run] for run in applicable},
            "value": {run_label(*run): (None if values[run] != values[run] else values[run]) for run in applicable}}
        texts = {run: texts.get(run, SKIPPED) for run in runs}
        if measured:
            quote_lines.append(f"| {element} | {texts[PAGE_RUN]} | measured | " +
                               " | ".join(texts[run] for run in runs) + " | measured |")
            continue
        moved = [run for run in variant_runs if texts[run] != texts[PAGE_RUN]]
        if moved:
            sensitive.append(element)
        rounding = ("**sensitive** (" + ", ".join(run_label(*r) for r in moved) + ")") if moved else "stable"
        quote_lines.append(f"| {element} | {texts[PAGE_RUN]} | {spread([values[r] for r in seed_runs])} | "
                           + " | ".join(texts[run] for run in runs) + f" | {rounding} |")
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
        return ("same at every seed" if not over else f"{present[0]:.4g}{over}")
    return f"{statistics.fmean(present):.4g} ± {statistics.pstdev(present):.2g}{over}"


def page_report(package: str, runs: list, results: dict) -> tuple[str, list[str], dict]:
    """(the report's Markdown, its failures, its data for data_path)."""
    config = page_config(package)
    scripts = experiment_sections([package])
    body, failures, summary = [], [], []
    data = {"page": config.PAGE, "seed_runs": [run_label(*run) for run in runs if run[0] == numeric_env.PINNED],
            "sections": {}}
    for script in scripts:
        lines, failed, sensitive = section_report(script, runs, results, data["sections"])
        body += lines
        failures += failed
        verdict = f"{len(failed)} failure(s)" if failed else "every claim holds where it must"
        summary.append(f"- {script.name}: {verdict}; rounding-sensitive quotes: "
                       + (", ".join(sensitive) if sensitive else "none"))
    variant_list = ", ".join(f"`{v}`" for v in variants())
    text = [
        f"# Robustness report: {config.PAGE}", "",
        f"Written by `make robustness` (`make seeds`): every section at seed offsets "
        f"{', '.join(map(str, OFFSETS))} under the pinned numeric environment, and at seed offset 0 "
        f"under the numeric variants {variant_list} (see `docs/diagrams/numeric_env.py`). A claim "
        "\"every seed and variant\" must hold in every run; one about the page's own run (\"seed 0, "
        "every variant\") must hold at seed offset 0 under every variant, and other seeds show "
        "whether it happens to hold there. A quote is *rounding-sensitive* when its printed text "
        "changes under a variant at seed 0. The seed-0 pinned column is the page's own run, taken "
        "from its committed numbers. Sections whose numbers come from torch alone are not rerun "
        f"under the OpenBLAS-only variants (`{SKIPPED}`). The same results, machine-readable, are in "
        f"`{data_path(config.PAGE).name}` beside this file.", "",
        *summary, "", *body,
        *[HASH_LINE.format(section=s.name, hash=current_hash(s)) for s in scripts],
    ]
    data["inputs"] = {s.name: current_hash(s) for s in scripts}
    return "\n".join(text).rstrip() + "\n", failures, data


def build_reports(pages: list[str], progress=print) -> dict[str, tuple[str, list[str], dict]]:
    scripts = experiment_sections(pages)
    runs = [(numeric_env.PINNED, off) for off in OFFSETS] + [(v, 0) for v in variants()]
    progress(f"{len(scripts)} section(s) x {len(runs)} runs ({len(OFFSETS)} seeds, {len(variants())} variants)")
    started = time.perf_counter()
    children, results = {}, {}
    for variant in variants():
        chosen = []
        for script in scripts:
            if (variant, 0) not in section_runs(script, runs):
                continue
            if (result := cached_result(script, (variant, 0))) is not None:
                results[(script.name, (variant, 0))] = result
            else:
                chosen.append(script)
        kept = sum(1 for s in scripts if (s.name, (variant, 0)) in results)
        if kept:
            progress(f"{variant}: {kept} run(s) kept from an earlier report (same inputs)")
        if chosen:
            children[variant] = start_variant(variant, pages, chosen)
    try:
        def relay_all() -> bool:
            return all([relay_variant(v, child, progress, started) for v, (child, _) in children.items()])

        results.update(run_pinned(scripts, OFFSETS, progress, on_event=relay_all))
        while not relay_all():
            time.sleep(0.5)
        for variant, (child, out) in children.items():
            results.update(variant_results(variant, child, out))
    finally:  # an interrupt or a failed child: stop the others
        for child, _ in children.values():
            if child.poll() is None:
                child.terminate()
            child.log.close()
            child.log_path.unlink(missing_ok=True)
    return {package: page_report(package, runs, results) for package in pages}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--page", action="append", default=[], help="only this page (repeatable)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--section", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        pages = resolve_pages(args.page)
    except PageNameError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.worker:
        return worker(args.worker, pages, args.section)
    start = time.perf_counter()
    reports = build_reports(pages, progress=lambda m: print(f"[{time.perf_counter() - start:6.1f} s] {m}", flush=True))
    failures = []
    from section_kit import write_json_atomically, write_text_atomically

    for package, (text, failed, data) in reports.items():
        page = page_config(package).PAGE
        write_json_atomically(data_path(page), data)
        write_text_atomically(report_path(page), text)
        failures += failed
        print(f"wrote {report_path(page).relative_to(REPO_ROOT)} and {data_path(page).name}")
    for line in failures:
        print(f"FAIL {line}", file=sys.stderr)
    print(f"robustness: {len(failures)} failure(s) in {time.perf_counter() - start:.0f} s"
          + ("" if failures else "; every claim holds where it must"),
          file=sys.stderr if failures else sys.stdout)
    return 1 if failures else 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
