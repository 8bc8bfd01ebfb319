"""Section 6, "Layer norm does not look at the batch": one example in two
batches. Batch 1 is 8 examples x 16 features, standard normal (generator
seed 0); batch 2 keeps batch 1's first example and draws 7 others from
3 N(0, 1) + 2 (the same generator, continued). How much does example 0's
output change under batch norm (training mode) and under layer norm? Both
hand-written layers are also checked against torch's modules.
"""

from __future__ import annotations


from pagekit.section import (  # first: it pins the numeric environment before numpy and torch load
    PALETTE,
    import_torch,
    main,
    new_figure,
    nice_limits,
)

import numpy as np

from normalisation_layers.norms import BatchNorm, LayerNorm

SEED, BATCH, FEATURES = 0, 8, 16
OTHERS_SCALE, OTHERS_SHIFT = 3.0, 2.0
TORCH_TOL = 1e-6
BN_CHANGE_FLOOR = 0.5  # batch norm moves example 0's output by more than this


def batches(section):
    torch = import_torch()
    gen = section.torch_generator(SEED)
    first = torch.randn(BATCH, FEATURES, generator=gen)
    others = OTHERS_SCALE * torch.randn(BATCH - 1, FEATURES, generator=gen) + OTHERS_SHIFT
    return first, torch.cat([first[:1], others])


def compute(section):
    torch = import_torch()
    q = section.quote
    first, second = batches(section)
    bn, ln = BatchNorm(FEATURES), LayerNorm(FEATURES)
    torch_bn, torch_ln = torch.nn.BatchNorm1d(FEATURES), torch.nn.LayerNorm(FEATURES)
    with torch.no_grad():
        outputs = {}
        for name, ours, theirs in (("bn", bn, torch_bn), ("ln", ln, torch_ln)):
            a, b = ours(first), ours(second)
            outputs[name] = (a[0].numpy().copy(), b[0].numpy().copy())
            gap = max(float((a - theirs(first)).abs().max()), float((b - theirs(second)).abs().max()))
            section.claim_bound(
                f"largest gap between our {name.upper()} and torch's, both batches",
                gap,
                "<=",
                TORCH_TOL,
                fmt="g",
                key="ln-below-torch-tolerance" if name == "ln" else None,
            )
            q(f"{name}_torch_gap", gap, ".1x" if gap > 0 else ".0f")
    bn_change = float(np.abs(outputs["bn"][0] - outputs["bn"][1]).max())
    ln_change = float(np.abs(outputs["ln"][0] - outputs["ln"][1]).max())
    q("seed", SEED, "d")
    q("batch", BATCH, "d")
    q("features", FEATURES, "d")
    q("others", BATCH - 1, "d")
    q("others_scale", OTHERS_SCALE, ".0f", unit="times")
    q("others_shift", OTHERS_SHIFT, ".0f")
    q("torch_tol", TORCH_TOL, ".0x")
    q("bn_change", bn_change, ".2f")
    q("ln_change", ln_change, ".0f")
    section.claim(
        "layer norm's change of example 0's output between the batches is exactly 0",
        ln_change == 0.0,
        f"measured {ln_change!r}",
        key="exactly-0",
    )
    section.claim_bound("batch norm's largest change of example 0's output", bn_change, ">", BN_CHANGE_FLOOR, fmt=".1f")
    return {"outputs": outputs}


def draw(section, results):
    t = section.text
    out = results["outputs"]

    def example_zero_figure():
        fig = new_figure(
            8.4,
            3.3,
            margins=(0.72, 0.5, 0.1, 0.3),
            grid=(1, 2),
            wspace=0.45,
            suptitle="The same example in two batches: only batch norm's output moves",
        )
        axes = fig.subplots(1, 2, sharey=True)
        low, high = nice_limits(np.concatenate([*out["bn"], *out["ln"]]), pad=0.08)
        low -= 0.3 * (high - low)  # room below the curves for the legend
        features = np.arange(FEATURES)
        for ax, key, title in (
            (axes[0], "bn", f"batch norm: changes by up to {t('bn_change')}"),
            (axes[1], "ln", f"layer norm: changes by {t('ln_change')}"),
        ):
            a, b = out[key]
            ax.plot(features, a, "o-", color=PALETTE["blue"], label="in the first batch", markersize=4)
            ax.plot(features, b, "s--", color=PALETTE["orange"], label="in the second batch", markersize=4, alpha=0.9)
            ax.axhline(0, color=PALETTE["grey"], linewidth=0.6)
            ax.set_title(title, loc="left", fontsize=10)
            ax.set_xlabel("feature of example 0")
            ax.set_xticks(features[::3])  # features are whole numbers
            ax.set_ylim(low, high)
        axes[0].set_ylabel("output for example 0")
        axes[1].legend(loc="lower right", fontsize=9)
        return fig

    section.save_figure(example_zero_figure, "example_zero")


if __name__ == "__main__":
    main(__name__)
