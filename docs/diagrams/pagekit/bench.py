"""`make bench`: time the author's loop, every section and every page against the budgets.

For every registered page it times:
  - each section script run alone, as an author runs it (a fresh interpreter,
    `python <script> --quiet --out-dir <temp dir>`; nothing in the tree changes);
  - the page's cold regeneration, `make -s -B figures PAGE=<slug>` (every
    section of the page rerun; the same work as from clean);
  - the author's loop: one section rerun (`run_sections.py <section>`), then
    the page check (`check_page.py <slug>`);
and, for the whole project, `make figures` with nothing changed, `make check`
and `make test` (about a minute and a half; --no-tests skips it).

Each page's cold regeneration is also recorded in figures/<page>/hands-on.json
(wall and CPU seconds, the machine, the load): the site's front-matter box
quotes it as the page's hands-on time (running every experiment yourself).
`--cold-only` measures just that, for every page or the one `--page` names.

Each result is the median wall time of --repeats runs (default 3; a command
whose first run takes over a minute runs once) and, beside it, the median
CPU time of the command's whole process tree (user + system of every
child, as `/usr/bin/time -f "%e s wall %U+%S CPU"` reports it: CPU seconds
vary less with the machine's load than wall time), printed as soon as it is
measured, with its budget beside it; a one-line summary ends the run. A
budget can bound the wall time, the CPU time or both. Exit status 1 when a
budget is missed or a command fails.

The cold regenerations and the author's loop rewrite the page's figures and
numbers in place, with identical bytes when the scripts are unchanged; run
the bench on a tree whose section scripts are not being edited.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pagekit.run_sections import DIAGRAMS_DIR, REPO_ROOT, all_sections

from pagekit import numeric_env
from pagekit.registry import page_config, page_packages


@dataclass(frozen=True)
class Budget:
    """At most ``wall`` seconds of wall time and ``cpu`` CPU seconds (either
    may be None: not bounded), on the project's 2-core machines."""

    wall: float | None
    cpu: float | None
    says: str  # what the budget is, as the bench prints it

    def missed(self, wall: float, cpu: float | None) -> list[str]:
        """The bounds the measurement exceeds, as text ('' when met)."""
        found = []
        if self.wall is not None and wall > self.wall:
            found.append(f"{wall:.2f} s > {self.wall:g} s wall")
        if self.cpu is not None and cpu is None:
            found.append("CPU time not measured")
        elif self.cpu is not None and cpu > self.cpu:
            found.append(f"{cpu:.2f} > {self.cpu:g} CPU-s")
        return found


# Issue 30's budgets (page 2 cold, page 1 cold, make test); the others keep
# the author's loop instant.
PAGE_COLD_BUDGETS = {  # page slug -> budget
    "normalisation-and-stability": Budget(None, 10.0, "under 10 CPU-s (its reference script: 24.5)"),
    "normalisation-layers": Budget(100.0, 175.0, "under 100 s wall and 175 CPU-s"),
}
NOTHING_CHANGED_BUDGET = Budget(0.3, None, "0.3 s: instant")
CHECK_BUDGET = Budget(1.0, None, "under 1 s")
TEST_BUDGET = Budget(60.0, None, "under 60 s, all pages")
LONG_RUN = 60.0  # a measurement whose first run takes longer is not repeated

# The child `make`s must not inherit the flags of a `make bench` that started
# us (`make -B bench` would turn "nothing changed" into a full rerun), nor a
# PAGE from the environment.
DROPPED_ENV = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PAGE")


@dataclass
class Result:
    what: str
    seconds: float | None  # median; None if the command failed
    runs: list[float]
    budget: Budget | None = None
    note: str = ""
    cpu_seconds: float | None = None  # median CPU time (user + system) of the children

    @property
    def missed(self) -> list[str]:
        if self.seconds is None or self.budget is None:
            return []
        return self.budget.missed(self.seconds, self.cpu_seconds)

    @property
    def verdict(self) -> str:
        if self.seconds is None:
            return "FAILED"
        if self.budget is None:
            return ""
        return "MISSED" if self.missed else "met"


def exit_code(command: list[str], done: subprocess.CompletedProcess) -> int:
    """The command's exit status; for `make`, the status of the recipe that
    failed (make itself exits 2 whatever it was), from make's error line."""
    if command[0] == "make" and done.returncode == 2:
        found = re.findall(r"^make: \*\*\* \[.*\] Error (\d+)$", done.stderr, re.M)
        if found:
            return int(found[-1])
    return done.returncode


class Bench:
    def __init__(self, repeats: int, width: int = 64):
        self.repeats = repeats
        self.width = width
        self.results: list[Result] = []
        self.env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}

    def measure(
        self,
        what: str,
        command: list[str],
        budget: Budget | None = None,
        ok_codes: tuple[int, ...] = (0,),
        expect: str | None = None,
        announce: bool = False,
    ) -> Result:
        """Run ``command`` --repeats times, print one line with the median."""
        if announce:  # a long one: say it has started
            print(f"  ({what.strip()}: up to {self.repeats} run(s), each a while)", flush=True)
        runs, cpus, note, result = [], [], "", None
        for _ in range(self.repeats):
            if runs and runs[0] > LONG_RUN:  # a minute or more: one run says enough
                note = f"1 run: over {LONG_RUN:.0f} s, not repeated"
                break
            start, cpu_start = time.perf_counter(), children_cpu()
            done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, env=self.env)
            runs.append(time.perf_counter() - start)
            cpus.append(children_cpu() - cpu_start)
            code = exit_code(command, done)
            if code not in ok_codes:
                last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
                note = f"`{' '.join(command)}` exited {code}: {last}"
                result = Result(what, None, runs, budget, note)
                break
            if code != 0:
                note = f"exit {code}: the page check found mismatches; timed anyway"
            if expect is not None and expect not in done.stdout:
                note = f"did not print {expect!r}: something was stale, so this is not the no-op time"
        if result is None:  # no failure
            result = Result(what, statistics.median(runs), runs, budget, note, cpu_seconds=statistics.median(cpus))
        self.report(result)
        return result

    def report(self, result: Result) -> None:
        self.results.append(result)
        median = "     -  " if result.seconds is None else f"{result.seconds:7.2f} s"
        spread = ""
        if len(result.runs) > 1 and result.seconds is not None:
            spread = f" ({min(result.runs):.2f}-{max(result.runs):.2f})"
        cpu = "" if result.cpu_seconds is None else f"  {result.cpu_seconds:7.2f} CPU-s"
        budget = f"  budget {result.budget.says}" if result.budget else ""
        verdict = f"  {result.verdict}" if result.verdict else ""
        note = f"  [{result.note}]" if result.note else ""
        print(f"{result.what:<{self.width}} {median}{spread}{cpu}{budget}{verdict}{note}", flush=True)


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def record_hands_on(slug: str, command: str, result: Result) -> Path | None:
    """figures/<slug>/hands-on.json: the page's measured cold regeneration,
    which the site quotes as its hands-on time. Nothing is written for a
    failed run."""
    if result.seconds is None:
        return None
    try:
        load = round(os.getloadavg()[0], 1)
    except OSError:
        load = None
    record = {
        "what": command,
        "wall_seconds": round(result.seconds, 1),
        "cpu_seconds": round(result.cpu_seconds, 1),
        "runs": len(result.runs),
        "machine": numeric_env.cpu_model(),
        "cores": os.cpu_count(),
        "load_after": load,
    }
    path = REPO_ROOT / "figures" / slug / "hands-on.json"
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    temp.replace(path)
    return path


def first_section(package: str, names: list[str]) -> str:
    """The script of the page's lowest-numbered section that has one."""
    for number in sorted(page_config(package).SECTION_SCRIPTS):
        for name in page_config(package).SECTION_SCRIPTS[number]:
            if name in names:
                return name
    return names[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement; the median is shown (default 3)")
    parser.add_argument("--no-tests", action="store_true", help="do not time `make test` (about 1.5 min)")
    parser.add_argument(
        "--loop-section",
        metavar="NAME",
        help="the section the author's loop reruns (default: each page's first section)",
    )
    parser.add_argument(
        "--cold-only", action="store_true", help="only the pages' cold regenerations (and their hands-on records)"
    )
    parser.add_argument("--page", metavar="SLUG", help="only this page")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    python = sys.executable
    packages = page_packages()
    if args.page:
        packages = [p for p in packages if page_config(p).PAGE == args.page]
        if not packages:
            parser.error(f"no registered page {args.page}")
    if not packages:
        print("error: no registered pages under docs/diagrams", file=sys.stderr)
        return 2
    sections = {p: [s.name for s in all_sections([p])] for p in packages}
    if args.loop_section and not any(args.loop_section in names for names in sections.values()):
        known = ", ".join(n for names in sections.values() for n in names)
        parser.error(f"no section script named {args.loop_section} (have: {known})")

    try:
        load = f", load {os.getloadavg()[0]:.1f}"
    except OSError:
        load = ""
    print(
        f"bench on {numeric_env.cpu_model()} ({os.cpu_count()} cores{load}); "
        f"{len(packages)} page(s); median of {args.repeats} run(s) each",
        flush=True,
    )
    started = time.perf_counter()
    bench = Bench(args.repeats)

    for package in packages if not args.cold_only else ():
        slug = page_config(package).PAGE
        print(f"{slug}: each section alone (python <script> --quiet --out-dir <temp dir>)", flush=True)
        with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
            for script in all_sections([package]):
                bench.measure(
                    f"  {script.package}/{script.name}.py alone",
                    [python, str(script.path), "--quiet", "--out-dir", str(Path(scratch) / script.name)],
                )

    print("pages from cold (every section rerun)", flush=True)
    for package in packages:
        slug = page_config(package).PAGE
        result = bench.measure(
            f"  make -B figures PAGE={slug}",
            ["make", "-s", "-B", "figures", f"PAGE={slug}"],
            budget=PAGE_COLD_BUDGETS.get(slug),
            announce=True,
        )
        record_hands_on(slug, f"make -B figures PAGE={slug}", result)
    if args.cold_only:
        return finish(bench, started, args)

    print("the author's loop (rerun one section, then check the page)", flush=True)
    bench.measure(
        "  make figures, nothing changed", ["make", "-s", "figures"], budget=NOTHING_CHANGED_BUDGET, expect="up to date"
    )
    for package in packages:
        slug = page_config(package).PAGE
        names = sections[package]
        if args.loop_section and args.loop_section not in names:
            continue
        section = args.loop_section or first_section(package, names)
        # A failed section fails the measurement (exit 10); the check's
        # mismatches (exit 1) are timed like a clean check.
        loop = (
            f"{python} {DIAGRAMS_DIR / 'run_sections.py'} --page {slug} {section} || exit 10; "
            f"{python} {DIAGRAMS_DIR / 'check_page.py'} {slug}"
        )
        bench.measure(f"  rerun {section}, then check {slug}", ["sh", "-c", loop], ok_codes=(0, 1))
    bench.measure("  make check", ["make", "-s", "check"], budget=CHECK_BUDGET, ok_codes=(0, 1))
    if not args.no_tests:
        bench.measure("  make test", ["make", "-s", "test"], budget=TEST_BUDGET, announce=True)

    return finish(bench, started, args)


def finish(bench: Bench, started: float, args: argparse.Namespace) -> int:
    """Print the one-line summary; 1 when a budget is missed or a command failed."""
    results = bench.results
    budgeted = [r for r in results if r.budget]
    missed = [r for r in budgeted if r.verdict == "MISSED"]
    failed = [r for r in results if r.verdict == "FAILED"]
    met = [r for r in budgeted if r.verdict == "met"]
    summary = (
        f"bench: {len(results)} measurement(s) in {time.perf_counter() - started:.0f} s; "
        f"budgets met {len(met)} of {len(budgeted)}"
    )
    if missed:
        summary += "; MISSED: " + ", ".join(f"{r.what.strip()} {' and '.join(r.missed)}" for r in missed)
    if failed:
        summary += "; FAILED: " + ", ".join(r.what.strip() for r in failed)
    if args.no_tests or args.cold_only:
        summary += "; make test not timed (--no-tests)"
    print(summary, flush=True)
    return 1 if missed or failed else 0


if __name__ == "__main__":
    sys.exit(main())
