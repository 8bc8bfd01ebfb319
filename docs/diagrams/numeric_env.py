"""One numeric environment for every run, pinned before numpy or torch loads.

Why: "same seed, same numbers" holds only if rounding is the same, and
rounding depends on which kernels the libraries pick for this CPU. OpenBLAS
(numpy's BLAS) and torch (its own kernels, MKL, oneDNN) choose by CPU
features, so a matmul sums in a different order on an AVX-512 machine than on
an AVX2 one, and a chaotic training run turns that last-bit difference into a
different conclusion. Pinning every choice to a family each x86-64 machine of
the last decade has (AVX2 with FMA, OpenBLAS's Haswell kernels) and to one
thread gives the same bits on any such machine.

The pin WINS over the caller's environment: a stray OPENBLAS_CORETYPE in a
shell must not change the committed numbers. The one deliberate knob is
NUMERIC_VARIANT, which the robustness report uses to rerun a section under
other kernels (to learn which results survive rounding); a run under a variant
never writes into figures/. A machine that cannot run the pinned kernels (no
AVX2/FMA, or not x86-64) is told so once, and runs with the library defaults.

Imported by section_kit before numpy; must stay free of heavy imports.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from importlib import metadata

VARIANT_ENV = "NUMERIC_VARIANT"
PINNED = "pinned"

# The page's own numeric environment.
PIN: dict[str, str] = {
    "OPENBLAS_CORETYPE": "Haswell",  # AVX2 + FMA kernels, whatever newer CPU runs them
    "OPENBLAS_NUM_THREADS": "1",  # one thread: a fixed order of every sum
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "ATEN_CPU_CAPABILITY": "avx2",  # torch's own vectorised kernels
    "MKL_CBWR": "AVX2,STRICT",  # MKL's conditional numerical reproducibility
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "TORCH_NUM_THREADS": "1",  # read by section_kit.import_torch
}

# Other kernels, for the robustness report only: what rounding alone changes.
VARIANTS: dict[str, dict[str, str]] = {
    PINNED: {},
    "openblas-sandybridge": {"OPENBLAS_CORETYPE": "Sandybridge"},  # AVX, no FMA
    "openblas-prescott": {"OPENBLAS_CORETYPE": "Prescott"},  # SSE3
    "torch-default": {  # torch, MKL and oneDNN without AVX
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_CBWR": "COMPATIBLE",
        "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
        "ONEDNN_MAX_CPU_ISA": "SSE41",
    },
    "torch-two-threads": {"TORCH_NUM_THREADS": "2"},
}
# The pin's entries that need AVX2 and FMA on x86-64.
NEEDS_AVX2 = ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS",
              "ONEDNN_MAX_CPU_ISA")
WARNED_ENV = "NUMERIC_ENV_WARNED"  # set once told, so child processes stay quiet


class VariantError(ValueError):
    """NUMERIC_VARIANT names no known variant."""


def variant_name() -> str:
    name = os.environ.get(VARIANT_ENV) or PINNED
    if name not in VARIANTS:
        raise VariantError(f"${VARIANT_ENV}={name!r} is not a numeric variant "
                           f"(known: {', '.join(VARIANTS)})")
    return name


def settings(variant: str | None = None) -> dict[str, str]:
    """The environment variables a variant sets (the pin plus its changes)."""
    variant = variant or variant_name()
    return {**PIN, **VARIANTS[variant]}


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def can_honour_pin() -> bool:
    return platform.machine() in ("x86_64", "AMD64") and {"avx2", "fma"} <= cpu_flags()


def cpu_model() -> str:
    """The processor's name, for measured quotes (timings) only."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def apply() -> str:
    """Set the variables before numpy or torch loads; returns the variant."""
    variant = variant_name()
    wanted = settings(variant)
    honoured = can_honour_pin()
    if not honoured:
        wanted = {k: v for k, v in wanted.items() if k not in NEEDS_AVX2}
        if not os.environ.get(WARNED_ENV):
            print(f"note: this machine ({platform.machine()}, without AVX2/FMA) cannot run the pinned "
                  "kernels (OpenBLAS Haswell, torch avx2); using the library defaults, so the last "
                  "digits may differ from the committed numbers", file=sys.stderr)
            os.environ[WARNED_ENV] = "1"
    loaded = [name for name in ("numpy", "torch") if name in sys.modules]
    if loaded:  # the libraries read these variables when they load
        raise RuntimeError(f"numeric_env must be applied before {' and '.join(loaded)} is imported: "
                           "import section_kit (or numeric_env) first")
    os.environ.update(wanted)
    return variant


def fingerprint(variant: str | None = None) -> str:
    """What the numeric environment contributes to a section's input hash."""
    return json.dumps({"variant": variant or variant_name(), "settings": settings(variant)}, sort_keys=True)


def record() -> dict:
    """The environment a numbers file was made in: the same on every machine
    that honours the pin (no CPU model here, or files would differ)."""
    versions = {}
    for package in ("numpy", "scipy", "matplotlib", "torch"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    variant = variant_name()
    return {
        "variant": variant,
        "honoured": can_honour_pin(),
        "machine": platform.machine(),
        "python": platform.python_version_tuple()[0] + "." + platform.python_version_tuple()[1],
        "packages": versions,
        "openblas_core": openblas_core(),
        "torch_cpu_capability": settings(variant)["ATEN_CPU_CAPABILITY"],
        "threads": {"blas": 1, "torch": int(settings(variant)["TORCH_NUM_THREADS"])},
    }


def openblas_core() -> str | None:
    """The OpenBLAS kernel family numpy actually runs (threadpoolctl asks the
    loaded library itself), or None before numpy is loaded."""
    if "numpy" not in sys.modules:
        return None
    from threadpoolctl import threadpool_info

    for pool in threadpool_info():
        if pool.get("internal_api") == "openblas":
            return pool.get("architecture")
    return None
