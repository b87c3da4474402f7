"""``analysis.pairwise_sum``: ``np.sum``'s bits for values that arrive in pieces."""

from __future__ import annotations

import gc
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.analysis.pairwise_sum import pairwise_sum


def _pieces(values: np.ndarray, cuts: list[int]):
    edges = [0, *sorted(set(min(c, values.size) for c in cuts)), values.size]
    return (values[lo:hi] for lo, hi in zip(edges, edges[1:], strict=False))


@settings(max_examples=300, deadline=None)
@given(size=st.integers(0, 3000), seed=st.integers(0, 2**32 - 1),
       cuts=st.lists(st.integers(0, 3000), max_size=12), data=st.data())
def test_the_bits_of_np_sum_over_any_pieces(size, seed, cuts, data):
    rng = np.random.default_rng(seed)
    values = rng.random(size) * 10.0 ** rng.integers(-8, 8, size)  # rounding matters
    count = data.draw(st.integers(0, size))
    assert pairwise_sum(count, _pieces(values, cuts)) == float(np.sum(values[:count]))


def test_takes_only_the_pieces_it_needs():
    taken = []

    def pieces():
        for number in range(10):
            taken.append(number)
            yield np.ones(100)
    assert pairwise_sum(250, pieces()) == 250.0
    assert taken == [0, 1, 2]


def test_the_order_of_additions_is_numpys():
    """1e16 then fifteen 1s (1e16 + 1 rounds to 1e16, ties to even): one after another
    each 1 is lost (1e16), the exact sum rounds to 1e16 + 16; numpy's eight accumulators
    over the two blocks of 8 hold 1e16 and seven 2s, combined in pairs: 1e16 + 14."""
    values = np.array([1e16] + [1.0] * 15)
    by_hand = (((1e16 + 1.0) + 2.0) + (2.0 + 2.0)) + ((2.0 + 2.0) + (2.0 + 2.0))
    assert by_hand == 1e16 + 14
    assert pairwise_sum(16, iter([values[:3], values[3:]])) == by_hand == float(np.sum(values))
    one_after_another = 0.0
    for value in values.tolist():
        one_after_another += value
    assert one_after_another == 1e16 and math.fsum(values) == 1e16 + 16


def test_closes_the_pieces_it_leaves():
    """A source left part-way is closed on return, not when the garbage collector finds
    it (on whatever thread: a source forming chunks on a pool would then join itself)."""
    closed = []

    def pieces():
        try:
            for _ in range(10):
                yield np.ones(100)
        finally:
            closed.append(True)
    gc.disable()
    try:
        assert pairwise_sum(250, pieces()) == 250.0
        assert closed == [True]
    finally:
        gc.enable()
