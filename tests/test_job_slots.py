"""The job slots (docs/diagrams/job_slots.py): the runs of several sections'
pools never compute more at once than there are slots, and a section that
holds the only slot still gets its pool's jobs done (it lends the slot)."""

from __future__ import annotations

import multiprocessing
import os
import time

from pagekit import job_slots
from pagekit import pools

JOB_SECONDS = 0.3


def _busy(marker_dir: str, name: str) -> str:
    """A job that records when it ran: a file per job with its start and end."""
    start = time.monotonic()
    time.sleep(JOB_SECONDS)
    with open(os.path.join(marker_dir, f"{name}-{os.getpid()}-{start}"), "w") as out:
        out.write(f"{start} {time.monotonic()}")
    return name


def _section(marker_dir: str, tag: str, jobs: int) -> None:
    """What a section process does under the runner: hold a slot, open a pool."""
    with job_slots.slot():
        with pools.process_pool(2) as pool:
            done = pool.starmap(_busy, [(marker_dir, f"{tag}{i}") for i in range(jobs)], chunksize=1)
    assert done == [f"{tag}{i}" for i in range(jobs)]


def _most_at_once(marker_dir) -> int:
    spans = [tuple(map(float, path.read_text().split())) for path in marker_dir.iterdir()]
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = most = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return most


def _run_sections(slots: int, sections: int, jobs: int, marker_dir) -> int:
    job_slots.activate(job_slots.JobSlots(slots))
    try:
        context = multiprocessing.get_context("fork")
        processes = [context.Process(target=_section, args=(str(marker_dir), f"s{k}-", jobs)) for k in range(sections)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=60)
            assert process.exitcode == 0
    finally:
        job_slots.active().close()
        job_slots.activate(None)
    assert len(list(marker_dir.iterdir())) == sections * jobs
    return _most_at_once(marker_dir)


def test_two_sections_pools_share_two_slots(tmp_path):
    # Two sections with two-worker pools: four workers, but never more than two jobs at once.
    assert _run_sections(2, 2, 4, tmp_path) == 2


def test_a_section_lends_its_only_slot_to_its_pool(tmp_path):
    # One slot, held by the section: its pool's jobs run one at a time, and all finish.
    assert _run_sections(1, 1, 3, tmp_path) == 1


def test_without_a_jobserver_pools_run_unlimited(tmp_path):
    # A section run by hand (no runner): the pool's two workers run side by side.
    job_slots.activate(None)
    _section(str(tmp_path), "alone-", 2)
    assert _most_at_once(tmp_path) == 2


def test_a_fresh_interpreter_finds_the_slots_it_was_given(monkeypatch):
    slots = job_slots.JobSlots(1)
    try:
        monkeypatch.setenv(*next(iter(slots.environment().items())))
        job_slots.activate(None)
        found = job_slots.active()
        assert found.fds == slots.fds
        monkeypatch.setenv(job_slots.JOB_SLOTS_ENV, "991,992")  # descriptors that were not passed
        job_slots.activate(None)
        assert job_slots.active() is None
    finally:
        job_slots.activate(None)
        slots.close()
