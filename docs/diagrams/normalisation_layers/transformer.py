"""The small character-level Transformer of sections 7-9.

Pieces, each as the page describes them: ``SwiGLU`` (the feed-forward
layer), ``rotary`` (rotary position encoding), ``Attention`` (causal
self-attention, optionally with QK-norm, recording its largest logit),
``Block`` (pre-norm or post-norm), ``LanguageModel`` and
``build_language_model`` (seeded construction). Layer norm and RMS norm are
the page's own (``norms.py``), tested against ``nn.LayerNorm`` and
``nn.RMSNorm``.
"""

from __future__ import annotations

import math

from pagekit.section import import_torch

torch = import_torch()
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from normalisation_layers.norms import LayerNorm, RMSNorm  # noqa: E402

ROTARY_BASE = 10000.0
PRE, POST = "pre", "post"
NORMS = {"layer": LayerNorm, "rms": RMSNorm}


class SwiGLU(nn.Module):
    """Gated feed-forward layer: down(silu(gate(x)) * up(x)), no biases."""

    def __init__(self, dim: int):
        super().__init__()
        hidden = int(8 * dim / 3)  # 170 for dim 64
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


_ROTARY_CACHE: dict[tuple[int, int], tuple] = {}
_MASK_CACHE: dict[int, object] = {}


def causal_mask(length: int):
    """(length, length): 0 where a position may look (itself and earlier),
    -inf where it may not; added to the logits (cached)."""
    if length not in _MASK_CACHE:
        allowed = torch.ones(length, length, dtype=torch.bool).tril()
        _MASK_CACHE[length] = torch.zeros(length, length).masked_fill(~allowed, -math.inf)
    return _MASK_CACHE[length]


def rotary_tables(length: int, head_dim: int):
    """cos and sin of the angles position * base^(-2i/d), each (length, d),
    the d/2 frequencies repeated for the two halves (cached)."""
    key = (length, head_dim)
    if key not in _ROTARY_CACHE:
        half = head_dim // 2
        frequencies = ROTARY_BASE ** (-torch.arange(half, dtype=torch.float64) * 2 / head_dim)
        angles = torch.arange(length, dtype=torch.float64)[:, None] * frequencies[None, :]
        angles = torch.cat([angles, angles], dim=-1)
        _ROTARY_CACHE[key] = (angles.cos().float(), angles.sin().float())
    return _ROTARY_CACHE[key]


def rotate_half(x):
    """(x1, x2) -> (-x2, x1), halves of the last dimension."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def rotary(x, positions_axis: int = -2):
    """Rotary position encoding of x (..., T, ..., d): channel i and channel
    i + d/2 are rotated together by the angle position * base^(-2i/d);
    positions run along ``positions_axis`` (default: the one before d)."""
    length, head_dim = x.shape[positions_axis], x.shape[-1]
    cos, sin = rotary_tables(length, head_dim)
    trailing = (1,) * (-positions_axis - 2)  # axes between positions and channels
    cos, sin = cos.view(length, *trailing, head_dim), sin.view(length, *trailing, head_dim)
    return x * cos + rotate_half(x) * sin


class Attention(nn.Module):
    """Causal self-attention with rotary encoding and optional QK-norm.

    Records (unless ``record`` is off), for the last forward pass, the
    largest |logit| (before the causal mask) and, with QK-norm, the bound
    sqrt(d_head) * max|g_q| * max|g_k| that the learned gains put on it.
    """

    def __init__(self, dim: int, heads: int, qk_norm: bool = False, record: bool = True):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.q_norm = RMSNorm(self.head_dim) if qk_norm else None
        self.k_norm = RMSNorm(self.head_dim) if qk_norm else None
        self.out = nn.Linear(dim, dim, bias=False)
        self.recording = record
        self.largest_logit = 0.0
        self.logit_bound = math.inf

    def forward(self, x):
        batch, length, dim = x.shape
        # split, not indexing: the backward of an index fills a zero tensor
        # the size of qkv for each piece (a twentieth of a training step).
        qk, v = self.qkv(x).view(batch, length, 3, self.heads, self.head_dim).split((2, 1), dim=2)
        if self.q_norm is not None:
            q, k = qk.unbind(dim=2)
            qk = torch.stack([self.q_norm(q), self.k_norm(k)], dim=2)
        qk = rotary(qk, positions_axis=-4)  # q and k together, (batch, length, 2, heads, head_dim)
        q, k = qk.transpose(1, 3).unbind(dim=2)  # each (batch, heads, length, head_dim)
        v = v.squeeze(2).transpose(1, 2)
        logits = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.recording:
            self.record(logits)
        weights = (logits + causal_mask(length)).softmax(dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(batch, length, dim)
        return self.out(y)

    def record(self, logits):
        self.largest_logit = logits.detach().abs().max().item()
        if self.q_norm is not None:
            g_q, g_k = self.q_norm.gain.detach(), self.k_norm.gain.detach()
            self.logit_bound = math.sqrt(self.head_dim) * (g_q.abs().max() * g_k.abs().max()).item()


class Block(nn.Module):
    """One Transformer block; ``norm`` is a class (LayerNorm or RMSNorm),
    ``place`` "pre" (normalise each branch's input) or "post" (normalise
    the stream after each addition)."""

    def __init__(self, dim: int, heads: int, norm, place: str, qk_norm: bool = False, record: bool = True):
        super().__init__()
        if place not in (PRE, POST):
            raise ValueError(f"place must be {PRE!r} or {POST!r}, not {place!r}")
        self.place = place
        self.norm1 = norm(dim)
        self.attn = Attention(dim, heads, qk_norm, record)
        self.norm2 = norm(dim)
        self.ffn = SwiGLU(dim)

    def forward(self, x):
        if self.place == PRE:
            x = x + self.attn(self.norm1(x))
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.ffn(x))


class LanguageModel(nn.Module):
    """Embedding, blocks, a final norm (pre-norm only), bias-free head.
    ``record_logits`` off: the attention layers record nothing (a run that
    never reads the records saves the pass over every logit)."""

    def __init__(
        self,
        vocab: int,
        dim: int = 64,
        layers: int = 12,
        heads: int = 4,
        norm=LayerNorm,
        place: str = PRE,
        qk_norm: bool = False,
        record_logits: bool = True,
    ):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, norm, place, qk_norm, record_logits) for _ in range(layers))
        self.final_norm = norm(dim) if place == PRE else nn.Identity()
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.final_norm(x))

    def largest_logits(self) -> list[float]:
        """Each block's largest |attention logit| in the last forward pass."""
        return [block.attn.largest_logit for block in self.blocks]

    def logit_bounds(self) -> list[float]:
        """Each block's QK-norm bound in the last forward pass (inf without)."""
        return [block.attn.logit_bound for block in self.blocks]


def build_language_model(seed: int, vocab: int, **config) -> LanguageModel:
    """A LanguageModel with PyTorch's default initialisation drawn right
    after ``torch.manual_seed(seed)``, parameters in creation order."""
    torch.manual_seed(seed)
    return LanguageModel(vocab, **config)
