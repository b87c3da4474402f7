"""Totals of a run from its distinct statistics: exact counts, curves once per file.

MATH.md sections 6 and 7: a run's RDP is ``sum_i selection(s_i) + w_i answer(a_i)`` over
its queries, where ``s_i`` is the selection statistic (``log pr_answered``) and ``a_i``
the answer statistic (``log q``). Queries with the same pair ``(a, s)`` cost the same, so
the sum only needs, per distinct pair, how many queries have it (``queries``) and how
many of those were answered (``answered``). Those are integers, so tables of different
chunks merge exactly, in any order and on any worker (:meth:`GroupedCounts.merge`), and
the totals are then formed once, from the merged table, by :func:`grouped_totals`, in a
fixed order (pairs sorted by ``(a, s)``; blocks of ``TOTAL_BLOCK`` distinct statistics).
Every figure is therefore a function of the multiset of per-query statistics and
decisions alone: the same bits whatever the chunk size, the number of workers, or
whether per-query columns are kept.

The weight ``w_i`` is the decision (0 or 1) for a replay or given decisions, and
``pr_answered = exp(s_i)`` for expected accounting (MATH.md s.7), so under expected
accounting the answer step of a distinct ``a`` is charged
``W_a = sum over its pairs of queries(a, s) * exp(s)``, added in increasing ``s``.

Each distinct curve is evaluated once per file (per merged table), in blocks of
``TOTAL_BLOCK`` distinct statistics, so memory stays bounded by the number of distinct
statistics, not of queries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import numpy as np

from .composition import sequential_total

# Distinct statistics whose curves are evaluated and summed at once (a fixed constant:
# the order of the additions, and so every bit of the totals, depends on it).
TOTAL_BLOCK = 4096

CurveFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class GroupedCounts:
    """Distinct ``(answer, selection)`` statistic pairs of a set of queries, sorted by
    answer then selection, with the number of queries (``queries``) and of answered
    queries (``answered``) of each (int64). ``answered`` may have a column per run
    (replays of the same queries under several seeds)."""

    answer: np.ndarray
    selection: np.ndarray
    queries: np.ndarray
    answered: np.ndarray

    @property
    def size(self) -> int:
        """Number of distinct pairs."""
        return int(self.answer.size)

    @classmethod
    def empty(cls) -> GroupedCounts:
        return cls(np.empty(0), np.empty(0), np.empty(0, np.int64), np.empty(0, np.int64))

    @classmethod
    def of_queries(cls, answer: np.ndarray, selection: np.ndarray,
                   answered: np.ndarray) -> GroupedCounts:
        """The table of queries with statistics ``answer``, ``selection`` and answered
        mask ``answered`` (bool or 0/1, ``(queries,)`` or ``(queries, runs)``)."""
        answered = np.array(answered, dtype=np.int64)
        return cls._reduced([np.array(answer, dtype=np.float64),
                             np.array(selection, dtype=np.float64),
                             np.ones(answered.shape[0], dtype=np.int64), answered])

    @classmethod
    def merge(cls, tables: Iterable[GroupedCounts]) -> GroupedCounts:
        """One table holding every query of ``tables`` (exact: counts are integers, and
        the result does not depend on the order of ``tables``)."""
        tables = [table for table in tables if table.size]
        if not tables:
            return cls.empty()
        if len(tables) == 1:
            return tables[0]
        return cls._reduced(_concatenated(tables), runs=True)

    @classmethod
    def _reduced(cls, columns: list[np.ndarray], runs: bool = False) -> GroupedCounts:
        """Sum the counts of equal pairs of ``columns`` (answer, selection, queries,
        answered: arrays this call owns; the list is emptied so that each is freed as
        soon as it is used); the pairs sorted by (answer, selection). The sorts need not
        be stable: the counts are integers. ``runs``: the columns are sorted tables end
        to end, which a stable sort (timsort) merges in linear time per run."""
        answer, selection, queries, answered = columns
        columns.clear()
        if answer.size == 0:
            return cls.empty()
        # + 0.0 makes -0.0 into 0.0, so equal statistics have one representation.
        np.add(answer, 0.0, out=answer)
        np.add(selection, 0.0, out=selection)
        order = np.argsort(answer, kind="stable" if runs else None)
        answer = answer[order]
        selection = selection[order]
        same_answer = answer[1:] == answer[:-1]
        mixed = same_answer & (selection[1:] != selection[:-1])
        if np.any(mixed):
            # Some answer statistics come with several selection statistics (a few
            # dozen in 10^5 queries): only their runs are sorted again, by selection.
            run = np.concatenate(([0], np.cumsum(~same_answer)))
            resorted = np.zeros(int(run[-1]) + 1, dtype=bool)
            resorted[run[1:][mixed]] = True
            members = np.flatnonzero(resorted[run])
            del run, resorted
            moved = members[np.lexsort((selection[members], answer[members]))]
            order[members], answer[members], selection[members] = (
                order[moved], answer[moved], selection[moved])
            del members, moved
            same_answer = answer[1:] == answer[:-1]
        del mixed
        first = np.empty(answer.size, dtype=bool)
        first[0] = True
        np.logical_not(same_answer & (selection[1:] == selection[:-1]), out=first[1:])
        del same_answer
        starts = np.flatnonzero(first)
        del first
        answer, selection = answer[starts], selection[starts]
        queries = np.add.reduceat(queries[order], starts)
        answered = np.add.reduceat(answered[order], starts)
        return cls(answer, selection, queries, answered)


class GroupedAccumulator:
    """Merges chunk tables as they come, with bounded work: pending tables are merged
    into the main one once they hold as many pairs as it does (each pair is re-sorted
    O(log) times in all)."""

    def __init__(self) -> None:
        self._main = GroupedCounts.empty()
        self._pending: list[GroupedCounts] = []
        self._pending_size = 0

    def add(self, table: GroupedCounts) -> None:
        self._pending.append(table)
        self._pending_size += table.size
        if self._pending_size >= max(self._main.size, 1 << 16):
            self._flush()

    def _flush(self) -> None:
        parts = [table for table in (self._main, *self._pending) if table.size]
        self._main, self._pending, self._pending_size = GroupedCounts.empty(), [], 0
        if len(parts) == 1:
            self._main = parts[0]
        elif parts:
            columns = _concatenated(parts)
            del parts  # the old tables are freed before the merge's work arrays exist
            self._main = GroupedCounts._reduced(columns, runs=True)

    def result(self) -> GroupedCounts:
        self._flush()
        return self._main


def _concatenated(tables: list[GroupedCounts]) -> list[np.ndarray]:
    """The columns of ``tables`` end to end (new arrays)."""
    return [np.concatenate([getattr(table, name) for table in tables])
            for name in ("answer", "selection", "queries", "answered")]


class GroupedTotals(NamedTuple):
    """Per-order sums of the selection and the (weighted) answer curves, and the
    answered weight (a count, or the expected number of answers); with answered counts
    of several runs (``answered`` columns), ``answer`` and ``answered`` have one row or
    entry per run."""

    selection: np.ndarray
    answer: np.ndarray
    answered: float | np.ndarray


def grouped_totals(counts: GroupedCounts, *, selection_rdp: CurveFunction | None,
                   answer_rdp: CurveFunction, orders: np.ndarray, expected: bool,
                   map=map) -> GroupedTotals:
    """The run's sums (MATH.md s.7) from its merged table.

    ``selection_rdp`` / ``answer_rdp`` map sorted distinct statistics to curves
    ``(distinct, orders)``; ``selection_rdp`` is None for a mechanism without selection
    (its selection statistics are then ignored). ``expected`` charges the answer step
    with ``exp(selection statistic)`` per query instead of the decisions. ``map`` (an
    ordered map, e.g. a thread pool's) evaluates the blocks of curves; the result does
    not depend on it.
    """
    orders = np.asarray(orders, dtype=np.float64)
    selection_sum = np.zeros(orders.size)
    if selection_rdp is not None and counts.size:
        keys, where = np.unique(counts.selection, return_inverse=True)
        per_key = np.bincount(where.reshape(-1), weights=counts.queries,
                              minlength=keys.size)  # integers below 2^53: exact
        selection_sum = weighted_curve_sum(keys, per_key, selection_rdp, orders, map=map)
    runs = counts.answered.shape[1:] if not expected else ()
    if counts.size == 0:
        return GroupedTotals(selection_sum, np.zeros(runs + (orders.size,)),
                             np.zeros(runs) if runs else 0.0)
    starts = np.flatnonzero(np.concatenate(([True], counts.answer[1:] != counts.answer[:-1])))
    answered: float | np.ndarray
    if expected:
        charged = counts.queries * np.exp(counts.selection)
        answered = float(np.cumsum(charged)[-1])
    else:
        charged = counts.answered.astype(np.float64)
        total = counts.answered.sum(axis=0)
        answered = total.astype(np.float64) if runs else float(total)
    weights = np.add.reduceat(charged, starts)
    answer_sum = weighted_curve_sum(counts.answer[starts], weights, answer_rdp, orders,
                                    map=map)
    return GroupedTotals(selection_sum, answer_sum, answered)


def weighted_curve_sum(keys: np.ndarray, weights: np.ndarray, rdp: CurveFunction,
                       orders: np.ndarray, *, map=map) -> np.ndarray:
    """``sum_k weights[k] * rdp(keys)[k]`` over sorted distinct ``keys``.

    ``weights`` is ``(keys,)`` (result ``(orders,)``) or ``(keys, runs)`` (result
    ``(runs, orders)``, each run's row the bits the 1-D call gives for its column).
    Keys go in blocks of ``TOTAL_BLOCK`` (fixed boundaries), evaluated by ``map`` and
    added in block order; inside a block rows are added one after another
    (``composition.sequential_total``), and only rows with a weight other than 0 are
    evaluated: a skipped row would add exactly 0.
    """
    runs = weights.shape[1:] if weights.ndim == 2 else ()
    used = weights != 0 if weights.ndim == 1 else np.any(weights != 0, axis=1)

    def blocks():
        for lo in range(0, keys.size, TOTAL_BLOCK):
            rows = lo + np.flatnonzero(used[lo:lo + TOTAL_BLOCK])
            if rows.size:
                yield keys[rows], weights[rows]

    total = np.zeros(runs + (orders.size,))
    for part in map(partial(block_sum, rdp, orders), blocks()):
        total += part
    return total


def block_sum(rdp: CurveFunction, orders: np.ndarray,
              block: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """``sum_k weights[k] * rdp(keys)[k]`` of one block ``(keys, weights)``, rows added
    one after another (a module-level function: a cluster's workers can run it)."""
    keys, weights = block
    runs = weights.shape[1:] if weights.ndim == 2 else ()
    curves = rdp(keys, orders)
    products = (curves[:, None, :] * weights[:, :, None] if runs
                else curves * weights[:, None])
    return sequential_total(products.reshape(keys.size, -1)).reshape(runs + (orders.size,))
