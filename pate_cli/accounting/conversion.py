"""RDP to (epsilon, delta)-DP, and the per-order constants it needs (MATH.md section 6)."""

from __future__ import annotations

import math

import numpy as np

from ..orders import validate_orders

CONVERSIONS = ("classic", "improved")


def conversion_offset(*, orders, delta: float, conversion: str = "classic") -> np.ndarray:
    """The term added to ``rdp(alpha)`` before minimising over orders.

    ``classic`` (Mironov 2017, Prop. 3): ``log(1/delta) / (alpha - 1)``.
    ``improved`` (Canonne, Kamath, Steinke 2020): ``log((alpha-1)/alpha)
    - (log delta + log alpha) / (alpha - 1)``; the resulting epsilon is clipped at 0.
    """
    orders = validate_orders(orders)
    check_delta(delta)
    if conversion == "classic":
        return -math.log(delta) / (orders - 1.0)
    if conversion == "improved":
        return np.log((orders - 1.0) / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)
    raise ValueError(f"conversion must be one of {', '.join(CONVERSIONS)}, got {conversion!r}")


def rdp_to_epsilon(rdp, *, orders, delta: float, conversion: str = "classic"):
    """Convert RDP curves to ``(epsilon, order)`` at ``delta`` (MATH.md section 6).

    ``rdp`` has shape ``(..., orders)``; both results have shape ``rdp.shape[:-1]`` (0-d
    arrays for one curve). The order is the first minimiser in grid order.
    """
    orders = validate_orders(orders)
    rdp = np.asarray(rdp, dtype=np.float64)
    if rdp.shape[-1:] != orders.shape:
        raise ValueError(f"rdp has {rdp.shape[-1:]} orders, the grid has {orders.size}")
    candidates = rdp + conversion_offset(orders=orders, delta=delta, conversion=conversion)
    best = np.argmin(candidates, axis=-1)
    epsilon = np.take_along_axis(candidates, best[..., None], axis=-1)[..., 0]
    if conversion == "improved":
        epsilon = np.maximum(epsilon, 0.0)
    return epsilon, orders[best]


def check_delta(delta: float) -> None:
    """Raise ``ValueError`` unless ``0 < delta < 1``."""
    if not (isinstance(delta, (int, float, np.floating)) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
