"""Section 1, "Why input scales matter": a linear model on reach (mm) and lift
height (m), trained by gradient descent in raw units and after standardising.

Draws 200 reaching moves from rng(31), builds the curvature matrix
H = (2/n)·XᵀX of the squared-error loss for both problems, decomposes it
(numpy's symmetric eigen-solver) and uses the closed form of gradient descent
at lr = 1/λ_max: the excess loss after t steps, the weight path, the exact
integer number of steps to an excess below 0.001 (bisection on the monotone
closed form, checked at t and t − 1, never by looping millions of steps) and
the steps until the standardised weights settle within 1%. A real 2,000-step
gradient-descent loop on the raw problem checks the closed form, and a real
loop on the standardised problem checks its step count. Full-batch Adam runs
on both problems over a grid of learning rates; its excess is not monotone,
so its count is the first step from which the excess stays below 0.001 to the
end of the 5,000-step run (its first passage is quoted too, as such); the same
runs continued to 10,000 steps show whether that count lasts (on raw inputs it
does not). Gradient descent's count is also taken near its largest stable rate,
so the comparison does not rest on its half-limit rate. Draws five figures:
feature ranges, excess loss against step, weight paths, the largest safe
learning rate and Adam's excess against step.
"""

from __future__ import annotations

from dataclasses import dataclass


import pagekit.section  # noqa: F401  (first: it pins the numeric environment before numpy loads)
import numpy as np

from pagekit.section import PALETTE, log_axis, main, new_figure, nice_limits, on_phone

SEED = 31
N_EXAMPLES = 200
REACH_RANGE = (220.0, 640.0)  # mm
HEIGHT_RANGE = (0.08, 0.62)  # m
NOISE_SPREAD = 0.05
TRUE_WEIGHTS = (0.004, 1.9, 0.35)  # reach, height, intercept
TARGET_EXCESS = 0.001
LOOP_STEPS = 2_000
AGREE_TOL = 1e-6  # loop and closed form must agree to this (absolute, on the excess)
MOVE = 0.01  # size of the probe move along an eigenvector
FRACTION_STEPS = (100_000, 1_000_000)  # where the raw height weight is read off
WEIGHT_TOL = 0.01  # "within 1% of the best value"
STEP_RATIO_FLOOR = 1e6  # claim: raw needs over a million times more steps
STD_CURVATURE_CEILING = 2.0  # claim: standardised curvature ratio below 2
REACH, HEIGHT, INTERCEPT = 0, 1, 2
# Adam on the same two problems: full-batch gradients, the usual constants,
# every learning rate of a grid run side by side for a fixed number of steps.
ADAM_RATES = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
ADAM_STEPS = 5_000  # the run the counts are taken on
ADAM_CHECK_STEPS = 10_000  # the same runs continued, to see whether a count lasts (cheap: 0.1 CPU-s a problem)
GD_NEAR_LIMIT = 1.99  # gradient descent at 1.99/λ_max, just inside its stable limit 2/λ_max
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
ADAM_GAIN_FLOOR = 1_000  # claim: Adam is below the target to step 5,000 over 1,000 times sooner than gradient descent
ADAM_STD_FACTOR = 10  # claim: standardising still saves Adam over 10 times the steps
# The other bounds the claims test, each formatted into its claim's words.
GRADIENT_RATIO_FLOOR = 1_000  # first gradient on the reach weight over the one on the height weight
PURE_SHARE = 0.999  # "almost pure": the steepest direction's reach component, above
FLAT_REACH_CEILING = 0.001  # the flattest direction's reach component, below
FLAT_HEIGHT_FLOOR, FLAT_INTERCEPT_FLOOR = 0.5, 0.1  # its height and intercept components, above
EXACT_TOL = 1e-12  # "exactly", up to rounding
RAW_STEPS_FLOOR = 10_000_000  # "tens of millions"
FAR_ABOVE_TARGET = 100  # the std run's peak over the target excess, above
HEIGHT_FRACTION_CEILING = 0.2  # "under a fifth"
OVERSHOOT_FLOOR = 1.2  # the reach weight after the first raw step, over its best value, above
FIRST_STEP_CEILING = 0.001  # height weight and intercept after the first raw step, over their best, below
FEW_STEPS = 10  # "a few steps": the standardised weights settle within 1% in fewer than this


@dataclass
class Problem:
    """One least-squares problem and the closed form of gradient descent on it."""

    X: np.ndarray
    y: np.ndarray

    lr_factor: float = 1.0  # the learning rate is lr_factor/λ_max

    def __post_init__(self):
        n = len(self.y)
        self.H = (2.0 / n) * self.X.T @ self.X
        self.lam, self.V = np.linalg.eigh(self.H)  # ascending eigenvalues
        self.w_best = np.linalg.lstsq(self.X, self.y, rcond=None)[0]
        self.best_loss = self.loss(self.w_best)
        self.lr = self.lr_factor / self.lam[-1]  # by default half the largest stable rate 2/λ_max
        self.rate = 1.0 - self.lr * self.lam  # per-step factor on each eigen-component
        self.e0 = self.V.T @ (np.zeros(3) - self.w_best)

    def loss(self, w: np.ndarray) -> float:
        return float(np.mean((self.X @ w - self.y) ** 2))

    def gradient(self, w: np.ndarray) -> np.ndarray:
        return (2.0 / len(self.y)) * self.X.T @ (self.X @ w - self.y)

    def excess(self, t) -> np.ndarray:
        """excess(t) = ½ Σ_i λ_i e0_i² (1 − lr·λ_i)^(2t), for integer t (array)."""
        t = np.asarray(t, dtype=float)
        powers = self.rate[:, None] ** (2.0 * t.ravel()[None, :])
        return (0.5 * (self.lam * self.e0**2) @ powers).reshape(t.shape)

    def weights(self, t) -> np.ndarray:
        """w(t) = w* + V·(e0 ⊙ (1 − lr·λ)^t); one row per step in t."""
        t = np.asarray(t, dtype=float).ravel()
        return self.w_best + (self.e0 * self.rate ** t[:, None]) @ self.V.T

    def steps_to(self, target: float) -> int:
        """Smallest integer t with excess(t) < target, by bisection on the
        monotone closed form (every |1 − lr·λ_i| ≤ 1), then verified at t, t − 1."""
        low, high = 0, 1  # excess(low) >= target > excess(high) once high is found
        if float(self.excess(low)) < target:
            return 0
        while float(self.excess(high)) >= target:
            low, high = high, high * 2
            if high > 2**62:
                raise ValueError("excess never falls below the target")
        while high - low > 1:
            mid = (low + high) // 2
            if float(self.excess(mid)) < target:
                high = mid
            else:
                low = mid
        return high

    def steps_until_settled(self, index: list[int], tol: float, cap: int = 100_000) -> int:
        """Smallest t from which every listed weight stays within tol (relative)
        of its best value. The bound Σ_j |V_ij e0_j| |rate_j|^t never rises, so
        once it is under tol the weights stay put; below that, check exactly."""
        limit = tol * np.abs(self.w_best[index])
        scale = np.abs(self.V[index, :] * self.e0)  # (weights, modes)
        t_bound = 0
        while np.any(scale @ np.abs(self.rate) ** t_bound >= limit):
            t_bound += 1
            if t_bound > cap:
                raise ValueError("weights do not settle within the cap")
        steps = np.arange(t_bound + 1)
        outside = np.any(np.abs(self.weights(steps)[:, index] - self.w_best[index]) >= limit, axis=1)
        return int(steps[outside][-1] + 1) if outside.any() else 0


def descend(problem: Problem, steps: int) -> np.ndarray:
    """Plain gradient descent from w = 0 for a fixed number of steps."""
    w = np.zeros(3)
    for _ in range(steps):
        w = w - problem.lr * problem.gradient(w)
    return w


def descend_to(problem: Problem, target: float, cap: int = 1_000) -> int:
    """Real gradient descent until the excess loss is below target; the step count."""
    w = np.zeros(3)
    for step in range(cap + 1):
        if problem.loss(w) - problem.best_loss < target:
            return step
        w = w - problem.lr * problem.gradient(w)
    raise ValueError("the loop did not reach the target within the cap")


def adam_excess(problem: Problem, rates, steps: int) -> np.ndarray:
    """Full-batch Adam from w = 0 (bias correction, betas 0.9/0.999, eps 1e-8),
    one column of weights per learning rate; the excess loss after each step,
    shape (steps, rates): row t − 1 is the excess after step t."""
    rates = np.asarray(rates, dtype=float)
    b1, b2 = ADAM_BETAS
    w = np.zeros((3, len(rates)))
    m, v = np.zeros_like(w), np.zeros_like(w)
    xty = (2.0 / len(problem.y)) * problem.X.T @ problem.y
    history = np.empty((steps, len(rates)))
    for t in range(1, steps + 1):
        g = problem.H @ w - xty[:, None]
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - rates * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + ADAM_EPS)
        e = w - problem.w_best[:, None]
        history[t - 1] = 0.5 * np.einsum("ik,ij,jk->k", e, problem.H, e)
    return history


def first_below(history: np.ndarray, target: float) -> np.ndarray:
    """For each column, the first step whose excess is below target (-1 if none).
    A first passage: Adam's excess is not monotone, so it may later climb again."""
    below = history < target
    return np.where(below.any(axis=0), below.argmax(axis=0) + 1, -1)


def settled_below(history: np.ndarray, target: float) -> np.ndarray:
    """For each column, the first step from which the excess stays below target
    to the end of the run (-1 if the last step is not below it)."""
    above = history >= target
    last_above = len(history) - 1 - above[::-1].argmax(axis=0)  # 0-based row of the last one
    settled = np.where(above.any(axis=0), last_above + 2, 1)
    return np.where(above[-1], -1, settled)


def best_of(counts: np.ndarray) -> int:
    """Index of the smallest positive count (a rate that never gets there loses)."""
    return int(np.argmin(np.where(counts > 0, counts, np.iinfo(np.int64).max)))


def make_data(section):
    rng = section.rng(SEED)
    reach = rng.uniform(*REACH_RANGE, size=N_EXAMPLES)
    height = rng.uniform(*HEIGHT_RANGE, size=N_EXAMPLES)
    noise = rng.normal(0.0, NOISE_SPREAD, size=N_EXAMPLES)
    a, b, c = TRUE_WEIGHTS
    y = a * reach + b * height + c + noise
    return reach, height, y


# A per-weight rescaling of the raw problem leaves less than this fraction
# (one in PER_WEIGHT_SHARE) of its curvature ratio.
PER_WEIGHT_SHARE = 10_000


def compute(section):
    q = section.quote
    reach, height, y = make_data(section)
    q("n_examples", N_EXAMPLES, "d")
    q("seed", SEED, "d")
    q("reach_range", REACH_RANGE, ".0f")
    q("height_range", HEIGHT_RANGE, ".2f")
    q("noise_spread", NOISE_SPREAD, ".2f")
    q("true_weights", TRUE_WEIGHTS, lambda v: f"{v:g}")

    # Feature ranges, raw and standardised with the training average and spread.
    mean = np.array([reach.mean(), height.mean()])
    spread = np.array([reach.std(), height.std()])
    std_reach = (reach - mean[0]) / spread[0]
    std_height = (height - mean[1]) / spread[1]
    q("reach_stats", [reach.min(), reach.max(), reach.std()], ".1f")  # mm
    q("height_stats", [height.min(), height.max(), height.std()], ".4f")  # m
    q("std_reach_stats", [std_reach.min(), std_reach.max(), std_reach.std()], ".2f")
    q("std_height_stats", [std_height.min(), std_height.max(), std_height.std()], ".2f")
    q("mean_ratio", mean[0] / mean[1], ",.0f", unit="times bigger")
    section.agree(
        "standardised features have average 0 and spread 1",
        [std_reach.mean(), std_height.mean(), std_reach.std(), std_height.std()],
        [0, 0, 1, 1],
        atol=1e-12,
    )
    section.claim(
        f"standardised, the two features have the same spread (to {EXACT_TOL:g})",
        abs(std_reach.std() - std_height.std()) < EXACT_TOL,
        f"spreads {std_reach.std():.17g} and {std_height.std():.17g}",
        key="standardised-same-spread",
    )

    ones = np.ones(N_EXAMPLES)
    raw = Problem(np.column_stack([reach, height, ones]), y)
    std = Problem(np.column_stack([std_reach, std_height, ones]), y)

    # Both problems fit the same column space: same best loss, same start.
    section.agree("raw and standardised best losses", raw.best_loss, std.best_loss, rtol=1e-9)
    section.agree("raw and standardised excess at the start", raw.excess(0), std.excess(0), rtol=1e-9)
    q("excess_start", float(raw.excess(0)), ".2f")
    # The raw excess after the first step and after the first fraction step.
    q("raw_excess_at", raw.excess([1, FRACTION_STEPS[0]]), ".4f")
    q("best_loss", raw.best_loss, ".4f")

    # The first gradient at w = 0.
    g0 = raw.gradient(np.zeros(3))
    q("grad_reach", g0[REACH], ",.0f")
    q("grad_height", g0[HEIGHT], ".2f")
    q("grad_ratio", g0[REACH] / g0[HEIGHT], ",.0f", unit=("times harder", "times larger"))
    section.claim(
        f"the first gradient on the reach weight is over {GRADIENT_RATIO_FLOOR:,} times the one on the height weight",
        abs(g0[REACH]) > GRADIENT_RATIO_FLOOR * abs(g0[HEIGHT]),
    )

    # Curvature.
    q("lambda_raw", [raw.lam[-1], raw.lam[0]], lambda v: f"{v:,.0f}" if v > 1 else f"{v:.4f}")
    curv_raw = raw.lam[-1] / raw.lam[0]
    curv_std = std.lam[-1] / std.lam[0]
    q("curvature_ratio_raw", curv_raw, ",.0f")
    q("curvature_ratio_std", curv_std, ".2f")
    section.claim(
        f"the standardised curvature ratio is below {STD_CURVATURE_CEILING:g}", curv_std < STD_CURVATURE_CEILING
    )
    # How the mismatch divides: the curvature ratio left after rescaling each
    # raw weight by the square root of its own curvature (a per-weight
    # correction, the kind a per-weight divisor can make), and after only
    # scaling or only centring the features.
    per_weight = raw.H / np.sqrt(np.outer(np.diag(raw.H), np.diag(raw.H)))
    lam_per_weight = np.linalg.eigvalsh(per_weight)
    curv_per_weight = lam_per_weight[-1] / lam_per_weight[0]
    scaled = Problem(np.column_stack([reach / spread[0], height / spread[1], ones]), y)
    centred = Problem(np.column_stack([reach - mean[0], height - mean[1], ones]), y)
    q("curvature_ratio_per_weight", curv_per_weight, ",.0f")
    q("curvature_ratio_scaled_only", scaled.lam[-1] / scaled.lam[0], ",.0f")
    q("curvature_ratio_centred_only", centred.lam[-1] / centred.lam[0], ".1x")
    section.claim(
        f"rescaling each raw weight by its own curvature leaves under 1/{PER_WEIGHT_SHARE:,} of the raw curvature ratio",
        curv_per_weight * PER_WEIGHT_SHARE < curv_raw,
        key="per-weight-rescaling-removes-most",
    )
    section.claim(
        "scaling alone and centring alone each leave a larger curvature ratio than standardising",
        min(scaled.lam[-1] / scaled.lam[0], centred.lam[-1] / centred.lam[0]) > curv_std,
        key="standardising-needs-both-halves",
    )
    steep, flat = raw.V[:, -1], raw.V[:, 0]
    section.claim(
        f"the steepest raw direction is almost pure reach weight (component above {PURE_SHARE:g})",
        abs(steep[REACH]) > PURE_SHARE,
    )
    section.claim(
        f"the flattest raw direction is mostly height weight and intercept (reach component below "
        f"{FLAT_REACH_CEILING:g}, height above {FLAT_HEIGHT_FLOOR:g}, intercept above {FLAT_INTERCEPT_FLOOR:g})",
        abs(flat[REACH]) < FLAT_REACH_CEILING
        and abs(flat[HEIGHT]) > FLAT_HEIGHT_FLOOR
        and abs(flat[INTERCEPT]) > FLAT_INTERCEPT_FLOOR,
    )
    q("move", MOVE, ".2f")
    rise = 0.5 * np.array([raw.lam[-1], raw.lam[0]]) * MOVE**2
    section.agree(
        "loss rise ½·λ·0.01² and the loss measured after the move",
        rise,
        [raw.loss(raw.w_best + MOVE * v) - raw.best_loss for v in (steep, flat)],
        rtol=1e-6,
    )
    q("rise_steep", rise[0], ".1f")
    q("rise_flat", rise[1], ".1x")
    # After standardising, the intercept decouples (eigenvalue 2) and the two
    # feature directions have eigenvalues 2(1 ± ρ), ρ the feature correlation.
    rho = float(np.corrcoef(reach, height)[0, 1])
    q("correlation", rho, ".3f")
    section.claim(
        f"after standardising, the intercept is an eigenvector on its own (to {EXACT_TOL:g})",
        abs(abs(std.V[INTERCEPT, 1]) - 1) < EXACT_TOL,
    )
    section.agree(
        "standardised eigenvalues and 2(1 − |ρ|), 2, 2(1 + |ρ|)",
        std.lam,
        [2 * (1 - abs(rho)), 2.0, 2 * (1 + abs(rho))],
        atol=1e-12,
    )

    # Learning rates: stable below 2/λ_max; we use half of it.
    stable = np.array([2 / raw.lam[-1], 2 / std.lam[-1]])
    q("stable_lr_raw", stable[0], ".2x")
    q("stable_lr_std", stable[1], ".3f")
    q("stable_lr_ratio", stable[1] / stable[0], ",.0f", unit="times larger")
    section.claim(
        "the largest stable learning rate is larger with standardised inputs than with raw ones",
        stable[1] > stable[0],
        f"raw {stable[0]:.3g}, standardised {stable[1]:.3g}",
        key="standardising-raises-stable-rate",
    )
    q("lr_raw", raw.lr, ".2x")
    q("lr_std", std.lr, ".3f")
    section.claim(
        f"at lr = 1/λ_max the error along the steepest direction is gone after one step (to {EXACT_TOL:g})",
        abs(raw.rate[-1]) < EXACT_TOL and abs(std.rate[-1]) < EXACT_TOL,
    )
    section.agree(
        "the flattest raw direction's per-step factor and 1 − 1/curvature ratio",
        raw.rate[0],
        1 - 1 / curv_raw,
        atol=1e-15,
    )

    # Steps to the target, from the closed form, verified at t and t − 1.
    q("target_excess", TARGET_EXCESS, ".3f")
    steps = {}
    for label, problem in (("raw", raw), ("std", std)):
        t = problem.steps_to(TARGET_EXCESS)
        section.claim(
            f"{label}: the excess is below the target {TARGET_EXCESS:g} at the step count, not one step before",
            problem.excess(t) < TARGET_EXCESS <= problem.excess(t - 1),
            key=f"{label}-excess-below",
        )
        steps[label] = t
    q("steps_raw", steps["raw"], ",d", unit="steps")
    q("steps_std", steps["std"], ",d", unit="steps")
    q("steps_ratio", steps["raw"] / steps["std"], ",.0f", unit="times as many")
    section.claim(
        f"raw needs tens of millions of steps (at least {RAW_STEPS_FLOOR:,})", steps["raw"] >= RAW_STEPS_FLOOR
    )
    section.claim(
        f"raw needs over {STEP_RATIO_FLOOR:,.0f} times more steps than standardised",
        steps["raw"] > STEP_RATIO_FLOOR * steps["std"],
        key="raw-needs-millions-more-steps",
    )
    # An independent route to the raw excess at t and t − 1: powers of the
    # update matrix (I − lr·H) by repeated squaring, no eigen-decomposition.
    update = np.eye(3) - raw.lr * raw.H
    by_power = []
    for t in (steps["raw"] - 1, steps["raw"]):
        e = np.linalg.matrix_power(update, t) @ -raw.w_best
        by_power.append(0.5 * e @ raw.H @ e)
    section.agree(
        "eigen closed form and matrix powers of the raw excess near the step count",
        raw.excess([steps["raw"] - 1, steps["raw"]]),
        by_power,
        rtol=1e-6,
    )
    section.claim(
        f"a real loop on the standardised problem needs the same number of steps to an excess below {TARGET_EXCESS:g}",
        descend_to(std, TARGET_EXCESS) == steps["std"],
    )

    # Adam, whose per-weight divisor absorbs a mismatch along the weight axes
    # (the reach weight's steep direction) but not the mixing of the height
    # weight and the intercept in the flat direction.
    q("adam_rates", ADAM_RATES, "g")
    q("adam_steps_cap", ADAM_STEPS, ",d", unit="steps")
    q("adam_check_steps", ADAM_CHECK_STEPS, ",d")
    q("adam_betas", ADAM_BETAS, "g")
    q("adam_eps", ADAM_EPS, ".0x")
    adam, adam_runs = {}, {}
    for label, problem in (("raw", raw), ("std", std)):
        # One run to the check horizon; the counts use its first ADAM_STEPS rows
        # (the same arithmetic as a run stopped there).
        long_history = adam_excess(problem, ADAM_RATES, ADAM_CHECK_STEPS)
        history = long_history[:ADAM_STEPS]
        first, settle = first_below(history, TARGET_EXCESS), settled_below(history, TARGET_EXCESS)
        # Independent route to the settle step: a plain loop backwards over each column.
        by_loop = []
        for k in range(len(ADAM_RATES)):
            t = ADAM_STEPS
            while t >= 1 and history[t - 1, k] < TARGET_EXCESS:
                t -= 1
            by_loop.append(-1 if t == ADAM_STEPS else t + 1)
        section.agree(f"Adam's settle steps on the {label} problem, vectorised and by a backward loop", settle, by_loop)
        section.claim(
            f"Adam on the {label} problem stays below the target to the end of the run at some rate of the grid",
            np.any(settle > 0),
            f"settle steps {settle.tolist()}",
            key="raw-stays-below-at-some-rate" if label == "raw" else None,
        )
        best = best_of(settle)
        fastest = best_of(first)  # the rate that touches the target first
        after = history[first[fastest] :, fastest]  # the excess after that first touch
        adam[label] = (int(settle[best]), ADAM_RATES[best])
        later = long_history[ADAM_STEPS:]  # steps 5,001 to 10,000
        adam_runs[label] = {
            "history": history,
            "long_history": long_history,
            "best": best,
            "fastest": fastest,
            "first": first,
            "settle": settle,
            "peak": after.max(),
            "later_peak": later[:, best].max(),
            "later_above": (later >= TARGET_EXCESS).any(axis=0),
        }
        q(f"adam_fastest_rate_{label}", ADAM_RATES[fastest], "g")
        q(f"adam_fastest_first_{label}", first[fastest], ",d", unit="steps")
        # Every seed and kernel: the fastest run does not stay at the target
        # it first touched. How far it climbs, and which rate first stays below on
        # the standardised problem, are the page's run only (the robustness
        # report shows them moving with the seed and, for the latter, the kernel).
        section.claim(
            f"on the {label} problem, the run that first touches the target excess of "
            f"{TARGET_EXCESS:g} later climbs back above it",
            after.max() >= TARGET_EXCESS,
            f"peak after the first touch {after.max():.3g}",
            key=f"{label}-then-climbs-above-it-again",
        )
        section.claim(
            f"on the {label} problem the rate that first touches the target is not "
            "the first to stay below it to the end of the run",
            fastest != best,
            every_seed=(label == "raw"),
            key="raw-first-not-the-one-that-stays" if label == "raw" else None,
        )
    std_peak, raw_peak = adam_runs["std"]["peak"], adam_runs["raw"]["peak"]
    section.claim(
        f"on the page's run, on the std problem, the run that first touches the target "
        f"excess of {TARGET_EXCESS:g} later climbs over {FAR_ABOVE_TARGET} times above it",
        std_peak > FAR_ABOVE_TARGET * TARGET_EXCESS,
        f"peak {std_peak:.3g}",
        every_seed=False,
        key="then-climbs-far-above-it",
    )
    section.claim(
        "on the page's run, on the raw problem, the run that first touches the target "
        "later climbs above its starting excess",
        raw_peak > raw.excess(0),
        f"peak {raw_peak:.3g}",
        every_seed=False,
        key="later-climbs-back-above-where",
    )
    # Does the count last? The same runs continued to 10,000 steps.
    raw_run, std_run = adam_runs["raw"], adam_runs["std"]
    raw_exit = ADAM_STEPS + 1 + int(np.argmax(raw_run["long_history"][ADAM_STEPS:, raw_run["best"]] >= TARGET_EXCESS))
    raw_run["exit"] = raw_exit
    q("adam_raw_exit", raw_exit, ",d")
    q("adam_raw_later_peak", raw_run["later_peak"], ".4f")
    section.claim(
        f"on the raw problem, the rate that stays below the target excess of {TARGET_EXCESS:g} to step {ADAM_STEPS:,} "
        f"climbs back above it before step {ADAM_CHECK_STEPS:,}",
        raw_run["later_peak"] >= TARGET_EXCESS,
        f"peak {raw_run['later_peak']:.3g}",
        key="leaves-the-target-again-soon",
    )
    section.claim(
        f"on the raw problem, every rate of the grid is above the target excess of {TARGET_EXCESS:g} at some step "
        f"from {ADAM_STEPS + 1:,} to {ADAM_CHECK_STEPS:,}",
        bool(raw_run["later_above"].all()),
        f"above later: {raw_run['later_above'].tolist()}",
        key="every-rate-of-the-grid",
    )
    section.claim(
        f"on the std problem, the rate that stays below the target excess of {TARGET_EXCESS:g} to step {ADAM_STEPS:,} "
        f"stays below it to step {ADAM_CHECK_STEPS:,}",
        std_run["later_peak"] < TARGET_EXCESS,
        f"peak {std_run['later_peak']:.3g}",
        every_seed=False,
        key="stays-below-through-step-10",
    )
    # Gradient descent just inside its stable limit: about half the steps (the
    # flattest factor 1 − ηλ_min moves twice as far from one), still a
    # thousandfold more than Adam on either count.
    gd_fast = Problem(raw.X, raw.y, lr_factor=GD_NEAR_LIMIT)
    steps_fast = gd_fast.steps_to(TARGET_EXCESS)
    section.claim(
        f"gradient descent near its limit: below the target {TARGET_EXCESS:g} at the step count, not one step before",
        gd_fast.excess(steps_fast) < TARGET_EXCESS <= gd_fast.excess(steps_fast - 1),
    )
    q("gd_near_limit_factor", GD_NEAR_LIMIT, ".2f")
    q("steps_raw_near_limit", steps_fast, ",d", unit="steps")
    q("gd_near_limit_fraction", steps_fast / steps["raw"], ".2f")
    q("adam_gain_first_raw", steps_fast / raw_run["first"][raw_run["fastest"]], ",.0f", unit="times sooner")
    q("adam_gain_near_limit", steps_fast / adam["raw"][0], ",.0f", unit="times sooner")
    section.claim_bound(
        "gradient descent near its limit, raw step count divided by Adam's first touch",
        steps_fast / raw_run["first"][raw_run["fastest"]],
        ">",
        ADAM_GAIN_FLOOR,
        fmt=",d",
        key="adam-thousandfold-sooner-first-touch",
    )
    section.claim_bound(
        "gradient descent near its limit, raw step count divided by Adam's step "
        "from which it stays below to step 5,000",
        steps_fast / adam["raw"][0],
        ">",
        ADAM_GAIN_FLOOR,
        fmt=",d",
        key="adam-thousandfold-sooner-stay",
    )
    q("adam_steps_raw", adam["raw"][0], ",d")
    q("adam_rate_raw", adam["raw"][1], "g")
    q("adam_steps_std", adam["std"][0], ",d")
    q("adam_rate_std", adam["std"][1], "g")
    q("adam_gain_raw", steps["raw"] / adam["raw"][0], ",.0f", unit="times fewer")
    q("adam_std_factor", adam["raw"][0] / adam["std"][0], ".0f", unit="times sooner")
    section.claim_bound(
        "plain gradient descent's raw step count divided by Adam's step from which it stays below to step 5,000",
        steps["raw"] / adam["raw"][0],
        ">",
        ADAM_GAIN_FLOOR,
        fmt=",d",
        key="adam-absorbs-most",
    )
    section.claim_bound(
        "Adam's best raw stay-below step divided by its best standardised one",
        adam["raw"][0] / adam["std"][0],
        ">",
        ADAM_STD_FACTOR,
        fmt="d",
        key="standardising-still-saves-adam",
    )

    # The real loop on the raw problem against the closed form.
    q("loop_steps", LOOP_STEPS, ",d", unit="steps")
    w_loop = descend(raw, LOOP_STEPS)
    loop_excess = raw.loss(w_loop) - raw.best_loss
    closed_excess = float(raw.excess(LOOP_STEPS))
    q("loop_excess", loop_excess, ".6f")
    q("closed_excess", closed_excess, ".6f")
    q("agree_tol", AGREE_TOL, ".0x")
    section.agree("loop and closed-form excess after 2,000 raw steps", loop_excess, closed_excess, atol=AGREE_TOL)
    section.agree("loop and closed-form weights after 2,000 raw steps", w_loop, raw.weights([LOOP_STEPS])[0], rtol=1e-9)

    # Weight paths.
    q("fraction_steps", FRACTION_STEPS, ",d", unit="steps")
    fractions = raw.weights(FRACTION_STEPS)[:, HEIGHT] / raw.w_best[HEIGHT]
    q("height_fraction", fractions, ".1%")
    section.claim(
        f"the raw height weight is under {HEIGHT_FRACTION_CEILING:.0%} of its best value after "
        f"{FRACTION_STEPS[-1]:,} steps",
        fractions[-1] < HEIGHT_FRACTION_CEILING,
    )
    read_at = (1, *FRACTION_STEPS)
    flat_weights = raw.weights(read_at)[:, [HEIGHT, INTERCEPT]] / raw.w_best[[HEIGHT, INTERCEPT]]
    section.claim(
        "the raw height weight and intercept both grow from each of these step counts to the next: "
        f"{', '.join(f'{s:,}' for s in read_at)}",
        bool(np.all(np.diff(flat_weights, axis=0) > 0)),
        key="height-and-intercept-grow",
    )
    q("weight_tol", WEIGHT_TOL, ".0%")
    settled = std.steps_until_settled([REACH, HEIGHT], WEIGHT_TOL)
    q("std_settled_steps", settled, ",d", unit="steps")
    section.claim(
        f"the standardised reach and height weights stay within {WEIGHT_TOL:.0%} of their best values "
        f"from a step under {FEW_STEPS} on",
        settled < FEW_STEPS,
        f"settled after {settled} steps",
        key="std-weights-settle-in-a-few-steps",
    )

    # Output scale: a target in units a thousand times smaller leaves the
    # curvature (built from the inputs alone) unchanged but multiplies the
    # first gradient by a thousand and the starting excess by a million.
    scaled = Problem(raw.X, 1000.0 * y)
    section.agree("curvature with the target scaled by a thousand", scaled.H, raw.H, rtol=0)
    section.agree(
        "first gradient with the target scaled by a thousand, divided by a thousand",
        scaled.gradient(np.zeros(3)) / 1000.0,
        g0,
        rtol=1e-12,
    )
    section.agree(
        "starting excess with the target scaled by a thousand, divided by a million",
        scaled.excess(0) / 1e6,
        raw.excess(0),
        rtol=1e-9,
    )

    # Grids for the figures (closed form along a log step axis).
    t_end = 10.0 ** np.ceil(np.log10(steps["raw"]) + 0.3)  # a decade or so past the step count
    t_log = np.unique(np.round(np.geomspace(1, t_end, 700)))
    raw_path = raw.weights(t_log) / raw.w_best
    first = raw.weights([1])[0] / raw.w_best
    q("reach_after_first", first[REACH], ".2f", unit="times its best")
    section.claim(
        f"after the first raw step the reach weight overshoots its best value (over {OVERSHOOT_FLOOR:g} times it)",
        first[REACH] > OVERSHOOT_FLOOR,
    )
    section.claim(
        f"the raw reach weight is at its largest after the first step (to {EXACT_TOL:g} relative)",
        np.all(raw_path[:, REACH] <= first[REACH] * (1 + EXACT_TOL)),
    )
    section.claim(
        f"after the first raw step the height weight and intercept are below {FIRST_STEP_CEILING:.1%} "
        "of their best values",
        np.all(np.abs(first[[HEIGHT, INTERCEPT]]) < FIRST_STEP_CEILING),
    )
    section.claim(
        f"the raw weights are within {WEIGHT_TOL:.0%} of their best values by the end of the plotted steps",
        np.all(np.abs(raw_path[-1, :2] - 1) < WEIGHT_TOL),
    )
    t_std = np.arange(0, max(2 * settled, settled + 4) + 1)
    std_path = std.weights(t_std) / std.w_best
    t_std_excess = np.arange(1, steps["std"] + 4)
    return {
        "reach": reach,
        "height": height,
        "std_reach": std_reach,
        "std_height": std_height,
        "t_log": t_log,
        "raw_excess": raw.excess(t_log),
        "raw_path": raw_path,
        "t_std_excess": t_std_excess,
        "std_excess": std.excess(t_std_excess),
        "t_std": t_std,
        "std_path": std_path,
        "steps": steps,
        "settled": settled,
        "stable": stable,
        "adam": adam_runs,
    }


def padded_log_limits(values, pad_decades=0.25):
    """Log-axis limits that contain every value, with a little room."""
    values = np.asarray(values, dtype=float)
    low, high = np.log10(values.min()), np.log10(values.max())
    return nice_limits([10 ** (low - pad_decades), 10 ** (high + pad_decades)], log=True, pad=0.0)


def padded_limits(values, pad=0.06):
    values = np.asarray(values, dtype=float)
    low, high = values.min(), values.max()
    return nice_limits([low, high], pad=pad)


# A line of many more steps than its axis has room for (10,000 steps on 255
# points of axis) is drawn through the fewest of its points that keep it
# within this distance of every point it skips (Ramer-Douglas-Peucker, in
# the figure's points): under half the 1.1-point line's width, so the thinned
# line stays inside the full one's stroke at any zoom (site review round 3,
# L12: the full lines made this a 299 kB figure; thinned, about 150 kB).
THIN_TOLERANCE_PT = 0.5


def thinned(ax, x, y, tolerance_pt=THIN_TOLERANCE_PT):
    """The indices of the points of the line (x, y) to draw on ``ax``, whose
    limits and scales are set: every point the line drawn through them
    passes more than ``tolerance_pt`` points from is kept, and so are both
    ends and any point that has no place on the axes (matplotlib breaks
    the line there). Drawing only: the numbers are never thinned."""
    xy = ax.transData.transform(np.column_stack([x, y])) * (72 / ax.figure.dpi)
    keep = ~np.isfinite(xy).all(axis=1)
    finite = np.flatnonzero(~keep)
    if finite.size == 0:
        return np.flatnonzero(keep)
    # Each unbroken run of placeable points on its own.
    runs = np.split(finite, np.flatnonzero(np.diff(finite) > 1) + 1)
    for run in runs:
        keep[run[0]] = keep[run[-1]] = True
        pending = [(run[0], run[-1])]
        while pending:
            start, end = pending.pop()
            if end - start < 2:
                continue
            a, b = xy[start], xy[end]
            between = xy[start + 1 : end]
            ab = b - a
            length2 = float(ab @ ab)
            if length2 == 0.0:
                distance = np.hypot(*(between - a).T)
            else:
                along = np.clip(((between - a) @ ab) / length2, 0.0, 1.0)
                distance = np.hypot(*(between - (a + along[:, None] * ab)).T)
            far = int(np.argmax(distance))
            if distance[far] > tolerance_pt:
                middle = start + 1 + far
                keep[middle] = True
                pending += [(start, middle), (middle, end)]
    return np.flatnonzero(keep)


def draw(section, results):
    t = section.text
    texts = section.texts
    blue, orange, grey = PALETTE["blue"], PALETTE["orange"], PALETTE["grey"]

    # Feature ranges, raw and standardised.
    def feature_ranges_figure():
        fig = new_figure(
            8.4,
            3.0,
            margins=(0.49, 0.46, 0.16, 0.24),
            grid=(1, 2),
            wspace=0.53,
            suptitle=f"Reach numbers are on average {t('mean_ratio')} times height numbers; "
            f"standardised, both spread {t('std_reach_stats', 2)}",
        )
        axes = fig.subplots(1, 2)
        panels = (
            ("raw units", (results["reach"], results["height"]), ("reach_stats", "height_stats"), (" mm", " m")),
            (
                "standardised (training average and spread)",
                (results["std_reach"], results["std_height"]),
                ("std_reach_stats", "std_height_stats"),
                ("", ""),
            ),
        )
        for ax, (title, columns, stat_names, units) in zip(axes, panels):
            for row, (values, name, unit, colour) in enumerate(zip(columns, stat_names, units, (blue, orange))):
                y = 1 - row
                # One tick per value, drawn as a single NaN-separated path (fast SVG).
                ticks_x = np.column_stack([values, values, np.full_like(values, np.nan)]).ravel()
                ticks_y = np.tile([y - 0.09, y + 0.09, np.nan], len(values))
                ax.plot(ticks_x, ticks_y, color=colour, linewidth=1.0, alpha=0.7)
                ax.plot([values.min(), values.max()], [y - 0.2, y - 0.2], color=colour, linewidth=3)
                lo, hi, sd = texts(name)
                ax.text(
                    values.min(),
                    y + 0.2,
                    f"min {lo}{unit}, max {hi}{unit}\nspread {sd}{unit}",
                    ha="left",
                    va="bottom",
                    fontsize=8.5,
                    color=colour,
                )
            everything = np.concatenate(columns)
            ax.set_xlim(*padded_limits(np.append(everything, 0.0), pad=0.05))
            ax.set_ylim(-0.5, 1.85)
            ax.set_yticks([1, 0], ["reach", "height"])
            ax.set_title(title, fontsize=10, loc="left")
            ax.spines["left"].set_visible(False)
            ax.tick_params(axis="y", length=0)
        axes[0].set_xlabel("value as recorded (reach in mm, height in m)")
        axes[1].set_xlabel("standardised value (spreads from the average)")
        return fig

    section.save_figure(feature_ranges_figure, "feature_ranges")

    # Excess loss against step, log-log.
    steps = results["steps"]

    def excess_loss_figure():
        fig = new_figure(8.4, 3.6, margins=(0.66, 0.46, 0.05, 0.42))
        ax = fig.add_subplot()
        ax.plot(results["t_log"], results["raw_excess"], color=blue, label="raw units")
        ax.plot(results["t_std_excess"], results["std_excess"], "o-", color=orange, markersize=4, label="standardised")
        ax.axhline(TARGET_EXCESS, color=grey, linestyle="--", linewidth=1)
        log_axis(ax, "x", labels="power")
        log_axis(ax, "y", labels="power", every=2)
        all_excess = np.concatenate([results["raw_excess"], results["std_excess"]])
        ax.set_ylim(*padded_log_limits(all_excess, 0.4))
        ax.set_xlim(0.7, results["t_log"][-1] * 1.5)
        ax.text(
            np.sqrt(steps["std"] * steps["raw"]),
            TARGET_EXCESS * 1.3,
            f"target excess {t('target_excess')}",
            ha="center",
            va="bottom",
            fontsize=9,
            color=grey,
        )
        for label, colour, name, text_x in (("std", orange, "steps_std", 1.15), ("raw", blue, "steps_raw", 0.87)):
            ax.axvline(steps[label], color=colour, linestyle=":", linewidth=1.2)
            ax.text(
                steps[label] * text_x,
                TARGET_EXCESS * 10 if label == "std" else ax.get_ylim()[0] * 3,
                f"{t(name)} steps",
                ha="left" if text_x > 1 else "right",
                va="bottom",
                fontsize=9,
                color=colour,
            )
        ax.set_xlabel("gradient-descent step (log scale)")
        ax.set_ylabel("excess loss above the best (log scale)")
        ax.legend(loc="lower left", bbox_to_anchor=(0.2, 0.25))
        ax.set_title(
            f"Gradient descent needs {t('steps_ratio')} times as many steps in raw units\n"
            f"({t('steps_raw')} against {t('steps_std')})",
            loc="left",
        )
        return fig

    section.save_figure(excess_loss_figure, "excess_loss")

    # Weight paths as a fraction of the best value.
    def weight_paths_figure():
        fig = new_figure(
            8.4,
            3.4,
            margins=(0.58, 0.46, 0.05, 0.24),
            grid=(1, 2),
            wspace=0.43,
            suptitle=f"Height weight: {t('height_fraction', 1)} of its best after "
            f"{t('fraction_steps', 1)} raw steps; standardised, settled in "
            f"{t('std_settled_steps')} steps",
        )
        left, right = fig.subplots(1, 2, width_ratios=[1.5, 1])
        raw_path = results["raw_path"]
        left.plot(results["t_log"], raw_path[:, REACH], color=blue, label="reach weight")
        left.plot(results["t_log"], raw_path[:, HEIGHT], color=orange, label="height weight")
        left.axhline(1.0, color=grey, linewidth=0.8, linestyle="--")
        log_axis(left, "x", labels="power")
        left.set_xlim(results["t_log"][0] * 0.8, results["t_log"][-1] * 1.25)
        left.set_ylim(*padded_limits(raw_path[:, :2], 0.05))
        for i, step in enumerate(FRACTION_STEPS):
            value = raw_path[np.searchsorted(results["t_log"], step), HEIGHT]
            left.plot([step], [value], "o", color=orange, markersize=5, zorder=4)
            left.annotate(
                f"{t('height_fraction', i)} after {t('fraction_steps', i)} steps",
                (step, value),
                xytext=(-6, 9),
                textcoords="offset points",
                ha="right",
                va="bottom",
                fontsize=8.5,
                color=orange,
            )
        left.set_xlabel("step (log scale)")
        left.set_ylabel("weight ÷ its best value")
        left.set_title("raw units: log step axis", fontsize=10, loc="left")
        left.legend(loc="center left")
        std_path = results["std_path"]
        band = (1 - WEIGHT_TOL, 1 + WEIGHT_TOL)
        right.axhspan(*band, color="#DCE6F0", zorder=0)
        right.plot(results["t_std"], std_path[:, REACH], "o-", color=blue, markersize=4)
        right.plot(results["t_std"], std_path[:, HEIGHT], "o-", color=orange, markersize=4)
        right.axvline(results["settled"], color=grey, linestyle=":", linewidth=1.2)
        right.set_ylim(*padded_limits(np.concatenate([std_path[:, :2].ravel(), band]), 0.05))
        right.set_xlim(*padded_limits(results["t_std"], 0.04))
        right.text(
            results["settled"] + 0.15,
            0.5 * (right.get_ylim()[0] + 1),
            f"within {t('weight_tol')}\nafter {t('std_settled_steps')} steps",
            ha="left",
            va="center",
            fontsize=9,
            color=grey,
        )
        right.set_xlabel("step")
        right.set_title("standardised: linear step axis", fontsize=10, loc="left")
        return fig

    section.save_figure(weight_paths_figure, "weight_paths")

    # Largest safe learning rate, log scale, curvature ratio on each bar.
    def safe_learning_rate_figure():
        fig = new_figure(8.4, 3.2, margins=(0.80, 0.26, 0.05, 0.24))
        ax = fig.add_subplot()
        stable = results["stable"]
        low, high = padded_log_limits(stable, 1.0)
        log_axis(ax, "y", labels="power")
        ax.set_ylim(low, high)
        names = ("raw units", "standardised")
        # Wider bars on a phone: each holds its white label inside.
        ax.bar(names, stable - low, bottom=low, color=[blue, orange], width=0.8 if on_phone() else 0.5)
        for i, (value, rate_name, curv_name) in enumerate(
            zip(stable, ("stable_lr_raw", "stable_lr_std"), ("curvature_ratio_raw", "curvature_ratio_std"))
        ):
            ax.text(i, value * 1.4, t(rate_name), ha="center", va="bottom", fontsize=10)
            ax.text(
                i,
                np.sqrt(low * value),
                f"curvature ratio\n{t(curv_name)}",
                ha="center",
                va="center",
                fontsize=9.5,
                color="white",
                fontweight="bold",
            )
        ax.set_ylabel("largest stable learning rate\n(two over λₘₐₓ, log scale)")
        ax.set_title(f"Standardising raises the largest stable learning rate {t('stable_lr_ratio')}-fold", loc="left")
        return fig

    section.save_figure(safe_learning_rate_figure, "safe_learning_rate")

    # Adam's excess against step: the first-touching rate and the settling rate.
    def adam_excess_figure():
        fig = new_figure(
            8.4,
            4.4,
            margins=(0.74, 1.2 if on_phone() else 0.98, 0.22, 0.72),  # (a phone's legend takes more lines)
            grid=(1, 2),
            wspace=0.42,  # room between the left panel's last tick label and the right panel's first
            suptitle="Adam's excess is not monotone: runs touch the target, then climb above it again",
        )
        axes = fig.subplots(1, 2, sharey=True)
        steps_axis = np.arange(1, ADAM_CHECK_STEPS + 1)
        shown = np.concatenate(
            [
                results["adam"][label]["long_history"][
                    :, [results["adam"][label][k] for k in ("fastest", "best")]
                ].ravel()
                for label in ("raw", "std")
            ]
        )
        # The scales and limits first: the lines are thinned in the figure's points.
        log_axis(axes[0], "y", labels="power", every=4)
        axes[0].set_ylim(*padded_log_limits(shown, 0.4))
        for ax, label, title in zip(axes, ("raw", "std"), ("raw units", "standardised")):
            run = results["adam"][label]
            history = run["long_history"]
            ax.set_xlim(0, ADAM_CHECK_STEPS * 1.02)
            # Steps past the counted run are shaded: they only check whether a count lasts.
            ax.axvspan(ADAM_STEPS, ADAM_CHECK_STEPS * 1.02, color="#EEEEEE", zorder=0)
            for k, colour, role in (
                (run["fastest"], orange, "first to touch the target"),
                (run["best"], blue, f"first below to step {t('adam_steps_cap')}"),
            ):
                drawn = thinned(ax, steps_axis, history[:, k])
                ax.plot(
                    steps_axis[drawn],
                    history[drawn, k],
                    color=colour,
                    linewidth=1.1,
                    label=f"rate {t('adam_rates', k)} ({role})",
                )
            ax.axvline(run["settle"][run["best"]], color=blue, linestyle=":", linewidth=1.1)
            ax.axhline(TARGET_EXCESS, color=grey, linestyle="--", linewidth=1)
            ax.set_xlabel(f"Adam step (shaded: continued past {t('adam_steps_cap')})")
            later = f"above again at step {t('adam_raw_exit')} (dot)" if label == "raw" else "still below at the end"
            ax.set_title(
                f"{title}: rate {t(f'adam_rate_{label}')} is below\nfrom step "
                f"{t(f'adam_steps_{label}')} to {t('adam_steps_cap')};\n{later}",
                fontsize=10,
                loc="left",
            )
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8.5, frameon=False)
        axes[0].set_ylabel("excess loss (log scale)")
        raw_run = results["adam"]["raw"]
        axes[0].plot(
            [raw_run["exit"]],
            [raw_run["long_history"][raw_run["exit"] - 1, raw_run["best"]]],
            "o",
            color=blue,
            markersize=5,
            markeredgecolor="white",
            zorder=5,
        )
        return fig

    section.save_figure(adam_excess_figure, "adam_excess")


if __name__ == "__main__":
    main(__name__)
