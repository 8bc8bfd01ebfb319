"""Processes and threads of a section run: torch imported once per process
with the pinned thread count, a section's own pool of forked workers (each
job holding one of the run's job slots), and workers that stop with their
parent.

Decides numbers (torch's thread count fixes the order of its sums), so it
is one of the inputs of every section (inputs.py).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import os
import sys

from pagekit import job_slots, numeric_env

NUMERIC_VARIANT = numeric_env.applied_variant()


# Torch, imported once per process and only by the sections that use it.

_TORCH = None


def import_torch():
    """Import torch with one thread per process (the numeric environment's
    TORCH_NUM_THREADS): parallel sections must not fight over the two cores,
    and one thread fixes the order of every sum. Says once if torch runs
    other kernels than the pinned ones.

    (``torch.use_deterministic_algorithms`` is left alone: it concerns GPU
    kernels, and merely calling it imports torch's compiler, about a second.)
    """
    global _TORCH
    if _TORCH is None:
        import torch

        torch.set_num_threads(int(os.environ.get("TORCH_NUM_THREADS", "1")))
        numeric_env.install_routes()  # already done by the import hook, unless a route module imported torch
        wanted = numeric_env.settings(NUMERIC_VARIANT)["ATEN_CPU_CAPABILITY"].upper()
        running = torch.backends.cpu.get_cpu_capability().upper()
        if numeric_env.can_honour_pin() and running != wanted and not os.environ.get(numeric_env.WARNED_ENV):
            print(f"note: torch runs {running} kernels, not the pinned {wanted}", file=sys.stderr)
            os.environ[numeric_env.WARNED_ENV] = "1"
        _TORCH = torch
    return _TORCH


def process_pool(processes: int = 2):
    """A pool of forked worker processes for a section's independent heavy
    jobs (use as a context manager, e.g. ``pool.starmap``). Forked workers
    inherit everything imported and, unlike threads, do not contend for the
    GIL. Jobs must be module-level functions; results come back in order.

    Under `make figures` every job holds one of the run's job slots while it
    trains, and the section lends its own slot to its jobs while the pool is
    open (job_slots.py): the runs of all sections share the cores, never more
    at once than there are cores."""
    return _SlotPool(processes, initializer=_default_signals, context=multiprocessing.get_context("fork"))


class _SlotPool(multiprocessing.pool.Pool):
    """A fork pool whose jobs hold a job slot each; its section's slot is lent
    to them from ``with`` to its end."""

    def __enter__(self):
        self._lent = job_slots.lent()
        self._lent.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            self._lent.__exit__(None, None, None)

    def apply(self, func, args=(), kwds=None):
        return super().apply(job_slots.InSlot(func), args, kwds or {})

    def map(self, func, iterable, chunksize=None):
        return super().map(job_slots.InSlot(func), iterable, chunksize)

    def starmap(self, func, iterable, chunksize=None):
        return super().starmap(job_slots.InSlot(func), iterable, chunksize)

    def starmap_async(self, func, iterable, chunksize=None, callback=None, error_callback=None):
        return super().starmap_async(job_slots.InSlot(func), iterable, chunksize, callback, error_callback)


def _default_signals() -> None:
    """A pool worker stops quietly when its pool is terminated (the runner's
    own workers turn SIGTERM into an exception, which would print here), and
    when its section's process dies without terminating it; it holds none
    of its section's job slot (it takes one per job)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    terminate_with_parent()
    job_slots.forget_held()


def terminate_with_parent() -> None:
    """Linux: this process gets SIGTERM when its parent dies (PR_SET_PDEATHSIG),
    so no worker outlives an interrupted run; elsewhere, nothing."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent is already gone
        os.kill(os.getpid(), signal.SIGTERM)
