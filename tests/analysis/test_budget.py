"""Budgets that hold (math:costs): the run halts before the total could exceed B."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pate_cli import analyze, label
from pate_cli.accounting.composition import StepRows, budget_halt
from pate_cli.accounting.conversion import Conversion, rdp_to_epsilon
from pate_cli.analysis import analyze_votes
from pate_cli.analysis.added_figures import SECRET_SEED_NOTE
from pate_cli.decisions import Decisions
from pate_cli.mechanisms import ConfidentGNMax, GNMax, InteractiveGNMax, LNMax
from tests import ROOT

ORDERS = np.array([2.0, 3.0, 5.0, 8.0, 14.0, 20.0, 32.0, 50.0, 100.0])
MECHANISMS = {
    "gnmax": GNMax(sigma=4.0),
    "lnmax": LNMax(laplace_scale=3.0),
    "confident": ConfidentGNMax(threshold=18.0, sigma_threshold=5.0, sigma=4.0),
}


def votes_from(seed: int, queries: int, classes: int = 4, teachers: int = 30) -> np.ndarray:
    rng = np.random.default_rng(seed)
    strength = rng.uniform(0, 5, queries)
    logits = rng.normal(size=(queries, classes)) * strength[:, None]
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return np.array([rng.multinomial(teachers, row) for row in p], dtype=float)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), queries=st.integers(1, 120),
       budget=st.floats(0.05, 30.0), name=st.sampled_from(sorted(MECHANISMS)),
       accounting=st.sampled_from(["replay", "expected", "data-independent"]))
def test_budget_holds_and_the_prefix_is_an_unbudgeted_run(seed, queries, budget, name,
                                                          accounting):
    votes = votes_from(seed, queries)
    mechanism = MECHANISMS[name]
    result = analyze_votes(votes, mechanism, budget=budget, accounting=accounting,
                           orders=ORDERS, seed=seed)
    halted = result.budget.halted_at
    assert result.epsilon <= budget
    assert result.budget.remaining == max(0.0, budget - result.epsilon)
    processed = queries if halted is None else halted
    assert result.queries == processed and result.label.size == processed
    if halted is None:
        assert processed == queries
    else:
        assert 0 <= halted < queries
    if processed:
        plain = analyze_votes(votes, mechanism, queries=processed, accounting=accounting,
                              orders=ORDERS, seed=seed)
        # a budget run's total is its running sum (what its halt checks); the plain
        # run's sums its distinct statistics: the same up to rounding
        np.testing.assert_allclose(plain.rdp_total, result.rdp_total, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(plain.label, result.label)
        np.testing.assert_array_equal(plain.epsilon_cumulative, result.epsilon_cumulative)
        assert result.epsilon == result.epsilon_cumulative[-1]
        assert math.isclose(plain.epsilon, result.epsilon, rel_tol=1e-12)
        assert np.all(result.epsilon_cumulative <= budget)
    if halted is not None:
        # the halting query, charged in full (its expected cost under expected), would
        # have gone over
        if accounting == "expected":
            longer = analyze_votes(votes, mechanism, queries=halted + 1,
                                   accounting=accounting, orders=ORDERS, seed=seed)
        else:
            mask = np.r_[result.answered.astype(bool), True]  # the mechanism as given
            longer = analyze_votes(votes[: halted + 1], mechanism, orders=ORDERS,
                                   accounting=accounting,
                                   decisions=Decisions(mask, np.full(mask.size, -1)))
        # on the run's RDP curve: under data-independent accounting the API may report the
        # smaller PLD figure, while the budget is held on the RDP one
        over, _ = rdp_to_epsilon(longer.rdp_total, orders=ORDERS, delta=longer.delta)
        assert over > budget


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), queries=st.integers(1, 300),
       budget=st.floats(0.1, 20.0), chunks=st.tuples(st.integers(1, 64), st.integers(1, 400)))
def test_the_halt_does_not_depend_on_the_chunk_size(seed, queries, budget, chunks):
    votes = votes_from(seed, queries)
    mechanism = MECHANISMS["confident"]
    runs = [analyze_votes(votes, mechanism, budget=budget, orders=ORDERS, seed=seed,
                          chunk_size=size) for size in chunks]
    assert runs[0].budget == runs[1].budget
    for name in ("answered", "label", "epsilon_cumulative", "rdp_total"):
        np.testing.assert_array_equal(getattr(runs[0], name), getattr(runs[1], name))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), rows=st.integers(1, 80), limit=st.floats(0.01, 10.0))
def test_budget_halt_kernel_equals_a_loop(seed, rows, limit):
    rng = np.random.default_rng(seed)
    selection = rng.exponential(0.02, size=(rows, ORDERS.size)) * ORDERS
    answer = rng.exponential(0.05, size=(rows, ORDERS.size)) * ORDERS
    weight = (rng.random(rows) < 0.5).astype(float)
    index = np.arange(rows)
    costs = StepRows(selection, index, answer, index, weight)
    full = StepRows(selection, index, answer, index, np.ones(rows))
    rule = Conversion.of(orders=ORDERS, delta=1e-5, conversion="classic")
    carry = rng.exponential(0.01, size=ORDERS.size)
    expected = None
    total = carry.copy()
    for i in range(rows):
        candidate = total + selection[i] + answer[i]
        if np.min(candidate + np.log(1e5) / (ORDERS - 1)) > limit:
            expected = i
            break
        total = total + selection[i] + weight[i] * answer[i]
    assert budget_halt(costs, full, rows, carry, rule, limit) == expected


def test_the_mnist_budget_holds():
    result = analyze("sample_votes/mnist_250_votes.npy", budget=2.0)
    assert result.epsilon <= 2.0 and result.budget.halted_at is not None
    decisions = label("sample_votes/mnist_250_votes.npy", budget=2.0)
    assert len(decisions) == result.budget.halted_at


def test_interactive_budget_halts_too():
    votes = votes_from(3, 200)
    student = np.full(votes.shape, 0.25)
    mechanism = InteractiveGNMax(threshold=5.0, sigma_threshold=5.0, sigma=4.0,
                                 confidence=0.5, teachers=30.0)
    result = analyze_votes(votes, mechanism, student=student, budget=1.0, orders=ORDERS)
    assert result.epsilon <= 1.0 and result.budget.halted_at is not None
    assert result.outcome.size == result.budget.halted_at


def test_svt_refuses_a_budget():
    with pytest.raises(ValueError, match="--budget does not apply to -m svt"):
        analyze(votes_from(0, 20), "svt", budget=1.0)


def test_a_budget_says_when_the_search_or_the_release_exceeds_it():
    """--budget halts the run's epsilon; the search's (--tuning) and the smooth-sensitivity
    release's (its own cost added) are larger and are not halted: one warning each, in
    the result's notes too."""
    import warnings

    import pate_cli
    from pate_cli.errors import PateWarning
    from tests import SAMPLES

    votes = str(SAMPLES / "mnist_250_votes.npy")
    with pytest.warns(PateWarning, match=r"--budget 2 halts the run's epsilon, not the "
                                         r"search's: with --tuning it is 4\.53"):
        tuned = pate_cli.analyze(votes, budget=2, tuning="poisson:10", per_query=False)
    assert tuned.epsilon <= 2 < tuned.tuning.epsilon_tuned
    with pytest.warns(PateWarning, match="not its release: with --smooth-sensitivity"):
        released = pate_cli.analyze(votes, budget=2, smooth_sensitivity=True,
                                    accounting="expected", per_query=False)
    assert released.epsilon <= 2 < released.smooth_sensitivity.epsilon_after
    note = released.warnings[-1]
    assert note.startswith("--budget 2 halts the data-dependent epsilon, not its release")
    # a streamed run's release is formed by its table's pass: the note comes then, once
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        streamed = pate_cli.analyze(votes, budget=2, smooth_sensitivity=True,
                                    accounting="expected", per_query="stream")
        def budget_notes():  # (each release also says its noise must stay secret)
            return [str(one.message) for one in caught
                    if not str(one.message).startswith(SECRET_SEED_NOTE)]

        assert not budget_notes() and note not in streamed.warnings
        streamed.to_frame()
        assert budget_notes() == [note]
        assert streamed.to_dict() == released.to_dict()
    assert len(budget_notes()) == 1
    with warnings.catch_warnings():  # label() issues no note
        warnings.simplefilter("error", PateWarning)
        pate_cli.label(votes, budget=2, smooth_sensitivity=True, accounting="expected",
                       per_query="stream")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PateWarning)
        pate_cli.analyze(votes, budget=20, tuning="poisson:10", per_query=False)


def test_a_budget_that_halts_before_the_first_query_says_why():
    """Nothing answered: the note names the conversion's own term where it alone is above
    the budget (log(1e5) / 7 = 1.6448 at order 8, the grid's largest), else the first
    query's charge; a run that answers says nothing."""
    votes = votes_from(3, 50)
    floor = analyze(votes, "gnmax", orders=[2, 4, 8], budget=1.5)
    assert floor.budget.halted_at == 0 and floor.answered_total == 0
    (note,) = [w for w in floor.warnings if "halts before the first query" in w]
    assert "the conversion alone charges 1.6448 at delta 1e-05" in note
    assert math.log(1e5) / 7 <= 1.6448 < math.log(1e5) / 7 + 1e-4
    charge = analyze(votes, "gnmax", sigma=0.5, accounting="data-independent", budget=2.0)
    assert charge.budget.halted_at == 0
    assert any("the first query's full charge converts above it" in w
               for w in charge.warnings)
    # an output halt: the first output did not fit (its first query alone would have)
    tokens = str(ROOT / "sample_votes" / "tokens_stdlib.npz")
    output = analyze(tokens, "gnmax", sigma=25.0, budget=1.0, halt_at="output")
    assert output.budget.halted_at == 0
    assert any("halts before the first output" in w and "the first output's tokens, "
               "charged in full" in w for w in output.warnings)
    assert analyze(tokens, "gnmax", sigma=25.0, budget=1.0).budget.halted_at > 0
    fine = analyze(votes, "gnmax", budget=2.0)
    assert fine.budget.halted_at != 0
    assert not any("halts before the first query" in w for w in fine.warnings)


def test_a_data_independent_budget_line_names_the_rdp_figure_where_it_decided():
    """Where the headline is the PLD figure, the budget line says the RDP figure decided
    the halt (math:costs); not before the first query (an RDP figure of 0 decides
    nothing), nor where no PLD figure replaced the RDP one."""
    from pate_cli.outputs.summary import summary_lines

    votes = np.array([[5, 0]] * 4)
    halted = analyze(votes, "gnmax", sigma=4.0, accounting="data-independent", budget=3.0)
    line = dict(summary_lines(halted.to_dict()))["budget"]
    assert halted.data_independent_method == "pld" and halted.budget.halted_at == 2
    assert "(decided by the RDP figure, " in line
    start = analyze(votes, "gnmax", sigma=0.5, accounting="data-independent", budget=2.0)
    assert start.budget.halted_at == 0
    assert "decided by" not in dict(summary_lines(start.to_dict()))["budget"]
