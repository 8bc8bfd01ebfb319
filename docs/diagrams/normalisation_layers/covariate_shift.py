"""Section 4, "Is it covariate shift?": the networks of section 3 at learning
rates 0.1 and 0.3, plus a third in which every batch-norm layer is followed,
in training, by a fresh random per-feature scale (uniform in [1, 1.4]) and
offset (normal, spread 0.4) each step: the distribution every layer sees
keeps moving, on purpose. Does that network still take the large rate?
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the shared module importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from section_kit import (  # first: it pins the numeric environment before numpy and torch load
    PALETTE, import_torch, main, new_figure, nice_limits)

import numpy as np  # noqa: E402

from normalisation_layers import mlp  # noqa: E402
from normalisation_layers.batch_norm_learning_rate import (  # noqa: E402
    REDUCED_STEPS, STEPS, TRAINS, quote_accuracies, rate_key)

RATES = (0.1, 0.3)
NETWORKS = mlp.NETWORKS  # plain, batch norm, shifted batch norm
KEYS = {"plain": "plain", "batch norm": "bn", "shifted batch norm": "shifted"}
SCALE_LOW, SCALE_HIGH, OFFSET_SPREAD = 1.0, 1.4, 0.4


def shift_size(section, steps: int = 100, width: int = mlp.WIDTH) -> float:
    """How far the shift moves one layer's output from step to step: the
    mean absolute change of a feature's offset between consecutive steps,
    in units of the normalised feature's spread (1), drawn exactly as
    ShiftedBatchNorm draws them."""
    torch = import_torch()
    from normalisation_layers.norms import ShiftedBatchNorm

    layer = ShiftedBatchNorm(width, section.torch_generator(mlp.SHIFT_SEED))
    x = torch.randn(mlp.BATCH, width, generator=section.torch_generator(99))
    with torch.no_grad():
        normalised = (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=False) + layer.eps)
        means = torch.stack([layer(x).mean(0) - normalised.mean(0) for _ in range(steps)])
    return float((means[1:] - means[:-1]).abs().mean())


def compute(section):
    q = section.quote
    steps = section.choose(full=STEPS, reduced=REDUCED_STEPS)
    runs, _ = mlp.sweep(section, NETWORKS, RATES, steps)
    q("rates", RATES, "g")
    q("steps", steps, "d")
    q("scale_low", SCALE_LOW, ".0f")
    q("scale_high", SCALE_HIGH, ".1f")
    q("offset_spread", OFFSET_SPREAD, ".1f")
    q("shift_seed", mlp.SHIFT_SEED, "d")
    q("trains_threshold", TRAINS, ".1f")
    q("shift_step_change", shift_size(section), ".2f")
    accuracies = {}
    for network in NETWORKS:
        accuracies[network] = quote_accuracies(q, runs, network, KEYS[network], RATES)
    plain, bn, shifted = (accuracies[n] for n in NETWORKS)
    where = [r for r, p, s in zip(RATES, plain, shifted) if not np.isfinite(p) and s > TRAINS]
    section.claim(f"the shifted network reaches validation accuracy above {TRAINS:g} at a rate where "
                  f"the plain network diverges", bool(where),
                  f"rates {where}; plain {plain.tolist()}; shifted {shifted.tolist()}",
                  backs=("still trains",))
    cost = bn - shifted
    q("shift_cost", cost, ".3f")
    section.claim("the shift lowers validation accuracy against batch norm at both rates",
                  bool(np.all(cost > 0)), f"batch norm minus shifted: {cost.tolist()}",
                  backs=("costs accuracy at both rates",))
    return {"accuracies": accuracies}


def draw(section, results):
    t = section.text
    acc = results["accuracies"]
    colours = {"plain": PALETTE["orange"], "batch norm": PALETTE["blue"],
               "shifted batch norm": PALETTE["green"]}
    fig = new_figure(8.4, 3.3, margins=(0.7, 0.4, 0.15, 0.3))
    ax = fig.add_subplot()
    width = 0.26
    finite = np.concatenate([a[np.isfinite(a)] for a in acc.values()])
    _, high = nice_limits([0.0, *finite, 1.0], pad=0.04)  # room at the top for the legend
    for j, network in enumerate(NETWORKS):
        for i, rate in enumerate(RATES):
            x = i + (j - 1) * width
            value = acc[network][i]
            key = f"{KEYS[network]}_accuracy_{rate_key(rate)}"
            if np.isfinite(value):
                ax.bar(x, value, width * 0.92, color=colours[network],
                       label=network if i == 0 else None)
                ax.text(x, value + 0.01 * high, t(key), ha="center", va="bottom", fontsize=9)
            else:
                ax.text(x, 0.02 * high, "diverged\nat step " + t(f"{KEYS[network]}_diverged_step_{rate_key(rate)}"),
                        ha="center", va="bottom", fontsize=8.5, color=colours[network])
    ax.set_xticks(range(len(RATES)), [f"learning rate {t('rates', i)}" for i in range(len(RATES))])
    ax.set_xlim(-0.6, len(RATES) - 0.4)
    ax.set_ylim(0.0, high)
    ax.set_ylabel("validation accuracy")
    ax.legend(loc="upper center", ncols=3, fontsize=9)
    ax.set_title(f"Shifted at every step, batch norm still trains at {t('rates', 1)}; "
                 f"the plain network diverges", loc="left")
    section.save_figure(fig, "accuracy")


if __name__ == "__main__":
    main(__name__)
