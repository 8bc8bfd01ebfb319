"""The full-size thread check (`make thread-check`, page 2's
normalisation_layers/thread_check.py): it trains the runs it names with
their sections' own functions and full settings, on one thread and then
on two, and its comparison finds a difference of one bit; its committed
record is current and found no difference beyond the ones allowed. The training
itself is not repeated here: `make thread-check` takes minutes."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

from pagekit import paths, torch_loader


@pytest.fixture(scope="module")
def thread_check():
    """Imported when this module's tests run, not when pytest collects it
    (it imports torch and five sections)."""
    from normalisation_layers import thread_check

    return thread_check


def trainers(thread_check):
    """(module, name) of each section function the check trains with."""
    return (
        (thread_check.mlp, "run"),
        (thread_check.covariate_shift, "run"),
        (thread_check.loss_smoothness, "probed_run"),
        (thread_check.norm_placement, "train_run"),
        (thread_check.qk_norm, "train_run"),
    )


def replace_training(thread_check, monkeypatch, result):
    """Every section's training function replaced by one that checks its
    call fits the real function, records it and returns ``result()``."""
    calls = []
    for module, name in trainers(thread_check):
        real = getattr(module, name)

        def fake(*args, real=real, **kwargs):
            inspect.signature(real).bind(*args, **kwargs)
            calls.append((real.__module__.rsplit(".", 1)[-1], args))
            return result()

        monkeypatch.setattr(module, name, fake)
    return calls


def test_a_difference_of_one_bit_is_found(thread_check):
    a = np.array([1.0, 2.0, np.nan])
    b = a.copy()
    b[1] = np.nextafter(b[1], 3.0)
    # equal NaNs are equal; times and evaluation steps are not results
    assert (
        thread_check.differences(
            {"loss": a, "cpu": 1.0, "eval_steps": [0]}, {"loss": a.copy(), "cpu": 2.0, "eval_steps": [1]}
        )
        == {}
    )
    found = thread_check.differences({"loss": a}, {"loss": b})
    assert list(found) == ["loss"] and found["loss"].startswith("loss: value 1 is 2.0 on one thread"), found
    assert thread_check.differences({"loss": a}, {"loss": a[:2]}) == {"loss": "loss: float64 (3,) against float64 (2,)"}
    assert thread_check.differences({"loss": [0]}, {"loss": [0.0]})["loss"].startswith(
        "loss: int64 (1,) against float64"
    )
    assert thread_check.differences({"loss": a}, {"loss": a, "accuracy": 0.5}) == {
        "accuracy": "accuracy: returned by one run only"
    }
    both = thread_check.differences({"loss": a, "moves": [0.25, 0.5]}, {"loss": b, "moves": [0.25, 0.75]})
    assert list(both) == ["loss", "moves"] and both["moves"] == "moves: value 1 is 0.5 on one thread, 0.75 on two"


def test_a_reduction_past_the_grain_size_can_change_with_the_thread_count():
    """Why a reduced run does not stand in for a tensor that grows with the
    run's length (section 4's history of batch means): torch splits a
    reduction of more than 32,768 elements between two threads."""
    torch = torch_loader.import_torch()
    generator = torch.Generator().manual_seed(0)
    # whether the other order changes the last bit depends on the values: ten inputs of each size
    inputs = {rows: [torch.randn(rows, 128, generator=generator).abs() for _ in range(10)] for rows in (256, 257)}
    means = {}
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            means[threads] = {rows: [x.mean() for x in xs] for rows, xs in inputs.items()}
    finally:
        torch.set_num_threads(1)
    changed = {
        rows: sum(not torch.equal(a, b) for a, b in zip(means[1][rows], means[2][rows], strict=True)) for rows in inputs
    }
    assert changed[256] == 0  # 32,768 elements: never split
    assert changed[257] > 0, changed  # 32,896: split, and summed in another order


def test_every_run_is_its_sections_full_run(thread_check, monkeypatch):
    from normalisation_layers import batch_norm_learning_rate, covariate_shift, loss_smoothness, norm_placement, qk_norm

    calls = replace_training(thread_check, monkeypatch, lambda: {"loss": [0.0]})
    for _, train, _ in thread_check.runs(steps=None):
        train()
    by_section = {}
    for module, args in calls:
        by_section.setdefault(module, []).append(args)
    assert [args[0] for args in by_section["norm_placement"]] == [
        "post_no_warmup",
        "pre_no_warmup",
        "rms_pre_no_warmup",
    ]
    for key, norm, place, lr, warmup, config, offset in by_section["norm_placement"]:
        assert (key, norm, place, lr, warmup) in norm_placement.RUNS
        assert config == norm_placement.FULL and offset == 0
    assert by_section["qk_norm"] == [
        (max(qk_norm.RATES), False, qk_norm.STEPS, 0),
        (max(qk_norm.RATES), True, qk_norm.STEPS, 0),
    ]
    # section 5's probed runs call mlp.run through the fake probed_run, so mlp.run saw section 3's only
    assert by_section["mlp"] == [
        (network, 0.1, batch_norm_learning_rate.STEPS, 0) for network in ("plain", "batch norm")
    ]
    assert by_section["covariate_shift"] == [
        (network, covariate_shift.MOVES_RATE, covariate_shift.STEPS, 0)
        for network in ("activation noise", "feature noise")
    ]
    assert by_section["loss_smoothness"] == [(network, loss_smoothness.STEPS, 0) for network in ("plain", "batch norm")]
    # every section the report does not retrain on two threads and that has a reduced configuration,
    # and section 4, which it does retrain: two threads change its input-move statistics
    from normalisation_layers import THREAD_EXACT_SECTIONS

    without_reduced_runs = {"layer_norm_batch", "model_sizes"}  # their "reduced" run is the full one
    for name in without_reduced_runs:
        assert "section.choose(" not in (paths.DIAGRAMS_DIR / "normalisation_layers" / f"{name}.py").read_text()
    assert set(thread_check.CHECKED_SECTIONS) == set(THREAD_EXACT_SECTIONS) - without_reduced_runs | {"covariate_shift"}
    assert "covariate_shift" not in THREAD_EXACT_SECTIONS
    allowed = {name: may_differ for name, _, may_differ in thread_check.runs(steps=None) if may_differ}
    assert set(allowed) == {
        "section 4: activation noise network at lr 0.1",
        "section 4: feature noise network at lr 0.1",
    }
    assert all(set(may_differ) == {"moves"} for may_differ in allowed.values())


def test_check_trains_each_run_on_one_then_two_threads_and_reports_a_difference(thread_check, monkeypatch, capsys):
    torch = torch_loader.import_torch()
    threads_seen = []

    def same():
        threads_seen.append(torch.get_num_threads())
        return {"loss": [1.5]}

    replace_training(thread_check, monkeypatch, same)
    runs = len(thread_check.runs(steps=3))
    assert all(verdict["same_bits"] for verdict in thread_check.check(steps=3))
    assert threads_seen == [1, 2] * runs and torch.get_num_threads() == 1
    assert capsys.readouterr().out.count("same bits") == runs

    replace_training(thread_check, monkeypatch, lambda: {"loss": [float(torch.get_num_threads())]})
    assert not any(verdict["as_expected"] for verdict in thread_check.check(steps=3))
    assert capsys.readouterr().out.count("DIFFERENT (loss: value 0 is 1.0 on one thread, 2.0 on two)") == runs

    # a change only in section 4's input-move statistics is allowed there, and only there
    replace_training(thread_check, monkeypatch, lambda: {"moves": [float(torch.get_num_threads())]})
    verdicts = thread_check.check(steps=3)
    assert [v["run"] for v in verdicts if v["as_expected"]] == [
        "section 4: activation noise network at lr 0.1",
        "section 4: feature noise network at lr 0.1",
    ]
    assert all(v["differing"] == ["moves"] and not v["same_bits"] for v in verdicts)


def test_the_committed_record_is_current_and_found_the_same_bits(thread_check):
    path = thread_check.RECORD
    assert path.exists(), f"{path.name} is missing: run `make thread-check`"
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["inputs"] == thread_check.inputs(), (
        f"{path.name} is stale (a checked section, a module it imports or the check changed): run `make thread-check`"
    )
    assert [run["run"] for run in record["runs"]] == [name for name, _, _ in thread_check.runs(steps=None)]
    assert record["threads"] == list(thread_check.THREAD_COUNTS) and record["environment"]["honoured"]
    different = [
        f"{run['run']}: {run['difference']}"
        for run in record["runs"]
        if not set(run["differing"]) <= set(run["may_differ"])
    ]
    assert not different, (
        "two torch threads changed a full run where it may not differ; its section must "
        "leave THREAD_EXACT_SECTIONS: " + "; ".join(different)
    )
    assert all(run["same_bits"] for run in record["runs"] if not run["may_differ"])
    assert record["as_expected_in_every_run"]
    assert all(
        run["values"] > 0 and run["weights"] > 0 and run["threads"] == list(thread_check.THREAD_COUNTS)
        for run in record["runs"]
    )


def test_a_run_keeps_the_model_its_section_built_and_its_thread_count(thread_check):
    from normalisation_layers import norm_placement

    def build_a_small_model():
        norm_placement.build_language_model(0, 10, dim=8, layers=1, heads=2)
        return {"loss": [0.5]}

    result, threads, _ = thread_check.train_on(2, build_a_small_model)
    assert threads == 2 and result["loss"] == [0.5]
    assert torch_loader.import_torch().get_num_threads() == 2  # train_on leaves the count; check() restores it
    torch_loader.import_torch().set_num_threads(1)
    expected = sum(
        p.numel() for p in norm_placement.build_language_model(0, 10, dim=8, layers=1, heads=2).state_dict().values()
    )
    assert result[thread_check.WEIGHTS].size == expected
    # the builders are the sections' own again
    assert norm_placement.build_language_model.__name__ == "build_language_model"
