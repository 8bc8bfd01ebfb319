"""The normalisation layers of the page "Normalisation layers", written by
hand so the page can show them: batch norm (and a shifted variant for the
covariate-shift test), layer norm and RMS norm.

Each equals the torch module it reimplements (tests/test_normalisation_layers_norms.py):
``BatchNorm`` equals ``nn.BatchNorm1d`` in training and evaluation mode,
running statistics included; ``LayerNorm`` equals ``nn.LayerNorm``;
``RMSNorm`` equals ``nn.RMSNorm``.
"""

from __future__ import annotations

import torch
from torch import nn


class BatchNorm(nn.Module):
    """Batch norm per feature over the batch (first axis) of a (batch, features)
    input. Training: normalise with the batch mean and population variance, and
    update running averages (momentum 0.1, the running variance from the
    unbiased estimate). Evaluation: normalise with the running averages."""

    def __init__(self, features: int, eps: float = 1e-5, momentum: float = 0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.gain = nn.Parameter(torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.ones(features))

    def forward(self, x):
        if self.training:
            mean = x.mean(dim=0)
            var = x.var(dim=0, unbiased=False)
            n = x.shape[0]
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * var * n / (n - 1))
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps) * self.gain + self.bias


class ShiftedBatchNorm(BatchNorm):
    """Batch norm followed, in training only, by a per-feature random scale
    uniform in [1, 1.4] and offset normal with spread 0.4, drawn afresh every
    step from ``generator``: a deliberate, changing shift of the
    distribution the next layer sees."""

    def __init__(self, features: int, generator: torch.Generator, eps: float = 1e-5):
        super().__init__(features, eps)
        self.generator = generator

    def forward(self, x):
        y = super().forward(x)
        if not self.training:
            return y
        features = x.shape[1]
        scale = 1 + 0.4 * torch.rand(features, generator=self.generator)
        offset = 0.4 * torch.randn(features, generator=self.generator)
        return y * scale + offset


class LayerNorm(nn.Module):
    """Layer norm over the last axis of each example: subtract the example's
    own mean, divide by its own standard deviation, then gain and bias."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.gain = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(var + self.eps) * self.gain + self.bias


class RMSNorm(nn.Module):
    """RMS norm over the last axis: divide by the root mean square, then a
    gain; no mean subtracted, no bias."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.gain = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.gain
