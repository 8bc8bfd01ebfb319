"""Section 4, "The residual stream, and where the normalisation sits": pre-norm
and post-norm residual stacks, forwards, backwards and in training.

Data from rng(3): 120 rows of 8 inputs, a target y with var(y) the loss of
predicting the mean, then a four-number stream vector. A four-number block
(W from rng(55)) shows both placements by hand. A 48-block stack (seed 17, 64
rows) gives the stream's RMS after every block and each block's gradient, by a
hand-written backward pass checked against torch autograd in float64; the
first/last gradient ratio is repeated for seven depths. A 24-block stack
(seed 0) is trained with Adam for 220 steps at four learning rates in both
placements, plus post-norm at 0.01 with a 50-step warmup.

Speed: the sweep is about 80 GFLOP of small float64 matmuls, so it is the
section's cost. The runs of one placement train side by side as one stacked
numpy computation with the hand-written backward pass (batched matmuls beat
torch's per-op overhead at this size; checked against a run alone), the
optimiser is torch's fused Adam working in place on the numpy parameters, and
the two placements train in two threads (numpy releases the GIL in its
kernels; the numbers do not depend on it). Draws four figures.
"""

from __future__ import annotations

import math


import pagekit.section  # noqa: F401  (first: it pins the numeric environment before numpy loads)
import numpy as np

from pagekit.section import (
    PALETTE,
    draw_cell_rows,
    import_torch,
    log_axis,
    main,
    new_figure,
    nice_limits,
    on_phone,
    scientific,
)

# The data.
DATA_SEED, N_ROWS, D_IN = 3, 120, 8
TANH_GAIN, CROSS_WEIGHT = 2.0, 0.3
STREAM_LENGTH = 4

# The stack: RMS normalisation without gain.
WIDTH, HIDDEN, NORM_EPS = 24, 48, 1e-6
PRE, POST = "pre", "post"
PLACEMENTS = (PRE, POST)
LABELS = {PRE: "pre-norm", POST: "post-norm"}  # the page's words: figures' legends, quotes' runs

# One block, four numbers.
BLOCK_SEED, BLOCK_SPREAD = 55, 0.7

# Through depth.
DEPTH_SEED, DEPTH_ROWS, DEPTH_BLOCKS = 17, 64, 48
DEPTHS = (4, 8, 16, 24, 32, 48, 64)
RSS_TOLERANCE = 0.1  # the stream ends within 10% of the root-sum-of-squares prediction
FIRST_BLOCKS = 6  # the first blocks whose additions the running-total figure shows
RMS_ONE_TOL = 1e-6  # post-norm stream RMS is 1 to this
AUTOGRAD_RTOL = 1e-9  # hand-written backward against torch autograd

# The learning-rate sweep.
SWEEP_SEED, SWEEP_BLOCKS, STEPS, LAST_STEPS = 0, 24, 220, 20
# The tests' reduced sweep: the same code for 30 steps (its last 20 scored),
# an eighth of the section's arithmetic.
REDUCED_STEPS = 30
RATES = (0.001, 0.003, 0.01, 0.03)
# The rates the page's statements name: each statement is tested when its rate
# is one of RATES (a notebook reader may change them).
LOW_RATE, ORDER_RATE, EDGE_RATE, COLLAPSE_RATE = 0.001, 0.003, 0.01, 0.03
WARMUP_RATE, WARMUP_STEPS = 0.01, 50
BETA1, BETA2, ADAM_EPS = 0.9, 0.999, 1e-8
COLLAPSE_TOL = 0.01  # "collapsed": within 1% of var(y)
FAR_BELOW = 0.02  # "far below var(y)": under 2% of it (more than fifty times lower)
KEEPS_TRAINING = 0.1  # "keeps training": ends under a tenth of var(y)
WARMUP_TARGET = 1e-3
ALONE_STEPS = 20  # a run alone is compared with its stacked twin over this many steps
MASK_STEPS, HUGE_RATE = 5, 1e100  # a run forced to overflow must not touch its neighbours
NEAR_RIGHT_ANGLE = 0.3  # "nearly at right angles": |cosine| below this
FIRST_BLOCK_GRADIENT_SHARE = 0.5  # "more than half": post-norm's first block's gradient over its last's
POST_PRE_SCORE_FLOOR = 10  # "more than ten times": post-norm's score over pre-norm's at lr 0.01


def power_of_ten(value: float) -> str:
    """1e-06 -> "1 × 10⁻⁶": a power of ten in the house style."""
    exponent = round(math.log10(value))
    if not math.isclose(value, 10.0**exponent, rel_tol=1e-12):
        raise ValueError(f"{value!r} is not a power of ten")
    return scientific(10.0**exponent, 0)


def decade_above(value: float) -> str:
    """The power of ten just above a tiny loss ("below 1 × 10⁻⁶"): the precision
    a converged loss deserves (see the sensitivity note in compute)."""
    return scientific(10.0 ** (math.floor(math.log10(value)) + 1), 0)


def loss_text(value: float) -> str:
    """Losses near the collapse level to three decimals; tiny ones as the
    power of ten they are below."""
    return f"{value:.3f}" if value >= 0.1 else decade_above(value)


# ---------------------------------------------------------------------------
# The experiment.


def make_data(section):
    """rng(3): x (120 x 8), beta (8) / sqrt(8), then the 1 x 4 stream vector."""
    rng = section.rng(DATA_SEED)
    x = rng.normal(0.0, 1.0, size=(N_ROWS, D_IN))
    beta = rng.normal(0.0, 1.0, size=D_IN) / math.sqrt(D_IN)
    y = np.tanh(TANH_GAIN * (x @ beta)) + CROSS_WEIGHT * x[:, 0] * x[:, 1]
    stream = np.round(rng.normal(0.0, 1.0, size=(1, STREAM_LENGTH)), 2)
    return x, y[:, None], stream[0]


def rms_norm(v: np.ndarray) -> np.ndarray:
    return v / np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + NORM_EPS)


def stack_weights(section, seed: int, blocks: int):
    """rng(seed): W_in, then W1 of every block, then W2 of every block, then
    W_out. One (blocks, ...) draw gives the same numbers as block-by-block
    draws (numpy's generator fills arrays in order; checked in compute)."""
    rng = section.rng(seed)
    w_in = rng.normal(0.0, 1 / math.sqrt(D_IN), size=(D_IN, WIDTH))
    w1 = rng.normal(0.0, 1 / math.sqrt(WIDTH), size=(blocks, WIDTH, HIDDEN))
    w2 = rng.normal(0.0, 1 / math.sqrt(HIDDEN), size=(blocks, HIDDEN, WIDTH))
    w_out = rng.normal(0.0, 1 / math.sqrt(WIDTH), size=(WIDTH, 1))
    return w_in, w1, w2, w_out


def stack_weights_block_by_block(section, seed: int, blocks: int):
    rng = section.rng(seed)
    w_in = rng.normal(0.0, 1 / math.sqrt(D_IN), size=(D_IN, WIDTH))
    w1 = np.stack([rng.normal(0.0, 1 / math.sqrt(WIDTH), size=(WIDTH, HIDDEN)) for _ in range(blocks)])
    w2 = np.stack([rng.normal(0.0, 1 / math.sqrt(HIDDEN), size=(HIDDEN, WIDTH)) for _ in range(blocks)])
    w_out = rng.normal(0.0, 1 / math.sqrt(WIDTH), size=(WIDTH, 1))
    return w_in, w1, w2, w_out


class StackedRuns:
    """R copies of one stack (one placement, one depth) computed side by side.

    Every array carries a leading run axis and every product is a batched
    matmul, so R runs cost one pass of Python. The parameters of all runs
    live in one (R, n_params) array, one row per run (the optimiser's
    parameter for that run), with views per weight. The backward pass is
    written by hand and checked against torch autograd. Buffers are
    allocated once and written with ``out=``: allocating fresh arrays of
    this size costs as much as the arithmetic.
    """

    def __init__(self, placement: str, blocks: int, runs: int, rows: int):
        self.pre = placement == PRE
        self.blocks, self.runs, self.rows = blocks, runs, rows
        L, R, N, D, H = blocks, runs, rows, WIDTH, HIDDEN
        self.params = np.zeros((R, D_IN * D + 2 * L * D * H + D))
        self.grads = np.zeros_like(self.params)
        self.w_in, self.w1, self.w2, self.w_out = self._views(self.params)
        self.g_in, self.g1, self.g2, self.g_out = self._views(self.grads)
        # Contiguous transposes for the backward products (a transposed view
        # makes the matmul markedly slower); refreshed after every update.
        self.w1t = np.empty((R, L, H, D))
        self.w2t = np.empty((R, L, D, H))
        self.streams = np.empty((L + 1, R, N, D))  # the stream after each block
        self.normed = np.empty((L, R, N, D)) if self.pre else None
        self.rms = np.empty((L, R, N, 1))
        self.act = np.empty((L, R, N, H))  # relu output (the mask is act > 0)
        # torch views of the same memory: torch's relu is several times
        # faster than numpy's maximum here, and exact either way.
        self.act_views = list(import_torch().from_numpy(self.act))
        self.mask = np.empty((R, N, H), dtype=bool)
        self.out = np.empty((R, N, 1))
        self.g = np.empty((R, N, D))
        self.t1, self.t2, self.th = np.empty((R, N, D)), np.empty((R, N, D)), np.empty((R, N, H))
        self.dot = np.empty((R, N))

    def _views(self, flat):
        L, R, D, H = self.blocks, self.runs, WIDTH, HIDDEN
        a = D_IN * D
        b = a + L * D * H
        c = b + L * H * D
        return (
            flat[:, :a].reshape(R, D_IN, D),
            flat[:, a:b].reshape(R, L, D, H),
            flat[:, b:c].reshape(R, L, H, D),
            flat[:, c:].reshape(R, D, 1),
        )

    def load(self, weights) -> None:
        """The same starting weights in every run."""
        for view, w in zip((self.w_in, self.w1, self.w2, self.w_out), weights):
            view[:] = w
        self.refresh_transposes()

    def refresh_transposes(self) -> None:
        np.copyto(self.w1t, self.w1.swapaxes(-1, -2))
        np.copyto(self.w2t, self.w2.swapaxes(-1, -2))

    def _rms_into(self, v, r) -> None:
        np.vecdot(v, v, out=self.dot)
        self.dot /= WIDTH
        self.dot += NORM_EPS
        np.sqrt(self.dot, out=r[..., 0])

    def forward(self, x) -> np.ndarray:
        hs = self.streams
        np.matmul(x, self.w_in, out=hs[0])
        for l in range(self.blocks):
            h, r, a = hs[l], self.rms[l], self.act[l]
            if self.pre:  # x <- x + f(norm(x))
                n = self.normed[l]
                self._rms_into(h, r)
                np.divide(h, r, out=n)
                np.matmul(n, self.w1[:, l], out=a)
                self.act_views[l].relu_()
                np.matmul(a, self.w2[:, l], out=self.t1)
                np.add(h, self.t1, out=hs[l + 1])
            else:  # x <- norm(x + f(x))
                s = self.t1
                np.matmul(h, self.w1[:, l], out=a)
                self.act_views[l].relu_()
                np.matmul(a, self.w2[:, l], out=s)
                s += h
                self._rms_into(s, r)
                np.divide(s, r, out=hs[l + 1])
        np.matmul(hs[self.blocks], self.w_out, out=self.out)
        return self.out

    def backward(self, x, g_out, stream_grads=None) -> None:
        """Gradients of the objective whose output gradient is ``g_out``
        (R, N, 1) into ``self.grads``; with ``stream_grads`` (L+1, R, N, D)
        also the gradient with respect to the stream after every block."""
        hs, g, t1, t2, ga = self.streams, self.g, self.t1, self.t2, self.th
        L = self.blocks
        np.matmul(hs[L].swapaxes(-1, -2), g_out, out=self.g_out)
        np.matmul(g_out, self.w_out.swapaxes(-1, -2), out=g)
        if stream_grads is not None:
            stream_grads[L] = g
        for l in reversed(range(L)):
            r, a, m = self.rms[l], self.act[l], self.mask
            np.greater(a, 0.0, out=m)
            if self.pre:
                # The stream's own path is an exact addition: g passes through
                # unchanged and the block's path adds its share.
                n = self.normed[l]
                np.matmul(a.swapaxes(-1, -2), g, out=self.g2[:, l])
                np.matmul(g, self.w2t[:, l], out=ga)
                ga *= m
                np.matmul(n.swapaxes(-1, -2), ga, out=self.g1[:, l])
                np.matmul(ga, self.w1t[:, l], out=t1)  # gradient w.r.t. norm(x)
                np.vecdot(t1, n, out=self.dot)  # through the normalisation
                self.dot /= WIDTH
                np.multiply(n, self.dot[..., None], out=t2)
                t1 -= t2
                t1 /= r
                g += t1
            else:
                # Everything passes back through the normalisation first.
                n = hs[l + 1]
                np.vecdot(g, n, out=self.dot)
                self.dot /= WIDTH
                np.multiply(n, self.dot[..., None], out=t2)
                np.subtract(g, t2, out=t1)
                t1 /= r  # gradient w.r.t. the sum x + f(x)
                np.matmul(a.swapaxes(-1, -2), t1, out=self.g2[:, l])
                np.matmul(t1, self.w2t[:, l], out=ga)
                ga *= m
                np.matmul(hs[l].swapaxes(-1, -2), ga, out=self.g1[:, l])
                np.matmul(ga, self.w1t[:, l], out=g)
                g += t1
            if stream_grads is not None:
                stream_grads[l] = g
        np.matmul(x.T, g, out=self.g_in)


def train_side_by_side(placement, weights, x, y, rates, warmups, steps) -> np.ndarray:
    """Adam on the MSE, one run per (rate, warmup) pair, all from the same
    weights. Returns the loss before every update, shape (runs, steps); NaN
    from the step a run's loss turned non-finite on. Such a run stops there:
    its weights are zeroed and it takes no more optimiser steps, so it
    computes harmless numbers that are never recorded, and the other runs
    (separate slices of every array) are untouched.

    The optimiser is torch's Adam (bias-corrected) through its functional
    form, ``torch.optim.adam.adam`` with the fused CPU kernel, one call per
    run, working in place on the numpy parameters through zero-copy
    torch.from_numpy views: one pass over memory instead of the dozen a
    hand-written numpy Adam takes. The functional form computes exactly
    what ``torch.optim.Adam`` does without building an Optimizer object, whose
    first construction imports torch's compiler (about a second).
    """
    torch = import_torch()
    from torch.optim.adam import adam

    runs, rows = len(rates), x.shape[0]
    stack = StackedRuns(placement, weights[1].shape[0], runs, rows)
    stack.load(weights)
    params, grads = torch.from_numpy(stack.params), torch.from_numpy(stack.grads)
    first_moments, second_moments = torch.zeros_like(params), torch.zeros_like(params)
    step_counts = [torch.tensor(0.0, dtype=torch.float64) for _ in range(runs)]
    alive = np.ones(runs, dtype=bool)
    losses = np.full((runs, steps), np.nan)
    err, g_out = np.empty((runs, rows, 1)), np.empty((runs, rows, 1))
    with np.errstate(all="ignore"):  # a run that overflows is caught below
        for step in range(1, steps + 1):
            np.subtract(stack.forward(x), y, out=err)
            loss = np.mean(err[..., 0] ** 2, axis=-1)
            stopped = alive & ~np.isfinite(loss)
            if stopped.any():
                alive &= ~stopped
                for k in np.flatnonzero(stopped):  # harmless zeros from now on
                    params[k].zero_()
                stack.refresh_transposes()
                np.subtract(stack.forward(x), y, out=err)
            losses[alive, step - 1] = loss[alive]
            np.multiply(err, 2.0 / rows, out=g_out)
            stack.backward(x, g_out)
            for k in np.flatnonzero(alive):
                ramp = min(1.0, step / warmups[k]) if warmups[k] else 1.0
                adam(
                    [params[k]],
                    [grads[k]],
                    [first_moments[k]],
                    [second_moments[k]],
                    [],
                    [step_counts[k]],
                    fused=True,
                    lr=rates[k] * ramp,
                    beta1=BETA1,
                    beta2=BETA2,
                    eps=ADAM_EPS,
                    weight_decay=0.0,
                    amsgrad=False,
                    maximize=False,
                )
            stack.refresh_transposes()
    return losses


def score_of(losses: np.ndarray) -> float:
    """The smallest finite loss over the run's last 20 steps."""
    finite = losses[np.isfinite(losses)]
    return float(np.min(finite[-LAST_STEPS:]))


def probe(placement, weights, x):
    """Forward and backward of mean(output) for one stack: the stream RMS
    after every block (index 0 = the stream entering block 1) and the RMS of
    the gradient with respect to it; also the raw stream gradients."""
    blocks = weights[1].shape[0]
    stack = StackedRuns(placement, blocks, 1, x.shape[0])
    stack.load(weights)
    stack.forward(x)
    grads = np.empty((blocks + 1, 1, x.shape[0], WIDTH))
    stack.backward(x, np.full((1, x.shape[0], 1), 1.0 / x.shape[0]), grads)
    stream_rms = np.sqrt(np.mean(stack.streams[:, 0] ** 2, axis=(1, 2)))
    grad_rms = np.sqrt(np.mean(grads[:, 0] ** 2, axis=(1, 2)))
    return {"stream_rms": stream_rms, "grad_rms": grad_rms, "grads": grads[:, 0], "streams": stack.streams[:, 0].copy()}


def torch_stack(placement, weights, x, y=None):
    """The same stack with torch autograd in float64: gradients of the MSE
    (with ``y``) or of mean(output) with respect to every weight and to the
    stream after every block."""
    torch = import_torch()
    w_in, w1, w2, w_out = (torch.tensor(w, requires_grad=True) for w in weights)

    def norm(v):
        return v / torch.sqrt(torch.mean(v * v, dim=-1, keepdim=True) + NORM_EPS)

    h = torch.tensor(x) @ w_in
    streams = [h]
    for l in range(w1.shape[0]):
        if placement == PRE:
            h = h + torch.relu(norm(h) @ w1[l]) @ w2[l]
        else:
            h = norm(h + torch.relu(h @ w1[l]) @ w2[l])
        streams.append(h)
    for s in streams:
        s.retain_grad()
    out = h @ w_out
    objective = out.mean() if y is None else torch.mean((out - torch.tensor(y)) ** 2)
    objective.backward()
    weight_grads = [w.grad.numpy() for w in (w_in, w1, w2, w_out)]
    return weight_grads, np.stack([s.grad.numpy() for s in streams])


def compute_by_hand_and_through_depth(section, x, y, stream, sweep_weights):
    """The one-block example, the deep stacks forwards and backwards, and the
    first training gradients checked against autograd (quotes and claims)."""
    q = section.quote
    # --- One block, four numbers ------------------------------------------------
    w = np.round(section.rng(BLOCK_SEED).normal(0.0, BLOCK_SPREAD, size=(STREAM_LENGTH,) * 2), 2)
    pre_normed = rms_norm(stream)
    pre_relu = np.maximum(pre_normed, 0.0)
    pre_added = pre_relu @ w
    pre_out = stream + pre_added
    post_relu = np.maximum(stream, 0.0)
    post_added = post_relu @ w
    post_sum = stream + post_added
    post_sum_rms = float(np.sqrt(np.mean(post_sum**2)))
    post_out = rms_norm(post_sum)
    section.agree(
        "post-norm output and sum / its RMS", post_out, post_sum / np.sqrt(post_sum_rms**2 + NORM_EPS), rtol=1e-15
    )
    q("block_seed", BLOCK_SEED, "d")
    q("block_spread", BLOCK_SPREAD, ".1f")
    q("block_w", w.ravel(), ".2f")
    q("block_x", stream, ".2f")
    q("block_x_rms", float(np.sqrt(np.mean(stream**2))), ".2f")
    q("block_pre_normed", pre_normed, ".2f")
    q("block_pre_relu", pre_relu, ".2f")
    q("block_pre_added", pre_added, ".2f")
    q("block_pre_out", pre_out, ".2f")
    q("block_pre_out_rms", float(np.sqrt(np.mean(pre_out**2))), ".2f")
    out_rms, in_rms = (float(np.sqrt(np.mean(v**2))) for v in (pre_out, stream))
    section.claim(
        "the pre-norm block's output stream has a larger RMS than its input stream",
        out_rms > in_rms,
        key="pre-norm-block-makes-the-stream-bigger",
    )
    q("block_post_relu", post_relu, ".2f")
    q("block_post_added", post_added, ".2f")
    q("block_post_sum", post_sum, ".2f")
    q("block_post_sum_rms", post_sum_rms, ".2f")
    q("block_post_out", post_out, ".2f")
    q("block_post_out_rms", float(np.sqrt(np.mean(post_out**2))), ".2f")
    q("block_largest_difference", float(np.max(np.abs(pre_out - post_out))), ".2f")

    # --- Through depth: forwards and backwards --------------------------------
    section.agree(
        "stack weights drawn at once and block by block",
        np.concatenate([a.ravel() for a in stack_weights(section, DEPTH_SEED, 3)]),
        np.concatenate([a.ravel() for a in stack_weights_block_by_block(section, DEPTH_SEED, 3)]),
    )
    rows = x[:DEPTH_ROWS]
    probes = {p: {} for p in PLACEMENTS}
    for depth in DEPTHS:
        weights = stack_weights(section, DEPTH_SEED, depth)
        for placement in PLACEMENTS:
            hand = probe(placement, weights, rows)
            _, auto = torch_stack(placement, weights, rows)
            section.agree(
                f"{placement}-norm, {depth} blocks: stream-gradient RMS, hand backward and torch autograd",
                hand["grad_rms"],
                np.sqrt(np.mean(auto**2, axis=(1, 2))),
                rtol=AUTOGRAD_RTOL,
            )
            scale = float(np.max(np.abs(auto)))
            section.agree(
                f"{placement}-norm, {depth} blocks: stream gradients, hand and autograd (relative to the largest)",
                hand["grads"] / scale,
                auto / scale,
                atol=AUTOGRAD_RTOL,
            )
            probes[placement][depth] = hand
    q("autograd_rtol", AUTOGRAD_RTOL, power_of_ten)
    q("depth_seed", DEPTH_SEED, "d")
    q("depth_rows", DEPTH_ROWS, "d")
    q("depth_blocks", DEPTH_BLOCKS, "d")

    pre48 = probes[PRE][DEPTH_BLOCKS]
    q("stream_rms_start", pre48["stream_rms"][0], ".2f")
    q("pre_stream_rms_end", pre48["stream_rms"][-1], ".2f")
    off_one = {d: float(np.max(np.abs(probes[POST][d]["stream_rms"][1:] - 1))) for d in DEPTHS}
    q("rms_one_tol", RMS_ONE_TOL, power_of_ten)
    section.sweep_claim(
        f"post-norm stream RMS is 1 (to {RMS_ONE_TOL:g}) after every block",
        {d: off_one[d] < RMS_ONE_TOL for d in DEPTHS},
        {d: f"{off_one[d]:.3g}" for d in DEPTHS},
        over="depth",
        key="a-post-norm-block-always",
    )
    section.claim(
        f"pre-norm stream RMS ends larger than it starts ({DEPTH_BLOCKS} blocks)",
        pre48["stream_rms"][-1] > pre48["stream_rms"][0],
        key="pre-norm-stream-grows",
    )

    # The running total: the first pre-norm blocks and what each adds.
    streams = pre48["streams"]
    added = streams[1 : FIRST_BLOCKS + 1] - streams[:FIRST_BLOCKS]
    added_rms = np.sqrt(np.mean(added**2, axis=(1, 2)))
    first_rms = pre48["stream_rms"][: FIRST_BLOCKS + 1]
    q("first_stream_rms", first_rms, ".2f")
    q("first_added_rms", added_rms, ".2f")
    plain_sum = first_rms[0] + added_rms[0]
    q("first_plain_sum", plain_sum, ".2f")
    section.claim(
        "RMS sizes do not add: after each of the first blocks the stream's RMS is "
        "below the RMS before plus the RMS added",
        bool(np.all(first_rms[1:] < first_rms[:-1] + added_rms)),
        key="rms-sizes-do-not-add",
    )
    # The fair comparison: additions perpendicular to the stream add in
    # quadrature (root sum of squares). The measured stream stays a little
    # below that, so the additions lean slightly against the stream: the
    # cosine between the stream and what a block adds (over all rows and
    # positions at once) is slightly negative.
    rss = np.sqrt(first_rms[0] ** 2 + np.concatenate([[0.0], np.cumsum(added_rms**2)]))
    cosines = np.array(
        [
            np.sum(streams[k] * (streams[k + 1] - streams[k]))
            / np.sqrt(np.sum(streams[k] ** 2) * np.sum((streams[k + 1] - streams[k]) ** 2))
            for k in range(FIRST_BLOCKS)
        ]
    )
    section.agree(
        "squared RMS after a block and before² + added² + 2·cos·before·added",
        first_rms[1:] ** 2,
        first_rms[:-1] ** 2 + added_rms**2 + 2 * cosines * first_rms[:-1] * added_rms,
        rtol=1e-9,
    )
    q("first_rss", rss, ".2f")
    q("first_block_rss", float(np.sqrt(first_rms[0] ** 2 + added_rms[0] ** 2)), ".2f")
    q("first_block_cosine", cosines[0], ".2f")
    q("first_cosine_range", [cosines.min(), cosines.max()], ".2f")
    q("rss_tolerance", RSS_TOLERANCE, ".0%")
    section.claim_bound(
        "after the first blocks, |stream RMS / root-sum-of-squares prediction - 1|",
        abs(first_rms[-1] / rss[-1] - 1),
        "<",
        RSS_TOLERANCE,
        fmt="g",
        key="within-10-of-the-root",
    )
    section.claim(
        "on the page's run the stream ends below the root-sum-of-squares prediction",
        bool(first_rms[-1] < rss[-1]),
        f"measured {first_rms[-1]:.4f}, root sum of squares {rss[-1]:.4f}",
        every_seed=False,
        key="a-little-below-the-root",
    )
    section.claim(
        "on the page's run every one of the first blocks adds a change that leans slightly "
        f"against the stream (cosine between -{NEAR_RIGHT_ANGLE:g} and 0)",
        bool(np.all((cosines < 0) & (cosines > -NEAR_RIGHT_ANGLE))),
        f"cosines {np.round(cosines, 4).tolist()}",
        every_seed=False,
        key="leans-slightly-against-the-stream",
    )
    section.claim(
        f"every addition of the first blocks is within {NEAR_RIGHT_ANGLE:g} of a right angle "
        f"(|cosine| < {NEAR_RIGHT_ANGLE:g})",
        bool(np.all(np.abs(cosines) < NEAR_RIGHT_ANGLE)),
        f"cosines {np.round(cosines, 4).tolist()}",
        key="nearly-at-right-angles",
    )

    # Gradients: first block over last block, for every depth.
    ratios = {
        p: np.array([probes[p][d]["grad_rms"][1] / probes[p][d]["grad_rms"][-1] for d in DEPTHS]) for p in PLACEMENTS
    }
    q("depths", DEPTHS, "d")
    # Each element named by its placement and depth, as the page's table reads it.
    q("grad_ratio_pre", ratios[PRE], ".2f", unit="times", runs=[(LABELS[PRE], f"{d}") for d in DEPTHS])
    q("grad_ratio_post", ratios[POST], ".2f", unit="times the gradient", runs=[(LABELS[POST], f"{d}") for d in DEPTHS])
    section.sweep_claim(
        "pre-norm: the first block's gradient RMS is at least the last block's",
        {d: bool(r >= 1) for d, r in zip(DEPTHS, ratios[PRE])},
        {d: f"{r:.3g}" for d, r in zip(DEPTHS, ratios[PRE])},
        over="depth",
        key="more-gradient-at-every-depth",
    )
    section.sweep_claim(
        "pre-norm's first/last gradient ratio is above post-norm's",
        {d: bool(a > b) for d, a, b in zip(DEPTHS, ratios[PRE], ratios[POST])},
        {d: f"{a:.3g} against {b:.3g}" for d, a, b in zip(DEPTHS, ratios[PRE], ratios[POST])},
        over="depth",
        key="above-post-norm-at-every-depth",
    )
    section.claim("post-norm's ratio falls on both sides of 1", bool(ratios[POST].min() < 1 < ratios[POST].max()))

    # The stack the learning-rate sweep trains (rng(SWEEP_SEED), 120 rows,
    # squared error) is not one of the depth stacks: its own first/last ratio
    # of the stream gradient at the start is measured here.
    sweep_ratio = {}
    for placement in PLACEMENTS:  # the training gradients, hand and autograd
        stack = StackedRuns(placement, SWEEP_BLOCKS, 1, N_ROWS)
        stack.load(sweep_weights)
        stream_grads = np.empty((SWEEP_BLOCKS + 1, 1, N_ROWS, WIDTH))
        stack.backward(x, (stack.forward(x) - y) * (2.0 / N_ROWS), stream_grads)
        auto, auto_streams = torch_stack(placement, sweep_weights, x, y)
        hand = np.concatenate([g.ravel() for g in (stack.g_in, stack.g1, stack.g2, stack.g_out)])
        auto = np.concatenate([g.ravel() for g in auto])
        scale = float(np.max(np.abs(auto)))
        section.agree(
            f"{placement}-norm: first MSE gradients of every weight, hand and autograd (relative to the largest)",
            hand / scale,
            auto / scale,
            atol=AUTOGRAD_RTOL,
        )
        stream_scale = float(np.max(np.abs(auto_streams)))
        section.agree(
            f"{placement}-norm: first MSE stream gradients of the swept stack, hand and autograd "
            f"(relative to the largest)",
            stream_grads[:, 0] / stream_scale,
            auto_streams.reshape(stream_grads[:, 0].shape) / stream_scale,
            atol=AUTOGRAD_RTOL,
        )
        grad_rms = np.sqrt(np.mean(stream_grads[:, 0] ** 2, axis=(1, 2)))
        sweep_ratio[placement] = grad_rms[1] / grad_rms[-1]
    q("sweep_grad_ratio_post", sweep_ratio[POST], ".2f", unit="times the squared-error")
    q("sweep_grad_ratio_pre", sweep_ratio[PRE], ".2f", unit="times")
    section.claim(
        f"in the swept stack at the start, post-norm's first block gets more than "
        f"{FIRST_BLOCK_GRADIENT_SHARE:g} of the squared-error gradient its last gets",
        sweep_ratio[POST] > FIRST_BLOCK_GRADIENT_SHARE,
        f"ratio {sweep_ratio[POST]:.3g}",
        key="more-than-half-as-much",
    )
    section.claim(
        "on the page's run, in the swept stack at the start, post-norm's first block gets "
        "less squared-error gradient than its last",
        sweep_ratio[POST] < 1,
        f"ratio {sweep_ratio[POST]:.3g}",
        every_seed=False,
        key="post-norm-first-block-gets-less-page-run",
    )
    section.claim(
        "in the swept stack at the start, pre-norm's first block gets more squared-error gradient than its last",
        sweep_ratio[PRE] > 1,
        f"ratio {sweep_ratio[PRE]:.3g}",
    )
    return {
        "probes": probes,
        "ratios": ratios,
        "first_stream_rms": first_rms,
        "first_added_rms": added_rms,
        "first_rss": rss,
    }


# The learning-rate sweep: each placement's runs side by side, the run of each
# placement also trained alone (stacked runs must equal runs alone), and a
# short pair where one run turns non-finite.
SWEEP_RUNS = {
    PRE: (list(RATES), [0] * len(RATES)),
    POST: (list(RATES) + [WARMUP_RATE], [0] * len(RATES) + [WARMUP_STEPS]),
}
ALONE_CHECKS = {PRE: 0, POST: len(RATES)}


def independent_runs(section) -> list[tuple]:
    """The learning-rate sweep (nearly all of the section's arithmetic), the
    longer placement first, then the short checks. The runs share no arrays,
    so how they are spread over processes changes no bit."""
    x, y, _ = make_data(section)
    weights = stack_weights(section, SWEEP_SEED, SWEEP_BLOCKS)
    steps = section.choose(full=STEPS, reduced=REDUCED_STEPS)
    runs = [(train_side_by_side, (p, weights, x, y, *SWEEP_RUNS[p], steps)) for p in (POST, PRE)]
    runs += [
        (train_side_by_side, (p, weights, x, y, SWEEP_RUNS[p][0][k : k + 1], SWEEP_RUNS[p][1][k : k + 1], ALONE_STEPS))
        for p, k in ALONE_CHECKS.items()
    ]
    runs += [(train_side_by_side, (PRE, weights, x, y, [RATES[0], HUGE_RATE], [0, 0], MASK_STEPS))]
    return runs


def compute(section, trained: list[np.ndarray]):
    q = section.quote

    # --- Data ---------------------------------------------------------------
    x, y, stream = make_data(section)
    var_y = float(np.var(y))
    q("n_rows", N_ROWS, "d")
    q("d_in", D_IN, "d")
    q("data_seed", DATA_SEED, "d")
    q("var_y", var_y, ".3f")
    q("tanh_gain", TANH_GAIN, "g")
    q("cross_weight", CROSS_WEIGHT, ".1f")
    q("norm_eps", NORM_EPS, power_of_ten)
    q("width", WIDTH, "d")
    q("hidden", HIDDEN, "d")

    sweep_weights = stack_weights(section, SWEEP_SEED, SWEEP_BLOCKS)
    results = compute_by_hand_and_through_depth(section, x, y, stream, sweep_weights)
    steps = section.choose(full=STEPS, reduced=REDUCED_STEPS)
    runs, checks = SWEEP_RUNS, ALONE_CHECKS
    losses = dict(zip((POST, PRE), trained[:2]))
    alone = dict(zip(checks, trained[2:4]))
    masked = trained[4]

    # --- The learning-rate sweep ----------------------------------------------
    # Stacked runs equal runs alone (a cheap prefix: the same arithmetic on
    # the same numbers gives the same bits, step after step).
    for placement, k in checks.items():
        rates, warmups = runs[placement]
        section.agree(
            f"{placement}-norm at lr {rates[k]:g} (warmup {warmups[k]}): side by side and alone, "
            f"first {ALONE_STEPS} losses",
            losses[placement][k, :ALONE_STEPS],
            alone[placement][0],
        )
    section.claim(
        "a run whose loss turns non-finite stops and leaves its neighbour untouched",
        bool(np.isnan(masked[1, -1])) and np.array_equal(masked[0], losses[PRE][0, :MASK_STEPS]),
    )

    # Sensitivity: a converged loss of 1e-8 to 1e-4 carries the rounding of
    # every step, and correct implementations can end up to a factor of ten
    # apart (the page spec's note; a hand-written numpy Adam and torch's
    # fused Adam happened to agree to three digits here). Such losses are
    # quoted as the power of ten they are below and pinned with rel_tol 0.9,
    # which allows a factor of ten. Losses near var(y) are robust, printed to
    # three decimals, and the exact text comparison pins them.
    finite_runs = {p: bool(np.all(np.isfinite(losses[p]))) for p in PLACEMENTS}
    scores = {p: np.array([score_of(row) for row in losses[p]]) for p in PLACEMENTS}
    n = len(RATES)
    q("sweep_seed", SWEEP_SEED, "d")
    q("sweep_blocks", SWEEP_BLOCKS, "d")
    q("steps", steps, "d", unit="steps")
    q("last_steps", LAST_STEPS, "d", unit="steps")
    q("rates", RATES, "g")
    q("adam_beta1", BETA1, "g")
    q("adam_beta2", BETA2, "g")
    q("adam_eps", ADAM_EPS, power_of_ten)
    q("score_pre", scores[PRE], loss_text, rel_tol=0.9, runs=[(LABELS[PRE], f"{r:g}") for r in RATES])
    q("score_post", scores[POST][:n], loss_text, rel_tol=0.9, runs=[(LABELS[POST], f"{r:g}") for r in RATES])
    q("warmup_steps", WARMUP_STEPS, "d", unit="steps")
    q("warmup_rate", WARMUP_RATE, "g")
    q("score_warmup", scores[POST][n], loss_text, rel_tol=0.9, run=(LABELS[POST], f"{WARMUP_RATE:g}", "warmup"))
    q("collapse_tol", COLLAPSE_TOL, ".0%")
    q("far_below", FAR_BELOW, ".0%")
    q("warmup_target", WARMUP_TARGET, power_of_ten)

    section.claim("no run's loss became non-finite", all(finite_runs.values()), key="no-run-became-non-finite")
    # Restated from the robustness report (issue 12): post-norm's collapse at
    # 0.03 held at every seed and numeric variant; at 0.01 it holds on the
    # page's run under every variant, but at seed offset 2 post-norm ends at
    # 0.396 of var(y) 0.653 (pinned; other BLAS kernels give other values):
    # rounding and the seed decide it there.
    i03 = section.index_of(RATES, COLLAPSE_RATE, "RATES")
    if i03 is not None:
        section.claim_bound(
            f"post-norm at lr {COLLAPSE_RATE:g}: |score / var(y) - 1|",
            abs(scores[POST][i03] / var_y - 1),
            "<=",
            COLLAPSE_TOL,
            fmt="g",
            key="at-0-03-post-norm",
        )
    i01 = section.index_of(RATES, EDGE_RATE, "RATES")
    if i01 is not None:
        section.claim_bound(
            f"post-norm at lr {EDGE_RATE:g} on the page's run: |score / var(y) - 1|",
            abs(scores[POST][i01] / var_y - 1),
            "<=",
            COLLAPSE_TOL,
            fmt="g",
            every_seed=False,
            key="post-norm-collapses-at-0-01-page-run",
        )
        section.claim_bound(
            f"at lr {EDGE_RATE:g}, post-norm's score / pre-norm's score",
            scores[POST][i01] / scores[PRE][i01],
            ">",
            POST_PRE_SCORE_FLOOR,
            fmt="g",
            key="more-than-ten-times",
        )
        section.claim(
            f"pre-norm at lr {EDGE_RATE:g} ends far below var(y) (under {FAR_BELOW:.0%} of it)",
            scores[PRE][i01] < FAR_BELOW * var_y,
        )
    section.sweep_claim(
        f"pre-norm keeps training (ends under {KEEPS_TRAINING:.0%} of var(y))",
        {r: bool(scores[PRE][i] < KEEPS_TRAINING * var_y) for i, r in enumerate(RATES)},
        {r: f"{scores[PRE][i] / var_y:.3g} of var(y)" for i, r in enumerate(RATES)},
        over="learning rate",
        key="pre-norm-keeps-training",
    )
    small = [i for i, r in enumerate(RATES) if r < EDGE_RATE]
    section.sweep_claim(
        f"both placements train (every score under {FAR_BELOW:.0%} of var(y))",
        {RATES[i]: bool(max(scores[PRE][i], scores[POST][i]) < FAR_BELOW * var_y) for i in small},
        over="learning rate",
        key="small-rates-both-train",
    )
    # What warmup does at every seed: post-norm at its rate trains for a while
    # (its lowest loss at any step falls under a tenth of var(y)), where
    # without warmup it never leaves the collapse level.
    section.claim(
        f"with warmup, post-norm at {WARMUP_RATE:g} trains for a while (some step under {KEEPS_TRAINING:.0%} of var(y))",
        float(np.nanmin(losses[POST][n])) < KEEPS_TRAINING * var_y,
        key="let-post-norm-train-for",
    )
    # The page's own run: these hold at seed offset 0 and the prose says that
    # other seeds can differ (the seed report shows where).
    section.claim(
        f"warmup brings post-norm at {WARMUP_RATE:g} below {WARMUP_TARGET:g}",
        scores[POST][n] < WARMUP_TARGET,
        every_seed=False,
        key="warmup-rescued-post-norm-on",
    )
    i_low = section.index_of(RATES, LOW_RATE, "RATES")
    if i_low is not None:
        section.claim(
            f"at lr {LOW_RATE:g} pre-norm ends lower than post-norm",
            scores[PRE][i_low] < scores[POST][i_low],
            every_seed=False,
            key="at-0-001-pre-norm",
        )
    i_order = section.index_of(RATES, ORDER_RATE, "RATES")
    if i_order is not None:
        section.claim(
            f"at lr {ORDER_RATE:g} post-norm ends lower than pre-norm",
            scores[POST][i_order] < scores[PRE][i_order],
            every_seed=False,
            key="at-0-003-the-order",
        )
    section.claim(
        "pre-norm's loss rises with the learning rate",
        bool(np.all(np.diff(scores[PRE]) > 0)),
        key="a-higher-rate-always-gave",
    )
    results.update(scores=scores, var_y=var_y)
    return results


# ---------------------------------------------------------------------------
# Figures.


COLOURS = {PRE: PALETTE["blue"], POST: PALETTE["orange"]}


def draw(section, results):
    t, texts = section.text, section.texts
    grey = PALETTE["grey"]

    # 1. The stream as a running total: the first pre-norm blocks.
    def running_total_figure():
        phone = on_phone()
        # On a phone the bars lie down, one position a row: seven pairs of
        # bars with their values do not fit side by side in its width.
        fig = new_figure(8.4, 3.6 + (2.2 if phone else 0.0), margins=(1.0 if phone else 0.55, 0.47, 0.05, 0.44))
        ax = fig.add_subplot()
        n = FIRST_BLOCKS
        stream_rms = results["first_stream_rms"]
        added_rms = results["first_added_rms"]
        rss = results["first_rss"]
        positions = np.arange(n + 1)

        def bars(at, length, **style):
            return ax.barh(at, length, height=0.38, **style) if phone else ax.bar(at, length, width=0.38, **style)

        def mark(at, value, text, **style):  # a value label past the end of its bar or dash
            if phone:
                ax.text(value + 0.04, at, text, ha="left", va="center", **style)
            else:
                ax.text(at, value + 0.04, text, ha="center", va="bottom", **style)

        bars(positions - 0.2, stream_rms, color=COLOURS[PRE], label="RMS of the stream")
        bars(positions[1:] + 0.2, added_rms, color=PALETTE["sky"], label="RMS of what the block adds")
        # The prediction for additions at right angles to the stream, drawn as
        # short dashes beyond each stream bar (clear of the value labels).
        for i in range(n + 1):
            across, along = [i - 0.39, i - 0.01], [rss[i], rss[i]]
            ax.plot(
                *((along, across) if phone else (across, along)),
                color=grey,
                ls="--",
                lw=1.4,
                label="if each addition were at right angles: √(sum of squares)" if i == 0 else None,
            )
        for i, text in enumerate(texts("first_stream_rms")):
            at = (stream_rms[i] / 2, i - 0.2) if phone else (i - 0.2, stream_rms[i] / 2)
            ax.text(*at, text, ha="center", va="center", fontsize=9, color="white", fontweight="bold")
        for i, text in enumerate(texts("first_rss")[1:], start=1):
            mark(i - 0.2, rss[i], text, fontsize=8.5, color=grey)
        for i, text in enumerate(texts("first_added_rms")):
            mark(i + 1 + 0.2, added_rms[i], text, fontsize=8.5)
        names = ["start"] + [f"after{' ' if phone else chr(10)}block {i}" for i in range(1, n + 1)]
        if phone:  # the legend above the first row
            ax.set_yticks(positions, names)
            ax.set_xlabel("RMS")
            ax.set_ylim(n + 0.6, -3.2)
            ax.set_xlim(0, 2.6)
        else:
            ax.set_xticks(positions, names)
            ax.set_ylabel("RMS")
            ax.set_ylim(0, 2.6)
        ax.legend(loc="upper left", fontsize=8.5)
        ax.set_title(
            f"Six additions take the stream from {t('first_stream_rms', 0)} to {t('first_stream_rms', n)}, "
            f"a little below\nthe {t('first_rss', n)} that additions at right angles would give",
            loc="left",
        )
        return fig

    section.save_figure(running_total_figure, "running_total")

    # 2. One block, four numbers, both placements.
    def one_block_figure():
        phone = on_phone()
        # On a phone the three panels stand in one column, W last.
        fig = new_figure(
            8.4,
            4.6,
            margins=(0.04, 0.04, 0.04, 0.25),
            grid=(2, 2),
            wspace=0.08,
            hspace=0.28,
            suptitle=f"The same block in two places: the outputs differ by up to {t('block_largest_difference')}",
        )
        grid = (
            fig.add_gridspec(3, 1, height_ratios=[5, 5, 4])
            if phone
            else fig.add_gridspec(2, 2, width_ratios=[3.2, 1.0])
        )
        pre_fill = [PALETTE["light"], "#DDE9F5", "#DDE9F5", "#DDE9F5", "#CFE3F3"]
        post_fill = [PALETTE["light"], "#F8E8C8", "#F8E8C8", "#F8E8C8", "#F3D9A6"]
        ax = fig.add_subplot(grid[0] if phone else grid[0, 0])
        draw_cell_rows(
            ax,
            [
                ("stream x", texts("block_x")),
                (f"copy ÷ RMS ({t('block_x_rms')})", texts("block_pre_normed")),
                ("relu", texts("block_pre_relu")),
                ("× W: block output", texts("block_pre_added")),
                ("x + block output", texts("block_pre_out")),
            ],
            fills=pre_fill,
            label_width=2.3,
        )
        ax.set_title(
            f"Pre-norm: x + relu(norm(x))·W, output RMS {t('block_pre_out_rms')}", loc="left", color=COLOURS[PRE]
        )
        ax = fig.add_subplot(grid[1] if phone else grid[1, 0])
        draw_cell_rows(
            ax,
            [
                ("stream x", texts("block_x")),
                ("relu", texts("block_post_relu")),
                ("× W: block output", texts("block_post_added")),
                ("x + block output", texts("block_post_sum")),
                (f"÷ RMS ({t('block_post_sum_rms')})", texts("block_post_out")),
            ],
            fills=post_fill,
            label_width=2.3,
        )
        ax.set_title(
            f"Post-norm: norm(x + relu(x)·W), output RMS {t('block_post_out_rms')}", loc="left", color="#A06A00"
        )
        ax = fig.add_subplot(grid[2] if phone else grid[:, 1])
        w_texts = texts("block_w")
        draw_cell_rows(
            ax,
            [("", w_texts[i * STREAM_LENGTH : (i + 1) * STREAM_LENGTH]) for i in range(STREAM_LENGTH)],
            label_width=0.1,
            fontsize=9,
        )
        if not phone:
            ax.set_ylim(STREAM_LENGTH * 2.6, -0.1)  # cells as tall as the rows beside them
        ax.set_title(f"W, rng({t('block_seed')})", loc="left")
        return fig

    section.save_figure(one_block_figure, "one_block")

    # 3. Through depth: stream size forwards, gradient ratio backwards.
    def depth_figure():
        fig = new_figure(8.4, 3.5, margins=(0.41, 0.46, 0.05, 0.44), grid=(1, 2), wspace=0.46)
        left, right = fig.subplots(1, 2)
        probes = results["probes"]
        blocks = np.arange(DEPTH_BLOCKS + 1)
        for placement in PLACEMENTS:
            left.plot(
                blocks, probes[placement][DEPTH_BLOCKS]["stream_rms"], color=COLOURS[placement], label=LABELS[placement]
            )
        end = probes[PRE][DEPTH_BLOCKS]["stream_rms"][-1]
        left.annotate(
            t("pre_stream_rms_end"),
            (DEPTH_BLOCKS, end),
            xytext=(-4, 4),
            textcoords="offset points",
            ha="right",
            va="bottom",
            color=COLOURS[PRE],
        )
        left.set_xlabel(f"block (stack of {t('depth_blocks')} blocks, {t('depth_rows')} rows)")
        left.set_ylabel("RMS of the stream after the block")
        left.set_ylim(*nice_limits([0.0, float(t("pre_stream_rms_end")) * 1.12], pad=0.0))
        left.set_xlim(0, DEPTH_BLOCKS)
        left.legend(loc="upper left")
        left.set_title("Forwards: pre-norm's stream grows,\npost-norm's stays at RMS one", loc="left")
        depths = np.array(DEPTHS)
        for placement in PLACEMENTS:
            right.plot(
                depths,
                results["ratios"][placement],
                color=COLOURS[placement],
                marker="o",
                ms=4,
                label=LABELS[placement],
            )
        right.axhline(1.0, color=grey, lw=1.0, ls=":")
        log_axis(right, "x", ticks=depths, base=2, labels="plain")
        ratios = np.concatenate([results["ratios"][p] for p in PLACEMENTS])
        low, high = nice_limits([ratios.min() / 1.3, ratios.max() * 1.3], log=True, pad=0.0)
        right.set_ylim(low, high)
        log_axis(
            right, "y", ticks=[v for v in (0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32) if low <= v <= high], labels="plain"
        )
        right.set_xlabel("blocks in the stack")
        right.set_ylabel("gradient RMS, first block ÷ last")
        right.legend(loc="upper left")
        right.set_title("Backwards: pre-norm's first block gets\nmore gradient than its last", loc="left")
        return fig

    section.save_figure(depth_figure, "depth")

    # 4. The learning-rate sweep.
    def lr_sweep_figure():
        fig = new_figure(8.4, 3.9, margins=(0.81, 0.46, 0.05, 0.44))
        ax = fig.add_subplot()
        rates = np.array(RATES)
        scores = results["scores"]
        n = len(RATES)
        for placement in PLACEMENTS:
            ax.plot(rates, scores[placement][:n], color=COLOURS[placement], marker="o", ms=5, label=LABELS[placement])
        var_y = float(t("var_y"))  # the registered, rounded value: no digit below the print moves a pixel
        ax.axhline(var_y, color=grey, ls="--", lw=1.2)
        ax.text(rates[0], var_y * 1.25, f"predict the mean: var(y) = {t('var_y')}", color=grey, va="bottom", fontsize=9)
        ax.plot(
            [WARMUP_RATE],
            [scores[POST][n]],
            ls="none",
            marker="*",
            ms=13,
            color=PALETTE["green"],
            label=f"post-norm, warmup over the first {t('warmup_steps')} steps",
        )
        log_axis(ax, "x", labels="plain")
        ax.set_xticks(rates, texts("rates"))
        log_axis(ax, "y", labels="power")
        # Whole decades, half a decade or more beyond every point: limits (and so
        # tick positions) that last-bit rounding of the losses cannot move.
        every = np.concatenate([scores[p] for p in PLACEMENTS] + [[var_y]])
        ax.set_ylim(10.0 ** math.floor(math.log10(every.min()) - 0.5), 10.0 ** math.ceil(math.log10(every.max()) + 0.5))
        ax.set_xlim(rates[0] / 1.4, rates[-1] * 1.4)
        ax.set_xlabel("learning rate (Adam)")
        ax.set_ylabel(f"lowest loss over the last\n{t('last_steps')} of {t('steps')} steps")
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, 0.86))
        if EDGE_RATE in RATES:
            finding = f"from lr {t('rates', RATES.index(EDGE_RATE))} post-norm collapses to the mean;\npre-norm keeps training"
        else:  # a notebook reader's rates: the page's finding is not drawn
            finding = "each placement's lowest loss at each rate"
        ax.set_title(f"{t('sweep_blocks')} blocks, the page's run: {finding}", loc="left")
        return fig

    section.save_figure(lr_sweep_figure, "lr_sweep")


if __name__ == "__main__":
    main(__name__)
