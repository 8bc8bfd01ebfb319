"""Torch's CPU ``sqrt`` operators, correctly rounded, as IEEE 754 defines them.

Why: torch's CPU ``sqrt`` is not correctly rounded, and its result depends
on the CPU: measured with `make doctor`, the same float32 tensor's square
roots differ between an AMD EPYC and an Intel Xeon under the same pin, and
on the Intel machine they differ from the correctly rounded roots in 17% of
the elements (contiguous or strided). AdamW calls it every step (its
denominator, through ``_foreach_sqrt``), and so do section 5's probes, so
that one operator made those runs vendor-dependent. (The roots computed
inside other kernels, ``rsqrt``, layer norm, fused Adam, are not routed.) A correctly
rounded square root has one right answer on every machine (IEEE 754 requires
it), and numpy computes it (its loops call the CPU's square-root
instruction). So, under the numeric pin, the aten operators ``sqrt``
(functional, out= and in-place) and ``_foreach_sqrt`` (functional and
in-place, AdamW's multi-tensor form) are re-registered for the CPU with
kernels that call numpy's. Autograd is untouched: sqrt's backward divides by
the result, which takes no square root.

``install()`` is called once per process right after torch is imported
(numeric_env's import hook, with openblas_matmul); ``installed()`` says
whether it was.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

OPERATORS = ("sqrt", "sqrt.out", "sqrt_", "_foreach_sqrt", "_foreach_sqrt_")
# numpy has no bfloat16: computed in float32 and rounded back once.
_WIDENED = {torch.bfloat16: torch.float32, torch.float16: torch.float32}
_LIBRARY = None


def _root(tensor: torch.Tensor) -> torch.Tensor:
    """The correctly rounded square root of every element, in the input's dtype."""
    values = tensor.detach()
    if values.dtype in _WIDENED:
        return _root(values.to(_WIDENED[values.dtype])).to(values.dtype)
    if not values.is_floating_point():  # integers: torch promotes them to the default float
        values = values.to(torch.get_default_dtype())
    return torch.from_numpy(np.asarray(np.sqrt(values.numpy())))


def sqrt(tensor):
    return _root(tensor)


def sqrt_out(tensor, *, out):
    value = _root(tensor)
    if out.shape != value.shape:
        out.resize_(value.shape)
    return out.copy_(value)


def sqrt_(tensor):
    return tensor.copy_(_root(tensor))


def foreach_sqrt(tensors):
    return [_root(t) for t in tensors]


def foreach_sqrt_(tensors):
    for t in tensors:
        t.copy_(_root(t))


KERNELS = {
    "sqrt": sqrt,
    "sqrt.out": sqrt_out,
    "sqrt_": sqrt_,
    "_foreach_sqrt": foreach_sqrt,
    "_foreach_sqrt_": foreach_sqrt_,
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
