"""The MLP of the page "Normalisation layers" (sections 3 to 5), its training
loop and the smoothness probe; and the page's included code blocks."""

import ast
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def _imports():
    """torch and the page's modules, imported when this module's tests run,
    not when pytest collects it: every xdist worker collects every module,
    and torch with its compiler costs a worker about two CPU-seconds."""
    global torch, mlp, smoothness_probe, BatchNorm
    from pagekit.section import import_torch

    torch = import_torch()
    from normalisation_layers import mlp
    from normalisation_layers.loss_smoothness import smoothness_probe
    from normalisation_layers.norms import BatchNorm


PAGE = REPO_ROOT / "docs" / "normalisation-layers.md"
INCLUDE = re.compile(r"```\{literalinclude\} (?P<path>\S+)\n:pyobject: (?P<name>\S+)\n(?::\w+:.*\n)*```")


def small_data(n=256, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, mlp.DIM, generator=gen)
    y = torch.randint(0, mlp.CLASSES, (n,), generator=gen)
    return x, y


def test_plain_and_batch_norm_networks_start_from_the_same_weights():
    plain, normed = mlp.build("plain", 0), mlp.build("batch norm", 0)
    lin_plain = [m for m in plain.net if isinstance(m, torch.nn.Linear)]
    lin_normed = [m for m in normed.net if isinstance(m, torch.nn.Linear)]
    assert len(lin_plain) == len(lin_normed) == mlp.DEPTH + 1
    for a, b in zip(lin_plain, lin_normed, strict=True):
        assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
        assert torch.all(a.bias == 0)
    assert sum(isinstance(m, BatchNorm) for m in normed.net) == mlp.DEPTH
    # He initialisation: weight spread close to sqrt(2 / fan_in) in the wide layers.
    w = lin_plain[1].weight
    assert abs(w.std().item() / (2 / w.shape[1]) ** 0.5 - 1) < 0.05


def test_clusters_shapes_and_order():
    x, y, xv, yv = mlp.make_clusters(torch.Generator().manual_seed(0))
    assert x.shape == (mlp.N_TRAIN, mlp.DIM) and xv.shape == (mlp.N_VALIDATION, mlp.DIM)
    assert set(y.tolist()) == set(range(mlp.CLASSES))
    gen = torch.Generator().manual_seed(0)
    centres = torch.randn(mlp.CLASSES, mlp.DIM, generator=gen)
    labels = torch.randint(0, mlp.CLASSES, (mlp.N_TRAIN,), generator=gen)
    assert torch.equal(labels, y)
    assert torch.allclose(x, centres[labels] + mlp.NOISE * torch.randn(mlp.N_TRAIN, mlp.DIM, generator=gen))


def test_a_diverging_run_stops_and_reports_its_step():
    x, y = small_data()
    torch.manual_seed(0)
    result = mlp.train_mlp(mlp.MLP(), 30.0, x, y, 50, torch.Generator().manual_seed(0))
    assert result["diverged_at"] is not None and len(result["losses"]) == result["diverged_at"]


def test_the_probe_leaves_the_run_unchanged():
    x, y = small_data()
    runs = []
    for probe in (None, lambda model, xb, yb, step: smoothness_probe(model, xb, yb)):
        torch.manual_seed(0)
        model = mlp.MLP(BatchNorm)
        result = mlp.train_mlp(model, 0.1, x, y, 4, torch.Generator().manual_seed(0), probe=probe)
        runs.append(
            (result["losses"], [p.detach().clone() for p in model.parameters()], [b.clone() for b in model.buffers()])
        )
    (losses_a, params_a, buffers_a), (losses_b, params_b, buffers_b) = runs
    assert losses_a == losses_b
    assert all(torch.equal(a, b) for a, b in zip(params_a, params_b, strict=True))
    assert all(torch.equal(a, b) for a, b in zip(buffers_a, buffers_b, strict=True))


def test_probe_of_a_quadratic_gives_its_curvature():
    """On L(w) = c/2 |w|^2 the gradient changes at rate c along any direction."""

    class Quadratic(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(5))

        def forward(self, x):  # logits whose cross-entropy we do not use
            return x

    model = Quadratic()
    c = 3.0
    loss = 0.5 * c * (model.w**2).sum()
    loss.backward()
    import normalisation_layers.loss_smoothness as ls

    original = ls.F.cross_entropy
    ls.F.cross_entropy = lambda out, yb: 0.5 * c * (model.w**2).sum()
    try:
        beta, spread = smoothness_probe(model, torch.zeros(1), torch.zeros(1))
    finally:
        ls.F.cross_entropy = original
    assert beta == pytest.approx(c, rel=1e-5)
    assert torch.equal(model.w, torch.ones(5))


def test_page_includes_name_existing_code():
    """Every code block the page includes names a function or class that
    exists in the module the sections run, so the page shows code that ran."""
    includes = INCLUDE.findall(PAGE.read_text(encoding="utf-8"))
    assert includes, "the page includes no code"
    for path, name in includes:
        source = (PAGE.parent / path).resolve()
        assert source.is_relative_to(REPO_ROOT / "docs" / "diagrams" / "normalisation_layers"), path
        tree = ast.parse(source.read_text(encoding="utf-8"))
        names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        assert name in names, f"{path} has no top-level {name}"


def test_written_out_sgd_equals_torch_sgd():
    x, y = small_data()
    torch.manual_seed(0)
    ours = mlp.MLP(BatchNorm)
    torch.manual_seed(0)
    theirs = mlp.MLP(BatchNorm)
    result = mlp.train_mlp(ours, 0.1, x, y, 5, torch.Generator().manual_seed(0))
    optimiser = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=mlp.MOMENTUM)
    gen, losses = torch.Generator().manual_seed(0), []
    for _ in range(5):
        index = torch.randint(0, len(x), (mlp.BATCH,), generator=gen)
        loss = torch.nn.functional.cross_entropy(theirs(x[index]), y[index])
        losses.append(loss.item())
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    assert result["losses"] == losses
    assert all(torch.equal(a, b) for a, b in zip(ours.parameters(), theirs.parameters(), strict=True))
