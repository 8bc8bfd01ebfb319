"""Section 4, "Is it covariate shift?": the networks of section 3 across
batch norm's window of learning rates (0.1 to 3), plus two in which every
batch-norm layer is followed, in training only, by noise drawn afresh at
every step (noisy_norms.py): Santurkar et al.'s form (i.i.d. on every
activation, its mean and spread redrawn each step) and one random affine
change per feature shared by the batch. Both noises have the identity as
their expected transform, so the networks are evaluated without noise.

Each accuracy carries its standard error over the validation points, and
each noisy network's difference from batch norm its paired standard error
(sampling_error.py). The script also measures how far each layer's inputs
move from one step to the next (the change of every feature's batch mean,
in units of its batch standard deviation), in the noisy networks and, as
the yardstick, in the plain network: the covariate shift batch norm was
said to remove.
"""

from __future__ import annotations

import math
import time


from pagekit.section import (  # first: it pins the numeric environment before numpy and torch load
    PALETTE,
    main,
    new_figure,
    on_phone,
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
from normalisation_layers.sampling_error import TIE_ERRORS, paired_difference, standard_error

RATES = (0.1, 0.3, 0.5, 1, 3)
NETWORKS = ("plain", "batch norm", "activation noise", "feature noise")
KEYS = {"plain": "plain", "batch norm": "bn", "activation noise": "act", "feature noise": "feat"}
TABLE_ROWS = {"activation noise": "noise on every activation", "feature noise": "noise per feature"}
NOISY = ("activation noise", "feature noise")
# The noisy networks as the across-seeds table of section 10 names their rows.
NOISE_ROWS = {"activation noise": "noise on every activation", "feature noise": "noise per feature"}
NOISE_SEED = mlp.SHIFT_SEED  # one generator per network, shared by its 8 layers, seeded 1 + offset
# The noise is claimed to cost no accuracy at the rates up to this one, and
# to cost it at COST_RATE, the top of batch norm's window of section 3.
NO_COST_UP_TO = 0.3
COST_RATE = 1
SEEDS_DISAGREE_RATE = 0.5  # between the two, the seeds and the kernels disagree on the noise's effect
# The moves are compared at this rate, the plain network's last surviving one.
MOVES_RATE = 0.1


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
    """Forward hooks, in training, on what each hidden layer passes to its
    ReLU and on to the next layer: the output of every norm layer, or in the
    plain network of every hidden linear layer. Each step's batch mean and
    batch standard deviation (population) of every feature."""

    def __init__(self, model):
        norms = [m for m in model.modules() if isinstance(m, BatchNorm)]
        self.layers = norms or [m for m in model.modules() if isinstance(m, torch.nn.Linear)][:-1]
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

    def per_layer(self) -> list[float]:
        """Per layer: the mean over steps and features of |change of the batch
        mean| between consecutive steps, in units of the feature's batch
        standard deviation (the mean of the two steps')."""
        moves = []
        for means, stds in zip(self.means, self.stds):
            m, s = torch.stack(means), torch.stack(stds)
            moves.append(float(((m[1:] - m[:-1]).abs() / ((s[1:] + s[:-1]) / 2)).mean()))
        return moves


def run(network: str, lr: float, steps: int, seed_offset: int) -> dict:
    """One training run (mlp.train_mlp, as in section 3), its validation
    accuracy in evaluation mode (no noise), which validation points it got
    right, and, for the noisy networks and the plain one at MOVES_RATE, its
    layers' input moves. The other plain and batch-norm runs are section 3's
    own, shared with it (mlp.shared_run)."""
    if network == "batch norm" or (network == "plain" and lr != MOVES_RATE):
        return mlp.shared_run(network, lr, steps, seed_offset)
    start = time.process_time()
    x, y, x_val, y_val = mlp.clusters(seed_offset)
    model = build(network, seed_offset)
    moves = InputMoves(model) if lr == MOVES_RATE else None  # the noisy networks' hooks sit on their norms
    result = mlp.train_mlp(model, lr, x, y, steps, torch.Generator().manual_seed(mlp.BATCH_SEED + seed_offset))
    mlp.finished(result, model, x_val, y_val)
    if moves is not None and result["diverged_at"] is None:
        result["moves"] = moves.per_layer()
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
    q("steps", steps, "d", unit="steps")
    q("noise_seed", NOISE_SEED, "d")
    q("trains_threshold", TRAINS, ".1f")
    q("tie_errors", TIE_ERRORS, "d")
    q("n_validation", mlp.N_VALIDATION, ",d")
    q("batch", mlp.BATCH, "d")
    r, spread = noisy_norms.ACTIVATION_MEAN_RANGE, noisy_norms.ACTIVATION_SPREAD_MAX
    q("act_scale_mean_range", (1 - r, 1 + r), ".1f")
    q("act_offset_mean_range", (-r, r), ".1f")
    q("act_spread_max", spread, ".1f")
    fr = noisy_norms.FEATURE_SCALE_RANGE
    q("feat_scale_range", (1 - fr, 1 + fr), ".1f")
    q("feat_offset_spread", noisy_norms.FEATURE_OFFSET_SPREAD, ".1f")
    q("no_cost_up_to", NO_COST_UP_TO, "g")
    q("cost_rate", COST_RATE, "g")
    q("moves_rate", MOVES_RATE, "g")

    accuracies = {n: quote_accuracies(q, runs, n, KEYS[n], RATES) for n in NETWORKS}
    errors = [standard_error(res["correct"]) for res in runs.values() if res["correct"] is not None]
    q("accuracy_error_largest", max(errors), ".3f")
    plain = accuracies["plain"]
    q("plain_diverged_rates", [rate for rate, p in zip(RATES, plain) if not np.isfinite(p)], "g")
    up_to = [rate for rate in RATES if rate <= NO_COST_UP_TO]
    differences = {}
    for network in NOISY:
        key, noisy = KEYS[network], accuracies[network]
        section.sweep_claim(
            f"the {network} network does not diverge",
            {rate: bool(np.isfinite(a)) for rate, a in zip(RATES, noisy)},
            over="learning rate",
            key=f"{key}-does-not-diverge",
        )
        section.sweep_claim(
            f"the {network} network reaches validation accuracy above {TRAINS:g}",
            {rate: bool(a > TRAINS) for rate, a in zip(RATES, noisy) if rate in up_to},
            {rate: f"{a:.3f}" for rate, a in zip(RATES, noisy)},
            over="learning rate",
            key=f"{key}-trains-up-to",
        )
        # Noisy minus batch norm, per rate, with its paired standard error.
        differences[network] = {}
        for rate in RATES:
            mine, theirs = runs[network, rate]["correct"], runs["batch norm", rate]["correct"]
            if mine is None or theirs is None:
                continue
            difference, error = paired_difference(mine, theirs)
            differences[network][rate] = (difference, error)
            row = (TABLE_ROWS[network], f"{rate:g}")  # the page's table reads it under this row and column
            q(f"{key}_gain_{rate_key(rate)}", difference, ".3f", run=row)
            q(f"{key}_gain_error_{rate_key(rate)}", error, ".3f", run=row)
        section.sweep_claim(
            f"the {network} network's validation accuracy is not below batch norm's by more than "
            f"{TIE_ERRORS} paired standard errors",
            {rate: d > -TIE_ERRORS * e for rate, (d, e) in differences[network].items() if rate in up_to},
            {rate: f"{d:+.4f} (s.e. {e:.4f})" for rate, (d, e) in differences[network].items()},
            over="learning rate",
            key=f"{key}-no-cost-up-to",
        )
    # At 0.5 the seeds disagree: what the page's run shows there is its own.
    d, e = differences["activation noise"].get(SEEDS_DISAGREE_RATE, (np.nan, np.nan))
    section.claim(
        f"on the page's run at lr {SEEDS_DISAGREE_RATE:g} the activation noise network ties with batch norm: "
        f"the difference is within {TIE_ERRORS} paired standard errors",
        bool(abs(d) <= TIE_ERRORS * e),
        f"{d:+.4f} (s.e. {e:.4f})",
        every_seed=False,
        key="act-ties-at-0-5",
    )
    # At COST_RATE noise on every activation costs accuracy in every run of
    # the report; noise per feature does not (rounding alone flips its sign),
    # so only the first is claimed.
    d, e = differences["activation noise"].get(COST_RATE, (np.nan, np.nan))
    section.claim(
        f"at lr {COST_RATE:g} the activation noise network's validation accuracy is below batch norm's by more "
        f"than {TIE_ERRORS} paired standard errors",
        bool(d < -TIE_ERRORS * e),
        f"{d:+.4f} (s.e. {e:.4f})",
        key="costs-at-1",
    )

    # How far each layer's inputs move between steps, at MOVES_RATE: the
    # noisy networks against the plain network's own shift.
    plain_moves = runs["plain", MOVES_RATE]["moves"]
    q("plain_move_range", (min(plain_moves), max(plain_moves)), ".2f")
    # What batch sampling alone gives: the means of two independent batches
    # of n differ by sqrt(2 / n) standard deviations (sd), on average
    # sqrt(2 / pi) of that in absolute value.
    q("batch_sampling_move", math.sqrt(2 / mlp.BATCH) * math.sqrt(2 / math.pi), ".2f")
    for network in NOISY:
        key, moves = KEYS[network], runs[network, MOVES_RATE]["moves"]
        q(f"{key}_move_smallest", min(moves), ".2f")
        ratio = min(moves) / max(plain_moves)
        q(f"{key}_move_ratio", ratio, ".1f", unit="times the plain")
        section.claim(
            f"every {network} layer's inputs move more per step than any plain-network layer's, at lr {MOVES_RATE:g}",
            ratio > 1,
            f"smallest noisy over largest plain: {ratio:.3g}",
            key=f"{key}-move-more-than-the-plain",
        )
    return {"accuracies": accuracies, "differences": differences}


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

    def accuracy_figure():
        phone = on_phone()
        # On a phone the bars lie down, a learning rate to a block of four rows:
        # twenty bars with their values do not fit side by side in its width.
        fig = new_figure(8.4, 4.0 + (3.2 if phone else 0.0), margins=(0.85, 0.55, 0.15, 0.55))
        ax = fig.add_subplot()
        width = 0.2
        high = 1.2  # room at the top for the legend
        for j, network in enumerate(NETWORKS):
            for i, rate in enumerate(RATES):
                x = i + (j - 1.5) * width
                value = acc[network][i]
                key = f"{KEYS[network]}_accuracy_{rate_key(rate)}"
                label = labels[network] if i == 0 else None
                if np.isfinite(value) and phone:
                    ax.barh(x, value, width * 0.92, color=colours[network], label=label)
                    ax.text(value + 0.01, x, t(key), ha="left", va="center", fontsize=8)
                elif np.isfinite(value):
                    ax.bar(x, value, width * 0.92, color=colours[network], label=label)
                    ax.text(x, value + 0.01, t(key), ha="center", va="bottom", fontsize=8, rotation=90)
                else:
                    ax.text(
                        *((0.02, x) if phone else (x, 0.02)),
                        "diverged at step " + t(f"{KEYS[network]}_diverged_step_{rate_key(rate)}"),
                        ha="left" if phone else "center",
                        va="center" if phone else "bottom",
                        fontsize=8,
                        rotation=0 if phone else 90,
                        color=colours[network],
                    )
        rate_names = [t("rates", i) for i in range(len(RATES))]
        if phone:
            ax.axvline(1 / mlp.CLASSES, color=PALETTE["grey"], linestyle="--", linewidth=1)
            ax.set_yticks(range(len(RATES)), rate_names)
            ax.set_ylabel(f"learning rate (trained as in section 3, {t('steps')} steps)")
            ax.set_ylim(len(RATES) - 0.4, -1.5)  # the legend above the first block
            ax.set_xlim(0.0, 1.0)
            ax.set_xlabel("validation accuracy (evaluated without noise; dashed: chance)")
            ax.legend(loc="upper left", ncols=2, fontsize=8.5)
        else:
            ax.axhline(1 / mlp.CLASSES, color=PALETTE["grey"], linestyle="--", linewidth=1)
            ax.set_xticks(range(len(RATES)), rate_names)
            ax.set_xlabel(f"learning rate (trained as in section 3, {t('steps')} steps; dashed: chance)")
            ax.set_xlim(-0.6, len(RATES) - 0.4)
            ax.set_ylim(0.0, high)
            ax.set_ylabel("validation accuracy\n(evaluated without noise)")
            ax.legend(loc="upper center", ncols=4, fontsize=8.5)
        ax.set_title(
            f"Up to {t('no_cost_up_to')} the noise costs no accuracy; at {t('cost_rate')} it does",
            loc="left",
        )
        return fig

    section.save_figure(accuracy_figure, "accuracy")


if __name__ == "__main__":
    main(__name__)
