"""Per-output RDP of token votes (cli:json's outputs): each output's tokens' curves summed, and
the halt before the first output that could exceed a budget.

An output is a generated sequence: its queries (tokens) are consecutive rows, so its curve
is a sum over a run of rows (RDP adds up, math:conversion), an output that spans chunks carried
into the next one.
"""

from __future__ import annotations

import numpy as np

from .conversion import Conversion

# The output halt is checked on curves raised by this factor: the run then summed up to
# the halt (another order of additions) converts within the budget (math:tolerance).
HALT_MARGIN = 1.0 + 2.0**-32

Sums = tuple[np.ndarray, np.ndarray, np.ndarray]


class OutputSums:
    """The outputs of consecutive chunks of queries, summed as they complete: each chunk
    ``(first query, actual, full)`` (``(queries, orders)`` curves charged, and charged if
    every token's answer step counted in full) gives the outputs it completed as ``(first
    query of each, actual sums, full sums)``; the output the last chunk ended in waits for
    the next (:meth:`flush` gives it at the end). ``ids``: each query's output."""

    def __init__(self, ids: np.ndarray):
        self.ids = ids
        self.pending: Sums | None = None

    def add(self, start: int, actual: np.ndarray, full: np.ndarray) -> list[Sums]:
        if actual.shape[0] == 0:
            return []
        ids, done = self.ids, []
        firsts = np.flatnonzero(np.concatenate(
            ([True], np.diff(ids[start : start + actual.shape[0]]) != 0)))
        sums = (start + firsts, np.add.reduceat(actual, firsts, axis=0),
                np.add.reduceat(full, firsts, axis=0))
        pending = self.pending
        if pending is not None and ids[start - 1] == ids[start]:  # the output goes on
            sums[0][0] = pending[0][0]
            sums[1][0] += pending[1][0]
            sums[2][0] += pending[2][0]
        elif pending is not None:
            done.append(pending)
        if firsts.size > 1:
            done.append((sums[0][:-1], sums[1][:-1], sums[2][:-1]))
        self.pending = sums[0][-1:], sums[1][-1:], sums[2][-1:]
        return done

    def flush(self) -> list[Sums]:
        pending, self.pending = self.pending, None
        return [] if pending is None else [pending]


def first_over(sums: Sums, carry: np.ndarray, conversion: Conversion,
               budget: float) -> tuple[int | None, np.ndarray]:
    """Of the outputs ``sums`` (:class:`OutputSums`), after ``carry``: the index of the
    first that could take the total above ``budget`` (the outputs before it as charged plus
    its tokens charged in full, so a generation is never cut mid-sequence) or None, and the
    carry after the outputs before it."""
    _, actual, full = sums
    spent = np.cumsum(np.concatenate((carry[None, :], actual)), axis=0)
    over = conversion.epsilon((spent[:-1] + full) * HALT_MARGIN)[0] > budget
    if over.any():
        index = int(np.argmax(over))
        return index, spent[index]
    return None, spent[-1]
