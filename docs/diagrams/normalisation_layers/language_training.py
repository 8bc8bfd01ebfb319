"""Training and scoring the character-level Transformers of sections 7-9.

``train_language_model`` is the plain reference loop the page shows: AdamW
(its multi-tensor "foreach" form, the same bits as the default per-parameter
loop, tested, for less time),
a linear warmup then cosine decay to a floor (or a constant rate), gradient
clipping at global norm 1, random training windows from a seeded generator,
and evaluation on one fixed validation set at regular steps.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import Callable

from pagekit.section import import_torch

from normalisation_layers.language_data import training_batches

torch = import_torch()
from torch.nn import functional as F  # noqa: E402

# Building torch's first optimiser imports its compiler (torch._dynamo, about
# 1.8 s of CPU). Import it here, once, so the worker processes a section
# forks inherit it instead of each paying for it.
importlib.import_module("torch._dynamo")

BETAS, WEIGHT_DECAY, CLIP_NORM = (0.9, 0.95), 0.1, 1.0
FLOOR = 0.1  # the cosine decays to this fraction of the peak rate
COSINE, CONSTANT = "cosine", "constant"


def learning_rate(step: int, steps: int, lr: float, warmup: int, schedule: str = COSINE) -> float:
    """The rate at ``step`` (0-based): linear warmup over ``warmup`` steps,
    then cosine decay from lr to 0.1·lr at the last step (or constant)."""
    if step < warmup:
        return lr * (step + 1) / warmup
    if schedule == CONSTANT:
        return lr
    progress = (step - warmup) / max(1, steps - warmup)
    return lr * (FLOOR + (1 - FLOOR) / 2 * (1 + math.cos(math.pi * progress)))


def warmup_steps(steps: int, warmup_fraction: float) -> int:
    return max(1, int(steps * warmup_fraction))


def validation_loss(model, validation, windows: list | None = None) -> float:
    """Mean cross-entropy (nats per character) over the fixed validation
    windows. Given a list ``windows``, also appends each window's own mean
    (from the same logits): the loss's sampling error comes from them."""
    inputs, targets = validation
    with torch.no_grad():
        logits = model(inputs)
        flat_logits, flat_targets = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
        if windows is not None:
            each = F.cross_entropy(flat_logits, flat_targets, reduction="none")
            windows.extend(each.reshape(targets.shape).mean(dim=1).tolist())
        return F.cross_entropy(flat_logits, flat_targets).item()


@dataclass
class TrainingRun:
    """What a run leaves: validation loss at the evaluation steps, and the
    training loss (and whatever ``on_step`` collected) at every step."""

    eval_steps: list[int] = field(default_factory=list)
    validation: list[float] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    final_windows: list[float] = field(default_factory=list)  # each validation window's loss at the end

    @property
    def final(self) -> float:
        return self.validation[-1]


def train_language_model(
    model,
    corpus,
    validation,
    *,
    lr: float,
    data_seed: int,
    steps: int = 200,
    batch: int = 16,
    window: int = 32,
    warmup_fraction: float = 0.0,
    schedule: str = COSINE,
    eval_every: int = 25,
    on_step: Callable | None = None,
    foreach: bool = True,
) -> TrainingRun:
    """Train ``model`` on random training windows; evaluate at steps 0,
    eval_every, ..., steps. ``on_step(step, loss, model)`` runs after each
    update (the model's attention still holds that step's records).
    ``foreach=False`` runs torch's default per-parameter AdamW and gradient
    clipping, which the multi-tensor form is tested against, bit for bit."""
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, betas=BETAS, weight_decay=WEIGHT_DECAY, foreach=foreach)
    warmup = warmup_steps(steps, warmup_fraction)
    batches = training_batches(corpus, batch, window, torch.Generator().manual_seed(data_seed))
    run = TrainingRun()
    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            run.eval_steps.append(step)
            run.validation.append(validation_loss(model, validation, run.final_windows if step == steps else None))
        if step == steps:
            break
        for group in optimiser.param_groups:
            group["lr"] = learning_rate(step, steps, lr, warmup, schedule)
        inputs, targets = next(batches)
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM, foreach=foreach)
        optimiser.step()
        run.train_loss.append(loss.item())
        if on_step is not None:
            on_step(step, run.train_loss[-1], model)
    return run
