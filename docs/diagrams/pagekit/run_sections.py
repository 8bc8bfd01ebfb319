"""`make figures`: rerun the page sections whose inputs changed, fast.

A section is stale when the hash of its inputs (section_inputs: its script,
the page modules it imports, declared data files, the shared machinery, the
result-deciding pins, the numeric environment) differs from the hash its
numbers file records; file times do not matter, so a fresh clone reruns
nothing. `--all` reruns everything (`make -B figures`). Deciding staleness
imports nothing heavy, so "nothing to do" is instant.

Stale sections run on the one scheduler (executor.run_jobs): this process
imports numpy, matplotlib, torch and the section modules once, then forks
one worker per core; every section's declared runs and its final step share
those workers, longest first (by the last run's times). One section's
syntax or import error, or failed claim, fails that section only. Each
section is announced when it starts and when it ends, with its time.

Safe to interrupt: outputs are written atomically, an interrupted or killed
run (Ctrl-C, SIGTERM, or its `make` killed) stops its workers, which remove
their temp files; a second concurrent run waits for the first.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import fcntl
import io
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pagekit import executor
from pagekit import kernel_fingerprint
from pagekit import numeric_env  # (light; the pin is applied before numpy loads)
from pagekit import shared_runs
from pagekit import inputs as section_inputs
from pagekit.paths import BUILD_DIR, DIAGRAMS_DIR, FIGURES_DIR, REPO_ROOT
from pagekit.registry import PageNameError, page_config, page_packages, section_scripts

# Last wall time per section, to start the longest first (a cache, not committed).
TIMES_FILE = BUILD_DIR / "section-times.json"
LOCK_FILE = BUILD_DIR / "make-figures.lock"

EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 1, 2, executor.EXIT_INTERRUPTED


@dataclass(frozen=True)
class SectionScript:
    package: str
    name: str

    @property
    def path(self) -> Path:
        return DIAGRAMS_DIR / self.package / f"{self.name}.py"

    @property
    def page(self) -> str:
        return page_config(self.package).PAGE

    @property
    def numbers_path(self) -> Path:
        return FIGURES_DIR / self.page / "numbers" / f"{self.name}.json"

    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")


def all_sections(pages: list[str] | None = None) -> list[SectionScript]:
    """Every section script, of the given page packages or of all pages."""
    return [SectionScript(package, name) for package in (pages or page_packages()) for name in section_scripts(package)]


def inputs_of(script: SectionScript) -> list[Path]:
    return section_inputs.section_inputs(script.package, script.name)


def recorded_hash(script: SectionScript) -> str | None:
    """The inputs hash the committed numbers file records (None: no usable
    file, or one made where the numeric pin did not hold, see
    numeric_env.foreign, so it reruns here)."""
    try:
        record = json.loads(script.numbers_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or numeric_env.foreign(record):
        return None
    return record.get("inputs_hash")


def foreign_numbers(script: SectionScript) -> bool:
    try:
        return bool(numeric_env.foreign(json.loads(script.numbers_path.read_text(encoding="utf-8"))))
    except (OSError, ValueError, AttributeError):
        return False


def stale_reason(script: SectionScript) -> str | None:
    """Why the section must rerun, or None when its numbers are current."""
    recorded = recorded_hash(script)
    if recorded is None:
        if not script.numbers_path.exists():
            return "no numbers yet"
        return (
            "its numbers were made where the numeric pin did not hold"
            if foreign_numbers(script)
            else "its numbers record no inputs hash"
        )
    try:
        current = section_inputs.inputs_hash(script.package, script.name, numeric_env.PINNED)
    except section_inputs.InputError:
        return "its script does not parse"  # rerun, to report the error
    return None if current == recorded else "inputs changed"


def runs_alone(script: SectionScript) -> bool:
    """A section its page lists in TIMED_SECTIONS: it measures the machine's
    speed, so nothing else may run beside it."""
    return script.name in getattr(page_config(script.package), "TIMED_SECTIONS", ())


def current_hash(script: SectionScript) -> str | None:
    """The inputs hash now, or None when a script does not parse (its run
    then fails with the syntax error)."""
    try:
        return section_inputs.inputs_hash(script.package, script.name, numeric_env.PINNED)
    except section_inputs.InputError:
        return None


# What a section needs imported before it can fork, cheapest first: nothing
# beyond numpy and matplotlib; torch; torch's optimiser classes (the first
# Optimizer a process builds imports torch's compiler, about a second more).
NEEDS_NOTHING, NEEDS_TORCH, NEEDS_OPTIMISER = 0, 1, 2


def needs(script: SectionScript) -> int:
    """Read from the code of the script and the page modules it imports (not
    comments): a call to import_torch() or an ``import torch`` (``from
    torch...``) means torch; an attribute torch.optim.<Class> means an
    optimiser class."""
    level = NEEDS_NOTHING
    try:
        paths = [p for p in inputs_of(script) if p.suffix == ".py" and p.parent.name == script.package]
    except section_inputs.InputError:
        return level
    for path in paths:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "import_torch":
                level = max(level, NEEDS_TORCH)
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" for a in node.names):
                level = max(level, NEEDS_TORCH)
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "torch":
                level = max(level, NEEDS_TORCH)
            if (
                isinstance(node, ast.Attribute)
                and node.attr[:1].isupper()
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "optim"
            ):
                level = NEEDS_OPTIMISER
    return level


def preload(scripts: list[SectionScript], *, warm_up: bool = True) -> dict[SectionScript, str]:
    """Import the section modules once, in the parent, before forking, and
    (``warm_up``) warm matplotlib's font and text-to-path caches with one
    tiny SVG. Returns the scripts that failed to import, with the error:
    they fail alone, the others run."""
    import pagekit.section  # noqa: F401  (the machinery, numpy and matplotlib: loaded once, before forking)
    from pagekit import cli, registry, style

    broken = {}
    for script in scripts:
        try:
            cli.section_module(script.package, script.name)
        except Exception as error:
            where = ""
            if isinstance(error, SyntaxError):
                where = f"{registry.rel_path(Path(error.filename or script.path))}:{error.lineno}: "
            broken[script] = f"{where}cannot import {script.name}: {type(error).__name__}: {error}"
    if warm_up:
        fig = style.new_figure(1, 1)
        fig.add_subplot().set_title("warm-up 0.5")
        fig.savefig(io.BytesIO(), format="svg")
    return broken


def prepare(level: int) -> None:
    """Import what sections at ``level`` need, so forked workers inherit it."""
    from pagekit import torch_loader

    if level >= NEEDS_TORCH:
        torch = torch_loader.import_torch()
    if level >= NEEDS_OPTIMISER:
        torch.optim.Adam([torch.zeros(1, requires_grad=True)])


def last_times() -> dict[str, float]:
    try:
        times = json.loads(TIMES_FILE.read_text(encoding="utf-8"))
        return times if isinstance(times, dict) else {}
    except (OSError, ValueError):
        return {}


def save_times(times: dict[str, float]) -> None:
    """Keep the timings for the next run's order; a cache, so a failed write
    (read-only or full disk) is a warning, not a failure."""
    from pagekit import atomic, registry

    try:
        atomic.write_json_atomically(TIMES_FILE, times)
    except OSError as error:
        print(
            f"warning: could not save section timings to {registry.rel_path(TIMES_FILE)} "
            f"({error.strerror}); the next run orders sections without them",
            file=sys.stderr,
        )


def load_for_workers(scripts: list[SectionScript]) -> dict[SectionScript, str]:
    """Import, in this process and before any worker forks, what the sections
    need (their modules, torch, torch's optimiser machinery), so every worker
    inherits it instead of importing it again. Returns the scripts that
    failed to import, with the error: they fail alone, the others run."""
    broken = preload(scripts)
    prepare(max((needs(s) for s in scripts if s not in broken), default=NEEDS_NOTHING))
    return broken


def run_many(jobs: list[executor.Job], cores: int | None = None, *, announce=None, priority=None) -> list[dict]:
    """Run section jobs on the scheduler (executor.run_jobs), after importing
    what they need here, once (load_for_workers); a section that fails to
    import fails alone, with its file and line. Results in job order."""
    broken = load_for_workers(sorted({job.script for job in jobs}, key=lambda s: (s.package, s.name)))
    results: list[dict | None] = [None] * len(jobs)
    for i, job in enumerate(jobs):
        if job.script in broken:
            results[i] = {
                "script": job.script,
                "ok": False,
                "started": 0.0,
                "seconds": 0.0,
                "cpu": 0.0,
                "record": None,
                "error": broken[job.script],
            }
            if announce:
                announce("end", job, results[i])
    todo = [i for i in range(len(jobs)) if results[i] is None]
    done = executor.run_jobs(
        [jobs[i] for i in todo], cores=cores, priority=priority, announce=announce, stop_check=_check_stop
    )
    for i, result in zip(todo, done, strict=True):
        results[i] = result
    return results  # type: ignore[return-value]


# ---------------------------------------------------------------------------
# Being a well-behaved command.


die_with_parent = executor.die_with_parent


_STOP = {"signal": None}  # set by the handler: an exception raised at a bad moment can be swallowed


def interrupted(signum, frame):
    """A signal handler: SIGTERM or SIGINT becomes KeyboardInterrupt."""
    _STOP["signal"] = signum
    raise KeyboardInterrupt(f"signal {signum}")


def _check_stop() -> None:
    """Raise the interrupt again if the handler's exception was swallowed
    (e.g. raised inside a fork handler of the standard library)."""
    if _STOP["signal"] is not None:
        raise KeyboardInterrupt(f"signal {_STOP['signal']}")


@contextlib.contextmanager
def one_run_at_a_time():
    """Hold an exclusive lock for the whole run; a second run waits, saying so."""
    try:
        BUILD_DIR.mkdir(parents=True, exist_ok=True)
        handle = open(LOCK_FILE, "a+")
    except OSError as error:
        print(
            f"warning: cannot create the lock {LOCK_FILE} ({error.strerror}); not guarding against a concurrent run",
            file=sys.stderr,
        )
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            print(
                f"another `make figures` is running (pid {holder}); waiting for it to finish",
                file=sys.stderr,
                flush=True,
            )
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()


def remove_leftover_temp_files(pages: list[str]) -> list[Path]:
    """Temp files of a run killed outright (SIGKILL leaves no chance to clean
    up). Called while holding the lock, so no writer is using them."""
    found = []
    for page in pages:
        for folder in (FIGURES_DIR / page, FIGURES_DIR / page / "numbers"):
            for tmp in folder.glob(".*.tmp"):
                tmp.unlink(missing_ok=True)
                found.append(tmp)
    return found


def resolve_pages(names: list[str]) -> list[str]:
    """Page packages from page slugs or package names, validated against the registry."""
    if not names:
        return page_packages()
    by_slug = {page_config(p).PAGE: p for p in page_packages()}
    chosen = []
    for name in names:
        package = by_slug.get(name, name if name in page_packages() else None)
        if package is None:
            raise PageNameError(f"no page named {name!r} (pages: {', '.join(sorted(by_slug))})")
        chosen.append(package)
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--stale", action="store_true", help="only sections whose inputs changed (default)")
    which.add_argument("--all", action="store_true", help="every section")
    parser.add_argument("sections", nargs="*", help="section names to run (default: per --stale/--all)")
    parser.add_argument(
        "--page", action="append", default=[], help="only this page (slug or package; repeatable; default every page)"
    )
    parser.add_argument("-j", "--jobs", type=int, default=None, help="workers (default: one per core)")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    try:
        pages = resolve_pages([p for p in args.page if p])
    except PageNameError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if numeric_env.variant_name() != numeric_env.PINNED:
        print(
            f"error: ${numeric_env.VARIANT_ENV} is set: `make figures` writes only the page's own run "
            "(use `make seeds` for the other numeric variants)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT

    share_runs()
    scripts = all_sections(pages)
    known = {s.name for s in scripts}
    unknown = [name for name in args.sections if name not in known]
    if unknown:
        parser.error(f"no section script named {', '.join(unknown)} (have: {', '.join(sorted(known))})")

    die_with_parent()
    # Both set explicitly: a process started with SIGINT ignored (a background
    # job, some CI shells) would otherwise not stop its workers on Ctrl-C.
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    try:
        with one_run_at_a_time():
            for tmp in remove_leftover_temp_files(sorted({s.page for s in scripts})):
                print(f"removed a temp file left by an interrupted run: {tmp.relative_to(REPO_ROOT)}", file=sys.stderr)
            if args.sections:
                chosen = [(s, "asked for") for s in scripts if s.name in args.sections]
            elif args.all:
                chosen = [(s, "make -B") for s in scripts]
            else:
                chosen = [(s, why) for s in scripts if (why := stale_reason(s))]
            if not chosen:
                print(f"figures are up to date: no section's inputs changed ({len(scripts)} sections checked)")
                return 0
            warn_if_foreign_kernels()
            return run_and_report(chosen, args.jobs)
    except KeyboardInterrupt:
        print(
            "interrupted: the committed outputs are as they were before each unfinished section "
            "(finished sections were written whole)",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED


def share_runs() -> None:
    """Let the sections this process runs share their identical training
    runs (pagekit.shared_runs), kept under build/shared-runs/."""
    os.environ.setdefault(shared_runs.SHARED_RUNS_ENV, str(BUILD_DIR / "shared-runs"))


def warn_if_foreign_kernels() -> None:
    """Say plainly when this machine's kernels do not give the committed bits
    (kernel_fingerprint.py), and mark every record made here as not the
    page's own run (numeric_env.record reads FOREIGN_KERNELS_ENV)."""
    reason = kernel_fingerprint.mismatch_reason()
    if reason and numeric_env.can_honour_pin():
        os.environ[numeric_env.FOREIGN_KERNELS_ENV] = reason
        print(
            f"note: {reason}. The numbers made here are this machine's, not the page's own run: "
            "their records say so, and they will differ from the committed ones in their last digits.",
            file=sys.stderr,
            flush=True,
        )


def run_and_report(chosen: list[tuple[SectionScript, str]], jobs_wanted: int | None) -> int:
    start = time.perf_counter()
    width = max(len(s.name) for s, _ in chosen)
    print(f"running {len(chosen)} section(s): " + ", ".join(f"{s.name} ({why})" for s, why in chosen), flush=True)
    jobs = [executor.Job(s, inputs_hash=current_hash(s)) for s, _ in chosen]

    def announce(event: str, job: executor.Job, result: dict | None) -> None:
        name = job.script.name
        at = time.perf_counter() - start
        if event == "start":
            print(f"[{at:6.1f} s] start  {name}", flush=True)
        elif result["ok"]:
            print(f"[{at:6.1f} s] done   {name:<{width}}  {result['cpu']:.1f} s CPU", flush=True)
        else:
            first = result["error"].strip().splitlines()
            print(f"[{at:6.1f} s] FAILED {name:<{width}}  {first[-1] if first else ''}", flush=True)

    times = last_times()
    # A section that times the machine runs alone, after the others: a
    # neighbour on the other core would slow its timings.
    alone = [i for i, job in enumerate(jobs) if runs_alone(job.script)]
    shared = [i for i in range(len(jobs)) if i not in alone]
    results: list[dict] = [None] * len(jobs)  # type: ignore[list-item]
    for group, cores in ((shared, jobs_wanted), (alone, 1)):
        done = run_many(
            [jobs[i] for i in group],
            cores,
            announce=announce,
            priority=lambda job: times.get(job.script.name, 0.0),
        )
        for i, result in zip(group, done, strict=True):
            results[i] = result
    times.update({r["script"].name: round(r["cpu"], 3) for r in results if r["ok"]})
    save_times(times)
    failed = [r for r in results if not r["ok"]]
    for r in failed:
        print(
            f"\n{r['script'].page}/{r['script'].name} failed; its committed numbers are now stale "
            f"for `make check`:\n  " + r["error"].rstrip().replace("\n", "\n  "),
            file=sys.stderr,
        )
    changed_meanwhile = [
        job.script.name
        for job, r in zip(jobs, results, strict=True)
        if r["ok"] and current_hash(job.script) != job.inputs_hash
    ]
    for name in changed_meanwhile:
        print(
            f"note: {name} changed while it ran: its numbers record the old inputs, so the next "
            "`make figures` reruns it",
            file=sys.stderr,
        )
    total = time.perf_counter() - start
    summary = f"{len(results) - len(failed)} of {len(results)} section(s) regenerated in {total:.1f} s"
    if failed:
        summary += f"; FAILED: {', '.join(r['script'].name for r in failed)}"
    print(summary, file=sys.stderr if failed else sys.stdout)
    return EXIT_FAILED if failed else 0


if __name__ == "__main__":
    status = main()
    # Skip the interpreter's teardown: with torch loaded it takes most of a
    # second, and everything worth keeping is already written and flushed.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
