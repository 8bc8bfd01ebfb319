"""Job slots: at most one computing process per core, whichever section it serves.

`make figures` runs several sections at once, and the heavy ones train their
runs in pools of their own (pools.process_pool). Without a common limit
two sections with two-worker pools put four training processes on two cores,
and every run gets slower. This is a jobserver, the scheme `make -j` uses: a
pipe holds one byte per slot; a process takes a byte before it computes and
puts it back when it stops. The pipe's descriptors survive fork and exec
(JOB_SLOTS_ENV names them for a fresh interpreter), so the runner's section
processes, their pools' workers and a report's variant children all draw
from the same slots.

Who holds a slot: a section process while it computes; a pool worker while
it runs one job. A section process gives its slot back while it waits for its
pool, so its runs can use it. Without an active jobserver (a section run by
hand, the tests) every call here does nothing.
"""

from __future__ import annotations

import contextlib
import os
import select

JOB_SLOTS_ENV = "SECTION_JOB_SLOTS"  # "<read fd>,<write fd>" of the slots pipe
TOKEN = b"+"
ORPHAN_CHECK_SECONDS = 0.5  # how often a process waiting for a slot checks that its run still exists

_active: "JobSlots | None" = None
_stopping = False  # this process was told to stop: it takes no slot any more
_held = 0  # slots this process holds (0 or 1)


class JobSlots:
    """``count`` slots in a pipe. Made by the runner; inherited by its children."""

    def __init__(self, count: int, fds: tuple[int, int] | None = None):
        if fds is None:
            if count < 1:
                raise ValueError(f"need at least one job slot, not {count}")
            fds = os.pipe()
            for fd in fds:
                os.set_inheritable(fd, True)
            os.set_blocking(fds[0], False)  # acquire() waits in select, never inside a read
            os.write(fds[1], TOKEN * count)
        self.count = count
        self.read_fd, self.write_fd = fds

    def environment(self) -> dict[str, str]:
        """What a fresh interpreter needs to share these slots (pass the
        descriptors too: subprocess's ``pass_fds=self.fds``)."""
        return {JOB_SLOTS_ENV: f"{self.read_fd},{self.write_fd}"}

    @property
    def fds(self) -> tuple[int, int]:
        return self.read_fd, self.write_fd

    def free(self) -> bool:
        """Whether a slot is free now (a hint: another process may take it first)."""
        readable, _, _ = select.select([self.read_fd], [], [], 0)
        return bool(readable)

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def activate(slots: JobSlots | None) -> None:
    """Make ``slots`` this process's jobserver (None: none)."""
    global _active, _held
    _active, _held = slots, 0


def active() -> JobSlots | None:
    """This process's jobserver: the one activated here or inherited across
    fork, else the one JOB_SLOTS_ENV names (a child interpreter)."""
    global _active
    if _active is None and os.environ.get(JOB_SLOTS_ENV):
        try:
            read_fd, write_fd = (int(fd) for fd in os.environ[JOB_SLOTS_ENV].split(","))
            os.fstat(read_fd), os.fstat(write_fd)
        except (ValueError, OSError):
            return None  # a stale setting (the descriptors were not passed): no limit
        _active = JobSlots(0, (read_fd, write_fd))
    return _active


def forget_held() -> None:
    """In a freshly forked pool worker: the slot its parent held stays the
    parent's (the worker takes its own per job)."""
    global _held
    _held = 0


def stop_waiting() -> None:
    """This process is stopping (its SIGTERM or SIGINT handler says so): from
    now on acquire() raises instead of waiting. A section interrupted while
    its pool ran would otherwise take its slot back on the way out (lent())
    and wait for one that no stopping process will return, while the runner
    waits for it."""
    global _stopping
    _stopping = True


def acquire() -> None:
    """Wait for a slot (no-op without a jobserver or when this process holds one).

    Waits in short turns and gives up once this process is an orphan (its
    parent gone, as when a whole run is sent SIGTERM at once): then nobody
    will give a slot back, and the process holds the pipe's write end itself,
    so a plain blocking read would wait for ever. The pipe's reads do not
    block (see JobSlots), so two processes woken for one slot cannot both
    wait inside the read."""
    global _held
    slots = active()
    if slots is None or _held:
        return
    while True:
        if _stopping:
            raise SystemExit("job slots: this process is stopping")
        readable, _, _ = select.select([slots.read_fd], [], [], ORPHAN_CHECK_SECONDS)
        if readable:
            try:
                token = os.read(slots.read_fd, 1)
            except BlockingIOError:  # another process took it first
                continue
            if not token:
                raise RuntimeError("the job slots pipe was closed")
            _held = 1
            return
        if os.getppid() == 1:
            raise SystemExit("job slots: the run this process belonged to has ended")


def release() -> None:
    """Give this process's slot back (no-op if it holds none)."""
    global _held
    slots = active()
    if slots is None or not _held:
        return
    os.write(slots.write_fd, TOKEN)
    _held = 0


@contextlib.contextmanager
def slot():
    """Hold a slot for the duration (nested use keeps the one slot)."""
    had = _held
    acquire()
    try:
        yield
    finally:
        if not had:
            release()


@contextlib.contextmanager
def lent():
    """Give this process's slot back for the duration, then take one again:
    a section process waiting for its pool's workers."""
    had = _held
    release()
    try:
        yield
    finally:
        if had:
            acquire()


class InSlot:
    """A pool job that holds a slot while it runs: ``InSlot(func)(*args)``.
    A class, not a closure, so the pool can send it to its workers."""

    def __init__(self, func):
        self.func = func

    def __call__(self, *args, **kwargs):
        with slot():
            return self.func(*args, **kwargs)
