"""Rényi orders and the one parser of ``a,b,c`` / ``start:stop:step`` lists (``--orders``,
every ``pate-sweep`` grid); the default grid is the 2018 paper's (math:conversion).

``stop`` is included when within 1e-9 of a step; values are rounded to 12 significant digits
(``0.1:0.3:0.1`` gives 0.1, 0.2, 0.3). Limits, checked before any list is built: at most
``MAX_GRID_VALUES`` values and ``MAX_ORDERS`` orders (each order a column per query); orders in
``(1, MAX_ORDER]``: 10^6 keeps ``alpha / sigma^2`` <= 10^18 at the smallest noise and is past
any useful order (``log(1/delta) / (alpha - 1)`` < 10^-4).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .numerics import real_number

MAX_GRID_VALUES = 1_000_000
MAX_ORDERS = 100_000
MAX_ORDER = 1e6


def default_orders() -> np.ndarray:
    """The 298 orders the 2018 paper's analysis used (math:conversion).

    ``arange(2, 101, 0.5)`` then ``logspace(2, log10(500), 100)``, kept exactly (100 twice,
    100.5 before the second 100): reported orders and some running epsilons depend on it.

    Returns:
      The orders, a float64 array of shape ``(298,)``.
    """
    return np.concatenate((np.arange(2, 101, 0.5), np.logspace(2, np.log10(500), 100)))


AUTO = "auto"
# --orders auto: at most this many extensions, each adding _EXTENSION_STEPS orders.
AUTO_ROUNDS = 40
_EXTENSION_STEPS = 8


def extend_orders(orders: np.ndarray, best: int) -> np.ndarray | None:
    """``--orders auto``: the grid extended past the edge where the best order (index ``best``)
    sits: below ``a``, ``1 + (a - 1) 2^(-k/4)``; above ``b``, ``b 2^(k/8)`` (at most
    ``MAX_ORDER``), k = 1..8. None when not at an edge or the grid cannot grow there."""
    orders = validate_orders(orders)
    if orders.size < 2:
        return None
    steps = np.arange(1, _EXTENSION_STEPS + 1)
    if orders[best] == orders.min():
        low = float(orders.min())
        lower = 1.0 + (low - 1.0) * 2.0 ** (-steps / 4.0)
        lower = lower[lower > 1.0][::-1]
        return np.concatenate((lower, orders)) if lower.size else None
    if orders[best] == orders.max():
        high = float(orders.max())
        if high >= MAX_ORDER:
            return None
        higher = np.minimum(high * 2.0 ** (steps / 8.0), MAX_ORDER)
        higher = np.unique(higher[higher > high])
        return np.concatenate((orders, higher))
    return None


def parse_orders(text: str) -> np.ndarray:
    """Parse ``--orders`` (a grid spec); every order must be a finite number above 1. A
    repeated order is kept where written (as 100 in the default grid): it changes no figure.

    Args:
      text: a comma list of numbers and ``start:stop:step`` ranges.

    Returns:
      The orders, a 1-D float64 array in the order written.

    Raises:
      ValueError: with a message naming the bad part.
    """
    if not str(text).strip():
        raise ValueError("--orders is empty")
    return validate_orders(np.array(parse_grid(text, name="--orders", limit=MAX_ORDERS,
                                               repeats=True)))


def validate_orders(orders) -> np.ndarray:
    """``orders`` as a 1-D float array; ``ValueError`` if any is <= 1 or above ``MAX_ORDER``.
    A text is read as ``--orders`` (:func:`parse_orders`)."""
    if isinstance(orders, str):
        if orders.strip().lower() == AUTO:
            raise ValueError(f"orders {orders!r} is not a grid (--orders {AUTO} applies to "
                             "pate-analyze)")
        return parse_orders(orders)
    orders = np.atleast_1d(np.array(orders, dtype=np.float64))  # a copy: the caller's stays
    if orders.ndim != 1 or orders.size == 0:
        raise ValueError("orders must be a non-empty list of numbers")
    if not np.all(np.isfinite(orders)):
        raise ValueError("orders must be finite")
    if np.any(orders <= 1):
        bad = float(orders[orders <= 1][0])
        raise ValueError(f"every order must be greater than 1, got {bad:g}")
    if np.any(orders > MAX_ORDER):
        bad = float(orders[orders > MAX_ORDER][0])
        raise ValueError(f"every order must be at most {MAX_ORDER:g}, got {bad:g}")
    return orders


def parse_grid(spec: str, *, name: str | None = None, integer: bool = False,
               limit: int = MAX_GRID_VALUES, repeats: bool = False) -> tuple:
    """The values of a grid spec in the order written; duplicates are an error unless
    ``repeats``; ``integer`` grids give ints; at most ``limit`` values (counted before
    expanding). ``ValueError`` names the item (and ``name``)."""
    try:
        return _parse(spec, integer, limit, repeats)
    except ValueError as error:
        if name:
            raise ValueError(f"{name}: {error}") from None
        raise


def _parse(spec: str, integer: bool, limit: int, repeats: bool = False) -> tuple:
    text = str(spec).strip()
    if not text:
        raise ValueError("empty grid (give a comma list or start:stop:step)")
    values: list = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise ValueError(f"empty item in {text!r}")
        parts = item.split(":")
        if len(parts) == 1:
            values.append(_number(parts[0], item))
        elif len(parts) == 3:
            values.extend(_range(*(_number(part, item) for part in parts), item,
                                 limit - len(values)))
        else:
            raise ValueError(f"{item!r} is neither a number nor start:stop:step")
        if len(values) > limit:
            raise ValueError(f"more than {limit:,} values")
    if integer:
        values = whole_numbers(values)
    seen = set()
    for value in values:
        if value in seen and not repeats:
            raise ValueError(f"{value:g} appears twice")
        seen.add(value)
    return tuple(values)


def whole_numbers(values) -> list[int]:
    """``values`` (numbers) as ints; ``ValueError`` naming the first that is not whole."""
    not_whole = [value for value in values if not real_number(value) or value != int(value)]
    if not_whole:
        shown = f"{not_whole[0]:g}" if real_number(not_whole[0]) else repr(not_whole[0])
        raise ValueError(f"{shown} is not a whole number")
    return [int(value) for value in values]


def _number(text: str, item: str) -> float:
    try:
        value = float(text)
    except ValueError:
        where = "" if text.strip() == item else f" in {item!r}"
        raise ValueError(f"{text.strip()!r}{where} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text.strip()!r} is not a finite number")
    return value


def _range(start: float, stop: float, step: float, item: str, room: int) -> list[float]:
    if step <= 0:
        raise ValueError(f"the step of {item!r} must be positive")
    if stop < start:
        raise ValueError(f"{item!r} ends before it starts (stop is below start)")
    steps = (stop - start) / step
    if not steps < room:  # also a count that is not finite (a step of 1e-320)
        raise ValueError(f"{item!r} has more than {room:,} values ({_count(steps)})")
    count = math.floor(steps + 1e-9) + 1
    if count > room:
        raise ValueError(f"{item!r} has more than {room:,} values ({count:,})")
    return [_tidy(start + k * step) for k in range(count)]


def _count(steps: float) -> str:
    return f"{math.floor(steps + 1e-9) + 1:,}" if math.isfinite(steps) else "too many to count"


def _tidy(value: float) -> float:
    """Round away binary noise such as 0.30000000000000004 (12 significant digits)."""
    return float(f"{value:.12g}")


@functools.lru_cache(maxsize=64)
def orders_text(orders: tuple | None) -> str:
    """Canonical text of an order grid: ``default`` for math:conversion's grid (None), else a
    comma list, runs of three or more evenly spaced orders as ``start:stop:step``, each
    reading back exactly (equal grids, equal text; different grids, different text)."""
    if orders is None:
        return "default"
    values = tuple(float(x) for x in orders)
    default = default_orders()
    if len(values) == default.size and all(a == b for a, b in zip(values, default.tolist(),
                                                                   strict=True)):
        return "default"
    parts, start = [], 0
    while start < len(values):
        stop, text = _orders_run(values, start)
        parts.append(text)
        start = stop
    return ",".join(parts)


def _orders_run(values: tuple, start: int) -> tuple[int, str]:
    """The longest ``start:stop:step`` run from ``values[start]`` that reads back exactly
    (at least three values), else the single number: ``(index after it, text)``."""
    if start + 2 < len(values) and values[start + 1] > values[start]:
        step = float(f"{values[start + 1] - values[start]:.12g}")
        stop = start + 1
        while stop < len(values) and values[stop] == float(
                f"{values[start] + (stop - start) * step:.12g}"):
            stop += 1
        while stop - start >= 3:
            text = f"{_short(values[start])}:{_short(values[stop - 1])}:{_short(step)}"
            try:
                if parse_grid(text) == values[start:stop]:
                    return stop, text
            except ValueError:
                pass
            stop -= 1
    return start + 1, _short(values[start])


def _short(value: float) -> str:
    """The shortest text that reads back to ``value`` (``2`` rather than ``2.0``)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text
