"""The cost table (math:costs), composition, replay semantics and budget runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pate_cli
from pate_cli.analysis import OrderGridWarning, analyze_votes
from pate_cli.mechanisms import NOISE_BLOCK, ConfidentGNMax, GNMax, LNMax
from pate_cli.orders import default_orders
from tests import scalar_reference as ref
from tests.synthetic import assert_chunk_size_changes_nothing

ORDERS = np.array([2.0, 3.0, 5.0, 8.0, 14.0, 20.0, 32.0, 50.0, 100.0])


def make_votes(seed=0, queries=40, classes=4, teachers=30):
    rng = np.random.default_rng(seed)
    strength = rng.uniform(0, 5, queries)
    logits = rng.normal(size=(queries, classes)) * strength[:, None]
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return np.array([rng.multinomial(teachers, row) for row in p], dtype=float)


def scalar_curve(mechanism, row, weight, orders):
    """One query's RDP curve from the per-row reference code (math:costs)."""
    if isinstance(mechanism, LNMax):
        lam = mechanism.laplace_scale
        lq = ref.log_q_lnmax(row, lam)
        # capped by the exact Laplace RDP of the two changed counts (Mironov 2017, Prop. 6)
        return [min(ref.rdp_lnmax(lq, lam, a), 2 * math.log(
            a / (2 * a - 1) * math.exp((a - 1) / lam)
            + (a - 1) / (2 * a - 1) * math.exp(-a / lam)) / (a - 1)) for a in orders]
    answer = [ref.rdp_gnmax(ref.log_q_gnmax(row, mechanism.sigma), mechanism.sigma, a)
              for a in orders]
    if isinstance(mechanism, GNMax):
        return answer
    lp = ref.log_pr_answered(row, mechanism.threshold, mechanism.sigma_threshold)
    selection = [ref.rdp_threshold(lp, mechanism.sigma_threshold, a) for a in orders]
    return [s + weight * x for s, x in zip(selection, answer, strict=True)]


MECHANISMS = [LNMax(laplace_scale=3.0), GNMax(sigma=4.0),
              ConfidentGNMax(threshold=22.0, sigma_threshold=5.0, sigma=4.0)]


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.name)
@pytest.mark.parametrize("accounting", ["replay", "expected"])
def test_costs_add_up_to_the_per_row_reference(mechanism, accounting):
    votes = make_votes()
    result = analyze_votes(votes, mechanism, accounting=accounting, orders=ORDERS, delta=1e-5)
    if accounting == "expected" and isinstance(mechanism, ConfidentGNMax):
        weights = [math.exp(ref.log_pr_answered(r, 22.0, 5.0)) for r in votes]
    else:
        weights = result.answered
    curves = np.array([scalar_curve(mechanism, row, w, ORDERS)
                       for row, w in zip(votes, weights, strict=True)])
    np.testing.assert_allclose(result.rdp_total, curves.sum(axis=0), rtol=1e-12)
    cumulative = np.cumsum(curves, axis=0)
    for i in (0, 7, len(votes) - 1):
        eps, order = ref.epsilon_classic(list(cumulative[i]), list(ORDERS), 1e-5)
        assert math.isclose(result.epsilon_cumulative[i], eps, rel_tol=1e-12)
        assert result.order_cumulative[i] == order
        own, _ = ref.epsilon_classic(list(curves[i]), list(ORDERS), 1e-5)
        assert math.isclose(result.epsilon_query[i], own, rel_tol=1e-12)
    # the headline sums distinct statistics, the column runs query by query: same
    # total up to rounding
    assert math.isclose(result.epsilon, result.epsilon_cumulative[-1], rel_tol=1e-13)
    k = list(ORDERS).index(result.order)
    total_at_order = result.rdp_at_order["selection"] + result.rdp_at_order["answer"]
    assert math.isclose(total_at_order, curves[:, k].sum(), rel_tol=1e-12)


def test_data_independent_accounting_is_section_2():
    votes = make_votes(queries=25)
    mechanism = ConfidentGNMax(threshold=22.0, sigma_threshold=5.0, sigma=4.0)
    result = analyze_votes(votes, mechanism, accounting="data-independent", orders=ORDERS)
    answered = result.answered.sum()
    curve = 25 * ORDERS / (2 * 5.0**2) + answered * ORDERS / 4.0**2
    eps, order = ref.epsilon_classic(list(curve), list(ORDERS), 1e-5)
    eps *= 1.0 + 2.0**-40  # every epsilon is raised past the rounding (conversion)
    assert math.isclose(result.epsilon, eps, rel_tol=1e-13) and result.order == order
    assert math.isclose(result.epsilon_data_independent, eps, rel_tol=1e-13)


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.name)
def test_data_dependent_never_exceeds_data_independent(mechanism):
    votes = make_votes(seed=4, queries=60)
    for accounting in ("replay", "expected"):
        result = analyze_votes(votes, mechanism, accounting=accounting)
        assert result.epsilon <= result.epsilon_data_independent + 1e-12


def test_replay_follows_the_algorithm_with_vanishing_noise():
    """With tiny noise Confident answers exactly the rows whose plurality reaches T, with
    the plurality class (math:mechanisms)."""
    votes = make_votes(seed=2, queries=300)
    mechanism = ConfidentGNMax(threshold=19.5, sigma_threshold=1e-9, sigma=1e-9)
    result = analyze_votes(votes, mechanism, labels=np.argmax(votes, 1))
    sorted_votes = np.sort(votes, axis=1)
    clear = sorted_votes[:, -1] > sorted_votes[:, -2]   # no tie for the plurality
    expected_answered = votes.max(1) >= 19.5
    np.testing.assert_array_equal(result.answered.astype(bool), expected_answered)
    answered_clear = expected_answered & clear
    np.testing.assert_array_equal(result.label[answered_clear],
                                  np.argmax(votes, 1)[answered_clear])
    assert np.all(result.label[~expected_answered] == -1)


def test_label_accuracy_counts_only_output_labels():
    votes = make_votes(seed=2, queries=300)
    truth = np.argmax(votes, 1)
    truth[:50] = (truth[:50] + 1) % 4
    mechanism = ConfidentGNMax(threshold=20.0, sigma_threshold=1e-9, sigma=1e-9)
    result = analyze_votes(votes, mechanism, labels=truth)
    out = result.label >= 0
    assert result.label_accuracy == np.mean(result.label[out] == truth[out])
    assert 0 < result.label_accuracy < 1


def test_same_seed_same_output_other_seed_other_labels():
    votes = make_votes(seed=3, queries=500)
    mechanism = ConfidentGNMax(threshold=18.0, sigma_threshold=6.0, sigma=5.0)
    first = analyze_votes(votes, mechanism, seed=7)
    again = analyze_votes(votes, mechanism, seed=7)
    other = analyze_votes(votes, mechanism, seed=8)
    for name in ("answered", "label", "epsilon_cumulative", "order_cumulative"):
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
    assert not np.array_equal(first.label, other.label)


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.name)
@pytest.mark.parametrize("setting", [{"accounting": "replay"}, {"accounting": "expected"},
                                     {"accounting": "replay", "budget": 6.0},
                                     {"accounting": "data-independent", "budget": 9.0}])
def test_chunk_size_never_changes_anything(mechanism, setting):
    assert_chunk_size_changes_nothing(make_votes(seed=5, queries=NOISE_BLOCK + 300),
                                      mechanism, **setting)


def naive_budget_run(votes, mechanism, limit, delta=1e-5):
    """math:costs budget run, one query at a time, from the replay's decisions: halt at
    the first query whose selection and full answer could take epsilon above the limit."""
    plain = analyze_votes(votes, mechanism, accounting="replay")
    orders = default_orders()
    cumulative = np.zeros(orders.size)
    for i, row in enumerate(votes):
        full = np.array(scalar_curve(mechanism, row, 1.0, orders))
        if ref.epsilon_classic(list(cumulative + full), list(orders), delta)[0] > limit:
            return i, cumulative
        cumulative = cumulative + np.array(scalar_curve(mechanism, row,
                                                        float(plain.answered[i]), orders))
    return None, cumulative


@pytest.mark.parametrize("limit", [1.5, 4.0, 8.0, 1e6])
def test_budget_run_matches_a_sequential_loop(limit):
    votes = make_votes(seed=6, queries=400, teachers=30)
    mechanism = ConfidentGNMax(threshold=18.0, sigma_threshold=6.0, sigma=5.0)
    result = analyze_votes(votes, mechanism, budget=limit)
    halted_at, cumulative = naive_budget_run(votes, mechanism, limit)
    assert result.budget.halted_at == halted_at
    assert result.queries == (400 if halted_at is None else halted_at)
    np.testing.assert_allclose(result.rdp_total, cumulative, rtol=1e-10)
    assert result.epsilon <= limit
    assert result.budget.remaining == pytest.approx(max(0.0, limit - result.epsilon))
    plain = analyze_votes(votes, mechanism)
    np.testing.assert_array_equal(result.answered, plain.answered[:result.queries])


def test_budget_with_expected_accounting_charges_the_expected_cost():
    votes = make_votes(seed=6, queries=400, teachers=30)
    mechanism = ConfidentGNMax(threshold=18.0, sigma_threshold=6.0, sigma=5.0)
    result = analyze_votes(votes, mechanism, accounting="expected", budget=2.0)
    assert result.epsilon <= 2.0 and result.budget.halted_at is not None
    prefix = analyze_votes(votes, mechanism, accounting="expected",
                           queries=result.budget.halted_at)
    np.testing.assert_array_equal(prefix.rdp_total, result.rdp_total)
    more = analyze_votes(votes, mechanism, accounting="expected",
                         queries=result.budget.halted_at + 1)
    assert more.epsilon > 2.0


def test_queries_limits_the_analysis():
    votes = make_votes(queries=40)
    part = analyze_votes(votes, GNMax(sigma=4.0), queries=10)
    head = analyze_votes(votes[:10], GNMax(sigma=4.0))
    assert part.queries == 10 and part.epsilon == head.epsilon
    with pytest.raises(ValueError, match="--queries 41"):
        analyze_votes(votes, GNMax(sigma=4.0), queries=41)


def test_edge_of_grid_warns():
    votes = make_votes(queries=40)
    with pytest.warns(OrderGridWarning, match="first of the grid"):
        result = pate_cli.analyze(votes, GNMax(sigma=1.0), orders=[2.0, 3.0, 4.0])
    assert result.order == 2.0 and result.warnings


def test_cumulative_epsilon_never_decreases():
    votes = make_votes(seed=9, queries=200)
    for mechanism in MECHANISMS:
        result = analyze_votes(votes, mechanism, accounting="expected")
        assert np.all(np.diff(result.epsilon_cumulative) >= 0)


def test_reproduces_the_2018_paper_mnist_row(paper_votes):
    """Papernot et al. 2018, Table 1 / App. B: MNIST, 640 queries, Confident T=200,
    sigma1=150, sigma2=40, delta=1e-5: E[answered] 282.7, epsilon 2.00 at order 14."""
    votes = np.load(paper_votes / "mnist_250_teachers.npy", mmap_mode="r")
    mechanism = ConfidentGNMax(threshold=200, sigma_threshold=150, sigma=40)
    result = analyze_votes(votes, mechanism, accounting="expected", queries=640, delta=1e-5)
    assert round(result.answered_total, 1) == 282.7
    assert round(result.epsilon, 3) == 1.999 and result.order == 14
