"""The one execution layer: every run of `make figures`, of the robustness
report and of the tests' reduced runs goes through ``run_jobs``.

A *job* is one run of one section (the page's own run, a test's reduced run,
or a report's run under another seed or numeric variant). A section may
declare its independent runs (its module's ``independent_runs(section)`` returns
``(function, arguments)`` pairs; ``compute(section, results)`` then gets
their results in order). ``run_jobs`` splits every job into its declared
runs and a final step (compute, claims, figures, numbers file) and sends all
of them to standard ``concurrent.futures`` executors, at most ``cores`` at
once, the longest first, a job's final step as soon as its runs are in. So
there is one pool and no pool inside it: a section that trains six models
spreads them over the cores beside every other section's work.

Executors are per numeric variant, because the libraries read the variant's
environment when they load (numeric_env): ``LocalExecutors`` (the default)
forks this process's own variant's workers from it (they inherit what it
imported) and spawns fresh interpreters for any other variant, the variant
applied in the worker initialiser; ``DaskExecutors`` sends the work to a
running Dask cluster (``distributed``) whose workers declare the variant they
were started under as a resource (see ``dask_worker_command``).

Interrupts: SIGTERM or SIGINT in the caller raises KeyboardInterrupt there;
``run_jobs`` then terminates its workers (each unwinds its atomic writes,
so no temp file or half-written output is left) and re-raises. A worker also
dies with its parent (PR_SET_PDEATHSIG), so killing the caller outright
leaves nothing running.
"""

from __future__ import annotations

import concurrent.futures as futures
import ctypes
import heapq
import multiprocessing
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from pagekit import numeric_env

EXIT_INTERRUPTED = 130
# Idle OpenMP threads sleep instead of spinning: a spinning two-thread variant
# burnt the cores the other runs needed. Changes no number.
QUIET_THREADS = {"OMP_WAIT_POLICY": "PASSIVE", "KMP_BLOCKTIME": "0"}


@dataclass(frozen=True)
class Job:
    """One run of one section (``script``: a run_sections.SectionScript)."""

    script: Any
    seed_offset: int = 0
    figures: bool = True
    out_dir: str | None = None
    write: bool = True
    inputs_hash: str | None = None
    reduced: bool = False
    variant: str = numeric_env.PINNED


# ---------------------------------------------------------------------------
# In a worker.

_IN_WORKER = {"variant": None}


def start_worker(variant: str, load_torch: bool = True) -> None:
    """A worker's initialiser: the variant's numeric environment (applied
    here, before numpy loads, in a spawned interpreter; inherited in a forked
    one), torch with its pinned thread count when ``load_torch`` (a run that
    needs no torch does not pay for importing it), and the signals of a worker:
    SIGTERM unwinds the task (its atomic writes remove their temp files),
    SIGINT is left to the parent, and the parent's death ends it."""
    if "numpy" not in sys.modules:
        os.environ.update({numeric_env.VARIANT_ENV: variant, **QUIET_THREADS})
    check_variant(variant)
    _IN_WORKER["variant"] = variant
    signal.signal(signal.SIGTERM, _unwind)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    import pagekit.section  # noqa: F401  (numpy, matplotlib and the machinery, once per worker)

    if load_torch:
        from pagekit import torch_loader

        torch_loader.import_torch()


def check_variant(variant: str) -> None:
    """Refuse to run a job under another variant than this process's."""
    applied = numeric_env.applied_variant()
    if applied != variant:
        raise RuntimeError(
            f"this worker runs numeric variant {applied!r}, not {variant!r}: "
            f"start it with the variant's environment (executor.dask_worker_command)"
        )


def _unwind(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def in_worker() -> bool:
    return _IN_WORKER["variant"] is not None


def die_with_parent() -> None:
    """Linux: get SIGTERM when the parent dies (PR_SET_PDEATHSIG), so no
    worker outlives an interrupted or killed run; elsewhere, nothing."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent is already gone
        os.kill(os.getpid(), signal.SIGTERM)


def _guarded(task: Callable[[], Any]) -> Any:
    """Run a task; an interrupt (SIGTERM, turned into KeyboardInterrupt) has
    unwound the task's atomic writes by the time it gets here, and the worker
    leaves at once: the executor's own machinery can wait for good on a
    parent that is gone."""
    try:
        return task()
    except KeyboardInterrupt:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)


def section_of(job: Job):
    """The section's module and a fresh Section for the job (cli.new_section)."""
    from pagekit import cli

    module = cli.section_module(job.script.package, job.script.name)
    if "torch" in sys.modules:  # whoever imported it: the pinned thread count before any run
        from pagekit import torch_loader

        torch_loader.import_torch()
    return module, cli.new_section(
        module, seed_offset=job.seed_offset, out_dir=job.out_dir, reduced=job.reduced, inputs_hash=job.inputs_hash
    )


def declared_runs(job: Job) -> list[tuple[Callable, tuple]]:
    """The job's declared runs (none for a section without ``independent_runs``)."""
    module, section = section_of(job)
    return list(module.independent_runs(section)) if hasattr(module, "independent_runs") else []


def run_part(job: Job, index: int) -> tuple[Any, float]:
    """In a worker: one declared run of the job, with its CPU seconds."""

    def task():
        check_variant(job.variant)
        cpu = time.process_time()
        function, arguments = declared_runs(job)[index]
        return function(*arguments), time.process_time() - cpu

    return _guarded(task)


def finish(job: Job, run_results: list | None) -> dict:
    """In a worker: the job's final step (compute, claims, figures, numbers
    file); never raises for a section's own error (it is reported)."""

    def task():
        check_variant(job.variant)
        return section_result(job, run_results)

    return _guarded(task)


def section_result(job: Job, run_results: list | None) -> dict:
    from pagekit import cli, figure_bounds, numformat, record
    from pagekit import inputs as section_inputs

    start, cpu = time.perf_counter(), time.process_time()
    outcome = {"script": job.script, "ok": False, "started": start, "record": None, "error": None}
    try:
        module = cli.section_module(job.script.package, job.script.name)
        section = cli.run_section(
            module,
            seed_offset=job.seed_offset,
            figures=job.figures,
            out_dir=job.out_dir,
            write=job.write,
            raise_on_failed_claims=job.write,  # the robustness report wants the results anyway
            reduced=job.reduced,
            inputs_hash=job.inputs_hash,
            run_results=run_results,
        )
        outcome.update(ok=True, record=section.record())
    except (record.ClaimsFailed, numformat.QuoteError, figure_bounds.FigureBoundsError, section_inputs.InputError) as e:
        outcome["error"] = str(e)
    except OSError as error:
        outcome["error"] = f"cannot write {error.filename or 'its outputs'}: {error.strerror}"
    except Exception:  # a bug in a section: show its traceback, keep the others going
        outcome["error"] = traceback.format_exc()
    outcome.update(seconds=time.perf_counter() - start, cpu=time.process_time() - cpu)
    return outcome


def run_here(runs: list[tuple[Callable, tuple]], cores: int | None = None) -> list:
    """A section's declared runs when no scheduler gave their results (its
    own command line, a notebook): on a local process pool, or one after the
    other inside a worker (no pool inside a pool)."""
    if in_worker() or len(runs) < 2 or (cores or os.cpu_count() or 1) < 2:
        return [function(*arguments) for function, arguments in runs]
    workers = min(len(runs), cores or os.cpu_count() or 1)
    context = multiprocessing.get_context("fork")
    with futures.ProcessPoolExecutor(workers, mp_context=context, initializer=die_with_parent) as pool:
        return [f.result() for f in [pool.submit(function, *arguments) for function, arguments in runs]]


# ---------------------------------------------------------------------------
# Executors.


class LocalExecutors:
    """Process pools on this machine, one per numeric variant, made on first
    use: forked from this process for its own variant, spawned (the variant
    applied in the initialiser) for any other."""

    def __init__(self, cores: int):
        self.cores = cores
        self.pools: dict[str, futures.ProcessPoolExecutor] = {}

    def get(self, variant: str) -> futures.Executor:
        if variant not in self.pools:
            import gc

            own = variant == numeric_env.applied_variant()
            if own:
                # What this process imported stays out of the workers' garbage
                # collections, so its memory stays shared instead of copied.
                gc.freeze()
            context = multiprocessing.get_context("fork" if own else "spawn")
            # This process loaded torch if any run needs it
            # (run_sections.load_for_workers): a forked worker inherits it, a
            # spawned one loads it too; runs that need no torch pay for none.
            load_torch = "torch" in sys.modules
            self.pools[variant] = futures.ProcessPoolExecutor(
                self.cores, mp_context=context, initializer=start_worker, initargs=(variant, load_torch)
            )
        return self.pools[variant]

    def replace(self, variant: str) -> None:
        """After a worker died (the pool is broken): a new pool next time."""
        pool = self.pools.pop(variant, None)
        if pool is not None:
            stop_pool(pool)

    def close(self, *, kill: bool = False) -> None:
        for pool in self.pools.values():
            if kill:
                stop_pool(pool)
            else:
                pool.shutdown(wait=True)
        self.pools.clear()
        import gc

        gc.unfreeze()


def stop_pool(pool: futures.ProcessPoolExecutor) -> None:
    """Stop a pool's workers now (Python 3.14 has terminate_workers(); before
    it, the pool's processes are only reachable through its ``_processes``)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + 5
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()


class DaskExecutors:
    """The work of every variant sent to a running Dask cluster: a task of
    variant V goes to a worker that declared the resource ``numeric-V``."""

    def __init__(self, address: str):
        from distributed import Client

        self.client = Client(address, set_as_default=False)
        self.executors: dict[str, futures.Executor] = {}

    def get(self, variant: str) -> futures.Executor:
        if variant not in self.executors:
            self.executors[variant] = self.client.get_executor(resources={variant_resource(variant): 1}, pure=False)
        return self.executors[variant]

    def replace(self, variant: str) -> None:
        pass

    def close(self, *, kill: bool = False) -> None:
        self.client.close()


def variant_resource(variant: str) -> str:
    return f"numeric-{variant}"


def dask_worker_command(scheduler: str, variant: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a Dask worker for one variant: the
    variant's settings must be in its environment before it starts (a Dask
    worker imports numpy as it loads), one thread (torch's thread count is
    part of the pin), no nanny (it would start the worker afresh)."""
    command = [
        sys.executable,
        "-m",
        "distributed.cli.dask_worker",
        scheduler,
        "--nthreads",
        "1",
        "--no-nanny",
        "--resources",
        f"{variant_resource(variant)}=1",
    ]
    environment = {
        **os.environ,
        **QUIET_THREADS,
        **numeric_env.settings(variant),
        numeric_env.VARIANT_ENV: variant,
    }
    for name in numeric_env.CLEARED:
        environment.pop(name, None)
    return command, environment


# ---------------------------------------------------------------------------
# The scheduler.


def run_jobs(
    jobs: list[Job],
    *,
    cores: int | None = None,
    executors=None,
    priority: Callable[[Job], float] | None = None,
    announce: Callable | None = None,
    stop_check: Callable[[], None] | None = None,
) -> list[dict]:
    """Run every job; results in job order, each a dict with ``ok``,
    ``record``, ``error``, ``seconds`` (wall) and ``cpu`` (its runs' and its
    final step's CPU seconds).

    At most ``cores`` tasks run at once; among ready tasks a final step goes
    first (its job is nearly done), then the runs of the job with the
    highest ``priority`` (say, last time's cost). ``announce(event, job,
    result)`` is called with "start" and "end". ``stop_check`` is called
    while waiting (to raise an interrupt a handler recorded)."""
    if not jobs:
        return []
    cores = max(1, cores or os.cpu_count() or 1)
    own = executors is None
    executors = executors or LocalExecutors(cores)
    priority = priority or (lambda job: 0.0)
    results: list[dict | None] = [None] * len(jobs)
    parts: dict[int, list] = {}
    remaining: dict[int, int] = {}
    cpu: dict[int, float] = {}
    began: dict[int, float] = {}
    ready: list[tuple] = []  # heap of (rank, sequence, job index, part index or None)
    sequence = 0

    def push(i: int, part: int | None) -> None:
        nonlocal sequence
        rank = -float("inf") if part is None else -priority(jobs[i])
        heapq.heappush(ready, (rank, sequence, i, part))
        sequence += 1

    def fail(i: int, message: str) -> None:
        results[i] = {
            "script": jobs[i].script,
            "ok": False,
            "started": began.get(i, 0.0),
            "seconds": time.perf_counter() - began.get(i, time.perf_counter()),
            "cpu": cpu.get(i, 0.0),
            "record": None,
            "error": message,
        }
        if announce:
            announce("end", jobs[i], results[i])

    for i, job in enumerate(jobs):
        try:
            count = len(declared_runs(job))
        except Exception:
            fail(i, traceback.format_exc())
            continue
        parts[i], remaining[i] = [None] * count, count
        cpu[i] = 0.0
        if count:
            for part in range(count):
                push(i, part)
        else:
            push(i, None)

    running: dict[futures.Future, tuple[int, int | None]] = {}
    try:
        while ready or running:
            while ready and len(running) < cores:
                _, _, i, part = heapq.heappop(ready)
                if results[i] is not None:  # the job already failed
                    continue
                if i not in began:
                    began[i] = time.perf_counter()
                    if announce:
                        announce("start", jobs[i], None)
                executor = executors.get(jobs[i].variant)
                if part is None:
                    future = executor.submit(finish, jobs[i], parts[i] if parts[i] else None)
                else:
                    future = executor.submit(run_part, jobs[i], part)
                running[future] = (i, part)
            if stop_check:
                stop_check()
            done, _ = futures.wait(list(running), timeout=0.5, return_when=futures.FIRST_COMPLETED)
            for future in done:
                i, part = running.pop(future)
                try:
                    value = future.result()
                except futures.process.BrokenProcessPool:
                    executors.replace(jobs[i].variant)
                    if results[i] is None:
                        fail(i, "a worker died while it ran (killed, or out of memory)")
                    continue
                except Exception:
                    if results[i] is None:
                        fail(i, "".join(traceback.format_exception(future.exception())))
                    continue
                if results[i] is not None:
                    continue
                if part is None:
                    value["cpu"] = value.get("cpu", 0.0) + cpu[i]
                    value["seconds"] = time.perf_counter() - began[i]
                    value["started"] = began[i]
                    results[i] = value
                    if announce:
                        announce("end", jobs[i], value)
                else:
                    parts[i][part], spent = value
                    cpu[i] += spent
                    remaining[i] -= 1
                    if not remaining[i]:
                        push(i, None)
    except BaseException:
        executors.close(kill=True)
        raise
    if own:
        executors.close()
    return results  # type: ignore[return-value]
