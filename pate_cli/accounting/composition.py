"""THE composition kernel: running RDP sums over queries, converted to epsilon after each
(math:conversion, math:costs, math:individualized). Every path from per-query RDP to figures
goes through here. Sums are added query after query (``cumsum``, :func:`sequential_total`),
so no figure depends on where chunks start."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from ..numerics import raised_rdp
from ..work_sizes import WORK_VALUES
from .conversion import Conversion, minimise_over_orders


class RowSource(Protocol):
    """Per-query RDP curves that can be written, a run of queries at a time, into a buffer."""

    def rows(self, lo: int, hi: int, out: np.ndarray,
             scratch: np.ndarray | None = None) -> None:
        """Write the curves of queries ``lo .. hi-1`` into ``out`` ``(hi - lo, orders)``
        (``scratch``, same shape, may be used as a temporary)."""


@dataclass(frozen=True, eq=False)
class StepRows:
    """Per-query curves ``selection + weight * answer`` (math:costs): ``(distinct, orders)``
    curves gathered by ``selection_index``/``answer_index``; ``weight`` ``(queries,)``, the
    0/1 replay or ``pr_answered`` (expected)."""

    selection: np.ndarray
    selection_index: np.ndarray
    answer: np.ndarray
    answer_index: np.ndarray
    weight: np.ndarray

    @property
    def count(self) -> int:
        return int(self.weight.shape[0])

    def rows(self, lo: int, hi: int, out: np.ndarray,
             scratch: np.ndarray | None = None) -> None:
        np.take(self.answer, self.answer_index[lo:hi], axis=0, out=out)
        out *= self.weight[lo:hi, None]
        out += np.take(self.selection, self.selection_index[lo:hi], axis=0, out=scratch)

    def at_orders(self, columns: np.ndarray) -> StepRows:
        """The same curves (the same bits) at the grid's orders ``columns`` only."""
        return StepRows(np.ascontiguousarray(self.selection[:, columns]), self.selection_index,
                        np.ascontiguousarray(self.answer[:, columns]), self.answer_index,
                        self.weight)

    def step(self, name: str) -> OneStep:
        """One step's curves alone, ``selection`` or the weighted ``answer``."""
        if name == "selection":
            return OneStep(self.selection, self.selection_index, None)
        return OneStep(self.answer, self.answer_index, self.weight)

    def block(self, lo: int, hi: int) -> np.ndarray:
        """The curves of queries ``lo .. hi-1`` in a new array."""
        out = np.empty((hi - lo, self.answer.shape[1]))
        self.rows(lo, hi, out)
        return out


class OneStep(NamedTuple):
    """One step's curves (``curves[which]``, times ``weight`` if given): :class:`StepRows`' with
    the other step 0, bit for bit (``0 * w = 0``, ``x + 0 = x``), without gathering zeros."""

    curves: np.ndarray
    which: np.ndarray
    weight: np.ndarray | None

    def rows(self, lo: int, hi: int, out: np.ndarray,
             scratch: np.ndarray | None = None) -> None:
        np.take(self.curves, self.which[lo:hi], axis=0, out=out)
        if self.weight is not None:
            out *= self.weight[lo:hi, None]


class ArrayRows:
    """Per-query curves already evaluated, ``(queries, orders)``."""

    def __init__(self, array: np.ndarray):
        self.array = array

    def rows(self, lo: int, hi: int, out: np.ndarray,
             scratch: np.ndarray | None = None) -> None:
        np.copyto(out, self.array[lo:hi])


def initial_carry(initial_rdp: np.ndarray | None, orders: np.ndarray) -> np.ndarray:
    """The RDP spent before the first query (math:conversion): zeros, or a validated copy."""
    if initial_rdp is None:
        return np.zeros(orders.size)
    initial_rdp = np.asarray(initial_rdp, dtype=np.float64)
    if initial_rdp.shape != orders.shape or np.any(np.isnan(initial_rdp)) \
            or np.any(initial_rdp < 0):
        raise ValueError("the added RDP curve needs one non-negative value per order")
    return initial_rdp.copy()


def sums_at_order(orders: np.ndarray, order: float, selection: np.ndarray,
                  answer: np.ndarray, terms: int) -> dict[str, float]:
    """``rdp_at_order``: the selection and answer sums of up to ``terms`` queries at the
    reported order, raised as every RDP value handed on (``numerics.raised_rdp``)."""
    k = int(np.flatnonzero(orders == order)[0])  # the order is one of the grid's
    return {"selection": float(raised_rdp(selection[k], terms)),
            "answer": float(raised_rdp(answer[k], terms))}


def sequential_total(rows: np.ndarray) -> np.ndarray:
    """The sum over the queries axis of a C-ordered ``(..., queries, orders)`` block, row after
    row: ``numpy.cumsum(rows, axis=-2)[..., -1, :]`` bit for bit (a single column would be
    summed pairwise by ``add.reduce``)."""
    if rows.shape[-1] > 1:
        return np.add.reduce(rows, axis=-2)
    return np.cumsum(rows, axis=-2)[..., -1, :].copy()


def cumulative_epsilon(rows: np.ndarray, carry: np.ndarray, conversion: Conversion
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cumulative epsilon after each query of ``rows`` ``(..., queries, orders)``, overwritten,
    after ``carry`` (math:conversion). Orders whose sum after the first query is already
    ``Conversion.beyond`` the least converted total are skipped: non-negative rows only grow,
    so the figures are the same.

    Returns:
      ``(epsilon (..., queries), the first order achieving it, the sums after)``.
    """
    rows[..., 0, :] += carry
    if rows.size and bool(rows.min() >= 0.0):  # False for NaN: no order is skipped
        total = sequential_total(rows)
        least = (total + conversion.offset).min(axis=-1, keepdims=True)
        if conversion.tv_limit is not None:
            least = np.maximum(least, 0.0)
        beyond = conversion.beyond(rows[..., 0, :], least)
        kept = np.flatnonzero(~beyond.reshape(-1, beyond.shape[-1]).all(axis=0))
        part = rows[..., kept]
        np.cumsum(part, axis=-2, out=part)
        epsilon, choice = minimise_over_orders(part, conversion.offset[kept],
                                               clip=conversion.clip, out=part,
                                               tv_limit=conversion.tv_limit,
                                               margin=conversion.margin)
        return epsilon, kept[choice], total
    np.cumsum(rows, axis=-2, out=rows)
    total = rows[..., -1, :].copy()
    epsilon, best = conversion.epsilon(rows, out=rows)
    return epsilon, best, total


@dataclass(frozen=True, eq=False)
class RunningEpsilon:
    """Per query: cumulative ``epsilon``, its ``order_index``, and (if asked) the query's
    own ``epsilon_query``; ``carry``: the RDP sums after the last query."""

    epsilon: np.ndarray
    order_index: np.ndarray
    carry: np.ndarray
    epsilon_query: np.ndarray | None = None


def running_epsilon(source: RowSource, count: int, carry: np.ndarray, conversion: Conversion,
                    *, per_query: bool = False) -> RunningEpsilon:
    """Running RDP sums of ``count`` queries after ``carry``, converted after every query
    (math:conversion); ``source``'s rows a cache-sized slice at a time in one buffer."""
    epsilon = np.empty(count)
    order_index = np.empty(count, dtype=np.intp)
    epsilon_query = np.empty(count) if per_query else None
    carry = np.array(carry, dtype=np.float64)
    for lo, hi, rows, scratch in _formed(source, count, conversion.offset.size):
        if epsilon_query is not None:
            epsilon_query[lo:hi] = conversion.epsilon(rows, out=scratch)[0]
        epsilon[lo:hi], order_index[lo:hi], carry = cumulative_epsilon(rows, carry, conversion)
    return RunningEpsilon(epsilon=epsilon, order_index=order_index, carry=carry,
                          epsilon_query=epsilon_query)


def query_epsilons(source: RowSource, count: int, conversion: Conversion) -> np.ndarray:
    """``running_epsilon(..., per_query=True).epsilon_query`` bit for bit (math:conversion),
    without a carry, so it can run ahead on another thread."""
    figures = np.empty(count)
    for lo, hi, rows, _ in _formed(source, count, conversion.offset.size):
        figures[lo:hi] = conversion.epsilon(rows, out=rows)[0]
    return figures


def running_total(source: RowSource, count: int, carry: np.ndarray) -> np.ndarray:
    """``carry`` plus the curves of ``count`` queries, added in query order (the
    ``carry`` :func:`running_epsilon` ends with, bit for bit, without forming epsilons)."""
    carry = np.array(carry, dtype=np.float64)
    for _, _, rows, _ in _formed(source, count, carry.size):
        rows[0] += carry
        carry = sequential_total(rows)
    return carry


def _formed(source: RowSource, count: int, size: int):
    """``(lo, hi, rows, scratch)`` per cache-sized slice: queries ``lo .. hi-1``'s curves
    in one reused buffer, and a free array of the same shape."""
    step = max(1, WORK_VALUES // size)
    buffer = np.empty((min(step, count), size))
    spare = np.empty_like(buffer)
    for lo in range(0, count, step):
        hi = min(count, lo + step)
        rows, scratch = buffer[: hi - lo], spare[: hi - lo]
        source.rows(lo, hi, rows, scratch)
        yield lo, hi, rows, scratch


def budget_halt(costs: RowSource, full: RowSource, count: int, carry: np.ndarray,
                conversion: Conversion, limit: float) -> int | None:
    """Where a budget run halts inside a block of ``count`` queries (math:costs), or None: the
    first i where ``carry + costs[0] + ... + costs[i-1] + full[i]`` converts above ``limit``
    (prefix sums as :func:`running_epsilon`'s; slices passing :func:`within_limit` skipped).

    Args:
      costs: each query's charge if processed (as decided, or the expected cost).
      full: what it could cost (the answer step in full; the expected cost if ``expected``).
    """
    carry = np.array(carry, dtype=np.float64)
    size = carry.size
    step = max(1, WORK_VALUES // size)
    for lo in range(0, count, step):
        hi = min(count, lo + step)
        sums, candidate = np.empty((hi - lo, size)), np.empty((hi - lo, size))
        costs.rows(lo, hi, sums)
        full.rows(lo, hi, candidate)
        sums[0] += carry
        # with non-negative costs every candidate is below the slice's sums + its largest row
        if bool(sums.min() >= 0.0) and bool(candidate.min() >= 0.0):
            total = sequential_total(sums)
            if within_limit(total, candidate.max(axis=0), conversion, limit):
                carry = total
                continue
        np.cumsum(sums, axis=0, out=sums)  # the sums after each query of the slice
        candidate[0] += carry
        candidate[1:] += sums[:-1]
        over = conversion.epsilon(candidate)[0] > limit
        if over.any():
            return lo + int(np.argmax(over))
        carry = sums[-1].copy()
    return None


def within_limit(after: np.ndarray, peak: np.ndarray, conversion: Conversion, limit: float,
                 margin: float = 1.0) -> bool:
    """The one "no query here can cross the budget" test (math:costs): whether ``(after +
    peak) * margin`` converts within ``limit`` (``after``: sums after a span of non-negative
    costs; ``peak``: a bound on one query's full cost; the conversion is monotone). False
    unless both are non-negative."""
    if not (bool(np.all(after >= 0.0)) and bool(np.all(peak >= 0.0))):
        return False
    bound = (after + peak) * margin
    return bool(conversion.epsilon(bound[None, :])[0][0] <= limit)
