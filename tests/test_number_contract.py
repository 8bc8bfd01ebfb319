"""Property tests of the number contract between the scripts and the checker.

Every house format of ``numformat.format_number`` must print a text that
``check_page`` reads as exactly one number (``NUMBER``), whose value
(``as_float``) is the formatted value to the printed precision, and that
breaks no rule of the house style (``style_problem``). Hypothesis draws the
values; the profile in conftest.py derandomises it, so CI is deterministic.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pagekit.check_page import NUMBER, as_float, style_problem
from pagekit.section import format_number

_FROM_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")

# Finite values across the magnitudes the pages quote and far beyond.
VALUES = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)
# Fixed-point and percent texts stay readable below 10¹⁵.
MODERATE = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15)

FIXED_FORMATS = [".0f", ".1f", ".2f", ".3f", ".4f", ".9f", ",.0f", ",.1f", ".0%", ".1%", ".2%"]
SCIENTIFIC_FORMATS = [".0x", ".1x", ".2x", ".4x", ".0e", ".2e"]
GENERAL_FORMATS = ["g", ".3g", ".1g", ".6g"]


def half_unit(text: str) -> float:
    """Half a unit in the last printed place of ``text``: how far the value may
    lie from what the text says. Read from the text alone, not from the format."""
    t = text.replace("\u2212", "-").replace(",", "")
    percent = t.endswith("%")
    t = t.rstrip("%")
    power = 0
    if " \u00d7 10" in t:
        t, _, exponent = t.partition(" \u00d7 10")
        power = int(exponent.translate(_FROM_SUP))
    decimals = len(t.partition(".")[2])
    return 0.5 * 10.0 ** (power - decimals) / (100 if percent else 1)


def assert_reads_back(value: float, fmt: str) -> None:
    text = format_number(value, fmt)
    assert NUMBER.fullmatch(text), f"{fmt!r} printed {text!r} for {value!r}: the checker does not read it as a number"
    assert style_problem(text) is None, f"{fmt!r} printed {text!r} for {value!r}: {style_problem(text)}"
    parsed = as_float(text)
    assert parsed is not None, f"{fmt!r} printed {text!r}: the checker gives it no value"
    # The printed rounding, plus a few ulps for the parse's own arithmetic.
    slack = half_unit(text) * (1 + 1e-9) + 4 * math.ulp(max(abs(value), abs(parsed)))
    assert abs(parsed - value) <= slack, f"{fmt!r} printed {text!r} for {value!r}, which reads back as {parsed!r}"


@pytest.mark.parametrize("fmt", FIXED_FORMATS)
@given(value=MODERATE)
@example(value=1234.5)
@example(value=-0.004)
@example(value=999.9999)
def test_fixed_and_percent_formats_read_back(fmt, value):
    assert_reads_back(value, fmt)


@pytest.mark.parametrize("fmt", SCIENTIFIC_FORMATS)
@given(value=VALUES)
@example(value=4.77e-6)
@example(value=-9.96)
@example(value=0.0)
def test_scientific_formats_read_back(fmt, value):
    assert_reads_back(value, fmt)


@pytest.mark.parametrize("fmt", GENERAL_FORMATS)
@given(value=VALUES)
@example(value=1e-05)  # the survey's hole: "g" printed 1e−05, which the checker rejects
@example(value=-4.82e6)
@example(value=123456.0)  # "g" printed 123456, without its thousands separator
@example(value=0.001)
def test_general_formats_read_back(fmt, value):
    assert_reads_back(value, fmt)


@given(value=st.integers(min_value=-(10**15), max_value=10**15))
def test_grouped_integers_read_back(value):
    assert_reads_back(value, ",d")


@given(value=st.integers(min_value=-999, max_value=999))
def test_plain_integers_read_back(value):
    assert_reads_back(value, "d")


@given(value=st.integers(min_value=1000, max_value=10**9))
def test_plain_integers_from_1000_are_code_like(value):
    """ "d" stays ungrouped on purpose, for years and seeds (2020, rng(1212)):
    the checker accepts such a text only where code-like numbers are allowed
    (a seed argument, or a page's STRUCTURAL year pattern)."""
    text = format_number(value, "d")
    assert style_problem(text) is not None and style_problem(text, seed_like=True) is None


@given(exponent=st.integers(min_value=-1074, max_value=1023))
def test_powers_of_two_read_back_exactly(exponent):
    value = 2.0**exponent
    text = format_number(value, "pow2")
    assert NUMBER.fullmatch(text) and style_problem(text) is None
    assert as_float(text) == value, f"{text!r} reads back as {as_float(text)!r}, not {value!r}"


def test_no_house_form_prints_e_notation():
    """The plain rule behind the properties: e-notation never reaches the prose."""
    for fmt in FIXED_FORMATS + SCIENTIFIC_FORMATS + GENERAL_FORMATS:
        for value in (1e-05, -4.82e6, 3.4028235e38, 1.4e-45):
            text = format_number(value, fmt)
            assert not re.search(r"\d[eE][-+\u2212]?\d", text), f"{fmt!r} printed {text!r} for {value!r}"
