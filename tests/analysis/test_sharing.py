"""Work shared across runs (issue 14 item 7, ``analysis.run.SharedWork``): a sweep's points reuse
noise blocks and curves, passed to them explicitly (``SharedWork``), and not one bit of
any point changes."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.gnmax import rdp_gnmax
from pate_cli.accounting.grouped import weighted_curve_sum
from pate_cli.analysis import analyze_totals
from pate_cli.analysis.run import SharedWork
from pate_cli.analysis.steps import _answer_rdp
from pate_cli.curve_store import SharedCurves
from pate_cli.mechanisms import build_mechanism
from pate_cli.mechanisms.noise import NoiseSource, SharedBlocks
from pate_cli.orders import default_orders
from tests.synthetic import synthetic_votes

GRID = [dict(sigma=sigma, threshold=threshold, sigma_threshold=sigma_threshold)
        for sigma in (20.0, 35.0) for threshold in (30.0, 38.0)
        for sigma_threshold in (8.0, 15.0)]


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
@pytest.mark.parametrize("name", ["confident", "gnmax"])
def test_points_computed_with_sharing_are_the_points_computed_alone(name, accounting):
    votes, truth = synthetic_votes(queries=3_000)
    grid = GRID if name == "confident" else [dict(sigma=p["sigma"]) for p in GRID[::4]]

    def sweep(shared):
        return [analyze_totals(votes, build_mechanism(name, teachers=50, **point),
                               seeds=range(3), accounting=accounting, labels=truth,
                               shared=shared)
                for point in grid]

    alone = sweep(None)
    shared = SharedWork(64 << 20, 64 << 20)
    first, served = sweep(shared), sweep(shared)  # the second pass: served from what was kept
    assert first == alone and served == alone
    kept = shared.curves._bytes
    assert kept > 0 if accounting != "data-independent" else kept == 0
    assert shared.noise._bytes > 0


def test_noise_blocks_are_kept_read_only_and_only_where_passed():
    blocks = SharedBlocks(64 << 20)
    once = NoiseSource(7, shared=blocks).draw(stream=2, kind="normal", start=0, count=2_000,
                                              width=3)
    again = NoiseSource(7, shared=blocks).draw(stream=2, kind="normal", start=0, count=2_000,
                                               width=3)
    alone = NoiseSource(7).draw(stream=2, kind="normal", start=0, count=2_000, width=3)
    np.testing.assert_array_equal(once, again)
    np.testing.assert_array_equal(once, alone)
    kept = blocks.get((7, 0, 2, "normal", 3, 0))
    assert kept is not None and not kept.flags.writeable
    assert SharedBlocks(0).get((7, 0, 2, "normal", 3, 0)) is None


def test_the_noise_kept_stays_within_its_limit():
    blocks = SharedBlocks(3 * 1024 * 8)  # room for three blocks of width 1
    NoiseSource(1, shared=blocks).draw(stream=1, kind="normal", start=0, count=10 * 1024)
    assert blocks._bytes <= 3 * 1024 * 8
    assert len(blocks._blocks) == 3
    # the most recent blocks are the ones kept
    assert blocks.get((1, 0, 1, "normal", 1, 9)) is not None
    assert blocks.get((1, 0, 1, "normal", 1, 0)) is None


@settings(max_examples=40, deadline=None)
@given(wanted=st.lists(st.lists(st.floats(-30.0, -1e-3), min_size=1, max_size=40,
                                unique=True), min_size=1, max_size=6),
       sigma=st.sampled_from([5.0, 40.0]))
def test_served_curves_are_the_bits_evaluated_afresh(wanted, sigma):
    orders = default_orders()
    store = SharedCurves()
    store.limit = 1 << 20
    function = store.serving(partial_rdp(sigma), orders)
    for keys in wanted:
        keys = np.sort(np.asarray(keys))
        np.testing.assert_array_equal(function(keys, orders),
                                      rdp_gnmax(keys, sigma=sigma, orders=orders))
    assert store._bytes <= store.limit


def partial_rdp(sigma):
    return partial(_answer_rdp, "gaussian", sigma)


def test_what_is_shared_and_what_is_not():
    orders = np.array([2.0, 8.0])
    store = SharedCurves()
    store.limit = 10 * (16 + 16)  # ten rows of two orders with their index entries
    def plain(keys, at_orders):
        return np.zeros((keys.size, at_orders.size))
    assert store.serving(plain, orders) is plain  # no value to name it by
    off = SharedCurves()
    assert off.serving(partial_rdp(3.0), orders).func is _answer_rdp  # sharing off
    for sigma in (3.0, 4.0, 5.0):
        store.serving(partial_rdp(sigma), orders)(np.linspace(-5, -1, 4), orders)
    # each function's four rows take 128 bytes: the oldest function made room
    assert store._bytes <= store.limit
    assert len(store._entries) == 2


def test_kept_pieces_are_found_through_one_sorted_index():
    orders = np.array([2.0, 8.0])
    store = SharedCurves(1 << 20)
    function = store.serving(partial_rdp(3.0), orders)
    keys = -np.arange(1.0, 65.0)[::-1]
    for key in keys:  # 64 evaluations of one new key each
        function(np.array([key]), orders)
    (kept,) = store._entries.values()
    assert len(kept.pieces) == 64 and np.array_equal(kept.index[0], keys)  # sorted
    np.testing.assert_array_equal(function(keys, orders),
                                  rdp_gnmax(keys, sigma=3.0, orders=orders))
    assert len(kept.pieces) == 64  # all served: nothing evaluated or kept again


CALLS: list[int] = []


def _counted_curve(sigma, keys, orders):
    CALLS.append(keys.size)
    return rdp_gnmax(keys, sigma=sigma, orders=orders)


def test_curves_served_from_what_a_run_kept_are_the_bits_evaluated_afresh():
    """A per-query run keeps its chunks' curves for its totals (``analysis.run``)."""
    orders = np.array([1.5, 2.0, 5.0, 20.0, 100.0])
    rng = np.random.default_rng(4)
    keys = np.sort(rng.uniform(-60, -0.01, 3000))
    weights = rng.uniform(0, 2, keys.size)
    fresh = weighted_curve_sum(keys, weights, partial(_answer_rdp, "gaussian", 4.0), orders)
    kept = SharedCurves(1200 * (orders.size + 1) * 8)  # room for some pieces only
    function = kept.serving(partial(_counted_curve, 4.0), orders)
    for piece in np.array_split(rng.permutation(keys), 5):  # the run's chunks
        function(np.sort(piece), orders)
    assert kept._bytes <= kept.limit
    CALLS.clear()
    served = weighted_curve_sum(keys, weights, function, orders)
    np.testing.assert_array_equal(served, fresh)
    assert 0 < sum(CALLS) < keys.size  # some rows from what was kept, the rest evaluated


def test_some_of_the_orders_are_served_from_the_kept_columns_and_nothing_new_is_kept():
    """A block summed partly by quadrature asks for the curves of some orders only
    (``accounting.grouped.block_sum``): kept rows give those columns, the others are
    evaluated at those orders and not kept (the store holds whole curves only)."""
    orders = default_orders()
    keys = np.sort(np.random.default_rng(6).uniform(-30.0, -0.1, 200))
    store = SharedCurves(10**7)
    function = store.serving(partial(_counted_curve, 9.0), orders)
    function(keys[::2].copy(), orders)  # half of the keys kept
    (kept,) = store._entries.values()
    held = kept.nbytes
    some = orders[[0, 5, 197, 198, 297]]  # 100 twice in the grid: either column serves
    CALLS.clear()
    np.testing.assert_array_equal(function(keys, some), rdp_gnmax(keys, sigma=9.0, orders=some))
    assert CALLS == [100] and kept.nbytes == held
    other = np.array([2.25])  # not one of the orders: evaluated, nothing served or kept
    np.testing.assert_array_equal(function(keys, other), rdp_gnmax(keys, sigma=9.0, orders=other))
    assert CALLS == [100, 200] and kept.nbytes == held


def test_a_reader_between_any_two_steps_of_add_sees_one_whole_index():
    """Readers run outside the lock while another thread adds: every state an ``add`` goes
    through (each attribute it sets, each piece it appends) answers every key either with
    its own curve or not at all, never with another key's row."""
    from pate_cli import curve_store

    orders = np.array([2.0, 8.0, 32.0])
    seen = []

    def check(kept):
        wanted = -np.arange(1.0, 40.0) / 3
        hit = kept.rows_of(wanted)
        if hit is not None:
            found, piece, row = hit
            got = np.stack([kept.pieces[p][r] for p, r in zip(piece, row, strict=True)])
            np.testing.assert_array_equal(
                got, rdp_gnmax(wanted[found], sigma=3.0, orders=orders))
        seen.append(0 if hit is None else hit[0].size)

    class Watched(list):
        def append(self, item):
            super().append(item)
            check(owner[0])

    class Observed(curve_store._Kept):
        def __init__(self):
            super().__init__()
            self.pieces = Watched(self.pieces)
            object.__setattr__(self, "ready", True)

        def __setattr__(self, name, value):
            object.__setattr__(self, name, value)
            if getattr(self, "ready", False):
                check(self)

    owner = [Observed()]
    for lo in range(1, 40, 7):  # pieces of 7 keys, interleaved with the kept ones
        keys = np.sort(-np.arange(lo, min(40, lo + 7), dtype=np.float64) / 3)
        owner[0].add(keys, rdp_gnmax(keys, sigma=3.0, orders=orders))
    assert seen[-1] == 39 and len(seen) >= 12  # every step was looked at


def test_a_call_that_finds_few_of_its_keys_kept_evaluates_them_all():
    """Fewer than an eighth of the keys kept (token votes, whose log q rarely repeat from
    one chunk to the next): the curves are evaluated in one array, not copied row by row
    into another beside it, the same bits; with an eighth or more, the kept rows serve."""
    orders = default_orders()
    keys = np.sort(np.random.default_rng(8).uniform(-30.0, -0.1, 800))
    store = SharedCurves(10**8)
    function = store.serving(partial(_counted_curve, 9.0), orders)
    function(keys[:90].copy(), orders)  # 90 of the 800 kept: fewer than an eighth
    CALLS.clear()
    np.testing.assert_array_equal(function(keys, orders), rdp_gnmax(keys, sigma=9.0,
                                                                    orders=orders))
    assert CALLS == [800]
    CALLS.clear()
    wanted = np.sort(np.concatenate((keys[:200], keys[-600:] + 1e-3)))  # 200 of 800 kept
    np.testing.assert_array_equal(function(wanted, orders), rdp_gnmax(wanted, sigma=9.0,
                                                                      orders=orders))
    assert CALLS == [600]
