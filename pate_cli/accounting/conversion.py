"""RDP to (epsilon, delta)-DP (math:conversion): every conversion goes through
:func:`minimise_over_orders`, which adds the offset, takes the first minimising order and clips.

Derivation: docs/explanation/accounting.md#conversion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..numerics import ROUNDING_MARGIN, summed_margin
from ..orders import default_orders, validate_orders
from ..rounding import order_text
from .validators import check_delta

CONVERSIONS = ("classic", "improved")
# How a run charges its queries (math:independent, math:gnmax, math:threshold, math:lnmax,
# math:conversion, math:costs): the replay's, pr_answered-weighted, or data-independent.
ACCOUNTING_MODES = ("replay", "expected", "data-independent")


def conversion_offset(*, orders, delta, conversion: str = "classic") -> np.ndarray:
    """The term added to ``rdp(alpha)`` before minimising over orders (math:conversion),
    ``classic`` (Mironov 2017, Prop. 3) or ``improved`` (Canonne, Kamath, Steinke 2020):
    ``(orders,)`` for one ``delta``, ``(deltas, orders)`` for several (each row its own bits)."""
    orders = validate_orders(orders)
    many = np.ndim(delta) > 0
    for each in (delta if many else [delta]):
        check_delta(each)
    logs = np.array([math.log(each) for each in delta])[:, None] if many else math.log(delta)
    if conversion == "classic":
        return -logs / (orders - 1.0)
    if conversion == "improved":
        return np.log1p(-1.0 / orders) - (logs + np.log(orders)) / (orders - 1.0)
    raise ValueError(f"conversion must be one of {', '.join(CONVERSIONS)}, got {conversion!r}")


@dataclass(frozen=True, eq=False)
class Conversion:
    """One conversion on one order grid at one delta (math:conversion).

    ``offset``: :func:`conversion_offset` per order; ``clip``, ``tv_limit``: improved's clip at 0
    and :func:`tv_limit` (``None`` for classic); ``margin``: every epsilon's relative raise
    (``numerics.summed_margin``).
    """

    orders: np.ndarray
    offset: np.ndarray
    clip: bool
    tv_limit: float | None = None
    margin: float = ROUNDING_MARGIN

    @classmethod
    def of(cls, *, orders, delta: float, conversion: str = "classic") -> Conversion:
        """Validate the setting (``ValueError`` for a bad grid, delta or name)."""
        orders = validate_orders(orders)
        offset = conversion_offset(orders=orders, delta=delta, conversion=conversion)
        improved = conversion == "improved"
        return cls(orders=orders, offset=offset, clip=improved,
                   tv_limit=tv_limit(delta) if improved else None)

    def summing(self, terms: int) -> Conversion:
        """The same conversion for sums of up to ``terms`` curves added one after another
        (a run's running sums: ``numerics.summed_margin``)."""
        return replace(self, margin=summed_margin(terms))

    def at_orders(self, columns: np.ndarray) -> Conversion:
        """The same conversion on the orders ``columns`` (indices into the grid) only."""
        return replace(self, orders=self.orders[columns], offset=self.offset[columns])

    def beyond(self, floor: np.ndarray, ceiling) -> np.ndarray:
        """The one order-pruning rule (math:conversion): per order, whether RDP ``floor``
        converts above ``ceiling`` (broadcast); never within :func:`tv_limit`, nor for NaN."""
        with np.errstate(invalid="ignore"):
            beyond = floor + self.offset > ceiling
            if self.tv_limit is not None:
                beyond &= floor > self.tv_limit
        return beyond

    def epsilon(self, rdp: np.ndarray, *, out: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        """``(epsilon, index of the order)`` of curves ``(..., orders)``; see
        :func:`minimise_over_orders`."""
        return minimise_over_orders(rdp, self.offset, clip=self.clip, out=out,
                                    tv_limit=self.tv_limit, margin=self.margin)


def checked_setting(accounting: str, delta: float, orders: np.ndarray | None,
                    conversion: str) -> tuple[np.ndarray, Conversion]:
    """The validated orders (default: the paper's grid) and the conversion of a run's
    accounting setting (``ValueError`` for a bad mode, grid, delta or conversion)."""
    if accounting not in ACCOUNTING_MODES:
        raise ValueError(f"accounting must be one of {', '.join(ACCOUNTING_MODES)}, "
                         f"got {accounting!r}")
    converter = Conversion.of(orders=default_orders() if orders is None else orders,
                              delta=delta, conversion=conversion)
    return converter.orders, converter


def tv_limit(delta: float) -> float:
    """``-log(1 - delta^2)``, the largest RDP at which the improved conversion gives epsilon 0
    at that order (``delta^2 >= 1 - exp(-rdp)``; math:conversion)."""
    return -math.log1p(-delta * delta)


def minimise_over_orders(rdp: np.ndarray, offset: np.ndarray, *, clip: bool,
                         out: np.ndarray | None = None,
                         tv_limit: float | np.ndarray | None = None,
                         margin: float = ROUNDING_MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """``min over alpha of rdp(alpha) + offset(alpha)`` and the first minimising index, each
    of shape ``rdp.shape[:-1]`` (math:conversion). ``out`` receives ``rdp + offset`` (``rdp``
    itself converts in place); ``clip``, ``tv_limit`` (orders at most it give 0): improved's.

    Raised by ``margin`` relative to its terms (the float curves and sums are a few ulps off
    the formulas; ``numerics.summed_margin``), so no epsilon is below the exact one:
    ``epsilon * (1 + margin)`` where the offset is ``>= 0``, ``epsilon + margin * (|epsilon| +
    2 |offset|)`` where improved's is negative (the two cancel); improved's 0 only where ``rdp``
    raised by the margin is at most ``tv_limit`` lowered by it.
    """
    shortcut = None
    if tv_limit is not None:
        shortcut = np.asarray(rdp) * (1.0 + margin) <= tv_limit * (1.0 - margin)
        if not shortcut.any():
            shortcut = None
    candidates = np.add(rdp, offset, out=out)
    if shortcut is not None:
        candidates[shortcut] = 0.0  # as dp_accounting: exactly 0 there
    best = np.argmin(candidates, axis=-1)
    epsilon = np.take_along_axis(candidates, best[..., None], axis=-1)[..., 0]
    below = np.asarray(offset)[..., best] if np.ndim(offset) == 1 else np.take_along_axis(
        np.broadcast_to(offset, candidates.shape), best[..., None], axis=-1)[..., 0]
    cancel = below < 0.0
    if shortcut is not None:
        cancel &= ~np.take_along_axis(np.broadcast_to(shortcut, candidates.shape),
                                      best[..., None], axis=-1)[..., 0]
    if cancel.any():  # an absolute allowance: a relative one on what is left is too small
        epsilon = np.where(cancel, epsilon + margin * (np.abs(epsilon) + 2.0 * np.abs(below)),
                           epsilon)
    if clip:
        epsilon = np.maximum(epsilon, 0.0)
    epsilon = np.where((epsilon > 0.0) & ~cancel, epsilon * (1.0 + margin), epsilon)
    return epsilon, best


def rdp_to_epsilon(rdp, *, orders, delta: float, conversion: str = "classic", terms: int = 0
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Convert RDP curves to ``(epsilon, order)`` at ``delta`` (math:conversion).

    Args:
      rdp: RDP curves, shape ``(..., orders)``.
      orders: the Rényi orders of the last axis, each > 1.
      delta: the target delta, in (0, 1).
      conversion: ``classic`` (the default; Mironov 2017) or ``improved`` (Canonne, Kamath,
        Steinke 2020; epsilon clipped at 0).
      terms: the curves are sums of up to that many curves added one after another (the
        epsilon is raised by ``numerics.summed_margin(terms)``; 0: a few).

    Returns:
      ``(epsilon, order)``, each of shape ``rdp.shape[:-1]`` (0-d arrays for one curve); the
      order is the first minimiser in grid order.

    Raises:
      ValueError: a bad grid, delta or conversion, ``rdp``'s last axis not the grid's, or
        a value of ``rdp`` negative or NaN (an RDP curve is ``>= 0``; ``inf`` is allowed).
    """
    orders = validate_orders(orders)
    rdp = _checked_curve(rdp)
    if rdp.shape[-1:] != orders.shape:
        raise ValueError(f"rdp has {rdp.shape[-1:]} orders, the grid has {orders.size}")
    epsilon, best = Conversion.of(orders=orders, delta=delta, conversion=conversion).summing(
        terms).epsilon(rdp)
    return epsilon, orders[best]


def epsilons_at_deltas(rdp, *, orders, deltas, conversion: str = "classic") -> np.ndarray:
    """``rdp_to_epsilon(rdp, orders=orders, delta=d, conversion=conversion)[0]`` for each of
    ``deltas``, the same bits, in one array operation (math:conversion); ``ValueError`` as
    :func:`rdp_to_epsilon`."""
    orders = validate_orders(orders)
    rdp = _checked_curve(rdp)
    if rdp.shape != orders.shape:
        raise ValueError(f"rdp has {rdp.shape} orders, the grid has {orders.size}")
    deltas = [float(delta) for delta in deltas]
    offsets = conversion_offset(orders=orders, delta=deltas, conversion=conversion)
    limits = (np.array([tv_limit(delta) for delta in deltas])[:, None]
              if conversion == "improved" else None)
    return minimise_over_orders(rdp, offsets, clip=conversion == "improved",
                                tv_limit=limits)[0]


def _checked_curve(rdp) -> np.ndarray:
    """``rdp`` as float64; ``ValueError`` for a negative or NaN value."""
    rdp = np.asarray(rdp, dtype=np.float64)
    if rdp.size and not rdp.min() >= 0.0:  # NaN fails too
        raise ValueError("an RDP curve must be >= 0 at every order (inf allowed), got "
                         f"{rdp.min()!r}")
    return rdp


# What a note says where the best order is at a grid's edge (an ``OrderGridWarning``).
GRID_EDGE_ADVICE = "a wider --orders grid may give a smaller epsilon"


def grid_edge_notes(orders: np.ndarray, order: float, epsilon: float) -> tuple[str, ...]:
    """A note when the best order is the first or last of a grid of several (an
    ``OrderGridWarning``, or one ``Warning:`` line); none for an infinite epsilon."""
    best = int(np.flatnonzero(orders == order)[0])
    if orders.size > 1 and best in (0, orders.size - 1) and 0 < epsilon < np.inf:
        edge = "first" if best == 0 else "last"
        return (f"the best order {order_text(order)} is the {edge} of the grid; "
                f"{GRID_EDGE_ADVICE}",)
    return ()
