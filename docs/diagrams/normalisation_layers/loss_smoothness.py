"""Section 5, "A smoother loss surface": both networks of section 3 at
learning rate 0.1 for 300 steps; every 10 steps, before the update, probe
the loss surface along the current gradient g on the same batch.

For each step size eta in (0.025, 0.05, 0.1, 0.2) the probe measures how
fast the gradient changes, beta_hat = |grad L(w - eta g) - grad L(w)| / |eta g|,
and keeps the largest; it also keeps the spread (max - min) of the four
probed losses.

Then the same probe where the two networks differ: the plain network at
0.01, 0.03 and 0.3 (its first failing rate) and batch norm at 0.3 and 1, each probed along
the gradient every 10 steps like the first two, with the mean norm of the hidden weight
matrices beside it. Batch norm's output does not change when the weights
before it are scaled, so its gradient, and beta_hat, shrink as those
weights grow: the sweep tests that explanation beside the smoother
surface. Each run trains in its own forked worker.
"""

from __future__ import annotations


from pagekit.section import (  # first: it pins the numeric environment before numpy and torch load
    PALETTE,
    log_axis,
    main,
    new_figure,
    on_phone,
)

import numpy as np
import torch
from torch.nn import functional as F

from normalisation_layers import mlp
from normalisation_layers.sampling_error import standard_error

RATE, STEPS, EVERY = 0.1, 300, 10
REDUCED_STEPS = 10
ETAS = (0.025, 0.05, 0.1, 0.2)
AFTER = 50  # summaries over the probes after this step (strictly after: 60, 70, ...)
# The update direction differs from the gradient when their median cosine is below this.
COSINE_BELOW = 0.9
# On a quadratic with curvature lambda, plain gradient descent is stable while
# lr * lambda is below this, heavy-ball momentum mu while it is below this
# times (1 + mu); the script checks both edges by iterating one quadratic
# this far either side of them, for this many steps.
STABLE_BELOW = 2
BARELY_GREW = 0.05  # "its hidden weights barely grew": relative growth of the median norm, below
EDGE_MARGIN = 0.01
EDGE_STEPS = 2000
NETWORKS = ("plain", "batch norm")
KEYS = {"plain": "plain", "batch norm": "bn"}
# The sweep: where the networks differ. Batch norm at each rate (the run at
# RATE is the probed run above); the plain network at its first failing rate
# of section 3.
BN_RATES = (0.1, 0.3, 1)
# The plain network below its edge, to see whether its surface also follows
# the rate (it has no scale invariance for the weight growth to act through).
PLAIN_RATES = (0.01, 0.03, 0.1)
PLAIN_FAILING_RATE = 0.3
# The weight growth is claimed to predict less than this share of batch
# norm's fall of beta_hat between its two lower rates, and more between the
# two higher ones (on a log scale).
SHARE_SPLIT = 0.5


def smoothness_probe(model, xb, yb, etas=ETAS, direction=None):
    """The largest beta_hat over ``etas`` along ``direction`` (default: the
    current gradient g), beta_hat = |grad L(w - eta d) - g| / |eta d|, and the
    spread of the probed losses, on the batch (xb, yb). Leaves the weights,
    their gradients and batch norm's running statistics as found."""
    params = [p for p in model.parameters()]
    g = [p.grad.detach().clone() for p in params]
    d = g if direction is None else direction
    d_norm = torch.sqrt(sum((di * di).sum() for di in d))
    weights = [p.detach().clone() for p in params]
    buffers = [b.clone() for b in model.buffers()]
    betas, losses = [], []
    for eta in etas:
        with torch.no_grad():
            for p, w, di in zip(params, weights, d):
                p.copy_(w - eta * di)
        loss = F.cross_entropy(model(xb), yb)
        moved = torch.autograd.grad(loss, params)
        change = torch.sqrt(sum(((m - gi) ** 2).sum() for m, gi in zip(moved, g)))
        betas.append((change / (eta * d_norm)).item())
        losses.append(loss.item())
    with torch.no_grad():
        for p, w in zip(params, weights):
            p.copy_(w)
        for b, saved in zip(model.buffers(), buffers):
            b.copy_(saved)
    return max(betas), max(losses) - min(losses)


def quadratic_shrinks(lr_curvature: float, momentum: float, steps: int = EDGE_STEPS) -> bool:
    """Whether SGD with heavy-ball momentum, the arithmetic of
    mlp.train_mlp (v <- momentum v + g, w <- w - lr v), shrinks the weight of
    the quadratic L = lambda w^2 / 2 from 1 in ``steps`` steps, given lr *
    lambda. Momentum 0 is plain gradient descent."""
    w, v = 1.0, 0.0
    for _ in range(steps):
        v = momentum * v + w  # the gradient lambda w, in units of lambda (lr * lambda carries it)
        w -= lr_curvature * v
    return abs(w) < 1.0


def hidden_weight_norm(model) -> float:
    """The mean Frobenius norm of the hidden layers' weight matrices (every
    linear layer but the last): the weights batch norm's output ignores the
    scale of."""
    hidden = [m.weight.detach() for m in model.modules() if isinstance(m, torch.nn.Linear)][:-1]
    return float(torch.stack([w.norm() for w in hidden]).mean())


class Probe:
    """Every ``every`` steps, probes along the gradient g and along the
    update the optimiser is about to make, d = momentum * v + g (SGD with
    momentum steps by -lr * d). It follows the velocity v itself, with the
    same arithmetic as mlp.train_mlp, since the loop does not expose it; it
    keeps both probes, the cosine of g and d, and |d| / |g|."""

    def __init__(self, every=EVERY, along_update=True):
        self.every, self.along_update, self.velocity = every, along_update, None
        self.steps, self.betas, self.spreads, self.weight_norms = [], [], [], []
        self.update_betas, self.update_spreads, self.cosines, self.length_ratios = [], [], [], []

    def __call__(self, model, xb, yb, step):
        if not self.along_update:  # the gradient alone needs no velocity
            if step % self.every == 0:
                beta, spread = smoothness_probe(model, xb, yb)
                self.steps.append(step)
                self.betas.append(beta)
                self.spreads.append(spread)
                self.weight_norms.append(hidden_weight_norm(model))
            return
        grads = [p.grad.detach() for p in model.parameters()]
        if self.velocity is None:
            self.velocity = [torch.zeros_like(gi) for gi in grads]
        update = [v.mul(mlp.MOMENTUM).add(gi) for v, gi in zip(self.velocity, grads)]
        if step % self.every == 0:
            self.weight_norms.append(hidden_weight_norm(model))
            beta, spread = smoothness_probe(model, xb, yb)
            update_beta, update_spread = smoothness_probe(model, xb, yb, direction=update)
            dot = sum((u * gi).sum() for u, gi in zip(update, grads))
            g_norm = torch.sqrt(sum((gi * gi).sum() for gi in grads))
            u_norm = torch.sqrt(sum((u * u).sum() for u in update))
            self.steps.append(step)
            self.betas.append(beta)
            self.spreads.append(spread)
            self.update_betas.append(update_beta)
            self.update_spreads.append(update_spread)
            self.cosines.append((dot / (g_norm * u_norm)).item())
            self.length_ratios.append((u_norm / g_norm).item())
        self.velocity = update


def probed_run(network: str, steps: int, seed_offset: int, rate: float = RATE, along_update: bool = True) -> dict:
    """One training run with the probe every EVERY steps, along the gradient
    and (``along_update``) along the update."""
    probe = Probe(EVERY, along_update)
    result = mlp.run(network, rate, steps, seed_offset, probe=probe)
    result.update(
        steps=probe.steps,
        betas=probe.betas,
        spreads=probe.spreads,
        weight_norms=probe.weight_norms,
        update_betas=probe.update_betas,
        update_spreads=probe.update_spreads,
        cosines=probe.cosines,
        length_ratios=probe.length_ratios,
    )
    return result


def sweep_runs() -> list[tuple[str, float]]:
    """The sweep's (network, rate) runs beyond the two at RATE."""
    return (
        [("plain", PLAIN_FAILING_RATE)]
        + [("plain", rate) for rate in PLAIN_RATES if rate != RATE]
        + [("batch norm", rate) for rate in BN_RATES if rate != RATE]
    )


def independent_runs(section) -> list[tuple]:
    """One probed training run per network at RATE, then the sweep's, each
    on its own."""
    steps = section.choose(full=STEPS, reduced=REDUCED_STEPS)
    return [(probed_run, (n, steps, section.seed_offset)) for n in NETWORKS] + [
        (probed_run, (n, steps, section.seed_offset, rate, False)) for n, rate in sweep_runs()
    ]


def compute(section, trained: list[dict]):
    q = section.quote
    steps = section.choose(full=STEPS, reduced=REDUCED_STEPS)
    after = section.choose(full=AFTER, reduced=0)
    runs = dict(zip(NETWORKS, trained))
    swept = dict(zip(sweep_runs(), trained[len(NETWORKS) :]))
    section.progress(f"{len(trained)} probed runs done, {sum(r['cpu'] for r in trained):.1f} s CPU", force=True)
    q("rate", RATE, "g")
    q("momentum", mlp.MOMENTUM, ".1f")
    q("steps", steps, "d", unit="steps")
    q("every", EVERY, "d", unit="steps")
    q("etas", ETAS, "g")
    q("after", after, "d")
    edges = {
        "plain gradient descent": (STABLE_BELOW, 0.0),
        "heavy-ball momentum": (STABLE_BELOW * (1 + mlp.MOMENTUM), mlp.MOMENTUM),
    }
    guide, momentum_guide = (edges[name][0] / RATE for name in edges)
    q("guide", guide, ".0f")
    q("momentum_guide", momentum_guide, ".0f")
    q("guide_numerator", STABLE_BELOW, "d")
    q("momentum_guide_factor", edges["heavy-ball momentum"][0], ".1f")
    for name, (edge, momentum) in edges.items():
        section.claim(
            f"on a quadratic, {name} (momentum {momentum:g}) shrinks the weight with lr * curvature "
            f"{EDGE_MARGIN:g} below {edge:g} and grows it {EDGE_MARGIN:g} above",
            quadratic_shrinks(edge - EDGE_MARGIN, momentum) and not quadratic_shrinks(edge + EDGE_MARGIN, momentum),
            key={"plain gradient descent": "gd-edge", "heavy-ball momentum": "momentum-edge"}[name],
        )
    q("cosine_below", COSINE_BELOW, ".1f")
    medians, update_medians, largest, accuracy_errors = {}, {}, {}, []
    for network in NETWORKS:
        key, r = KEYS[network], runs[network]
        # The plain network at 0.1 is at its edge: at another seed, or with
        # other rounding, it diverges part-way (its accuracy quote is then
        # missing and the page check flags the prose). Batch norm's survival
        # is claimed; the probes of a diverged run stop where it stopped.
        if network == "batch norm":
            section.claim(
                f"the batch-norm network trains {steps} steps at lr {RATE:g} without diverging",
                r["diverged_at"] is None,
                f"diverged at {r['diverged_at']}",
                key="the-batch-norm-network-trains",
            )
        elif r["diverged_at"] is not None:
            q(f"{key}_diverged_step", r["diverged_at"], "d", unit="steps")
        s = np.array(r["steps"])
        b, ub = np.array(r["betas"]), np.array(r["update_betas"])
        # Just before a run diverges, a probe step can land where the loss
        # overflows: such probes are counted, and left out of the summaries.
        finite = (
            np.isfinite(b)
            & np.isfinite(np.array(r["spreads"]))
            & np.isfinite(ub)
            & np.isfinite(np.array(r["update_spreads"]))
        )
        if not finite.all():
            q(f"{key}_nonfinite_probes", int((~finite).sum()), "d")
        for name in ("steps", "betas", "spreads", "update_betas", "update_spreads", "cosines", "length_ratios"):
            r[name] = list(np.array(r[name])[finite])
        s, b, ub = s[finite], b[finite], ub[finite]
        # The first probe (step 0, where the update is the gradient) is left out
        # of the summaries; quoted so the page can say how high it starts.
        q(f"{key}_first_beta", b[0], ".3g")
        late_mask = s > after if (s > after).any() else np.ones_like(s, dtype=bool)
        late, update_late = b[late_mask], ub[late_mask]
        medians[network] = float(np.median(late))
        update_medians[network] = float(np.median(update_late))
        largest[network] = (float(late.max()), float(update_late.max()))
        q(f"{key}_beta_median", medians[network], ".3g")
        q(f"{key}_beta_max", late.max(), ".3g")
        q(f"{key}_update_beta_median", update_medians[network], ".3g")
        q(f"{key}_update_beta_max", update_late.max(), ".3g")
        q(f"{key}_above_guide", int((late > guide).sum()), "d")
        if network == "plain":
            q("first_late_probe", int(s[late_mask][0]), "d")
        q(f"{key}_update_above_guide", int((update_late > guide).sum()), "d")
        cosines, ratios = np.array(r["cosines"])[late_mask], np.array(r["length_ratios"])[late_mask]
        q(f"{key}_cosine_median", np.median(cosines), ".2f")
        q(f"{key}_cosine_range", (cosines.min(), cosines.max()), ".2f")
        q(f"{key}_length_ratio_median", np.median(ratios), ".1f", unit="times as long")
        section.claim(
            f"{network}: the update is longer than the gradient (median length ratio after step {AFTER} above 1)",
            float(np.median(ratios)) > 1,
            f"median ratio {np.median(ratios):.3g}",
            key=f"{key}-update-longer-than-gradient",
        )
        q(f"{key}_largest_spread", max(r["spreads"]), ".3g")
        spreads = np.array(r["spreads"])
        q(f"{key}_largest_spread_late", spreads[late_mask].max(), ".3g")
        if r["accuracy"] is not None:
            q(f"{key}_accuracy", r["accuracy"], ".3f")
            accuracy_errors.append(standard_error(r["correct"]))
        section.claim(
            f"{network}: the update direction is not the gradient's (median cosine after step "
            f"{AFTER} below {COSINE_BELOW:g})",
            float(np.median(cosines)) < COSINE_BELOW,
            f"median cosine {np.median(cosines):.3g}",
            key=f"{key}-median-cosine-below-0",
        )
    # Each accuracy is a mean over the validation points: the larger of the
    # two standard errors (batch norm's alone if the plain network diverged).
    q("accuracy_error_largest", max(accuracy_errors), ".3f")
    q("median_ratio", medians["plain"] / medians["batch norm"], ".1f", unit=("times larger", "times more"))
    q("update_median_ratio", update_medians["plain"] / update_medians["batch norm"], ".1f")
    section.claim(
        "batch norm's median beta_hat after step 50 is below the plain network's",
        medians["batch norm"] < medians["plain"],
        f"batch norm {medians['batch norm']:.4g}, plain {medians['plain']:.4g}",
        key="below-the-plain-network-s",
    )
    section.claim(
        "batch norm's median beta_hat along the update direction after step 50 is below the plain network's",
        update_medians["batch norm"] < update_medians["plain"],
        f"batch norm {update_medians['batch norm']:.4g}, plain {update_medians['plain']:.4g}",
        key="along-the-gradient-and-along",
    )
    section.claim(
        "batch norm's largest beta_hat after step 50 stays below 2/lr along both directions",
        max(largest["batch norm"]) < guide,
        f"largest {largest['batch norm']}, guide {guide:g}",
        key="batch-norm-s-largest-after",
    )
    # The momentum guide 2(1 + momentum)/lr is not claimed either way: how
    # close a surviving plain network comes to it is decided by rounding (on
    # another CPU's kernels this very run reached 38.8, and under torch
    # without AVX 42.4, both surviving); across_seeds reports those runs.
    section.claim(
        "along the gradient, the plain network's largest beta_hat after step 50 is above 2/lr",
        largest["plain"][0] > guide,
        f"largest {largest['plain'][0]:.4g}, guide {guide:g}",
        key="above-20-along-the-gradient",
    )
    sweep = sweep_summaries(section, runs, swept, after)
    return {"runs": runs, "sweep": sweep}


def late_medians(run: dict, after: int) -> tuple[float, float]:
    """A probed run's median beta_hat along the gradient and median hidden
    weight norm, over its probes after step ``after``."""
    s = np.array(run["steps"])
    late = s > after if (s > after).any() else np.ones_like(s, dtype=bool)
    betas = np.array(run["betas"])[late]
    median = float(np.median(betas[np.isfinite(betas)])) if np.isfinite(betas).any() else np.nan
    return median, float(np.median(np.array(run["weight_norms"])[late]))


def sweep_summaries(section, runs: dict, swept: dict, after: int) -> dict:
    """The sweep's quotes and claims: batch norm's smoothness and hidden
    weight norm at each rate, the step-0 probe times each rate against the
    momentum edge, and the weight growth's share of the fall in beta_hat."""
    q = section.quote
    edge = STABLE_BELOW * (1 + mlp.MOMENTUM)
    q("bn_rates", BN_RATES, "g")
    q("plain_failing_rate", PLAIN_FAILING_RATE, "g")
    failing = swept["plain", PLAIN_FAILING_RATE]
    if failing["diverged_at"] is not None:
        q("plain_failing_diverged_step", failing["diverged_at"], "d", unit="steps")
    q("plain_first_beta_times_failing_rate", failing["betas"][0] * PLAIN_FAILING_RATE, ".1f")
    bn = {rate: runs["batch norm"] if rate == RATE else swept["batch norm", rate] for rate in BN_RATES}
    medians, norms, trained = {}, {}, {}
    for rate in BN_RATES:
        trained[rate] = bn[rate]["diverged_at"] is None
        medians[rate], norms[rate] = late_medians(bn[rate], after)
    plain = {rate: runs["plain"] if rate == RATE else swept["plain", rate] for rate in PLAIN_RATES}
    plain_medians = {rate: late_medians(plain[rate], after) for rate in PLAIN_RATES}
    q("plain_rates", PLAIN_RATES, "g")
    q("plain_sweep_beta_median", [plain_medians[r][0] for r in PLAIN_RATES], ".3g")
    q("plain_sweep_weight_norm", [plain_medians[r][1] for r in PLAIN_RATES], ".1f")
    q("plain_first_beta_times_rate", runs["plain"]["betas"][0] * RATE, ".3g")
    plain_pairs = list(zip(PLAIN_RATES, PLAIN_RATES[1:]))
    section.sweep_claim(
        f"the plain network's median beta_hat after step {AFTER} is lower at the larger rate",
        {f"{a:g} to {b:g}": plain_medians[b][0] < plain_medians[a][0] for a, b in plain_pairs},
        {f"{a:g} to {b:g}": f"{plain_medians[a][0]:.4g} -> {plain_medians[b][0]:.4g}" for a, b in plain_pairs},
        over="pair of rates",
        key="plain-flatter-at-larger-rates",
    )
    (low, beta_low), (middle, beta_middle), (high, beta_high) = (
        (plain_medians[r][1], plain_medians[r][0]) for r in PLAIN_RATES
    )
    section.claim(
        f"the plain network's median beta_hat falls by a larger factor from {PLAIN_RATES[0]:g} to "
        f"{PLAIN_RATES[1]:g} than from {PLAIN_RATES[1]:g} to {PLAIN_RATES[2]:g}, while its median hidden "
        f"weight norm grows by under {BARELY_GREW:.0%} between the first two",
        beta_low / beta_middle > beta_middle / beta_high and middle < (1 + BARELY_GREW) * low,
        f"falls {beta_low / beta_middle:.3g} and {beta_middle / beta_high:.3g}; norms {low:.4g} -> {middle:.4g}",
        key="plain-flattened-most-where-weights-barely-grew",
    )
    section.claim(
        "the plain network's probe at step 0 is above the batch-norm network's",
        runs["plain"]["betas"][0] > runs["batch norm"]["betas"][0],
        f"{runs['plain']['betas'][0]:.3g} against {runs['batch norm']['betas'][0]:.3g}",
        key="bn-first-probe-below-plain",
    )
    section.claim(
        f"at lr {RATE:g} the plain network's step-0 beta_hat times the rate is above the heavy-ball edge "
        f"{edge:g}, yet it trains {STEPS} steps",
        bool(runs["plain"]["betas"][0] * RATE > edge and runs["plain"]["diverged_at"] is None),
        f"{runs['plain']['betas'][0] * RATE:.3g}",
        every_seed=False,
        key="plain-step-0-past-the-edge",
    )
    q("weight_norm_start", runs["batch norm"]["weight_norms"][0], ".1f")
    q("bn_sweep_beta_median", [medians[r] for r in BN_RATES], ".3g")
    q("bn_sweep_weight_norm", [norms[r] for r in BN_RATES], ".1f")
    q("bn_sweep_rate_times_beta", [r * medians[r] for r in BN_RATES], ".2f")
    q("bn_first_beta_times_rate", [bn[r]["betas"][0] * r for r in BN_RATES], ".3g")
    section.sweep_claim(
        "the batch-norm network trains without diverging",
        trained,
        over="learning rate",
        key="bn-trains-at-each-rate",
    )
    above = BN_RATES[1:]  # the rates above the plain network's last surviving one
    section.sweep_claim(
        f"batch norm's step-0 beta_hat times the rate is above the heavy-ball edge {edge:g}, yet it trains",
        {rate: bool(bn[rate]["betas"][0] * rate > edge and trained[rate]) for rate in above},
        {rate: f"{bn[rate]['betas'][0] * rate:.3g}" for rate in above},
        over="learning rate",
        key="step-0-past-the-edge",
    )
    pairs = list(zip(BN_RATES, BN_RATES[1:]))
    section.sweep_claim(
        f"batch norm's median beta_hat after step {AFTER} is lower at the larger rate",
        {f"{a:g} to {b:g}": medians[b] < medians[a] for a, b in pairs},
        {f"{a:g} to {b:g}": f"{medians[a]:.4g} -> {medians[b]:.4g}" for a, b in pairs},
        over="pair of rates",
        key="flatter-at-larger-rates",
    )
    section.sweep_claim(
        f"batch norm's median hidden weight norm after step {AFTER} is larger at the larger rate",
        {f"{a:g} to {b:g}": norms[b] > norms[a] for a, b in pairs},
        {f"{a:g} to {b:g}": f"{norms[a]:.4g} -> {norms[b]:.4g}" for a, b in pairs},
        over="pair of rates",
        key="weights-grow-at-larger-rates",
    )
    bn_growth = norms[BN_RATES[-1]] / norms[BN_RATES[0]]
    plain_growth = plain_medians[PLAIN_RATES[-1]][1] / plain_medians[PLAIN_RATES[0]][1]
    section.claim(
        "across its own three rates batch norm's median hidden weight norm grows by a larger factor than the "
        "plain network's across its three",
        bn_growth > plain_growth,
        f"{bn_growth:.3g} against {plain_growth:.3g}",
        key="bn-weights-grew-more-across-its-rates",
    )
    section.sweep_claim(
        f"the rate times batch norm's median beta_hat after step {AFTER} is below {STABLE_BELOW}",
        {rate: rate * medians[rate] < STABLE_BELOW for rate in BN_RATES},
        {rate: f"{rate * medians[rate]:.3g}" for rate in BN_RATES},
        over="learning rate",
        key="settles-below-the-edge",
    )
    # With the output fixed under a scaling of the weights, the curvature in
    # those weights scales as 1 / |W|^2: the weight growth alone predicts
    # this fall of beta_hat from the lowest rate to the highest.
    # Between each pair of rates: the fall of beta_hat, and the fall the
    # weight growth alone predicts ((norm ratio)^2).
    falls = [medians[a] / medians[b] for a, b in pairs]
    predicted = [(norms[b] / norms[a]) ** 2 for a, b in pairs]
    q("beta_fall", falls, ".2f", unit="times")
    q("weight_predicted_fall", predicted, ".2f", unit="times")
    # The share of each (logarithmic) fall the weight growth predicts.
    # (A reduced run probes only step 0, the same weights at every rate:
    # nothing falls, and there is no share to quote.)
    shares = [np.log(p) / np.log(f) if f != 1 else np.nan for p, f in zip(predicted, falls)]
    if np.all(np.isfinite(shares)):
        q("weight_share", shares, ".0%")
    section.claim(
        f"the weight growth alone predicts less than {SHARE_SPLIT:.0%} of batch norm's fall of beta_hat (on a log "
        f"scale) from lr {BN_RATES[0]:g} to {BN_RATES[1]:g}, and more from {BN_RATES[1]:g} to {BN_RATES[2]:g}",
        bool(shares[0] < SHARE_SPLIT < shares[-1]),
        f"shares {[round(x, 3) for x in shares]}",
        key="weight-growth-predicts-part",
    )
    return {"medians": medians, "norms": norms, "bn": bn, "plain": plain, "plain_failing": failing}


def draw(section, results):
    t = section.text
    runs = results["runs"]
    colours = {"plain": PALETTE["orange"], "batch norm": PALETTE["blue"]}

    def beta_figure():
        phone = on_phone()  # on a phone the legend stands under the axes, a line an entry
        fig = new_figure(8.4, 4.4 + (1.6 if phone else 0.0), margins=(0.75, 2.1 if phone else 0.5, 0.15, 0.3))
        ax = fig.add_subplot()
        values = []
        for network in NETWORKS:
            r, key = runs[network], KEYS[network]
            ax.plot(
                r["steps"],
                r["betas"],
                "-",
                color=colours[network],
                linewidth=1.4,
                label=f"{network}, along g: median {t(key + '_beta_median')}",
            )
            ax.plot(
                r["steps"],
                r["update_betas"],
                ":",
                color=colours[network],
                linewidth=1.4,
                label=f"{network}, along the update: median {t(key + '_update_beta_median')}",
            )
            values += [v for v in r["betas"] + r["update_betas"] if np.isfinite(v)]
        guide, momentum_guide = 2 / RATE, 2 * (1 + mlp.MOMENTUM) / RATE
        ax.axhline(guide, color=PALETTE["grey"], linestyle="--", linewidth=1)
        ax.axhline(momentum_guide, color=PALETTE["ink"], linestyle="-.", linewidth=1)
        # Whole decades around the data: the limits move only if a value crosses a power of ten.
        # One decade below the data holds the legend.
        low = 10.0 ** (np.floor(np.log10(min(values))) - 1)
        high = 10.0 ** np.ceil(np.log10(max(values + [momentum_guide]) * 1.5))
        ax.text(
            0.99,
            momentum_guide * 1.12,
            f"{t('momentum_guide_factor')}/η = {t('momentum_guide')}: heavy-ball momentum "
            f"μ = {t('momentum')} on a quadratic",
            color=PALETTE["ink"],
            fontsize=8.5,
            va="bottom",
            ha="right",
            transform=ax.get_yaxis_transform(),  # x in axes units: any number of steps
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5},
        )
        # On a phone both labels take two lines: this one goes under its line.
        ax.text(
            0.99,
            guide / 1.08 if on_phone() else guide * 1.08,
            f"{t('guide_numerator')}/η = {t('guide')}: plain gradient descent on a quadratic",
            color=PALETTE["grey"],
            fontsize=8.5,
            va="top" if on_phone() else "bottom",
            ha="right",
            transform=ax.get_yaxis_transform(),
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5},
        )
        log_axis(ax, "y", labels="power")
        ax.set_ylim(low, high)
        ax.set_xlim(0, int(t("steps")))
        ax.set_xlabel(f"training step (SGD, momentum {t('momentum')}, learning rate η = {t('rate')})")
        ax.set_ylabel("β̂, largest over the four probe steps")
        ax.legend(
            loc="upper left" if phone else "lower left",
            bbox_to_anchor=(-0.22, -0.28) if phone else None,
            fontsize=8,
            ncols=1 if phone else 2,
            title=f"medians of the probes after step {t('after')}",
            title_fontsize=8,
        )
        ax.set_title("With batch norm the gradient changes more slowly, along g and along the update", loc="left")
        return fig

    section.save_figure(beta_figure, "beta")
    draw_sweep(section, results["sweep"])


def draw_sweep(section, sweep):
    """Across the rates: each run's median beta_hat along the gradient after
    step AFTER (left) and median hidden weight norm (right) against its
    learning rate, for batch norm and for the plain network (which diverged
    at PLAIN_FAILING_RATE)."""
    t = section.text

    def rates_figure():
        fig = new_figure(8.4, 3.9, margins=(0.75, 0.55, 0.3, 0.55), grid=(1, 2))
        left, right = fig.subplots(1, 2, gridspec_kw={"wspace": 0.32})
        colours = {"plain": PALETTE["orange"], "batch norm": PALETTE["blue"]}
        series = {
            "plain": (PLAIN_RATES, "plain_sweep_beta_median", "plain_sweep_weight_norm"),
            "batch norm": (BN_RATES, "bn_sweep_beta_median", "bn_sweep_weight_norm"),
        }
        for network, (rates, beta_key, norm_key) in series.items():
            style = {"color": colours[network], "marker": "o", "markersize": 4.5, "linewidth": 1.3}
            for ax, key in ((left, beta_key), (right, norm_key)):
                values = [float(v) for v in section.texts(key)]
                ax.plot(rates, values, label=network, **style)
                for i, (rate, value) in enumerate(zip(rates, values)):
                    ax.annotate(
                        t(key, i),
                        (rate, value),
                        textcoords="offset points",
                        xytext=(0, 6),
                        ha="center",
                        fontsize=8,
                        color=colours[network],
                    )
        for ax in (left, right):
            log_axis(ax, "x", labels="plain")
            ax.set_xlim(0.006, 2)
            ax.set_xlabel("learning rate")
        left.axvline(PLAIN_FAILING_RATE, color=colours["plain"], linestyle=":", linewidth=1)
        left.text(
            PLAIN_FAILING_RATE * 1.08,
            0.97,
            f"plain diverged\nat {t('plain_failing_rate')}",
            transform=left.get_xaxis_transform(),
            va="top",
            fontsize=8,
            color=colours["plain"],
        )
        log_axis(left, "y", labels="plain")
        left.set_ylim(0.3, 60)
        left.set_ylabel(f"median β̂ after step {t('after')}")
        left.set_title("β̂ falls as the rate rises, in both", loc="left", fontsize=10)
        left.legend(loc="lower left", fontsize=8)
        if on_phone():
            right.margins(y=0.2)  # the values' labels clear of the title
        right.set_ylabel("median norm of the hidden weights")
        right.set_title("batch norm's hidden weights grow", loc="left", fontsize=10)
        right.legend(loc="upper left", fontsize=8)
        return fig

    section.save_figure(rates_figure, "rates")


if __name__ == "__main__":
    main(__name__)
