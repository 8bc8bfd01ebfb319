"""The robustness report on a Dask cluster (executor.DaskExecutors) gives the
same runs as on the default local process pools: a local scheduler, one
worker per numeric variant started with that variant's environment
(executor.dask_worker_command), and the report's runs of two sections (one
that declares independent runs, one that loads torch) under the pinned
kernels at another seed and under two other variants."""

from __future__ import annotations

import subprocess
import time

import pytest

from pagekit import executor, numeric_env
from pagekit import robustness_report as report
from pagekit.run_sections import SectionScript

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow

PACKAGE = "normalisation_and_stability"
VARIANTS = (numeric_env.PINNED, "torch-default", "openblas-sandybridge")
JOBS = [
    (SectionScript(PACKAGE, "residual_placement"), (numeric_env.PINNED, 1, report.REDUCED)),
    (SectionScript(PACKAGE, "loss_spike_replay"), (numeric_env.PINNED, 1)),
    (SectionScript(PACKAGE, "loss_spike_replay"), ("torch-default", 0)),
    (SectionScript(PACKAGE, "residual_placement"), ("openblas-sandybridge", 0, report.REDUCED)),
]


@pytest.fixture
def scratch_cache(tmp_path, monkeypatch):
    """The report's cache, costs and schedule under tmp: the test leaves build/ alone."""
    monkeypatch.setattr(report, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setattr(report, "COSTS_FILE", tmp_path / "costs.json")
    monkeypatch.setattr(report, "SCHEDULE_FILE", tmp_path / "schedule.json")


@pytest.fixture
def cluster(tmp_path):
    """A local Dask scheduler and one worker process per variant."""
    scheduler = distributed.LocalCluster(n_workers=0, dashboard_address=None, scheduler_port=0)
    workers = []
    try:
        for variant in VARIANTS:
            command, environment = executor.dask_worker_command(scheduler.scheduler_address, variant)
            log = open(tmp_path / f"worker-{variant}.log", "w", encoding="utf-8")  # closed below
            workers.append((subprocess.Popen(command, env=environment, stdout=log, stderr=log), log))
        with distributed.Client(scheduler.scheduler_address) as client:
            client.wait_for_workers(len(VARIANTS), timeout=120)
        yield scheduler.scheduler_address
    finally:
        for process, _ in workers:
            process.terminate()
        for process, log in workers:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()
        scheduler.close()


def test_the_report_runs_the_same_on_a_dask_cluster(cluster, scratch_cache):
    start = time.perf_counter()
    on_dask = report.run_all(JOBS, progress=lambda message: None, cores=2, executors=executor.DaskExecutors(cluster))
    dask_seconds = time.perf_counter() - start
    local = report.run_all(JOBS, progress=lambda message: None, cores=2)
    assert set(on_dask) == set(local) == {(script.name, run) for script, run in JOBS}
    for key in local:
        assert local[key]["ok"], local[key]["error"]
        assert on_dask[key]["ok"], on_dask[key]["error"]
        dask_part, local_part = (report.deterministic_part(r[key]["record"]) for r in (on_dask, local))
        assert report.differences(local_part, dask_part) == [], key
        # each ran under its own variant, with that variant's kernels (OpenBLAS core, torch's CPU capability)
        assert on_dask[key]["record"]["environment"] == local[key]["record"]["environment"], key
        assert on_dask[key]["record"]["environment"]["variant"] == key[1][0]
    kernels = {key[1][0]: local[key]["record"]["environment"] for key in local}
    assert kernels["openblas-sandybridge"]["openblas_core"] != kernels[numeric_env.PINNED]["openblas_core"]
    assert kernels["torch-default"]["torch_cpu_capability"] != kernels[numeric_env.PINNED]["torch_cpu_capability"]
    assert dask_seconds < 120


def test_a_worker_of_another_variant_refuses_the_run():
    """A job sent to a process that runs another variant fails with a
    message that says so, instead of giving that variant's numbers."""
    job = executor.Job(SectionScript(PACKAGE, "loss_spike_replay"), variant="torch-default")
    with pytest.raises(RuntimeError, match="runs numeric variant 'pinned', not 'torch-default'"):
        executor.check_variant(job.variant)
