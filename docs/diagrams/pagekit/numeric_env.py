"""One numeric environment for every run, pinned before numpy or torch loads.

Why: "same seed, same numbers" holds only if rounding is the same, and
rounding depends on which kernels the libraries pick for this CPU. OpenBLAS
(numpy's BLAS), numpy's own ufunc loops (its SIMD dispatch: tanh, exp, the
order of ties in a sort) and torch (its own kernels, MKL, oneDNN) choose by
CPU features, so a matmul sums in a different order on an AVX-512 machine
than on an AVX2 one, and a chaotic training run turns that last-bit
difference into a different conclusion. Pinning every choice to a family each
x86-64 machine of the last decade has (x86-64-v3: AVX2 with FMA, OpenBLAS's
Haswell kernels, numpy's X86_V3 loops) and to one thread gives the same bits
on any such machine, Intel or AMD.

MKL also picks its kernels by CPU vendor: its AVX2 branch (MKL_CBWR=AVX2)
is honoured on Intel only, so the same matrix product rounded differently on
an Intel Xeon and on this project's AMD EPYC machines (measured: the probe
in ../shared/cross-vendor/). Its COMPATIBLE branch is honoured on both, but
its products run about three times slower there. So the pin keeps MKL on its
COMPATIBLE branch for what torch still asks of it (vector maths such as exp),
and sends torch's matrix products to numpy's OpenBLAS instead
(TORCH_MATMUL_BLAS=openblas, see openblas_matmul.py): OpenBLAS's Haswell
kernels round the same on both vendors and run as fast as MKL's fastest
branch at the pages' shapes. ``make doctor`` (kernel_fingerprint.py) checks
that this machine's kernels give the committed bits.

The pin WINS over the caller's environment: a stray OPENBLAS_CORETYPE in a
shell must not change the committed numbers, nor a caller's
NPY_ENABLE_CPU_FEATURES (removed: numpy refuses it beside the pin's
NPY_DISABLE_CPU_FEATURES). The one deliberate knob is
NUMERIC_VARIANT, which the robustness report uses to rerun a section under
other kernels (to learn which results survive rounding); a run under a variant
never writes into figures/. A machine that cannot run the pinned kernels (no
AVX2/FMA, or not x86-64) is told so once, runs with the library defaults,
and its numbers files say so ("honoured": false), so they are never taken for
the page's own run. NUMERIC_ENV_UNPINNED=1 (UNPINNED_ENV) makes this machine
behave as such a machine (for the tests of that path only).

Imported by pagekit.section (and every module that loads numpy) first; must stay free of heavy imports.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from importlib import metadata

VARIANT_ENV = "NUMERIC_VARIANT"
PINNED = "pinned"
# Test-only: act as a machine that cannot honour the pin (library defaults).
UNPINNED_ENV = "NUMERIC_ENV_UNPINNED"
# numpy 2.4's dispatch groups above X86_V3 (numpy's __cpu_dispatch__ lists
# X86_V3 X86_V4 AVX512_ICL AVX512_SPR over its X86_V2 baseline). Disabling a
# group this CPU lacks is accepted silently; a name numpy does not dispatch
# would only raise an ImportWarning, so a test checks these names.
NUMPY_ABOVE_V3 = ("X86_V4", "AVX512_ICL", "AVX512_SPR")
NUMPY_CAP = "X86_V3"

# torch's matrix products: on numpy's pinned OpenBLAS, or on torch's own MKL.
MATMUL_ENV = "TORCH_MATMUL_BLAS"
OPENBLAS, MKL = "openblas", "mkl"
# torch's square roots: correctly rounded (numpy's), or torch's own, which
# are not and differ by CPU vendor (exact_sqrt.py).
SQRT_ENV = "TORCH_SQRT"
EXACT = "exact"

# The page's own numeric environment.
PIN: dict[str, str] = {
    "OPENBLAS_CORETYPE": "Haswell",  # AVX2 + FMA kernels, whatever newer CPU runs them
    "OPENBLAS_NUM_THREADS": "1",  # one thread: a fixed order of every sum
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "ATEN_CPU_CAPABILITY": "avx2",  # torch's own vectorised kernels
    # MKL's conditional numerical reproducibility: COMPATIBLE is the one
    # branch MKL honours on AMD as on Intel (AVX2 is Intel only: see above)
    "MKL_CBWR": "COMPATIBLE",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    MATMUL_ENV: OPENBLAS,  # torch's matrix products on numpy's OpenBLAS (see above)
    SQRT_ENV: EXACT,  # torch's square roots correctly rounded, on any CPU (exact_sqrt.py)
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "TORCH_NUM_THREADS": "1",  # read by torch_loader.import_torch
    "NPY_DISABLE_CPU_FEATURES": " ".join(NUMPY_ABOVE_V3),  # numpy's own loops capped at X86_V3
}
# Removed from the caller's environment: it would override the pin's cap
# (numpy will not even load with both set).
CLEARED = ("NPY_ENABLE_CPU_FEATURES",)

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
    # numpy's own loops at its X86_V2 baseline (SSE4.2): another tanh, exp, sort
    "numpy-x86-v2": {"NPY_DISABLE_CPU_FEATURES": " ".join((NUMPY_CAP, *NUMPY_ABOVE_V3))},
}
# The pin's entries that need AVX2 and FMA on x86-64.
NEEDS_AVX2 = (
    "OPENBLAS_CORETYPE",
    "ATEN_CPU_CAPABILITY",
    "MKL_CBWR",
    "MKL_ENABLE_INSTRUCTIONS",
    "ONEDNN_MAX_CPU_ISA",
    "NPY_DISABLE_CPU_FEATURES",
    MATMUL_ENV,
)
# x86-64-v3 as /proc/cpuinfo names it (lzcnt is "abm"): what numpy's X86_V3
# loops, OpenBLAS's Haswell and torch's avx2 kernels may use.
X86_V3_FLAGS = frozenset({"avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "abm", "movbe"})
WARNED_ENV = "NUMERIC_ENV_WARNED"  # set once told, so child processes stay quiet
# Set (to the reason) by `make figures` where the kernel fingerprint differs
# from the committed one (kernel_fingerprint.py): the pin is applied, but its
# numbers are not the page's own run, and their records say so.
FOREIGN_KERNELS_ENV = "NUMERIC_ENV_FOREIGN_KERNELS"


class VariantError(ValueError):
    """NUMERIC_VARIANT names no known variant."""


def variant_name() -> str:
    name = os.environ.get(VARIANT_ENV) or PINNED
    if name not in VARIANTS:
        raise VariantError(f"${VARIANT_ENV}={name!r} is not a numeric variant (known: {', '.join(VARIANTS)})")
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
    if os.environ.get(UNPINNED_ENV):
        return False
    return platform.machine() in ("x86_64", "AMD64") and X86_V3_FLAGS <= cpu_flags()


def machine_name() -> str:
    """The machine as the notes and skip reasons name it."""
    if os.environ.get(UNPINNED_ENV):
        return f"{platform.machine()} treated as unable to honour the pin (${UNPINNED_ENV} is set)"
    return f"{platform.machine()}, {cpu_model()}, without x86-64-v3 (AVX2, FMA)"


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
            print(
                f"note: this machine ({machine_name()}) cannot run the pinned kernels (OpenBLAS "
                "Haswell, numpy X86_V3, torch avx2); using the library defaults, so the last digits "
                "may differ from the committed numbers, and its numbers are not the page's own run",
                file=sys.stderr,
            )
            os.environ[WARNED_ENV] = "1"
    loaded = [name for name in ("numpy", "torch") if name in sys.modules]
    if loaded and _already_in_force(wanted, honoured):
        # A process started with the variant's environment (a Dask worker,
        # which loads numpy before any task: executor.dask_worker_command).
        if "torch" in sys.modules:
            install_routes()
        elif _routed() and not any(isinstance(f, _RouteTorchMatmul) for f in sys.meta_path):
            sys.meta_path.insert(0, _RouteTorchMatmul())
        return variant
    if loaded:  # the libraries read these variables when they load
        raise RuntimeError(
            f"numeric_env must be applied before {' and '.join(loaded)} is imported: "
            "import pagekit.section (or call numeric_env.applied_variant()) first"
        )
    for name in CLEARED if honoured else (MATMUL_ENV,):
        os.environ.pop(name, None)
    os.environ.update(wanted)
    if _routed() and not any(isinstance(f, _RouteTorchMatmul) for f in sys.meta_path):
        sys.meta_path.insert(0, _RouteTorchMatmul())
    return variant


def _routed() -> bool:
    return os.environ.get(MATMUL_ENV) == OPENBLAS or os.environ.get(SQRT_ENV) == EXACT


def _already_in_force(wanted: dict[str, str], honoured: bool) -> bool:
    """The environment already holds every variable the variant sets (and
    none it clears): the libraries loaded under it."""
    cleared = CLEARED if honoured else ()
    return all(os.environ.get(k) == v for k, v in wanted.items()) and not any(k in os.environ for k in cleared)


_APPLIED: str | None = None


def applied_variant() -> str:
    """apply(), once per process: the variant in force. Every module of the
    package that loads numpy, matplotlib or torch calls it first."""
    global _APPLIED
    if _APPLIED is None:
        _APPLIED = apply()
    return _APPLIED


LATE = "loaded-before-pin"  # the label of a process whose numpy loaded before the pin (apply_late)


def apply_late() -> str:
    """applied_variant() for a notebook kernel, which may have loaded numpy
    before this package (Colab's does): there, instead of an error, the pin's
    variables are set for what loads later (torch) and LATE is returned, with
    a note that the last digits may differ from the page's. Its runs are
    never the page's own (record.Section.is_page_run)."""
    global _APPLIED
    try:
        return applied_variant()
    except RuntimeError:
        pass
    honoured = can_honour_pin()
    wanted = settings(PINNED) if honoured else {k: v for k, v in PIN.items() if k not in NEEDS_AVX2}
    os.environ.update(wanted)
    if _routed() and not any(isinstance(f, _RouteTorchMatmul) for f in sys.meta_path):
        sys.meta_path.insert(0, _RouteTorchMatmul())
    if "torch" in sys.modules:
        install_routes()
    print(
        "note: numpy was loaded before this package could pin its kernels (Colab loads it at start; "
        "elsewhere, restart the kernel and run from the top), so the last digits may differ from the page's",
        file=sys.stderr,
    )
    _APPLIED = LATE
    return LATE


class _RouteTorchMatmul:
    """An import hook: as soon as torch has loaded (whoever imports it), its
    matrix products are sent to OpenBLAS (openblas_matmul.install), so no
    product of any run reaches MKL's vendor-dependent kernels."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            install_routes()

        spec.loader.exec_module = exec_module
        return spec


def install_routes() -> None:
    """Send torch's matrix products and square roots where the pin says
    (openblas_matmul, exact_sqrt); once torch has loaded, idempotent. A route
    module that is itself importing torch is skipped here: it is installed
    when its import ends (torch_loader.import_torch asks again)."""
    import importlib

    for env, wanted, name in ((MATMUL_ENV, OPENBLAS, "openblas_matmul"), (SQRT_ENV, EXACT, "exact_sqrt")):
        if os.environ.get(env) == wanted:
            route = importlib.import_module(f"pagekit.{name}")
            if hasattr(route, "install"):
                route.install()


def torch_matmul_route() -> str:
    """Which library computes torch's matrix products in this process:
    "openblas" once the route is installed, else "mkl" (torch's own)."""
    route = sys.modules.get("pagekit.openblas_matmul")
    return OPENBLAS if route is not None and route.installed() else MKL


def torch_sqrt_route() -> str:
    """How torch's square roots are computed in this process once torch has
    loaded: "exact" (the route) or "mkl"; before torch loads, as the pin says."""
    route = sys.modules.get("pagekit.exact_sqrt")
    if route is not None:
        return EXACT if route.installed() else MKL
    return EXACT if os.environ.get(SQRT_ENV) == EXACT else MKL


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
        "honoured": can_honour_pin() and not os.environ.get(FOREIGN_KERNELS_ENV),
        "machine": platform.machine(),
        "python": platform.python_version_tuple()[0] + "." + platform.python_version_tuple()[1],
        "packages": versions,
        "openblas_core": openblas_core(),
        "numpy_simd": numpy_simd(),
        "torch_cpu_capability": settings(variant)["ATEN_CPU_CAPABILITY"],
        "threads": {"blas": 1, "torch": int(settings(variant)["TORCH_NUM_THREADS"])},
        "torch_matmul": settings(variant)[MATMUL_ENV] if can_honour_pin() else MKL,
        "torch_sqrt": torch_sqrt_route(),
    }


def foreign(record: dict) -> str | None:
    """Why a numbers record cannot count as the page's own run here, or None:
    on a machine that honours the pin, numbers made where it did not hold
    (other kernels, other last digits) are refused. Elsewhere nothing better
    can be made, so its own numbers serve its author's loop."""
    environment = record.get("environment") or {}
    if can_honour_pin() and environment.get("honoured") is False and not _kernels_known_foreign():
        return (
            f"made where the numeric pin did not hold ({environment.get('machine', 'unknown machine')}, "
            f"numpy {environment.get('numpy_simd')}, OpenBLAS {environment.get('openblas_core')}); "
            "regenerate it on a machine that honours the pin, as this one does: `make -B figures`"
        )
    return None


def _kernels_known_foreign() -> bool:
    """Whether this machine is known (from its cached kernel fingerprint) not
    to reproduce the committed bits: then its own numbers serve its author."""
    if os.environ.get(FOREIGN_KERNELS_ENV):
        return True
    from pagekit import kernel_fingerprint

    return kernel_fingerprint.cached_reason() is not None


def numpy_simd() -> str | None:
    """numpy's highest dispatch group in use (X86_V3 under the pin on any
    machine that honours it, whatever else the CPU has), or None before numpy
    is loaded; "baseline" when every dispatched group is off."""
    if "numpy" not in sys.modules:
        return None
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    enabled = [group for group in __cpu_dispatch__ if __cpu_features__.get(group)]
    return enabled[-1] if enabled else "baseline"


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
