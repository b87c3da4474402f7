"""Individualized PATE: per-group composition and conversion, a chunk at a time
(math:conversion, math:individualized), by ``accounting.composition``'s kernel: a one-group
run at sensitivity 1 is the standard analysis bit for bit; a group reports its worst-off
member. ``map`` (default the builtin) runs distinct curves' running sums."""

from __future__ import annotations

import numpy as np

from ..composition import (
    ArrayRows,
    RowSource,
    RunningEpsilon,
    budget_halt,
    cumulative_epsilon,
    running_epsilon,
)
from ..conversion import Conversion
from ..live_orders import live_budget_halt, live_running_epsilon
from .costs import CostChunk
from .curves import CurveFactors, Mapper, first_of_each_sensitivity
from .parameters import checked_member_groups

# Elements of the (members x queries x orders) work arrays of a chunk whose members pay
# varying curves, processed at once (8 MB).
_MEMBER_ELEMENTS = 1 << 20


class GroupSums:
    """Every member's and the uniform run's running RDP, chunk to chunk (math:individualized),
    the same bits however the queries are chunked. ``ceilings`` (set before the first chunk, or
    None): per sensitivity, at least every figure read from its sums and every budget they meet;
    sums are then formed only at the orders at or below it (``live_orders.live_running_epsilon``;
    same figures), so ``carry``/``base_carry`` may only be converted to figures at or below it
    (``halts``, idle members), not read per order (orders left out keep a lower bound).
    ``terms``: the most queries the sums hold (figures raised for it, ``Conversion.summing``)."""

    def __init__(self, *, groups: int, orders: np.ndarray, delta: float,
                 conversion: str = "classic", member_groups: np.ndarray | None = None,
                 terms: int = 0):
        self.rule = Conversion.of(orders=orders, delta=delta,
                                  conversion=conversion).summing(terms)
        self.groups = groups
        self.member_groups = member_groups
        self.members_of: list[np.ndarray] | None = None
        self.group_of = np.zeros(0, dtype=np.intp)
        self.carry = np.zeros((0, self.rule.orders.size))
        self.seen = np.zeros(0, dtype=bool)
        self.base_carry = np.zeros((1, self.rule.orders.size))
        self.ceilings: dict[float, float] | None = None

    def add(self, chunk: CostChunk, *, map: Mapper = map,
            limits: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Add ``chunk``'s queries to the members' and the uniform run's sums. Where every
        member pays one curve (or none) throughout, each distinct (curve, sums before) is summed
        once, a curve's in one task of ``map``, equal sensitivities sharing one, with a ceiling
        at its live orders only; otherwise every member at once, all curves evaluated.

        Args:
          limits: with ``ceilings``, per group then the uniform run, at least every figure
            read from ``chunk`` but its last (NaN: none, ``GroupStops.limits``); the others
            are then +inf, not converted.

        Returns:
          ``(epsilon, order, baseline epsilon)`` after each query, ``(queries, groups)``,
          ``(queries, groups)`` and ``(queries,)``: a group's worst-off member's (the first
          largest), 0 and NaN before any took part.
        """
        members_of, queries, rule = self._start(chunk), chunk.queries, self.rule
        if not _fixed_curves(chunk.index):
            return self._add_varying(chunk, members_of, map)
        curves, baseline = chunk.curves, chunk.baseline
        same = (first_of_each_sensitivity(curves.sensitivities)
                if isinstance(curves, CurveFactors) else list(range(curves.shape[0])))
        paid = chunk.index[:, 0] if queries else np.full(self.carry.shape[0], -1)
        tasks: dict[tuple, int] = {}
        jobs: dict[int | str, list[tuple[int, np.ndarray]]] = {}  # per curve: task, sums

        def task(curve: int | str, start: np.ndarray) -> int:
            if (key := (curve, start.tobytes())) not in tasks:
                tasks[key] = len(tasks)
                jobs.setdefault(curve, []).append((tasks[key], start))
            return tasks[key]

        member_task = [task(same[paid[m]], self.carry[m]) if paid[m] >= 0 else -1
                       for m in range(paid.size)]
        base_task = task(same[baseline] if isinstance(baseline, int) else "baseline",
                         self.base_carry[0])
        limit = np.full(len(tasks), np.inf)  # per task, its members' figures read but the last
        if limits is not None:
            open_limits, limit[:] = np.nan_to_num(limits, nan=-np.inf), -np.inf
            for m, number in enumerate(member_task):
                if number >= 0:
                    limit[number] = max(limit[number], open_limits[self.group_of[m]])
            limit[base_task] = max(limit[base_task], open_limits[-1])

        def run(curve: int | str) -> list[tuple[int, RunningEpsilon]]:
            source: RowSource
            ceiling, at = None, None
            if isinstance(curve, str):  # "baseline": the chunk's own uniform-run curve
                source = ArrayRows(np.asarray(baseline))
            elif isinstance(curves, CurveFactors):
                source = own = curves.curves(curve)
                if self.ceilings is not None and not curves.data_independent:
                    ceiling, at = self.ceilings.get(float(curves.sensitivities[curve])), own.at
            else:
                source = ArrayRows(curves[curve])
            return [(number, running_epsilon(source, queries, start, rule)
                     if ceiling is None or at is None else live_running_epsilon(
                         at, queries, start, rule, ceiling, limit[number]))
                    for number, start in jobs[curve]]

        results = {number: running for figures in map(run, list(jobs))
                   for number, running in figures}
        eps_out, order_out = np.empty((queries, self.groups)), np.empty((queries, self.groups))
        for g, mine in enumerate(members_of):  # a group's distinct figures, in member order
            firsts = {("task", member_task[m]) if member_task[m] >= 0 else ("idle", m): m
                      for m in mine[::-1]}
            figures = [_idle_figures(self.carry[m], self.seen[m], rule) if member_task[m] < 0
                       else (results[member_task[m]].epsilon,
                             rule.orders[results[member_task[m]].order_index])
                       for m in sorted(firsts.values())]
            eps_out[:, g], order_out[:, g] = _worst(*(np.reshape(
                [np.broadcast_to(f[i], (queries,)) for f in figures], (len(figures), queries))
                for i in (0, 1)))
        self.carry, self.seen = self.carry.copy(), self.seen.copy()
        for m, number in enumerate(member_task):
            if number >= 0:
                self.carry[m], self.seen[m] = results[number].carry, self.seen[m] or queries > 0
        self.base_carry = results[base_task].carry[None, :]
        return eps_out, order_out, results[base_task].epsilon

    def _add_varying(self, chunk: CostChunk, members_of: list[np.ndarray], map: Mapper
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`add` where some member's curve varies: all members at once in cache-sized
        blocks of queries (0 where a member pays nothing)."""
        curves, baseline = chunk.evaluated(map=map)
        carry, seen, orders = self.carry, self.seen, self.rule.orders
        members, queries = carry.shape[0], chunk.queries
        eps_out, order_out = np.empty((queries, self.groups)), np.empty((queries, self.groups))
        base = running_epsilon(ArrayRows(baseline), queries, self.base_carry[0], self.rule)
        step = max(1, _MEMBER_ELEMENTS // max(1, members * orders.size))
        for lo in range(0, queries, step):
            hi = min(queries, lo + step)
            pays = chunk.index[:, lo:hi] >= 0
            rows = curves[np.maximum(chunk.index[:, lo:hi], 0), np.arange(lo, hi)[None, :]]
            rows[~pays] = 0.0
            eps, best, carry = cumulative_epsilon(rows, carry, self.rule)
            took_part = np.logical_or.accumulate(pays, axis=1) | seen[:, None]
            seen = took_part[:, -1].copy()
            eps[~took_part], order = 0.0, np.where(took_part, orders[best], np.nan)
            for g, mine in enumerate(members_of):  # a handful of groups
                eps_out[lo:hi, g], order_out[lo:hi, g] = _worst(eps[mine], order[mine])
        self.carry, self.seen, self.base_carry = carry, seen, base.carry[None, :]
        return eps_out, order_out, base.epsilon

    def halts(self, chunk: CostChunk, full: CostChunk, limits: np.ndarray) -> np.ndarray:
        """Where each budget halts the run inside ``chunk`` (math:costs and math:individualized);
        call before :meth:`add` adds it. ``full``: ``chunk`` with the answer step in full;
        ``limits``: each group's budget, then the uniform run's (NaN: not checked).

        Returns:
          Per group, the first query at which some member's sums before it plus its full cost
          exceed the budget (-1: none; only queries the member pays for), then the uniform run's.
        """
        members_of: list = [*self._start(chunk), [None]]  # the uniform run last
        firsts = np.full(self.groups + 1, -1)
        fixed = isinstance(full.curves, CurveFactors) and _fixed_curves(chunk.index)
        factors = chunk.curves if fixed and isinstance(chunk.curves, CurveFactors) else None
        found: dict[tuple, int | None] = {}  # per (curve, sums before, budget): members alike
        for g, m in [(g, m) for g, members in enumerate(members_of) for m in members]:
            paid = (np.arange(chunk.queries) if m is None
                    else np.flatnonzero(chunk.index[m] >= 0))
            if np.isnan(limits[g]) or paid.size == 0:
                continue
            carry, limit = self.base_carry[0] if m is None else self.carry[m], float(limits[g])
            own = None if factors is None else factors.curves(  # the member's one curve
                int(chunk.baseline) if m is None else int(chunk.index[m, 0]))
            key = (("member", m) if own is None else own.sensitivity, carry.tobytes(), limit)
            if key not in found:  # orders beyond the budget stay beyond it: found at the others
                found[key] = (budget_halt(_member_rows(chunk, m, paid), _member_rows(
                    full, m, paid), paid.size, carry, self.rule, limit) if own is None
                    else live_budget_halt(own.at, lambda costs: costs.charged(getattr(
                        full.curves, "charge", 1.0)), paid.size, carry, self.rule, limit))
            first = found[key]
            if first is not None and (firsts[g] < 0 or paid[first] < firsts[g]):
                firsts[g] = paid[first]
        return firsts

    def _start(self, chunk: CostChunk) -> list[np.ndarray]:
        """Check ``chunk`` against the grid and the members (set on the first chunk)."""
        if not isinstance(chunk, CostChunk):
            raise TypeError(f"chunks must be CostChunk objects, got {type(chunk).__name__}")
        orders = self.rule.orders
        if chunk.curves.shape[2] != orders.size:
            raise ValueError(f"chunk has {chunk.curves.shape[2]} orders, the grid has "
                             f"{orders.size}")
        if self.members_of is None:
            member_groups = checked_member_groups(self.member_groups, chunk.index.shape[0],
                                                  self.groups)
            self.members_of = [np.flatnonzero(member_groups == g) for g in range(self.groups)]
            self.group_of = member_groups
            self.carry = np.zeros((member_groups.size, orders.size))
            self.seen = np.zeros(member_groups.size, dtype=bool)
        if chunk.index.shape[0] != self.carry.shape[0]:
            raise ValueError("every chunk must describe the same members")
        return self.members_of


class _Paid:
    """The curves one member pays at the queries ``paid`` of a chunk of varying curves,
    a ``composition.RowSource``."""

    def __init__(self, curves: np.ndarray, index: np.ndarray, paid: np.ndarray):
        self.curves, self.index, self.paid = curves, index, paid

    def rows(self, lo: int, hi: int, out: np.ndarray,
             scratch: np.ndarray | None = None) -> None:
        queries = self.paid[lo:hi]
        out[:] = self.curves[self.index[queries], queries]


def _member_rows(chunk: CostChunk, member: int | None, paid: np.ndarray) -> RowSource:
    """The curves ``member`` (None: the uniform run) pays at the queries ``paid`` of
    ``chunk`` (all of them where its curve is fixed)."""
    curves, baseline = chunk.curves, chunk.baseline
    if member is None and isinstance(baseline, np.ndarray):
        return ArrayRows(baseline)
    if member is not None and not _fixed_curves(chunk.index[member:member + 1]):
        return _Paid(chunk.evaluated()[0], chunk.index[member], paid)
    curve = int(baseline) if member is None else int(chunk.index[member, 0])
    if isinstance(curves, CurveFactors):
        return curves.curves(curve)
    return ArrayRows(curves[curve])


def _idle_figures(carry: np.ndarray, seen: bool, rule: Conversion
                  ) -> tuple[float | np.ndarray, float | np.ndarray]:
    """Epsilon and order of a member that pays nothing in a chunk (constant over it)."""
    if not seen:
        return 0.0, np.nan
    eps, best = rule.epsilon(carry)
    return eps, rule.orders[best]


def _fixed_curves(index: np.ndarray) -> bool:
    """Whether every member pays the same curve (or none) at every query of a chunk."""
    return bool(np.all(index == index[:, :1])) if index.shape[1] else True


def _worst(eps: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the largest of the members' ``eps`` ``(members, queries)`` (the first, as
    ``np.argmax``) and its ``order``; 0 and NaN without members."""
    if eps.shape[0] == 0:
        return np.zeros(eps.shape[1]), np.full(eps.shape[1], np.nan)
    worst = np.argmax(eps, axis=0)[None, :]
    return (np.take_along_axis(eps, worst, axis=0)[0],
            np.take_along_axis(order, worst, axis=0)[0])
