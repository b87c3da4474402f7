"""Rényi orders: the default grid of the 2018 paper's analysis and ``--orders`` parsing."""

from __future__ import annotations

import numpy as np


def default_orders() -> np.ndarray:
    """The 298 orders the 2018 paper's analysis used (MATH.md, notation).

    ``arange(2, 101, 0.5)`` followed by ``logspace(2, log10(500), 100)``, kept exactly
    so: 100 appears twice and 100.5 sits before the second 100. The reported order and
    the running epsilon of some queries depend on this exact sequence.
    """
    return np.concatenate((np.arange(2, 101, 0.5), np.logspace(2, np.log10(500), 100)))


def parse_orders(text: str) -> np.ndarray:
    """Parse ``"2,4,8.5"`` or ``"start:stop:step"`` (stop included when it lands on the grid).

    Raises ``ValueError`` with a message naming the bad part; every order must be a
    finite number greater than 1.
    """
    text = text.strip()
    if not text:
        raise ValueError("--orders is empty")
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise ValueError(f"--orders {text!r}: a range is start:stop:step")
        start, stop, step = (_number(p, text) for p in parts)
        if step <= 0:
            raise ValueError(f"--orders {text!r}: step must be positive")
        if stop < start:
            raise ValueError(f"--orders {text!r}: stop is below start")
        count = int(np.floor((stop - start) / step + 1e-9)) + 1
        orders = start + step * np.arange(count)
    else:
        orders = np.array([_number(p, text) for p in text.split(",")])
    return validate_orders(orders)


def validate_orders(orders) -> np.ndarray:
    """Return ``orders`` as a 1-D float array, or raise ``ValueError`` if any is <= 1."""
    orders = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if orders.ndim != 1 or orders.size == 0:
        raise ValueError("orders must be a non-empty list of numbers")
    if not np.all(np.isfinite(orders)):
        raise ValueError("orders must be finite")
    if np.any(orders <= 1):
        bad = float(orders[orders <= 1][0])
        raise ValueError(f"every order must be greater than 1, got {bad:g}")
    return orders


def _number(part: str, whole: str) -> float:
    try:
        return float(part)
    except ValueError:
        raise ValueError(f"--orders {whole!r}: {part.strip()!r} is not a number") from None
