"""Section 5, "A smoother loss surface": both networks of section 3 at
learning rate 0.1 for 300 steps; every 5 steps, before the update, probe
the loss surface along the current gradient g on the same batch.

For each step size eta in (0.025, 0.05, 0.1, 0.2) the probe measures how
fast the gradient changes, beta_hat = |grad L(w - eta g) - grad L(w)| / |eta g|,
and keeps the largest; it also keeps the spread (max - min) of the four
probed losses. The two networks train in two forked workers.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the shared module importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from section_kit import (  # first: it pins the numeric environment before numpy and torch load
    PALETTE, log_axis, main, new_figure, process_pool)

import numpy as np  # noqa: E402
import torch  # noqa: E402  (section_kit has pinned it to one thread)
from torch.nn import functional as F  # noqa: E402

from normalisation_layers import mlp  # noqa: E402

RATE, STEPS, EVERY = 0.1, 300, 5
REDUCED_STEPS = 10
ETAS = (0.025, 0.05, 0.1, 0.2)
AFTER = 50  # summaries over the probes after this step
NETWORKS = ("plain", "batch norm")
KEYS = {"plain": "plain", "batch norm": "bn"}


def smoothness_probe(model, xb, yb, etas=ETAS):
    """The largest beta_hat over ``etas`` along the current gradient, and
    the spread of the probed losses, on the batch (xb, yb). Leaves the
    weights, their gradients and batch norm's running statistics as found."""
    params = [p for p in model.parameters()]
    g = [p.grad.detach().clone() for p in params]
    g_norm = torch.sqrt(sum((gi * gi).sum() for gi in g))
    weights = [p.detach().clone() for p in params]
    buffers = [b.clone() for b in model.buffers()]
    betas, losses = [], []
    for eta in etas:
        with torch.no_grad():
            for p, w, gi in zip(params, weights, g):
                p.copy_(w - eta * gi)
        loss = F.cross_entropy(model(xb), yb)
        moved = torch.autograd.grad(loss, params)
        change = torch.sqrt(sum(((m - gi) ** 2).sum() for m, gi in zip(moved, g)))
        betas.append((change / (eta * g_norm)).item())
        losses.append(loss.item())
    with torch.no_grad():
        for p, w in zip(params, weights):
            p.copy_(w)
        for b, saved in zip(model.buffers(), buffers):
            b.copy_(saved)
    return max(betas), max(losses) - min(losses)


class Probe:
    """Calls ``smoothness_probe`` every ``every`` steps and keeps the results."""

    def __init__(self, every=EVERY):
        self.every, self.steps, self.betas, self.spreads = every, [], [], []

    def __call__(self, model, xb, yb, step):
        if step % self.every == 0:
            beta, spread = smoothness_probe(model, xb, yb)
            self.steps.append(step)
            self.betas.append(beta)
            self.spreads.append(spread)


def probed_run(network: str, steps: int, seed_offset: int) -> dict:
    probe = Probe()
    result = mlp.run(network, RATE, steps, seed_offset, probe=probe)
    result.update(steps=probe.steps, betas=probe.betas, spreads=probe.spreads)
    return result


def compute(section):
    q = section.quote
    steps = section.choose(full=STEPS, reduced=REDUCED_STEPS)
    after = section.choose(full=AFTER, reduced=0)
    with process_pool(2) as pool:
        results = pool.starmap(probed_run, [(n, steps, section.seed_offset) for n in NETWORKS],
                               chunksize=1)
        pool.close()  # workers exit on their own (see mlp.sweep)
        pool.join()
    runs = dict(zip(NETWORKS, results))
    section.progress(f"both probed runs done, {sum(r['cpu'] for r in results):.1f} s CPU", force=True)
    q("rate", RATE, "g")
    q("steps", steps, "d")
    q("every", EVERY, "d")
    q("etas", ETAS, "g")
    q("after", after, "d")
    q("guide", 2 / RATE, ".0f")
    q("guide_numerator", 2, "d")
    medians = {}
    for network in NETWORKS:
        key, r = KEYS[network], runs[network]
        # The plain network at 0.1 is at its edge: at another seed, or with
        # other rounding, it diverges part-way (its accuracy quote is then
        # missing and the page check flags the prose). Batch norm's survival
        # is claimed; the probes of a diverged run stop where it stopped.
        if network == "batch norm":
            section.claim(f"the batch-norm network trains {steps} steps at lr {RATE:g} without diverging",
                          r["diverged_at"] is None, f"diverged at {r['diverged_at']}")
        elif r["diverged_at"] is not None:
            q(f"{key}_diverged_step", r["diverged_at"], "d")
        s, b = np.array(r["steps"]), np.array(r["betas"])
        # Just before a run diverges, a probe step can land where the loss
        # overflows: such probes are counted, and left out of the summaries.
        finite = np.isfinite(b) & np.isfinite(np.array(r["spreads"]))
        if not finite.all():
            q(f"{key}_nonfinite_probes", int((~finite).sum()), "d")
        s, b, r["spreads"] = s[finite], b[finite], list(np.array(r["spreads"])[finite])
        late = b[s > after] if (s > after).any() else b
        medians[network] = float(np.median(late))
        q(f"{key}_beta_median", medians[network], ".3g")
        q(f"{key}_beta_max", late.max(), ".3g")
        q(f"{key}_largest_spread", max(r["spreads"]), ".3g")
        spreads = np.array(r["spreads"])
        q(f"{key}_largest_spread_late", (spreads[s > after] if (s > after).any() else spreads).max(), ".3g")
        if r["accuracy"] is not None:
            q(f"{key}_accuracy", r["accuracy"], ".3f")
    q("median_ratio", medians["plain"] / medians["batch norm"], ".1f")
    section.claim("batch norm's median beta_hat after step 50 is below the plain network's",
                  medians["batch norm"] < medians["plain"],
                  f"batch norm {medians['batch norm']:.4g}, plain {medians['plain']:.4g}",
                  backs=("below the plain network's",))
    return {"runs": runs}


def draw(section, results):
    t = section.text
    runs = results["runs"]
    colours = {"plain": PALETTE["orange"], "batch norm": PALETTE["blue"]}
    fig = new_figure(8.4, 4.0, margins=(0.75, 0.5, 0.15, 0.3))
    ax = fig.add_subplot()
    values = []
    for network in NETWORKS:
        r = runs[network]
        ax.plot(r["steps"], r["betas"], "-", color=colours[network], linewidth=1.4,
                label=f"{network}: median β̂ after step {t('after')} = {t(KEYS[network] + '_beta_median')}")
        values += [v for v in r["betas"] if np.isfinite(v)]
    guide = 2 / RATE
    ax.axhline(guide, color=PALETTE["grey"], linestyle="--", linewidth=1)
    # Whole decades around the data: the limits move only if a value crosses a power of ten.
    low = 10.0 ** np.floor(np.log10(min(values)))
    high = 10.0 ** np.ceil(np.log10(max(values + [guide]) * 1.5))
    ax.text(0.04, guide * 1.9, f"dashed: β̂ = {t('guide_numerator')} / learning rate = {t('guide')}. "
            f"Above it, a step of {t('rate')} breaks the rough guide η < {t('guide_numerator')}/β̂",
            color=PALETTE["grey"], fontsize=9, va="bottom",
            transform=ax.get_yaxis_transform())  # x in axes units: any number of steps
    log_axis(ax, "y", labels="power")
    ax.set_ylim(low, high)
    ax.set_xlim(0, int(t("steps")))
    ax.set_xlabel(f"training step (SGD, learning rate {t('rate')})")
    ax.set_ylabel("β̂, largest over the four probe steps")
    ax.legend(loc="lower left", fontsize=9)
    ax.set_title("With batch norm the gradient changes more slowly along its own direction",
                 loc="left")
    section.save_figure(fig, "beta")


if __name__ == "__main__":
    main(__name__)
