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
import multiprocessing
import os
import re
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

DIAGRAMS_DIR = Path(__file__).resolve().parent
REPO_ROOT = DIAGRAMS_DIR.parents[1]
sys.path.insert(0, str(DIAGRAMS_DIR))

import section_kit  # noqa: E402  (after the path set-up)

VENV_STAMP = REPO_ROOT / ".venv" / ".requirements-installed"


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
    found = []
    for init in sorted(DIAGRAMS_DIR.glob("*/__init__.py")):
        package = init.parent.name
        found += [SectionScript(package, p.stem) for p in sorted(init.parent.glob("*.py")) if p.stem != "__init__"]
    return found


def inputs_of(script: SectionScript) -> list[Path]:
    """Every file whose change makes this section's numbers stale."""
    paths = [script.path, DIAGRAMS_DIR / "section_kit.py", DIAGRAMS_DIR / script.package / "__init__.py"]
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
        return {"script": script, "ok": True, "seconds": time.perf_counter() - start,
                "record": section.record(), "error": None}
    except (section_kit.ClaimsFailed, section_kit.QuoteError) as error:
        message = str(error)
    except Exception:  # a bug in a section: show its traceback, keep the others going
        message = traceback.format_exc()
    return {"script": script, "ok": False, "seconds": time.perf_counter() - start,
            "record": None, "error": message}


def preload(scripts: list[SectionScript]) -> None:
    """Import what the workers will need once, in the parent, before forking."""
    for script in scripts:
        section_kit.section_module(script.package, script.name)
    if any("torch" in script.source() for script in scripts):
        section_kit.import_torch()


def run_many(jobs: list[tuple], workers: int | None = None) -> list[dict]:
    """Run jobs in forked workers, longest-expected first; results in job order."""
    if not jobs:
        return []
    preload(sorted({job[0] for job in jobs}, key=lambda s: (s.package, s.name)))
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    if workers == 1:
        return [_work(job) for job in jobs]
    with multiprocessing.get_context("fork").Pool(workers, maxtasksperchild=1) as pool:
        return pool.map(_work, jobs, chunksize=1)


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
        timing = f" {r['seconds']:.2f} s" if args.times else ""
        print(f"{r['script'].name}: {state}{timing}")
        if r["error"]:
            print(f"  {r['error'].rstrip()}".replace("\n", "\n  "), file=sys.stderr)
    if args.times:
        print(f"total: {time.perf_counter() - start:.2f} s wall for {len(results)} section(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
