"""Section 3, "Why batch normalisation is used less today": one example's
batch-norm output depends on the other examples in its batch.

Computes our example (example A, feature a of section 2's 4x6 grid, rng(808))
normalised down feature a in batch A and in batch B (example A stacked on three
rows from rng(909)); the spread of that output over 600 random batches at each
of eight batch sizes (rng(1212)); a padded column with and without five filler
zeros counted; and running statistics over 400 batches (rng(1313)) against a
brighter batch at prediction time. Draws four figures.
"""

from __future__ import annotations

import math


import pagekit.section  # noqa: F401  (first: it pins the numeric environment before numpy loads)
import numpy as np
from matplotlib.patches import Rectangle

from normalisation_and_stability.norm_worked_vector import (
    GRID_MEAN,
    GRID_SEED,
    GRID_SPREAD,
    batch_grid,
)
from pagekit.section import (
    PALETTE,
    draw_cell_rows,
    log_axis,
    main,
    new_cell_figure,
    new_figure,
    nice_limits,
    on_phone,
    wrap_to_width,
)

EPS = 1e-5
FEATURE = 0  # feature a; our example is example A, feature a of batch A

# Batch B: example A on top of three rows ~ Normal(1.6, 1.2) from rng(909).
B_SEED, B_ROWS, B_MEAN, B_SPREAD = 909, 3, 1.6, 1.2

# Batch-size noise: one generator across all sizes, in this order.
SIZE_SEED = 1212
SIZES = (2, 4, 8, 16, 32, 64, 128, 256)
TRIALS = 600

# Padding: ten real values of one feature (the first is the marked one), five filler zeros.
PAD_REAL = np.array([0.43, 1.12, 0.87, -0.21, 0.64, 1.35, 0.08, 0.92, 0.57, 0.23])
PAD_FILLER = 5
MARKED = 0

# Running statistics.
RUN_SEED, RUN_BATCHES, RUN_BATCH_SIZE = 1313, 400, 32
MOMENTUM, RUN_START_MEAN, RUN_START_VARIANCE = 0.9, 0.0, 1.0
BRIGHT_SHIFT = 1.4
ROUTE_GAP_THRESHOLD = 0.5
# The other bounds the claims test, each formatted into its claim's words.
QUAD_RATIO_LOW, QUAD_RATIO_HIGH = 1.6, 2.4  # "roughly halves": spread(m) / spread(4m) between these
QUAD_FROM = 16  # the batch size from which quadrupling roughly halves the spread
POPULATION_TOL = 0.05  # the mean output at the largest batch size against the population value
STORED_MEAN_TOL, STORED_SPREAD_TOL = 0.15, 0.1  # the stored statistics against the drawing ones
SHIFT_SHARE_FLOOR = 0.5  # "mostly": the shift's share of the route gap, above
OUTPUT_DIGIT = 0.01  # example A's two outputs "differ": by more than the last digit their two-decimal values print

BATCH_A_LABELS = ("example A", "example B", "example C", "example D")
BATCH_B_LABELS = ("example A", "example E", "example F", "example G")
# Wu and He (2018), section 4.1, ResNet-50 on ImageNet at 32 images per GPU:
# validation error of batch norm, and layer norm's "degradation of 1.7%" over
# it. Numbers from the cited paper, printed so the page check matches them.
WU_HE_BN_ERROR = 23.6  # %
WU_HE_LN_GAP = 1.7  # percentage points
WU_HE_IMAGES_PER_GPU = 32
WU_HE_DEPTH = 50  # ResNet-50


def layer_norm_rows(batch: np.ndarray, eps: float = EPS) -> np.ndarray:
    """Layer norm without learned scale or shift: each row (one example)
    over its own features."""
    return (batch - batch.mean(axis=1, keepdims=True)) / np.sqrt(batch.var(axis=1, keepdims=True) + eps)


def batch_norm_column(column: np.ndarray, eps: float = EPS) -> np.ndarray:
    """Batch norm of one feature column (last axis): subtract the column mean,
    divide by sqrt(population variance + eps)."""
    mean = column.mean(axis=-1, keepdims=True)
    return (column - mean) / np.sqrt(column.var(axis=-1, keepdims=True) + eps)


def by_hand(value: float, column: np.ndarray, eps: float = EPS) -> float:
    """The same output with explicit Python sums: an independent route."""
    n = len(column)
    mean = sum(float(v) for v in column) / n
    variance = sum((float(v) - mean) ** 2 for v in column) / n
    return (value - mean) / (variance + eps) ** 0.5


def two_significant(value: float) -> str:
    """Two significant figures, trailing zeros kept ("0.30", "0.075")."""
    return f"{value:.{max(0, 1 - math.floor(math.log10(abs(value))))}f}"


def size_trials(section, value: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """For each batch size m, 600 batches of our example plus m-1 companions
    ~ Normal(0.3, 1.2), all from one rng(1212) in the order of SIZES. Each
    size's companions are drawn as one (600, m-1) block: numpy fills it in C
    order, the same stream as 600 draws of m-1 values (checked in compute)."""
    rng = section.rng(SIZE_SEED)
    companions, outputs = [], []
    for m in SIZES:
        block = rng.normal(GRID_MEAN, GRID_SPREAD, size=(TRIALS, m - 1))
        column = np.concatenate([np.full((TRIALS, 1), value), block], axis=1)
        companions.append(block)
        outputs.append(batch_norm_column(column)[:, 0])
    return companions, outputs


def size_trials_one_by_one(section) -> np.ndarray:
    """The spec's order taken literally: trial after trial, m-1 values at a
    time. Used once, only to check the block draws against it."""
    rng = section.rng(SIZE_SEED)
    return np.concatenate([rng.normal(GRID_MEAN, GRID_SPREAD, size=m - 1) for m in SIZES for _ in range(TRIALS)])


def compute(section):
    q = section.quote
    q("wu_he_images_per_gpu", WU_HE_IMAGES_PER_GPU, "d")
    q("wu_he_depth", WU_HE_DEPTH, "d")
    q("wu_he_bn_error", WU_HE_BN_ERROR, lambda v: f"{v:.1f}%")
    q("wu_he_ln_error", WU_HE_BN_ERROR + WU_HE_LN_GAP, lambda v: f"{v:.1f}%")
    q("eps", EPS, ".0x")
    q("grid_seed", GRID_SEED, "d")
    q("population_mean", GRID_MEAN, ".1f")
    q("population_spread", GRID_SPREAD, ".1f")

    # -- The same example in two batches ------------------------------------
    grid = batch_grid(section)
    value = float(grid[0, FEATURE])
    rows_b = np.round(section.rng(B_SEED).normal(B_MEAN, B_SPREAD, size=(B_ROWS, grid.shape[1])), 2)
    batch_b = np.vstack([grid[:1], rows_b])
    column_a, column_b = grid[:, FEATURE], batch_b[:, FEATURE]
    outputs_a, outputs_b = batch_norm_column(column_a), batch_norm_column(column_b)
    output_a, output_b = float(outputs_a[0]), float(outputs_b[0])
    section.agree("numpy and hand-summed batch norm in batch A", output_a, by_hand(value, column_a), atol=1e-12)
    section.agree("numpy and hand-summed batch norm in batch B", output_b, by_hand(value, column_b), atol=1e-12)
    q("example_value", value, ".2f")
    q("batch_b_seed", B_SEED, "d")
    q("batch_b_population_mean", B_MEAN, ".1f")
    q("batch_a_column", column_a, ".2f")
    q("batch_b_column", column_b, ".2f")
    q("batch_a_mean", column_a.mean(), ".2f")
    q("batch_a_spread", column_a.std(), ".2f")
    q("batch_b_mean", column_b.mean(), ".2f")
    q("batch_b_spread", column_b.std(), ".2f")
    q("batch_a_outputs", outputs_a, ".2f")
    q("batch_b_outputs", outputs_b, ".2f")
    q("output_a", output_a, ".2f")
    q("output_b", output_b, ".2f")
    q("output_gap", abs(output_a - output_b), ".2f")
    section.claim(
        f"batch norm gives example A different outputs in batch A and batch B (apart by over {OUTPUT_DIGIT:g})",
        abs(output_a - output_b) > OUTPUT_DIGIT,
        f"outputs {output_a:.4f} and {output_b:.4f}",
        key="batch-norm-output-differs",
    )
    # Layer norm works along each example's own row: normalise each whole
    # batch row by row and read example A's row (row 0 of both batches).
    section.claim(
        "layer norm gives example A the same output in both batches",
        np.array_equal(layer_norm_rows(grid)[0], layer_norm_rows(batch_b)[0]),
        key="layer-norm-same-in-both-batches",
    )

    # -- Spread of the output against batch size ----------------------------
    companions, outputs = size_trials(section, value)
    section.agree(
        "block draws of shape (600, m-1) and 600 draws of m-1 values from rng(1212)",
        np.concatenate([c.ravel() for c in companions]),
        size_trials_one_by_one(section),
    )
    spreads = np.array([o.std() for o in outputs])
    means = np.array([o.mean() for o in outputs])
    q("size_seed", SIZE_SEED, "d")
    q("trials", TRIALS, "d")
    q("batch_sizes", SIZES, "d")
    # 600 trials fix each spread to about 3%: two significant figures.
    q("size_spreads", spreads, two_significant)
    population_output = (value - GRID_MEAN) / GRID_SPREAD
    q("population_output", population_output, ".2f")
    section.claim(
        "the spread of the output falls monotonically with batch size",
        bool(np.all(np.diff(spreads) < 0)),
        key="it-falls-at-every-step",
    )
    section.claim(
        f"even at batch size {SIZES[-1]} the output still spreads (its spread is above zero)",
        bool(spreads[-1] > 0),
        f"spread {spreads[-1]:.3g}",
        key="noise-remains-at-the-largest-batch",
    )
    # "Quadrupling the batch roughly halves the spread" over the larger sizes:
    # each ratio spread(m) / spread(4m) between 1.6 and 2.4 from m = 16 on.
    fourfold = [(i, SIZES.index(4 * m)) for i, m in enumerate(SIZES) if m >= QUAD_FROM and 4 * m in SIZES]
    quads = np.array([spreads[i] / spreads[j] for i, j in fourfold])
    if fourfold:  # (a notebook reader's SIZES may hold no size with its fourfold)
        section.claim(
            f"from {QUAD_FROM} up, quadrupling the batch roughly halves the spread "
            f"(ratio {QUAD_RATIO_LOW:g} to {QUAD_RATIO_HIGH:g})",
            bool(np.all((quads > QUAD_RATIO_LOW) & (quads < QUAD_RATIO_HIGH))),
            key="every-fourfold-increase-in-batch",
        )
    else:
        section.untested.append(f"SIZES holds no size from {QUAD_FROM} up with its fourfold: not tested")
    q("size_spread_ratio", spreads[0] / spreads[-1], ".0f", unit="times less")
    section.claim(
        f"at the largest batch size the mean output is within {POPULATION_TOL:g} of the population value",
        abs(means[-1] - population_output) < POPULATION_TOL,
    )

    # -- Padding -------------------------------------------------------------
    padded = np.concatenate([PAD_REAL, np.zeros(PAD_FILLER)])
    marked = float(PAD_REAL[MARKED])
    pad_out_real = float(batch_norm_column(PAD_REAL)[MARKED])
    pad_out_filled = float(batch_norm_column(padded)[MARKED])
    section.agree(
        "numpy and hand-summed padded outputs",
        [pad_out_real, pad_out_filled],
        [by_hand(marked, PAD_REAL), by_hand(marked, padded)],
        atol=1e-12,
    )
    q("padded_column", padded, ".2f")
    q("marked_value", marked, ".2f")
    q("pad_real_mean", PAD_REAL.mean(), ".2f")
    q("pad_real_spread", PAD_REAL.std(), ".2f")
    q("pad_output_real", pad_out_real, ".2f")
    q("pad_filled_mean", padded.mean(), ".2f")
    q("pad_filled_spread", padded.std(), ".2f")
    q("pad_output_filled", pad_out_filled, ".2f")
    section.claim(
        "the marked value is below the real mean but above the mean with filler",
        pad_out_real < 0 < pad_out_filled,
        key="0-43-is-below-average",
    )

    # -- Running statistics at prediction time -------------------------------
    rng = section.rng(RUN_SEED)
    batches = rng.normal(GRID_MEAN, GRID_SPREAD, size=(RUN_BATCHES, RUN_BATCH_SIZE))
    bright = rng.normal(GRID_MEAN + BRIGHT_SHIFT, GRID_SPREAD, size=RUN_BATCH_SIZE)
    batch_means, batch_vars = batches.mean(axis=1), batches.var(axis=1)
    run_mean, run_var = RUN_START_MEAN, RUN_START_VARIANCE
    for m, v in zip(batch_means, batch_vars):  # 400 steps: the update as a framework runs it
        run_mean = MOMENTUM * run_mean + (1 - MOMENTUM) * m
        run_var = MOMENTUM * run_var + (1 - MOMENTUM) * v
    weights = (1 - MOMENTUM) * MOMENTUM ** np.arange(RUN_BATCHES - 1, -1, -1)
    closed = (
        MOMENTUM**RUN_BATCHES * RUN_START_MEAN + weights @ batch_means,
        MOMENTUM**RUN_BATCHES * RUN_START_VARIANCE + weights @ batch_vars,
    )
    section.agree("running statistics by loop and by closed-form weights", [run_mean, run_var], closed, atol=1e-12)
    x0 = float(bright[0])
    out_train = float(batch_norm_column(bright)[0])
    out_predict = (x0 - run_mean) / np.sqrt(run_var + EPS)
    route_gap = abs(out_train - out_predict)
    q("running_seed", RUN_SEED, "d")
    q("running_batches", RUN_BATCHES, "d")
    q("running_batch_size", RUN_BATCH_SIZE, "d")
    q("momentum", MOMENTUM, ".1f")
    q("momentum_new", 1 - MOMENTUM, ".1f")
    q("running_start_mean", RUN_START_MEAN, ".0f")
    q("running_start_variance", RUN_START_VARIANCE, ".0f")
    q("bright_shift", BRIGHT_SHIFT, ".1f")
    q("bright_population_mean", GRID_MEAN + BRIGHT_SHIFT, ".1f")
    q("bright_value", x0, ".2f")
    q("bright_batch_mean", bright.mean(), ".2f")
    q("bright_batch_spread", bright.std(), ".2f")
    q("stored_mean", run_mean, ".2f")
    q("stored_spread", np.sqrt(run_var), ".2f")
    q("output_train", out_train, ".2f")
    q("output_predict", out_predict, ".2f")
    q("route_gap", route_gap, ".2f")
    section.claim(
        f"the two prediction-time routes disagree by more than {ROUTE_GAP_THRESHOLD:g}", route_gap > ROUTE_GAP_THRESHOLD
    )
    section.claim(
        f"the stored statistics end close to the drawing ones (mean within {STORED_MEAN_TOL:g} of "
        f"{GRID_MEAN:g}, spread within {STORED_SPREAD_TOL:g} of {GRID_SPREAD:g})",
        abs(run_mean - GRID_MEAN) < STORED_MEAN_TOL and abs(np.sqrt(run_var) - GRID_SPREAD) < STORED_SPREAD_TOL,
    )
    section.claim(
        "against the stored (dimmer) statistics the value comes out higher than against its own batch's",
        out_predict > out_train,
    )

    # The gap split in two. The batch's own statistics remove any shift, so
    # the training-time output of the brighter batch equals that of the same
    # batch moved back down by the shift (a batch from the training
    # distribution); the stored route sees the shift, divided by the stored
    # spread. gap = (gap on the unshifted batch) + shift / stored spread.
    unshifted = bright - BRIGHT_SHIFT
    out_train_unshifted = float(batch_norm_column(unshifted)[0])
    out_predict_unshifted = (x0 - BRIGHT_SHIFT - run_mean) / np.sqrt(run_var + EPS)
    gap_unshifted = out_predict_unshifted - out_train_unshifted
    shift_part = BRIGHT_SHIFT / np.sqrt(run_var + EPS)
    section.agree(
        "training-time output of the brighter batch and of the same batch moved back down",
        out_train_unshifted,
        out_train,
        atol=1e-12,
    )
    section.agree(
        "the route gap and the unshifted gap plus shift / stored spread",
        out_predict - out_train,
        gap_unshifted + shift_part,
        atol=1e-12,
    )
    q("unshifted_value", x0 - BRIGHT_SHIFT, ".2f")
    q("output_predict_unshifted", out_predict_unshifted, ".2f")
    q("gap_unshifted", abs(gap_unshifted), ".2f")
    q("gap_shift_part", shift_part, ".2f")
    section.claim_bound(
        "share of the route gap that the shift explains (shift part / gap)",
        shift_part / (out_predict - out_train),
        ">",
        SHIFT_SHARE_FLOOR,
        fmt="g",
        key="comes-mostly-from-the-shift",
    )
    # PyTorch's BatchNorm stores the unbiased variance (n / (n - 1) times the
    # batch variance) in running_var while normalising each training batch by
    # the population variance; the page's stored variance uses the population
    # variance throughout. The unbiased store, for comparison:
    unbiased = RUN_BATCH_SIZE / (RUN_BATCH_SIZE - 1)
    run_var_unbiased = RUN_START_VARIANCE
    for v in batch_vars:
        run_var_unbiased = MOMENTUM * run_var_unbiased + (1 - MOMENTUM) * unbiased * v
    q("stored_spread_unbiased", np.sqrt(run_var_unbiased), ".2f")
    q("output_predict_unbiased", (x0 - run_mean) / np.sqrt(run_var_unbiased + EPS), ".2f")
    return {"spreads": spreads, "out_train": out_train, "out_predict": out_predict}


# ---------------------------------------------------------------------------
# Figures


def _cell(ax, x, y, text, fill, *, edge=None, fontsize=9.5, colour=None):
    """One labelled cell of width 1 and height 0.72 at (x, y)."""
    ax.add_patch(
        Rectangle(
            (x + 0.04, y + 0.04), 0.92, 0.72, facecolor=fill, edgecolor=edge or "white", linewidth=1.8 if edge else 1.0
        )
    )
    ax.text(x + 0.5, y + 0.4, text, ha="center", va="center", fontsize=fontsize, color=colour or PALETTE["ink"])


def _batch_panel(ax, title, labels, values, outputs, mean, spread):
    """Feature a of one batch and its batch-norm outputs, example A marked."""
    ax.text(0.5, -0.25, "feature a", ha="center", va="bottom", fontsize=9, color=PALETTE["grey"])
    ax.text(1.8, -0.25, "output", ha="center", va="bottom", fontsize=9, color=PALETTE["grey"])
    for i, (label, v, o) in enumerate(zip(labels, values, outputs)):
        ours = i == 0
        ax.text(-0.15, i + 0.4, label, ha="right", va="center", fontsize=9.5)
        _cell(ax, 0, i, v, "#E3D3E8" if ours else "#F6E3C2")
        ax.text(1.15, i + 0.4, "→", ha="center", va="center", fontsize=10, color=PALETTE["grey"])
        _cell(ax, 1.3, i, o, "#DCEFE6" if ours else PALETTE["light"], edge=PALETTE["red"] if ours else None)
    ax.text(
        0.04,
        len(values) + 0.2,
        f"column mean {mean}, spread {spread}",
        ha="left",
        va="top",
        fontsize=9,
        color="#A06A00",
    )
    ax.set_title(title, loc="left", fontsize=10.5)
    ax.set_xlim(-1.65, 2.45)
    ax.set_ylim(len(values) + 0.75, -0.6)
    ax.axis("off")


def draw(section, results):
    t = section.text
    texts = section.texts

    # 1. The same example in two batches.
    def two_batches_figure():
        fig = new_figure(
            8.4,
            3.1,
            margins=(0.04, 0.04, 0.04, 0.25),
            grid=(1, 2),
            wspace=0.08,
            suptitle=f"The same value {t('example_value')} becomes {t('output_a')} in "
            f"batch A and {t('output_b')} in batch B: a gap of {t('output_gap')}",
        )
        ax_a, ax_b = fig.subplots(1, 2)
        _batch_panel(
            ax_a,
            "Batch A (the grid from before)",
            BATCH_A_LABELS,
            texts("batch_a_column"),
            texts("batch_a_outputs"),
            t("batch_a_mean"),
            t("batch_a_spread"),
        )
        _batch_panel(
            ax_b,
            "Batch B (example A with three new examples)",
            BATCH_B_LABELS,
            texts("batch_b_column"),
            texts("batch_b_outputs"),
            t("batch_b_mean"),
            t("batch_b_spread"),
        )
        return fig

    section.save_figure(two_batches_figure, "two_batches")

    # 2. Spread of the output against batch size.
    spreads = results["spreads"]

    def spread_vs_batch_size_figure():
        fig = new_figure(8.4, 3.6, margins=(0.82, 0.46, 0.05, 0.24))
        ax = fig.add_subplot()
        ax.plot(SIZES, spreads, "o-", color=PALETTE["orange"])
        for m, s, label in zip(SIZES, spreads, texts("size_spreads")):
            ax.annotate(label, (m, s), xytext=(6, 5), textcoords="offset points", fontsize=9)
        log_axis(ax, "x", ticks=SIZES, base=2, labels="plain")
        y_ticks = [v for v in (0.05, 0.1, 0.2, 0.5, 1.0) if spreads.min() / 1.4 <= v <= spreads.max() * 1.4]
        log_axis(ax, "y", ticks=y_ticks, labels="plain")
        ax.set_xlim(SIZES[0] / 1.3, SIZES[-1] * (2.6 if on_phone() else 1.6))  # room for the last label
        ax.set_ylim(*nice_limits([spreads.min() / 1.4, spreads.max() * 1.4], log=True, pad=0.0))
        ax.set_xlabel("batch size (our example plus its companions)")
        ax.set_ylabel(f"spread of example A's output\nover {t('trials')} random batches")
        ax.set_title(
            f"Example A's output varies less as the batch grows: spread "
            f"{t('size_spreads', 0)} → {t('size_spreads', len(SIZES) - 1)}",
            loc="left",
        )
        return fig

    section.save_figure(spread_vs_batch_size_figure, "spread_vs_batch_size")

    # 3. A padded column with and without the filler counted.
    padded = texts("padded_column")
    n_real = len(PAD_REAL)
    real_fill = [PALETTE["light"]] * n_real
    real_fill[MARKED] = "#E3D3E8"
    filled_fill = real_fill + ["#DDDDDD"] * PAD_FILLER

    def padding_figure():
        fig, ax = new_cell_figure(8.4, 2.6)
        tops = draw_cell_rows(
            ax,
            [
                ("real values only", padded[:n_real]),
                ("", []),
                ("filler counted", padded),
                ("", []),
            ],
            fills=[real_fill, PALETTE["light"], filled_fill, PALETTE["light"]],
            label_width=2.6,
            fontsize=9,
        )
        phone = on_phone()
        for row, mean, spread, out, colour in (
            (1, "pad_real_mean", "pad_real_spread", "pad_output_real", PALETTE["blue"]),
            (3, "pad_filled_mean", "pad_filled_spread", "pad_output_filled", PALETTE["red"]),
        ):
            note = f"mean {t(mean)}, spread {t(spread)}: the marked {t('marked_value')} becomes {t(out)}"
            ax.text(
                0.05,
                tops[row] + 0.05 if phone else tops[row] + 0.3,
                wrap_to_width(note, 4.0) if phone else note,
                ha="left",
                va="top" if phone else "center",
                fontsize=9.5,
                color=colour,
            )
        if not phone:  # on a phone the filler's grey cells wrap onto a line of their own
            ax.text(
                n_real + PAD_FILLER / 2, 1.75, "filler", ha="center", va="center", fontsize=9, color=PALETTE["grey"]
            )
            ax.set_ylim(3.65, -0.1)
        ax.set_title(
            f"Filler zeros drag the mean from {t('pad_real_mean')} to {t('pad_filled_mean')}: "
            f"the marked {t('marked_value')} flips to above average",
            loc="left",
        )
        return fig

    section.save_figure(padding_figure, "padding")

    # 4. Training-time vs prediction-time output.
    def train_vs_predict_figure():
        fig = new_figure(
            8.4,
            2.8,
            margins=(1.69, 0.46, 0.05, 0.42),
            suptitle=f"On a batch shifted by {t('bright_shift')}, training and prediction "
            f"disagree by {t('route_gap')} ({t('gap_unshifted')} without the shift)",
        )
        ax = fig.add_subplot()
        values = [results["out_train"], results["out_predict"]]
        labels = [
            f"training time:\nbatch's own mean {t('bright_batch_mean')},\nspread {t('bright_batch_spread')}",
            f"prediction time:\nstored mean {t('stored_mean')},\nspread {t('stored_spread')}",
        ]
        y = [1, 0]
        ax.barh(y, values, height=0.55, color=[PALETTE["blue"], PALETTE["orange"]])
        ax.set_yticks(y, labels)
        ax.axvline(0, color=PALETTE["ink"], linewidth=0.8)
        for yi, v, name in zip(y, values, ("output_train", "output_predict")):
            ax.text(
                v + (0.03 if v >= 0 else -0.03), yi, t(name), ha="left" if v >= 0 else "right", va="center", fontsize=10
            )
        lo, hi = min(0.0, *values), max(0.0, *values)
        pad = (0.45 if on_phone() else 0.18) * (hi - lo)  # room for the bars' labels
        ax.set_xlim(
            *nice_limits(
                [lo - (pad if lo < 0 else 0.05 * (hi - lo)), hi + (pad if hi > 0 else 0.05 * (hi - lo))], pad=0.0
            )
        )
        ax.set_ylim(-0.6, 1.6)
        ax.set_xlabel(f"batch-norm output for the brighter batch's first value, {t('bright_value')}")
        return fig

    section.save_figure(train_vs_predict_figure, "train_vs_predict")


if __name__ == "__main__":
    main(__name__)
