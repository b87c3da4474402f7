"""Log-space helpers of the accounting kernels (math:gnmax), the one test of whole numbers
(:func:`whole`) and of a keyword's number (:func:`real_number`). Elementwise, no Python loops.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

# Every converted epsilon is raised by this much, relative (about 9.1e-13), above the curves'
# and sums' rounding (docs/explanation/numerics.md#tolerance).
ROUNDING_MARGIN = 2.0 ** -40
UNIT_ROUNDOFF = 2.0 ** -53


def summed_margin(terms: int) -> float:
    """The relative raise of a figure from a sum of up to ``terms`` non-negative curves added
    one after another (math:conversion): ``ROUNDING_MARGIN`` up to 4,080 terms, else
    ``2 (terms + 16) u`` (u = 2^-53). Such a sum is within ``(terms - 1) u`` of its value,
    relative (Higham 2002, eq. 4.4), which the curves' own few ulps and the conversion's
    add to (docs/explanation/numerics.md#tolerance)."""
    return max(ROUNDING_MARGIN, 2.0 * (terms + 16) * UNIT_ROUNDOFF)


def raised_rdp(rdp, terms: int = 0) -> np.ndarray:
    """RDP values handed on (written, printed) raised as every epsilon is, by
    ``summed_margin(terms)`` relative (0 and ``inf`` stay): float sums of at most ``terms``
    curves are a few ulps either side of the formulas' values; a bound must not be below."""
    return np.asarray(rdp, dtype=np.float64) * (1.0 + summed_margin(terms))


def whole(values) -> bool:
    """Whether every value is a whole number (a NaN is not): vote counts that are plain
    counts, plurality counts written as integers, integer gaps."""
    values = np.asarray(values)
    return bool(np.array_equal(values, np.rint(values)))


def whole_int(value):
    """An integral float below 2^53 as an int (the same number, written ``200``); anything
    else unchanged (``1e+300`` stays, not 301 digits no int64 reader takes)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def real_number(value, *, whole: bool = False, positive: bool = False) -> bool:
    """Whether ``value`` is one real number (an integer with ``whole``; finite and above 0
    with ``positive``), as a keyword of the API must be: not a bool, a string or a list."""
    kind = numbers.Integral if whole else numbers.Real
    if not isinstance(value, kind) or isinstance(value, (bool, np.bool_)):
        return False
    return not positive or bool(math.isfinite(value) and value > 0)


def ratio_up(numerator, denominator) -> float:
    """``numerator / denominator`` (finite floats, ints or ``Fraction``, denominator
    positive) rounded up to a float, so an upper bound stays one."""
    exact = Fraction(numerator) / Fraction(denominator)
    value = float(exact)
    return math.nextafter(value, math.inf) if value < exact else value


def divide_up(numerator, denominator: float) -> np.ndarray:
    """``numerator / denominator`` (positive finite floats, elementwise) rounded up: the
    nearest quotient, raised by one ulp where it is below the exact one. Whether it is below
    comes from the exact product of the quotient and ``denominator`` (Dekker's two-product:
    the rounded product and its exact error)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    quotient = numerator / denominator
    product = quotient * denominator
    high, low = _halves(quotient)
    d_high, d_low = _halves(np.float64(denominator))
    error = ((high * d_high - product) + high * d_low + low * d_high) + low * d_low
    below = (product < numerator) | ((product == numerator) & (error < 0))
    return np.where(below, np.nextafter(quotient, np.inf), quotient)


def _halves(value):
    """Veltkamp's split of doubles into two halves of 26 bits whose products are exact."""
    scaled = 134217729.0 * value  # 2^27 + 1
    high = scaled - (scaled - value)
    return high, value - high


def log1mexp(x):
    """``log(1 - exp(x))`` for ``x <= 0``, elementwise and stably (math:gnmax):
    ``log1p(-exp(x))`` below -1, ``log(-expm1(x))`` above; ``-inf`` at 0; ``ValueError``
    for positive ``x``."""
    x = np.asarray(x, dtype=np.float64)
    if np.any(x > 0):
        raise ValueError(f"log1mexp needs x <= 0, got max {float(np.max(x))!r}")
    with np.errstate(divide="ignore"):
        far = np.log1p(-np.exp(x))
        near = np.log(-np.expm1(x))
    return np.where(x < -1.0, far, near)


def log_add(x, y):
    """``log(exp(x) + exp(y))`` elementwise: ``numpy.logaddexp``'s formula, about twice as
    fast on large arrays (numpy's exp is SIMD-accelerated)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    hi = np.maximum(x, y)
    with np.errstate(invalid="ignore"):
        gap = -np.abs(x - y)
    gap = np.where(np.isnan(gap), -np.inf, gap)  # inf - inf: both terms equal
    return hi + np.log1p(np.exp(gap))


# f(x) = (e^x - 1 - x) / x^2 = sum_k x^k / (k+2)!, |x| <= 1: 20 terms leave a relative error
# below 1 / 22! ~ 1e-21 (the alternating series for x < 0 is at least f(-1) = 0.37).
_SERIES = tuple(1.0 / math.factorial(k + 2) for k in range(20))


def _series(x: np.ndarray) -> np.ndarray:
    small = np.clip(x, -1.0, 1.0)
    series = np.full_like(small, _SERIES[-1])
    for coefficient in _SERIES[-2::-1]:
        series = series * small + coefficient
    return series


def expm1_minus(x, series_below: float = 1.0):
    """``exp(x) - 1 - x`` (``>= 0``) elementwise without cancellation: its Taylor series for
    ``|x| <= series_below`` (at most 1), ``expm1(x) - x`` beyond, which loses at most about
    2 bits beyond 1 and ``log2(2 / series_below) + 1`` bits beyond ``series_below``."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.expm1(x) - x
    small = np.abs(x) <= series_below
    if small.all():
        return x * x * _series(x)
    if small.any():  # the series only where it is needed
        near = x[small]
        out[small] = near * near * _series(near)
    return out


def log_expm1_minus(x):
    """``log(exp(x) - 1 - x)`` elementwise (``-inf`` at 0), for any ``x`` without overflow:
    ``log(x^2 f(x))`` for ``|x| <= 1`` (:func:`expm1_minus`'s series), ``x + log1p(-(1 + x)
    e^-x)`` above 1, ``log((-1 - x) + e^x)`` (two positive terms) below -1; each branch
    computed only where it applies."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    near = np.abs(x) <= 1.0
    above = x > 1.0
    below = x < -1.0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if near.any():
            value = x[near]
            out[near] = 2.0 * np.log(np.abs(value)) + np.log(_series(value))
        if above.any():
            value = x[above]
            out[above] = value + np.log1p(-(1.0 + value) * np.exp(-value))
        if below.any():
            value = x[below]
            out[below] = np.log(-1.0 - value + np.exp(value))
    out[np.isnan(x)] = np.nan
    return out
