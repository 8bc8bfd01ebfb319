"""`make seeds`: rerun every section at seed offsets 0..K and report, per quote,
how much it moves and, per claim, whether it held at every seed.

Sections run in forked workers (no figures, nothing written to figures/
except the report). The report is a Markdown file per page,
figures/<page>/seed-report.md: for each section a table of quotes (seed-0
text, mean ± sd over the seeds, each seed's text; quotes identical at every
seed are marked "exact") and a table of claims with their result per seed.
Exit status 1 if any claim fails or any section errors at any seed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from run_sections import all_sections, run_many
from section_kit import FIGURES_DIR, page_config, write_text_atomically


def element_rows(records: list[dict]) -> list[tuple[str, str, list[float], list[str]]]:
    """(name, seed-0 text, values per seed, texts per seed) for every element."""
    rows = []
    for name, first in records[0]["quotes"].items():
        quotes = [r["quotes"].get(name) for r in records]
        if any(q is None for q in quotes):
            rows.append((name, "missing at some seed", [], []))
            continue
        if isinstance(first["text"], list):
            for i in range(len(first["text"])):
                rows.append((f"{name}[{i}]", first["text"][i],
                             [q["value"][i] for q in quotes], [q["text"][i] for q in quotes]))
        else:
            rows.append((name, first["text"], [q["value"] for q in quotes], [q["text"] for q in quotes]))
    return rows


def spread_cell(values: list[float]) -> str:
    if not values:
        return ""
    if all(v == values[0] for v in values):
        return "exact (same at every seed)"
    mean = statistics.fmean(values)
    sd = statistics.pstdev(values)
    relative = f", {sd / abs(mean):.1%} of the mean" if mean else ""
    return f"{mean:.4g} ± {sd:.2g}{relative}"


def section_report(name: str, offsets: list[int], results: list[dict]) -> tuple[list[str], int, str]:
    """Markdown lines for one section, its number of failures, and a summary."""
    lines = [f"## {name}", ""]
    errors = [(off, r["error"]) for off, r in zip(offsets, results) if r["error"] and r["record"] is None]
    if errors:
        for off, error in errors:
            lines.append(f"- **ERROR at seed offset {off}**: `{error.strip().splitlines()[-1]}`")
        return lines + [""], len(errors), f"{len(errors)} error(s)"
    records = [r["record"] for r in results]
    header = " | ".join(f"offset {off}" for off in offsets)
    lines += ["| claim | must hold | " + header + " |", "|---|---|" + "---|" * len(offsets)]
    failures = 0
    claims = records[0]["claims"]
    for i, claim in enumerate(claims):
        every_seed = claim.get("every_seed", True)
        cells = []
        for off, record in zip(offsets, records):
            other = record["claims"][i] if i < len(record["claims"]) else None
            if other is None or other["statement"] != claim["statement"]:
                cells.append("**differs**")
                failures += 1
            elif other["holds"]:
                cells.append("holds")
            elif every_seed or off == 0:
                cells.append("**FAILS**" + (f" ({other['detail']})" if other.get("detail") else ""))
                failures += 1
            else:
                cells.append("not at this seed")
        scope = "at every seed" if every_seed else "on the page's run"
        lines.append(f"| {claim['statement']} | {scope} | " + " | ".join(cells) + " |")
    every = sum(c.get("every_seed", True) for c in claims)
    page_only = len(claims) - every
    luck = sum(1 for i, c in enumerate(claims) if not c.get("every_seed", True)
               and not all(r["claims"][i]["holds"] for r in records if i < len(r["claims"])))
    if failures:
        summary = f"{failures} failure(s)"
    else:
        summary = f"all {every} every-seed claims hold at every seed"
        if page_only:
            summary += (f"; {page_only} claim(s) about the page's run hold on it"
                        f" ({luck} not at every seed)")
    lines += ["", "| quote | seed 0 | mean ± sd | " + header + " |", "|---|---|---|" + "---|" * len(offsets)]
    for name, text, values, texts in element_rows(records):
        lines.append(f"| {name} | {text} | {spread_cell(values)} | " + " | ".join(texts) + " |")
    return lines + [""], failures, summary


def build_reports(offsets: list[int], jobs: int | None = None) -> dict[str, tuple[str, str, int]]:
    """Rerun every section at each offset; per page: (report text, summary, failures)."""
    scripts = all_sections()
    results = run_many([(script, off, False, None, False) for script in scripts for off in offsets], jobs)
    reports = {}
    for package in sorted({s.package for s in scripts}):
        page = page_config(package).PAGE
        body, summary, failures = [], [], 0
        for i, script in enumerate(scripts):
            if script.package != package:
                continue
            section_results = results[i * len(offsets):(i + 1) * len(offsets)]
            lines, failed, verdict = section_report(script.name, offsets, section_results)
            body += lines
            summary.append(f"- {script.name}: {verdict}")
            failures += failed
        report = [f"# Seed report: {page}", "",
                  f"Every section rerun at seed offsets {', '.join(map(str, offsets))} "
                  "(`make seeds`). \"exact\" marks a quote that does not depend on the seed. "
                  "A claim marked \"on the page's run\" describes seed offset 0 only (the prose "
                  "says so); other seeds report whether it happens to hold there.", "",
                  *summary, "", *body]
        reports[page] = ("\n".join(report).rstrip() + "\n", "\n".join(summary), failures)
    return reports


def report_path(page: str):
    return FIGURES_DIR / page / "seed-report.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--offsets", type=int, default=2, help="rerun at offsets 0..K (default 2)")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="workers (default: one per core)")
    args = parser.parse_args(argv)
    if args.offsets < 1:
        parser.error("--offsets must be at least 1")
    status = 0
    for page, (text, summary, failures) in build_reports(list(range(args.offsets + 1)), args.jobs).items():
        path = report_path(page)
        write_text_atomically(path, text)
        print(f"{path.relative_to(FIGURES_DIR.parent)}:")
        print(summary)
        status = 1 if failures else status
    return status


if __name__ == "__main__":
    sys.exit(main())
