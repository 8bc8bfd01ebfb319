"""The hand-written normalisation layers of the page "Normalisation layers"
equal the torch modules they reimplement."""

import pytest


@pytest.fixture(autouse=True, scope="module")
def _imports():
    """torch and the page's modules, imported when this module's tests run,
    not when pytest collects it: every xdist worker collects every module,
    and torch with its compiler costs a worker about two CPU-seconds."""
    global torch, BatchNorm, LayerNorm, RMSNorm
    from pagekit.section import import_torch

    torch = import_torch()
    from normalisation_layers.norms import BatchNorm, LayerNorm, RMSNorm


def _close(a, b, tol=1e-6):
    return torch.allclose(a, b, rtol=tol, atol=tol)


def test_batch_norm_equals_batchnorm1d_in_training_and_evaluation():
    gen = torch.Generator().manual_seed(0)
    ours, theirs = BatchNorm(16), torch.nn.BatchNorm1d(16)
    for step in range(5):
        x = 3 * torch.randn(32, 16, generator=gen) + step
        assert _close(ours(x), theirs(x))
        assert _close(ours.running_mean, theirs.running_mean)
        assert _close(ours.running_var, theirs.running_var)
    ours.eval()
    theirs.eval()
    x = 2 * torch.randn(8, 16, generator=gen) - 1
    assert _close(ours(x), theirs(x))


def test_batch_norm_gradients_equal_batchnorm1d():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(32, 8, generator=gen, requires_grad=True)
    x2 = x.detach().clone().requires_grad_(True)
    ours, theirs = BatchNorm(8), torch.nn.BatchNorm1d(8)
    w = torch.randn(32, 8, generator=gen)
    (ours(x) * w).sum().backward()
    (theirs(x2) * w).sum().backward()
    assert _close(x.grad, x2.grad, 1e-5)
    assert _close(ours.gain.grad, theirs.weight.grad, 1e-5)
    assert _close(ours.bias.grad, theirs.bias.grad, 1e-5)


@pytest.mark.parametrize("shape", [(4, 16), (2, 5, 64)])
def test_layer_norm_equals_nn_layer_norm(shape):
    gen = torch.Generator().manual_seed(4)
    x = 2 * torch.randn(*shape, generator=gen) + 1
    ours, theirs = LayerNorm(shape[-1]), torch.nn.LayerNorm(shape[-1])
    with torch.no_grad():
        g = torch.randn(shape[-1], generator=gen)
        b = torch.randn(shape[-1], generator=gen)
        ours.gain.copy_(g), theirs.weight.copy_(g)
        ours.bias.copy_(b), theirs.bias.copy_(b)
    assert theirs.eps == ours.eps
    assert _close(ours(x), theirs(x), 1e-5)


@pytest.mark.parametrize("shape", [(4, 16), (2, 5, 64)])
def test_rms_norm_equals_nn_rms_norm(shape):
    gen = torch.Generator().manual_seed(5)
    x = 2 * torch.randn(*shape, generator=gen) + 1
    ours, theirs = RMSNorm(shape[-1]), torch.nn.RMSNorm(shape[-1], eps=1e-6)
    with torch.no_grad():
        g = torch.randn(shape[-1], generator=gen)
        ours.gain.copy_(g), theirs.weight.copy_(g)
    assert _close(ours(x), theirs(x), 1e-5)
