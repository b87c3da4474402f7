"""Per-output RDP of token votes (cli:json's outputs): each output's tokens' curves summed, and
the halt before the first output that could exceed a budget.

An output is a generated sequence: its queries (tokens) are consecutive rows, so its curve
is a sum over a run of rows (RDP adds up, math:conversion), an output that spans chunks carried
into the next one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from .conversion import Conversion

# The output halt is checked on curves raised by this factor: the run then summed up to
# the halt (another order of additions) converts within the budget (math:tolerance).
HALT_MARGIN = 1.0 + 2.0**-32

Sums = tuple[np.ndarray, np.ndarray, np.ndarray]


def output_sums(chunks: Iterable[Sums], ids: np.ndarray) -> Iterator[Sums]:
    """``(first query of each, curves charged, curves if every token were charged in full)``
    of the outputs, in order and a batch at a time, from ``chunks`` ``(first query, actual,
    full)`` of consecutive queries (``(queries, orders)`` curves); ``ids``: each query's
    output."""
    pending = None  # the output the last chunk ended in: it may go on in the next one
    for start, actual, full in chunks:
        firsts = np.flatnonzero(np.concatenate(
            ([True], np.diff(ids[start : start + actual.shape[0]]) != 0)))
        sums = (start + firsts, np.add.reduceat(actual, firsts, axis=0),
                np.add.reduceat(full, firsts, axis=0))
        if pending is not None and ids[start - 1] == ids[start]:  # the output goes on
            sums[0][0] = pending[0][0]
            sums[1][0] += pending[1][0]
            sums[2][0] += pending[2][0]
        elif pending is not None:
            yield pending
        if firsts.size > 1:
            yield sums[0][:-1], sums[1][:-1], sums[2][:-1]
        pending = sums[0][-1:], sums[1][-1:], sums[2][-1:]
    if pending is not None:
        yield pending


def first_output_over(sums: Iterable[Sums], carry: np.ndarray, conversion: Conversion,
                      budget: float) -> int | None:
    """The first query of the first output of ``sums`` (:func:`output_sums`) that could take
    the total above ``budget``: the outputs before it as charged plus its tokens charged in
    full (so a generation is never cut mid-sequence), after ``carry``; None if all fit."""
    for first_query, actual, full in sums:
        spent = np.cumsum(np.concatenate((carry[None, :], actual)), axis=0)
        over = conversion.epsilon((spent[:-1] + full) * HALT_MARGIN)[0] > budget
        if over.any():
            return int(first_query[int(np.argmax(over))])
        carry = spent[-1]
    return None
