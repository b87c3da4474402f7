"""``np.sum``'s bits for values that arrive a piece at a time.

numpy sums a contiguous float64 array pairwise (``pairwise_sum`` in numpy's
``loops_utils.h.src``): runs longer than 128 values are cut in two at a multiple of 8 and
summed apart, shorter ones with eight accumulators over their blocks of 8. The summary's
``answered`` under expected accounting is ``np.sum`` of the ``pr_answered`` column before
an individualized run's stop; a run that keeps no column gets the same bits here, from
the chunks replayed one after another, holding one chunk and a stack of partial sums.
"""

from __future__ import annotations

import numpy as np

# Blocks of up to this many values are summed with eight accumulators.
_PAIRWISE_BLOCK = 128


def pairwise_sum(count: int, pieces) -> float:
    """``float(np.sum(values[:count]))`` of the values ``pieces`` (an iterator of 1-D
    float64 arrays) give one after another, the same bits, holding one piece and a stack
    of partial sums: numpy sums a contiguous array pairwise (halves cut at a multiple of
    8, blocks of at most 128 values with eight accumulators), and this follows the same
    tree. Takes only the pieces it needs."""
    held: list[np.ndarray] = []
    have = 0
    source = iter(pieces)

    def take(size: int) -> np.ndarray:
        nonlocal have
        while have < size:
            piece = np.asarray(next(source), dtype=np.float64)
            held.append(piece)
            have += piece.size
        joined = held[0] if len(held) == 1 else np.concatenate(held)
        held[:] = [joined[size:]]
        have -= size
        return joined[:size]

    def tree(size: int) -> float:
        if size <= _PAIRWISE_BLOCK:
            return _block_sum(take(size))
        half = size // 2
        half -= half % 8
        return tree(half) + tree(size - half)

    try:
        return tree(count) if count > 0 else 0.0
    finally:  # here, not when the garbage collector finds the closures' cycle: a
        # generator of chunks formed on threads joins them when closed (on one of them,
        # it would wait for itself)
        close = getattr(source, "close", None)
        if close is not None:
            close()


def _block_sum(values: np.ndarray) -> float:
    """numpy's sum of at most 128 values: fewer than 8 one after another, else eight
    accumulators over the blocks of 8, combined in pairs, then the rest one by one."""
    size = values.size
    if size < 8:
        total = 0.0
        for value in values.tolist():
            total += value
        return total
    whole = size - size % 8
    blocks = values[:whole].reshape(-1, 8)
    acc = blocks[0].copy()
    for row in blocks[1:]:
        acc += row
    a = acc.tolist()
    total = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
    for value in values[whole:].tolist():
        total += value
    return total
