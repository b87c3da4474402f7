"""The composition kernel's pieces: each query's own epsilon (``query_epsilons``) is its
row converted alone (``rdp_to_epsilon``), and the per-step and running sums."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.composition import (
    ArrayRows,
    StepRows,
    query_epsilons,
    running_epsilon,
    running_total,
)
from pate_cli.accounting.conversion import Conversion, rdp_to_epsilon
from pate_cli.orders import default_orders

deltas = st.sampled_from([1e-3, 1e-5, 1e-8, 0.1])



@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), queries=st.integers(1, 1500),
       conversion=st.sampled_from(["classic", "improved"]), delta=deltas,
       zeros=st.booleans())
def test_query_epsilons_are_each_rows_own_conversion(seed, queries, conversion, delta, zeros):
    """A chunk's own epsilons, formed a work slice at a time in one reused buffer, are
    each row converted alone (``rdp_to_epsilon``), bit for bit, with 0/1 weights too."""
    rng = np.random.default_rng(seed)
    orders = default_orders()
    answer = np.cumsum(rng.exponential(rng.uniform(1e-9, 0.5), size=(40, orders.size)), axis=1)
    selection = np.cumsum(rng.exponential(1e-4, size=(5, orders.size)), axis=1)
    weight = (rng.integers(0, 2, queries).astype(float) if zeros
              else rng.uniform(0.0, 1.0, queries))
    rows = StepRows(selection, rng.integers(0, 5, queries), answer,
                    rng.integers(0, 40, queries), weight)
    setting = Conversion.of(orders=orders, delta=delta, conversion=conversion)
    alone = [float(rdp_to_epsilon(rows.block(q, q + 1)[0], orders=orders, delta=delta,
                                  conversion=conversion)[0]) for q in range(queries)]
    np.testing.assert_array_equal(query_epsilons(rows, queries, setting), alone)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), queries=st.integers(1, 1500))
def test_one_step_alone_sums_to_its_own_cumulative_sum(seed, queries):
    """``StepRows.step``: a step's curves alone, the other's zero: its running total is
    the cumulative sum of that step's (weighted) curves, bit for bit, over several work
    slices (the per-step sums a budget run reports, ``rdp_at_order``)."""
    rng = np.random.default_rng(seed)
    orders = default_orders()
    answer = rng.exponential(0.3, size=(40, orders.size))
    selection = rng.exponential(1e-3, size=(5, orders.size))
    rows = StepRows(selection, rng.integers(0, 5, queries), answer,
                    rng.integers(0, 40, queries), rng.uniform(0.0, 1.0, queries))
    carry = rng.exponential(1.0, orders.size)
    alone = {"selection": selection[rows.selection_index],
             "answer": answer[rows.answer_index] * rows.weight[:, None]}
    for name, curves in alone.items():
        expected = np.cumsum(np.vstack([carry[None, :] + curves[:1], curves[1:]]), axis=0)[-1]
        np.testing.assert_array_equal(running_total(rows.step(name), queries, carry), expected)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), conversion=st.sampled_from(["classic", "improved"]),
       delta=deltas, scale=st.sampled_from([1e-12, 1e-6, 1e-2, 1.0, 30.0]))
def test_an_order_beyond_the_ceiling_never_gives_an_epsilon_at_or_below_it(
        seed, conversion, delta, scale):
    """The one pruning rule (``Conversion.beyond``): at an order it marks, every sum at
    or above the floor converts above the ceiling; an unmarked order is one where the
    floor itself may convert at or below it (so pruning only ever skips what cannot win)."""
    orders = default_orders()
    setting = Conversion.of(orders=orders, delta=delta, conversion=conversion)
    rng = np.random.default_rng(seed)
    floor = rng.exponential(scale, orders.size) * rng.integers(0, 2, orders.size)
    ceiling = float(rng.uniform(0.0, 2.0) * (floor + setting.offset).min() + rng.uniform(0, 3))
    beyond = setting.beyond(floor, ceiling)
    sums = floor + rng.exponential(scale, (20, orders.size))  # later sums only grow
    for k in range(orders.size):
        alone = setting.at_orders(np.array([k]))
        values = alone.epsilon(np.vstack([floor[None, k:k + 1], sums[:, k:k + 1]]))[0]
        if beyond[k]:
            assert np.all(values > ceiling)
        else:  # the floor itself converts at or below the ceiling (or at 0, improved)
            assert values[0] <= (max(ceiling, 0.0) if setting.clip else ceiling)


def test_nan_is_never_beyond():
    setting = Conversion.of(orders=default_orders()[:3], delta=1e-5)
    assert not setting.beyond(np.array([np.nan, 1.0, 1e9]), np.nan).any()
    assert list(setting.beyond(np.array([np.nan, 1.0, 1e9]), 50.0)) == [False, False, True]


def test_skipped_orders_leave_the_order_of_a_zero_epsilon_alone():
    """Improved conversion, tiny curves: the figure is 0 where an order's sum is within the
    total-variation shortcut, or clipped. An order whose converted sum lies between the
    smallest converted total (of an order the shortcut sets to 0) and 0 may be the one
    reported: the orders skipped must not include it (the order reported changed at the
    last query of a block)."""
    rng = np.random.default_rng(0)
    orders = default_orders()
    conversion = Conversion.of(orders=orders, delta=0.1, conversion="improved")
    rows = 1e-6 * orders / 2 * rng.uniform(0.0, 1.0, size=(1318, orders.size)) ** 3
    figures = running_epsilon(ArrayRows(rows), rows.shape[0], np.zeros(orders.size),
                              conversion)
    expected, order = conversion.epsilon(np.cumsum(rows, axis=0))
    np.testing.assert_array_equal(figures.epsilon, expected)
    np.testing.assert_array_equal(figures.order_index, order)


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), runs=st.integers(1, 12), queries=st.integers(1, 40),
       conversion=st.sampled_from(["classic", "improved"]), delta=deltas,
       scale=st.sampled_from([1e-9, 1e-4, 1e-2, 1.0]), width=st.sampled_from([1, 2, 298]))
def test_several_runs_skip_orders_with_the_bits_of_every_order(
        seed, runs, queries, conversion, delta, scale, width):
    """``cumulative_epsilon`` over ``(runs, queries, orders)`` non-negative rows (the
    members of a vanishing run) forms the running sums at the orders some run may need
    only: the epsilons, first minimising orders and sums after are those of every order
    summed and converted, bit for bit, idle runs (zero rows) and single columns too."""
    from pate_cli.accounting.composition import cumulative_epsilon

    rng = np.random.default_rng(seed)
    orders = default_orders()[np.sort(rng.choice(298, width, replace=False))]
    setting = Conversion.of(orders=orders, delta=delta, conversion=conversion)
    rows = rng.exponential(scale, (runs, queries, orders.size)) * orders / 10
    rows *= rng.integers(0, 2, (runs, queries, 1))  # some queries a run does not pay
    carry = rng.exponential(scale * rng.uniform(0, 50), (runs, orders.size))
    sums = np.cumsum(np.concatenate([carry[:, None] + rows[:, :1], rows[:, 1:]], axis=1),
                     axis=1)
    expected, best = setting.epsilon(sums.copy())
    epsilon, order, after = cumulative_epsilon(rows.copy(), carry, setting)
    np.testing.assert_array_equal(epsilon, expected)
    np.testing.assert_array_equal(order, best)
    np.testing.assert_array_equal(after, sums[:, -1])
