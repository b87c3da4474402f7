"""Individualized PATE: per-group composition and conversion, a chunk at a time
(math:conversion, math:individualized), by ``accounting.composition``'s kernel: a one-group
run at sensitivity 1 is the standard analysis bit for bit; a group reports its worst-off
member. ``map`` (default the builtin) runs distinct curves' running sums."""

from __future__ import annotations

import numpy as np

from ..composition import (
    ArrayRows,
    RowSource,
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

# A chunk's figures: per group and query the worst member's epsilon and order, the uniform
# run's epsilon, then the state after it (members' sums, taken part yet, uniform run's sums).
_ChunkFigures = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


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
        self.carry = np.zeros((0, self.rule.orders.size))
        self.seen = np.zeros(0, dtype=bool)
        self.base_carry = np.zeros((1, self.rule.orders.size))
        self.ceilings: dict[float, float] | None = None

    def add(self, chunk: CostChunk, *, map: Mapper = map,
            limits: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(epsilon, order, baseline epsilon)`` after each query of ``chunk``: ``(queries,
        groups)``, ``(queries, groups)``, ``(queries,)``. ``limits`` (or None), with ``ceilings``:
        per group, then the uniform run, at least every figure read from ``chunk`` but its last
        (NaN: none, ``GroupStops.limits``); the others are then +inf, not converted."""
        members_of = self._start(chunk)
        if _fixed_curves(chunk.index):
            eps, order, base, self.carry, self.seen, self.base_carry = _accumulate_fixed(
                chunk, members_of, self, map, limits)
        else:
            eps, order, base, self.carry, self.seen, self.base_carry = _accumulate_chunk(
                chunk, members_of, self.carry, self.seen, self.base_carry, self.rule,
                map)
        return eps, order, base

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


def _accumulate_fixed(chunk: CostChunk, members_of: list[np.ndarray], sums: GroupSums,
                      map: Mapper, limits: np.ndarray | None) -> _ChunkFigures:
    """:func:`_accumulate_chunk` after ``sums`` where each member pays one curve (or none)
    throughout: each distinct (curve, running sums) accumulated once, a task of ``map`` each
    returning its own figures; equal sensitivities share a curve, one with a ceiling at its
    live orders only (``GroupSums.ceilings``, ``limits``)."""
    carry, seen, base_carry, rule = sums.carry, sums.seen, sums.base_carry, sums.rule
    ceilings = sums.ceilings
    queries = chunk.queries
    members = carry.shape[0]
    orders = rule.orders
    curves = chunk.curves
    same = (first_of_each_sensitivity(curves.sensitivities)
            if isinstance(curves, CurveFactors) else list(range(curves.shape[0])))
    paid = chunk.index[:, 0] if queries else np.full(members, -1)
    base_curve = same[chunk.baseline] if isinstance(chunk.baseline, int) else "baseline"
    tasks: dict[tuple[int | str, bytes], int] = {}
    starts: list[np.ndarray] = []

    def task(curve: int | str, start: np.ndarray) -> int:
        key = (curve, start.tobytes())
        if key not in tasks:
            tasks[key] = len(starts)
            starts.append(start)
        return tasks[key]

    member_task = [task(same[paid[m]], carry[m]) if paid[m] >= 0 else -1
                   for m in range(members)]
    base_task = task(base_curve, base_carry[0])
    by_curve: dict[int | str, list[int]] = {}
    for (curve, _), number in tasks.items():
        by_curve.setdefault(curve, []).append(number)
    results: list = [None] * len(starts)
    limit = np.full(len(starts), np.inf)  # per task, its members' figures read but the last
    if limits is not None:
        open_limits, limit[:] = np.nan_to_num(limits, nan=-np.inf), -np.inf
        for g, mine in enumerate(members_of):
            for m in mine[paid[mine] >= 0]:
                limit[member_task[m]] = max(limit[member_task[m]], open_limits[g])
        limit[base_task] = max(limit[base_task], open_limits[-1])

    def run(curve: int | str) -> list[tuple[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        source: RowSource
        ceiling, at = None, None
        if isinstance(curve, str):  # "baseline": the chunk's own uniform-run curve
            source = ArrayRows(np.asarray(chunk.baseline))
        elif isinstance(curves, CurveFactors):
            source = own = curves.curves(curve)
            if ceilings is not None and not curves.data_independent:
                ceiling, at = ceilings.get(float(curves.sensitivities[curve])), own.at
        else:
            source = ArrayRows(curves[curve])
        figures = []
        for number in by_curve[curve]:
            running = (running_epsilon(source, queries, starts[number], rule)
                       if ceiling is None or at is None else live_running_epsilon(
                           at, queries, starts[number], rule, ceiling, limit[number]))
            figures.append((number, (running.epsilon, orders[running.order_index],
                                     running.carry)))
        return figures

    pending = [curve for curve, numbers in by_curve.items() if numbers]
    for figures in map(run, pending):
        for number, result in figures:
            results[number] = result

    eps_out = np.empty((queries, len(members_of)))
    order_out = np.empty((queries, len(members_of)))
    for g, mine in enumerate(members_of):  # a handful of groups
        columns = {}  # distinct figures among the group's members, in member order
        for m in mine:
            number = member_task[m]
            if number >= 0 and ("task", number) not in columns:
                columns["task", number] = results[number][:2]
            elif number < 0 and ("idle", m) not in columns:
                columns["idle", m] = _idle_figures(carry[m], seen[m], rule)
        if not columns:
            eps_out[:, g] = 0.0
            order_out[:, g] = np.nan
            continue
        eps = np.stack([np.broadcast_to(e, (queries,)) for e, _ in columns.values()])
        order = np.stack([np.broadcast_to(o, (queries,)) for _, o in columns.values()])
        worst = np.argmax(eps, axis=0)
        eps_out[:, g] = np.take_along_axis(eps, worst[None, :], axis=0)[0]
        order_out[:, g] = np.take_along_axis(order, worst[None, :], axis=0)[0]
    carry = carry.copy()
    seen = seen.copy()
    for m, number in enumerate(member_task):
        if number >= 0:
            carry[m] = results[number][2]
            seen[m] |= queries > 0
    base_eps, _, base_sums = results[base_task]
    return eps_out, order_out, base_eps, carry, seen, base_sums[None, :]


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


def _accumulate_chunk(chunk: CostChunk, members_of: list[np.ndarray], carry: np.ndarray,
                      seen: np.ndarray, base_carry: np.ndarray, rule: Conversion,
                      map: Mapper) -> _ChunkFigures:
    """Cumulative epsilon per group (worst member) and of the baseline for one chunk, all
    members at once in cache-sized blocks of queries."""
    curves, baseline = chunk.evaluated(map=map)
    members = carry.shape[0]
    queries = chunk.queries
    groups = len(members_of)
    orders = rule.orders
    eps_out = np.empty((queries, groups))
    order_out = np.empty((queries, groups))
    base = running_epsilon(ArrayRows(baseline), queries, base_carry[0], rule)
    step = max(1, _MEMBER_ELEMENTS // max(1, members * orders.size))
    for lo in range(0, queries, step):
        hi = min(queries, lo + step)
        index = chunk.index[:, lo:hi]
        pays = index >= 0
        rows = curves[np.maximum(index, 0), np.arange(lo, hi)[None, :]]
        rows[~pays] = 0.0
        eps, best, carry = cumulative_epsilon(rows, carry, rule)
        took_part = np.logical_or.accumulate(pays, axis=1) | seen[:, None]
        seen = took_part[:, -1].copy()
        order = orders[best]
        eps[~took_part] = 0.0
        order[~took_part] = np.nan
        for g, mine in enumerate(members_of):  # a handful of groups
            if mine.size == 0:
                eps_out[lo:hi, g] = 0.0
                order_out[lo:hi, g] = np.nan
                continue
            worst = np.argmax(eps[mine], axis=0)
            columns = np.arange(hi - lo)
            eps_out[lo:hi, g] = eps[mine[worst], columns]
            order_out[lo:hi, g] = order[mine[worst], columns]
    return eps_out, order_out, base.epsilon, carry, seen, base.carry[None, :]
