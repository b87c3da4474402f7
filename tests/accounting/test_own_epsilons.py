"""Each query's own epsilon looked up per distinct statistic pair
(accounting.own_epsilons): the bits its own row gives, converted over every order."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting import own_epsilons
from pate_cli.accounting.composition import StepRows, query_epsilons
from pate_cli.accounting.conversion import Conversion
from pate_cli.accounting.gnmax import rdp_gnmax
from pate_cli.accounting.grouped import GroupedCounts
from pate_cli.accounting.laplace import rdp_lnmax
from pate_cli.accounting.own_epsilons import OwnEpsilons
from pate_cli.accounting.threshold import rdp_threshold
from pate_cli.orders import default_orders

GRIDS = {"default": default_orders(), "short": np.array([1.5, 2.0, 4.0, 8.0, 32.0]),
         "one": np.array([3.0]), "fine": np.linspace(1.01, 80.0, 500)}


def _rows(answer, selection, weight, answer_rdp, selection_rdp, orders) -> StepRows:
    """The per-query curves as a chunk forms them (``steps.step_curves``)."""
    answer_keys, answer_index = np.unique(answer, return_inverse=True)
    selection_keys, selection_index = np.unique(selection, return_inverse=True)
    selection_curves = (np.zeros((1, orders.size)) if selection_rdp is None
                        else selection_rdp(selection_keys, orders))
    if selection_rdp is None:
        selection_index = np.zeros(answer.size, dtype=np.intp)
    return StepRows(selection_curves, selection_index.reshape(-1),
                    answer_rdp(answer_keys, orders), answer_index.reshape(-1), weight)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), queries=st.integers(1, 3000),
       step=st.sampled_from(["gnmax", "confident", "lnmax"]),
       expected=st.booleans(), grid=st.sampled_from(sorted(GRIDS)),
       conversion=st.sampled_from(["classic", "improved"]),
       delta=st.sampled_from([1e-8, 1e-5, 0.1]), sigma=st.floats(0.3, 300.0),
       block=st.sampled_from([1, 7, 1024]))
def test_a_looked_up_epsilon_is_the_one_of_the_querys_row(
        seed, queries, step, expected, grid, conversion, delta, sigma, block):
    rng = np.random.default_rng(seed)
    orders = GRIDS[grid]
    # statistics from small pools (pairs repeat), -0.0 among them
    answer = rng.choice(np.concatenate((-np.logspace(-30, 1.5, 60), [-0.0, -np.inf])),
                        size=queries)
    selection_pool = -np.logspace(-12, 1, 12) if step == "confident" else np.array([0.0])
    selection = rng.choice(selection_pool, size=queries)
    answered = rng.random(queries) < 0.6
    weight = np.exp(selection) if expected else answered.astype(np.float64)
    if step == "lnmax":
        answer_rdp = partial(_lnmax, sigma)
    else:
        answer_rdp = partial(_gnmax, sigma)
    selection_rdp = partial(_threshold, 2 * sigma) if step == "confident" else None
    setting = Conversion.of(orders=orders, delta=delta, conversion=conversion)
    own_epsilons.PAIR_BLOCK = block
    try:
        table = OwnEpsilons.of(GroupedCounts.of_queries(answer, selection, answered),
                               selection_rdp=selection_rdp, answer_rdp=answer_rdp,
                               orders=orders, conversion=setting, expected=expected)
    finally:
        own_epsilons.PAIR_BLOCK = 1024
    looked_up = table.lookup(answer, selection, answered)
    rows = _rows(answer, selection, weight, answer_rdp, selection_rdp, orders)
    np.testing.assert_array_equal(looked_up, query_epsilons(rows, queries, setting))


def _gnmax(sigma, keys, orders):
    return rdp_gnmax(keys, sigma=sigma, orders=orders)


def _lnmax(scale, keys, orders):
    return rdp_lnmax(keys, scale=scale, orders=orders)


def _threshold(sigma, keys, orders):
    return rdp_threshold(keys, sigma_threshold=sigma, orders=orders)


def test_most_orders_are_never_converted_for_typical_pairs():
    """Where a pair's minimum lies is found at a few probes; orders whose selection curve
    plus offset alone exceed it are not evaluated (the orders up to about 58 here: 113
    of the default grid's 298)."""
    orders = default_orders()
    setting = Conversion.of(orders=orders, delta=1e-5)
    rng = np.random.default_rng(1)
    selection_curves = rdp_threshold(np.array([-0.5, -0.05]), sigma_threshold=150.0,
                                     orders=orders)
    ceilings = rng.uniform(0.1, 0.2, 500)
    reachable = own_epsilons._reachable(selection_curves, rng.integers(0, 2, 500), ceilings,
                                        setting)
    assert reachable.sum() == orders.size - np.argmax(orders > 58.5)
    assert reachable[-1] and not reachable[0]


def test_a_pair_missing_from_the_table_is_not_guessed():
    counts = GroupedCounts.of_queries(np.array([-3.0, -2.0]), np.array([0.0, 0.0]),
                                      np.array([1, 0]))
    table = OwnEpsilons.of(counts, selection_rdp=None, answer_rdp=partial(_gnmax, 2.0),
                           orders=default_orders(),
                           conversion=Conversion.of(orders=default_orders(), delta=1e-5),
                           expected=False)
    assert table.lookup(np.array([-3.0, -2.5]), np.zeros(2), np.ones(2)) is None
    assert table.lookup(np.array([-3.0]), np.array([-1.0]), np.ones(1)) is None
    assert table.lookup(np.array([7.0]), np.zeros(1), np.ones(1)) is None
    assert table.lookup(np.empty(0), np.empty(0), np.empty(0)).size == 0
    assert table.lookup(np.array([-2.0, -0.0 - 3.0]), np.array([-0.0, 0.0]),
                        np.array([1, 1])).shape == (2,)


@pytest.mark.parametrize("function", [partial(_gnmax, 0.7), partial(_lnmax, 0.7),
                                      partial(_threshold, 0.7)])
def test_the_step_curves_are_never_below_zero(function):
    """What the live orders and the looked-up epsilons rely on (RDP is non-negative)."""
    orders = np.unique(np.concatenate((default_orders(), np.linspace(1.0001, 3, 300),
                                       np.logspace(0.001, 4, 300))))
    keys = np.concatenate((-np.logspace(-300, 3.5, 4000), [-0.0, -np.inf]))
    keys = np.sort(keys)
    for scale in (0.02, 1.0, 1e3):  # scales as the options allow (>= 0.01)
        curves = function.func(function.args[0] * scale, keys, orders)
        assert curves.min() >= 0.0


@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning")
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), queries=st.integers(1, 2500),
       grid=st.sampled_from(sorted(GRIDS)), conversion=st.sampled_from(["classic", "improved"]),
       delta=st.sampled_from([1e-8, 1e-5, 0.1]), answered=st.floats(0.0, 1.0),
       infinite=st.booleans())
def test_a_chunks_own_epsilons_are_those_of_its_rows(seed, queries, grid, conversion, delta,
                                                    answered, infinite):
    """``step_epsilons``: the unanswered queries looked up by their selection curve, the
    others formed from their rows: ``query_epsilons`` of every row, bit for bit (an
    infinite answer curve, whose 0 * inf is NaN, leaves every row to be formed)."""
    rng = np.random.default_rng(seed)
    orders = GRIDS[grid]
    answer = rng.exponential(0.5, size=(50, orders.size)) * rng.choice([1e-6, 1.0, 40.0])
    if infinite:
        answer[rng.integers(0, 50), rng.integers(0, orders.size)] = np.inf
    selection = rng.exponential(1e-2, size=(7, orders.size))
    rows = StepRows(selection, rng.integers(0, 7, queries), answer,
                    rng.integers(0, 50, queries),
                    (rng.random(queries) < answered).astype(np.float64))
    setting = Conversion.of(orders=orders, delta=delta, conversion=conversion)
    np.testing.assert_array_equal(own_epsilons.step_epsilons(rows, setting),
                                  query_epsilons(rows, queries, setting))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), queries=st.integers(1, 2500),
       step=st.sampled_from(["gnmax", "confident", "lnmax"]), expected=st.booleans(),
       grid=st.sampled_from(sorted(GRIDS)), conversion=st.sampled_from(["classic", "improved"]),
       delta=st.sampled_from([1e-8, 1e-5, 0.1]), sigma=st.floats(0.3, 300.0))
def test_own_epsilons_from_the_probed_orders_are_those_of_every_order(
        seed, queries, step, expected, grid, conversion, delta, sigma):
    """``probed_epsilons``: the curves formed at the probes, then at the orders where some
    query may have its minimum: ``query_epsilons`` of the rows at every order, bit for bit
    (the table's pass of a walked run, which keeps no pairs)."""
    rng = np.random.default_rng(seed)
    orders = GRIDS[grid]
    answer = -np.exp(rng.uniform(-60.0, 3.0, size=queries))  # log q, mostly distinct
    selection_pool = -np.logspace(-12, 1, 12) if step == "confident" else np.array([0.0])
    selection = rng.choice(selection_pool, size=queries)
    weight = (np.exp(selection) if expected
              else (rng.random(queries) < 0.6).astype(np.float64))
    answer_rdp = partial(_lnmax if step == "lnmax" else _gnmax, sigma)
    selection_rdp = partial(_threshold, 2 * sigma) if step == "confident" else None
    setting = Conversion.of(orders=orders, delta=delta, conversion=conversion)
    rows = _rows(answer, selection, weight, answer_rdp, selection_rdp, orders)

    def costs_at(columns):
        return StepRows(np.ascontiguousarray(rows.selection[:, columns]), rows.selection_index,
                        np.ascontiguousarray(rows.answer[:, columns]), rows.answer_index,
                        rows.weight)
    probed = own_epsilons.probed_epsilons(costs_at, (rows.selection, rows.selection_index),
                                          setting)
    np.testing.assert_array_equal(probed, query_epsilons(rows, queries, setting))
