"""Per-output RDP of token votes (cli:json's outputs; math:sparse): an output's consecutive
queries' curves summed (math:conversion), carried across chunks, and the halt before the
first output that could exceed a budget."""

from __future__ import annotations

import numpy as np

from ..work_sizes import WORK_VALUES
from .conversion import Conversion

# The halt is checked on curves raised by this factor, so the run summed up to it (another
# order of additions) converts within the budget (math:tolerance).
HALT_MARGIN = 1.0 + 2.0**-32

Sums = tuple[np.ndarray, np.ndarray, np.ndarray]


class OutputSums:
    """Outputs summed as consecutive chunks complete them. A chunk ``(first query, actual,
    full)`` (``(queries, orders)`` curves charged, and charged with every answer step in
    full) gives its completed outputs as ``(first queries, actual sums, full sums)``; the
    last, unfinished one waits (:meth:`flush` ends it). ``ids``: each query's output."""

    def __init__(self, ids: np.ndarray):
        self.ids = ids
        self.pending: Sums | None = None

    def add(self, start: int, actual: np.ndarray, full: np.ndarray) -> list[Sums]:
        if actual.shape[0] == 0:
            return []
        ids, done = self.ids, []
        firsts = np.flatnonzero(np.concatenate(
            ([True], np.diff(ids[start : start + actual.shape[0]]) != 0)))
        pending = self.pending
        carried = pending if pending is not None and ids[start - 1] == ids[start] else None
        sums = (start + firsts,
                _row_sums(actual, firsts, None if carried is None else carried[1]),
                _row_sums(full, firsts, None if carried is None else carried[2]))
        if carried is not None:  # the output goes on: its sum went on from the one carried
            sums[0][0] = carried[0][0]
        elif pending is not None:
            done.append(pending)
        if firsts.size > 1:
            done.append((sums[0][:-1], sums[1][:-1], sums[2][:-1]))
        self.pending = sums[0][-1:], sums[1][-1:], sums[2][-1:]
        return done

    def flush(self) -> list[Sums]:
        pending, self.pending = self.pending, None
        return [] if pending is None else [pending]


def _row_sums(rows: np.ndarray, firsts: np.ndarray, carried: np.ndarray | None) -> np.ndarray:
    """Each run of ``rows`` from ``firsts`` summed row after row, the first after
    ``carried``, so a split output gets the bits it gets whole (``reduceat``'s order depends
    on the length; ``np.add.reduce`` over a C-ordered block's rows is sequential). Runs of
    one length are summed together, ``WORK_VALUES`` values at a time."""
    lengths = np.diff(np.append(firsts, rows.shape[0]))
    sums = np.empty((firsts.size, rows.shape[1]))
    for length in np.unique(lengths).tolist():
        runs = np.flatnonzero(lengths == length)
        runs = runs if carried is None else runs[runs > 0]  # (the first goes on, below)
        step = max(1, WORK_VALUES // (length * rows.shape[1]))
        for lo in range(0, runs.size, step):
            some = runs[lo:lo + step]
            block = rows[firsts[some, None] + np.arange(length)]  # (runs, length, orders)
            sums[some] = np.add.reduce(block, axis=1)
    if carried is not None:  # the output the last chunk ended in goes on
        sums[0] = np.add.reduce(np.concatenate((carried, rows[:lengths[0]])), axis=0)
    return sums


def first_over(sums: Sums, carry: np.ndarray, conversion: Conversion,
               budget: float) -> tuple[int | None, np.ndarray]:
    """The index of the first output of ``sums`` that could take ``carry`` plus the outputs
    before it above ``budget`` with its tokens charged in full (no generation is cut
    mid-sequence), or None; and the carry after the outputs before it."""
    _, actual, full = sums
    spent = np.cumsum(np.concatenate((carry[None, :], actual)), axis=0)
    over = conversion.epsilon((spent[:-1] + full) * HALT_MARGIN)[0] > budget
    if over.any():
        index = int(np.argmax(over))
        return index, spent[index]
    return None, spent[-1]
