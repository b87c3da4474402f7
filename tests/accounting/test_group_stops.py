"""``GroupStops``: the stopping rule and the figures at the stop (math:individualized), fed a chunk
at a time, against a query-by-query reading of the whole histories."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.individualized import (
    CurveSetting,
    GroupStops,
    GroupSums,
    IndependentCounts,
    group_costs,
    vanishing_costs,
)


def _reference(eps, order, base, answered, base_answered, budgets):
    """Query by query, in plain Python: math:individualized's stop and what it keeps."""
    queries, groups = eps.shape
    exhausted = [next((q for q in range(queries) if eps[q, g] > budgets[g]), None)
                 for g in range(groups)]
    stops = [q for q in exhausted if q is not None]
    stop = min(stops) if stops else None
    upto = queries if stop is None else stop
    spent = (eps[upto - 1], order[upto - 1]) if upto else (np.zeros(groups),
                                                          np.full(groups, np.nan))
    smallest = min(budgets)
    base_stop = next((q for q in range(queries) if base[q] > smallest), None)
    base_upto = queries if base_stop is None else base_stop
    return dict(exhausted_at=tuple(exhausted), stopped_at=stop, epsilon=spent[0],
                order=spent[1], labels_released=int(sum(answered[:upto])),
                answered_total=int(sum(answered)), baseline_stopped_at=base_stop,
                baseline_labels=int(sum(base_answered[:base_upto])))


@settings(max_examples=200, deadline=None)
@given(queries=st.integers(0, 60), groups=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       cuts=st.lists(st.integers(0, 60), max_size=6))
def test_chunk_by_chunk_equals_the_whole_histories(queries, groups, seed, cuts):
    rng = np.random.default_rng(seed)
    eps = np.cumsum(rng.exponential(0.1, size=(queries, groups)), axis=0)
    order = rng.choice([2.0, 3.5, 8.0], size=(queries, groups))
    base = np.cumsum(rng.exponential(0.1, size=queries))
    answered = rng.random(queries) < 0.6
    base_answered = rng.random(queries) < 0.6
    budgets = rng.uniform(0.2, 4.0, size=groups)
    stops = GroupStops(budgets)
    edges = [0, *sorted({min(c, queries) for c in cuts}), queries]
    for lo, hi in zip(edges, edges[1:], strict=False):
        stops.add(eps[lo:hi], order[lo:hi], base[lo:hi], answered[lo:hi],
                  base_answered[lo:hi])
    totals = stops.totals(tuple(f"g{g}" for g in range(groups)), np.ones(groups))
    expected = _reference(eps, order, base, answered, base_answered, budgets)
    for key, value in expected.items():
        np.testing.assert_array_equal(getattr(totals, key), value, err_msg=key)
    assert totals.queries == queries
    final = (eps[-1], order[-1]) if queries else (np.zeros(groups), np.full(groups, np.nan))
    np.testing.assert_array_equal(totals.final_epsilon, final[0])
    np.testing.assert_array_equal(totals.final_order, final[1])


def test_a_hand_worked_stop():
    """Budgets (1, 2): group 1 passes 2 after query 2, group 0 passes 1 after query 3;
    labels stop before query 2, the spent figures are those after query 1."""
    eps = np.array([[0.2, 0.5], [0.6, 1.5], [0.9, 2.5], [1.2, 3.0]])
    order = np.array([[9.0, 5.0], [7.0, 4.0], [6.0, 3.0], [5.0, 3.0]])
    stops = GroupStops(np.array([1.0, 2.0]))
    stops.add(eps[:3], order[:3], np.array([0.3, 0.8, 1.1]), np.array([1, 0, 1], bool),
              np.ones(3, bool))
    stops.add(eps[3:], order[3:], np.array([1.4]), np.ones(1, bool), np.ones(1, bool))
    totals = stops.totals(("a", "b"), np.array([1.0, 2.0]))
    assert totals.exhausted_at == (3, 2) and totals.stopped_at == 2
    assert totals.epsilon.tolist() == [0.6, 1.5] and totals.order.tolist() == [7.0, 4.0]
    assert totals.labels_released == 1 and totals.answered_total == 3
    assert totals.baseline_stopped_at == 2 and totals.baseline_labels == 2
    assert totals.final_epsilon.tolist() == [1.2, 3.0]


ORDERS = np.array([1.5, 2.0, 4.0, 8.0, 32.0])
INDEPENDENT = CurveSetting(sigma=20.0, orders=ORDERS, sigma_threshold=30.0,
                           data_independent=True)


def _curves(sensitivity: float):
    """One query's data-independent answer and selection curves at ``sensitivity``."""
    one = INDEPENDENT.factors(np.zeros(0), sensitivities=np.array([sensitivity])).curves(0)
    return one.answer, one.selection


@settings(max_examples=60, deadline=None)
@given(queries=st.integers(1, 80), seed=st.integers(0, 2**32 - 1),
       sensitivities=st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=1,
                              max_size=4),
       cuts=st.lists(st.integers(1, 79), max_size=4), data=st.data())
def test_counted_figures_are_the_running_ones(queries, seed, sensitivities, cuts, data):
    """Data-independent costs (math:independent at each sensitivity) added in chunks: the
    epsilons IndependentCounts forms from each group's counts are the ones GroupSums gives
    after every query from running sums of the same curves, within 1e-12 relative (another
    order of the additions; 0 for a group at sensitivity 0 or before any query)."""
    rng = np.random.default_rng(seed)
    answered = rng.random(queries) < 0.7
    sens = np.array(sensitivities)
    conversion = data.draw(st.sampled_from(["classic", "improved"]))
    sums = GroupSums(groups=sens.size, orders=ORDERS, delta=1e-5, conversion=conversion)
    counts = IndependentCounts(_curves, sums.rule, groups=sens.size)
    assert counts.epsilons().tolist() == [0.0] * sens.size
    edges = [0, *sorted({c for c in cuts if c < queries}), queries]
    history = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        history.append(sums.add(group_costs(np.zeros(hi - lo), INDEPENDENT, sensitivities=sens,
                                            answered=answered[lo:hi], evaluate=False))[0])
        counts.add(sens, answered[lo:hi])
        np.testing.assert_allclose(counts.epsilons(), history[-1][-1], rtol=1e-12, atol=0)
    assert np.all(np.concatenate(history)[:, sens == 0.0] == 0.0)


@settings(max_examples=40, deadline=None)
@given(queries=st.integers(1, 40), teachers=st.integers(2, 9), seed=st.integers(0, 2**32 - 1))
def test_a_teachers_counts_are_its_running_sums(queries, teachers, seed):
    """Vanishing: a teacher pays at k / |S_q| where it takes part. Each group's counted
    figure (its worst-off teacher's) is GroupSums' after the last query, within 1e-12
    relative; a group whose teachers never took part spent nothing."""
    rng = np.random.default_rng(seed)
    participation = rng.random((queries, teachers)) < 0.6
    participation[np.arange(queries), rng.integers(0, teachers, queries)] = True
    member_groups = rng.integers(0, 3, teachers)
    answered = rng.random(queries) < 0.7
    sums = GroupSums(groups=3, orders=ORDERS, delta=1e-5, member_groups=member_groups)
    eps = sums.add(vanishing_costs(np.zeros(queries), INDEPENDENT, participation=participation,
                                   answered=answered))[0]
    counts = IndependentCounts(_curves, sums.rule, groups=3, member_groups=member_groups)
    counts.add(teachers / participation.sum(axis=1), answered, participation)
    np.testing.assert_allclose(counts.epsilons(), eps[-1], rtol=1e-12, atol=0)
    for g in set(range(3)) - set(member_groups[participation.any(axis=0)].tolist()):
        assert counts.epsilons()[g] == 0.0
