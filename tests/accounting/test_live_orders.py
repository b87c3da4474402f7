"""Running sums at the live orders only (accounting.live_orders): the figures of every
order, bit for bit, while orders that can no longer give the minimum are dropped."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.composition import StepRows, running_epsilon
from pate_cli.accounting.conversion import Conversion
from pate_cli.accounting.live_orders import (
    LiveOrders,
    epsilon_ceiling,
    live_running_epsilon,
)
from pate_cli.orders import default_orders

deltas = st.sampled_from([1e-3, 1e-5, 1e-8, 0.1])


def _pieces(rng, queries: int, orders: np.ndarray, scale: float) -> list[StepRows]:
    """Random per-query curves (non-negative, about ``scale`` per query at order 2 and
    growing with the order) in pieces of random sizes."""
    answer = scale * orders / 2 * rng.uniform(0.0, 1.0, size=(30, orders.size)) ** 3
    answer[rng.random(answer.shape) < 0.05] = 0.0
    selection = scale * 1e-3 * orders * rng.uniform(0.0, 1.0, size=(4, 1))
    cuts = np.unique(np.concatenate(([0, queries], rng.integers(0, queries, 6),
                                    np.arange(0, queries, 250))))
    return [StepRows(selection, rng.integers(0, 4, hi - lo), answer,
                     rng.integers(0, 30, hi - lo), rng.uniform(0.0, 1.0, hi - lo))
            for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]


def _every_order(pieces, carry, setting, restarts=None):
    """The reference: running sums at every order, piece after piece."""
    epsilons, orders_index = [], []
    for number, costs in enumerate(pieces):
        if restarts and number in restarts:
            carry = restarts[number]
        figures = running_epsilon(costs, costs.count, carry, setting)
        carry = figures.carry
        epsilons.append(figures.epsilon)
        orders_index.append(figures.order_index)
    return np.concatenate(epsilons), np.concatenate(orders_index), carry


def _live(pieces, carry, setting, ceiling, *, ahead: int, restarts=None, mixed=False):
    """The same run with LiveOrders, each piece's curves formed ``ahead`` pieces early
    (at the orders live then) or at every order (``ahead`` < 0; with ``mixed``, every
    third piece: a table whose own epsilons could not be looked up); the live counts."""
    every = np.arange(setting.offset.size)
    sums = LiveOrders(setting, ceiling, lambda number, columns: pieces[number].at_orders(columns))
    sums.restart(carry)
    snapshots = [every] * len(pieces)
    epsilons, orders_index, live = [], [], []
    figures = None
    for number, costs in enumerate(pieces):
        if restarts and number in restarts:
            sums.restart(restarts[number])
        if ahead >= 0 and number + ahead < len(pieces):
            snapshots[number + ahead] = sums.live
        columns = snapshots[number] if ahead >= 0 else every
        if ahead >= 0 and mixed and number % 3 == 2:  # formed again at every order
            columns = every
        figures = sums.running(number, costs.at_orders(columns), columns, costs.count)
        epsilons.append(figures.epsilon)
        orders_index.append(figures.order_index)
        live.append(sums.live.size)
    _live.carry = None if figures is None else figures.carry  # after the last piece
    return np.concatenate(epsilons), np.concatenate(orders_index), live


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), queries=st.integers(1, 600),
       conversion=st.sampled_from(["classic", "improved"]), delta=deltas,
       scale=st.sampled_from([1e-6, 1e-3, 0.1, 3.0]), ahead=st.integers(-1, 3),
       start=st.booleans(), restart=st.booleans())
def test_live_orders_give_the_figures_of_every_order(seed, queries, conversion, delta, scale,
                                                     ahead, start, restart):
    rng = np.random.default_rng(seed)
    orders = default_orders()
    setting = Conversion.of(orders=orders, delta=delta, conversion=conversion)
    pieces = _pieces(rng, queries, orders, scale)
    carry = rng.uniform(0, scale, orders.size) * orders if start else np.zeros(orders.size)
    restarts = None
    if restart and len(pieces) > 2:  # a budget run's block start: sums from a given carry
        before = np.concatenate([costs.block(0, costs.count) for costs in pieces[:2]])
        restarts = {2: carry + np.sum(before[::-1], axis=0)}  # summed another way
    epsilon, order_index, total = _every_order(pieces, carry, setting, restarts)
    # the total as another summation gives it (pairwise, in another order)
    rows = np.concatenate([costs.block(0, costs.count) for costs in pieces])
    other = carry + np.sum(rows[::-1], axis=0)
    ceiling = epsilon_ceiling(other, queries + 1, setting)
    assert epsilon.max() <= ceiling
    live_epsilon, live_index, _ = _live(pieces, carry, setting, ceiling, ahead=ahead,
                                        restarts=restarts)
    np.testing.assert_array_equal(live_epsilon, epsilon)
    np.testing.assert_array_equal(live_index, order_index)


def test_orders_die_as_the_sums_grow_and_the_figures_stay():
    """A long run: most orders are dropped, the figures are those of every order."""
    rng = np.random.default_rng(3)
    orders = default_orders()
    setting = Conversion.of(orders=orders, delta=1e-5)
    pieces = _pieces(rng, 3000, orders, 0.05)
    carry = np.zeros(orders.size)
    epsilon, order_index, total = _every_order(pieces, carry, setting)
    ceiling = epsilon_ceiling(total, 3001, setting)
    live_epsilon, live_index, live = _live(pieces, carry, setting, ceiling, ahead=2)
    assert live[-1] < orders.size // 10, live
    np.testing.assert_array_equal(live_epsilon, epsilon)
    np.testing.assert_array_equal(live_index, order_index)


@pytest.mark.parametrize("ahead,mixed", [(-1, False), (0, False), (2, False), (2, True)])
def test_a_negative_curve_brings_the_dead_orders_back(ahead, mixed):
    """A piece whose curves are not all non-negative voids the floor: the dead orders'
    sums are brought up to date from the pieces they lack (formed again), and the
    figures and the sums after the last piece are those of every order."""
    rng = np.random.default_rng(5)
    orders = default_orders()
    setting = Conversion.of(orders=orders, delta=1e-5)
    pieces = _pieces(rng, 3000, orders, 0.05)
    late = pieces[-1]
    answer = late.answer.copy()
    answer[0] = -1e-3  # (never an RDP curve: the guard's case), for the first query
    first = late.answer_index.copy()
    first[0] = 0
    pieces[-1] = StepRows(late.selection, late.selection_index, answer, first, late.weight)
    carry = np.zeros(orders.size)
    epsilon, order_index, total = _every_order(pieces, carry, setting)
    ceiling = epsilon_ceiling(np.abs(total), 3001, setting)
    live_epsilon, live_index, live = _live(pieces, carry, setting, ceiling, ahead=ahead,
                                           mixed=mixed)
    assert min(live[:-1]) < orders.size // 2 and live[-1] == orders.size
    np.testing.assert_array_equal(live_epsilon, epsilon)
    np.testing.assert_array_equal(live_index, order_index)
    np.testing.assert_array_equal(_live.carry, total)


@pytest.mark.parametrize("ahead", [0, 1, 3])
def test_after_a_restart_pieces_formed_before_it_are_formed_again(ahead):
    """A budget run's block start gives every order's sum again: pieces formed ahead
    with fewer orders are formed again at the live ones, and the figures stay."""
    rng = np.random.default_rng(8)
    orders = default_orders()
    setting = Conversion.of(orders=orders, delta=1e-5)
    pieces = _pieces(rng, 3000, orders, 0.05)
    middle = len(pieces) // 2
    before = np.concatenate([costs.block(0, costs.count) for costs in pieces[:middle]])
    restarts = {middle: np.sum(before[::-1], axis=0) * 0.25}  # less spent: orders live again
    carry = np.zeros(orders.size)
    epsilon, order_index, total = _every_order(pieces, carry, setting, restarts)
    ceiling = epsilon_ceiling(total + restarts[middle], 3001, setting)
    live_epsilon, live_index, live = _live(pieces, carry, setting, ceiling, ahead=ahead,
                                           restarts=restarts)
    assert live[middle - 1] < live[middle], live
    np.testing.assert_array_equal(live_epsilon, epsilon)
    np.testing.assert_array_equal(live_index, order_index)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), queries=st.integers(1, 3000),
       conversion=st.sampled_from(["classic", "improved"]), delta=deltas,
       scale=st.floats(1e-12, 1e3))
def test_the_ceiling_bounds_every_cumulative_epsilon(seed, queries, conversion, delta, scale):
    """Whatever order the total was added in, no running sum converts above the
    ceiling."""
    rng = np.random.default_rng(seed)
    orders = default_orders()
    setting = Conversion.of(orders=orders, delta=delta, conversion=conversion)
    rows = scale * orders * rng.uniform(0, 1, (queries, orders.size)) ** 4
    figures = running_epsilon(StepRows(np.zeros((1, orders.size)), np.zeros(queries, np.intp),
                                       rows, np.arange(queries), np.ones(queries)),
                              queries, np.zeros(orders.size), setting)
    total = np.sum(rows[rng.permutation(queries)], axis=0)
    assert figures.epsilon.max() <= epsilon_ceiling(total, queries + 1, setting)


def test_without_a_total_no_order_dies():
    setting = Conversion.of(orders=default_orders(), delta=1e-5)
    total = np.full(setting.offset.size, np.nan)
    assert np.isnan(epsilon_ceiling(total, 10, setting))
    sums = LiveOrders(setting, epsilon_ceiling(total, 10, setting), None)
    sums.restart(np.full(setting.offset.size, 1e6))
    rows = StepRows(np.zeros((1, setting.offset.size)), np.zeros(3, np.intp),
                    np.ones((1, setting.offset.size)), np.zeros(3, np.intp), np.ones(3))
    sums.running(0, rows, np.arange(setting.offset.size), 3)
    assert sums.live.size == setting.offset.size


def _joined(pieces) -> StepRows:
    """One ``StepRows`` of the pieces' queries, in order."""
    selection = pieces[0].selection
    answer = pieces[0].answer
    return StepRows(selection, np.concatenate([p.selection_index for p in pieces]), answer,
                    np.concatenate([p.answer_index for p in pieces]),
                    np.concatenate([p.weight for p in pieces]))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), queries=st.integers(1, 2000),
       conversion=st.sampled_from(["classic", "improved"]), delta=deltas,
       scale=st.sampled_from([1e-6, 1e-3, 0.1, 3.0]), start=st.booleans())
def test_live_running_epsilon_gives_the_figures_of_every_order(seed, queries, conversion,
                                                               delta, scale, start):
    """Under a ceiling on every figure, the figures (and the sums at the orders still
    formed) are those of every order; an order left out holds a sum at most its own, and
    the sums convert to the final figure; under a ``limit``, the figures up to the first
    above it and the last, the rest +inf."""
    rng = np.random.default_rng(seed)
    orders = default_orders()
    setting = Conversion.of(orders=orders, delta=delta, conversion=conversion)
    costs = _joined(_pieces(rng, queries, orders, scale))
    carry = rng.uniform(0, scale, orders.size) * orders if start else np.zeros(orders.size)
    every = running_epsilon(costs, queries, carry, setting)
    ceiling = epsilon_ceiling(every.carry, queries + 1, setting)
    live = live_running_epsilon(costs.at_orders, queries, carry, setting, ceiling)
    np.testing.assert_array_equal(live.epsilon, every.epsilon)
    np.testing.assert_array_equal(live.order_index, every.order_index)
    assert np.all(live.carry <= every.carry)
    final = ~setting.beyond(live.carry, ceiling)
    np.testing.assert_array_equal(live.carry[final], every.carry[final])
    (epsilon, order), (expected, expected_order) = (setting.epsilon(live.carry),
                                                    setting.epsilon(every.carry))
    assert epsilon == expected and order == expected_order
    limit = every.epsilon[rng.integers(queries)] if rng.random() < 0.8 else -np.inf
    limited = live_running_epsilon(costs.at_orders, queries, carry, setting, ceiling, limit)
    read = np.flatnonzero(limited.epsilon != np.inf)  # every figure <= limit, the first above
    assert read[-1] == queries - 1 and np.all(every.epsilon[:-1][limited.epsilon[:-1] == np.inf]
                                              > limit)
    np.testing.assert_array_equal(limited.epsilon[read], every.epsilon[read])
    np.testing.assert_array_equal(limited.order_index[read], every.order_index[read])
    np.testing.assert_array_equal(limited.carry, live.carry)


def test_live_running_epsilon_drops_orders_and_never_goes_below_under_a_low_ceiling():
    """A long run leaves most orders out; a ceiling below the figures (a caller's error)
    gives figures from fewer orders: never below those of every order."""
    rng = np.random.default_rng(4)
    orders = default_orders()
    setting = Conversion.of(orders=orders, delta=1e-5)
    costs = _joined(_pieces(rng, 3000, orders, 0.05))
    every = running_epsilon(costs, 3000, np.zeros(orders.size), setting)
    formed = []

    def source_at(columns):
        formed.append(columns.size)
        return costs.at_orders(columns)

    live_running_epsilon(source_at, 3000, np.zeros(orders.size), setting,
                         epsilon_ceiling(every.carry, 3001, setting))
    assert formed[0] == orders.size and formed[-1] < orders.size // 10, formed
    low = live_running_epsilon(costs.at_orders, 3000, np.zeros(orders.size), setting,
                               every.epsilon[1500])
    assert np.all(low.epsilon >= every.epsilon)
    np.testing.assert_array_equal(low.epsilon[:1500], every.epsilon[:1500])
