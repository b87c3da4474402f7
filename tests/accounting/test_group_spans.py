"""``GroupRun``: a run's group accounting fed span by span (math:individualized) gives the same
bits however the queries are split, for every variant's members and accounting."""

from __future__ import annotations

import numpy as np
import pytest

from pate_cli.accounting.individualized import GroupRun, GroupSetting
from pate_cli.mechanisms import vanishing_participation

ORDERS = np.array([1.5, 2.0, 4.0, 8.0, 32.0])


def _run(setting, spans, columns, *, independent):
    run = GroupRun(setting, budgets=np.array([2.0, 8.0, 20.0]), delta=1e-5,
                   conversion="classic", independent=independent)
    for lo, hi in spans:
        run.add(lo, *(column[lo:hi] for column in columns))
    return run.totals(("a", "b", "c"))


@pytest.mark.parametrize("variant", ["upsampling", "vanishing"])
@pytest.mark.parametrize("independent", [False, True])
def test_spans_give_the_same_bits(variant, independent):
    rng = np.random.default_rng(3)
    queries = 300
    log_q = np.log(rng.uniform(1e-4, 0.5, queries))
    log_pr = np.log(rng.uniform(0.05, 1.0, queries))
    output = rng.random(queries) < 0.7
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
    whole = _run(setting, [(0, queries)], columns, independent=independent)
    split = _run(setting, [(0, 7), (7, 150), (150, 151), (151, queries)], columns,
                 independent=independent)
    for a, b in zip(vars(whole[0]).values(), vars(split[0]).values(), strict=True):
        assert np.array_equal(a, b, equal_nan=True) if isinstance(a, np.ndarray) else a == b
    np.testing.assert_array_equal(whole[1], split[1])
    np.testing.assert_array_equal(whole[2], split[2])
    assert whole[0].stopped_at is not None  # the budgets bind
