"""Epsilons as a person reads them: rounded UP at the displayed precision (cli:json).

A printed guarantee is never below the computed one: ``2.020029`` prints ``2.0201`` (not
``f"{x:.4f}"``'s ``2.0200``). JSON and CSV carry full floats; every text a person reads goes
through these helpers. Rounding is decimal, on the shortest ``repr``: ``2.02`` prints ``2.0200``,
``0.1 + 0.2`` prints ``0.3001``. What is left of a budget rounds down.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal


def ceil_text(value, digits: int = 4) -> str:
    """``f"{value:.{digits}f}"``, rounded up instead of to nearest (``inf``, ``nan`` as they
    are); with ``digits >= 2``, a positive value below ``10^-(digits - 1)`` at ``digits``
    significant digits (:func:`ceil_significant`: ``1.379e-05``, not ``0.0001``)."""
    if digits >= 2 and 0.0 < float(value) < 10.0 ** (1 - digits):
        return ceil_significant(value, digits)
    return _fixed(value, digits, ROUND_CEILING)


def limit_text(value, digits: int = 4) -> str:
    """A limit figures are held to (a budget, a calibration target): as given where ``digits``
    decimals hold it, else rounded up as the figures beside it (a figure within it never
    prints above it)."""
    value = float(value)
    text = ceil_text(value, digits)
    return text if float(text) != value else exact_text(value)


def exact_text(value) -> str:
    """``value`` as a command gives it: ``:g`` where that reads back as the value, else its
    shortest exact text (``12.3456789``, not ``12.3457``)."""
    value = float(value)
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def limit_digits(limit, digits: int = 4) -> int:
    """The decimals figures compared with ``limit`` print at: ``digits``, or as many as write
    the limit exactly (its shortest ``repr``), so a figure within it never prints above it and
    one above it never prints equal to it."""
    limit = float(limit)
    if not math.isfinite(limit):
        return digits
    exponent = Decimal(repr(limit)).as_tuple().exponent
    return max(digits, -int(exponent))


def floor_text(value, digits: int = 4) -> str:
    """``f"{value:.{digits}f}"``, rounded down (what is left of a budget)."""
    return _fixed(value, digits, ROUND_FLOOR)


def ceil_significant(value, digits: int = 3) -> str:
    """``f"{value:.{digits}g}"``, rounded up at its last significant digit."""
    return _significant(value, digits, ROUND_CEILING)


def floor_significant(value, digits: int = 3) -> str:
    """``f"{value:.{digits}g}"``, rounded down at its last significant digit (budgets left)."""
    return _significant(value, digits, ROUND_FLOOR)


def _significant(value, digits: int, rounding: str) -> str:
    value = float(value)
    if not math.isfinite(value) or value == 0.0:
        return f"{value:.{digits}g}"
    exact = Decimal(repr(value))
    step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    rounded = exact.quantize(step, rounding=rounding, context=Context(prec=digits + 2))
    # at most ``digits`` significant digits (or a power of ten): the float nearest to it
    # prints back exactly at ``digits`` significant digits
    shown = float(rounded)
    if not math.isfinite(shown):
        return f"{rounded:.{digits}g}"
    text = f"{shown:.{digits}g}"
    # a subnormal float carries fewer digits and may print on the wrong side of the value
    wrong = Decimal(text) < exact if rounding == ROUND_CEILING else Decimal(text) > exact
    return f"{rounded.normalize():.{digits}g}" if wrong else text


def _quantize(value, digits: int, rounding: str) -> Decimal:
    if digits < 0:
        raise ValueError(f"digits must be >= 0, got {digits}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"cannot round {value!r} at a precision")
    exact = Decimal(repr(value))
    # enough digits for the whole part and the decimals (a float is below 1e309)
    context = Context(prec=max(28, exact.adjusted() + digits + 2))
    rounded = exact.quantize(Decimal(1).scaleb(-digits), rounding=rounding, context=context)
    return rounded + 0 if rounded.is_zero() else rounded  # -0.0000 prints 0.0000


def _fixed(value, digits: int, rounding: str) -> str:
    value = float(value)
    if not math.isfinite(value):
        return f"{value:.{digits}f}"
    return f"{_quantize(value, digits, rounding):.{digits}f}"


def order_text(order: float) -> str:
    """A Rényi order as a person reads it: ``f"{order:g}"`` (``13.5``, ``1e+06``), with as many
    more significant digits as show it above 1 (``1.0000001``, not ``1``: no Rényi order)."""
    for digits in range(6, 18):
        text = f"{float(order):.{digits}g}"
        if float(text) > 1.0 or not float(order) > 1.0:
            return text
    return repr(float(order))
