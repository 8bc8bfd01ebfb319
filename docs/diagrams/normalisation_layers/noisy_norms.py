"""The noisy batch norms of section 4 ("Is it covariate shift?"): batch norm
followed, in training only, by random noise drawn afresh at every step from
a generator the script owns. In both forms the noise's expected transform is
the identity (scale of mean 1, offset of mean 0), so evaluating without the
noise evaluates the expected network, not a mismatched one.

- ``ActivationNoiseBatchNorm``: Santurkar et al.'s form. Every activation of
  every example gets its own scale and offset, i.i.d. from a distribution
  whose mean and spread are themselves redrawn at every step.
- ``FeatureNoiseBatchNorm``: one random scale and offset per feature, shared
  by the whole batch (this page's variant of the test).

The ranges are this page's choice (Santurkar et al.'s are not used).
"""

from __future__ import annotations

import torch

from normalisation_layers.norms import BatchNorm

# Per step: the scale's mean is uniform in [1 - 0.5, 1 + 0.5] and its spread in
# [0, 0.5]; the offset's mean is uniform in [-0.5, 0.5] and its spread in [0, 0.5].
ACTIVATION_MEAN_RANGE, ACTIVATION_SPREAD_MAX = 0.5, 0.5
# Per feature: the scale is uniform in [1 - 0.4, 1 + 0.4]; the offset normal, spread 0.4.
FEATURE_SCALE_RANGE, FEATURE_OFFSET_SPREAD = 0.4, 0.4


def _uniform(generator: torch.Generator, low: float, high: float) -> float:
    return low + (high - low) * float(torch.rand((), generator=generator))


class _NoisyBatchNorm(BatchNorm):
    """Batch norm that owns the generator its training noise is drawn from."""

    def __init__(self, features: int, generator: torch.Generator, eps: float = 1e-5):
        super().__init__(features, eps)
        self.generator = generator


class ActivationNoiseBatchNorm(_NoisyBatchNorm):
    """Batch norm, then (training only) y * s + o with s and o drawn i.i.d.
    for every activation of every example: s ~ N(a, b²), o ~ N(c, d²), where
    a ~ U[0.5, 1.5], b ~ U[0, 0.5], c ~ U[-0.5, 0.5], d ~ U[0, 0.5] are drawn
    afresh at every step (in that order, then s, then o). The expected
    transform over steps is the identity."""

    def forward(self, x):
        y = super().forward(x)
        if not self.training:
            return y
        g, r, spread = self.generator, ACTIVATION_MEAN_RANGE, ACTIVATION_SPREAD_MAX
        scale_mean, scale_spread = _uniform(g, 1 - r, 1 + r), _uniform(g, 0, spread)
        offset_mean, offset_spread = _uniform(g, -r, r), _uniform(g, 0, spread)
        scale = scale_mean + scale_spread * torch.randn(y.shape, generator=g)
        offset = offset_mean + offset_spread * torch.randn(y.shape, generator=g)
        return y * scale + offset


class FeatureNoiseBatchNorm(_NoisyBatchNorm):
    """Batch norm, then (training only) a per-feature scale uniform in
    [0.6, 1.4] and offset normal with spread 0.4, shared by every example of
    the batch and drawn afresh at every step (scale, then offset): the
    expected transform is the identity."""

    def forward(self, x):
        y = super().forward(x)
        if not self.training:
            return y
        features = x.shape[1]
        scale = 1 + FEATURE_SCALE_RANGE * (2 * torch.rand(features, generator=self.generator) - 1)
        offset = FEATURE_OFFSET_SPREAD * torch.randn(features, generator=self.generator)
        return y * scale + offset
