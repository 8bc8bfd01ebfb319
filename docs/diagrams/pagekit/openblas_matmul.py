"""Torch's CPU matrix products, computed by numpy's pinned OpenBLAS.

Why: torch's CPU wheel sends every float matrix product to Intel's MKL, and
MKL picks its kernels by CPU vendor: the same product, same inputs, rounds
differently on an Intel Xeon and an AMD EPYC (its strict AVX2 branch is
honoured on Intel only; its COMPATIBLE branch is vendor-neutral but about
three times slower here). numpy's OpenBLAS, pinned to its Haswell kernels,
rounds the same on both vendors and is as fast as MKL's fastest branch at
the pages' shapes. So, under the numeric pin, the aten operators that reach
a BLAS (mm, addmm, bmm, baddbmm, mv, addmv, dot and their out= and in-place
forms) are re-registered for the CPU with kernels that call numpy's matmul.
Autograd is untouched: it sits above these kernels, and the backward
formulas call the same operators, so gradients take the same route.

``install()`` is called once per process right after torch is imported
(numeric_env's import hook); ``installed()`` says whether it was.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

# The operators re-registered, each with its schema's overload names; a test
# checks that a real run calls no MKL BLAS routine (MKL_VERBOSE).
OPERATORS = (
    "mm",
    "mm.out",
    "addmm",
    "addmm.out",
    "addmm_",
    "bmm",
    "bmm.out",
    "baddbmm",
    "baddbmm.out",
    "baddbmm_",
    "mv",
    "mv.out",
    "addmv",
    "addmv.out",
    "addmv_",
    "dot",
    "vdot",
)
# numpy has no bfloat16: these are computed in float32 and rounded back, as
# MKL's and oneDNN's half-precision products accumulate in float32 too.
_WIDENED = {torch.bfloat16: torch.float32, torch.float16: torch.float32}
_LIBRARY = None


def _array(tensor: torch.Tensor) -> np.ndarray:
    """A numpy view of ``tensor`` (any strides; widened from 16-bit floats).
    The float32 and float64 path is kept short: it runs hundreds of times
    a training step."""
    if tensor.requires_grad:
        tensor = tensor.detach()
    if tensor.dtype in _WIDENED:
        tensor = tensor.to(_WIDENED[tensor.dtype])
    elif tensor.is_complex() and tensor.is_conj():
        tensor = tensor.resolve_conj()
    return tensor.numpy()


def _product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b for matrices, batches of matrices or vectors, in a's dtype."""
    result = torch.from_numpy(np.asarray(np.matmul(_array(a), _array(b))))
    return result if result.dtype == a.dtype else result.to(a.dtype)


def _scaled_sum(product, base, beta, alpha):
    """beta * base + alpha * product, with beta == 0 ignoring base (BLAS's
    rule: NaN in an ignored base does not spread)."""
    if alpha != 1:
        product = product.mul(alpha)
    if beta == 0:
        return product
    return product.add(base if beta == 1 else base.mul(beta))


def _into(out: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    if out.shape != value.shape:
        out.resize_(value.shape)
    return out.copy_(value)


def mm(a, b):
    return _product(a, b)


def mm_out(a, b, *, out):
    return _into(out, _product(a, b))


def addmm(base, a, b, *, beta=1, alpha=1):
    return _scaled_sum(_product(a, b), base, beta, alpha)


def addmm_out(base, a, b, *, beta=1, alpha=1, out):
    return _into(out, addmm(base, a, b, beta=beta, alpha=alpha))


def addmm_(base, a, b, *, beta=1, alpha=1):
    return base.copy_(addmm(base, a, b, beta=beta, alpha=alpha))


def dot(a, b):
    return _product(a, b).reshape(())


def vdot(a, b):
    return _product(a.conj(), b).reshape(())


KERNELS = {
    "mm": mm,
    "mm.out": mm_out,
    "addmm": addmm,
    "addmm.out": addmm_out,
    "addmm_": addmm_,
    "bmm": mm,
    "bmm.out": mm_out,
    "baddbmm": addmm,
    "baddbmm.out": addmm_out,
    "baddbmm_": addmm_,
    "mv": mm,
    "mv.out": mm_out,
    "addmv": addmm,
    "addmv.out": addmm_out,
    "addmv_": addmm_,
    "dot": dot,
    "vdot": vdot,
}


def install() -> None:
    """Re-register the CPU kernels of OPERATORS (once per process)."""
    global _LIBRARY
    if _LIBRARY is not None:
        return
    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():  # "overriding a previously registered kernel": that is the point
        warnings.simplefilter("ignore")
        for name in OPERATORS:
            library.impl(name, KERNELS[name], "CPU")
    _LIBRARY = library


def installed() -> bool:
    return _LIBRARY is not None
