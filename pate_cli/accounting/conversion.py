"""RDP to (epsilon, delta)-DP: the per-order offset, the minimum over orders and the clip.

MATH.md section 6. Every conversion in the package, whole curves (:func:`rdp_to_epsilon`)
and the running sums of ``accounting.composition`` alike, goes through
:func:`minimise_over_orders`, the one place that adds the offset, takes the first
minimising order and clips the improved conversion at 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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


@dataclass(frozen=True, eq=False)
class Conversion:
    """One conversion on one order grid at one delta (MATH.md section 6).

    ``offset``: the term :func:`conversion_offset` adds per order; ``clip``: whether
    epsilon is clipped at 0 (the improved conversion; at an order where ``delta^2 >=
    1 - exp(-rdp)`` epsilon 0 is valid, MATH.md section 6).
    """

    orders: np.ndarray
    offset: np.ndarray
    clip: bool

    @classmethod
    def of(cls, *, orders, delta: float, conversion: str = "classic") -> Conversion:
        """Validate the setting (``ValueError`` for a bad grid, delta or name)."""
        orders = validate_orders(orders)
        offset = conversion_offset(orders=orders, delta=delta, conversion=conversion)
        return cls(orders=orders, offset=offset, clip=conversion == "improved")

    def epsilon(self, rdp: np.ndarray, *, out: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        """``(epsilon, index of the order)`` of curves ``(..., orders)``; see
        :func:`minimise_over_orders`."""
        return minimise_over_orders(rdp, self.offset, clip=self.clip, out=out)


def minimise_over_orders(rdp: np.ndarray, offset: np.ndarray, *, clip: bool,
                         out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``min over alpha of rdp(alpha) + offset(alpha)`` and the first minimising index.

    MATH.md section 6. ``rdp``: ``(..., orders)``; both results have shape
    ``rdp.shape[:-1]``. ``clip``: clip epsilon at 0 (the improved conversion). ``out``
    receives ``rdp + offset`` (it may be ``rdp`` itself, to convert in place).
    """
    candidates = np.add(rdp, offset, out=out)
    best = np.argmin(candidates, axis=-1)
    epsilon = np.take_along_axis(candidates, best[..., None], axis=-1)[..., 0]
    if clip:
        epsilon = np.maximum(epsilon, 0.0)
    return epsilon, best


def rdp_to_epsilon(rdp, *, orders, delta: float, conversion: str = "classic"
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Convert RDP curves to ``(epsilon, order)`` at ``delta`` (MATH.md section 6).

    ``rdp`` has shape ``(..., orders)``; both results have shape ``rdp.shape[:-1]`` (0-d
    arrays for one curve). The order is the first minimiser in grid order.
    """
    orders = validate_orders(orders)
    rdp = np.asarray(rdp, dtype=np.float64)
    if rdp.shape[-1:] != orders.shape:
        raise ValueError(f"rdp has {rdp.shape[-1:]} orders, the grid has {orders.size}")
    epsilon, best = Conversion.of(orders=orders, delta=delta, conversion=conversion).epsilon(rdp)
    return epsilon, orders[best]


def check_delta(delta: float) -> None:
    """Raise ``ValueError`` unless ``0 < delta < 1``."""
    if not (isinstance(delta, (int, float, np.floating)) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
