"""Sampling error of the page's validation scores (sections 3 to 9 of
"Normalisation layers"): a score is a mean over a finite validation set (the
4,096 points of sections 3 to 5, the 64 windows of sections 7 to 9), so it
carries the standard error of that mean; two networks scored on the same
set are compared by the standard error of their per-item differences
(paired), which is smaller than the two errors combined when the networks
get the same items right or wrong.
"""

from __future__ import annotations

import math
from typing import Sequence

# A difference within this many (paired) standard errors of zero is a tie:
# the page calls it one, and no claim says which side is ahead.
TIE_ERRORS = 2


def standard_error(values: Sequence[float]) -> float:
    """The standard error of the mean of ``values`` (sample standard
    deviation, divisor n - 1, over the square root of n)."""
    n = len(values)
    mean = math.fsum(values) / n
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1) / n)


def paired_difference(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """(mean of a - b, its standard error) over items scored by both."""
    if len(a) != len(b):
        raise ValueError(f"paired_difference: {len(a)} items against {len(b)}")
    differences = [float(x) - float(y) for x, y in zip(a, b)]
    return math.fsum(differences) / len(differences), standard_error(differences)


def is_tie(difference: float, error: float) -> bool:
    """Whether a difference lies within TIE_ERRORS standard errors of zero."""
    return abs(difference) <= TIE_ERRORS * error
