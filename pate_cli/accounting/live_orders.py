"""Running sums at only the orders that can still give a cumulative epsilon (MATH.md s.6).

A table's cumulative epsilon after query i is ``min over alpha of S_i(alpha) +
offset(alpha)``, where ``S_i`` is the running RDP sum (``composition.running_epsilon``).
Once the run's total curve is known (the totals pass of ``analysis.per_query_stream``),
most orders can be shown never to give that minimum again, and their sums need no
longer be formed:

- **A ceiling.** Every query's cumulative epsilon is at most :func:`epsilon_ceiling` of
  the total: the sums only grow, and the total formed another way (grouped, in another
  order) differs from the sequential sums by rounding alone, bounded by
  ``gamma_n = n u / (1 - n u)`` of the sum for ``n`` non-negative terms (``u`` the
  unit roundoff), which the ceiling adds with room to spare.
- **A floor per order.** Per-query curves are non-negative (RDP is: the step functions,
  ``gnmax.rdp_gnmax`` and ``laplace.rdp_lnmax`` among them, never return a value below
  0), so ``S_i(alpha) >= S_j(alpha)`` for every later query ``i`` (rounding is
  monotone), and an order whose converted sum already exceeds the ceiling stays above
  every later query's epsilon: it is never the minimum, nor tied with it, and the
  figures (epsilon and first minimising order) are the same without it. Such an order
  is *dead* (:class:`LiveOrders`).

The sums at the orders still live are formed exactly as before (one query after
another), so every figure keeps its bits. As a guard, a chunk whose curves at the orders
formed are not all non-negative (NaN included) voids the floor: the dead orders' sums
are then brought up to date by adding the chunks since they died, formed again, and
every order is live again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from .composition import RunningEpsilon, StepRows, running_epsilon, running_total
from .conversion import Conversion

UNIT_ROUNDOFF = 2.0 ** -53


def epsilon_ceiling(total: np.ndarray, terms: int, conversion: Conversion) -> float:
    """An upper bound on every cumulative epsilon of a run whose sums (``terms``
    non-negative curves, the initial one included) add up to ``total`` (formed in any
    order; NaN if ``total`` has NaN, and then no order is ever dead).

    Sequential and regrouped sums of ``terms`` non-negative values each lie within
    ``gamma_terms`` of the exact sum; a per-query curve ``selection + weight * answer``
    adds two roundings; so every running sum at an order is at most ``total * (1 + r)``
    with ``r = 8 (terms + 16) u``, four times what those bounds need. The conversion
    adds one rounding more, covered by ``8 u`` of the magnitudes.
    """
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
    return max(float(bound.min()), 0.0)


def nonnegative(costs: StepRows) -> bool:
    """Whether every per-query curve of ``costs`` is non-negative at every order (its
    distinct step curves and weights are; False with a NaN)."""
    return bool(np.all(costs.selection >= 0.0) and np.all(costs.answer >= 0.0)
                and np.all(costs.weight >= 0.0))


class LiveOrders:
    """The running sums of a table's pass, formed at the live orders only.

    ``ceiling``: :func:`epsilon_ceiling` of the run; ``form(piece, columns)``: the costs
    (``StepRows``) of a piece at the grid's orders ``columns`` (ascending indices), to
    form a piece's curves again where those given lack a live order, or to bring dead
    orders up to date. Call :meth:`restart` where the sums restart from a given carry
    (the first piece; a budget run's block start) and :meth:`running` for each piece in
    order.
    """

    def __init__(self, conversion: Conversion, ceiling: float,
                 form: Callable[[object, np.ndarray], StepRows]):
        self.conversion = conversion
        self.ceiling = ceiling
        self.form = form
        size = conversion.offset.size
        self.carry = np.zeros(size)
        self.dead_since = np.full(size, -1)  # the piece number an order died at, or -1
        self.pieces: list = []               # the pieces since the earliest death

    @property
    def live(self) -> np.ndarray:
        """Indices (ascending) of the orders whose sums are formed."""
        return np.flatnonzero(self.dead_since < 0)

    def restart(self, carry: np.ndarray) -> None:
        """The sums start again from ``carry`` (every order given): all orders live."""
        self.carry = np.array(carry, dtype=np.float64)
        self.dead_since[:] = -1
        self.pieces = []

    def running(self, piece, costs: StepRows, columns: np.ndarray,
                count: int) -> RunningEpsilon:
        """``running_epsilon`` of a piece's ``count`` queries after the sums so far, from
        ``costs``, its curves at the orders ``columns``: the same figures as from every
        order, with ``order_index`` on the full grid; the sums move on."""
        if not nonnegative(costs):
            self._revive()
        else:
            self._bury(len(self.pieces))
        live = self.live
        where = np.searchsorted(columns, live)
        if where.size and (where[-1] >= columns.size
                           or not np.array_equal(columns[where], live)):
            costs, columns, where = self.form(piece, live), live, np.arange(live.size)
        if where.size != columns.size:
            costs = costs.at_orders(where)
        if live.size == self.carry.size:
            figures = running_epsilon(costs, count, self.carry, self.conversion)
            self.carry = figures.carry
        else:
            figures = running_epsilon(costs, count, self.carry[live],
                                      self.conversion.at_orders(live))
            self.carry[live] = figures.carry
            figures = replace(figures, order_index=live[figures.order_index],
                              carry=self.carry.copy())
        if (self.dead_since >= 0).any():
            self.pieces.append(piece)
        return figures

    def _bury(self, number: int) -> None:
        """Orders whose converted sum already exceeds the ceiling die at piece ``number``
        (with the improved conversion, an order whose sum is within the total-variation
        shortcut may still give 0 and stays)."""
        live = self.dead_since < 0
        with np.errstate(invalid="ignore"):
            floor = self.carry + self.conversion.offset
            dying = live & (floor > self.ceiling)
            if self.conversion.tv_limit is not None:
                dying &= self.carry > self.conversion.tv_limit
        if not (live & ~dying).any():  # never under a true ceiling; safe: all stay
            return
        self.dead_since[dying] = number

    def _revive(self) -> None:
        """Bring every dead order's sum up to date (the pieces since it died, formed
        again and added in order) and make it live."""
        for number, piece in enumerate(self.pieces):
            dead = np.flatnonzero((self.dead_since >= 0) & (self.dead_since <= number))
            if dead.size:
                costs = self.form(piece, dead)
                self.carry[dead] = running_total(costs, costs.count, self.carry[dead])
        self.dead_since[:] = -1
        self.pieces = []
