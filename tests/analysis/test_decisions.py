"""Decisions accounting (math:costs): given decisions are charged, not drawn noise.

The reference is a plain loop over queries written from math:costs (selection for every
processed query, the answer step for each answered one) on the per-row formulas of
``tests.scalar_reference``; SVT's guarantee depends only on its cut-off (math:svt).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pate_cli
from pate_cli import analyze, label
from pate_cli.errors import InputError, OptionError
from tests import scalar_reference as ref

ORDERS = np.array([2.0, 3.0, 5.0, 8.0, 14.0, 20.0, 32.0, 50.0])
DELTA = 1e-5
# screening="gaussian": the scalar reference charges math:threshold's curve capped by
# math:independent's (the exact cap of math:screening is tested in
# tests/accounting/test_screening.py)
PARAMS = {
    "gnmax": dict(sigma=4.0),
    "lnmax": dict(laplace_scale=3.0),
    "confident": dict(threshold=20.0, sigma_threshold=5.0, sigma=4.0, screening="gaussian"),
    "interactive": dict(threshold=5.0, sigma_threshold=5.0, sigma=4.0, confidence=0.5,
                        screening="gaussian"),
    "svt": dict(svt_scale=0.5, svt_cutoff=4),
}


def make_votes(seed=0, queries=60, classes=4, teachers=30):
    rng = np.random.default_rng(seed)
    strength = rng.uniform(0, 5, queries)
    logits = rng.normal(size=(queries, classes)) * strength[:, None]
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return np.array([rng.multinomial(teachers, row) for row in p], dtype=float)


def make_student(votes, seed=1):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(votes.shape[1]) * 0.5, size=votes.shape[0])
    return p


def exact_lnmax(lam, alpha):
    """LNMax's data-independent RDP, which caps its data-dependent curve: two counts move
    by one, each with Laplace(lam) noise, so twice the sensitivity-1 Laplace RDP (Mironov
    2017, Prop. 6), written out here with math.log/exp."""
    laplace = math.log(alpha / (2 * alpha - 1) * math.exp((alpha - 1) / lam)
                       + (alpha - 1) / (2 * alpha - 1) * math.exp(-alpha / lam)) / (alpha - 1)
    return min(2 * laplace, 2 / lam, 0.5 * (2 / lam) ** 2 * alpha)


def reference_total(name, votes, outcome, student=None, teachers=30.0):
    """math:costs, one query at a time: every processed query pays its selection step,
    every answered one its answer step."""
    params = PARAMS[name]
    total = np.zeros(ORDERS.size)
    for i, row in enumerate(votes):
        answered = outcome[i] == "answered"
        if name == "lnmax":
            lq = ref.log_q_lnmax(row, params["laplace_scale"])
            lam = params["laplace_scale"]
            curve = [min(ref.rdp_lnmax(lq, lam, a), exact_lnmax(lam, a)) if answered else 0.0
                     for a in ORDERS]
        else:
            sigma = params["sigma"]
            lq = ref.log_q_gnmax(row, sigma)
            curve = [ref.rdp_gnmax(lq, sigma, a) if answered else 0.0 for a in ORDERS]
        if name in ("confident", "interactive"):
            shifted = row if student is None else row - teachers * student[i]
            lp = ref.log_pr_answered(shifted, params["threshold"], params["sigma_threshold"])
            curve = [c + ref.rdp_threshold(lp, params["sigma_threshold"], a)
                     for c, a in zip(curve, ORDERS, strict=True)]
        total += np.array(curve)
    return total


def random_outcomes(name, votes, student, rng):
    count = votes.shape[0]
    if name in ("gnmax", "lnmax"):
        return np.full(count, "answered")
    if name == "confident":
        return np.where(rng.random(count) < 0.5, "answered", "refused")
    if name == "interactive":
        choice = rng.choice(["answered", "refused", "student"], size=count)
        confident = student.max(axis=1) > PARAMS["interactive"]["confidence"]
        return np.where((choice == "student") & ~confident, "refused", choice)
    unstable = rng.random(count) < 0.1
    outcome = np.where(unstable, "unstable", "stable")
    met = np.cumsum(unstable)
    before = np.concatenate([[0], met[:-1]])
    return np.where(before >= PARAMS["svt"]["svt_cutoff"], "halted", outcome)


def labels_for(outcome, votes, student, rng):
    plurality = np.argmax(votes, axis=1)
    label = np.where(np.isin(outcome, ("answered", "stable")),
                     rng.integers(0, votes.shape[1], votes.shape[0]), -1)
    if student is not None:
        label = np.where(outcome == "student", np.argmax(student, axis=1), label)
    return np.where(outcome == "stable", plurality, label)


@pytest.mark.parametrize("name", list(PARAMS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_decisions_accounting_equals_a_loop_over_math_s7(name, seed):
    rng = np.random.default_rng(seed)
    votes = make_votes(seed=seed)
    student = make_student(votes, seed) if name == "interactive" else None
    outcome = random_outcomes(name, votes, student, rng)
    given = pate_cli.LabelDecisions(name, np.arange(votes.shape[0]), outcome,
                                    labels_for(outcome, votes, student, rng))
    grid = {} if name == "svt" else {"orders": ORDERS}  # (SVT-PATE's guarantee: no grid)
    result = analyze(votes, name, decisions=given, delta=DELTA, student=student, **grid,
                     **PARAMS[name])
    np.testing.assert_array_equal(result.label, given.label)
    if name == "svt":
        # math:svt: the guarantee depends on the cut-off, never on the decisions
        plain = analyze(votes, name, delta=DELTA, **PARAMS[name])
        assert result.epsilon == plain.epsilon
        assert result.svt.unstable == int(np.sum(outcome == "unstable"))
        return
    expected = reference_total(name, votes, outcome, student)
    np.testing.assert_allclose(result.rdp_total, expected, rtol=1e-10)
    eps, _ = ref.epsilon_classic(list(expected), list(ORDERS), DELTA)
    assert result.epsilon == pytest.approx(eps, rel=1e-10)
    assert result.answered_total == np.sum(outcome == "answered")


def test_an_all_answered_mask_costs_plain_gnmax():
    votes = make_votes(seed=4)
    plain = analyze(votes, "gnmax", sigma=4.0)
    masked = analyze(votes, "gnmax", sigma=4.0, decisions=np.ones(votes.shape[0], dtype=bool))
    np.testing.assert_array_equal(masked.rdp_total, plain.rdp_total)
    assert masked.epsilon == plain.epsilon
    # Confident with every query answered: its selection steps plus the GNMax cost
    confident = analyze(votes, "confident", decisions=np.ones(votes.shape[0], dtype=int),
                        orders=ORDERS, **PARAMS["confident"])
    gnmax = analyze(votes, "gnmax", sigma=4.0, orders=ORDERS)
    nothing = analyze(votes, "confident", decisions=np.zeros(votes.shape[0], dtype=bool),
                      orders=ORDERS, **PARAMS["confident"])
    np.testing.assert_allclose(confident.rdp_total, gnmax.rdp_total + nothing.rdp_total,
                               rtol=1e-12)


def test_an_empty_mask_costs_only_the_selection_steps():
    votes = make_votes(seed=5)
    result = analyze(votes, "confident", decisions=np.zeros(votes.shape[0], dtype=bool),
                     orders=ORDERS, **PARAMS["confident"])
    selection = np.zeros(ORDERS.size)
    for row in votes:
        lp = ref.log_pr_answered(row, 20.0, 5.0)
        selection += [ref.rdp_threshold(lp, 5.0, a) for a in ORDERS]
    np.testing.assert_allclose(result.rdp_total, selection, rtol=1e-10)
    assert result.answered_total == 0 and result.rdp_at_order["answer"] == 0.0
    assert np.all(result.label == -1)


@pytest.mark.parametrize("name", list(PARAMS))
@pytest.mark.parametrize("accounting", ["replay", "data-independent"])
def test_label_then_decisions_round_trips(name, accounting):
    votes = make_votes(seed=8, queries=120)
    truth = np.argmax(votes, axis=1)
    student = make_student(votes) if name == "interactive" else None
    common = dict(student=student, accounting=accounting, labels=truth, seed=3,
                  **PARAMS[name])
    made = analyze(votes, name, **common)
    decisions = label(votes, name, **common)
    assert len(decisions) == votes.shape[0]
    again = analyze(votes, name, decisions=decisions, **common)
    first, second = made.to_dict(), again.to_dict()
    assert second.pop("decisions")["rows"] == votes.shape[0]
    first.pop("decisions")
    assert first == second


def test_label_returns_what_the_run_released():
    votes = make_votes(seed=2)
    result = analyze(votes, "confident", seed=4, **PARAMS["confident"])
    decisions = label(votes, "confident", seed=4, **PARAMS["confident"])
    np.testing.assert_array_equal(decisions.label, result.label)
    np.testing.assert_array_equal(decisions.answered, result.label >= 0)
    assert set(decisions.outcome) <= {"answered", "refused"}
    assert list(decisions.to_frame().columns) == ["query", "outcome", "label"]


def test_decisions_refuse_expected_accounting():
    votes = make_votes()
    with pytest.raises(OptionError, match="--accounting expected"):
        analyze(votes, "confident", accounting="expected",
                decisions=np.ones(votes.shape[0], dtype=bool))


@pytest.mark.parametrize("name, outcome, message", [
    ("gnmax", "refused", "not one -m gnmax can produce"),
    ("confident", "student", "not one -m confident can produce"),
    ("svt", "answered", "not one -m svt can produce"),
])
def test_outcomes_the_mechanism_cannot_produce(name, outcome, message):
    votes = make_votes(queries=10)
    given = pate_cli.LabelDecisions(name, np.arange(10), np.full(10, outcome),
                                    np.full(10, -1))
    with pytest.raises(InputError, match=message):
        analyze(votes, name, decisions=given, **PARAMS[name])


def test_svt_decisions_follow_the_cutoff():
    votes = make_votes(queries=10)
    outcome = np.array(["stable"] * 9 + ["halted"])
    given = pate_cli.LabelDecisions("svt", np.arange(10), outcome, np.full(10, -1))
    with pytest.raises(InputError, match="halted after 0 unstable"):
        analyze(votes, "svt", decisions=given, **PARAMS["svt"])


def test_interactive_student_outcome_needs_a_confident_student():
    votes = make_votes(queries=10)
    student = np.full(votes.shape, 0.25)  # never above gamma 0.5
    given = pate_cli.LabelDecisions("interactive", np.arange(10),
                                    np.array(["student"] + ["refused"] * 9), np.full(10, -1))
    with pytest.raises(InputError, match="row 1: outcome 'student' needs the student's own"):
        analyze(votes, "interactive", decisions=given, student=student,
                **PARAMS["interactive"])


def test_budget_with_decisions_halts_where_the_replay_did():
    votes = make_votes(seed=3, queries=200)
    made = analyze(votes, "confident", budget=3.0, **PARAMS["confident"])
    halted = made.budget.halted_at
    assert halted is not None
    decisions = label(votes, "confident", budget=3.0, **PARAMS["confident"])
    again = analyze(votes, "confident", budget=3.0, decisions=decisions, **PARAMS["confident"])
    assert again.budget == made.budget and again.epsilon == made.epsilon <= 3.0
    # a decisions file shorter than the run, without a budget that halts there, is refused
    with pytest.raises(InputError, match="decisions"):
        analyze(votes, "confident", budget=1e6, decisions=decisions, **PARAMS["confident"])
