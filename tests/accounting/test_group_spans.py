"""``GroupRun``: a run's group accounting fed span by span (math:individualized) gives the same
bits however the queries are split, for every variant's members and accounting."""

from __future__ import annotations

import numpy as np
import pytest

from pate_cli.accounting.gnmax import rdp_gnmax
from pate_cli.accounting.individualized import GroupRun, GroupSetting
from pate_cli.accounting.threshold import rdp_threshold
from pate_cli.mechanisms import vanishing_participation

ORDERS = np.array([1.5, 2.0, 4.0, 8.0, 32.0])


def _statistics(seed: int, answered: float, queries: int = 300):
    """Random ``log q``, ``log pr_answered`` and the replay's outputs of ``queries``."""
    rng = np.random.default_rng(seed)
    return (rng, np.log(rng.uniform(1e-4, 0.5, queries)),
            np.log(rng.uniform(0.05, 1.0, queries)), rng.random(queries) < answered)


def _run(setting, spans, columns, *, accounting):
    run = GroupRun(setting, budgets=np.array([2.0, 8.0, 20.0]), delta=1e-5,
                   conversion="classic", accounting=accounting)
    for lo, hi in spans:
        run.add(lo, *(column[lo:hi] for column in columns))
    return run.totals(("a", "b", "c"))


@pytest.mark.parametrize("variant", ["upsampling", "vanishing"])
@pytest.mark.parametrize("accounting", ["expected", "replay", "data-independent"])
def test_spans_give_the_same_bits(variant, accounting):
    rng, log_q, log_pr, output = _statistics(3, 0.7)
    queries = output.size
    charge = output.astype(np.float64)
    made = (rng.random(queries) < 0.7).astype(np.float64)
    teachers = np.array([0, 0, 1, 1, 2, 2, 2])
    participation = None if variant == "upsampling" else (
        lambda start, count: vanishing_participation(np.array([0.3, 0.6, 1.0])[teachers],
                                                     seed=5, count=count, start=start))
    setting = GroupSetting(sigma=20.0, sigma_threshold=40.0, screening=None, orders=ORDERS,
                           sensitivities=np.array([1.0, 2.0, 3.0]), participation=participation,
                           member_groups=None if participation is None else teachers)
    columns = (log_q, log_pr, output, charge, made)
    whole = _run(setting, [(0, queries)], columns, accounting=accounting)
    split = _run(setting, [(0, 7), (7, 150), (150, 151), (151, queries)], columns,
                 accounting=accounting)
    for a, b in zip(vars(whole[0]).values(), vars(split[0]).values(), strict=True):
        assert np.array_equal(a, b, equal_nan=True) if isinstance(a, np.ndarray) else a == b
    np.testing.assert_array_equal(whole[1], split[1])
    np.testing.assert_array_equal(whole[2], split[2])
    assert whole[0].stopped_at is not None  # the budgets bind


@pytest.mark.parametrize("variant", ["upsampling", "vanishing"])
def test_replay_halts_before_a_query_whose_full_charge_would_exceed(variant):
    """Under replay each member's sums before query i plus i's full charge (the answer
    step counted, answered or not) are checked against its group's budget, a query at a
    time (math:costs); the group's halt is its first member's. A member pays at
    sensitivity k / |S_q| where it takes part (vanishing), its group's factor otherwise."""
    _, log_q, log_pr, output = _statistics(11, 0.3)
    queries = output.size
    charge = output.astype(np.float64)
    teachers = np.array([0, 0, 1, 1, 2, 2, 2])
    budgets = np.array([2.0, 8.0, 20.0])
    scales = np.array([1.0, 2.0, 3.0])
    if variant == "upsampling":
        taking = np.ones((queries, 3), bool)
        members, participation, member_groups = np.arange(3), None, None
        sensitivity = np.broadcast_to(scales, (queries, 3))
    else:
        taking = vanishing_participation(np.array([0.3, 0.6, 1.0])[teachers], seed=5,
                                         count=queries)
        participation, member_groups, members = (
            lambda start, count: taking[start:start + count]), teachers, teachers
        sensitivity = (teachers.size / taking.sum(axis=1))[:, None] * np.ones((1, 7))
    setting = GroupSetting(sigma=20.0, sigma_threshold=40.0, screening=None, orders=ORDERS,
                           sensitivities=scales, participation=participation,
                           member_groups=member_groups)
    run = GroupRun(setting, budgets=budgets, delta=1e-5, conversion="classic",
                   accounting="replay")
    run.add(0, log_q, log_pr, output, charge, charge)
    offset = np.log(1e5) / (ORDERS - 1)
    expected = [None] * 3
    for m, g in enumerate(members):
        spent = np.zeros(ORDERS.size)
        for i in range(queries):
            if not taking[i, m]:
                continue
            scale = sensitivity[i, m]
            selection = rdp_threshold(log_pr[i:i + 1], sigma_threshold=40.0 / scale,
                                      orders=ORDERS)[0]
            answer = rdp_gnmax(log_q[i:i + 1], sigma=20.0 / scale, orders=ORDERS)[0]
            if np.min(spent + selection + answer + offset) > budgets[g]:
                expected[g] = i if expected[g] is None else min(expected[g], i)
                break
            spent = spent + selection + charge[i] * answer
    totals = run.totals(("a", "b", "c"))[0]
    assert list(totals.exhausted_at) == expected
    assert any(not output[i] for i in expected if i is not None)  # a halt the outcome hid
