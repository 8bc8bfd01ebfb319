"""Section 4, "Is it covariate shift?": the networks of section 3 at learning
rates 0.1 and 0.3, plus two in which every batch-norm layer is followed, in
training only, by noise drawn afresh at every step (noisy_norms.py):
Santurkar et al.'s form (i.i.d. on every activation, its mean and spread
redrawn each step) and one random affine change per feature shared by the
batch. Both noises have the identity as their expected transform, so the
networks are evaluated without noise. The script also measures how far the
noise moves each layer's inputs from one step to the next: the change of
every feature's batch mean and batch standard deviation after each norm,
against the same measure in the plain batch-norm network.
"""

from __future__ import annotations

import time


from pagekit.section import (  # first: it pins the numeric environment before numpy and torch load
    PALETTE,
    main,
    new_figure,
    nice_limits,
)

import numpy as np
import torch

from normalisation_layers import mlp, noisy_norms
from normalisation_layers.batch_norm_learning_rate import (
    REDUCED_STEPS,
    STEPS,
    TRAINS,
    quote_accuracies,
    rate_key,
)
from normalisation_layers.norms import BatchNorm

RATES = (0.1, 0.3)
NETWORKS = ("plain", "batch norm", "activation noise", "feature noise")
KEYS = {"plain": "plain", "batch norm": "bn", "activation noise": "act", "feature noise": "feat"}
NOISY = ("activation noise", "feature noise")
# The noisy networks as the across-seeds table of section 10 names their rows.
NOISE_ROWS = {"activation noise": "noise on every activation", "feature noise": "noise per feature"}
NOISE_SEED = mlp.SHIFT_SEED  # one generator per network, shared by its 8 layers, seeded 1 + offset
# The noise must move every layer's inputs far more than batch norm's own
# training does: each noisy layer's step-to-step change of a feature's batch
# mean at least this many times the largest batch-norm layer's.
MOVES_FACTOR = 100


def build(network: str, seed_offset: int) -> mlp.MLP:
    """The network, its linear weights from ``torch.manual_seed(MODEL_SEED +
    offset)`` as in section 3 (the norms draw nothing when built), its noise
    from one generator seeded ``NOISE_SEED + offset``."""
    if network in ("plain", "batch norm"):
        return mlp.build(network, seed_offset)
    layer = {
        "activation noise": noisy_norms.ActivationNoiseBatchNorm,
        "feature noise": noisy_norms.FeatureNoiseBatchNorm,
    }[network]
    noise = torch.Generator().manual_seed(NOISE_SEED + seed_offset)
    torch.manual_seed(mlp.MODEL_SEED + seed_offset)
    return mlp.MLP(lambda width: layer(width, noise))


class InputMoves:
    """Forward hooks on every norm layer, in training: each step's batch mean
    and batch standard deviation (population) of every feature of its output,
    the input of the next layer."""

    def __init__(self, model):
        self.layers = [m for m in model.modules() if isinstance(m, BatchNorm)]
        self.means = [[] for _ in self.layers]
        self.stds = [[] for _ in self.layers]
        for i, layer in enumerate(self.layers):
            layer.register_forward_hook(self._hook(i))

    def _hook(self, i):
        def record(module, inputs, output):
            if module.training:
                with torch.no_grad():
                    self.means[i].append(output.mean(0))
                    self.stds[i].append(output.std(0, unbiased=False))

        return record

    def per_layer(self) -> tuple[list[float], list[float]]:
        """Per layer: the mean over steps and features of |change of the batch
        mean| and |change of the batch standard deviation| between consecutive
        steps."""
        mean_moves, std_moves = [], []
        for means, stds in zip(self.means, self.stds):
            m, s = torch.stack(means), torch.stack(stds)
            mean_moves.append(float((m[1:] - m[:-1]).abs().mean()))
            std_moves.append(float((s[1:] - s[:-1]).abs().mean()))
        return mean_moves, std_moves


def run(network: str, lr: float, steps: int, seed_offset: int) -> dict:
    """One training run (mlp.train_mlp, as in section 3), its validation
    accuracy in evaluation mode (no noise) and its layers' input moves."""
    start = time.process_time()
    x, y, x_val, y_val = mlp.clusters(seed_offset)
    model = build(network, seed_offset)
    moves = InputMoves(model)
    result = mlp.train_mlp(model, lr, x, y, steps, torch.Generator().manual_seed(mlp.BATCH_SEED + seed_offset))
    result["accuracy"] = None if result["diverged_at"] is not None else mlp.accuracy(model, x_val, y_val)
    if moves.layers and result["diverged_at"] is None:
        result["mean_moves"], result["std_moves"] = moves.per_layer()
    result["cpu"] = time.process_time() - start
    return result


def independent_runs(section) -> list[tuple]:
    """Every (network, rate) training run, each on its own, the slower
    noisy networks first."""
    steps = section.choose(full=STEPS, reduced=REDUCED_STEPS)
    return [(run, (n, r, steps, section.seed_offset)) for n in reversed(NETWORKS) for r in RATES]


def compute(section, trained: list[dict]):
    q = section.quote
    steps = section.choose(full=STEPS, reduced=REDUCED_STEPS)
    runs = {(n, r): res for (_, (n, r, *_)), res in zip(independent_runs(section), trained)}
    section.progress(f"{len(trained)} runs, {sum(r['cpu'] for r in trained):.1f} s CPU in the workers", force=True)

    q("rates", RATES, "g")
    q("steps", steps, "d")
    q("noise_seed", NOISE_SEED, "d")
    q("moves_factor", MOVES_FACTOR, "d", unit="times as much")
    q("trains_threshold", TRAINS, ".1f")
    r, spread = noisy_norms.ACTIVATION_MEAN_RANGE, noisy_norms.ACTIVATION_SPREAD_MAX
    q("act_scale_mean_range", (1 - r, 1 + r), ".1f")
    q("act_offset_mean_range", (-r, r), ".1f")
    q("act_spread_max", spread, ".1f")
    fr = noisy_norms.FEATURE_SCALE_RANGE
    q("feat_scale_range", (1 - fr, 1 + fr), ".1f")
    q("feat_offset_spread", noisy_norms.FEATURE_OFFSET_SPREAD, ".1f")

    accuracies = {n: quote_accuracies(q, runs, n, KEYS[n], RATES) for n in NETWORKS}
    plain, bn = accuracies["plain"], accuracies["batch norm"]
    for network in NOISY:
        key, noisy = KEYS[network], accuracies[network]
        where = [rate for rate, p, s in zip(RATES, plain, noisy) if not np.isfinite(p) and s > TRAINS]
        section.claim(
            f"the {network} network reaches validation accuracy above {TRAINS:g} at a rate "
            f"where the plain network diverges",
            bool(where),
            f"rates {where}; plain {plain.tolist()}; {network} {noisy.tolist()}",
            key="still-trained-at-0-3",
        )
        gain = noisy - bn  # NaN if the noisy network diverged
        for rate, value in zip(RATES, gain):
            if np.isfinite(value):
                q(f"{key}_gain_{rate_key(rate)}", value, ".3f")
        section.claim(
            f"the {network} network ends above batch norm's validation accuracy at both rates",
            bool(np.all(gain > 0)),
            f"{network} minus batch norm: {gain.tolist()}",
            key=f"{key}-above-batch-norm",
        )

    # How far each layer's inputs move between steps, at the lower rate (every network survives it).
    rate = min(RATES)
    bn_moves = runs["batch norm", rate]
    q("bn_mean_move_largest", max(bn_moves["mean_moves"]), ".3f")
    q("bn_std_move_largest", max(bn_moves["std_moves"]), ".3f")
    for network in NOISY:
        key, res = KEYS[network], runs[network, rate]
        q(f"{key}_mean_move_smallest", min(res["mean_moves"]), ".2f")
        q(f"{key}_std_move_smallest", min(res["std_moves"]), ".2f")
        ratio = min(res["mean_moves"]) / max(bn_moves["mean_moves"])
        section.claim(
            f"every {network} layer's batch means move at least {MOVES_FACTOR} times as much "
            f"per step as any batch-norm layer's, at lr {rate:g}",
            ratio >= MOVES_FACTOR,
            f"smallest noisy over largest batch norm: {ratio:.3g}",
            key="the-batch-means-of-every",
        )
    return {"accuracies": accuracies}


def draw(section, results):
    t = section.text
    acc = results["accuracies"]
    colours = {
        "plain": PALETTE["orange"],
        "batch norm": PALETTE["blue"],
        "activation noise": PALETTE["green"],
        "feature noise": PALETTE["purple"],
    }
    labels = {
        "plain": "plain",
        "batch norm": "batch norm",
        "activation noise": "noise on every activation",
        "feature noise": "noise per feature",
    }
    fig = new_figure(8.4, 3.5, margins=(0.85, 0.4, 0.15, 0.3))
    ax = fig.add_subplot()
    width = 0.2
    finite = np.concatenate([a[np.isfinite(a)] for a in acc.values()])
    _, high = nice_limits([0.0, *finite, 1.05], pad=0.04)  # room at the top for the legend
    for j, network in enumerate(NETWORKS):
        for i, rate in enumerate(RATES):
            x = i + (j - 1.5) * width
            value = acc[network][i]
            key = f"{KEYS[network]}_accuracy_{rate_key(rate)}"
            if np.isfinite(value):
                ax.bar(x, value, width * 0.92, color=colours[network], label=labels[network] if i == 0 else None)
                ax.text(x, value + 0.01 * high, t(key), ha="center", va="bottom", fontsize=8.5)
            else:
                ax.text(
                    x,
                    0.02 * high,
                    "diverged\nat step " + t(f"{KEYS[network]}_diverged_step_{rate_key(rate)}"),
                    ha="center",
                    va="bottom",
                    fontsize=8,
                    color=colours[network],
                )
    ax.set_xticks(range(len(RATES)), [f"learning rate {t('rates', i)}" for i in range(len(RATES))])
    ax.set_xlim(-0.6, len(RATES) - 0.4)
    ax.set_ylim(0.0, high)
    ax.set_ylabel("validation accuracy\n(evaluated without noise)")
    ax.legend(loc="upper center", ncols=4, fontsize=8.5)
    ax.set_title(
        f"With noise at every step, batch norm still trains at {t('rates', 1)}; the plain network diverges", loc="left"
    )
    section.save_figure(fig, "accuracy")


if __name__ == "__main__":
    main(__name__)
