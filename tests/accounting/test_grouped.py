"""accounting.grouped: exact tables of distinct statistics and the totals formed from them
(MATH.md s.6-7)."""

from __future__ import annotations

import collections
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.gnmax import rdp_gnmax
from pate_cli.accounting.grouped import (
    TOTAL_BLOCK,
    GroupedAccumulator,
    GroupedCounts,
    grouped_totals,
    weighted_curve_sum,
)

ORDERS = np.array([1.5, 2.0, 5.0, 20.0, 100.0])


def _fields(table):
    return (table.answer.tolist(), table.selection.tolist(), table.queries.tolist(),
            table.answered.tolist())


@st.composite
def queries(draw):
    count = draw(st.integers(1, 300))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # few distinct values, so that pairs repeat; -0.0 and 0.0 both appear
    answer = rng.choice([-0.0, 0.0, -1.5, -3.25, -40.0, -np.inf], size=count)
    selection = rng.choice([0.0, -0.5, -2.0], size=count)
    answered = rng.integers(0, 2, size=count)
    return answer, selection, answered


@settings(max_examples=60, deadline=None)
@given(run=queries(), cuts=st.lists(st.integers(0, 300), max_size=6), seed=st.integers(0, 99))
def test_merging_chunks_in_any_order_gives_the_table_of_the_whole(run, cuts, seed):
    answer, selection, answered = run
    whole = GroupedCounts.of_queries(answer, selection, answered)
    # the table is the multiset of pairs with their counts, sorted by (answer, selection)
    expected = collections.Counter(zip(answer + 0.0, selection, strict=True))
    assert whole.size == len(expected)
    assert list(zip(whole.answer, whole.selection, strict=True)) == sorted(expected)
    assert whole.queries.tolist() == [expected[pair] for pair in sorted(expected)]
    assert int(whole.answered.sum()) == int(answered.sum())
    bounds = sorted({0, answer.size, *[c % (answer.size + 1) for c in cuts]})
    parts = [GroupedCounts.of_queries(answer[a:b], selection[a:b], answered[a:b])
             for a, b in zip(bounds, bounds[1:], strict=False)]
    np.random.default_rng(seed).shuffle(parts)
    assert _fields(GroupedCounts.merge(parts)) == _fields(whole)
    accumulator = GroupedAccumulator()
    for part in parts:
        accumulator.add(part)
    assert _fields(accumulator.result()) == _fields(whole)


def test_an_answer_statistic_with_several_selection_statistics_keeps_each_pair():
    table = GroupedCounts.of_queries([-2.0, -1.0, -2.0, -2.0], [0.5, 0.0, -0.5, 0.5],
                                     [1, 0, 0, 1])
    assert list(zip(table.answer, table.selection, strict=True)) == [
        (-2.0, -0.5), (-2.0, 0.5), (-1.0, 0.0)]
    assert table.queries.tolist() == [1, 2, 1] and table.answered.tolist() == [0, 2, 0]


def test_negative_zero_and_zero_are_one_statistic():
    table = GroupedCounts.of_queries([-0.0, 0.0], [0.0, -0.0], [1, 1])
    assert table.size == 1 and table.queries.tolist() == [2]
    assert not np.signbit(table.answer[0]) and not np.signbit(table.selection[0])


def _curve(keys, orders):
    return rdp_gnmax(keys, sigma=4.0, orders=orders)


def test_totals_against_a_plain_loop_over_queries():
    rng = np.random.default_rng(5)
    log_q = rng.choice(np.linspace(-30, -0.05, 40), size=500)
    log_pr = rng.choice([-0.01, -0.7, -3.0], size=500)
    answered = rng.integers(0, 2, 500)
    table = GroupedCounts.of_queries(log_q, log_pr, answered)
    curves = _curve(log_q, ORDERS)
    for expected in (False, True):
        totals = grouped_totals(table, selection_rdp=lambda k, o: np.outer(-k, o),
                                answer_rdp=_curve, orders=ORDERS, expected=expected)
        weight = np.exp(log_pr) if expected else answered.astype(float)
        for k in range(ORDERS.size):
            assert math.isclose(totals.answer[k], math.fsum(weight * curves[:, k]),
                                rel_tol=1e-13)
            assert math.isclose(totals.selection[k], math.fsum(-log_pr * ORDERS[k]),
                                rel_tol=1e-13)
        assert math.isclose(totals.answered, math.fsum(weight), rel_tol=1e-13)


def test_one_column_per_run_gives_each_run_the_bits_of_its_own_total():
    rng = np.random.default_rng(2)
    size = 2 * TOTAL_BLOCK + 17  # several blocks, some rows of weight 0 in one run only
    keys = np.sort(rng.uniform(-60, -0.01, size))
    runs = rng.integers(0, 2, (size, 3)).astype(float)
    runs[: TOTAL_BLOCK // 2, 0] = 0.0
    together = weighted_curve_sum(keys, runs, _curve, ORDERS)
    for run in range(3):
        alone = weighted_curve_sum(keys, runs[:, run], _curve, ORDERS)
        np.testing.assert_array_equal(together[run], alone)


def test_rows_of_weight_zero_are_never_evaluated():
    seen = []

    def curve(keys, orders):
        seen.append(keys.copy())
        return _curve(keys, orders)

    keys = np.array([-9.0, -5.0, -3.0, -1.0])
    total = weighted_curve_sum(keys, np.array([0.0, 2.0, 0.0, 1.0]), curve, ORDERS)
    assert np.concatenate(seen).tolist() == [-5.0, -1.0]
    np.testing.assert_allclose(total, 2 * _curve(keys[[1]], ORDERS)[0]
                               + _curve(keys[[3]], ORDERS)[0], rtol=1e-15)


def test_the_map_that_evaluates_blocks_changes_no_bit():
    rng = np.random.default_rng(9)
    keys = np.sort(rng.uniform(-60, -0.01, 3 * TOTAL_BLOCK))
    weights = rng.uniform(0, 3, keys.size)
    plain = weighted_curve_sum(keys, weights, _curve, ORDERS)

    def backwards_map(function, items):  # evaluates in reverse, yields in order
        return list(reversed([function(item) for item in reversed(list(items))]))

    np.testing.assert_array_equal(
        weighted_curve_sum(keys, weights, _curve, ORDERS, map=backwards_map), plain)


def test_an_empty_table_costs_nothing():
    totals = grouped_totals(GroupedCounts.empty(), selection_rdp=_curve, answer_rdp=_curve,
                            orders=ORDERS, expected=True)
    assert not totals.selection.any() and not totals.answer.any() and totals.answered == 0.0
