"""The composition kernel's pieces agree: a chunk's own epsilons formed apart
(``query_epsilons``) are those of the running sums' per-query pass."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.composition import (
    StepRows,
    query_epsilons,
    running_epsilon,
    running_total,
)
from pate_cli.accounting.conversion import Conversion
from pate_cli.orders import default_orders

deltas = st.sampled_from([1e-3, 1e-5, 1e-8, 0.1])



@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), queries=st.integers(1, 1500),
       conversion=st.sampled_from(["classic", "improved"]), delta=deltas,
       zeros=st.booleans())
def test_query_epsilons_are_running_epsilons_per_query(seed, queries, conversion, delta,
                                                       zeros):
    """A chunk's own epsilons formed apart (ahead, on another thread) are the bits the
    running sums' per-query pass gives, over several work slices and with 0/1 weights."""
    rng = np.random.default_rng(seed)
    orders = default_orders()
    answer = np.cumsum(rng.exponential(rng.uniform(1e-9, 0.5), size=(40, orders.size)), axis=1)
    selection = np.cumsum(rng.exponential(1e-4, size=(5, orders.size)), axis=1)
    weight = (rng.integers(0, 2, queries).astype(float) if zeros
              else rng.uniform(0.0, 1.0, queries))
    rows = StepRows(selection, rng.integers(0, 5, queries), answer,
                    rng.integers(0, 40, queries), weight)
    setting = Conversion.of(orders=orders, delta=delta, conversion=conversion)
    kept = running_epsilon(rows, queries, np.zeros(orders.size), setting, per_query=True)
    np.testing.assert_array_equal(query_epsilons(rows, queries, setting), kept.epsilon_query)


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
