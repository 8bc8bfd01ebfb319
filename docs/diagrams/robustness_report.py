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

Variant runs need a fresh interpreter (the libraries read the environment
when they load): one child process per variant, each running the sections in
parallel. The report records each section's inputs hash, so a test can tell
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
from page_registry import PageNameError, page_config

OFFSETS = (0, 1, 2)
PAGE_RUN = (numeric_env.PINNED, 0)
RUNS_DIR = REPO_ROOT / "build" / "runs" / "robustness"
HASH_LINE = "<!-- inputs {section} {hash} -->"


def report_path(page: str) -> Path:
    return FIGURES_DIR / page / "robustness-report.md"


def variants() -> list[str]:
    return [v for v in numeric_env.VARIANTS if v != numeric_env.PINNED]


def run_label(variant: str, offset: int) -> str:
    return f"seed {offset}" if variant == numeric_env.PINNED else f"{variant}"


# ---------------------------------------------------------------------------
# Running.


def run_pinned(scripts: list[SectionScript], offsets, progress) -> dict:
    """{(section name, (variant, offset)): result} for the pinned seeds, in this process."""
    jobs = [(s, off, False, None, False, None) for s in scripts for off in offsets]

    def announce(event, job, result):
        if event == "end":
            progress(f"{job[0].name} at seed offset {job[1]}: "
                     + ("done" if result["ok"] else "ERROR") + f" ({result['seconds']:.1f} s)")

    results = run_many(jobs, announce=announce)
    return {(job[0].name, (numeric_env.PINNED, job[1])): r for job, r in zip(jobs, results)}


def run_variant(variant: str, pages: list[str], progress) -> dict:
    """One child process under ``variant``: every section at seed offset 0."""
    RUNS_DIR.mkdir(parents=True, exist_ok=True)
    out = RUNS_DIR / f"{variant}-{'-'.join(pages)}-{os.getpid()}.json"  # concurrent reports stay apart
    out.unlink(missing_ok=True)
    command = [sys.executable, __file__, "--worker", str(out)] + [a for p in pages for a in ("--page", p)]
    start = time.perf_counter()
    done = subprocess.run(command, env={**os.environ, numeric_env.VARIANT_ENV: variant},
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"error: the run under variant {variant} failed:\n{done.stdout}")
    progress(f"variant {variant}: done ({time.perf_counter() - start:.1f} s)")
    records = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    return {(name, (variant, 0)): r for name, r in records.items()}


def worker(out: Path, pages: list[str]) -> int:
    """In the child: run every section at seed 0 under this process's variant."""
    scripts = all_sections(pages)
    # With several torch threads per process, one section at a time keeps the
    # threads from fighting over the two cores (sections fork pools of their own).
    workers = 1 if int(os.environ.get("TORCH_NUM_THREADS", "1")) > 1 else None
    results = run_many([(s, 0, False, None, False, None) for s in scripts], workers)
    records = {r["script"].name: {k: v for k, v in r.items() if k != "script"} for r in results}
    out.write_text(json.dumps(records), encoding="utf-8")
    return 0


# ---------------------------------------------------------------------------
# Reporting.


def claim_cell(claim: dict | None, statement: str, must_hold: bool) -> tuple[str, bool]:
    """(cell text, is a failure)."""
    if claim is None:
        return "**missing**", True
    if claim["holds"]:
        return "holds", False
    detail = f" ({claim['detail']})" if claim.get("detail") else ""
    if must_hold:
        return f"**FAILS**{detail}", True
    return f"not here{detail}", False


def section_report(script: SectionScript, runs: list[tuple[str, int]], results: dict) -> tuple[list[str], list[str], list[str]]:
    """Markdown lines for one section, its failures (one line each), and its
    rounding-sensitive quotes."""
    name = script.name
    lines = [f"## {name}", ""]
    failures: list[str] = []
    errors = [(run, results[(name, run)]["error"]) for run in runs if not results[(name, run)]["record"]]
    if errors:
        for (variant, off), error in errors:
            last = error.strip().splitlines()[-1] if error.strip() else "no output"
            lines.append(f"- **ERROR** under {run_label(variant, off)}: `{last}`")
            failures.append(f"{name} under {run_label(variant, off)}: error: {last}")
        return lines + [""], failures, []
    records = {run: results[(name, run)]["record"] for run in runs}
    base = records[PAGE_RUN]
    header = " | ".join(run_label(*run) for run in runs)
    lines += ["| claim | must hold | " + header + " |", "|---|---|" + "---|" * len(runs)]
    by_statement = {run: {c["statement"]: c for c in records[run]["claims"]} for run in runs}
    for claim in base["claims"]:
        every_seed = claim.get("every_seed", True)
        cells = []
        for run in runs:
            other = by_statement[run].get(claim["statement"])
            must = every_seed or run[1] == 0
            cell, failed = claim_cell(other, claim["statement"], must)
            cells.append(cell)
            if failed:
                failures.append(f"{name}: {claim['statement']} "
                                + ("is missing" if other is None else "FAILS") + f" under {run_label(*run)}"
                                + (f" ({other['detail']})" if other and other.get("detail") else ""))
        scope = "every seed and variant" if every_seed else "seed 0, every variant"
        lines.append(f"| {claim['statement']} | {scope} | " + " | ".join(cells) + " |")

    seed_runs = [run for run in runs if run[0] == numeric_env.PINNED]
    variant_runs = [run for run in runs if run[0] != numeric_env.PINNED]
    sensitive = []
    quote_lines = ["", "| quote | page's text | mean ± sd over seeds | " + header + " | rounding |",
                   "|---|---|---|" + "---|" * len(runs) + "---|"]
    for element, texts, values, measured in quote_elements(records, runs):
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


def page_report(package: str, runs: list, results: dict) -> tuple[str, list[str]]:
    config = page_config(package)
    scripts = [s for s in all_sections([package])]
    body, failures, summary = [], [], []
    for script in scripts:
        lines, failed, sensitive = section_report(script, runs, results)
        body += lines
        failures += failed
        verdict = f"{len(failed)} failure(s)" if failed else "every claim holds where it must"
        summary.append(f"- {script.name}: {verdict}; rounding-sensitive quotes: "
                       + (", ".join(sensitive) if sensitive else "none"))
    variant_list = ", ".join(f"`{v}`" for v in variants())
    text = [
        f"# Robustness report: {config.PAGE}", "",
        f"Written by `make robustness` (`make seeds`): every section rerun at seed offsets "
        f"{', '.join(map(str, OFFSETS))} under the pinned numeric environment, and at seed offset 0 "
        f"under the numeric variants {variant_list} (see `docs/diagrams/numeric_env.py`). A claim "
        "\"every seed and variant\" must hold in every run; one about the page's own run (\"seed 0, "
        "every variant\") must hold at seed offset 0 under every variant, and other seeds show "
        "whether it happens to hold there. A quote is *rounding-sensitive* when its printed text "
        "changes under a variant at seed 0.", "",
        *summary, "", *body,
        *[HASH_LINE.format(section=s.name, hash=current_hash(s)) for s in scripts],
    ]
    return "\n".join(text).rstrip() + "\n", failures


def build_reports(pages: list[str], progress=print) -> dict[str, tuple[str, list[str]]]:
    scripts = all_sections(pages)
    runs = [(numeric_env.PINNED, off) for off in OFFSETS] + [(v, 0) for v in variants()]
    progress(f"{len(scripts)} section(s) x {len(runs)} runs ({len(OFFSETS)} seeds, {len(variants())} variants)")
    results = run_pinned(scripts, OFFSETS, progress)
    for variant in variants():
        results.update(run_variant(variant, pages, progress))
    return {package: page_report(package, runs, results) for package in pages}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--page", action="append", default=[], help="only this page (repeatable)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        pages = resolve_pages(args.page)
    except PageNameError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.worker:
        return worker(args.worker, pages)
    start = time.perf_counter()
    reports = build_reports(pages, progress=lambda m: print(f"[{time.perf_counter() - start:6.1f} s] {m}", flush=True))
    failures = []
    for package, (text, failed) in reports.items():
        path = report_path(page_config(package).PAGE)
        from section_kit import write_text_atomically

        write_text_atomically(path, text)
        failures += failed
        print(f"wrote {path.relative_to(REPO_ROOT)}")
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
