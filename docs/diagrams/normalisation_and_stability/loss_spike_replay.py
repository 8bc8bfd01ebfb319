"""Section 6, "Loss spikes (replay), and what to do about one": a quadratic
stand-in for a training run, replayed with one bad batch three ways.

A 24-dimensional quadratic (curvatures geometric from 0.02 to 2.0, start
w0 from rng(5)) is trained for 2,600 steps with noisy gradients (a fresh
rng(5) per run) by torch's Adam in float64 (torch.optim.adam.adam, the
function torch.optim.Adam steps with). At step 1,400 one bad batch adds a
huge gradient. Three variants: nothing done; gradients clipped to
norm 2.0 with torch.nn.utils.clip_grad_norm_; the bad batch skipped. A
hand-written numpy Adam with hand-written clipping replays all three and
must agree with torch to 1e-9. Prints the loss, the gradient norm, Adam's
divisor and the update size around the bad step, the final losses, and the
clip threshold against the usual gradient norm. Draws four figures.
"""

from __future__ import annotations


import pagekit.section  # noqa: F401  (first: it pins the numeric environment before numpy loads)
import numpy as np

from matplotlib.ticker import FuncFormatter

from pagekit.section import PALETTE, format_number, import_torch, log_axis, main, new_figure, nice_limits, on_phone

# Step numbers on an axis in the house style: 1,400, not 1400.
STEP_TICKS = FuncFormatter(lambda v, _: format_number(v, ",.0f"))

DIM = 24
CURVATURE_LOW, CURVATURE_HIGH = 0.02, 2.0
W0_SPREAD = 1.2
SEED = 5  # rng(5) draws w0; a fresh rng(5) per run draws the gradient noise
LOSS_FLOOR = 1.60
STEPS = 2600
NOISE_SPREAD = 0.03
BAD_STEP = 1400  # 1-based
BAD_SCALE = 200.0
LR, BETA1, BETA2, EPS = 0.01, 0.9, 0.999, 1e-8
CLIP_NORM = 2.0
CLIP_TINY = 1e-6  # torch's clip coefficient: max_norm / (norm + 1e-6)
JUST_BEFORE_STEP = 1396
USUAL_FIRST, USUAL_LAST = 1101, 1399  # "usual": medians over these steps (1-based)
LATER_GAP = 500  # the divisor is read again this many steps after the bad step
DIVISOR_CLAIM_FACTOR = 10
FINAL_TOLERANCE = 0.001
# The other bounds the claims test, each formatted into its claim's words.
BAD_STEP_SHARE_CEILING = 0.1  # the bad step's own share of the rise to the peak, below
MOVED_FACTOR = 3  # "several times": how far the weights have moved by the peak, over the bad step's move
EARLY_STEPS = 50  # the steps at the start whose gradient norms the spike comparison leaves out
BAD_NORM_SHARE = 0.01  # every later gradient norm stays below this share of the bad step's
LAST_STEPS = 100  # the gradient norm at the end: a median over this many steps
RARE_BELOW_USUAL = 0.01  # the share of the steps after the bad one with a norm below the usual level, below
DIVISOR_JUMP_FACTOR = 10  # the divisor on the bad step over the step before, above
UPDATE_RATIO_DIVISOR = 100  # the update ratio stays below the gradient ratio over this
CLIPPED_BUMP_SHARE = 0.1  # clipping's bump over the do-nothing rise, below
SKIPPED_RISE_SHARE = 0.01  # the skipped run's largest rise over the do-nothing rise, below
CLIPPED_DIVISOR_RISE = 0.1  # the clipped run's relative divisor rise on the bad step, below
BAD_GRADIENT_FLOOR = 1000  # "thousands of times": the bad step's gradient norm over the usual one, above
THRESHOLD_BELOW_BAD = 100  # "far below the bad one": the bad step's gradient norm over the clip threshold, above
THRESHOLD_OVER_USUAL = 10  # "far above ordinary steps": the clip threshold over the usual gradient norm, above
FRESH_START_FACTOR = 10  # "a fresh start has larger gradients": the first step's norm over the usual one, above
# PaLM's rewind-and-skip (Chowdhery and colleagues, 2022, section 5.1): numbers
# from the cited paper, not computed here; printed so the page check matches them.
PALM_SPIKES = 20  # the largest model's loss spiked about this many times, clipping on
PALM_REWIND_STEPS = 100  # restarted about this many steps before the spike began
PALM_SKIPPED_BATCHES = (200, 500)  # and skipped about this many batches
ZOOM_FIRST, ZOOM_LAST = 1380, 1500  # the steps the three-variant zoom shows

VARIANTS = ("nothing done", "clipped", "skipped")  # index 0, 1, 2
PLAIN, CLIPPED, SKIPPED = range(3)


# ---------------------------------------------------------------------------
# The experiment.


def curvatures() -> np.ndarray:
    return np.geomspace(CURVATURE_LOW, CURVATURE_HIGH, DIM)


def loss_of(w: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """1.60 + 0.5 * sum(lam * w^2) over the last axis."""
    return LOSS_FLOOR + 0.5 * np.sum(lam * w * w, axis=-1)


def draw_noise(section, skipped: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """One run's gradient noise from a fresh rng(5), taken in the run's order:
    each step's Normal(0, 0.03) noise, and at the bad step (unless the run
    skips it) Normal(0, 1) * 200 right after that step's noise. Drawn as a
    few arrays; numpy's generator gives the same values as step-by-step
    draws (checked in compute)."""
    rng = section.rng(SEED)
    before = rng.normal(0.0, NOISE_SPREAD, size=(BAD_STEP, DIM))
    bad = None if skipped else rng.normal(0.0, 1.0, size=DIM) * BAD_SCALE
    after = rng.normal(0.0, NOISE_SPREAD, size=(STEPS - BAD_STEP, DIM))
    return np.vstack([before, after]), bad


def draw_noise_step_by_step(section, skipped: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The same draws one step at a time, as the spec words them."""
    rng = section.rng(SEED)
    noise, bad = np.empty((STEPS, DIM)), None
    for step in range(1, STEPS + 1):
        noise[step - 1] = rng.normal(0.0, NOISE_SPREAD, size=DIM)
        if step == BAD_STEP and not skipped:
            bad = rng.normal(0.0, 1.0, size=DIM) * BAD_SCALE
    return noise, bad


def variant_noise(noise_kept: np.ndarray, bad: np.ndarray, noise_skipped: np.ndarray) -> np.ndarray:
    """The noise term of each variant's gradient, shape (steps, 3, dim): the
    do-nothing and clipped runs share one stream (bad batch included); the
    skipped run has its own stream, without the bad-batch draw."""
    noise = np.stack([noise_kept, noise_kept, noise_skipped], axis=1)
    noise[BAD_STEP - 1, PLAIN] += bad
    noise[BAD_STEP - 1, CLIPPED] += bad
    return noise


def replay_torch(lam: np.ndarray, w0: np.ndarray, noise: np.ndarray) -> dict[str, np.ndarray]:
    """The three runs with torch's Adam and clip_grad_norm_ in float64.

    One Adam holds the three runs as three parameters (Adam is elementwise and
    keeps its state per parameter, so this is three independent optimisers
    sharing one call); clip_grad_norm_ is applied to the clipped run's
    parameter alone. The parameters and their gradients are row views of one
    (3, dim) tensor, so each step's gradient is one operation. Records the
    weights after every step, the raw (unclipped) gradients, and the
    optimiser's exp_avg_sq and step after every step.

    Adam is ``torch.optim.adam.adam``, the function ``torch.optim.Adam.step``
    calls, given the state tensors ``torch.optim.Adam`` would create (zero
    moments, a float32 step count for the fused kernel): the same arithmetic
    without the Optimizer object, whose first method call imports torch's
    compiler (about a second of CPU, more than the replay itself).
    """
    torch = import_torch()
    f64 = torch.float64
    lam_t = torch.tensor(lam, dtype=f64)
    noise_t = torch.tensor(noise, dtype=f64)
    weights = torch.tensor(np.tile(w0, (3, 1)), dtype=f64)
    grads = torch.zeros((3, DIM), dtype=f64)
    from torch.optim.adam import adam

    params = [weights[i] for i in range(3)]
    for i, p in enumerate(params):
        p.grad = grads[i]
    # The optimiser state, as torch.optim.Adam(..., fused=True) makes it.
    exp_avg = [torch.zeros_like(p) for p in params]
    exp_avg_sq = [torch.zeros_like(p) for p in params]
    steps = [torch.zeros((), dtype=torch.float32) for _ in params]
    clip = torch.nn.utils.clip_grad_norm_
    clipped = [params[CLIPPED]]

    w_hist = torch.empty((STEPS + 1, 3, DIM), dtype=f64)
    g_hist = torch.empty((STEPS, 3, DIM), dtype=f64)
    v_hist = torch.empty((STEPS, 3, DIM), dtype=f64)
    step_hist = torch.empty((STEPS, 3), dtype=torch.float32)
    w_hist[0] = weights
    with torch.no_grad():
        for t in range(STEPS):
            torch.addcmul(noise_t[t], lam_t, weights, out=grads)  # lam * w + noise
            g_hist[t] = grads
            clip(clipped, CLIP_NORM, foreach=False)  # one tensor: the plain loop is quicker
            # fused=True: torch's own single-kernel Adam for CPU, the same
            # algorithm as the default path (agreement with the hand-written
            # Adam is checked).
            adam(
                params,
                [p.grad for p in params],
                exp_avg,
                exp_avg_sq,
                [],
                steps,
                fused=True,
                lr=LR,
                beta1=BETA1,
                beta2=BETA2,
                eps=EPS,
                weight_decay=0.0,
                amsgrad=False,
                maximize=False,
            )
            w_hist[t + 1] = weights
            torch.stack(exp_avg_sq, out=v_hist[t])
            torch.stack(steps, out=step_hist[t])
    return {
        "w": w_hist.numpy(),
        "grad": g_hist.numpy(),
        "exp_avg_sq": v_hist.numpy(),
        "step": step_hist.numpy().astype(float),
    }


def replay_by_hand(lam: np.ndarray, w0: np.ndarray, noise: np.ndarray) -> dict[str, np.ndarray]:
    """The same three runs with a plain Adam and clipping written out in
    numpy, vectorised over the variants (clipping only on the clipped run,
    coefficient max_norm / (norm + 1e-6) as torch documents, capped at 1)."""
    w = np.tile(w0, (3, 1))
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    w_hist = np.empty((STEPS + 1, 3, DIM))
    v_hist = np.empty((STEPS, 3, DIM))
    w_hist[0] = w
    clip_row = np.array([0.0, 1.0, 0.0])[:, None]  # 1 where clipping applies
    for t in range(1, STEPS + 1):
        g = lam * w + noise[t - 1]
        norm = np.sqrt(np.sum(g * g, axis=1, keepdims=True))
        coef = np.minimum(CLIP_NORM / (norm + CLIP_TINY), 1.0)
        g = g * (1.0 + clip_row * (coef - 1.0))
        m = BETA1 * m + (1.0 - BETA1) * g
        v = BETA2 * v + (1.0 - BETA2) * g * g
        m_hat = m / (1.0 - BETA1**t)
        v_hat = v / (1.0 - BETA2**t)
        w = w - LR * m_hat / (np.sqrt(v_hat) + EPS)
        w_hist[t] = w
        v_hist[t - 1] = v
    return {"w": w_hist, "exp_avg_sq": v_hist}


def adam_divisor(exp_avg_sq: np.ndarray, step: np.ndarray) -> np.ndarray:
    """RMS over coordinates of sqrt(v_hat) + eps, v_hat = exp_avg_sq / (1 - b2^step)."""
    v_hat = exp_avg_sq / (1.0 - BETA2 ** step[..., None])
    return np.sqrt(np.mean((np.sqrt(v_hat) + EPS) ** 2, axis=-1))


# ---------------------------------------------------------------------------


def compute(section):
    q = section.quote
    q("palm_spikes", PALM_SPIKES, "d", unit="times")
    q("palm_rewind_steps", PALM_REWIND_STEPS, "d", unit="steps")
    q("palm_skipped_batches", PALM_SKIPPED_BATCHES, "d")
    q("dim", DIM, "d")
    q("curvature_low", CURVATURE_LOW, ".2f")
    q("curvature_high", CURVATURE_HIGH, ".1f")
    q("w0_spread", W0_SPREAD, ".1f")
    q("seed", SEED, "d")
    q("loss_floor", LOSS_FLOOR, ".2f")
    q("steps", STEPS, ",d", unit="steps")
    q("noise_spread", NOISE_SPREAD, ".2f")
    q("bad_step", BAD_STEP, ",d")
    q("bad_scale", BAD_SCALE, ".0f")
    q("lr", LR, ".2f")
    q("beta1", BETA1, ".1f")
    q("beta2", BETA2, ".3f")
    q("eps", EPS, ".0x")
    q("clip_norm", CLIP_NORM, ".1f")
    q("clip_tiny", CLIP_TINY, ".0x")

    lam = curvatures()
    w0 = section.rng(SEED).normal(0.0, W0_SPREAD, size=DIM)
    noise_kept, bad = draw_noise(section, skipped=False)
    noise_skipped, _ = draw_noise(section, skipped=True)
    slow_kept, slow_bad = draw_noise_step_by_step(section, skipped=False)
    slow_skipped, _ = draw_noise_step_by_step(section, skipped=True)
    section.claim(
        "the noise drawn as arrays equals the step-by-step draws",
        np.array_equal(noise_kept, slow_kept)
        and np.array_equal(bad, slow_bad)
        and np.array_equal(noise_skipped, slow_skipped),
    )
    noise = variant_noise(noise_kept, bad, noise_skipped)

    run = replay_torch(lam, w0, noise)
    hand = replay_by_hand(lam, w0, noise)
    # Relative agreement on the trajectory; an absolute floor far below any
    # weight's size covers coordinates that pass through zero.
    section.agree(
        "torch Adam and the hand-written Adam (weights, all three runs)", run["w"], hand["w"], rtol=1e-9, atol=1e-12
    )
    section.agree(
        "torch and hand-written Adam (second moments)", run["exp_avg_sq"], hand["exp_avg_sq"], rtol=1e-9, atol=1e-15
    )
    section.claim(
        f"the optimiser's step count is the step number on every one of the {STEPS:,} steps "
        f"of the {len(VARIANTS)} runs",
        np.array_equal(run["step"], np.tile(np.arange(1.0, STEPS + 1)[:, None], (1, len(VARIANTS)))),
    )

    w = run["w"]
    losses = loss_of(w[1:], lam)  # (steps, 3): the loss recorded after each update
    grad_norm = np.linalg.norm(run["grad"], axis=-1)  # raw gradient, before clipping
    divisor = adam_divisor(run["exp_avg_sq"], run["step"])
    update = np.linalg.norm(np.diff(w, axis=0), axis=-1)
    section.agree("hand-written losses", losses, loss_of(hand["w"][1:], lam), rtol=1e-9)
    section.agree(
        "hand-written divisors",
        divisor,
        adam_divisor(hand["exp_avg_sq"], np.arange(1.0, STEPS + 1)[:, None]),
        rtol=1e-9,
    )

    def at(step):  # 1-based step -> row
        return step - 1

    usual = slice(at(USUAL_FIRST), at(USUAL_LAST) + 1)
    bad_row = at(BAD_STEP)
    loss0, gn0, div0, upd0 = losses[:, PLAIN], grad_norm[:, PLAIN], divisor[:, PLAIN], update[:, PLAIN]

    # The loss: before, on the bad step, the peak, the end.
    q("just_before_step", JUST_BEFORE_STEP, ",d")
    loss_before = loss0[at(JUST_BEFORE_STEP)]
    q("loss_just_before", loss_before, ".4f")
    q("loss_before_bad_step", loss0[bad_row - 1], ".4f")
    # "Just before" is a reference level, not a special step: the loss still
    # wobbles from step to step, so the level over the last steps before the
    # bad one is quoted with it.
    level = loss0[at(ZOOM_FIRST) : bad_row]
    q("level_first_step", ZOOM_FIRST, ",d")
    q("level_last_step", BAD_STEP - 1, ",d")
    q("level_range", [level.min(), level.max()], ".4f")
    section.claim(
        "the just-before loss lies within the level of the last steps before the bad one",
        bool(level.min() <= loss_before <= level.max()),
    )
    section.claim(
        "on the page's run the just-before loss is the highest of the level of the last steps before the bad one",
        bool(loss_before == level.max()),
        every_seed=False,
        key="on-this-run-the-highest",
    )
    q("loss_on_bad_step", loss0[bad_row], ".4f")
    peak_row = bad_row + int(np.argmax(loss0[bad_row:]))
    peak_loss = loss0[peak_row]
    q("peak_loss", peak_loss, ".4f")
    q("peak_step", peak_row + 1, ",d")
    q("peak_delay", peak_row - bad_row, "d", unit="steps")
    section.claim("the loss peaks after the bad step", peak_row > bad_row)
    own_rise = loss0[bad_row] - loss0[bad_row - 1]
    total_rise = peak_loss - loss0[bad_row - 1]
    q("bad_step_share_of_rise", own_rise / total_rise, ".1%")
    section.claim(
        f"the bad step itself makes under {BAD_STEP_SHARE_CEILING:.0%} of the rise to the peak",
        0 < own_rise < BAD_STEP_SHARE_CEILING * total_rise,
    )
    section.claim(
        "the loss rises on every step from the bad step to the peak",
        bool(np.all(np.diff(loss0[bad_row - 1 : peak_row + 1]) > 0)),
    )
    # Momentum carries the bad gradient on: weights keep moving the same way.
    moved_on_bad = np.linalg.norm(w[bad_row + 1, PLAIN] - w[bad_row, PLAIN])
    moved_to_peak = np.linalg.norm(w[peak_row + 1, PLAIN] - w[bad_row, PLAIN])
    q("moved_by_peak_ratio", moved_to_peak / moved_on_bad, ".1f", unit="times the length")
    section.claim(
        f"by the peak the weights have moved several times (over {MOVED_FACTOR}) as far as on the bad step",
        moved_to_peak > MOVED_FACTOR * moved_on_bad,
    )

    # Gradient norm.
    q("usual_first", USUAL_FIRST, ",d")
    q("usual_last", USUAL_LAST, ",d")
    gn_usual = float(np.median(gn0[usual]))
    q("grad_norm_usual", gn_usual, ".3f")
    after_bad = gn0[bad_row + 1 :]  # the steps after the bad one, to the end of the run
    q("steps_after_bad", len(after_bad), ",d", unit="steps")
    q("steps_below_usual_after_bad", int(np.sum(after_bad < gn_usual)), "d")
    q("grad_norm_bad", gn0[bad_row], ",.0f")
    grad_ratio = gn0[bad_row] / gn_usual
    q("grad_norm_ratio", grad_ratio, ",.0f", unit=("times the usual", "times larger"))
    section.claim(
        "the gradient norm on the bad step is the largest of the run",
        int(np.argmax(gn0)) == bad_row,
        key="bad-step-gradient-norm-largest",
    )
    section.claim(
        f"the bad step's gradient norm is over {BAD_GRADIENT_FLOOR:,} times the usual one",
        grad_ratio > BAD_GRADIENT_FLOOR,
        f"{grad_ratio:,.0f} times",
        key="bad-gradient-thousands-of-times-the-usual",
    )
    section.claim(
        f"no step after the first {EARLY_STEPS} has a gradient norm within {BAD_NORM_SHARE:.0%} of the bad step's",
        bool(np.all(np.delete(gn0, bad_row)[EARLY_STEPS:] < BAD_NORM_SHARE * gn0[bad_row])),
    )

    section.claim(
        "after the spike the gradient norm stays above its usual level to the end "
        f"(median of the last {LAST_STEPS} steps)",
        float(np.median(gn0[-LAST_STEPS:])) > gn_usual,
    )
    section.claim(
        f"after the bad step, fewer than {RARE_BELOW_USUAL:.0%} of the steps have a gradient norm below its usual level",
        int(np.sum(after_bad < gn_usual)) < RARE_BELOW_USUAL * len(after_bad),
        f"{int(np.sum(after_bad < gn_usual))} of {len(after_bad)}",
        key="norm-stays-above-after-the-spike",
    )

    # Adam's divisor.
    div_usual = float(np.median(div0[usual]))
    q("later_gap", LATER_GAP, "d", unit="steps")
    q("later_step", BAD_STEP + LATER_GAP, ",d")
    q("divisor_usual", div_usual, ".4f")
    q("divisor_bad", div0[bad_row], ".2f")
    q("divisor_later", div0[bad_row + LATER_GAP], ".2f")
    q("divisor_end", div0[-1], ".2f")
    q("divisor_bad_ratio", div0[bad_row] / div_usual, ",.0f", unit="times its usual")
    later_ratio = div0[bad_row + LATER_GAP] / div_usual
    q("divisor_later_ratio", later_ratio, ",.0f", unit="times the usual")
    q("divisor_end_ratio", div0[-1] / div_usual, ",.0f", unit="times")
    section.claim(
        f"the divisor {LATER_GAP} steps after the bad step is still over {DIVISOR_CLAIM_FACTOR}x its usual value",
        later_ratio > DIVISOR_CLAIM_FACTOR,
        key="divisor-still-high-later",
    )
    section.claim(
        f"the divisor jumps on the bad step itself (over {DIVISOR_JUMP_FACTOR}x the step before)",
        div0[bad_row] > DIVISOR_JUMP_FACTOR * div0[bad_row - 1],
        key="divisor-jumps-on-the-bad-step",
    )
    section.claim(
        f"the divisor only falls after the bad step, never back to its usual value "
        f"(over {DIVISOR_CLAIM_FACTOR}x it at the end)",
        bool(np.all(np.diff(div0[bad_row:]) < 0)) and div0[-1] > DIVISOR_CLAIM_FACTOR * div_usual,
        key="divisor-only-falls",
    )

    # The update (weight change) on the bad step.
    upd_usual = float(np.median(upd0[usual]))
    q("update_usual", upd_usual, ".4f")
    q("update_bad", upd0[bad_row], ".3f")
    update_ratio = upd0[bad_row] / upd_usual
    q("update_ratio", update_ratio, ".0f", unit="times larger")
    section.claim(
        f"the update ratio is far below the gradient ratio (under 1/{UPDATE_RATIO_DIVISOR} of it)",
        update_ratio < grad_ratio / UPDATE_RATIO_DIVISOR,
        key="update-grows-far-less-than-gradient",
    )

    # The three variants.
    final = losses[-1]
    q(
        "final_loss",
        final,
        ".4f",  # nothing done, clipped, skipped
        runs=(("nothing done", "doing nothing", "do-nothing"), ("clipped", "clipping"), ("skipped", "skipping")),
    )
    q("final_tolerance", FINAL_TOLERANCE, ".3f")
    section.claim(
        f"the clipped and skipped runs end within {FINAL_TOLERANCE:g} of each other",
        abs(final[CLIPPED] - final[SKIPPED]) < FINAL_TOLERANCE,
    )
    section.claim(
        "the clipped and skipped runs end below the do-nothing run",
        final[CLIPPED] < final[PLAIN] and final[SKIPPED] < final[PLAIN],
        key="the-clipped-and-skipped-runs",
    )
    section.claim(
        "the do-nothing run ends above its loss just before the bad step",
        final[PLAIN] > loss_before,
        key="still-above-where-it-was",
    )
    q("final_excess", final[PLAIN] - final[SKIPPED], ".4f", run="skipped")  # the gap to the skipped run
    clipped_peak_row = bad_row + int(np.argmax(losses[bad_row:, CLIPPED]))
    clipped_peak = float(losses[clipped_peak_row, CLIPPED])
    q("clipped_peak_loss", clipped_peak, ".4f")
    section.claim(
        f"clipping leaves a bump under {CLIPPED_BUMP_SHARE:.0%} of the do-nothing rise",
        clipped_peak - losses[bad_row - 1, CLIPPED] < CLIPPED_BUMP_SHARE * total_rise,
        key="clipping-leaves-a-bump",
    )
    skipped_rise = float(np.max(losses[bad_row:, SKIPPED])) - losses[bad_row - 1, SKIPPED]
    section.claim(
        "the skipped run has no spike: its loss from the bad step on never rises "
        f"above its step-{BAD_STEP - 1:,} value by {SKIPPED_RISE_SHARE:.0%} of the do-nothing rise",
        skipped_rise < SKIPPED_RISE_SHARE * total_rise,
    )

    # The clip threshold against the log of gradient norms.
    q("clip_multiple", CLIP_NORM / gn_usual, ".1f", unit="times the usual")
    # The factor is the clipped run's own: its gradient on the bad step, as
    # clip_grad_norm_ saw it, over what it scaled it to.
    coef = CLIP_NORM / (grad_norm[bad_row, CLIPPED] + CLIP_TINY)
    q("clip_shrink", 1.0 / coef, ",.0f")
    clip_active = grad_norm[:, CLIPPED] > CLIP_NORM
    early = clip_active[:bad_row]
    q("clip_early_steps", int(early.sum()), ",d", unit="steps")
    q("grad_norm_first", gn0[0], ".2f")
    early_steps = np.nonzero(early)[0] + 1
    q("clip_last_early_step", int(early_steps[-1]) if early_steps.size else 0, ",d")
    section.claim(
        f"apart from the bad step, clipping acts only before the usual window (never from step {USUAL_FIRST:,} on)",
        bool(clip_active[bad_row])
        and not clip_active[at(USUAL_FIRST) : bad_row].any()
        and not clip_active[bad_row + 1 :].any(),
        key="clipping-acts-only-before-the-usual-window",
    )
    section.claim(
        f"the clip threshold {CLIP_NORM:g} is below 1/{THRESHOLD_BELOW_BAD} of the bad step's gradient norm",
        CLIP_NORM * THRESHOLD_BELOW_BAD < gn0[bad_row],
        f"threshold {CLIP_NORM:g}, bad step {gn0[bad_row]:,.0f}",
        key="threshold-far-below-the-bad-gradient",
    )
    section.claim(
        f"the clip threshold {CLIP_NORM:g} is over {THRESHOLD_OVER_USUAL} times the usual gradient norm",
        CLIP_NORM > THRESHOLD_OVER_USUAL * gn_usual,
        f"{CLIP_NORM / gn_usual:.3g} times",
        key="threshold-far-above-ordinary-steps",
    )
    section.claim(
        f"the first step's gradient norm is above the clip threshold {CLIP_NORM:g} and over {FRESH_START_FACTOR} times "
        "the usual one",
        gn0[0] > CLIP_NORM and gn0[0] > FRESH_START_FACTOR * gn_usual,
        f"first step {gn0[0]:.3g}, usual {gn_usual:.3g}",
        key="a-fresh-start-has-larger-gradients",
    )
    clipped_jump = divisor[bad_row, CLIPPED] / divisor[bad_row - 1, CLIPPED]
    q("clipped_divisor_rise", clipped_jump - 1, ".1%")
    section.claim(
        f"with clipping the divisor rises by under {CLIPPED_DIVISOR_RISE:.0%} on the bad step",
        clipped_jump - 1 < CLIPPED_DIVISOR_RISE,
    )
    section.claim(
        f"the clipped run is within {FINAL_TOLERANCE:g} of the do-nothing run just before the bad step",
        abs(losses[bad_row - 1, CLIPPED] - losses[bad_row - 1, PLAIN]) < FINAL_TOLERANCE,
    )

    q("zoom_first", ZOOM_FIRST, ",d")
    q("zoom_last", ZOOM_LAST, ",d")
    return {
        "losses": losses,
        "grad_norm": gn0,
        "divisor": div0,
        "div_usual": div_usual,
        "gn_usual": gn_usual,
        "peak_row": peak_row,
        "bad_row": bad_row,
        "clipped_peak_row": clipped_peak_row,
    }


# ---------------------------------------------------------------------------


def draw(section, results):
    t = section.text
    steps = np.arange(1, STEPS + 1)
    losses = results["losses"]
    bad_row, peak_row = results["bad_row"], results["peak_row"]
    colours = {PLAIN: PALETTE["red"], CLIPPED: PALETTE["blue"], SKIPPED: PALETTE["green"]}
    grey = PALETTE["grey"]

    # 1. The loss curve (above its floor, log y).
    def loss_curve_figure():
        fig = new_figure(8.4, 3.6, margins=(0.69, 0.46, 0.05, 0.44))
        ax = fig.add_subplot()
        excess = losses[:, PLAIN] - LOSS_FLOOR
        ax.plot(steps, excess, color=colours[PLAIN], lw=1.4)
        log_axis(ax, "y", labels="power")
        ax.axvline(BAD_STEP, color=grey, ls=":", lw=1.2)
        ax.text(
            BAD_STEP - 25,
            excess.max(),
            f"bad batch, step {t('bad_step')}",
            ha="right",
            va="top",
            fontsize=9,
            color=grey,
        )
        ax.plot([steps[peak_row]], [excess[peak_row]], "o", color=PALETTE["ink"], ms=5)
        ax.annotate(
            f"peak {t('peak_loss')} at step {t('peak_step')}",
            (steps[peak_row], excess[peak_row]),
            xytext=(12, 6),
            textcoords="offset points",
            fontsize=9,
            va="bottom",
        )
        before = losses[JUST_BEFORE_STEP - 1, PLAIN] - LOSS_FLOOR
        ax.axhline(before, color=PALETTE["green"], ls="--", lw=1.0)
        ax.text(
            STEPS,
            before * 0.85,
            f"just before (step {t('just_before_step')}): {t('loss_just_before')}",
            ha="right",
            va="top",
            fontsize=9,
            color=PALETTE["green"],
        )
        ax.axhline(excess[-1], color=colours[PLAIN], ls="--", lw=1.0)
        ax.text(
            STEPS,
            excess[-1] * 0.85,
            f"end: {t('final_loss', PLAIN)}",
            ha="right",
            va="top",
            fontsize=9,
            color=colours[PLAIN],
        )
        ax.set_xlim(0, STEPS + 20)
        ax.set_ylim(*nice_limits([excess.min() * 0.6, excess.max() * 1.6], log=True, pad=0.0))
        ax.set_xlabel("step")
        ax.xaxis.set_major_formatter(STEP_TICKS)
        ax.set_ylabel(f"loss − {t('loss_floor')} (log scale)")
        ax.set_title(
            f"One bad batch at step {t('bad_step')}: the loss peaks {t('peak_delay')} steps "
            f"later, at {t('peak_loss')},\nand ends at {t('final_loss', PLAIN)}, above the "
            f"{t('loss_just_before')} it had reached before",
            loc="left",
        )
        return fig

    section.save_figure(loss_curve_figure, "loss_curve")

    # 2. The gradient norm (log y) with the clip threshold.
    def grad_norm_figure():
        fig = new_figure(8.4, 3.4, margins=(0.65, 0.46, 0.05, 0.24))
        ax = fig.add_subplot()
        gn = results["grad_norm"]
        ax.plot(steps, gn, color=PALETTE["blue"], lw=0.9)
        log_axis(ax, "y", labels="power")
        ax.axhline(CLIP_NORM, color=PALETTE["orange"], ls="--", lw=1.3)
        ax.text(
            STEPS,
            CLIP_NORM * 1.12,
            f"clip threshold {t('clip_norm')}",
            ha="right",
            va="bottom",
            fontsize=9,
            color="#A06A00",
        )
        ax.axhline(results["gn_usual"], color=grey, ls=":", lw=1.2)
        ax.text(
            STEPS,
            results["gn_usual"] * 0.8,
            f"usual (median, steps {t('usual_first')}–{t('usual_last')}): {t('grad_norm_usual')}",
            ha="right",
            va="top",
            fontsize=9,
            color=grey,
        )
        ax.annotate(
            f"step {t('bad_step')}: {t('grad_norm_bad')}",
            (BAD_STEP, gn[bad_row]),
            xytext=(10, -4),
            textcoords="offset points",
            fontsize=9,
            va="top",
        )
        ax.set_xlim(0, STEPS + 20)
        ax.set_ylim(*nice_limits([gn.min() * 0.5, gn.max() * 2.0], log=True, pad=0.0))
        ax.set_xlabel("step")
        ax.xaxis.set_major_formatter(STEP_TICKS)
        ax.set_ylabel("gradient norm (log scale)")
        ax.set_title(
            f"The gradient norm flags the exact step: {t('grad_norm_ratio')} times its usual size on step {t('bad_step')}",
            loc="left",
        )
        return fig

    section.save_figure(grad_norm_figure, "grad_norm")

    # 3. Adam's divisor over time.
    def adam_divisor_figure():
        fig = new_figure(8.4, 3.4, margins=(0.66, 0.46, 0.05, 0.24))
        ax = fig.add_subplot()
        div = results["divisor"]
        ax.plot(steps, div, color=PALETTE["purple"], lw=1.4)
        log_axis(ax, "y", labels="power")
        ax.axhline(results["div_usual"], color=grey, ls=":", lw=1.2)
        ax.text(
            30,
            results["div_usual"] * 0.8,
            f"usual (median, steps {t('usual_first')}–{t('usual_last')}): {t('divisor_usual')}",
            va="top",
            fontsize=9,
            color=grey,
        )
        later = bad_row + LATER_GAP
        marks = [
            (bad_row, f"bad step: {t('divisor_bad')} (×{t('divisor_bad_ratio')})", "right"),
            (later, f"{t('later_gap')} steps later: {t('divisor_later')} (×{t('divisor_later_ratio')})", "below"),
            (STEPS - 1, f"end: {t('divisor_end')} (×{t('divisor_end_ratio')})", "right"),
        ]
        if on_phone():  # the narrower curve: the later label above its dot, the end's under the line
            marks[1:] = [(later, marks[1][1], "above"), (STEPS - 1, marks[2][1], "under")]
        for row, label, side in marks:
            ax.plot([steps[row]], [div[row]], "o", color=PALETTE["ink"], ms=4)
            if side in ("below", "above", "under"):
                ax.annotate(
                    label,
                    (steps[row], div[row]),
                    xytext={"below": (0, -9), "above": (-4, 9), "under": (0, -9)}[side],
                    textcoords="offset points",
                    ha={"below": "center", "above": "left", "under": "right"}[side],
                    va="bottom" if side == "above" else "top",
                    fontsize=9,
                )
            else:
                ax.annotate(
                    label,
                    (steps[row], div[row]),
                    xytext=(-8, 8),
                    textcoords="offset points",
                    ha="right",
                    va="bottom",
                    fontsize=9,
                )
        ax.set_xlim(0, STEPS + 20)
        ax.set_ylim(*nice_limits([div.min() * 0.5, div.max() * (12.0 if on_phone() else 3.0)], log=True, pad=0.0))
        ax.set_xlabel("step")
        ax.xaxis.set_major_formatter(STEP_TICKS)
        ax.set_ylabel("Adam divisor, RMS of √v̂ + ε (log scale)")
        ax.set_title(
            f"Adam's divisor jumps on the bad step and is still {t('divisor_later_ratio')} "
            f"times its usual size {t('later_gap')} steps later",
            loc="left",
        )
        return fig

    section.save_figure(adam_divisor_figure, "adam_divisor")

    # 4. The three variants around the spike, and where they end.
    def three_variants_figure():
        fig = new_figure(
            8.4,
            3.6,
            margins=(0.61, 0.46, 0.26, 0.24),
            grid=(1, 2),
            wspace=0.62,
            suptitle=f"Clipping or skipping the bad batch: both end near "
            f"{t('final_loss', SKIPPED)}; doing nothing ends at "
            f"{t('final_loss', PLAIN)}",
        )
        ax_zoom, ax_rest = fig.subplots(1, 2, width_ratios=[1.0, 1.3])
        zoom = slice(ZOOM_FIRST - 1, ZOOM_LAST)
        rest = slice(ZOOM_FIRST - 1, STEPS)
        for k in (PLAIN, CLIPPED, SKIPPED):
            label = f"{VARIANTS[k]}: ends at {t('final_loss', k)}"
            ax_zoom.plot(steps[zoom], losses[zoom, k], color=colours[k], lw=1.5)
            ax_rest.plot(steps[rest], losses[rest, k], color=colours[k], lw=1.2, label=label)
        for ax in (ax_zoom, ax_rest):
            ax.axvline(BAD_STEP, color=grey, ls=":", lw=1.0)
            ax.set_xlabel("step")
            ax.xaxis.set_major_formatter(STEP_TICKS)
        lo, hi = losses[rest].min(), losses[rest].max()
        pad = 0.04 * (hi - lo)
        for ax in (ax_zoom, ax_rest):
            ax.set_ylim(*nice_limits([lo - pad, hi + pad], pad=0.0))
        ax_zoom.set_xlim(ZOOM_FIRST, ZOOM_LAST)
        ax_rest.set_xlim(ZOOM_FIRST, STEPS + 20)
        ax_zoom.set_ylabel("loss")
        ax_zoom.set_title(f"Steps {t('zoom_first')}–{t('zoom_last')}", loc="left", fontsize=10)
        ax_rest.set_title(f"Steps {t('zoom_first')}–{t('steps')}", loc="left", fontsize=10)
        cp = results["clipped_peak_row"]
        ax_zoom.annotate(
            f"clipped: a bump to {t('clipped_peak_loss')}",
            (steps[cp], losses[cp, CLIPPED]),
            xytext=(6, 22),
            textcoords="offset points",
            fontsize=9,
            color=colours[CLIPPED],
            arrowprops={"arrowstyle": "-", "color": colours[CLIPPED], "lw": 0.8},
        )
        ax_rest.legend(loc="upper right")
        return fig

    section.save_figure(
        three_variants_figure,
        "three_variants",
        caption_phrases=("the clipped and skipped runs end below the run in which nothing was done",),
    )


if __name__ == "__main__":
    main(__name__)
