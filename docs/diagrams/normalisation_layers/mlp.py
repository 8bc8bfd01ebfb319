"""The deep MLP of sections 3 to 5 of the page "Normalisation layers", its
data (Gaussian clusters) and its training loop.

Data: 8 Gaussian clusters in 32 dimensions, centres standard normal, a point
its centre plus 2.0 x standard normal noise, labels uniform; 8,192 training
and 4,096 validation points, all from one generator (centres, then training,
then validation). Model: 8 hidden layers of width 128 with ReLU, an optional
normalisation layer after every hidden linear layer, a linear layer to the 8
classes; He (Kaiming normal, ReLU) weights and zero biases. Training: SGD
with momentum 0.9, batches of 128 drawn with replacement from a seeded
generator, cross-entropy; a run whose loss turns non-finite stops there.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F

CLASSES, DIM, NOISE = 8, 32, 2.0
N_TRAIN, N_VALIDATION = 8192, 4096
DEPTH, WIDTH = 8, 128
BATCH, MOMENTUM = 128, 0.9


def make_clusters(generator: torch.Generator):
    """(x_train, y_train, x_val, y_val) from one generator, in the order
    centres, training labels and noise, validation labels and noise."""
    centres = torch.randn(CLASSES, DIM, generator=generator)

    def points(n):
        labels = torch.randint(0, CLASSES, (n,), generator=generator)
        return centres[labels] + NOISE * torch.randn(n, DIM, generator=generator), labels

    return (*points(N_TRAIN), *points(N_VALIDATION))


class MLP(nn.Module):
    """8 hidden layers of width 128: linear, then ``norm(width)`` if given,
    then ReLU; a final linear layer to the classes. He weights, zero biases."""

    def __init__(self, norm: Callable[[int], nn.Module] | None = None, depth: int = DEPTH, width: int = WIDTH):
        super().__init__()
        layers, features = [], DIM
        for _ in range(depth):
            layers.append(nn.Linear(features, width))
            if norm is not None:
                layers.append(norm(width))
            layers.append(nn.ReLU())
            features = width
        layers.append(nn.Linear(features, CLASSES))
        self.net = nn.Sequential(*layers)
        for layer in self.net:
            if isinstance(layer, nn.Linear):
                nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
                nn.init.zeros_(layer.bias)

    def forward(self, x):
        return self.net(x)


def train_mlp(
    model,
    lr,
    x,
    y,
    steps,
    batches: torch.Generator,
    *,
    probe=None,
    report: Callable[[str], None] | None = None,
    name: str = "",
) -> dict:
    """Train ``model`` with SGD (momentum 0.9) for ``steps`` batches of 128
    drawn with replacement by ``batches``. Stops when the loss turns
    non-finite. ``probe(model, xb, yb, step)`` (if given) runs on each
    step's batch after the gradient is computed and before the update.

    The update is ``torch.optim.SGD``'s, written out (a test checks they
    agree to the bit): the optimiser class costs a second and a half of
    imports on its first step in every fresh worker process."""
    params = list(model.parameters())
    velocity = [torch.zeros_like(p) for p in params]
    model.train()
    losses, diverged_at = [], None
    for step in range(steps):
        index = torch.randint(0, len(x), (BATCH,), generator=batches)
        xb, yb = x[index], y[index]
        loss = F.cross_entropy(model(xb), yb)
        if not math.isfinite(loss.item()):
            diverged_at = step
            break
        losses.append(loss.item())
        for p in params:
            p.grad = None
        loss.backward()
        if probe is not None:
            probe(model, xb, yb, step)
        with torch.no_grad():  # v <- momentum v + g; w <- w - lr v, over every parameter at once
            torch._foreach_mul_(velocity, MOMENTUM)
            torch._foreach_add_(velocity, [p.grad for p in params])
            torch._foreach_add_(params, velocity, alpha=-lr)
        if report is not None:
            report(f"{name}: step {step + 1}/{steps}, loss {losses[-1]:.3f}")
    return {"losses": losses, "diverged_at": diverged_at}


def correct(model, x, y) -> list[bool]:
    """Whether each example is classified right, in evaluation mode (batch
    norm uses its running statistics): the accuracy's sampling error, and
    the paired error of two networks' difference, come from these."""
    model.eval()
    with torch.no_grad():
        return (model(x).argmax(dim=1) == y).tolist()


class Throttled:
    """Progress lines on stderr, at most one every ``every`` seconds (a
    stand-in where ``section.progress`` cannot reach: forked workers)."""

    def __init__(self, every: float = 3.0):
        self.every, self.last = every, -math.inf

    def __call__(self, message: str, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= self.every:
            self.last = now
            print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# One run of sections 3 to 5, as a forked worker runs it.

# SHIFT_SEED seeds the noise of section 4's noisy batch norms (covariate_shift.py).
DATA_SEED, BATCH_SEED, MODEL_SEED, SHIFT_SEED = 0, 0, 0, 1
NETWORKS = ("plain", "batch norm")
_DATA: dict[int, tuple] = {}
_REPORT = Throttled()  # one throttle per (forked) process


def clusters(seed_offset: int):
    """The section's data for a seed offset, made once per process."""
    if seed_offset not in _DATA:
        _DATA[seed_offset] = make_clusters(torch.Generator().manual_seed(DATA_SEED + seed_offset))
    return _DATA[seed_offset]


def build(network: str, seed_offset: int, norm_module=None) -> MLP:
    """The network named ``network``, its weights from
    ``torch.manual_seed(MODEL_SEED + offset)``: the plain and the normalised
    networks start from the same linear weights (the norm layers draw no
    random numbers when built). ``norm_module`` replaces the hand-written
    batch norm (e.g. ``nn.BatchNorm1d``, for the check against torch)."""
    from normalisation_layers.norms import BatchNorm

    if network == "plain":
        norm = None
    elif network == "batch norm":
        norm = norm_module or BatchNorm
    else:
        raise ValueError(f"unknown network {network!r}; one of {NETWORKS}")
    torch.manual_seed(MODEL_SEED + seed_offset)
    return MLP(norm)


def finished(result: dict, model, x_val, y_val) -> None:
    """A finished run's validation accuracy and which examples it got right
    (None for a run that diverged)."""
    diverged = result["diverged_at"] is not None
    result["correct"] = None if diverged else correct(model, x_val, y_val)
    result["accuracy"] = None if diverged else sum(result["correct"]) / len(result["correct"])


def run(network: str, lr: float, steps: int, seed_offset: int, probe=None, norm_module=None) -> dict:
    """Train one network at one learning rate; its losses, the step it
    diverged at (None if it did not), validation accuracy (None if it
    diverged) and its CPU time."""
    start = time.process_time()
    x, y, x_val, y_val = clusters(seed_offset)
    model = build(network, seed_offset, norm_module)
    name = f"{network} at lr {lr:g}"
    report = _REPORT
    result = train_mlp(
        model,
        lr,
        x,
        y,
        steps,
        torch.Generator().manual_seed(BATCH_SEED + seed_offset),
        probe=probe,
        report=report,
        name=name,
    )
    finished(result, model, x_val, y_val)
    result["cpu"] = time.process_time() - start
    end = (
        f"diverged at step {result['diverged_at']}"
        if result["diverged_at"] is not None
        else f"accuracy {result['accuracy']:.3f}"
    )
    report(f"{name}: done, {end}, {result['cpu']:.1f} s CPU", force=True)
    return result


def shared_run(network: str, lr: float, steps: int, seed_offset: int) -> dict:
    """``run`` without a probe, shared between the sections that train the
    same network at the same rate (sections 3 and 4; pagekit.shared_runs):
    under `make figures` and `make robustness` the second reads the first's
    result instead of training again."""
    from normalisation_layers import norms
    from pagekit.shared_runs import shared

    return shared(run, (network, lr, steps, seed_offset), code=(Path(__file__), Path(norms.__file__)))
