"""Totals of a run from its distinct statistics: exact counts, curves once per file.

math:conversion and math:costs: integer counts per distinct ``(log q, log pr_answered)``
pair (:class:`GroupedCounts`), summed once in a fixed order (:func:`grouped_totals`) in
bounded memory (:class:`BoundedTotals`), parts summed apart within math:tolerance:
docs/explanation/numerics.md#how-totals-are-summed
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import numpy as np

from ..work_sizes import batched
from .composition import sequential_total
from .curve_quadrature import interpolants, interpolated_sums

# Distinct statistics whose curves are evaluated and summed at once (a fixed constant:
# the order of the additions, and so every bit of the totals, depends on it).
TOTAL_BLOCK = 4096
# Blocks evaluated by one task of the map (their quadrature points in one call).
BLOCKS_PER_TASK = 16
# Analysed positions per window of :class:`BoundedTotals` (pieces of a run never cross a
# multiple of it, ``window_pieces``), and the distinct pairs a merged table may hold
# before it is summed (fixed constants: which tables are summed apart depends on them).
TOTALS_WINDOW = 1 << 17
TABLE_LIMIT = 1 << 20
# A merge that keeps more than (1 - MERGE_GAIN) of its two tables' pairs (statistics that
# do not repeat) is summed at once rather than held for more merges (a fixed constant too).
MERGE_GAIN = 1 / 16

CurveFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class GroupedCounts:
    """Distinct ``(answer, selection)`` pairs, sorted, with int64 ``queries`` and
    ``answered`` counts (a column per run for replays under several seeds); ``raised``:
    how many have the raised expected charge (``threshold.raised_counts``), None for none
    (whole counts are never raised)."""

    answer: np.ndarray
    selection: np.ndarray
    queries: np.ndarray
    answered: np.ndarray
    raised: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Number of distinct pairs."""
        return int(self.answer.size)

    @classmethod
    def empty(cls) -> GroupedCounts:
        return cls(np.empty(0), np.empty(0), np.empty(0, np.int64), np.empty(0, np.int64))

    @classmethod
    def of_queries(cls, answer: np.ndarray, selection: np.ndarray, answered: np.ndarray,
                   raised: np.ndarray | None = None) -> GroupedCounts:
        """The table of queries' ``answer``, ``selection``, ``answered`` (bool or 0/1,
        ``(queries,)`` or ``(queries, runs)``) and ``raised`` (None: none)."""
        answered = np.array(answered, dtype=np.int64)
        return cls._reduced([np.array(answer, dtype=np.float64),
                             np.array(selection, dtype=np.float64),
                             np.ones(answered.shape[0], dtype=np.int64), answered,
                             None if raised is None or not np.any(raised)
                             else np.array(raised, dtype=np.int64)])

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
    def _reduced(cls, columns: list, runs: bool = False) -> GroupedCounts:
        """Sum the counts of equal pairs of ``columns`` (answer, selection, queries, answered,
        raised or None; owned: the list is emptied to free each once used), sorted (unstable
        sorts suffice: integer counts). ``runs``: sorted tables end to end (timsort: linear)."""
        answer, selection, queries, answered, raised = columns
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
            # answers with several selection statistics (rare): only their runs re-sorted
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
        raised = None if raised is None else np.add.reduceat(raised[order], starts)
        return cls(answer, selection, queries, answered, raised)


class BoundedTotals:
    """A run's sums from its pieces' tables, at most about ``limit`` pairs held, merged like a
    binary counter (docs/explanation/numerics.md#how-totals-are-summed). ``totals_of`` sums a
    table; pieces come in query order, cut by ``window_pieces``."""

    def __init__(self, totals_of: Callable[[GroupedCounts], GroupedTotals], *,
                 window: int | None = None, limit: int | None = None):
        self._totals_of = totals_of
        self._window_size = TOTALS_WINDOW if window is None else window
        self._limit = TABLE_LIMIT if limit is None else limit
        # two tables merge while together they hold at most 1.5 x the limit (repeated
        # pairs count twice there: the merged table is often much smaller)
        self._merge_limit = self._limit + self._limit // 2
        self._window: list[GroupedCounts] = []
        self._levels: list[GroupedCounts | None] = []
        self._sums: GroupedTotals | None = None
        self.parts = 0  # tables summed so far

    def add(self, table: GroupedCounts, stop: int) -> None:
        """Count a piece's table; ``stop``: the analysed position after the piece."""
        self._window.append(table)
        if stop % self._window_size == 0:
            self._end_window()

    def _end_window(self) -> None:
        table = GroupedCounts.merge(self._window)
        self._window = []
        level = 0
        while True:
            if level == len(self._levels):
                self._levels.append(None)
            held = self._levels[level]
            if held is None:
                self._levels[level] = table
                return
            if held.size + table.size > self._merge_limit:  # the held one summed
                self._levels[level] = table
                del table
                self._sum(held)
                return
            before = held.size + table.size
            pair = [held, table]
            self._levels[level] = None
            del held, table
            table = _merged_pair(pair)
            if table.size > self._limit or (  # (after a part: no whole table to keep)
                    self.parts and table.size > before * (1.0 - MERGE_GAIN)):
                self._sum(table)
                return
            level += 1

    def _sum(self, table: GroupedCounts) -> None:
        part = self._totals_of(table)
        self.parts += 1
        self._sums = part if self._sums is None else GroupedTotals(
            self._sums.selection + part.selection, self._sums.answer + part.answer,
            self._sums.answered + part.answered)

    def result(self) -> tuple[GroupedTotals, GroupedCounts | None]:
        """The run's sums, and its whole table if they came from one."""
        if self._window:
            self._end_window()
        rest = GroupedCounts.empty()
        levels, self._levels = self._levels[::-1], []
        while levels:  # the smallest first, merged as the windows were, each let go
            table = levels.pop()
            if table is None:
                continue
            if rest.size + table.size > self._merge_limit:
                self._sum(rest)
                rest = table
            else:
                pair = [rest, table]
                del rest
                rest = _merged_pair(pair)
            del table
            if rest.size > self._limit:
                self._sum(rest)
                rest = GroupedCounts.empty()
        whole = None
        if rest.size or self._sums is None:
            self._sum(rest)
            whole = rest if self.parts == 1 else None
        assert self._sums is not None
        return self._sums, whole


def _merged_pair(pair: list[GroupedCounts]) -> GroupedCounts:
    """``GroupedCounts.merge(pair)``, letting the two go as it forms (the list is emptied)."""
    first, second = pair
    pair.clear()
    if not first.size or not second.size:
        return second if first.size == 0 else first
    columns = _concatenated([first, second])
    del first, second
    return GroupedCounts._reduced(columns, runs=True)


def window_pieces(queries: int, size: int, *, window: int | None = None
                  ) -> Iterator[tuple[int, int]]:
    """Consecutive ranges ``(start, stop)`` of at most ``size`` of ``queries`` analysed positions,
    also cut at every multiple of ``window`` (default ``TOTALS_WINDOW``): a piece lies in one."""
    window = TOTALS_WINDOW if window is None else window
    for first in range(0, queries, window):
        end = min(queries, first + window)
        for start in range(first, end, size):
            yield start, min(end, start + size)


def _concatenated(tables: list[GroupedCounts]) -> list:
    """The columns of ``tables`` end to end (new arrays; ``raised`` None if no table has one)."""
    raised = None
    if any(table.raised is not None for table in tables):
        raised = np.concatenate([np.zeros(table.size, np.int64) if table.raised is None
                                 else table.raised for table in tables])
    return [*(np.concatenate([getattr(table, name) for table in tables])
              for name in ("answer", "selection", "queries", "answered")), raised]


class GroupedTotals(NamedTuple):
    """Per-order sums of the selection and (weighted) answer curves, and the answered
    weight (a count, or expected answers); ``answer`` and ``answered`` per run for several."""

    selection: np.ndarray
    answer: np.ndarray
    answered: float | np.ndarray


def grouped_totals(counts: GroupedCounts, *, selection_rdp: CurveFunction | None,
                   answer_rdp: CurveFunction, orders: np.ndarray, expected: bool,
                   raised_charge: Callable | None = None, map=map) -> GroupedTotals:
    """The run's sums (math:costs) from its merged table.

    ``selection_rdp`` / ``answer_rdp``: sorted distinct statistics to ``(distinct,
    orders)`` curves (``selection_rdp`` None: no selection step). ``expected``: charge
    ``pr_answered`` (:func:`expected_charges`) instead of the decisions. ``map`` (ordered,
    e.g. a thread pool's) evaluates the blocks; the result does not depend on it.
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
        answered = expected_answers(counts, charged := expected_charges(counts,
                                                                        raised_charge))
    else:
        charged = counts.answered.astype(np.float64)
        total = counts.answered.sum(axis=0)
        answered = total.astype(np.float64) if runs else float(total)
    weights = np.add.reduceat(charged, starts)
    answer_sum = weighted_curve_sum(counts.answer[starts], weights, answer_rdp, orders,
                                    map=map)
    return GroupedTotals(selection_sum, answer_sum, answered)


def expected_charges(counts: GroupedCounts, raised_charge: Callable | None) -> np.ndarray:
    """Each pair's expected charge, ``queries * pr_answered`` (math:costs): ``exp(selection)``
    per query, and for its ``raised`` queries ``raised_charge(selection)`` instead
    (``threshold.raised_charge``; a table without raised queries: the products alone)."""
    charged = counts.queries * np.exp(counts.selection)
    if raised_charge is not None and counts.raised is not None:
        some = np.flatnonzero(counts.raised)
        charged[some] += counts.raised[some] * (raised_charge(counts.selection[some])
                                                - np.exp(counts.selection[some]))
    return charged


def expected_answers(counts: GroupedCounts, charged: np.ndarray) -> float:
    """A table's expected answers, its pairs' ``charged`` (:func:`expected_charges`) added
    in order (math:costs)."""
    return float(np.cumsum(charged)[-1]) if counts.size else 0.0


def weighted_curve_sum(keys: np.ndarray, weights: np.ndarray, rdp: CurveFunction,
                       orders: np.ndarray, *, map=map) -> np.ndarray:
    """``sum_k weights[k] * rdp(keys)[k]`` over sorted distinct ``keys``, ``weights`` ``(keys,)``
    or ``(keys, runs)`` (each run's row the bits of the 1-D call): blocks of ``TOTAL_BLOCK``
    keys, ``BLOCKS_PER_TASK`` per task of ``map``, added in order; weight-0 rows skipped."""
    runs = weights.shape[1:] if weights.ndim == 2 else ()
    used = weights != 0 if weights.ndim == 1 else np.any(weights != 0, axis=1)

    def blocks():
        for lo in range(0, keys.size, TOTAL_BLOCK):
            rows = lo + np.flatnonzero(used[lo:lo + TOTAL_BLOCK])
            if rows.size:
                yield keys[rows], weights[rows]

    total = np.zeros(runs + (orders.size,))
    for parts in map(partial(block_sums, rdp, orders), batched(blocks(), BLOCKS_PER_TASK)):
        for part in parts:
            total += part
    return total


def block_sums(rdp: CurveFunction, orders: np.ndarray,
               blocks: list[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """Each block ``(keys, weights)``'s ``sum_k weights[k] * rdp(keys)[k]`` (module-level: a
    cluster's workers run it): ``curve_quadrature`` (1e-12 relative) on blocks of ``MIN_ROWS``
    keys or more, at the orders it keeps, else every key's row added in order; independent of
    neighbours, each run's row the bits of the 1-D call."""
    columns = [weights.reshape(keys.size, -1) for keys, weights in blocks]
    runs = columns[0].shape[1] if columns else 0
    totals = [np.zeros((runs, orders.size)) for _ in blocks]
    exact = [np.ones((runs, orders.size), dtype=bool) for _ in blocks]
    fitted = interpolants(rdp, orders, [keys for keys, _ in blocks])
    for run in range(runs if fitted.fit else 0):
        weights = np.concatenate([columns[position][:, run] for position in fitted.fit])
        sums, kept = interpolated_sums(fitted, weights)
        for row, position in enumerate(fitted.fit):
            totals[position][run] = sums[row]
            exact[position][run] = ~kept[row]
    for (keys, _), column, total, missing in zip(blocks, columns, totals, exact,
                                                 strict=True):
        needed = np.flatnonzero(missing.any(axis=0))
        if needed.size:
            curves = rdp(keys, orders if needed.size == orders.size else orders[needed])
            products = curves[:, None, :] * column[:, :, None]
            sums = sequential_total(products.reshape(keys.size, -1)).reshape(runs, -1)
            total[:, needed] = np.where(missing[:, needed], sums, total[:, needed])
            del curves, products  # one block's work arrays at a time, not two
    return [total.reshape(weights.shape[1:] + (orders.size,))
            for total, (_, weights) in zip(totals, blocks, strict=True)]
