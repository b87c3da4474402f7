"""accounting.grouped: exact tables of distinct statistics and the totals formed from them
(math:conversion and math:costs)."""

from __future__ import annotations

import collections
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting import grouped
from pate_cli.accounting.gnmax import rdp_gnmax
from pate_cli.accounting.grouped import (
    TOTAL_BLOCK,
    BoundedTotals,
    GroupedCounts,
    grouped_totals,
    weighted_curve_sum,
    window_pieces,
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


def _sums(table):
    return grouped_totals(table, selection_rdp=_curve, answer_rdp=_curve, orders=ORDERS,
                          expected=False)


def _bounded(answer, selection, answered, *, size, window, limit):
    """The run's sums by ``BoundedTotals`` from pieces of at most ``size`` queries."""
    totals = BoundedTotals(_sums, window=window, limit=limit)
    for start, stop in window_pieces(answer.size, size, window=window):
        totals.add(GroupedCounts.of_queries(answer[start:stop], selection[start:stop],
                                            answered[start:stop]), stop)
    return totals


@st.composite
def distinct_runs(draw):
    """Queries whose statistics mostly differ (soft votes), some repeated."""
    count = draw(st.integers(1, 400))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    answer = -rng.exponential(8.0, size=count)
    answer[rng.random(count) < 0.3] = -2.5
    selection = rng.choice([0.0, -0.25, -3.0], size=count)
    return answer, selection, rng.integers(0, 2, size=count)


@settings(max_examples=60, deadline=None)
@given(run=distinct_runs(), size=st.integers(1, 50), other=st.integers(1, 50),
       window=st.sampled_from([8, 16, 64]), limit=st.integers(1, 40))
def test_bounded_totals_depend_on_windows_not_pieces_and_stay_within_the_tolerance(
        run, size, other, window, limit):
    """Which tables are summed apart follows the windows' statistics alone: any piece
    size gives the same bits; against one sum of the whole table, at most 1e-12
    relative (the tolerance of math:tolerance)."""
    answer, selection, answered = run
    first = _bounded(answer, selection, answered, size=size, window=window, limit=limit)
    second = _bounded(answer, selection, answered, size=other, window=window, limit=limit)
    (one, table), (two, _) = first.result(), second.result()
    assert first.parts == second.parts
    for name in ("selection", "answer"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))
    assert one.answered == two.answered
    whole = _sums(GroupedCounts.of_queries(answer, selection, answered))
    for name in ("selection", "answer"):
        np.testing.assert_allclose(getattr(one, name), getattr(whole, name), rtol=1e-12,
                                   atol=0)
    assert one.answered == whole.answered  # integer counts: exact
    if first.parts == 1:  # one table: the whole file's, the very bits of one sum
        np.testing.assert_array_equal(one.answer, whole.answer)
        np.testing.assert_array_equal(one.selection, whole.selection)
    if table is not None:  # given only when the sums came from it alone
        assert first.parts == 1
        assert _fields(table) == _fields(GroupedCounts.of_queries(answer, selection, answered))


def test_bounded_totals_hold_at_most_about_twice_the_limit(monkeypatch):
    """Every statistic distinct and every merge kept (``MERGE_GAIN`` 0): the tables held
    never pass 2 x limit + one window of pairs, however many queries; the sums are those
    of the whole table to 1e-12."""
    monkeypatch.setattr(grouped, "MERGE_GAIN", 0.0)
    answer = -np.random.default_rng(3).exponential(8.0, size=20_000)
    selection = np.zeros(answer.size)
    held, parts, sums, table = _held_per_window(answer, selection, window=64, limit=256)
    assert max(pairs for pairs, _ in held) <= 2 * 256 + 64
    assert max(pairs for pairs, summed in held if summed) > 256 + 64  # (see below)
    assert parts > 20 and table is None
    whole = _sums(GroupedCounts.of_queries(answer, selection, np.ones(answer.size)))
    np.testing.assert_allclose(sums.answer, whole.answer, rtol=1e-12, atol=0)


def _held_per_window(answer, selection, *, window, limit):
    """The pairs held after each window (with the parts summed by then), the parts
    summed, the sums, and the whole table or None."""
    held = []

    class Watched(BoundedTotals):
        def _end_window(self):
            super()._end_window()
            held.append((sum(t.size for t in self._levels if t is not None), self.parts))

    totals = Watched(_sums, window=window, limit=limit)
    answered = np.ones(answer.size, dtype=np.int64)
    for start, stop in window_pieces(answer.size, 50, window=window):
        totals.add(GroupedCounts.of_queries(answer[start:stop], selection[start:stop],
                                            answered[start:stop]), stop)
    sums, table = totals.result()
    return held, totals.parts, sums, table


def test_after_a_part_a_merge_that_saves_little_is_summed_at_once():
    """Statistics that never repeat (soft votes): within the limit, one table, kept
    whole; past it, once a part is summed, two windows' merged table keeps every pair
    and is summed at once, so no more than the limit and a window's pairs are held from
    then on (without the rule, up to twice the limit again and again: the test above);
    statistics that repeat still merge into one table, summed once."""
    rng = np.random.default_rng(5)
    distinct = -rng.exponential(8.0, size=5_000)
    zeros = np.zeros(distinct.size)
    held, parts, _, table = _held_per_window(distinct, zeros, window=64, limit=1 << 13)
    assert parts == 1 and table is not None and table.size == distinct.size
    held, parts, _, table = _held_per_window(distinct, zeros, window=64, limit=256)
    assert max(pairs for pairs, summed in held if summed) <= 256 + 64
    assert parts > 30 and table is None  # about two windows a part (gain 0: about 20)
    repeated = -rng.integers(1, 40, size=5_000).astype(float)
    held, parts, _, table = _held_per_window(repeated, zeros, window=64, limit=256)
    assert parts == 1 and table is not None and table.size == np.unique(repeated).size


def test_window_pieces_never_cross_a_window_edge():
    pieces = list(window_pieces(1000, 300, window=256))
    assert pieces[0] == (0, 256) and (256, 512) in pieces and pieces[-1] == (768, 1000)
    assert all(stop - start <= 300 for start, stop in pieces)
    assert [start for start, _ in pieces[1:]] == [stop for _, stop in pieces[:-1]]
    assert not any(start // 256 != (stop - 1) // 256 for start, stop in pieces)
