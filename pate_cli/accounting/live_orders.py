"""Running sums at only the orders that can still give a cumulative epsilon (math:conversion):
an order whose sum converts above a ceiling on every cumulative epsilon is left out, and
every figure keeps its bits. Derivation: docs/explanation/numerics.md#live-orders.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..numerics import UNIT_ROUNDOFF
from ..work_sizes import WORK_VALUES
from .composition import (
    ArrayRows,
    RowSource,
    RunningEpsilon,
    StepRows,
    budget_halt,
    cumulative_epsilon,
    running_epsilon,
    running_total,
    sequential_total,
)
from .conversion import Conversion


def epsilon_ceiling(total: np.ndarray, terms: int, conversion: Conversion) -> float:
    """An upper bound on every cumulative epsilon of a run whose ``terms`` non-negative
    curves (the initial one included) add up to ``total``, in any order, with room for their
    rounding (docs/explanation/numerics.md#live-orders); NaN: no order ever dies."""
    total = np.asarray(total, dtype=np.float64)
    relative = 8.0 * (terms + 16) * UNIT_ROUNDOFF
    if not relative < 0.5:
        return float("nan")
    with np.errstate(invalid="ignore", over="ignore"):
        sums = total * (1.0 + relative)
        bound = sums + conversion.offset + 8.0 * UNIT_ROUNDOFF * (
            np.abs(sums) + np.abs(conversion.offset))
    if np.isnan(bound).any():
        return float("nan")
    # raised as minimise_over_orders raises every epsilon (a negative offset's allowance added)
    least, margin = max(float(bound.min()), 0.0), conversion.margin
    below = float(np.max(-conversion.offset, initial=0.0))
    return least * (1.0 + margin) + (margin * (least + 3.0 * below) if below > 0.0 else 0.0)


def nonnegative(costs: StepRows) -> bool:
    """Whether every per-query curve of ``costs`` is non-negative at every order (its
    distinct step curves and weights are; False with a NaN)."""
    return bool(np.all(costs.selection >= 0.0) and np.all(costs.answer >= 0.0)
                and np.all(costs.weight >= 0.0))


class LiveOrders:
    """The running sums of a table's pass, formed at the live orders only.

    ``ceiling``: :func:`epsilon_ceiling`; ``form(piece, columns)``: a piece's ``StepRows``
    at the grid's ``columns`` (ascending), to re-form curves lacking a live order or bring
    dead ones up to date. :meth:`restart` where the sums restart from a carry, then
    :meth:`running` per piece in order.
    """

    def __init__(self, conversion: Conversion, ceiling: float,
                 form: Callable[[object, np.ndarray], StepRows]):
        self.conversion = conversion
        self.ceiling = ceiling
        self.form = form
        size = conversion.offset.size
        self.carry = np.zeros(size)
        self.dead = np.zeros(size, dtype=bool)  # no later piece needs the order's curves
        # per order, the first piece (in ``pieces``) whose curves its sum lacks, or -1
        self.stale_since = np.full(size, -1)
        self.pieces: list = []  # the pieces since the first sum fell behind

    @property
    def live(self) -> np.ndarray:
        """Indices (ascending) of the orders whose curves the next pieces need."""
        return np.flatnonzero(~self.dead)

    def restart(self, carry: np.ndarray) -> None:
        """The sums start again from ``carry`` (every order given): all orders live."""
        self.carry = np.array(carry, dtype=np.float64)
        self.dead[:] = False
        self.stale_since[:] = -1
        self.pieces = []

    def running(self, piece, costs: StepRows, columns: np.ndarray,
                count: int) -> RunningEpsilon:
        """``running_epsilon`` of a piece's ``count`` queries after the sums so far, from
        ``costs``, its curves at the orders ``columns``: the same figures as from every
        order, with ``order_index`` on the full grid; the sums move on, no curve copied."""
        if not nonnegative(costs):
            self._revive()
        else:
            self._bury()
        live = self.live
        where = np.searchsorted(columns, live)
        if where.size and (where[-1] >= columns.size
                           or not np.array_equal(columns[where], live)):
            costs, columns = self.form(piece, live), live
        current = self.stale_since[columns] < 0
        if not current.all():  # (a piece formed again at every order, say)
            costs, columns = costs.at_orders(np.flatnonzero(current)), columns[current]
        figures = running_epsilon(costs, count, self.carry[columns],
                                  self.conversion.at_orders(columns))
        self.carry[columns] = figures.carry
        behind = self.stale_since < 0
        behind[columns] = False
        self.stale_since[behind] = len(self.pieces)
        figures = replace(figures, order_index=columns[figures.order_index],
                          carry=self.carry.copy())
        if (self.stale_since >= 0).any():
            self.pieces.append(piece)
        return figures

    def _bury(self) -> None:
        """Orders whose sum is already beyond the ceiling (``Conversion.beyond``) die."""
        dying = (~self.dead & (self.stale_since < 0)
                 & self.conversion.beyond(self.carry, self.ceiling))
        if not (~self.dead & ~dying).any():  # never under a true ceiling; safe: all stay
            return
        self.dead |= dying

    def _revive(self) -> None:
        """Every order's sum brought up to date (its missing pieces re-formed, added in order);
        every order live."""
        for number, piece in enumerate(self.pieces):
            behind = np.flatnonzero((self.stale_since >= 0) & (self.stale_since <= number))
            if behind.size:
                costs = self.form(piece, behind)
                self.carry[behind] = running_total(costs, costs.count, self.carry[behind])
        self.dead[:] = False
        self.stale_since[:] = -1
        self.pieces = []


def live_running_epsilon(source_at: Callable[[np.ndarray], RowSource], count: int,
                         carry: np.ndarray, conversion: Conversion, ceiling: float,
                         limit: float = np.inf) -> RunningEpsilon:
    """:func:`~.composition.running_epsilon`'s figures, the sums formed only at the orders
    not yet beyond ``ceiling`` (math:conversion): the same bits wherever a figure is at most
    ``ceiling``, and never below every order's above it.

    Args:
      source_at: ``source_at(columns)``, the queries' non-negative curves at the grid's
        orders ``columns`` (ascending), a ``RowSource`` over the ``count`` queries.
      carry: the sums before, at every order.
      ceiling: at least every epsilon the caller reads (``epsilon_ceiling``).
      limit: the figures read but the last are at most it: once a block ends above it
        (the figures only grow), the next blocks are summed, not converted, their figures
        +inf (orders the last's) but the last query's.

    Returns:
      The :class:`~.composition.RunningEpsilon`, ``order_index`` on the full grid; its
      ``carry`` holds, at each order left out, the sum when it was (a lower bound).
    """
    carry = np.array(carry, dtype=np.float64)
    epsilon = np.empty(count)
    order_index = np.empty(count, dtype=np.intp)
    summed = count  # the first query summed only
    for lo, hi, live, rows, at in _live_blocks(source_at, count, carry, conversion, ceiling):
        if summed < count or (lo and epsilon[lo - 1] > limit):
            summed = min(summed, lo)
            rows[0] += carry[live]
            carry[live] = sequential_total(rows)  # cumulative_epsilon's, bit for bit
            continue
        epsilon[lo:hi], best, carry[live] = cumulative_epsilon(rows, carry[live], at)
        order_index[lo:hi] = live[best]
    if summed < count:  # the last figure of the last block's orders (the others beyond it)
        last, best = at.epsilon(carry[live])
        epsilon[summed:], order_index[summed:] = np.inf, live[best]
        epsilon[-1] = last
    return RunningEpsilon(epsilon=epsilon, order_index=order_index, carry=carry)


def live_budget_halt(costs_at: Callable[[np.ndarray], RowSource],
                     full_of: Callable[[Any], RowSource], count: int, carry: np.ndarray,
                     conversion: Conversion, limit: float) -> int | None:
    """:func:`~.composition.budget_halt`'s answer at the orders whose sums are not beyond
    ``limit`` (math:costs: nor are any later), ``costs_at`` as :func:`live_running_epsilon`'s
    ``source_at``, ``full_of(costs)`` the full costs at the orders of ``costs``."""
    carry = np.array(carry, dtype=np.float64)
    full: list[RowSource] = []  # the full costs at the orders of the latest costs

    def costs_with_full(columns: np.ndarray) -> RowSource:
        full[:] = [full_of(costs := costs_at(columns))]
        return costs
    for lo, hi, live, rows, at in _live_blocks(costs_with_full, count, carry, conversion, limit):
        full[0].rows(lo, hi, most := np.empty_like(rows))
        first = budget_halt(ArrayRows(rows), ArrayRows(most), hi - lo, carry[live], at, limit)
        if first is not None:
            return lo + first
        rows[0] += carry[live]
        carry[live] = sequential_total(rows)
    return None


def _live_blocks(source_at: Callable[[np.ndarray], RowSource], count: int,
                 carry: np.ndarray, conversion: Conversion, ceiling: float):
    """``(lo, hi, live, rows, conversion at live)`` per cache-sized block of queries: ``rows``
    their curves at the orders ``live`` not beyond ``ceiling`` from ``carry`` (which the caller
    brings up to date before the next block)."""
    live = np.arange(carry.size)
    source, at = None, conversion
    lo = 0
    while lo < count:
        hi = min(count, lo + max(1, WORK_VALUES // live.size))
        still = ~at.beyond(carry[live], ceiling)
        if still.any() and not still.all():
            live, source = live[still], None
        if source is None:
            source, at = source_at(live), conversion.at_orders(live)
        rows = np.empty((hi - lo, live.size))
        source.rows(lo, hi, rows)
        yield lo, hi, live, rows, at
        lo = hi
