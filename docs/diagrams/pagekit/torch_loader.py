"""Torch, imported once per process with the pinned thread count.

Decides numbers (torch's thread count fixes the order of its sums), so it
is one of the inputs of every section (inputs.py).
"""

from __future__ import annotations

import os
import sys

from pagekit import numeric_env

NUMERIC_VARIANT = numeric_env.applied_variant()


# Torch, imported once per process and only by the sections that use it.

_TORCH = None


def import_torch():
    """Import torch with one thread per process (the numeric environment's
    TORCH_NUM_THREADS): parallel sections must not fight over the two cores,
    and one thread fixes the order of every sum. Says once if torch runs
    other kernels than the pinned ones.

    (``torch.use_deterministic_algorithms`` is left alone: it concerns GPU
    kernels, and merely calling it imports torch's compiler, about a second.)
    """
    global _TORCH
    if _TORCH is None:
        import torch

        torch.set_num_threads(int(os.environ.get("TORCH_NUM_THREADS", "1")))
        numeric_env.install_routes()  # already done by the import hook, unless a route module imported torch
        wanted = numeric_env.settings(NUMERIC_VARIANT)["ATEN_CPU_CAPABILITY"].upper()
        running = torch.backends.cpu.get_cpu_capability().upper()
        if numeric_env.can_honour_pin() and running != wanted and not os.environ.get(numeric_env.WARNED_ENV):
            print(f"note: torch runs {running} kernels, not the pinned {wanted}", file=sys.stderr)
            os.environ[numeric_env.WARNED_ENV] = "1"
        _TORCH = torch
    return _TORCH
