"""`make thread-check`: do two torch threads train this page's models to the
same bits as one? The full-size check behind THREAD_EXACT_SECTIONS.

The robustness report does not retrain the sections listed in
THREAD_EXACT_SECTIONS (``__init__.py``) on two torch threads; it checks
their reduced runs instead, which keep the full runs' widths and batch
sizes but train for a few steps. This script makes the full-size check the
reduced runs stand in for, on the runs most likely to show a difference,
each trained by its section's own code with the full run's settings:

  - section 7: the 12-layer post-norm and pre-norm models at lr 0.01
    without warmup, and the RMS-norm rerun of section 8 (``norm_placement``):
    the validation loss at every evaluation;
  - section 9: the 4-layer model at lr 0.1 with and without QK-norm
    (``qk_norm``): every step's largest logit and bound in every block,
    and the final validation loss;
  - section 3: the plain and the batch-norm MLP at lr 0.1
    (``batch_norm_learning_rate``): the loss at every step and the
    validation accuracy.

Each run trains on one torch thread, then on two (``torch.set_num_threads``,
which gives MKL the second thread too, as the report's torch-two-threads
variant does), in this process, in the pinned numeric environment; the two
results must be equal to the last bit. One line per run; exit status 1 if
any run differs. A full check (no --steps) writes its verdicts to
``figures/normalisation-layers/thread-check.json`` with the inputs hashes of
the three sections and of this script: the page cites that record, and a
test fails when it is stale or records a difference.

    make thread-check                                                  # the full runs, about 2 to 3 minutes
    python docs/diagrams/normalisation_layers/thread_check.py --steps 20   # every run cut to 20 steps
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the shared module importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from section_kit import atomic_write, import_torch  # noqa: E402  (first: it pins the numeric environment)

import numpy as np  # noqa: E402

import numeric_env  # noqa: E402
from normalisation_layers import PAGE, batch_norm_learning_rate, mlp, norm_placement, qk_norm  # noqa: E402
from run_sections import FIGURES_DIR, SectionScript, current_hash  # noqa: E402

RECORD = FIGURES_DIR / PAGE / "thread-check.json"
CHECKED_SECTIONS = ("batch_norm_learning_rate", "norm_placement", "qk_norm")

THREAD_COUNTS = (1, 2)
SEED_OFFSET = 0  # the page's own runs
NOT_RESULTS = ("cpu", "wall", "eval_steps")  # what a run returns besides its results: times, bookkeeping


def section_7_run(key: str, steps: int | None) -> dict:
    """One run of ``norm_placement`` (sections 7 and 8), its full settings."""
    _, norm, place, lr, warmup = next(run for run in norm_placement.RUNS if run[0] == key)
    config = dict(norm_placement.FULL, steps=steps or norm_placement.FULL["steps"])
    return norm_placement.train_run(key, norm, place, lr, warmup, config, SEED_OFFSET)


def section_9_run(lr: float, with_qk_norm: bool, steps: int | None) -> dict:
    """One run of ``qk_norm`` (section 9), its full settings."""
    return qk_norm.train_run(lr, with_qk_norm, steps or qk_norm.FULL["steps"], SEED_OFFSET)


def section_3_run(network: str, lr: float, steps: int | None) -> dict:
    """One run of ``batch_norm_learning_rate`` (section 3), its full settings."""
    return mlp.run(network, lr, steps or batch_norm_learning_rate.STEPS, SEED_OFFSET)


def runs(steps: int | None) -> list[tuple[str, object]]:
    """(name, a function of no arguments that trains the run and returns its results)."""
    high, qk_high = norm_placement.HIGH_RATE, max(qk_norm.RATES)
    s3_rate = batch_norm_learning_rate.RATES[4]  # 0.1, the rate of the section's torch check
    section_7_and_8 = {"post_no_warmup": "section 7: post-norm without warmup",
                       "pre_no_warmup": "section 7: pre-norm without warmup",
                       "rms_pre_no_warmup": "section 8: RMS norm, pre-norm without warmup"}
    return [
        *((f"{label} at lr {high:g}", lambda key=key: section_7_run(key, steps))
          for key, label in section_7_and_8.items()),
        *((f"section 9: lr {qk_high:g} {'with' if qk else 'without'} QK-norm",
           lambda qk=qk: section_9_run(qk_high, qk, steps)) for qk in (False, True)),
        *((f"section 3: {network} network at lr {s3_rate:g}",
           lambda network=network: section_3_run(network, s3_rate, steps)) for network in mlp.NETWORKS),
    ]


def first_difference(one: dict, two: dict) -> str | None:
    """None if the two runs' results are the same bits; otherwise which
    result first differs, and where."""
    for name in one:
        if name in NOT_RESULTS:
            continue
        a, b = np.asarray(one[name]), np.asarray(two[name])
        if a.shape != b.shape:
            return f"{name}: shape {a.shape} against {b.shape}"
        if a.tobytes() != b.tobytes():
            a_flat, b_flat = a.reshape(-1), b.reshape(-1)
            # NaN == NaN compares unequal, but the bytes of equal NaNs are equal
            index = next(i for i in range(a_flat.size) if a_flat[i:i + 1].tobytes() != b_flat[i:i + 1].tobytes())
            return f"{name}: value {index} is {a_flat[index].item()!r} on one thread, {b_flat[index].item()!r} on two"
    return None


def result_size(result: dict) -> int:
    return sum(np.asarray(value).size for name, value in result.items() if name not in NOT_RESULTS)


def inputs() -> dict[str, str | None]:
    """What the record is current for: the checked sections' inputs hashes
    (their code, the modules they import, the numeric pin) and this script's."""
    hashes = {name: current_hash(SectionScript(__package__ or "normalisation_layers", name))
              for name in CHECKED_SECTIONS}
    hashes["thread_check"] = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    return hashes


def write_record(verdicts: list[dict]) -> None:
    record = {
        "about": "written by `make thread-check` (docs/diagrams/normalisation_layers/thread_check.py): "
                 "each run in full on one torch thread and on two, compared bit for bit",
        "inputs": inputs(),
        "environment": {**numeric_env.record(), "cpu": numeric_env.cpu_model()},
        "threads": list(THREAD_COUNTS),
        "runs": verdicts,
        "same_bits_in_every_run": all(v["same_bits"] for v in verdicts),
    }
    with atomic_write(RECORD) as out:
        out.write(json.dumps(record, indent=1) + "\n")


def check(steps: int | None = None) -> list[dict]:
    """Train every run on one thread and on two; each run's verdict."""
    torch = import_torch()
    mlp._REPORT = lambda message, force=False: None  # the MLP runs' progress lines would interleave with ours
    verdicts = []
    for name, train in runs(steps):
        results, seconds = [], []
        for threads in THREAD_COUNTS:
            torch.set_num_threads(threads)
            start = time.perf_counter()
            results.append(train())
            seconds.append(time.perf_counter() - start)
        torch.set_num_threads(THREAD_COUNTS[0])
        difference = first_difference(*results)
        verdicts.append({"run": name, "values": result_size(results[0]), "same_bits": difference is None,
                         "difference": difference})
        verdict = "same bits" if difference is None else f"DIFFERENT ({difference})"
        print(f"{name}: {result_size(results[0]):,} values, {verdict} "
              f"({' and '.join(f'{s:.1f}' for s in seconds)} s wall on {' and '.join(map(str, THREAD_COUNTS))} "
              "threads)", flush=True)
    return verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--steps", type=int, help="cut every run to this many steps (default: the full runs)")
    args = parser.parse_args()
    if args.steps is not None and args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    # Only the pinned environment's full runs are the page's runs.
    pinned = numeric_env.can_honour_pin() and numeric_env.variant_name() == numeric_env.PINNED
    if not pinned:
        why = (numeric_env.machine_name() if not numeric_env.can_honour_pin()
               else f"the numeric variant {numeric_env.variant_name()}")
        print(f"note: not the pinned numeric environment ({why}): the check runs, "
              "and its record is not written", file=sys.stderr)
    verdicts = check(args.steps)
    if args.steps is None and pinned:
        write_record(verdicts)
        print(f"wrote {RECORD.relative_to(FIGURES_DIR.parent)}")
    if all(v["same_bits"] for v in verdicts):
        print("two torch threads gave the same bits as one in every run")
        return 0
    print("two torch threads changed a run: THREAD_EXACT_SECTIONS must not list its section", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
