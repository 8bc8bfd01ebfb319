"""Section 5, "Mixed precision: which numbers stay in float32": the three
storage formats measured with torch's real dtypes, and what each loses.

Reads the bit layout, reach, smallest subnormal and machine epsilon of
float32, bfloat16 and float16 from torch (cross-checked with numpy and with
the bit patterns themselves); adds -0.0001 to 1 four hundred times in bfloat16
and in float32 (the master-copy experiment); converts 400,000 log-normal
gradients (rng(42)) to float16, to float16 after a x1,024 loss scale, and to
bfloat16, counting the values that become zero or infinite; stores a list of
large values in both 16-bit formats; and counts the bytes per weight of an
Adam step and the activation memory in both set-ups. Every float32 -> bfloat16
conversion is repeated with an independent bit-level round-to-nearest-even on
the uint32 patterns (numpy) and must agree with torch bit for bit. Draws five
figures.
"""

from __future__ import annotations

import inspect
import math


import pagekit.section  # noqa: F401  (first: it pins the numeric environment before numpy loads)
import numpy as np
from matplotlib.patches import Patch

from matplotlib.ticker import FuncFormatter

from pagekit.section import (
    PALETTE,
    draw_cell_rows,
    fit_cell_figure,
    format_number,
    import_torch,
    log_axis,
    main,
    new_cell_figure,
    new_figure,
    nice_limits,
    on_phone,
    text_colour,
)

# The three formats, in the order the page lists them: (quote prefix, name,
# torch dtype attribute).
FORMATS = (("f32", "float32", "float32"), ("bf16", "bfloat16", "bfloat16"), ("f16", "float16", "float16"))

MASTER_START, MASTER_STEP, MASTER_STEPS = 1.0, -0.0001, 400

GRAD_SEED, GRAD_COUNT, GRAD_CENTRE, GRAD_LOG_SPREAD = 42, 400_000, 2e-7, 2.1
LOSS_SCALE = 1024

OVERFLOW_LIST = (1e2, 1e3, 1e4, 6.55e4, 1e5, 1e6, 1e10, 1e38)

# The pieces of one Adam step per weight, and the format each is kept in
# (None: not kept). All-float32 weights are their own master copy; mixed
# precision keeps 16-bit weights and gradients, a float32 master copy and
# float32 moments.
PIECES = ("arithmetic copy", "master copy", "gradient", "first moment", "second moment")
FORMATS_ALL_F32 = ("f32", None, "f32", "f32", "f32")
FORMATS_MIXED = ("bf16", "f32", "bf16", "f32", "f32")

ACT_ROWS, ACT_COLS, MB = 2048, 4096, 2**20

# Adam's running averages in bfloat16: start, constant new value, steps.
MOMENT_BETAS, MOMENT_START, MOMENT_TARGET, MOMENT_STEPS = (0.9, 0.999), 1.0, 0.5, 1_000
COUNT_TO = 300  # a running count in bfloat16, to show why big sums stay in float32

# The bounds the claims test, each formatted into its claim's words.
HALF_BYTES = 2  # bytes of a 16-bit format
BF16_MAX_TOLERANCE = 0.01  # bfloat16's largest value against float32's, relative
EPS_RATIO = 8  # float16's step above 1 against bfloat16's
F16_MAX_BELOW = 1e5  # a value between float16's largest and bfloat16's
SUBNORMAL_GAP = 1e20  # float16's smallest subnormal over bfloat16's
MOMENT_AGREEMENT = 5e-4  # float32's second moment against the exact average (3 decimals)
MOVED_SHARE = 0.9  # of the way to its target the bfloat16 first moment gets past
SHORT_OF_TARGET = 0.005  # by which the bfloat16 first moment stops short
F32_MASTER_END_TEXT = "0.9600"  # the float32 master copy's end, at 4 decimals
ROUND_TO_NEAREST = 0.5  # a stored value moves to its neighbour only past this share of the gap
F16_NORMAL_ERROR = 2.0**-11  # float16's largest relative rounding error on normal values
MOST = 0.5  # "most": more than this share
SUBNORMAL_ERROR_CUT = 10  # the scale's cut of the subnormals' median relative error, at least
F16_UNDERFLOW_LOW, F16_UNDERFLOW_HIGH = 0.10, 0.30  # float16 underflow without the scale, between
SCALED_UNDERFLOW_CEILING = 1e-4  # underflow after the scale, below
LOSS_SCALE_POWER = 10  # LOSS_SCALE is 2 to this power
GRAD_SPAN_FLOOR = 1e6  # largest over smallest gradient, above
BF16_HEADROOM = 1e20  # smallest gradient over bfloat16's smallest normal, above
OVERFLOW_MARGIN = 100  # the largest scaled gradient stays below float16's largest over this
F16_FIRST_OVERFLOW = 1e5  # the first value of OVERFLOW_LIST that float16 cannot hold
BF16_HALF_STEP = 2.0**-8  # bfloat16's largest relative rounding error
ADAM_BYTES_PER_WEIGHT = 16  # all-float32 and mixed precision, with Adam
ACT_SHRINK = 2  # float32's activation memory over bfloat16's
SCALER_BACKOFF, SCALER_GROWTH = 0.5, 2.0  # GradScaler's factors on overflow and to grow


# ---------------------------------------------------------------------------
# Number forms a format spec cannot express.


def power_of_two(value: float) -> str:
    """``2^-24`` for 2**-24; only for exact powers of two."""
    exponent = math.log2(value)
    if not float(exponent).is_integer():
        raise ValueError(f"{value!r} is not a power of two")
    return f"2^{int(exponent)}"


def percent(fraction: float) -> str:
    """A percentage with two significant digits once it is below 1%, so a
    small non-zero count never prints as 0.00%; an exact zero prints as 0%."""
    if fraction == 0:
        return "0%"
    pct = 100 * fraction
    decimals = max(2, math.ceil(-math.log10(pct)) + 1)
    return f"{pct:.{decimals}f}%"


def list_value(value: float) -> str:
    """Values of the overflow list: whole numbers with thousands separators
    up to a million, four decimals of scientific form above, inf as inf."""
    if math.isinf(value):
        return "inf"
    if value < 1e7:
        if not float(value).is_integer():
            raise ValueError(f"{value!r} is not a whole number")
        return f"{int(value):,d}"
    return format_number(value, ".4x")


def stored_value(value: float) -> str:
    """The values as the page writes them: 65,500 but 1 × 10¹⁰."""
    return f"{int(value):,d}" if value < 1e7 else format_number(value, ".0x")


# ---------------------------------------------------------------------------
# The independent route: float32 -> bfloat16 on the bit patterns.


def bfloat16_by_bits(values) -> np.ndarray:
    """Round float32 values to bfloat16 with round-to-nearest-even done on
    the uint32 bit patterns, returned as float32 (low 16 bits zero).

    Adding 0x7FFF plus the lowest kept bit and dropping the low 16 bits rounds
    to nearest with ties to even; a carry out of the mantissa moves the
    exponent up, and out of the largest finite value it gives inf. (NaN is not
    handled; the section converts none.)
    """
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    keep = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + keep) >> np.uint32(16)
    return (rounded << np.uint32(16)).astype(np.uint32).view(np.float32)


def bfloat16_pattern(pattern: int) -> float:
    """The bfloat16 number with 16-bit pattern ``pattern``."""
    return float(np.array([pattern << 16], dtype=np.uint32).view(np.float32)[0])


def torch_bfloat16(torch, values) -> np.ndarray:
    """torch's float32 -> bfloat16 conversion, widened back to float32."""
    tensor = torch.as_tensor(np.ascontiguousarray(values, dtype=np.float32))
    return tensor.to(torch.bfloat16).to(torch.float32).numpy()


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a32 = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    b32 = np.ascontiguousarray(b, dtype=np.float32).view(np.uint32)
    return bool(np.array_equal(a32, b32))


# ---------------------------------------------------------------------------


def format_facts(section, torch) -> dict[str, dict]:
    """Bits, bytes, reach, smallest subnormal and epsilon of each format."""
    q = section.quote
    facts = {}
    for prefix, name, dtype_name in FORMATS:
        dtype = getattr(torch, dtype_name)
        info = torch.finfo(dtype)
        mantissa = int(round(-math.log2(info.eps)))
        exponent = info.bits - 1 - mantissa
        # Smallest positive subnormal: the bit pattern 0...01.
        int_type = torch.int32 if info.bits == 32 else torch.int16
        subnormal = float(torch.tensor([1], dtype=int_type).view(dtype).to(torch.float64)[0])
        one = torch.tensor(1.0, dtype=dtype)
        above_one = float(torch.nextafter(one, torch.tensor(2.0, dtype=dtype))) - 1.0
        byte_count = torch.tensor([], dtype=dtype).element_size()
        section.agree(f"{name}: step above 1 by nextafter and finfo.eps", above_one, info.eps)
        section.agree(
            f"{name}: smallest subnormal and eps x smallest normal", subnormal, info.eps * info.smallest_normal
        )
        section.agree(
            f"{name}: largest finite value and (2 - eps) x 2^(2^(exponent bits - 1) - 1)",
            info.max,
            (2 - info.eps) * 2.0 ** (2 ** (exponent - 1) - 1),
        )
        section.agree(f"{name}: bits and 8 x bytes", info.bits, 8 * byte_count)
        facts[prefix] = {
            "name": name,
            "sign": 1,
            "exponent": exponent,
            "mantissa": mantissa,
            "bytes": byte_count,
            "max": info.max,
            "subnormal": subnormal,
            "eps": info.eps,
        }

    # A second library: numpy knows float32 and float16.
    for prefix, np_type in (("f32", np.float32), ("f16", np.float16)):
        info = np.finfo(np_type)
        fact = facts[prefix]
        section.agree(
            f"numpy and torch {fact['name']} (max, eps, subnormal, mantissa bits)",
            [fact["max"], fact["eps"], fact["subnormal"], fact["mantissa"]],
            [float(info.max), float(info.eps), float(info.smallest_subnormal), info.nmant],
        )
    # bfloat16 straight from bit patterns: largest finite 0x7F7F, smallest
    # subnormal 0x0001, the number after 1 (0x3F80) is 0x3F81.
    bf = facts["bf16"]
    section.agree(
        "bfloat16 bit patterns and torch (max, subnormal, eps)",
        [bf["max"], bf["subnormal"], bf["eps"]],
        [bfloat16_pattern(0x7F7F), bfloat16_pattern(0x0001), bfloat16_pattern(0x3F81) - bfloat16_pattern(0x3F80)],
    )

    q("f32_total_bits", facts["f32"]["bytes"] * 8, "d", unit="bits")
    q("half_total_bits", facts["bf16"]["bytes"] * 8, "d", unit="bits")
    section.claim(
        f"both 16-bit formats have 16 bits ({HALF_BYTES} bytes)",
        facts["bf16"]["bytes"] == facts["f16"]["bytes"] == HALF_BYTES,
    )
    max_forms = {"f32": ".3e", "bf16": ".2e", "f16": ",d"}
    subnormal_forms = {"f32": ".0e", "bf16": ".0e", "f16": ".0e"}
    eps_forms = {"f32": ".2e", "bf16": ".7f", "f16": ".10f"}
    for prefix, fact in facts.items():
        q(f"{prefix}_sign_bits", fact["sign"], "d")
        q(f"{prefix}_exponent_bits", fact["exponent"], "d")
        q(f"{prefix}_mantissa_bits", fact["mantissa"], "d")
        q(f"{prefix}_bytes", fact["bytes"], "d", unit="bytes")
        q(f"{prefix}_max", fact["max"], max_forms[prefix])
        q(f"{prefix}_subnormal", fact["subnormal"], subnormal_forms[prefix])
        q(f"{prefix}_subnormal_power", fact["subnormal"], "pow2")
        q(f"{prefix}_eps", fact["eps"], eps_forms[prefix])
        q(f"{prefix}_eps_power", fact["eps"], "pow2")
        section.agree(f"{fact['name']}: step above 1 and 2^-(mantissa bits)", fact["eps"], 2.0 ** -fact["mantissa"])

    f32, f16 = facts["f32"], facts["f16"]
    section.claim(
        "bfloat16 has float32's exponent bits and fewer mantissa bits than float16",
        bf["exponent"] == f32["exponent"] and bf["mantissa"] < f16["mantissa"],
    )
    section.quote("bf16_max_tolerance", BF16_MAX_TOLERANCE, ".0%")
    section.claim(
        f"bfloat16's largest value is within {BF16_MAX_TOLERANCE:.0%} of float32's",
        abs(bf["max"] / f32["max"] - 1) < BF16_MAX_TOLERANCE,
        key="bfloat16-max-within-1-percent-of-float32",
    )
    section.claim(
        f"float16's step above 1 is {EPS_RATIO} times finer than bfloat16's",
        bf["eps"] / f16["eps"] == EPS_RATIO,
        key="float16-has-a-step-eight",
    )
    section.claim(
        f"float16's largest value is far below bfloat16's (less than {F16_MAX_BELOW:,.0f}, which bfloat16 exceeds)",
        f16["max"] < F16_MAX_BELOW < bf["max"],
    )
    section.claim(
        f"float16's smallest subnormal is far above bfloat16's (over {SUBNORMAL_GAP:.0e} times)",
        f16["subnormal"] > SUBNORMAL_GAP * bf["subnormal"],
    )
    return facts


def adam_moments(section, torch) -> None:
    """Why Adam's two running averages stay in float32: the update each makes
    per step against bfloat16's half step. A second moment that starts at 1
    and is fed a squared gradient of 0.5 at every step, with beta2 = 0.999,
    in bfloat16 and in float32; the first moment with beta1 = 0.9 likewise.
    The bfloat16 average is stored in bfloat16, and each update is computed
    in float32 (float32 constants) and rounded back to bfloat16 when stored,
    as a bfloat16 state tensor is."""
    q = section.quote
    q("moment_beta1", MOMENT_BETAS[0], "g")
    q("moment_beta2", MOMENT_BETAS[1], "g")
    q("moment_move", [1 - b for b in MOMENT_BETAS], lambda v: f"{100 * v:.3g}%")
    # bfloat16's relative half step: between 2^-9 (just above a power of
    # two) and 2^-8 (just below one).
    eps = float(torch.finfo(torch.bfloat16).eps)
    half_steps = [eps / 4, eps / 2]
    q("bf16_relative_half_step", half_steps, ".2%")
    q("moment_start", MOMENT_START, "g")
    q("moment_target", MOMENT_TARGET, "g")
    q("moment_steps", MOMENT_STEPS, ",d", unit="steps")
    ends, exact_ends = {}, {}
    for key, beta in (("m", MOMENT_BETAS[0]), ("v", MOMENT_BETAS[1])):
        b = torch.tensor(beta, dtype=torch.float32)
        new = torch.tensor((1 - beta) * MOMENT_TARGET, dtype=torch.float32)
        for fmt, storage in (("bf16", torch.bfloat16), ("f32", torch.float32)):
            value = torch.tensor(MOMENT_START, dtype=storage)
            for _ in range(MOMENT_STEPS):
                value = (b * value.float() + new).to(storage)
            ends[key, fmt] = float(value)
        exact = MOMENT_TARGET + (MOMENT_START - MOMENT_TARGET) * beta**MOMENT_STEPS
        exact_ends[key] = exact
        q(f"{key}_exact_end", exact, ".3f")
        q(f"{key}_bf16_end", ends[key, "bf16"], ".3f" if ends[key, "bf16"] != MOMENT_START else "g")
        q(f"{key}_f32_end", ends[key, "f32"], ".3f")
    section.claim(
        f"in bfloat16 the second moment (beta2 {MOMENT_BETAS[1]:g}) never moves from {MOMENT_START:g}",
        ends["v", "bf16"] == MOMENT_START,
        f"ends at {ends['v', 'bf16']}",
        key="stays-at-exactly",
    )
    section.claim(
        f"in float32 the second moment follows the exact average to 3 decimals (within {MOMENT_AGREEMENT:g})",
        abs(ends["v", "f32"] - exact_ends["v"]) < MOMENT_AGREEMENT,
    )
    section.claim(
        f"in bfloat16 the first moment (beta1 {MOMENT_BETAS[0]:g}) moves over {MOVED_SHARE:.0%} of the way "
        f"from {MOMENT_START:g} to its target {MOMENT_TARGET:g} but stops short of it by more than "
        f"{SHORT_OF_TARGET:g}",
        SHORT_OF_TARGET < ends["m", "bf16"] - MOMENT_TARGET < (1 - MOVED_SHARE) * (MOMENT_START - MOMENT_TARGET),
        f"ends at {ends['m', 'bf16']}",
        key="it-stops-short",
    )
    # Where it stopped, one more step of the first moment moves it by less
    # than half of bfloat16's gap there (2^-7 of the value's power of two).
    end = ends["m", "bf16"]
    last_step = (1 - MOMENT_BETAS[0]) * abs(end - MOMENT_TARGET)
    half_gap = 0.5 * 2.0 ** (math.floor(math.log2(end)) - 7)
    section.claim(
        "where the bfloat16 first moment stops, one more step is smaller than half of bfloat16's gap there",
        last_step < half_gap,
        f"step {last_step:.3g} against half gap {half_gap:.3g}",
        key="the-step-shrinks-below-the-half-step",
    )
    # The largest fall one step can make is (1 − beta2)·v (a squared gradient
    # of zero): 0.1% of v, under bfloat16's smallest relative half step 2⁻⁹,
    # so rounding to nearest puts v back. Checked on every positive normal
    # bfloat16 value, not only on 1.
    section.claim(
        f"one step of the second moment (beta2 {MOMENT_BETAS[1]:g}) falls by at most less than "
        "bfloat16's smallest relative half step",
        1 - MOMENT_BETAS[1] < half_steps[0],
        key="lowers-it-by-only-0",
    )
    patterns = torch.arange(0x0080, 0x7F80, dtype=torch.int32).to(torch.int16)  # positive normals
    every_v = patterns.view(torch.bfloat16)
    fallen = (torch.tensor(MOMENT_BETAS[1], dtype=torch.float32) * every_v.float()).to(torch.bfloat16)
    section.claim(
        "stored in bfloat16, the second moment can never fall: 0.999·v rounds back to v "
        "for every positive normal bfloat16 v",
        bool(torch.equal(fallen, every_v)),
        f"{int((fallen != every_v).sum())} values fall",
        key="it-can-never-fall",
    )


def autocast_on_the_cpu(section, torch) -> None:
    """What torch.autocast("cpu", dtype=torch.bfloat16) does to the operations
    section 5 lists, in the pinned torch: a linear layer is cast down to
    bfloat16, the loss is cast up to float32, and layer norm, RMS norm and
    softmax are left alone (they run in the dtype they are given). On a GPU,
    autocast's float32 list also holds the normalisations and softmax."""
    F = torch.nn.functional
    low = torch.linspace(-2.0, 2.0, 32).reshape(4, 8).to(torch.bfloat16)
    weight = torch.eye(8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        dtypes = {
            "linear (float32 in)": F.linear(low.float(), weight).dtype,
            "mse_loss (bfloat16 in)": F.mse_loss(low, torch.zeros_like(low)).dtype,
            "layer_norm (bfloat16 in)": F.layer_norm(low, (8,)).dtype,
            "rms_norm (bfloat16 in)": F.rms_norm(low, (8,)).dtype,
            "softmax (bfloat16 in)": F.softmax(low, dim=-1).dtype,
        }
    detail = ", ".join(f"{k}: {v}".replace("torch.", "") for k, v in dtypes.items())
    section.claim(
        "on the CPU, autocast runs a linear layer in bfloat16 and the loss in float32",
        dtypes["linear (float32 in)"] == torch.bfloat16 and dtypes["mse_loss (bfloat16 in)"] == torch.float32,
        detail,
        key="it-runs-linear-layers-in",
    )
    section.claim(
        "on the CPU, autocast leaves layer norm, RMS norm and softmax in the dtype they are given",
        all(
            dtypes[k] == torch.bfloat16
            for k in ("layer_norm (bfloat16 in)", "rms_norm (bfloat16 in)", "softmax (bfloat16 in)")
        ),
        detail,
        key="leaves-layer-norm-rms-norm",
    )


def master_copy(section, torch) -> dict:
    """Add -0.0001 to 1 four hundred times, in bfloat16 and in float32."""
    q = section.quote
    one_bf = torch.tensor(1.0, dtype=torch.bfloat16)
    below = float(torch.nextafter(one_bf, torch.tensor(0.0, dtype=torch.bfloat16)))
    q("bf16_below_one", below, ".8f")
    q("bf16_gap_below_one", 1.0 - below, ".8f")
    q("bf16_half_gap_below_one", (1.0 - below) / 2, ".9f")
    section.agree("bfloat16 below 1 by nextafter and pattern 0x3F7F", below, bfloat16_pattern(0x3F7F))

    q("master_start", MASTER_START, "g")
    q("master_step", MASTER_STEP, ".4f")
    q("master_steps", MASTER_STEPS, ",d", unit="times")
    paths = {}
    for key, dtype in (("bf16", torch.bfloat16), ("f32", torch.float32)):
        w = torch.tensor(MASTER_START, dtype=dtype)
        step = torch.tensor(MASTER_STEP, dtype=dtype)
        path = [float(w)]
        for _ in range(MASTER_STEPS):
            w = w + step
            path.append(float(w))
        paths[key] = np.array(path)

    # Independent replays: numpy float32 arithmetic, and bfloat16 as an exact
    # float32 add followed by the bit-level rounding.
    w32, step32 = np.float32(MASTER_START), np.float32(MASTER_STEP)
    replay32 = [float(w32)]
    for _ in range(MASTER_STEPS):
        w32 = np.float32(w32 + step32)
        replay32.append(float(w32))
    section.agree("float32 master path in torch and in numpy", paths["f32"], replay32)
    step_bf = bfloat16_by_bits([MASTER_STEP])[0]
    wb = np.float32(MASTER_START)
    replay_bf = [float(wb)]
    for _ in range(MASTER_STEPS):
        wb = bfloat16_by_bits([np.float32(wb) + step_bf])[0]
        replay_bf.append(float(wb))
    section.agree("bfloat16 master path in torch and by bit-level rounding", paths["bf16"], replay_bf)
    section.agree(
        "float32 master end and 1 - 400 x 0.0001 (closed form)",
        paths["f32"][-1],
        MASTER_START + MASTER_STEPS * MASTER_STEP,
        atol=1e-5,
    )

    q("f32_master_end", paths["f32"][-1], ".4f")
    q("bf16_master_end", paths["bf16"][-1], "g")
    section.claim(
        "the bfloat16 copy stays exactly 1 after every step",
        bool(np.all(paths["bf16"] == 1.0)),
        key="the-bfloat16-copy-never-moves",
    )
    section.claim(
        f"the float32 copy ends at {F32_MASTER_END_TEXT} (4 decimals)", f"{paths['f32'][-1]:.4f}" == F32_MASTER_END_TEXT
    )
    section.claim(
        f"the step ({MASTER_STEP:g}) is smaller than {ROUND_TO_NEAREST:g} of the bfloat16 gap below 1",
        abs(MASTER_STEP) < ROUND_TO_NEAREST * (1.0 - below),
        key="update-smaller-than-half-the-gap",
    )
    return {**paths, "below": below}


def underflow(section, torch) -> dict:
    """400,000 log-normal gradients in float16, scaled float16 and bfloat16."""
    q = section.quote
    rng = section.rng(GRAD_SEED)
    grads = np.exp(rng.normal(np.log(GRAD_CENTRE), GRAD_LOG_SPREAD, size=GRAD_COUNT)).astype(np.float32)
    q("grad_seed", GRAD_SEED + section.seed_offset, "d")
    q("grad_count", GRAD_COUNT, ",d")
    q("grad_centre", GRAD_CENTRE, ".0e")
    q("grad_log_spread", GRAD_LOG_SPREAD, ".1f")
    q("grad_median", float(np.median(grads)), ".2e", rel_tol=1e-6)  # float32 data
    q("grad_max", float(grads.max()), ".2e", rel_tol=1e-6)
    q("loss_scale", LOSS_SCALE, ",d")

    g = torch.from_numpy(grads)
    scaled = g * LOSS_SCALE  # float32, exact: a power of two, far from float32's limits
    f16 = g.to(torch.float16)
    f16_scaled = scaled.to(torch.float16)
    bf16 = g.to(torch.bfloat16)
    counts = {
        "f16_underflow": int((f16 == 0).sum()),
        "scaled_underflow": int((f16_scaled == 0).sum()),
        "scaled_overflow": int(torch.isinf(f16_scaled).sum()),
        "bf16_underflow": int((bf16 == 0).sum()),
    }

    # Independent routes: numpy's own float16 conversion, and the rounding
    # thresholds (a value becomes zero iff it is at most half the smallest
    # subnormal, 2^-25; the tie rounds to the even 0) and inf iff it is at
    # least 65,504 + 16 = 65,520 (the tie rounds to the even 2^16 = inf).
    np16 = grads.astype(np.float16)
    section.agree("float16 conversion in torch and in numpy", f16.to(torch.float32).numpy(), np16.astype(np.float32))
    section.agree(
        "float16 scaled conversion in torch and in numpy",
        f16_scaled.to(torch.float32).numpy(),
        (grads * np.float32(LOSS_SCALE)).astype(np.float16).astype(np.float32),
    )
    zero_threshold = 2.0**-25
    section.agree(
        "float16 zeros counted by torch and by the 2^-25 threshold",
        [counts["f16_underflow"], counts["scaled_underflow"], counts["scaled_overflow"]],
        [
            int((grads <= zero_threshold).sum()),
            int((grads * np.float32(LOSS_SCALE) <= zero_threshold).sum()),
            int((grads * np.float32(LOSS_SCALE) >= 65520).sum()),
        ],
    )
    bf_bits = bfloat16_by_bits(grads)
    section.claim(
        "bit-level bfloat16 rounding matches torch on all 400,000 gradients, bit for bit",
        same_bits(bf_bits, bf16.to(torch.float32).numpy()),
    )
    section.agree(
        "bfloat16 zeros counted by torch and by the bit-level rounding",
        counts["bf16_underflow"],
        int((bf_bits == 0).sum()),
    )

    q("f16_zero_threshold", zero_threshold, ".0e")
    q("f16_zero_threshold_power", zero_threshold, "pow2")
    q("scaled_overflow_threshold", 65504 / LOSS_SCALE, ".0f")
    for key, count in counts.items():
        q(f"{key}_count", count, ",d")
        q(f"{key}_pct", count / GRAD_COUNT, percent)
    texts = [section.text(f"{key}_pct") for key in counts]
    section.claim(
        "every non-zero count prints as a non-zero percentage",
        all((c == 0) == (t == "0%") for c, t in zip(counts.values(), texts)),
    )

    # Most gradients that survive float16 without the scale land among its
    # subnormals (below the smallest normal, 2^-14), where the step is a fixed
    # 2^-24 and the relative error grows as the value shrinks. Counted with
    # and without the scale, with the relative error each conversion makes.
    smallest_normal = float(torch.finfo(torch.float16).smallest_normal)
    section.agree("float16's smallest normal value and 2^-14", smallest_normal, 2.0**-14)
    for key, stored, exact in (("f16", f16, grads), ("scaled", f16_scaled, grads * np.float32(LOSS_SCALE))):
        held = stored.to(torch.float64).numpy()
        sub = (held != 0) & (np.abs(held) < smallest_normal)
        rel = np.abs(held[sub] / exact[sub].astype(np.float64) - 1)
        q(f"{key}_subnormal_count", int(sub.sum()), ",d")
        q(f"{key}_subnormal_pct", sub.sum() / GRAD_COUNT, percent)
        q(f"{key}_subnormal_median_error", float(np.median(rel)) if rel.size else 0.0, percent)
        normal = held != 0
        normal &= ~sub
        rel_normal = np.abs(held[normal] / exact[normal].astype(np.float64) - 1)
        section.claim(
            f"{key}: float16's normal values round with relative error at most 2^{math.log2(F16_NORMAL_ERROR):.0f}",
            float(rel_normal.max()) <= F16_NORMAL_ERROR,
            f"largest {rel_normal.max():.3g}",
            key="float16-never-off-by" if key == "f16" else None,
        )
        counts[f"{key}_subnormal"] = int(sub.sum())
        counts[f"{key}_subnormal_error"] = float(np.median(rel))
    q("f16_smallest_normal", smallest_normal, "pow2")
    q("f16_normal_error_bound", F16_NORMAL_ERROR, percent)
    section.claim(
        f"without the scale most (over {MOST:.0%}) of the {GRAD_COUNT:,} gradients' survivors are float16 subnormals",
        counts["f16_subnormal"] > MOST * (GRAD_COUNT - counts["f16_underflow"]),
        f"{counts['f16_subnormal']} of {GRAD_COUNT - counts['f16_underflow']}",
        key="most-of-the-gradients-that",
    )
    section.claim(
        "the scale leaves fewer float16 subnormals",
        counts["scaled_subnormal"] < counts["f16_subnormal"],
        f"{counts['f16_subnormal']} to {counts['scaled_subnormal']}",
    )
    section.claim(
        f"the scale cuts the median relative error of the subnormals more than {SUBNORMAL_ERROR_CUT}-fold",
        counts["scaled_subnormal_error"] * SUBNORMAL_ERROR_CUT < counts["f16_subnormal_error"],
        f"{counts['f16_subnormal_error']:.3g} to {counts['scaled_subnormal_error']:.3g}",
        key="more-than-ten-times-smaller",
    )
    subnormal_stats = {k: counts.pop(k) for k in list(counts) if "subnormal" in k}

    share = {key: count / GRAD_COUNT for key, count in counts.items()}
    section.claim(
        f"float16 underflow is between {F16_UNDERFLOW_LOW:.0%} and {F16_UNDERFLOW_HIGH:.0%}",
        F16_UNDERFLOW_LOW < share["f16_underflow"] < F16_UNDERFLOW_HIGH,
        detail=f"measured {share['f16_underflow']:.4%}",
        key="unscaled-float16-zeros-10-to-30-percent",
    )
    section.claim(
        f"after the x{LOSS_SCALE:,} scale, underflow is below {SCALED_UNDERFLOW_CEILING:.2%}",
        share["scaled_underflow"] < SCALED_UNDERFLOW_CEILING,
        key="scaled-float16-zeros-below-0-01-percent",
    )
    section.claim(
        "no gradient becomes zero in bfloat16 (count exactly 0)",
        counts["bf16_underflow"] == 0,
        key="in-bfloat16-without-any-scale",
    )
    section.claim(
        "no gradient overflows float16 after the x1,024 scale (count exactly 0)", counts["scaled_overflow"] == 0
    )
    section.claim(
        f"the loss scale {LOSS_SCALE:,} is {LOSS_SCALE_POWER} powers of two", math.log2(LOSS_SCALE) == LOSS_SCALE_POWER
    )
    section.claim(
        f"the gradients span many powers of ten (largest / smallest above {GRAD_SPAN_FLOOR:.0e})",
        float(grads.max()) / float(grads.min()) > GRAD_SPAN_FLOOR,
    )
    section.claim(
        f"every gradient is far above bfloat16's smallest normal value (over {BF16_HEADROOM:.0e} times)",
        float(grads.min()) > BF16_HEADROOM * float(torch.finfo(torch.bfloat16).smallest_normal),
        key="every-gradient-far-above-bfloat16-floor",
    )
    section.claim(
        f"the largest gradient times {LOSS_SCALE:,} is below 1/{OVERFLOW_MARGIN} of float16's largest value",
        float(grads.max()) * LOSS_SCALE < float(torch.finfo(torch.float16).max) / OVERFLOW_MARGIN,
        key="only-overflows-if-the-gradient",
    )
    return {"grads": grads, "scaled": grads * np.float32(LOSS_SCALE), "counts": counts, "subnormal": subnormal_stats}


def overflow(section, torch) -> dict:
    """The overflow list stored in float16 and bfloat16."""
    q = section.quote
    values = np.array(OVERFLOW_LIST, dtype=np.float32)
    tensor = torch.from_numpy(values)
    f16 = tensor.to(torch.float16).to(torch.float64).numpy()
    bf16 = tensor.to(torch.bfloat16).to(torch.float64).numpy()
    section.claim(
        "bit-level bfloat16 rounding matches torch on the overflow list, bit for bit",
        same_bits(bfloat16_by_bits(values), torch_bfloat16(torch, values)),
    )
    with np.errstate(over="ignore"):  # the overflow is the point
        np16 = values.astype(np.float16).astype(np.float64)
    section.claim(
        "float16 storage of the overflow list is the same in torch and in numpy", bool(np.array_equal(f16, np16))
    )
    q("overflow_stored", list(OVERFLOW_LIST), stored_value)
    q("overflow_f16", f16, list_value, allow_inf=True)
    q("overflow_bf16", bf16, list_value)
    rel_error = np.abs(bf16 / np.array(OVERFLOW_LIST) - 1)
    q("overflow_bf16_max_rel_error", float(rel_error.max()), ".2%", rel_tol=1e-6)
    first = int(np.argmax(np.isinf(f16)))
    q("overflow_f16_first_inf", OVERFLOW_LIST[first], ",.0f")
    first_overflow = OVERFLOW_LIST[first]
    section.claim(
        f"{F16_FIRST_OVERFLOW:,.0f} overflows float16, and so does every larger value in the list",
        first_overflow == F16_FIRST_OVERFLOW and bool(np.all(np.isinf(f16[first:]))),
        key="turns-100-000-and-everything",
    )
    section.claim(
        f"float16 holds every value below {F16_FIRST_OVERFLOW:,.0f} finitely",
        first_overflow == F16_FIRST_OVERFLOW and bool(np.all(np.isfinite(f16[:first]))),
    )
    section.claim(
        f"bfloat16 holds every value in the list, within half a step (2^{math.log2(BF16_HALF_STEP):.0f} relative)",
        bool(np.all(np.isfinite(bf16))) and float(rel_error.max()) <= BF16_HALF_STEP,
    )
    return {"f16": f16, "bf16": bf16}


def memory(section, facts) -> dict:
    """Bytes per weight for an Adam step, and activation memory."""
    q = section.quote
    all_f32 = [facts[f]["bytes"] if f else 0 for f in FORMATS_ALL_F32]
    mixed = [facts[f]["bytes"] if f else 0 for f in FORMATS_MIXED]
    q("mem_f32", all_f32, ",d", unit="bytes")
    q("mem_mixed", mixed, ",d", unit="bytes")
    q("mem_f32_total", sum(all_f32), ",d", unit="bytes")
    q("mem_mixed_total", sum(mixed), ",d", unit="bytes")
    section.claim(
        f"mixed precision costs as many bytes per weight as all-float32 with Adam ({ADAM_BYTES_PER_WEIGHT})",
        sum(mixed) == sum(all_f32) == ADAM_BYTES_PER_WEIGHT,
        key="as-many-bytes-as-float32",
    )
    # Autocast keeps the all-float32 pieces and adds, for the arithmetic, a
    # 16-bit cast of each weight that it caches through the forward pass and
    # autograd saves for the backward pass.
    autocast_peak = sum(all_f32) + facts["bf16"]["bytes"]
    q("mem_autocast_peak", autocast_peak, ",d", unit="bytes")
    section.claim(
        "under autocast the weights cost more bytes per weight at the peak than all-float32",
        autocast_peak > sum(all_f32),
        key="cost-no-less",
    )
    q("act_rows", ACT_ROWS, ",d")
    q("act_cols", ACT_COLS, ",d")
    q("mb_power", MB, "pow2", unit="bytes")
    numbers = ACT_ROWS * ACT_COLS
    act_f32 = numbers * facts["f32"]["bytes"] / MB
    act_bf16 = numbers * facts["bf16"]["bytes"] / MB
    q("act_f32_mb", act_f32, "g", unit="MB")
    q("act_bf16_mb", act_bf16, "g", unit="MB")
    section.claim(f"bfloat16 divides the activation memory by {ACT_SHRINK}", act_bf16 * ACT_SHRINK == act_f32)
    return {"all_f32": all_f32, "mixed": mixed, "act": [act_f32, act_bf16]}


def sums_and_scaling(section, torch) -> None:
    """Why big sums stay in float32, and what dynamic loss scaling does."""
    q = section.quote
    count = torch.tensor(0.0, dtype=torch.bfloat16)
    one = torch.tensor(1.0, dtype=torch.bfloat16)
    for _ in range(COUNT_TO):
        count = count + one
    q("count_to", COUNT_TO, ",d", unit="times")
    q("bf16_count_stall", float(count), ",.0f")
    mantissa = round(-math.log2(torch.finfo(torch.bfloat16).eps))
    section.agree(
        "a bfloat16 running count and 2^(mantissa bits + 1), where 1 is half a step",
        float(count),
        2.0 ** (mantissa + 1),
    )

    # One infinite gradient turns the weight into NaN after an Adam step:
    # torch's Adam in its functional form, the computation torch.optim's
    # class runs, without building an Optimizer (whose first construction
    # imports torch's compiler, about a second).
    from torch.optim.adam import adam

    weight, moments = torch.ones(3), (torch.zeros(3), torch.zeros(3))
    step = torch.tensor(0.0)

    def adam_step(grad):
        adam(
            [weight],
            [torch.tensor(grad)],
            [moments[0]],
            [moments[1]],
            [],
            [step],
            lr=1e-3,
            beta1=0.9,
            beta2=0.999,
            eps=1e-8,
            weight_decay=0.0,
            amsgrad=False,
            maximize=False,
        )

    adam_step([0.1, float("inf"), 0.1])
    section.claim(
        "one infinite gradient makes its weight NaN after an Adam step",
        bool(torch.isnan(weight[1])) and bool(torch.isfinite(weight[0])),
        key="an-infinite-gradient-makes-its-weight-nan",
    )
    adam_step([0.1, 0.1, 0.1])
    section.claim("the weight stays NaN after a later step with a finite gradient", bool(torch.isnan(weight[1])))

    # torch's dynamic loss scaler: halve on overflow, double after a run of clean steps.
    defaults = inspect.signature(torch.amp.GradScaler.__init__).parameters
    q("scaler_init_scale", defaults["init_scale"].default, ",.0f")
    q("scaler_backoff", defaults["backoff_factor"].default, ".1f")
    q("scaler_growth", defaults["growth_factor"].default, "g")
    q("scaler_growth_interval", defaults["growth_interval"].default, ",d")
    section.claim(
        f"GradScaler multiplies the scale by {SCALER_BACKOFF:g} on overflow and by {SCALER_GROWTH:g} to grow",
        defaults["backoff_factor"].default == SCALER_BACKOFF and defaults["growth_factor"].default == SCALER_GROWTH,
    )


def compute(section):
    torch = import_torch()
    facts = format_facts(section, torch)
    paths = master_copy(section, torch)
    adam_moments(section, torch)
    autocast_on_the_cpu(section, torch)
    grads = underflow(section, torch)
    stored = overflow(section, torch)
    bytes_ = memory(section, facts)
    sums_and_scaling(section, torch)
    return {"facts": facts, "paths": paths, "grads": grads, "stored": stored, "bytes": bytes_}


# ---------------------------------------------------------------------------
# Figures.

FIELD_COLOURS = {"sign": PALETTE["red"], "exponent": PALETTE["blue"], "mantissa": PALETTE["green"]}


def draw_formats(section, results) -> None:
    t = section.text

    def formats_figure():
        phone = on_phone()
        fig, ax = new_cell_figure(8.4, 3.3, title_lines=2)
        # On a phone each format's name stands above its bits and its facts
        # take a line each below them.
        row_gap = 3.35 if phone else 1.45
        bar_at = 0.55 if phone else 0.0
        for row, (prefix, name, _) in enumerate(FORMATS):
            y = row * row_gap + bar_at
            x = 0
            for field in ("sign", "exponent", "mantissa"):
                bits = results["facts"][prefix][field]
                ax.broken_barh(
                    [(x + b + 0.05, 0.9) for b in range(bits)],
                    (y, 0.62),
                    facecolor=FIELD_COLOURS[field],
                    alpha=0.85,
                    linewidth=0,
                )
                ax.text(
                    x + bits / 2,
                    y + 0.31,
                    t(f"{prefix}_{field}_bits"),
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white",
                    fontweight="bold",
                    # White on the field colour's text shade (4.6:1 or more): on the
                    # lighter fill itself, red and green were under 4.5:1.
                    bbox={
                        "boxstyle": "square,pad=0.25",
                        "facecolor": text_colour(FIELD_COLOURS[field]),
                        "edgecolor": "none",
                    },
                )
                x += bits
            facts = (
                f"largest {t(f'{prefix}_max')}",
                f"smallest subnormal {t(f'{prefix}_subnormal_power')} ≈ {t(f'{prefix}_subnormal')}",
                f"step above one {t(f'{prefix}_eps_power')} = {t(f'{prefix}_eps')}",
            )
            if phone:
                ax.text(0.05, y - 0.3, f"{name}, {t(f'{prefix}_bytes')} bytes", ha="left", va="center", fontsize=10)
                ax.text(0.05, y + 0.8, "\n".join(facts), ha="left", va="top", fontsize=9, color=PALETTE["ink"])
            else:
                ax.text(-0.6, y + 0.31, f"{name}\n{t(f'{prefix}_bytes')} bytes", ha="right", va="center", fontsize=10)
                ax.text(0.05, y + 0.72, "   ".join(facts), ha="left", va="top", fontsize=9, color=PALETTE["ink"])
        ax.legend(
            handles=[
                Patch(color=FIELD_COLOURS["sign"], label="sign bit"),
                Patch(color=FIELD_COLOURS["exponent"], label="exponent bits: set the reach"),
                Patch(color=FIELD_COLOURS["mantissa"], label="mantissa bits: set the step"),
            ],
            loc="lower left",
            bbox_to_anchor=(0.0, 0.0) if phone else (0.0, 1.0),
            ncol=1 if phone else 3,
            fontsize=9,
            handlelength=1.2,
            borderaxespad=0.1,
        )
        ax.axis("off")
        title = f"bfloat16 keeps float32's reach ({t('bf16_max')}) with coarse steps; float16 stops at {t('f16_max')}"
        if phone:  # the legend's three lines under the rows
            ax.set_xlim(-0.3, 32.3)
            ax.set_ylim(3 * row_gap + 1.9, -0.1)
            fit_cell_figure(ax)
            ax.set_title(title, loc="left")
        else:
            ax.set_xlim(-5.4, 33.6)  # a clear margin right of float32's last bit
            ax.set_ylim(2 * row_gap + 1.05, -0.15)
            ax.set_title(title, loc="left", pad=22)
        return fig

    section.save_figure(formats_figure, "formats")


def draw_memory(section, results) -> None:
    t, texts = section.text, section.texts

    def memory_figure():
        phone = on_phone()
        fig = new_figure(
            8.4,
            3.2 + (2.4 if phone else 0.0),
            margins=(0.8 if phone else 0.41, 0.44, 0.05, 0.44),
            grid=(1, 2),
            wspace=0.54,
            suptitle="Mixed precision costs no less on the weights; the saving is in the activations",
        )
        grid = fig.add_gridspec(1, 2, width_ratios=[3.2, 1])
        ax = fig.add_subplot(grid[0])
        width = 0.38
        xs = np.arange(len(PIECES))

        # On a phone the bars lie down (five names side by side do not fit its
        # width): the same bars, values and labels, one piece per row.
        def bars(at, length, thickness, start=None, **style):
            if phone:
                return ax.barh(at, length, thickness, left=start, **style)
            return ax.bar(at, length, thickness, bottom=start, **style)

        def value_label(at, value, text):
            if phone:
                ax.text(value + 0.08, at, text, ha="left", va="center", fontsize=9)
            else:
                ax.text(at, value + 0.08, text, ha="center", va="bottom", fontsize=9)

        # Autocast's cached 16-bit copy of each weight sits on top of the float32
        # weights it is made from (hatched): it exists only while a step runs.
        copy_bytes = results["facts"]["bf16"]["bytes"]
        for offset, values, key, colour, label in (
            (
                -width / 2,
                results["bytes"]["all_f32"],
                "mem_f32",
                PALETTE["blue"],
                f"all float32: {t('mem_f32_total')} bytes ({t('mem_autocast_peak')} at the peak under autocast)",
            ),
            (
                width / 2,
                results["bytes"]["mixed"],
                "mem_mixed",
                PALETTE["orange"],
                f"16-bit weights and gradients + float32 master: {t('mem_mixed_total')} bytes",
            ),
        ):
            bars(xs + offset, values, width, color=colour, label=label)
            for i, (x, v, text) in enumerate(zip(xs + offset, values, texts(key))):
                if key == "mem_f32" and i == 0:
                    v, text = v + copy_bytes, f"{text} + {t('bf16_bytes')}"
                value_label(x, v, text)
        bars(
            xs[0] - width / 2,
            copy_bytes,
            width,
            results["bytes"]["all_f32"][0],
            facecolor="white",
            edgecolor=PALETTE["blue"],
            hatch="///",
            linewidth=1.0,
            label=f"autocast's cached 16-bit copy: {t('bf16_bytes')} bytes",
        )
        if phone:  # the legend above the first row
            ax.set_yticks(xs, [p.replace(" ", "\n") for p in PIECES])
            ax.set_xlabel("bytes per weight")
            ax.set_ylim(len(PIECES) - 0.5, -3.1)
            ax.set_xlim(0, 7.6)
            ax.legend(loc="upper left", ncol=1, fontsize=8.5)
        else:
            ax.set_xticks(xs, [p.replace(" ", "\n") for p in PIECES])
            ax.set_ylabel("bytes per weight")
            ax.legend(loc="upper right", ncol=1, fontsize=8.5)
            ax.set_ylim(0, 7.6)
        ax.set_title(
            f"Adam, per weight: {t('mem_f32_total')} bytes either way,{' ' if phone else chr(10)}"
            f"{t('mem_autocast_peak')} at autocast's peak",
            loc="left",
        )

        ax = fig.add_subplot(grid[1])
        mbs = results["bytes"]["act"]
        ax.bar([0, 1], mbs, 0.6, color=[PALETTE["blue"], PALETTE["orange"]])
        for x, key in enumerate(("act_f32_mb", "act_bf16_mb")):
            ax.text(x, mbs[x] + max(mbs) * 0.02, f"{t(key)} MB", ha="center", va="bottom", fontsize=9)
        ax.set_xticks([0, 1], ["float32", "bfloat16"])
        ax.set_ylabel(f"MB ({t('mb_power')} bytes)")
        ax.set_ylim(0, max(mbs) * 1.35)
        ax.set_title(f"activations,\n{t('act_rows')} × {t('act_cols')}", loc="left")
        return fig

    section.save_figure(memory_figure, "memory")


def draw_histogram(section, results) -> None:
    t = section.text
    grads, scaled = results["grads"]["grads"], results["grads"]["scaled"]
    floor, ceiling = 2.0**-25, 65504.0
    low = math.floor(min(np.log10(grads.min()), np.log10(floor)) * 4) / 4
    high = math.ceil(max(np.log10(scaled.max()), np.log10(ceiling)) * 4) / 4
    edges = np.arange(low, high + 1e-9, 0.1)
    raw_counts, _ = np.histogram(np.log10(grads), edges)
    scaled_counts, _ = np.histogram(np.log10(scaled), edges)
    lin_edges = 10.0**edges

    def underflow_histogram_figure():
        phone = on_phone()
        # On a phone the legend stands under the axes, in a taller bottom margin.
        fig = new_figure(8.4, 3.8 + (1.5 if phone else 0.0), margins=(0.78, 1.96 if phone else 0.46, 0.05, 0.24))
        ax = fig.add_subplot()
        ax.axvspan(lin_edges[0], floor, color=PALETTE["red"], alpha=0.08, linewidth=0)
        ax.axvspan(
            floor,
            2.0**-14,
            color=PALETTE["yellow"],
            alpha=0.18,
            linewidth=0,
            label=f"float16 subnormals, up to {t('f16_smallest_normal')}: fewer digits",
        )
        ax.stairs(
            raw_counts,
            lin_edges,
            fill=True,
            color=PALETTE["blue"],
            alpha=0.45,
            label=f"as computed: {t('f16_underflow_count')} ({t('f16_underflow_pct')}) become zero in float16",
        )
        ax.stairs(
            scaled_counts,
            lin_edges,
            fill=True,
            color=PALETTE["orange"],
            alpha=0.45,
            label=f"× {t('loss_scale')}: {t('scaled_underflow_count')} "
            f"({t('scaled_underflow_pct')}) become zero, "
            f"{t('scaled_overflow_count')} overflow",
        )
        top = max(raw_counts.max(), scaled_counts.max())
        ax.axvline(floor, color=PALETTE["red"], linewidth=1.2, linestyle="--")
        ax.text(
            floor * (1.6 if phone else 0.7),
            top * 1.62,
            f"zero in float16:\nup to {t('f16_zero_threshold_power')} ≈ {t('f16_zero_threshold')}",
            ha="left" if phone else "right",
            va="top",
            fontsize=9,
            color=PALETTE["red"],
        )
        ax.axvline(ceiling, color=PALETTE["grey"], linewidth=1.2, linestyle="--")
        ax.text(
            ceiling * 0.7,
            top * 0.55,
            f"float16's largest\nvalue {t('f16_max')}",
            ha="right",
            va="top",
            fontsize=9,
            color=PALETTE["grey"],
        )
        log_axis(ax, "x", labels="power", every=2)
        ax.set_xlim(lin_edges[0], lin_edges[-1])
        ax.set_ylim(0, top * 1.7)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_number(v, ",.0f")))
        ax.set_xlabel("gradient value (log scale)")
        ax.set_ylabel("gradients per bin")
        if phone:
            ax.legend(loc="upper left", bbox_to_anchor=(-0.25, -0.2), fontsize=8.5)
        else:
            ax.legend(loc="upper right", fontsize=8.5)
        ax.set_title(
            f"Scaling by {t('loss_scale')} cuts the gradients float16 loses from "
            f"{t('f16_underflow_count')} to {t('scaled_underflow_count')} "
            f"of {t('grad_count')}",
            loc="left",
        )
        return fig

    section.save_figure(underflow_histogram_figure, "underflow_histogram")


def draw_overflow(section, results) -> None:
    """One row per stored value, the two formats side by side: wide cells
    hold even the longest value with room to spare."""
    t, texts = section.text, section.texts
    n = len(OVERFLOW_LIST)

    def overflow_list_figure():
        fig, ax = new_cell_figure(8.4, 0.42 * n + 0.95, title_lines=2)
        f16_fill = [PALETTE["light"] if np.isfinite(v) else "#F8D0C0" for v in results["stored"]["f16"]]
        draw_cell_rows(
            ax,
            [
                (f"stored {stored}", [f16, bf16])
                for stored, f16, bf16 in zip(texts("overflow_stored"), texts("overflow_f16"), texts("overflow_bf16"))
            ],
            fills=[[f16_fill[i], "#DCEFE6"] for i in range(n)],
            label_width=1.25,
            fontsize=10.5,
            column_labels=["float16 holds", "bfloat16 holds"],
        )
        ax.set_title(
            f"float16 overflows to inf from {t('overflow_f16_first_inf')} on; bfloat16 holds "
            f"every value,\nwith errors up to {t('overflow_bf16_max_rel_error')}",
            loc="left",
        )
        return fig

    section.save_figure(overflow_list_figure, "overflow_list")


def draw_master(section, results) -> None:
    t = section.text
    paths = results["paths"]
    steps = np.arange(len(paths["f32"]))
    below = paths["below"]

    def master_copy_figure():
        fig = new_figure(8.4, 3.2, margins=(0.61, 0.46, 0.16, 0.24))
        ax = fig.add_subplot()
        ax.axhline(below, color=PALETTE["grey"], linewidth=1.0, linestyle=":")
        ax.annotate(
            f"next bfloat16 below one: {t('bf16_below_one')} (gap {t('bf16_gap_below_one')})",
            (steps[-1], below),
            xytext=(-4, -4),
            textcoords="offset points",
            ha="right",
            va="top",
            fontsize=9,
            color=PALETTE["grey"],
        )
        ax.plot(steps, paths["bf16"], color=PALETTE["orange"], label="bfloat16 copy")
        ax.plot(steps, paths["f32"], color=PALETTE["blue"], label="float32 copy")
        ax.annotate(
            f"stays at {t('bf16_master_end')}",
            (steps[-1], paths["bf16"][-1]),
            xytext=(-4, 4),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=9,
            color=PALETTE["orange"],
        )
        ax.annotate(
            f"ends at {t('f32_master_end')}",
            (steps[-1], paths["f32"][-1]),
            xytext=(-10, 0),
            textcoords="offset points",
            ha="right",
            va="top",
            fontsize=9,
            color=PALETTE["blue"],
        )
        lo, hi = paths["f32"].min(), max(paths["bf16"].max(), paths["f32"].max())
        pad = (hi - lo) * 0.08
        ax.set_ylim(*nice_limits([lo - pad, hi + pad], pad=0.0))
        ax.set_xlim(0, steps[-1])
        ax.set_xlabel("updates applied")
        ax.set_ylabel("weight value")
        ax.legend(loc="lower left")
        ax.set_title(
            f"Adding {t('master_step')} {t('master_steps')} times: bfloat16 never moves, "
            f"float32 reaches {t('f32_master_end')}",
            loc="left",
        )
        return fig

    section.save_figure(master_copy_figure, "master_copy")


def draw(section, results):
    draw_formats(section, results)
    draw_memory(section, results)
    draw_histogram(section, results)
    draw_overflow(section, results)
    draw_master(section, results)


if __name__ == "__main__":
    main(__name__)
