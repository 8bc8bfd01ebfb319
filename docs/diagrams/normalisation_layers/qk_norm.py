"""Section 9, "QK-norm bounds the attention logits": a 4-layer pre-norm
Transformer with RMS norm trained for 300 steps at learning rates 0.01,
0.03 and 0.1, with and without QK-norm (six runs).

Every run records, at every step, each block's largest |attention logit|
in its training forward pass and, with QK-norm, the bound that step's
learned gains put on it: sqrt(d_head) * max|g_q| * max|g_k|. Each run is
scored on one fixed validation set of 64 windows of 64 characters. Model
seed 0, data seed 1, validation seed 2 (the model and data seeds shifted by the seed offset, the validation windows the same at every offset); the six
runs train in two forked worker processes, three each.
"""

from __future__ import annotations

import math
import sys
import time


from pagekit.section import (  # first: it pins the numeric environment before numpy and torch load
    PALETTE,
    import_torch,
    label_line_ends,
    log_axis,
    main,
    new_figure,
    nice_limits,
)

import numpy as np

from normalisation_layers.language_data import VALIDATION_WINDOWS, load_corpus, validation_set
from normalisation_layers.sampling_error import TIE_ERRORS, is_tie, paired_difference, standard_error
from normalisation_layers.language_training import CONSTANT, train_language_model, warmup_steps
from normalisation_layers.transformer import NORMS, build_language_model

MODEL_SEED, DATA_SEED, VALIDATION_SEED = 0, 1, 2
DIM, HEADS, LAYERS = 64, 4, 4
STEPS, BATCH, WINDOW = 300, 16, 64
WARMUP_FRACTION = 0.1  # 30 of 300 steps, then constant
RATES = (0.01, 0.03, 0.1)
REDUCED = {"steps": 4}
FULL = {"steps": STEPS}
QUESTION_HEAD_DIM = 16  # check your understanding: the bound with unit gains


def rate_key(rate: float) -> str:
    return f"{rate:g}".replace(".", "_")


def train_run(lr: float, qk_norm: bool, steps: int, offset: int) -> dict:
    """One run, in a worker: every step's largest logit and bound per block."""
    torch = import_torch()
    corpus = load_corpus()
    validation = validation_set(corpus, WINDOW, torch.Generator().manual_seed(VALIDATION_SEED))  # every offset
    model = build_language_model(
        MODEL_SEED + offset,
        corpus.vocab_size,
        dim=DIM,
        layers=LAYERS,
        heads=HEADS,
        norm=NORMS["rms"],
        place="pre",
        qk_norm=qk_norm,
    )
    name = f"lr {lr:g} {'with' if qk_norm else 'without'} QK-norm"
    logits, bounds = [], []
    cpu, wall = time.process_time(), time.perf_counter()

    def record(step, loss, model):
        logits.append(model.largest_logits())
        bounds.append(model.logit_bounds())

    run = train_language_model(
        model,
        corpus,
        validation,
        lr=lr,
        data_seed=DATA_SEED + offset,
        steps=steps,
        batch=BATCH,
        window=WINDOW,
        warmup_fraction=WARMUP_FRACTION,
        schedule=CONSTANT,
        eval_every=steps,
        on_step=record,
    )
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"  qk_norm {name}: validation loss {run.final:.3f} ({cpu:.1f} s CPU)", file=sys.stderr, flush=True)
    return {
        "logits": np.array(logits),
        "bounds": np.array(bounds),
        "validation": run.validation,
        "windows": run.final_windows,
        "cpu": cpu,
        "wall": wall,
    }


def independent_runs(section) -> list[tuple]:
    """The six training runs, each on its own (the scheduler spreads them
    over the cores): every rate, without and then with QK-norm."""
    steps = section.choose(full=FULL, reduced=REDUCED)["steps"]
    return [(train_run, (lr, qk, steps, section.seed_offset)) for qk in (False, True) for lr in RATES]


def compute(section, trained: list[dict]):
    q = section.quote
    steps = section.choose(full=FULL, reduced=REDUCED)["steps"]
    runs = {(lr, qk): result for (_, (lr, qk, *_)), result in zip(independent_runs(section), trained)}
    section.progress(f"all runs done: {sum(r['cpu'] for r in runs.values()):.1f} s CPU", force=True)

    head_dim = DIM // HEADS
    q("layers", LAYERS, "d")
    q("steps", steps, "d", unit="steps")
    q("batch", BATCH, "d")
    q("window", WINDOW, "d")
    q("validation_windows", VALIDATION_WINDOWS, "d")
    q("warmup_steps", warmup_steps(steps, WARMUP_FRACTION), "d", unit="steps")
    q("rates", RATES, "g")
    q("head_dim", head_dim, "d")

    largest = {key: r["logits"].max(axis=1) for key, r in runs.items()}  # over blocks, per step
    for qk in (False, True):
        tag = "qk" if qk else "plain"
        # Each element named as the page's table reads it (its row, its rate's
        # column), then as the prose names the run.
        who, run = ("QK-norm", "with QK-norm") if qk else ("no QK-norm", "without QK-norm")
        largest_runs = [(f"largest logit, {who}", f"{lr:g}", run) for lr in RATES]
        q(f"largest_{tag}", [largest[(lr, qk)].max() for lr in RATES], ",.1f", runs=largest_runs)
        loss_runs = [(f"validation loss, {who}", f"{lr:g}", run) for lr in RATES]
        q(f"final_{tag}", [runs[(lr, qk)]["validation"][-1] for lr in RATES], ".3f", runs=loss_runs)
    q("first_step_qk", [largest[(lr, True)][0] for lr in RATES], ".2f")
    # The final losses' sampling error over the validation windows, and the
    # paired error of each rate's difference (without minus with QK-norm).
    errors = [standard_error(r["windows"]) for r in runs.values()]
    q("loss_error_range", (min(errors), max(errors)), ".3f")
    q("tie_errors", TIE_ERRORS, "d")
    paired = [paired_difference(runs[(lr, False)]["windows"], runs[(lr, True)]["windows"]) for lr in RATES]
    q("loss_gain", [d for d, _ in paired], ".3f")
    q("loss_gain_error", [e for _, e in paired], ".3f")

    # Claims.
    plain = [largest[(lr, False)].max() for lr in RATES]
    section.claim(
        "without QK-norm the run's largest attention logit grows with the learning rate",
        all(a < b for a, b in zip(plain, plain[1:])),
        "largest logits " + ", ".join(f"{v:.2f}" for v in plain),
        key="grows-with-the-learning-rate",
    )
    slack = min(float((runs[(lr, True)]["bounds"] - runs[(lr, True)]["logits"]).min()) for lr in RATES)
    checked = sum(runs[(lr, True)]["logits"].size for lr in RATES)
    q("bound_checks", checked, ",d")
    section.claim(
        "with QK-norm every block's largest logit at every step is within the bound "
        "sqrt(d_head) * max|g_q| * max|g_k| of that step's gains",
        slack >= 0,
        f"{checked} block-steps, smallest slack {slack:.4g}",
        key="they-stayed-within-the-gains",
    )
    bound_at_largest = [float(runs[(lr, True)]["bounds"].max()) for lr in RATES]
    q(
        "largest_bound_qk",
        bound_at_largest,
        ",.1f",
        runs=[("largest bound, QK-norm", f"{lr:g}", "with QK-norm") for lr in RATES],
    )
    top = RATES[-1]
    with_qk, without = runs[(top, True)]["validation"][-1], runs[(top, False)]["validation"][-1]
    q("loss_gain_top", without - with_qk, ".3f")
    section.claim(
        f"at lr {top:g} the final validation loss is lower with QK-norm",
        with_qk < without,
        f"with {with_qk:.4f}, without {without:.4f}",
        key="lower-with-qk-norm",
    )
    middle, low = RATES[len(RATES) // 2], RATES[0]
    section.claim(
        f"at lr {middle:g} the final validation loss is lower with QK-norm",
        runs[(middle, True)]["validation"][-1] < runs[(middle, False)]["validation"][-1],
        key="at-0-03-it-is",
    )
    section.claim(
        f"on the page's run at lr {low:g} the runs with and without QK-norm tie: their difference is within {TIE_ERRORS} paired "
        "standard errors",
        is_tie(*paired[0]),
        "difference {:.4f}, paired standard error {:.4f}".format(*paired[0]),
        every_seed=False,
        key="at-0-01-they-tie",
    )
    section.claim(
        f"on the page's run at lr {low:g} the run without QK-norm ends below the run with it",
        runs[(low, False)]["validation"][-1] < runs[(low, True)]["validation"][-1],
        every_seed=False,
        key="at-0-01-the-run",
    )

    # Check your understanding: the bound with unit gains and head width 16,
    # computed, and the runs' first step (gains still 1) within it.
    unit_bound = math.sqrt(QUESTION_HEAD_DIM) * 1.0 * 1.0
    q("question_head_dim", QUESTION_HEAD_DIM, "d")
    q("unit_gain_bound", unit_bound, "g")
    first = max(largest[(lr, True)][0] for lr in RATES)
    section.claim(
        f"at the first step (unit gains) the QK-norm runs' largest logit is within the unit-gain "
        f"bound sqrt({QUESTION_HEAD_DIM}) = {unit_bound:g}",
        first <= unit_bound,
        f"largest {first:.4f}, bound {unit_bound:g}",
    )
    if section.echo:
        for (lr, qk), r in runs.items():
            print(f"  lr {lr:g} qk {qk}: {r['cpu']:.1f} s CPU, {r['wall']:.1f} s wall")
    bounds = {lr: runs[(lr, True)]["bounds"].max(axis=1) for lr in RATES}  # over blocks, per step
    return {"largest": largest, "bounds": bounds, "runs": runs}


def draw(section, results):
    """Two panels, each line labelled at its end: without QK-norm the three
    runs; with it the three runs (dashed) and the bound each one's learned
    gains set (dotted), on an axis of their own, as they sit close together."""
    largest, bounds = results["largest"], results["bounds"]

    def largest_logit_figure():
        fig = new_figure(
            8.4,
            4.0,
            margins=(0.62, 0.5, 1.52, 0.3),
            grid=(1, 2),
            wspace=2.05,
            suptitle="Without QK-norm the largest logit grows with the learning rate;\n"
            "with it, it stays under the bound its learned gains set",
        )
        plain_ax, qk_ax = fig.subplots(1, 2)
        colours = dict(zip(RATES, [PALETTE[c] for c in ("green", "orange", "red", "purple", "sky", "blue")]))
        rate_texts = section.texts("rates")
        steps = np.arange(1, len(largest[(RATES[0], False)]) + 1)
        for ax, qk in ((plain_ax, False), (qk_ax, True)):
            tag = "qk" if qk else "plain"
            values, ends = [], []
            for i, lr in enumerate(RATES):
                curve = largest[(lr, qk)]
                values.extend(curve)
                ax.plot(steps, curve, color=colours[lr], linestyle="--" if qk else "-", linewidth=1.4)
                ends.append((curve[-1], f"lr {rate_texts[i]}: max {section.text('largest_' + tag, i)}", colours[lr]))
                if qk:
                    values.extend(bounds[lr])
                    ax.plot(steps, bounds[lr], color=colours[lr], linestyle=":", linewidth=1.2)
                    ends.append((bounds[lr][-1], f"lr {rate_texts[i]}: its bound", colours[lr]))
            log_axis(ax, "y", labels="power")
            ax.set_ylim(*nice_limits(values, log=True))
            ax.set_xlim(0, len(steps))
            ax.set_xlabel("step")
            label_line_ends(ax, ends)
        plain_ax.set_ylabel("largest |attention logit|, all blocks")
        plain_ax.set_title("no QK-norm", loc="left")
        qk_ax.set_title("with QK-norm (dashed); bound (dotted)", loc="left")
        return fig

    section.save_figure(largest_logit_figure, "largest_logit")


if __name__ == "__main__":
    main(__name__)
