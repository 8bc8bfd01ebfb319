"""`make thread-check`: do two torch threads train this page's models to the
same bits as one? The full-size check behind THREAD_EXACT_SECTIONS.

The robustness report does not retrain the sections listed in
THREAD_EXACT_SECTIONS (``__init__.py``) on two torch threads; it checks
their reduced runs instead, which keep the full runs' widths and batch
sizes but train for a few steps. (Two of them, ``layer_norm_batch`` and
``model_sizes``, have no reduced configuration: that check runs them in
full.) A tensor whose size grows with the number of steps is where a
reduced run can miss a split: torch splits a reduction between threads once
it has more than 32,768 elements (ATen's GRAIN_SIZE). This check found one:
section 4 (``covariate_shift``) averages a (steps x features) history of its
layers' batch means and deviations, which at 400 steps two threads sum in
another order, so its input-move statistics differ in their last bits (its
losses, accuracies and weights do not). That section is not listed, the
report retrains it on two threads, and this script keeps two of its runs,
which may differ in those statistics and nowhere else. For every listed
section it repeats at least one full run of each of its models, trained by
the section's own function with the full run's settings:

  - section 3 (``batch_norm_learning_rate``): the plain and the batch-norm
    MLP at lr 0.1;
  - section 4 (``covariate_shift``, not listed): the two noisy networks at
    lr 0.1, the rate whose input moves they record, which may differ;
  - section 5 (``loss_smoothness``): both probed runs;
  - sections 7 and 8 (``norm_placement``): the 12-layer post-norm and
    pre-norm models at lr 0.01 without warmup, and the RMS-norm run;
  - section 9 (``qk_norm``): the 4-layer model at lr 0.1 with and without
    QK-norm.

Each run trains on one torch thread, then on two (``torch.set_num_threads``,
which gives MKL the second thread too, as the report's torch-two-threads
variant does), in this process, in the pinned numeric environment. The two
runs must agree to the last bit in every final weight and buffer of the
model, and in everything the section's function returns (losses,
validation losses, accuracies, the probes' and the logit records), times
aside, except in the results a run is allowed to change (section 4's
input-move statistics). One line per run; exit status 1 if a run differs
anywhere else. A full check (no --steps) in the pinned environment writes
the verdicts to ``figures/normalisation-layers/thread-check.json`` with the
inputs hashes of the checked sections and of this script;
tests/test_thread_check.py fails when that record is stale or records an
unexpected difference (it retrains nothing).

    make thread-check                                                      # the full runs, 2 to 3 minutes
    python docs/diagrams/normalisation_layers/thread_check.py --steps 20   # every run cut to 20 steps
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import time
from pathlib import Path


from pagekit.section import atomic_write, import_torch

import numpy as np

from pagekit import numeric_env
from normalisation_layers import (
    PAGE,
    batch_norm_learning_rate,
    covariate_shift,
    loss_smoothness,
    mlp,
    norm_placement,
    qk_norm,
)
from normalisation_layers.language_data import load_corpus
from pagekit.inputs import code_content
from pagekit.run_sections import FIGURES_DIR, SectionScript, current_hash

RECORD = FIGURES_DIR / PAGE / "thread-check.json"
CHECKED_SECTIONS = ("batch_norm_learning_rate", "covariate_shift", "loss_smoothness", "norm_placement", "qk_norm")
# Section 4's results that two threads change: averages over its whole
# history, which at full length torch splits between the threads.
SECTION_4_MAY_DIFFER = ("moves",)
THREAD_COUNTS = (1, 2)
SEED_OFFSET = 0  # the page's own runs
NOT_RESULTS = ("cpu", "wall", "eval_steps")  # what a run returns besides its results: times, bookkeeping
WEIGHTS = "final weights and buffers"
# Where the sections build their models (the name each module calls).
BUILDERS = (
    (norm_placement, "build_language_model"),
    (qk_norm, "build_language_model"),
    (covariate_shift, "build"),
    (mlp, "build"),
)


def section_7_run(key: str, steps: int | None) -> dict:
    """One run of ``norm_placement`` (sections 7 and 8), its full settings."""
    _, norm, place, lr, warmup = next(run for run in norm_placement.RUNS if run[0] == key)
    config = dict(norm_placement.FULL, steps=steps or norm_placement.FULL["steps"])
    return norm_placement.train_run(key, norm, place, lr, warmup, config, SEED_OFFSET)


def runs(steps: int | None) -> list[tuple[str, object, tuple[str, ...]]]:
    """(name, a function of no arguments that trains the run and returns its
    results, the results it may change on two threads): each run with its
    section's full settings, or cut to ``steps``."""
    s3_rate = batch_norm_learning_rate.CHECK_RATE  # the rate of the section's check against torch
    s3_steps = steps or batch_norm_learning_rate.STEPS
    s4_rate, s4_steps = covariate_shift.MOVES_RATE, steps or covariate_shift.STEPS
    s5_steps = steps or loss_smoothness.STEPS
    s7_rate, s9_rate = norm_placement.HIGH_RATE, max(qk_norm.RATES)
    s9_steps = steps or qk_norm.FULL["steps"]
    section_7_and_8 = {
        "post_no_warmup": "section 7: post-norm without warmup",
        "pre_no_warmup": "section 7: pre-norm without warmup",
        "rms_pre_no_warmup": "section 8: RMS norm, pre-norm without warmup",
    }
    return [
        *(
            (
                f"section 3: {network} network at lr {s3_rate:g}",
                lambda network=network: mlp.run(network, s3_rate, s3_steps, SEED_OFFSET),
                (),
            )
            for network in mlp.NETWORKS
        ),
        *(
            (
                f"section 4: {network} network at lr {s4_rate:g}",
                lambda network=network: covariate_shift.run(network, s4_rate, s4_steps, SEED_OFFSET),
                SECTION_4_MAY_DIFFER,
            )
            for network in covariate_shift.NOISY
        ),
        *(
            (
                f"section 5: {network} network, probed",
                lambda network=network: loss_smoothness.probed_run(network, s5_steps, SEED_OFFSET),
                (),
            )
            for network in loss_smoothness.NETWORKS
        ),
        *(
            (f"{label} at lr {s7_rate:g}", lambda key=key: section_7_run(key, steps), ())
            for key, label in section_7_and_8.items()
        ),
        *(
            (
                f"section 9: lr {s9_rate:g} {'with' if qk else 'without'} QK-norm",
                lambda qk=qk: qk_norm.train_run(s9_rate, qk, s9_steps, SEED_OFFSET),
                (),
            )
            for qk in (False, True)
        ),
    ]


@contextlib.contextmanager
def keeping_built_models(kept: list):
    """The sections' functions return what their pages use, not their
    models: while this is active, every model the sections build is kept
    too, with the number of torch threads at the time, so that the check
    can compare every final weight and see the thread count the run had."""
    torch = import_torch()
    originals = [(module, name, getattr(module, name)) for module, name in BUILDERS]

    def keeper(build):
        def build_and_keep(*args, **kwargs):
            model = build(*args, **kwargs)
            kept.append((model, torch.get_num_threads()))
            return model

        return build_and_keep

    for module, name, build in originals:
        setattr(module, name, keeper(build))
    try:
        yield
    finally:
        for module, name, build in originals:
            setattr(module, name, build)


def model_values(model) -> np.ndarray:
    """Every parameter and buffer of ``model``, in float64 (exact for float32)."""
    return np.concatenate([t.detach().double().reshape(-1).numpy() for t in model.state_dict().values()])


def result_difference(name: str, one: dict, two: dict) -> str | None:
    """None if result ``name`` is the same bits in both runs; otherwise where
    it first differs."""
    if name not in one or name not in two:
        return f"{name}: returned by one run only"
    a, b = np.asarray(one[name]), np.asarray(two[name])
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"{name}: {a.dtype} {a.shape} against {b.dtype} {b.shape}"
    if a.tobytes() == b.tobytes():
        return None
    a_flat, b_flat = a.reshape(-1), b.reshape(-1)
    # NaN == NaN compares unequal, but the bytes of equal NaNs are equal
    index = next(i for i in range(a_flat.size) if a_flat[i : i + 1].tobytes() != b_flat[i : i + 1].tobytes())
    return f"{name}: value {index} is {a_flat[index].item()!r} on one thread, {b_flat[index].item()!r} on two"


def differences(one: dict, two: dict) -> dict[str, str]:
    """{result: where it first differs} for every result that is not the
    same bits in the two runs."""
    found = {name: result_difference(name, one, two) for name in dict.fromkeys([*one, *two]) if name not in NOT_RESULTS}
    return {name: where for name, where in found.items() if where}


def result_size(result: dict) -> int:
    return sum(np.asarray(value).size for name, value in result.items() if name not in NOT_RESULTS)


def train_on(threads: int, train) -> tuple[dict, int, float]:
    """One run on ``threads`` torch threads: its results (with the model's
    final weights when a section built one), the thread count torch had while
    building the model, and the wall seconds."""
    torch = import_torch()
    torch.set_num_threads(threads)
    mlp._DATA.clear()  # the data, too, are made afresh on this many threads
    load_corpus.cache_clear()
    kept = []
    start = time.perf_counter()
    with keeping_built_models(kept):
        result = dict(train())
    seconds = time.perf_counter() - start
    had = torch.get_num_threads()
    if kept:
        model, had = kept[-1]
        result[WEIGHTS] = model_values(model)
    return result, had, seconds


def check(steps: int | None = None) -> list[dict]:
    """Train every run on one thread and on two; each run's verdict."""
    torch = import_torch()
    quiet = lambda message, force=False: None  # noqa: E731  (the MLP runs' progress lines would interleave with ours)
    report, mlp._REPORT = mlp._REPORT, quiet
    verdicts = []
    try:
        for name, train, may_differ in runs(steps):
            results, had, seconds = zip(*(train_on(threads, train) for threads in THREAD_COUNTS))
            if list(had) != list(THREAD_COUNTS):
                raise RuntimeError(f"{name}: torch had {had} threads, not {THREAD_COUNTS}")
            differ = differences(*results)
            unexpected = {result: where for result, where in differ.items() if result not in may_differ}
            weights = np.size(results[0].get(WEIGHTS, ()))
            verdicts.append(
                {
                    "run": name,
                    "weights": weights,
                    "values": result_size(results[0]) - weights,
                    "threads": list(had),
                    "same_bits": not differ,
                    "may_differ": list(may_differ),
                    "differing": list(differ),
                    "as_expected": not unexpected,
                    "difference": "; ".join(differ.values()) or None,
                }
            )
            if unexpected:
                verdict = f"DIFFERENT ({'; '.join(unexpected.values())})"
            elif differ:
                verdict = f"same bits except {', '.join(differ)}, as allowed ({'; '.join(differ.values())})"
            else:
                verdict = "same bits"
            print(
                f"{name}: {weights:,} weights and buffers and {result_size(results[0]) - weights:,} "
                f"other values, {verdict} "
                f"({' and '.join(f'{s:.1f}' for s in seconds)} s wall on "
                f"{' and '.join(map(str, THREAD_COUNTS))} threads)",
                flush=True,
            )
    finally:
        mlp._REPORT = report
        torch.set_num_threads(THREAD_COUNTS[0])
    return verdicts


def inputs() -> dict[str, str | None]:
    """What the record is current for: the checked sections' inputs hashes
    (their code, the modules they import, the locked packages, the numeric
    pin) and this script's."""
    hashes = {
        name: current_hash(SectionScript(__package__ or "normalisation_layers", name)) for name in CHECKED_SECTIONS
    }
    hashes["thread_check"] = hashlib.sha256(code_content(Path(__file__))).hexdigest()  # its code, not its comments
    return hashes


def write_record(verdicts: list[dict]) -> None:
    record = {
        "about": "written by `make thread-check` (docs/diagrams/normalisation_layers/thread_check.py): "
        "each run in full on one torch thread and on two, compared bit for bit",
        "inputs": inputs(),
        "environment": {**numeric_env.record(), "cpu": numeric_env.cpu_model()},
        "threads": list(THREAD_COUNTS),
        "runs": verdicts,
        "as_expected_in_every_run": all(v["as_expected"] for v in verdicts),
    }
    with atomic_write(RECORD) as out:
        out.write(json.dumps(record, indent=1) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--steps", type=int, help="cut every run to this many steps (default: the full runs)")
    args = parser.parse_args()
    if args.steps is not None and args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    # Only the pinned environment's full runs are the page's runs.
    pinned = numeric_env.can_honour_pin() and numeric_env.variant_name() == numeric_env.PINNED
    if not pinned:
        why = (
            numeric_env.machine_name()
            if not numeric_env.can_honour_pin()
            else f"the numeric variant {numeric_env.variant_name()}"
        )
        print(
            f"note: not the pinned numeric environment ({why}): the check runs, and its record is not written",
            file=sys.stderr,
        )
    verdicts = check(args.steps)
    if args.steps is None and pinned:
        write_record(verdicts)
        print(f"wrote {RECORD.relative_to(FIGURES_DIR.parent)}")
    if all(v["as_expected"] for v in verdicts):
        print("two torch threads gave the same bits as one in every run, apart from the results allowed to differ")
        return 0
    print(
        "two torch threads changed a run where it was not allowed to: THREAD_EXACT_SECTIONS must not list "
        "its section (or its allowed differences are wrong)",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
