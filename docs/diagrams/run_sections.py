"""Run page-section scripts fast: import the heavy libraries once, then fork
one worker per section, as many at a time as there are cores.

`make figures` calls this with `--stale`: a section reruns when its numbers
file is missing or older than its script, a section script it imports, the
shared module, the page package or the installed requirements (the same rule
make applies). `--all` reruns everything (`make -B figures`). Each worker is a
forked copy of this process, so numpy, matplotlib and torch are imported once
rather than once per section; torch runs one thread per worker.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import multiprocessing
import multiprocessing.connection
import os
import re
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

# Sections run side by side, one per core: BLAS threads would only fight
# over the cores (and spin while they wait). Set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

DIAGRAMS_DIR = Path(__file__).resolve().parent
REPO_ROOT = DIAGRAMS_DIR.parents[1]
sys.path.insert(0, str(DIAGRAMS_DIR))

import section_kit  # noqa: E402  (after the path set-up)
from page_registry import page_packages, section_scripts  # noqa: E402

VENV_STAMP = REPO_ROOT / ".venv" / ".requirements-installed"
# Last wall time per section, to start the longest first (not committed).
TIMES_FILE = REPO_ROOT / "build" / "section-times.json"


@dataclass(frozen=True)
class SectionScript:
    package: str
    name: str

    @property
    def path(self) -> Path:
        return DIAGRAMS_DIR / self.package / f"{self.name}.py"

    @property
    def page(self) -> str:
        return section_kit.page_config(self.package).PAGE

    @property
    def numbers_path(self) -> Path:
        return section_kit.FIGURES_DIR / self.page / "numbers" / f"{self.name}.json"

    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")

    def imported_sections(self) -> list[str]:
        """Other section scripts of the same page this one imports from."""
        pattern = rf"\b{re.escape(self.package)}\.(\w+)\b"
        return sorted(set(re.findall(pattern, self.source())) - {self.name})


def all_sections() -> list[SectionScript]:
    return [SectionScript(package, name) for package in page_packages() for name in section_scripts(package)]


def inputs_of(script: SectionScript) -> list[Path]:
    """Every file whose change makes this section's numbers stale."""
    paths = [script.path, DIAGRAMS_DIR / "section_kit.py", DIAGRAMS_DIR / "page_registry.py",
             DIAGRAMS_DIR / script.package / "__init__.py"]
    paths += [DIAGRAMS_DIR / script.package / f"{name}.py" for name in script.imported_sections()]
    if VENV_STAMP.exists():
        paths.append(VENV_STAMP)
    return paths


def is_stale(script: SectionScript) -> bool:
    if not script.numbers_path.exists():
        return True
    built = script.numbers_path.stat().st_mtime
    return any(p.stat().st_mtime > built for p in inputs_of(script))


# ---------------------------------------------------------------------------


def _work(job: tuple[SectionScript, int, bool, str | None, bool]) -> dict:
    """Run one section in a forked worker; never raises (errors are reported)."""
    script, seed_offset, figures, out_dir, write = job
    start = time.perf_counter()
    try:
        module = section_kit.section_module(script.package, script.name)
        section = section_kit.run_section(
            module,
            seed_offset=seed_offset,
            figures=figures,
            out_dir=Path(out_dir) if out_dir else None,
            write=write,
            raise_on_failed_claims=write,  # the seed report wants the results anyway
        )
        return {"script": script, "ok": True, "started": start, "seconds": time.perf_counter() - start,
                "record": section.record(), "error": None}
    except (section_kit.ClaimsFailed, section_kit.QuoteError) as error:
        message = str(error)
    except Exception:  # a bug in a section: show its traceback, keep the others going
        message = traceback.format_exc()
    return {"script": script, "ok": False, "started": start, "seconds": time.perf_counter() - start,
            "record": None, "error": message}


# What a section needs imported before it can fork, cheapest first: nothing
# beyond numpy and matplotlib; torch; torch's optimiser classes (the first
# Optimizer a process builds imports torch's compiler, about a second more).
NEEDS_NOTHING, NEEDS_TORCH, NEEDS_OPTIMISER = 0, 1, 2


def needs(script: SectionScript) -> int:
    """Read from the script's code (not its comments): a call to
    import_torch() means torch; an attribute torch.optim.<Class> means an
    optimiser class."""
    level = NEEDS_NOTHING
    for node in ast.walk(ast.parse(script.source())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "import_torch":
            level = max(level, NEEDS_TORCH)
        if (isinstance(node, ast.Attribute) and node.attr[:1].isupper()
                and isinstance(node.value, ast.Attribute) and node.value.attr == "optim"):
            level = NEEDS_OPTIMISER
    return level


def preload(scripts: list[SectionScript]) -> None:
    """Import the section modules once, in the parent, before forking, and
    warm matplotlib's font and text-to-path caches with one tiny SVG."""
    for script in scripts:
        section_kit.section_module(script.package, script.name)
    fig = section_kit.new_figure(1, 1)
    fig.add_subplot().set_title("warm-up 0.5")
    fig.savefig(io.BytesIO(), format="svg")


def prepare(level: int) -> None:
    """Import what sections at ``level`` need, so forked workers inherit it."""
    if level >= NEEDS_TORCH:
        torch = section_kit.import_torch()
    if level >= NEEDS_OPTIMISER:
        torch.optim.Adam([torch.zeros(1, requires_grad=True)])


def last_times() -> dict[str, float]:
    try:
        return json.loads(TIMES_FILE.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def _child(job: tuple, connection) -> None:
    connection.send(_work(job))
    connection.close()


def run_many(jobs: list[tuple], workers: int | None = None) -> list[dict]:
    """Run jobs in forked workers, about ``workers`` at a time, longest (by
    the last run's times) first; results come back in job order.

    The parent imports in stages (torch, then torch's optimiser machinery)
    and forks each section as soon as what it needs is imported, so sections
    run beside the imports and inherit them rather than importing them again.
    After each stage the longest section now ready starts even if every
    worker is busy: it is the critical path, and the parent is blocked while
    it imports.
    """
    if not jobs:
        return []
    preload(sorted({job[0] for job in jobs}, key=lambda s: (s.package, s.name)))
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    times = last_times()
    pending = sorted(range(len(jobs)), key=lambda i: -times.get(jobs[i][0].name, 0.0))
    level_of = {i: needs(jobs[i][0]) for i in pending}
    top_level = max(level_of.values())
    results: list[dict | None] = [None] * len(jobs)

    if workers == 1:
        prepare(top_level)
        for i in pending:
            results[i] = _work(jobs[i])
    else:
        context = multiprocessing.get_context("fork")
        running = {}

        def start(i: int) -> None:
            pending.remove(i)
            receive, send = context.Pipe(duplex=False)
            # Not daemonic: a section may fork workers of its own.
            process = context.Process(target=_child, args=(jobs[i], send))
            process.start()
            send.close()
            running[receive] = (i, process)

        def start_ready(level: int, force_one: bool) -> None:
            ready = [i for i in pending if level_of[i] <= level]
            if force_one and ready and len(running) >= workers:
                start(ready.pop(0))
            for i in ready[: max(0, workers - len(running))]:
                start(i)

        def collect(receive) -> None:
            i, process = running.pop(receive)
            try:
                results[i] = receive.recv()
            except EOFError:  # the worker died before it could report
                process.join()
                results[i] = {"script": jobs[i][0], "ok": False, "started": 0.0, "seconds": 0.0,
                              "record": None, "error": f"worker died (exit code {process.exitcode})"}
            process.join()

        try:
            start_ready(NEEDS_NOTHING, force_one=False)
            for level in range(NEEDS_TORCH, top_level + 1):
                prepare(level)
                for receive in multiprocessing.connection.wait(list(running), timeout=0):
                    collect(receive)
                start_ready(level, force_one=True)
            while pending or running:
                start_ready(top_level, force_one=False)
                for receive in multiprocessing.connection.wait(list(running)):
                    collect(receive)
        finally:  # on an interrupt, leave no worker behind
            for _, process in running.values():
                process.terminate()

    times.update({r["script"].name: round(r["seconds"], 3) for r in results if r["ok"]})
    section_kit.write_json_atomically(TIMES_FILE, times)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--stale", action="store_true", help="only sections whose inputs changed (default)")
    which.add_argument("--all", action="store_true", help="every section")
    parser.add_argument("sections", nargs="*", help="section names to run (default: per --stale/--all)")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="workers (default: one per core)")
    parser.add_argument("--times", action="store_true", help="print each section's wall time")
    args = parser.parse_args(argv)

    scripts = all_sections()
    known = {s.name for s in scripts}
    unknown = [name for name in args.sections if name not in known]
    if unknown:
        parser.error(f"no section script named {', '.join(unknown)} (have: {', '.join(sorted(known))})")
    if args.sections:
        chosen = [s for s in scripts if s.name in args.sections]
    elif args.all:
        chosen = scripts
    else:
        chosen = [s for s in scripts if is_stale(s)]
    if not chosen:
        print("figures are up to date")
        return 0

    start = time.perf_counter()
    results = run_many([(s, 0, True, None, True) for s in chosen], args.jobs)
    failed = [r for r in results if not r["ok"]]
    for r in results:
        state = "ok" if r["ok"] else "FAILED"
        timing = f" {r['seconds']:.2f} s, from {r['started'] - start:.2f} s" if args.times else ""
        print(f"{r['script'].name}: {state}{timing}")
        if r["error"]:
            print(f"  {r['error'].rstrip()}".replace("\n", "\n  "), file=sys.stderr)
    if args.times:
        print(f"total: {time.perf_counter() - start:.2f} s wall for {len(results)} section(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    status = main()
    # Skip the interpreter's teardown: with torch loaded it takes most of a
    # second, and everything worth keeping is already written and flushed.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
