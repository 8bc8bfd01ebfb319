"""Section 2, "Layer normalisation and RMS normalisation": one six-number
vector walked through both rules by hand and cross-checked with torch.

Computes layer norm step by step (average, deviations, squares, spread with
epsilon, divide, learned scale and shift), follows the third element through,
undoes the normalisation with scale = spread and shift = average, computes RMS
norm, compares the two outputs, checks both against torch.nn.LayerNorm and
torch.nn.RMSNorm, and averages a 4x6 batch grid (rng(808)) along a row and
down a column. Draws four figures.
"""

from __future__ import annotations


import pagekit.section  # noqa: F401  (first: it pins the numeric environment before numpy loads)
import numpy as np

from pagekit.section import (
    PALETTE,
    draw_cell_rows,
    fit_cell_figure,
    import_torch,
    main,
    new_cell_figure,
    on_phone,
    wrap_to_width,
)

X = np.array([1.03, -0.59, 1.13, 1.83, 0.88, 0.36])
EPS = 1e-5
GAMMA = np.array([1.20, 0.90, 1.00, 1.40, 0.80, 1.10])
BETA = np.array([0.10, 0.00, -0.20, 0.00, 0.30, 0.00])
UNDO_BOUND = 1e-12  # undoing must leave only rounding error
NORMALISED_TOL = 1e-9  # layer-norm values have mean 0 and (without eps) spread 1 to this
TORCH_TOLERANCE = 1e-6  # float32 modules vs the float64 hand computation
# "Non-zero", "differ": by more than the last digit the four-decimal values print.
PRINTED_DIGIT = 1e-4
FOLLOWED = 2  # the third element, followed through every step by hand
# A second vector: the first doubled and raised by one. Layer norm maps it to
# the same normalised values, so the first vector's undoing scale and shift
# give back the first vector, not this one.
SECOND_SCALE, SECOND_SHIFT = 2.0, 1.0
SAME_NORMALISED_TOL = 1e-4  # layer norm of both vectors agrees (only eps differs)
SECOND_MISS_FLOOR = 1.0  # the first vector's undo misses the second by more than this
GRID_SEED, GRID_SHAPE, GRID_MEAN, GRID_SPREAD = 808, (4, 6), 0.3, 1.2
GRID_DIGIT = 0.01  # the grid's means "differ": by more than the last digit their two-decimal values print


def batch_grid(section) -> np.ndarray:
    """The 4x6 batch of section 2, reused by section 3: rng(808), N(0.3, 1.2),
    rounded to two decimals."""
    grid = section.rng(GRID_SEED).normal(GRID_MEAN, GRID_SPREAD, size=GRID_SHAPE)
    return np.round(grid, 2)


def layer_norm_by_hand(x: np.ndarray, eps: float) -> dict[str, np.ndarray | float]:
    """Layer norm one step at a time, with explicit Python sums (no numpy
    reductions), so it is an independent route to the library's answer."""
    n = len(x)
    mean = sum(float(v) for v in x) / n
    deviations = np.array([v - mean for v in x])
    squares = np.array([d * d for d in deviations])
    variance = sum(float(s) for s in squares) / n
    spread = (variance + eps) ** 0.5
    normalised = np.array([d / spread for d in deviations])
    return {
        "mean": mean,
        "deviations": deviations,
        "squares": squares,
        "variance": variance,
        "spread": spread,
        "normalised": normalised,
    }


def rms_norm_by_hand(x: np.ndarray, eps: float) -> dict[str, np.ndarray | float]:
    """RMS norm: no average removed, divide by the root mean square."""
    squares = np.array([v * v for v in x])
    mean_square = sum(float(s) for s in squares) / len(x)
    rms = (mean_square + eps) ** 0.5
    return {"squares": squares, "mean_square": mean_square, "rms": rms, "normalised": np.array([v / rms for v in x])}


def torch_normalised(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """torch.nn.LayerNorm and torch.nn.RMSNorm without affine parameters, in
    float32 as the page's Python section runs them."""
    torch = import_torch()
    tensor = torch.tensor(x, dtype=torch.float32)
    layer = torch.nn.LayerNorm(len(x), eps=eps, elementwise_affine=False)(tensor)
    rms = torch.nn.RMSNorm(len(x), eps=eps, elementwise_affine=False)(tensor)
    return layer.detach().numpy().astype(float), rms.detach().numpy().astype(float)


def compute(section):
    q = section.quote
    q("vector_length", len(X), "d")
    q("x", X, ".2f")
    q("eps", EPS, ".0x")
    q("gamma", GAMMA, ".2f")
    q("beta", BETA, ".2f")

    # Layer norm, by hand and with numpy's reductions.
    ln = layer_norm_by_hand(X, EPS)
    section.agree("hand and numpy mean", ln["mean"], X.mean(), atol=1e-15)
    section.agree("hand and numpy variance", ln["variance"], X.var(), atol=1e-15)
    ln_out = GAMMA * ln["normalised"] + BETA
    q("ln_mean", ln["mean"], ".4f")
    q("ln_deviations", ln["deviations"], ".4f")
    q("ln_squares", ln["squares"], ".4f")
    q("ln_variance", ln["variance"], ".4f")
    q("ln_spread", ln["spread"], ".4f")
    q("ln_normalised", ln["normalised"], ".4f")
    q("ln_output", ln_out, ".4f")
    normalised_mean = float(np.mean(ln["normalised"]))
    normalised_spread = float(np.std(ln["normalised"]))
    q("ln_normalised_mean", abs(normalised_mean), ".4f", abs_tol=1e-12)
    q("ln_normalised_spread", normalised_spread, ".4f")
    section.claim(
        f"layer-norm values have mean 0 (to {NORMALISED_TOL:g})",
        abs(normalised_mean) < NORMALISED_TOL,
        key="layer-norm-values-mean-zero",
    )
    # With epsilon the spread is sqrt(var / (var + eps)), a hair under 1;
    # without it the spread is 1 to rounding error.
    section.agree(
        "normalised spread and sqrt(var/(var+eps))",
        normalised_spread,
        np.sqrt(ln["variance"] / (ln["variance"] + EPS)),
        atol=1e-12,
    )
    spread_without_eps = float(np.std(layer_norm_by_hand(X, 0.0)["normalised"]))
    section.claim(
        f"layer-norm values have spread 1 (to {NORMALISED_TOL:g}) when eps = 0",
        abs(spread_without_eps - 1) < NORMALISED_TOL,
    )
    q("ln_spread_shortfall", 1 - normalised_spread, ".0x")

    # The third element, followed through by hand.
    q("followed_position", FOLLOWED + 1, "d")
    q("followed_gamma", GAMMA[FOLLOWED], ".2f")
    q("followed_beta", BETA[FOLLOWED], ".2f")

    # Undo: scale = spread and shift = mean give the input back.
    undone = ln["spread"] * ln["normalised"] + ln["mean"]
    undo_error = float(np.max(np.abs(undone - X)))
    q("undo_error", undo_error, ".0x", abs_tol=1e-15)
    q("undo_error_bound", UNDO_BOUND, ".0x")
    section.claim(
        f"scale = spread and shift = mean undo layer norm (error below {UNDO_BOUND:g})",
        undo_error < UNDO_BOUND,
        key="well-below-1-10",
    )
    # ... for this vector only: the same scale and shift on a second vector.
    second = SECOND_SCALE * X + SECOND_SHIFT
    ln2 = layer_norm_by_hand(second, EPS)
    same = float(np.max(np.abs(ln2["normalised"] - ln["normalised"])))
    redone = ln["spread"] * ln2["normalised"] + ln["mean"]
    miss = np.abs(redone - second)
    q("second_scale", SECOND_SCALE, ".0f")
    q("second_shift", SECOND_SHIFT, ".0f")
    q("second_x", second, ".2f")
    q("second_same_normalised", same, ".0x", abs_tol=1e-12)
    q("second_miss", float(miss.max()), ".2f")
    q("second_miss_position", int(np.argmax(miss)) + 1, "d")
    section.claim_bound(
        "largest gap between the layer-norm values of x and of 2x + 1",
        same,
        "<",
        SAME_NORMALISED_TOL,
        fmt=".0e",
        key="maps-it-to-the-same",
    )
    section.claim_bound(
        "largest miss of the first vector's scale and shift on the second vector",
        float(miss.max()),
        ">",
        SECOND_MISS_FLOOR,
        fmt="g",
        key="misses-the-second-by-up",
    )

    # RMS norm.
    rms = rms_norm_by_hand(X, EPS)
    section.agree("hand and numpy mean square", rms["mean_square"], np.mean(X**2), atol=1e-15)
    rms_out = GAMMA * rms["normalised"]
    q("rms_squares", rms["squares"], ".4f")
    q("rms_mean_square", rms["mean_square"], ".4f")
    q("rms", rms["rms"], ".4f")
    q("rms_normalised", rms["normalised"], ".4f")
    q("rms_normalised_rms", float(np.sqrt(np.mean(rms["normalised"] ** 2))), ".4f")
    q("rms_normalised_mean", float(np.mean(rms["normalised"])), ".4f")
    q("rms_output", rms_out, ".4f")
    rms_means = [float(np.mean(rms["normalised"])), float(np.mean(rms_out))]
    section.claim(
        f"RMS-norm values and outputs keep a non-zero mean (over {PRINTED_DIGIT:g} from 0)",
        min(abs(m) for m in rms_means) > PRINTED_DIGIT,
        f"means {rms_means[0]:.4f} (values) and {rms_means[1]:.4f} (outputs)",
        key="rms-norm-keeps-non-zero-mean",
    )

    # Layer norm vs RMS norm, with scale and shift applied.
    difference = ln_out - rms_out
    largest = int(np.argmax(np.abs(difference)))
    q("ln_minus_rms", difference, ".4f")
    q("largest_difference", abs(difference[largest]), ".4f")
    q("largest_difference_position", largest + 1, "d")
    section.claim(
        f"the layer-norm and RMS-norm outputs differ at every element (by over {PRINTED_DIGIT:g})",
        bool(np.all(np.abs(difference) > PRINTED_DIGIT)),
        f"smallest gap {np.min(np.abs(difference)):.4f}",
        key="outputs-differ-at-every-element",
    )

    # Cross-check against torch's modules (float32).
    torch_ln, torch_rms = torch_normalised(X, EPS)
    section.agree("torch LayerNorm and the hand layer norm", torch_ln, ln["normalised"], atol=TORCH_TOLERANCE)
    section.agree("torch RMSNorm and the hand RMS norm", torch_rms, rms["normalised"], atol=TORCH_TOLERANCE)
    q("torch_tolerance", TORCH_TOLERANCE, ".0x")
    q("torch_layer_norm", torch_ln, ".4f", rel_tol=1e-6)
    q("torch_rms_norm", torch_rms, ".4f", rel_tol=1e-6)

    # Two directions of averaging on a batch grid.
    grid = batch_grid(section)
    q("grid_seed", GRID_SEED, "d")
    q("grid_mean", GRID_MEAN, ".1f")
    q("grid_spread", GRID_SPREAD, ".1f")
    q("grid_rows", grid.shape[0], "d")
    q("grid_columns", grid.shape[1], "d")
    q("grid", grid.ravel(), ".2f")
    q("grid_row_mean", grid[0].mean(), ".2f")
    q("grid_row_spread", grid[0].std(), ".2f")
    q("grid_column_mean", grid[:, 0].mean(), ".2f")
    q("grid_column_spread", grid[:, 0].std(), ".2f")
    section.claim(
        f"the mean along example A and the mean down feature a differ (by over {GRID_DIGIT:g})",
        abs(grid[0].mean() - grid[:, 0].mean()) > GRID_DIGIT,
        f"row mean {grid[0].mean():.4f}, column mean {grid[:, 0].mean():.4f}",
        key="row-and-column-means-differ",
    )
    return {"grid": grid, "largest": largest}


def draw(section, results):
    t = section.text
    texts = section.texts
    follow = f"element {t('followed_position')}"

    def layer_norm_steps_figure():
        fig, ax = new_cell_figure(8.4, 3.7)
        draw_cell_rows(
            ax,
            [
                ("input x", texts("x")),
                (f"x − mean ({t('ln_mean')})", texts("ln_deviations")),
                ("squared", texts("ln_squares")),
                (f"÷ spread ({t('ln_spread')})", texts("ln_normalised")),
                ("× scale γ", texts("gamma")),
                ("+ shift β", texts("beta")),
                ("output", texts("ln_output")),
            ],
            fills=[PALETTE["light"]] * 4 + ["#F6EEDC"] * 2 + ["#DCEFE6"],
            highlight_column=FOLLOWED,
            label_width=2.7,
            footnote=f"variance {t('ln_variance')}, spread √(variance + ε) = {t('ln_spread')}",
        )
        ax.set_title(
            f"Layer norm, step by step: {follow} goes {t('x', FOLLOWED)} → "
            f"{t('ln_deviations', FOLLOWED)} → {t('ln_normalised', FOLLOWED)} → "
            f"{t('ln_output', FOLLOWED)}",
            loc="left",
        )
        return fig

    section.save_figure(layer_norm_steps_figure, "layer_norm_steps")

    def rms_norm_steps_figure():
        fig, ax = new_cell_figure(8.4, 2.9)
        draw_cell_rows(
            ax,
            [
                ("input x", texts("x")),
                ("squared", texts("rms_squares")),
                (f"÷ RMS ({t('rms')})", texts("rms_normalised")),
                ("× scale γ", texts("gamma")),
                ("output", texts("rms_output")),
            ],
            fills=[PALETTE["light"]] * 3 + ["#F6EEDC", "#DCEFE6"],
            highlight_column=FOLLOWED,
            label_width=2.7,
            footnote=f"mean of squares {t('rms_mean_square')}, RMS √(mean of squares + ε) = {t('rms')}",
        )
        ax.set_title(f"RMS norm: no average removed, so the mean stays at {t('rms_normalised_mean')}", loc="left")
        return fig

    section.save_figure(rms_norm_steps_figure, "rms_norm_steps")

    def layer_vs_rms_figure():
        fig, ax = new_cell_figure(8.4, 2.0)
        largest = results["largest"]
        diff_fill = [PALETTE["light"]] * 6
        diff_fill[largest] = "#F8D9C9"
        draw_cell_rows(
            ax,
            [
                ("layer norm output", texts("ln_output")),
                ("RMS norm output", texts("rms_output")),
                ("layer − RMS", texts("ln_minus_rms")),
            ],
            fills=[PALETTE["light"], PALETTE["light"], diff_fill],
            label_width=2.7,
        )
        ax.set_title(
            f"Same input, different outputs: the largest gap is "
            f"{t('largest_difference')}, at element {t('largest_difference_position')}",
            loc="left",
        )
        return fig

    section.save_figure(layer_vs_rms_figure, "layer_vs_rms")

    def batch_grid_directions_figure():
        fig, ax = new_cell_figure(8.4, 3.1)
        grid_texts = texts("grid")
        n_rows, n_cols = results["grid"].shape
        rows = [(f"example {'ABCD'[i]}", grid_texts[i * n_cols : (i + 1) * n_cols]) for i in range(n_rows)]
        fills = [[PALETTE["light"]] * n_cols for _ in range(n_rows)]
        for j in range(n_cols):
            fills[0][j] = "#D6E6F4"  # the row layer norm averages
        for i in range(n_rows):
            fills[i][0] = "#F6E3C2"  # the column batch norm averages
        fills[0][0] = "#E3D3E8"
        draw_cell_rows(
            ax,
            rows,
            fills=fills,
            label_width=1.6,
            column_labels=[("" if on_phone() else "feature ") + "abcdef"[j] for j in range(n_cols)],
        )
        layer_note = f"layer norm: along example A, mean {t('grid_row_mean')}, spread {t('grid_row_spread')}"
        batch_note = f"batch norm: down feature a, mean {t('grid_column_mean')}, spread {t('grid_column_spread')}"
        if on_phone():  # both notes under the grid, a line each where they fit
            y = ax.get_ylim()[0] + 0.1
            for note, colour in ((layer_note, PALETTE["blue"]), (batch_note, "#A06A00")):
                note = wrap_to_width(note, 4.0, 10.6)
                ax.text(0.04, y, note, ha="left", va="top", fontsize=9, color=colour)
                y += 0.7 * (note.count("\n") + 1)
            ax.set_ylim(y, ax.get_ylim()[1])
            fit_cell_figure(ax)
        else:
            ax.text(
                n_cols + 0.15,
                0.4,
                layer_note.replace(", mean", "\nmean"),
                ha="left",
                va="center",
                fontsize=9,
                color=PALETTE["blue"],
            )
            ax.text(0.0, n_rows + 0.15, batch_note, ha="left", va="top", fontsize=9, color="#A06A00")
            ax.set_xlim(-1.6, n_cols + 3.0)
            ax.set_ylim(n_rows + 0.7, -0.6)
        ax.set_title("Two directions of averaging: layer norm uses one example, batch norm one feature", loc="left")
        return fig

    section.save_figure(batch_grid_directions_figure, "batch_grid_directions")


if __name__ == "__main__":
    main(__name__)
