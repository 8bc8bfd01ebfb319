"""`make figures`: rerun the page sections whose inputs changed, fast.

A section is stale when the hash of its inputs (section_inputs: its script,
the page modules it imports, declared data files, the shared machinery, the
result-deciding pins, the numeric environment) differs from the hash its
numbers file records; file times do not matter, so a fresh clone reruns
nothing. `--all` reruns everything (`make -B figures`). Deciding staleness
imports nothing heavy, so "nothing to do" is instant.

Stale sections run in forked workers, as many at a time as there are cores:
the parent imports numpy, matplotlib and torch once, in stages (a section's
own module only in the stage of what it needs), and forks each section as
soon as what it needs is loaded, longest first. The sections and their own
pools' runs share one job slot per core (job_slots.py), so no more than that
many train at once. One
section's syntax or import error, or failed claim, fails that section only.
Each section is announced when it starts and when it ends, with its time.

Safe to interrupt: outputs are written atomically, an interrupted or killed
run (Ctrl-C, SIGTERM, or its `make` killed) stops its workers, which remove
their temp files; a second concurrent run waits for the first.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import ctypes
import fcntl
import gc
import io
import json
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from pagekit import job_slots
from pagekit import kernel_fingerprint
from pagekit import numeric_env  # (light; the pin is applied before numpy loads)
from pagekit import inputs as section_inputs
from pagekit.paths import BUILD_DIR, DIAGRAMS_DIR, FIGURES_DIR, REPO_ROOT
from pagekit.registry import PageNameError, page_config, page_packages, section_scripts

# Last wall time per section, to start the longest first (a cache, not committed).
TIMES_FILE = BUILD_DIR / "section-times.json"
LOCK_FILE = BUILD_DIR / "make-figures.lock"

EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 1, 2, 130


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


# ---------------------------------------------------------------------------
# Workers.


def _terminate_quietly(signum, frame):
    """In a worker: turn SIGTERM into an exception, so atomic writes in
    progress remove their temp files on the way out; no job slot is waited
    for any more (job_slots.stop_waiting)."""
    job_slots.stop_waiting()
    raise KeyboardInterrupt(f"signal {signum}")


def _work(job: tuple) -> dict:
    """Run one section; never raises (errors are reported)."""
    script, seed_offset, figures, out_dir, write, inputs_hash = job[:6]
    reduced = job[6] if len(job) > 6 else False
    from pagekit import cli, figure_bounds, numformat, record

    start = time.perf_counter()
    try:
        module = cli.section_module(script.package, script.name)
        section = cli.run_section(
            module,
            seed_offset=seed_offset,
            figures=figures,
            out_dir=Path(out_dir) if out_dir else None,
            write=write,
            raise_on_failed_claims=write,  # the robustness report wants the results anyway
            reduced=reduced,
            inputs_hash=inputs_hash,
        )
        return {
            "script": script,
            "ok": True,
            "started": start,
            "seconds": time.perf_counter() - start,
            "record": section.record(),
            "error": None,
        }
    except (
        record.ClaimsFailed,
        numformat.QuoteError,
        figure_bounds.FigureBoundsError,
        section_inputs.InputError,
    ) as error:
        message = str(error)
    except OSError as error:
        message = f"cannot write {error.filename or 'its outputs'}: {error.strerror}"
    except Exception:  # a bug in a section: show its traceback, keep the others going
        message = traceback.format_exc()
    return {
        "script": script,
        "ok": False,
        "started": start,
        "seconds": time.perf_counter() - start,
        "record": None,
        "error": message,
    }


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
    from pagekit import pools

    if level >= NEEDS_TORCH:
        torch = pools.import_torch()
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


def _join_or_kill(process, seconds: float = 10) -> None:
    """Wait for a worker that has reported or been told to stop; one stuck
    (e.g. in its own pool's shutdown) is killed, and its workers die with it."""
    process.join(timeout=seconds)
    if process.is_alive():
        process.kill()
        process.join()


def _child(job: tuple, connection) -> None:
    signal.signal(signal.SIGTERM, _terminate_quietly)
    signal.signal(signal.SIGINT, _terminate_quietly)
    die_with_parent()
    interrupted = False
    try:
        with job_slots.slot():  # given back before the result is sent: the next run may start
            result = _work(job)
        connection.send(result)
    except KeyboardInterrupt:
        interrupted = True  # its temp files are removed by now (atomic writes unwind)
    finally:
        connection.close()
    if interrupted:
        # Out at once: the interpreter's and multiprocessing's exit handlers
        # can wait for good on a pool caught mid-shutdown (seen: the section
        # in a futex wait, the runner waiting for it). Its pool's workers end
        # with it (pools.terminate_with_parent).
        os._exit(EXIT_INTERRUPTED)


def run_many(
    jobs: list[tuple], workers: int | None = None, *, announce=None, remember_times: bool = False, isolate: bool = False
) -> list[dict]:
    """Run jobs in forked workers, about ``workers`` at a time, longest (by
    the last run's times) first; results come back in job order.

    The parent imports in stages (torch, then torch's optimiser machinery)
    and forks each section as soon as what it needs is imported, so sections
    run beside the imports and inherit them rather than importing them again.
    After each stage the longest section now ready starts even if every
    worker is busy: it is the critical path, and the parent is blocked while
    it imports. ``announce(event, job, result)`` is called with "start" and
    "end" as it happens. ``remember_times`` keeps the times for the next
    run's order (the page's own runs only: the tests' reduced runs and the
    robustness report's variants would mislead it). With one worker the jobs
    run in this process, unless ``isolate``: then each still gets a forked
    process of its own (with several torch threads, a section that forks its
    own pool after another section used those threads in the same process
    hangs: OpenMP's threads do not survive a fork).
    """
    import multiprocessing
    import multiprocessing.connection

    if not jobs:
        return []
    results: list[dict | None] = [None] * len(jobs)
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    times = last_times()
    pending = sorted(range(len(jobs)), key=lambda i: -times.get(jobs[i][0].name, 0.0))
    level_of = {i: needs(jobs[i][0]) for i in pending}
    top_level = max(level_of.values())
    warmed = []

    def load(levels: range) -> None:
        """Import the modules of the sections at these levels; one that
        fails to import fails alone, now."""
        scripts = sorted({jobs[i][0] for i in pending if level_of[i] in levels}, key=lambda s: (s.package, s.name))
        if not scripts:
            return
        broken = preload(scripts, warm_up=not warmed)
        warmed.append(True)
        for i in [i for i in pending if jobs[i][0] in broken]:
            pending.remove(i)
            results[i] = {
                "script": jobs[i][0],
                "ok": False,
                "started": time.perf_counter(),
                "seconds": 0.0,
                "record": None,
                "error": broken[jobs[i][0]],
            }
            if announce:
                announce("end", jobs[i], results[i])

    if workers == 1 and not isolate:
        prepare(top_level)
        load(range(top_level + 1))
        for i in list(pending):
            if announce:
                announce("start", jobs[i], None)
            results[i] = _work(jobs[i])
            if announce:
                announce("end", jobs[i], results[i])
    else:
        context = multiprocessing.get_context("fork")
        running = {}
        # One slot per worker, shared with the sections' own pools (job_slots.py),
        # unless this process already draws on a jobserver (a report's variant child).
        own_slots = job_slots.active() is None
        if own_slots:
            job_slots.activate(job_slots.JobSlots(workers))

        def start(i: int) -> None:
            _check_stop()
            pending.remove(i)
            receive, send = context.Pipe(duplex=False)
            # Everything imported so far is out of the garbage collector's
            # sight (gc.freeze): the worker's collections skip the parent's
            # objects (with torch and matplotlib some 200,000, about 0.1 s a
            # full collection) and do not write to them, so their memory
            # stays shared instead of being copied into every worker.
            gc.freeze()
            # Not daemonic: a section may fork workers of its own.
            process = context.Process(target=_child, args=(jobs[i], send))
            process.start()
            send.close()
            running[receive] = (i, process)
            if announce:
                announce("start", jobs[i], None)

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
                _join_or_kill(process)
                results[i] = {
                    "script": jobs[i][0],
                    "ok": False,
                    "started": 0.0,
                    "seconds": 0.0,
                    "record": None,
                    "error": f"worker died (exit code {process.exitcode})",
                }
            _join_or_kill(process)
            if announce:
                announce("end", jobs[i], results[i])

        try:
            # Each stage imports only what its sections need, then starts
            # them: a section that needs no torch starts before torch loads.
            load(range(NEEDS_NOTHING, NEEDS_NOTHING + 1))
            start_ready(NEEDS_NOTHING, force_one=False)
            for level in range(NEEDS_TORCH, top_level + 1):
                prepare(level)
                load(range(level, level + 1))
                for receive in multiprocessing.connection.wait(list(running), timeout=0):
                    collect(receive)
                start_ready(level, force_one=True)
            while pending or running:
                _check_stop()
                start_ready(top_level, force_one=False)
                for receive in multiprocessing.connection.wait(list(running), timeout=0.5):
                    collect(receive)
            _check_stop()
        finally:  # on an interrupt, stop every worker; they remove their temp files
            for _, process in running.values():
                process.terminate()
            for _, process in running.values():
                _join_or_kill(process)
            if own_slots:
                job_slots.active().close()
                job_slots.activate(None)
            gc.unfreeze()  # a long-lived caller (the robustness report) collects as usual again

    if remember_times:
        times.update({r["script"].name: round(r["seconds"], 3) for r in results if r and r["ok"]})
        save_times(times)
    return results


# ---------------------------------------------------------------------------
# Being a well-behaved command.


def die_with_parent() -> None:
    """Linux: get SIGTERM when the parent (make, or the runner for a worker)
    dies, so killing it stops the run instead of leaving it writing. The same
    as pools.terminate_with_parent, kept here so that `make figures`
    with nothing to do does not import pagekit.section (matplotlib: half a second)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent is already gone
        os.kill(os.getpid(), signal.SIGTERM)


_STOP = {"signal": None}  # set by the handler: an exception raised at a bad moment can be swallowed


def _interrupted(signum, frame):
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

    scripts = all_sections(pages)
    known = {s.name for s in scripts}
    unknown = [name for name in args.sections if name not in known]
    if unknown:
        parser.error(f"no section script named {', '.join(unknown)} (have: {', '.join(sorted(known))})")

    die_with_parent()
    # Both set explicitly: a process started with SIGINT ignored (a background
    # job, some CI shells) would otherwise not stop its workers on Ctrl-C.
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGINT, _interrupted)
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
    jobs = [(s, 0, True, None, True, current_hash(s)) for s, _ in chosen]

    def announce(event: str, job: tuple, result: dict | None) -> None:
        name = job[0].name
        at = time.perf_counter() - start
        if event == "start":
            print(f"[{at:6.1f} s] start  {name}", flush=True)
        elif result["ok"]:
            print(f"[{at:6.1f} s] done   {name:<{width}}  {result['seconds']:.1f} s", flush=True)
        else:
            first = result["error"].strip().splitlines()
            print(f"[{at:6.1f} s] FAILED {name:<{width}}  {first[-1] if first else ''}", flush=True)

    # A section that times the machine runs alone, after the others: a
    # neighbour on the other core would slow its timings.
    alone = [i for i, job in enumerate(jobs) if runs_alone(job[0])]
    shared = [i for i in range(len(jobs)) if i not in alone]
    results: list[dict] = [None] * len(jobs)  # type: ignore[list-item]
    for group, workers in ((shared, jobs_wanted), (alone, 1)):
        done = run_many([jobs[i] for i in group], workers, announce=announce, remember_times=True)
        for i, result in zip(group, done, strict=True):
            results[i] = result
    failed = [r for r in results if not r["ok"]]
    for r in failed:
        print(
            f"\n{r['script'].page}/{r['script'].name} failed; its committed numbers are now stale "
            f"for `make check`:\n  " + r["error"].rstrip().replace("\n", "\n  "),
            file=sys.stderr,
        )
    changed_meanwhile = [
        job[0].name for job, r in zip(jobs, results, strict=True) if r["ok"] and current_hash(job[0]) != job[5]
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
