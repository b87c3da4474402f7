"""Argument checks shared by the accounting modules (one function's own stay next to it):
each raises ``ValueError`` naming the argument and quoting the value; ``as_*`` also return
it in the form the math uses."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def as_log_q(log_q: ArrayLike) -> np.ndarray:
    """``log q`` as a float64 array; every entry must be ``<= 0`` (and not NaN)."""
    log_q = np.asarray(log_q, dtype=np.float64)
    if np.any(np.isnan(log_q)) or np.any(log_q > 0):
        raise ValueError("log q must be <= 0 (it is the log of a probability)")
    return log_q


def check_positive(value: float, name: str) -> None:
    """Raise ``ValueError`` unless ``value`` is a finite number ``> 0`` (a noise scale)."""
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")


# A Gaussian standard deviation's square must be a finite, non-zero double: the bounds
# divide by it (alpha / sigma^2) and scale gaps by sqrt(2 sigma^2).
GAUSSIAN_STD = (1e-150, 1e150)


def check_std(value: float, name: str) -> None:
    """Raise ``ValueError`` unless ``value`` is a Gaussian standard deviation in
    ``GAUSSIAN_STD`` (finite, positive, with a finite, non-zero square)."""
    check_positive(value, name)
    low, high = GAUSSIAN_STD
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in [{low:g}, {high:g}] (its square must be a "
                         f"finite, non-zero double), got {value!r}")


def check_positive_integer(value: int, name: str) -> None:
    """Raise ``ValueError`` unless ``value`` is an ``int`` (or NumPy integer) ``>= 1`` (no 2.0)."""
    if not (isinstance(value, (int, np.integer)) and value >= 1):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def as_teachers(teachers: float) -> int:
    """The number of teachers ``M`` as an ``int``; integral floats (``250.0``) are accepted."""
    if not (np.isfinite(teachers) and teachers >= 1 and float(teachers) == int(teachers)):
        raise ValueError(f"teachers must be a positive integer, got {teachers!r}")
    return int(teachers)


def check_order(order: float) -> None:
    """Raise ``ValueError`` unless ``order`` is one finite Rényi order ``> 1`` (grids:
    :func:`pate_cli.orders.validate_orders`)."""
    if not (np.isfinite(order) and order > 1):
        raise ValueError(f"order must be greater than 1, got {order!r}")


def check_delta(delta: float) -> None:
    """Raise ``ValueError`` unless ``delta`` is a Python or NumPy number in ``(0, 1)``."""
    if not (isinstance(delta, (int, float, np.floating)) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
