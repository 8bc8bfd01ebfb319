"""`make doctor`: does this machine's arithmetic give the committed numbers?

A fingerprint of the kernels the pages compute with, under the numeric pin:
each operation the section scripts use (numpy's and torch's matrix products,
torch's element-wise maths, norms, losses and their backward passes, the
optimisers' steps, and one training step of a small Transformer and of a
batch-norm MLP built from the same parts as the pages' models) runs on fixed
inputs at the pages' shapes, and its result is hashed. The committed hashes
(kernel_fingerprint.json, recorded where the committed numbers were made)
must all be equal here for this machine to reproduce the pages' numbers to
the bit. Where one differs, the report names the operation, the machine
(vendor, instruction set), the libraries that compute it and their versions.

The tests (conftest.py) and `make figures` (run_sections.py) ask
``mismatch_reason()``: the answer is kept under build/ for this machine, these
packages and this fingerprint, so it costs a few seconds once.

    python docs/diagrams/kernel_fingerprint.py           # the report; exit 1 if an operation differs
    python docs/diagrams/kernel_fingerprint.py --record  # write this machine's hashes as the expected ones
    python docs/diagrams/kernel_fingerprint.py --list    # just the hashes
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
from pathlib import Path

from pagekit import numeric_env

from pagekit.paths import PACKAGE_DIR, REPO_ROOT

EXPECTED_PATH = PACKAGE_DIR / "kernel_fingerprint.json"
# A test (and an author who wants to see the skip path) points this at
# another expected file: a simulated foreign machine.
EXPECTED_ENV = "KERNEL_FINGERPRINT_EXPECTED"
CACHE_DIR = REPO_ROOT / "build" / "kernel-fingerprint"
# Which library computes each kind of operation under the pin, for the report.
LIBRARY = {
    "numpy matmul": "OpenBLAS (numpy)",
    "numpy": "numpy's own loops",
    "torch matmul": "OpenBLAS (torch's products, numeric_env's route)",
    "torch": "torch's own kernels and MKL's vector maths",
}


def _digest(array) -> str:
    import numpy as np

    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


def _numpy_rows() -> list[tuple[str, str, str]]:
    import numpy as np

    rng = np.random.default_rng(20261202)
    rows = []
    # page 1: batched float64 products of residual_placement, float32 of the
    # worked examples; odd sizes reach the kernels' edge code
    for dtype in (np.float64, np.float32):
        for shape in ((256, 48, 48), (16, 256, 48), (8, 48, 1), (65, 33, 17)):
            m, k, n = shape
            a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
            rows.append((f"numpy {np.dtype(dtype).name} matmul {m}x{k}x{n}", "numpy matmul", _digest(a @ b)))
        batch = rng.standard_normal((12, 64, 48)).astype(dtype)
        weights = rng.standard_normal((12, 48, 96)).astype(dtype)
        rows.append(
            (
                f"numpy {np.dtype(dtype).name} batched matmul 12x64x48x96",
                "numpy matmul",
                _digest(np.matmul(batch, weights)),
            )
        )
        rows.append((f"numpy {np.dtype(dtype).name} transposed matmul", "numpy matmul", _digest(batch[0].T @ batch[1])))
        x = rng.standard_normal(4099).astype(dtype) * 3
        for name in ("tanh", "exp", "log1p", "sqrt"):
            value = getattr(np, name)(np.abs(x) if name in ("log1p", "sqrt") else x)
            rows.append((f"numpy {np.dtype(dtype).name} {name}", "numpy", _digest(value)))
        rows.append(
            (
                f"numpy {np.dtype(dtype).name} sum, mean, var",
                "numpy",
                _digest(np.array([x.sum(), x.mean(), x.var(), np.cumsum(x)[-1]])),
            )
        )
        rows.append(
            (f"numpy {np.dtype(dtype).name} sort order", "numpy", _digest(np.argsort(np.round(x, 1), kind="stable")))
        )
    return rows


def _torch_rows() -> list[tuple[str, str, str]]:
    import torch
    from torch.nn import functional as F

    torch.set_num_threads(int(os.environ.get("TORCH_NUM_THREADS", "1")))
    g = torch.Generator().manual_seed(20261202)
    rows = []

    def add(label, kind, tensor):
        rows.append((label, kind, _digest(tensor.detach().contiguous().numpy())))

    def grad_of(fn, *shape, dtype=torch.float32):
        x = torch.randn(*shape, generator=g, dtype=dtype, requires_grad=True)
        fn(x).pow(2).sum().backward()
        return x.grad

    # products at the pages' shapes: the MLPs (batch 128, width 128, 8 layers),
    # the Transformers (16 windows of 32 or 64 tokens, width 64, 4 heads,
    # SwiGLU hidden 170, 78 characters), page 1's float64 autograd check
    for m, k, n in (
        (128, 128, 128),
        (128, 32, 128),
        (4096, 128, 8),
        (512, 64, 192),
        (1024, 64, 170),
        (1024, 170, 64),
        (1024, 64, 78),
        (65, 33, 17),
    ):
        a, b = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
        add(f"torch matmul {m}x{k}x{n}", "torch matmul", a @ b)
        add(f"torch matmul {m}x{k}x{n}, transposed operands", "torch matmul", (b.t().contiguous().t().t() @ a.t()).t())
    bias = torch.randn(192, generator=g)
    add(
        "torch linear with bias (addmm)",
        "torch matmul",
        F.linear(torch.randn(512, 64, generator=g), torch.randn(192, 64, generator=g), bias),
    )
    add(
        "torch linear 3-d input",
        "torch matmul",
        F.linear(torch.randn(16, 64, 64, generator=g), torch.randn(170, 64, generator=g)),
    )
    q, k, v = torch.randn(3, 16, 4, 64, 16, generator=g).unbind(0)
    add("torch attention scores (bmm)", "torch matmul", q @ k.transpose(-2, -1))
    add(
        "torch attention scores, strided views",
        "torch matmul",
        q.transpose(1, 2).transpose(1, 2) @ k.permute(0, 1, 3, 2),
    )
    add(
        "torch float64 matmul",
        "torch matmul",
        torch.randn(200, 48, generator=g, dtype=torch.float64) @ torch.randn(48, 96, generator=g, dtype=torch.float64),
    )
    add("torch linear backward", "torch matmul", grad_of(lambda t: F.linear(t, torch.ones(96, 64) / 8), 512, 64))

    x = torch.randn(16, 64, 64, generator=g)
    add("torch softmax", "torch", torch.softmax(x, -1))
    add("torch log_softmax", "torch", torch.log_softmax(x, -1))
    for name in ("exp", "tanh", "sqrt", "rsqrt", "log", "sigmoid"):
        value = x.abs() + 0.5 if name in ("sqrt", "rsqrt", "log") else x
        add(f"torch {name}", "torch", getattr(torch, name)(value))
    add("torch sqrt of a scalar", "torch", torch.sqrt(x.pow(2).sum()))
    add("torch silu, gelu, relu", "torch", torch.stack([F.silu(x), F.gelu(x), F.relu(x)]))
    add("torch rms norm (rsqrt of mean square)", "torch", x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))
    add("torch layer_norm", "torch", F.layer_norm(x, (64,)))
    add("torch mean, var, sum", "torch", torch.stack([x.mean(-1), x.var(-1), x.sum(-1)]))
    add("torch large reduction", "torch", torch.stack([x.sum(), x.var(), x.abs().max()]))
    batch = torch.randn(128, 128, generator=g)
    add(
        "torch batch_norm (training)",
        "torch",
        F.batch_norm(batch, torch.zeros(128), torch.ones(128), training=True, momentum=0.1),
    )
    add(
        "torch cross_entropy",
        "torch",
        F.cross_entropy(torch.randn(1024, 78, generator=g), torch.randint(0, 78, (1024,), generator=g)),
    )
    for label, fn, shape in (
        ("softmax", lambda t: torch.softmax(t, -1), (16, 4, 64, 64)),
        ("log_softmax", lambda t: torch.log_softmax(t, -1), (1024, 78)),
        ("layer_norm", lambda t: F.layer_norm(t, (64,)), (16, 64, 64)),
        ("rms norm", lambda t: t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6), (16, 64, 64)),
        ("silu", F.silu, (16, 64, 170)),
        ("batch_norm", lambda t: F.batch_norm(t, None, None, training=True), (128, 128)),
        ("relu", F.relu, (128, 128)),
        ("tanh", torch.tanh, (128, 128)),
    ):
        add(f"torch {label} backward", "torch", grad_of(fn, *shape))
    emb = torch.randn(78, 64, generator=g, requires_grad=True)
    F.embedding(torch.randint(0, 78, (16, 64), generator=g), emb).pow(2).sum().backward()
    add("torch embedding backward", "torch", emb.grad)
    add(
        "torch float64 element-wise",
        "torch",
        torch.tanh(torch.randn(4099, generator=g, dtype=torch.float64)).exp().sqrt(),
    )

    # optimisers: AdamW and clipping in their multi-tensor form (page 2's
    # Transformers), SGD with momentum (the MLPs), fused float64 Adam (page 1)
    params = [torch.randn(*s, generator=g, requires_grad=True) for s in ((64, 64), (170, 64), (64,), (78, 64))]
    for p in params:
        p.grad = torch.randn(p.shape, generator=g)
    torch.nn.utils.clip_grad_norm_(params, 0.5, foreach=True)
    add("torch clip_grad_norm (foreach)", "torch", torch.cat([p.grad.reshape(-1) for p in params]))
    adamw = torch.optim.AdamW(params, lr=0.01, betas=(0.9, 0.95), weight_decay=0.1, foreach=True)
    for _ in range(3):
        adamw.step()
    add("torch AdamW steps (foreach)", "torch", torch.cat([p.detach().reshape(-1) for p in params]))
    sgd = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    for _ in range(3):
        sgd.step()
    add("torch SGD momentum steps", "torch", torch.cat([p.detach().reshape(-1) for p in params]))
    doubles = [torch.randn(48, 48, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(2)]
    for p in doubles:
        p.grad = torch.randn(p.shape, generator=g, dtype=torch.float64)
    torch.optim.Adam(doubles, lr=0.003, fused=True).step()
    add("torch fused Adam float64", "torch", torch.cat([p.detach().reshape(-1) for p in doubles]))

    rows += _training_steps(torch, F, g)
    return rows


def _training_steps(torch, F, g) -> list[tuple[str, str, str]]:
    """One training step of a small pre-norm Transformer block (RMS norm,
    QK-norm, causal attention, SwiGLU; AdamW and clipping) and of a
    batch-norm MLP (SGD with momentum), each from fixed weights: every kernel
    of the pages' models in the order a step runs them."""
    from torch import nn

    rows = []
    torch.manual_seed(7)
    dim, heads, length = 64, 4, 32

    def rms(t):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6)

    qkv, out = nn.Linear(dim, 3 * dim, bias=False), nn.Linear(dim, dim, bias=False)
    up, gate, down = nn.Linear(dim, 170, bias=False), nn.Linear(dim, 170, bias=False), nn.Linear(170, dim, bias=False)
    embed, head = nn.Embedding(78, dim), nn.Linear(dim, 78, bias=False)
    model = nn.ModuleList([qkv, out, up, gate, down, embed, head])
    ids = torch.randint(0, 78, (16, length + 1), generator=g)
    mask = torch.full((length, length), float("-inf")).triu(1)
    h = embed(ids[:, :-1])
    q, k, v = qkv(rms(h)).view(16, length, 3, heads, dim // heads).permute(2, 0, 3, 1, 4)
    weights = (rms(q) @ rms(k).transpose(-2, -1) / 4 + mask).softmax(-1)
    h = h + out((weights @ v).transpose(1, 2).reshape(16, length, dim))
    h = h + down(F.silu(gate(rms(h))) * up(rms(h)))
    loss = F.cross_entropy(head(rms(h)).reshape(-1, 78), ids[:, 1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
    torch.optim.AdamW(model.parameters(), lr=0.01, foreach=True).step()
    rows.append(
        (
            "training step: Transformer block, AdamW",
            "torch matmul",
            _digest(torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy()),
        )
    )

    torch.manual_seed(8)
    layers = []
    for width_in in (32, 128, 128):
        layers += [nn.Linear(width_in, 128), nn.BatchNorm1d(128), nn.ReLU()]
    mlp = nn.Sequential(*layers, nn.Linear(128, 8))
    nn.init.kaiming_normal_(mlp[0].weight, generator=g)
    inputs, labels = torch.randn(128, 32, generator=g), torch.randint(0, 8, (128,), generator=g)
    optimiser = torch.optim.SGD(mlp.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        optimiser.zero_grad()
        F.cross_entropy(mlp(inputs), labels).backward()
        optimiser.step()
    rows.append(
        (
            "training steps: batch-norm MLP, SGD",
            "torch matmul",
            _digest(
                torch.cat(
                    [t.detach().reshape(-1) for t in [*mlp.parameters(), *mlp.buffers()] if t.is_floating_point()]
                ).numpy()
            ),
        )
    )
    return rows


def fingerprint() -> list[tuple[str, str, str]]:
    """(operation, kind, hash) for every probed operation, in a fixed order.
    The numeric pin must already be applied (pagekit.section or numeric_env.applied_variant)."""
    return _numpy_rows() + _torch_rows()


def machine() -> dict:
    """What decides the kernels: the processor, its instruction sets, the libraries."""
    import numpy as np
    import torch

    flags = numeric_env.cpu_flags()
    vendor = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            vendor = next((line.split(":", 1)[1].strip() for line in info if line.startswith("vendor_id")), vendor)
    except OSError:
        pass
    isa = [name for name in ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile") if name in flags]
    return {
        "processor": numeric_env.cpu_model(),
        "vendor": vendor,
        "architecture": platform.machine(),
        "instruction sets": ", ".join(isa) or "none of AVX2, FMA, AVX-512, AMX",
        "pin honoured": numeric_env.can_honour_pin(),
        "torch matmul": numeric_env.torch_matmul_route(),
        "numpy": np.__version__,
        "numpy loops": numeric_env.numpy_simd(),
        "OpenBLAS": f"{numeric_env.openblas_core()} kernels",
        "torch": torch.__version__,
        "torch kernels": torch.backends.cpu.get_cpu_capability(),
        "MKL branch": os.environ.get("MKL_CBWR", "automatic"),
    }


def expected_path() -> Path:
    return Path(os.environ.get(EXPECTED_ENV) or EXPECTED_PATH)


def load_expected(path: Path | None = None) -> dict:
    path = path or expected_path()
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(
            f"error: no expected fingerprint at {path}: record one with "
            "`python docs/diagrams/kernel_fingerprint.py --record`"
        ) from None
    except ValueError as error:
        raise SystemExit(f"error: {path} is not a fingerprint file ({error})") from None


def compare(rows, expected: dict) -> list[str]:
    """The operations whose hash differs from the expected one (or that one side lacks)."""
    want = expected.get("hashes", {})
    have = {label: digest for label, _, digest in rows}
    differ = [label for label, digest in have.items() if want.get(label) != digest]
    return differ + [label for label in want if label not in have]


def _cache_key(expected: dict) -> str:
    """This machine, these packages, this pin and this fingerprint's code and expectation."""
    from pagekit.inputs import result_pins

    code = "".join(
        (PACKAGE_DIR / name).read_text(encoding="utf-8")
        for name in ("kernel_fingerprint.py", "numeric_env.py", "openblas_matmul.py")
    )
    parts = [
        numeric_env.cpu_model(),
        " ".join(sorted(numeric_env.cpu_flags())),
        result_pins(),
        numeric_env.fingerprint(),
        code,
        json.dumps(expected, sort_keys=True),
        str(numeric_env.can_honour_pin()),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def _cache_file() -> Path:
    return CACHE_DIR / f"{_cache_key(load_expected())}.json"


def _cached(path: Path) -> tuple[bool, str | None]:
    """(whether this machine's answer is cached, the answer)."""
    try:
        return True, json.loads(path.read_text(encoding="utf-8"))["reason"]
    except (OSError, ValueError, KeyError):
        return False, None


def _write_atomically(path: Path, text: str) -> None:
    """Temp file, then rename: an interrupted write leaves the old file whole."""
    temporary = path.with_suffix(".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def _unpinned_reason() -> str:
    return f"this machine ({numeric_env.machine_name()}) cannot honour the numeric pin"


def cached_reason() -> str | None:
    """The cached answer of mismatch_reason, without probing: None when this
    machine reproduces the committed bits or was never probed."""
    try:
        return _cached(_cache_file())[1]
    except SystemExit:  # no expected file: nothing is known
        return None


def mismatch_reason() -> str | None:
    """None when this machine reproduces every expected hash; otherwise one
    line naming what differs (for skip reasons and `make figures`). Runs the
    probe in a child process (the pin must load before torch) unless this
    machine's answer is cached."""
    load_expected()  # a missing or broken expected file is an error, here too
    if not numeric_env.can_honour_pin():
        return _unpinned_reason()
    cached = _cache_file()
    hit, reason = _cached(cached)
    if hit:
        return reason
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != numeric_env.VARIANT_ENV}
    done = subprocess.run(
        [sys.executable, "-m", "pagekit.kernel_fingerprint", "--reason"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(f"the kernel fingerprint failed: {done.stderr.strip().splitlines()[-1:]}")
    reason = done.stdout.strip() or None
    try:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        _write_atomically(cached, json.dumps({"reason": reason}))
    except OSError:
        pass  # a read-only checkout: ask again next time
    return reason


def _reason(rows, expected: dict) -> str | None:
    differ = compare(rows, expected)
    if not differ:
        return None
    about = machine()
    return (
        f"this machine's kernels round differently from those that made the committed numbers "
        f"({len(differ)} of {len(expected.get('hashes', {}))} operations differ, first: {differ[0]}; "
        f"{about['vendor']} {about['processor']}, {about['instruction sets']}; recorded on "
        f"{expected.get('machine', {}).get('vendor', 'another machine')}): see `make doctor`"
    )


def library(kind: str) -> str:
    """Which library computed an operation of this kind in this process."""
    if kind == "torch matmul" and numeric_env.torch_matmul_route() != numeric_env.OPENBLAS:
        return "MKL (torch's own products: the pin's OpenBLAS route is off here)"
    return LIBRARY[kind]


def report(rows, expected: dict, every_line: bool = False) -> tuple[str, int]:
    about = machine()
    lines = ["This machine:"] + [f"  {key:16s} {value}" for key, value in about.items()]
    recorded = expected.get("machine", {})
    lines += [
        "The committed numbers were made on:",
        f"  {recorded.get('vendor', '?')} {recorded.get('processor', '?')} ({recorded.get('instruction sets', '?')})",
        "",
    ]
    differ = set(compare(rows, expected))
    want = expected.get("hashes", {})
    for label, kind, digest in rows:
        if label not in differ and not every_line:
            continue
        mark = "ok     " if label not in differ else "DIFFERS"
        lines.append(
            f"  {mark} {label}"
            + ("" if label not in differ else f"  ({library(kind)}: {digest} here, {want.get(label, 'none')} expected)")
        )
    lines += [f"  DIFFERS {label}  (expected, not probed here)" for label in want if label not in {r[0] for r in rows}]
    if lines[-1]:
        lines.append("")
    if not about["pin honoured"]:
        lines.append(
            f"The numeric pin cannot hold here ({numeric_env.machine_name()}): the libraries run their "
            "own kernels, so numbers will differ in their last digits; `make test` skips the bit-level "
            "checks and `make figures` marks its numbers as not the page's own run."
        )
        return "\n".join(lines), 1
    if differ:
        kinds = sorted({library(kind) for label, kind, _ in rows if label in differ})
        lines.append(
            f"{len(differ)} of {len(rows)} operations round differently here, in: {'; '.join(kinds)}. "
            "This machine cannot reproduce the committed numbers to the bit: `make test` skips the "
            "bit-level checks with this reason, and `make figures` marks what it makes as not the "
            "page's own run. If the libraries' versions differ from requirements.lock, `make venv` "
            "first; otherwise report the lines above."
        )
        return "\n".join(lines), 1
    lines.append(
        f"All {len(rows)} operations give the committed bits: this machine is expected to reproduce the "
        "pages' numbers (the probe samples each kind of operation at the pages' shapes; a full run "
        "is the final word: `make -B figures`, then `git status`)."
    )
    return "\n".join(lines), 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--record", action="store_true", help="write this machine's hashes as the expected ones")
    parser.add_argument("--list", action="store_true", help="print the hashes only")
    parser.add_argument("--reason", action="store_true", help="print only the one-line reason, if any")
    parser.add_argument("--verbose", action="store_true", help="list every operation, not only those that differ")
    args = parser.parse_args()
    numeric_env.apply()
    rows = fingerprint()
    if args.list:
        for label, _, digest in rows:
            print(f"{label:60s} {digest}")
        return 0
    if args.record:
        path = expected_path()
        record = {
            "machine": {k: v for k, v in machine().items() if k in ("processor", "vendor", "instruction sets")},
            "settings": numeric_env.settings(),
            "hashes": {label: digest for label, _, digest in rows},
        }
        _write_atomically(path, json.dumps(record, indent=1) + "\n")
        print(f"wrote {len(rows)} expected hashes to {path}")
        return 0
    expected = load_expected()
    if args.reason:
        reason = _reason(rows, expected) if numeric_env.can_honour_pin() else _unpinned_reason()
        if reason:
            print(reason)
        return 0
    text, status = report(rows, expected, every_line=args.verbose)
    print(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
