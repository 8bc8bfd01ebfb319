"""Section 4's noisy batch norms (noisy_norms.py): noise only in training,
its expected transform the identity, on every activation or shared per
feature; and section 5's probe follows the optimiser's own velocity."""

import pytest


@pytest.fixture(autouse=True, scope="module")
def _imports():
    """torch and the page's modules, imported when this module's tests run,
    not when pytest collects it: every xdist worker collects every module,
    and torch with its compiler costs a worker about two CPU-seconds."""
    global torch, mlp, noisy_norms, Probe, BatchNorm, LAYERS
    from pagekit.section import import_torch

    torch = import_torch()
    from normalisation_layers import mlp, noisy_norms
    from normalisation_layers.loss_smoothness import Probe
    from normalisation_layers.norms import BatchNorm

    LAYERS = (noisy_norms.ActivationNoiseBatchNorm, noisy_norms.FeatureNoiseBatchNorm)


def test_noise_only_in_training():
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(0))
    for layer in LAYERS:
        noisy, plain = layer(8, torch.Generator().manual_seed(1)), BatchNorm(8)
        assert not torch.allclose(noisy(x), plain(x))  # one training step each: same running statistics
        noisy.eval()
        plain.eval()
        assert torch.equal(noisy(x), plain(x))


def test_expected_transform_is_the_identity():
    """Averaged over many steps, scale and offset average to 1 and 0: the
    mean noisy output is batch norm's output (to the sampling error)."""
    x = torch.randn(32, 8, generator=torch.Generator().manual_seed(0))
    clean = BatchNorm(8)(x).detach()
    for layer in LAYERS:
        noisy = layer(8, torch.Generator().manual_seed(2))
        with torch.no_grad():
            mean = torch.stack([noisy(x) for _ in range(1500)]).mean(0)
        assert (mean - clean).abs().max() < 0.05, layer.__name__


def test_activation_noise_differs_per_example_feature_noise_is_shared():
    x = torch.randn(16, 4, generator=torch.Generator().manual_seed(0))
    clean = BatchNorm(4)(x).detach()
    with torch.no_grad():
        feature = noisy_norms.FeatureNoiseBatchNorm(4, torch.Generator().manual_seed(3))(x)
        activation = noisy_norms.ActivationNoiseBatchNorm(4, torch.Generator().manual_seed(3))(x)
    # Per feature: one affine map for all examples, so any two examples give the same slope.
    slope = (feature[1] - feature[0]) / (clean[1] - clean[0])
    assert torch.allclose((feature[2] - feature[0]) / (clean[2] - clean[0]), slope, atol=1e-4)
    slope = (activation[1] - activation[0]) / (clean[1] - clean[0])
    assert not torch.allclose((activation[2] - activation[0]) / (clean[2] - clean[0]), slope, atol=1e-2)


def test_probe_velocity_is_the_optimisers():
    """The probe's update direction d = momentum * v + g is the step SGD takes:
    after training, the weights moved by exactly -lr times the sum of the updates."""
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(256, mlp.DIM, generator=gen), torch.randint(0, mlp.CLASSES, (256,), generator=gen)
    torch.manual_seed(0)
    model = mlp.MLP(BatchNorm)
    start = [p.detach().clone() for p in model.parameters()]
    probe, lr, steps = Probe(every=1), 0.05, 4
    updates = []
    original = Probe.__call__

    def record(self, model, xb, yb, step):
        original(self, model, xb, yb, step)
        updates.append([v.clone() for v in self.velocity])

    Probe.__call__ = record
    try:
        mlp.train_mlp(model, lr, x, y, steps, torch.Generator().manual_seed(0), probe=probe)
    finally:
        Probe.__call__ = original
    for k, (p, p0) in enumerate(zip(model.parameters(), start, strict=True)):
        moved = sum(u[k] for u in updates)
        assert torch.allclose(p.detach() - p0, -lr * moved, atol=1e-6)
    # a cosine, up to float32 rounding (the first update is the gradient itself: 1.0000001 here)
    assert len(probe.cosines) == steps and all(-1 - 1e-6 <= c <= 1 + 1e-6 for c in probe.cosines)
