"""How the pages write a number: the format specs a quote may use, the house
form of very small and large numbers ("4.77 × 10⁻⁶"), exact powers of two
("2⁻¹⁴⁹"), thousands separators and the typographic minus. Pure Python, so
the page check can use it without loading numpy or matplotlib.
"""

from __future__ import annotations

import math
import re
from typing import Callable


class QuoteError(ValueError):
    """A quote that cannot be registered (bad name, duplicate, NaN, ...)."""


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
MINUS, TIMES = "\u2212", "\u00d7"
SCIENTIFIC = re.compile(r"^\.(\d+)x$")  # ".2x" (or ".2e"): 4.77 × 10⁻⁶


def superscript(exponent: int) -> str:
    return str(exponent).translate(_SUPERSCRIPT)


def scientific(value: float, decimals: int) -> str:
    """The house form of a very small or large number: "4.77 × 10⁻⁶"."""
    mantissa, _, exponent = f"{value:.{decimals}e}".partition("e")
    power = int(exponent)
    return mantissa if power == 0 else f"{mantissa} {TIMES} 10{superscript(power)}"


def power_of_two(value: float) -> str:
    """An exact power of two as "2⁻¹⁴⁹" or "2²⁰"."""
    mantissa, exponent = math.frexp(value)
    if mantissa != 0.5:
        raise QuoteError(f"{value!r} is not a power of two")
    return "2" + superscript(exponent - 1)


# Fixed-point and percent specs, which get thousands separators ("1,234.50"),
# and the general spec ("g", ".3g"), whose e-notation becomes the house form.
FIXED = re.compile(r"^,?(?P<spec>(?:\.\d+)?[f%])$")
GENERAL = re.compile(r"^,?(?:\.(?P<precision>\d+))?g$")


def general(value: float, precision: str | None = None) -> str:
    """Python's "g" (shortest of fixed and scientific, trailing zeros dropped)
    in the house style: "0.001", "1,234.5", "1 × 10⁻⁵", "−4.82 × 10⁶"."""
    text = format(value, f",.{precision}g" if precision else ",g")
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa} {TIMES} 10{superscript(int(exponent))}" if e else text


def format_number(value: float, fmt: str | Callable[[float], str]) -> str:
    """The text form of one number, in the one house style (README, "Number
    style"): a format spec (``",d"``, ``".4f"``, ``".2%"``, ``"g"``), ``".2x"``
    for "4.77 × 10⁻⁶", ``"pow2"`` for "2⁻¹⁴⁹", or a callable for other forms.
    Fixed, percent and general specs get thousands separators and never print
    e-notation; ``"d"`` alone stays ungrouped for years and seeds (2020, rng(1212)).
    Every minus sign comes out as U+2212, as in the prose."""
    if callable(fmt):
        text = fmt(value)
    elif fmt == "pow2":
        text = power_of_two(value)
    elif SCIENTIFIC.match(fmt):
        text = scientific(value, int(SCIENTIFIC.match(fmt).group(1)))
    elif fmt.endswith("d"):  # integer forms ("d", ",d") take whole numbers only
        if not float(value).is_integer():
            raise QuoteError(f"format {fmt!r} needs a whole number, got {value!r}")
        text = format(int(value), fmt)
    elif re.fullmatch(r"\.\d+[eE]", fmt):  # scientific: always in the house form
        text = scientific(value, int(fmt[1:-1]))
    elif GENERAL.match(fmt):
        text = general(value, GENERAL.match(fmt).group("precision"))
    elif FIXED.match(fmt):  # ".2f", ".1%": thousands separators from 1,000 up
        text = format(value, "," + FIXED.match(fmt).group("spec"))
    else:
        text = format(value, fmt)
    if not isinstance(text, str) or not text:
        raise QuoteError(f"format {fmt!r} gave {text!r} for {value!r}")
    return text.replace("-", MINUS)
