"""The vendor-neutral pin and its fingerprint (`make doctor`).

torch's matrix products run on numpy's OpenBLAS under the pin (no MKL BLAS
routine is called by any torch section); the fingerprint is deterministic,
sees a change of kernels, and names the operation that differs; a machine
whose fingerprint differs is told so, and the bit-level tests skip there
(conftest.PIN_HOLDS) instead of failing on last-bit differences.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from pagekit import kernel_fingerprint
from pagekit import numeric_env
from pagekit import openblas_matmul
from conftest import FOREIGN_KERNELS, REPO_ROOT, skip_bit_level


def fresh_fingerprint(*args: str, **env: str) -> subprocess.CompletedProcess:
    """kernel_fingerprint.py in a fresh interpreter (the pin must load before
    numpy and torch), as from a shell plus ``env``."""
    ours = {
        *numeric_env.PIN,
        numeric_env.VARIANT_ENV,
        numeric_env.WARNED_ENV,
        numeric_env.FOREIGN_KERNELS_ENV,
        kernel_fingerprint.EXPECTED_ENV,
    }
    clean = {k: v for k, v in os.environ.items() if k not in ours}
    return subprocess.run(
        [sys.executable, "-m", "pagekit.kernel_fingerprint", *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def hashes(listing: str) -> dict[str, str]:
    return {line[:60].strip(): line[60:].strip() for line in listing.splitlines() if line.strip()}


@pytest.fixture(scope="module")
def pinned_listing() -> dict[str, str]:
    done = fresh_fingerprint("--list")
    assert done.returncode == 0, done.stderr
    return hashes(done.stdout)


def test_torch_products_run_on_openblas_under_the_pin():
    """This process is pinned (conftest imports pagekit): torch's
    products are numpy's, bit for bit, in float32 and float64, plain,
    transposed, batched, with a bias, and through autograd."""
    if not numeric_env.can_honour_pin():
        pytest.skip(f"the pin, and with it the route, cannot hold here ({numeric_env.machine_name()})")
    assert openblas_matmul.installed() and numeric_env.torch_matmul_route() == numeric_env.OPENBLAS
    g = torch.Generator().manual_seed(3)
    for dtype in (torch.float32, torch.float64):
        a, b = torch.randn(70, 33, generator=g, dtype=dtype), torch.randn(33, 45, generator=g, dtype=dtype)
        assert np.array_equal((a @ b).numpy(), a.numpy() @ b.numpy())
        assert np.array_equal((b.t() @ a.t()).numpy(), b.numpy().T @ a.numpy().T)
        batch = torch.randn(6, 70, 33, generator=g, dtype=dtype)
        assert np.array_equal(torch.bmm(batch, b.expand(6, 33, 45)).numpy(), np.matmul(batch.numpy(), b.numpy()))
        bias = torch.randn(45, generator=g, dtype=dtype)
        assert np.array_equal(torch.addmm(bias, a, b).numpy(), a.numpy() @ b.numpy() + bias.numpy())
        assert np.array_equal(
            torch.addmm(bias, a, b, beta=0.5, alpha=2).numpy(), 2 * (a.numpy() @ b.numpy()) + 0.5 * bias.numpy()
        )
        assert np.array_equal(torch.mv(a, b[:, 0]).numpy(), a.numpy() @ b.numpy()[:, 0])
    weight = torch.randn(45, 33, generator=g, dtype=torch.float64, requires_grad=True)
    x = torch.randn(70, 33, generator=g, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.linear(x, weight).sum().backward()
    assert np.array_equal(weight.grad.numpy(), np.ones((45, 70)) @ x.detach().numpy())
    assert torch.autograd.gradcheck(
        lambda p, q: torch.baddbmm(p, q, q.transpose(1, 2)),
        (
            torch.randn(2, 4, 4, dtype=torch.float64, requires_grad=True),
            torch.randn(2, 4, 3, dtype=torch.float64, requires_grad=True),
        ),
    )


def test_no_torch_section_calls_an_mkl_blas_routine():
    """MKL picks its BLAS kernels by CPU vendor: under the pin not one torch
    section's reduced run may call one (MKL_VERBOSE prints every call)."""
    skip_bit_level()
    for page, section in (("normalisation_layers", "qk_norm"),):  # linear layers, attention, AdamW, clipping
        script = REPO_ROOT / "docs" / "diagrams" / page / f"{section}.py"
        done = subprocess.run(
            [sys.executable, str(script), "--reduced", "--no-figures", "--quiet"],
            env={**os.environ, "MKL_VERBOSE": "1"},
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        calls = [
            line
            for line in (done.stdout + done.stderr).splitlines()
            if line.startswith("MKL_VERBOSE") and "(" in line and "oneMKL" not in line
        ]
        assert calls == [], f"{section} called MKL: {calls[:3]}"


def test_the_fingerprint_is_the_same_in_every_fresh_process(pinned_listing):
    again = fresh_fingerprint("--list")
    assert hashes(again.stdout) == pinned_listing


def test_the_fingerprint_sees_other_kernels(pinned_listing):
    """Other OpenBLAS kernels change the products (numpy's and torch's);
    torch without AVX changes torch's element-wise kernels: a fingerprint
    that missed them would vouch for a machine that does not reproduce."""
    skip_bit_level()
    sandybridge = hashes(fresh_fingerprint("--list", **{numeric_env.VARIANT_ENV: "openblas-sandybridge"}).stdout)
    changed = {label for label in pinned_listing if sandybridge.get(label) != pinned_listing[label]}
    assert "torch matmul 1024x64x170" in changed and "numpy float64 matmul 256x48x48" in changed
    assert "torch softmax" not in changed
    default = hashes(fresh_fingerprint("--list", **{numeric_env.VARIANT_ENV: "torch-default"}).stdout)
    changed = {label for label in pinned_listing if default.get(label) != pinned_listing[label]}
    assert {"torch exp", "torch silu, gelu, relu", "torch softmax backward"} <= changed
    assert not any(label.startswith("numpy") for label in changed)


def test_the_committed_fingerprint_is_of_the_pin_and_this_machine_matches_it(pinned_listing):
    expected = json.loads(kernel_fingerprint.EXPECTED_PATH.read_text(encoding="utf-8"))
    assert expected["settings"] == numeric_env.settings(numeric_env.PINNED), (
        "the pin changed: record the fingerprint again (kernel_fingerprint.py --record)"
    )
    assert list(expected["hashes"]) == list(pinned_listing), "the probed operations changed: --record"
    skip_bit_level()
    rows = [(label, "torch", digest) for label, digest in pinned_listing.items()]
    assert kernel_fingerprint.compare(rows, expected) == []


def test_a_foreign_fingerprint_is_named_with_its_operation_and_library(tmp_path, pinned_listing):
    """A machine whose kernels differ (simulated: an expected file with one
    hash changed) is told which operation differs, in which library, and
    make doctor exits 1; the one-line reason names it too."""
    expected = json.loads(kernel_fingerprint.EXPECTED_PATH.read_text(encoding="utf-8"))
    label = "torch attention scores (bmm)"
    expected["hashes"][label] = "0" * 16
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps(expected), encoding="utf-8")
    done = fresh_fingerprint(**{kernel_fingerprint.EXPECTED_ENV: str(foreign)})
    assert done.returncode == 1
    line = next(line for line in done.stdout.splitlines() if label in line)
    assert "DIFFERS" in line and "0" * 16 in line
    if numeric_env.can_honour_pin():
        assert "OpenBLAS" in line and "cannot reproduce the committed numbers" in done.stdout
    else:  # the machine's own kernels: the report says the pin cannot hold
        assert "MKL" in line and "The numeric pin cannot hold here" in done.stdout
    # the one-line reason, for a machine that matches the committed hashes but in that one operation
    committed = json.loads(kernel_fingerprint.EXPECTED_PATH.read_text(encoding="utf-8"))["hashes"]
    reason = kernel_fingerprint._reason([(name, "torch", digest) for name, digest in committed.items()], expected)
    assert f"first: {label}" in reason and "make doctor" in reason


def test_the_skip_reason_names_the_fingerprint_where_it_differs():
    """conftest's reason for every bit-level skip: None here when this
    machine reproduces; otherwise the fingerprint's one line."""
    if FOREIGN_KERNELS is None:
        assert kernel_fingerprint.mismatch_reason() is None
    else:
        assert "make doctor" in FOREIGN_KERNELS or "cannot honour" in FOREIGN_KERNELS
        pytest.skip(f"bit-level checks skipped here: {FOREIGN_KERNELS}")


def test_make_figures_says_when_its_numbers_are_not_the_pages_own(monkeypatch, capsys):
    """Where the fingerprint differs, `make figures` says so before it runs
    anything, and every record it writes says the pin did not hold."""
    from pagekit import run_sections

    if not numeric_env.can_honour_pin():
        pytest.skip(f"this machine cannot honour the pin at all ({numeric_env.machine_name()})")
    reason = "this machine's kernels round differently (simulated)"
    monkeypatch.setattr(kernel_fingerprint, "mismatch_reason", lambda: reason)
    monkeypatch.delenv(numeric_env.FOREIGN_KERNELS_ENV, raising=False)  # restored as it was after the test
    try:
        run_sections.warn_if_foreign_kernels()
        assert f"note: {reason}" in capsys.readouterr().err
        assert numeric_env.record()["honoured"] is False
        os.environ.pop(numeric_env.FOREIGN_KERNELS_ENV)
        assert numeric_env.record()["honoured"] is True  # the pin holds here; only the kernels were foreign
    finally:
        os.environ.pop(numeric_env.FOREIGN_KERNELS_ENV, None)
