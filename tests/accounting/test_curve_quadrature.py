"""accounting.curve_quadrature: a block's weighted sum of curves from 17 of them, within
1e-12 relative of the sum over every statistic (math:tolerance)."""

from __future__ import annotations

import math
from functools import partial

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting import curve_quadrature
from pate_cli.accounting.curve_quadrature import (
    DEGREE,
    MIN_ROWS,
    interpolants,
    interpolated_sums,
)
from pate_cli.accounting.gnmax import rdp_gnmax
from pate_cli.accounting.grouped import TOTAL_BLOCK, block_sums, weighted_curve_sum
from pate_cli.accounting.threshold import rdp_threshold
from pate_cli.orders import default_orders
from tests.synthetic import TOLERANCE


def _gnmax(sigma, keys, orders):
    return rdp_gnmax(keys, sigma=sigma, orders=orders)


def _threshold(sigma1, keys, orders):
    return rdp_threshold(keys, sigma_threshold=sigma1, orders=orders)


def block_sum(rdp, orders, block):
    """One block's sums (``grouped.block_sums`` of a group of one)."""
    return block_sums(rdp, orders, [block])[0]


def quadrature(rdp, orders, keys, weights):
    """One block's quadrature sums and kept mask, or None when it is not fit."""
    fitted = interpolants(rdp, orders, [keys])
    if not fitted.fit:
        return None
    total, kept = interpolated_sums(fitted, weights)
    return total[0], kept[0]


def _per_query_sums(rdp, keys, weights, orders):
    """The sum over every statistic of today's per-query curves, added exactly (fsum)."""
    curves = rdp(keys, orders)
    columns = weights.reshape(keys.size, -1)
    return np.array([[math.fsum(columns[:, run] * curves[:, k]) for k in range(orders.size)]
                     for run in range(columns.shape[1])]).reshape(weights.shape[1:]
                                                                  + (orders.size,))


def _block(rng, size, centre, width):
    keys = np.unique(rng.uniform(centre - width / 2, centre + width / 2, size))
    return keys[keys < 0.0]


@st.composite
def blocks(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    size = draw(st.integers(MIN_ROWS, TOTAL_BLOCK))
    centre = -draw(st.one_of(st.floats(0.02, 80.0), st.floats(0.6, 0.8)))
    width = 10.0 ** draw(st.floats(-8.0, 1.5))  # from a 10^8-query file's block to wide
    keys = _block(rng, size, centre, width)
    runs = draw(st.sampled_from([None, 1, 3]))
    weights = (rng.uniform(0.0, 3.0, keys.size) if runs is None
               else rng.integers(0, 3, (keys.size, runs)).astype(float))
    if draw(st.booleans()):
        orders = default_orders()
    else:
        orders = np.sort(rng.uniform(1.01, 600.0, draw(st.integers(1, 12))))
    return keys, weights, orders


WORST: list[float] = [0.0]


@settings(max_examples=80, deadline=None)
@given(block=blocks(), sigma=st.floats(0.5, 200.0), kind=st.sampled_from(["answer", "selection"]))
def test_block_sums_are_within_the_tolerance_of_the_per_query_sum(block, sigma, kind):
    keys, weights, orders = block
    # the selection step's keys are log pr_answered: its curve has a kink at log 1/2
    rdp = partial(_gnmax if kind == "answer" else _threshold, sigma)
    got = block_sum(rdp, orders, (keys, weights))
    exact = _per_query_sums(rdp, keys, weights, orders)
    difference = np.abs(got - exact)
    assert np.all(difference <= TOLERANCE * exact), float(np.max(difference / exact))
    # never below the exact sum by more than the tolerance (so neither is the epsilon)
    assert np.all(got >= exact * (1.0 - TOLERANCE))
    WORST[0] = max(WORST[0], float(np.max(difference / np.where(exact > 0, exact, 1.0))))


def test_the_worst_case_over_soft_vote_blocks_is_printed_and_far_below_the_tolerance():
    """Blocks like those of a 10^6 and a 10^8 soft-vote file (sigma 40, the default orders):
    the largest relative difference from the exact per-query sum, printed."""
    rng = np.random.default_rng(27)
    orders = default_orders()
    rdp = partial(_gnmax, 40.0)
    worst, kept = 0.0, 0
    for width in (4e-2, 4e-4):
        for centre in np.linspace(-10.0, -0.15, 12):
            keys = _block(rng, TOTAL_BLOCK, centre, width)
            weights = rng.uniform(0.2, 1.0, keys.size)
            got = block_sum(rdp, orders, (keys, weights))
            exact = _per_query_sums(rdp, keys, weights, orders)
            worst = max(worst, float(np.max(np.abs(got - exact) / exact)))
            kept += int(quadrature(rdp, orders, keys, weights)[1].sum())
    print(f"\nquadrature: worst relative difference {worst:.3g} "
          f"(hypothesis so far {WORST[0]:.3g}); {kept} of {24 * orders.size} columns kept")
    assert worst <= 1e-13
    assert kept > 0.95 * 24 * orders.size  # the fast way is what such blocks take


def _theorem6_mp(log_q: float, sigma: float, alpha: float) -> mpmath.mpf:
    """math:gnmax at 50 digits, for a log q where Theorem 6 applies."""
    x, s, a = mpmath.mpf(log_q), mpmath.mpf(sigma), mpmath.mpf(alpha)
    mu2 = s * mpmath.sqrt(-x)
    mu1 = mu2 + 1
    e1, e2 = mu1 / s**2, mu2 / s**2
    if not mu1 > a:
        return a / s**2
    log1q = mpmath.log(1 - mpmath.exp(x))
    log_a = (a - 1) * (log1q - mpmath.log(1 - mpmath.exp((x + e2) * (1 - 1 / mu2))))
    log_b = (a - 1) * (e1 - x / (mu1 - 1))
    dep = mpmath.log(mpmath.exp(log1q + log_a) + mpmath.exp(x + log_b)) / (a - 1)
    return min(a / s**2, dep)


def test_against_mpmath_the_quadrature_is_as_close_as_the_sum_over_every_statistic():
    rng = np.random.default_rng(3)
    keys = _block(rng, MIN_ROWS, -6.0, 1e-3)
    weights = rng.uniform(0.1, 1.0, keys.size)
    orders = np.array([2.0, 9.5, 40.0, 90.0, 300.0])
    rdp = partial(_gnmax, 40.0)
    got = block_sum(rdp, orders, (keys, weights))
    row_by_row = (rdp(keys, orders) * weights[:, None]).cumsum(axis=0)[-1]
    with mpmath.workdps(50):
        for k, alpha in enumerate(orders):
            truth = mpmath.fsum(mpmath.mpf(float(w)) * _theorem6_mp(float(x), 40.0, alpha)
                                for x, w in zip(keys, weights, strict=True))
            error = abs(float((got[k] - truth) / truth))
            assert error <= max(1e-14, 2 * abs(float((row_by_row[k] - truth) / truth)))


def _edge_order(rdp, keys, sigma):
    """An order at which the block's column reaches alpha / sigma^2 inside the block (a kink
    of Theorem 6's ``min``, math:gnmax)."""
    grid = np.linspace(2.0, 200.0, 4000)
    capped = rdp(keys, grid) >= grid / sigma**2
    mixed = np.flatnonzero(capped.any(axis=0) & ~capped.all(axis=0))
    return grid[mixed[mixed.size // 2]]


def test_an_edge_inside_the_block_sends_that_order_to_every_statistic():
    sigma = 40.0
    keys = np.linspace(-5.0, -4.9, 2000)
    rdp = partial(_gnmax, sigma)
    orders = np.array([3.0, _edge_order(rdp, keys, sigma), 400.0])
    weights = np.ones(keys.size)
    total, kept = quadrature(rdp, orders, keys, weights)
    assert kept.tolist() == [True, False, True]
    assert total[1] == 0.0
    got = block_sum(rdp, orders, (keys, weights))
    assert got[1] == (rdp(keys, orders[1:2]) * weights[:, None]).cumsum(axis=0)[-1, 0]


def test_without_the_check_the_edge_would_be_off_by_more_than_the_tolerance(monkeypatch):
    """The refusal matters: accepting every order misses the kink by more than 1e-12."""
    sigma = 40.0
    keys = np.linspace(-5.0, -4.9, 2000)
    rdp = partial(_gnmax, sigma)
    orders = np.array([_edge_order(rdp, keys, sigma)])
    monkeypatch.setattr(curve_quadrature, "TOLERANCE", np.inf)
    got = block_sum(rdp, orders, (keys, np.ones(keys.size)))
    exact = _per_query_sums(rdp, keys, np.ones(keys.size), orders)
    assert abs(got[0] - exact[0]) > 1e-12 * exact[0]


def test_blocks_unfit_for_it_are_summed_row_by_row_with_the_bits_of_before():
    rng = np.random.default_rng(8)
    rdp = partial(_gnmax, 5.0)
    orders = default_orders()
    small = np.sort(rng.uniform(-3.0, -2.9, MIN_ROWS - 1))
    with_infinity = np.concatenate(([-np.inf], np.sort(rng.uniform(-3.0, -2.9, MIN_ROWS))))
    for keys in (small, with_infinity):
        assert quadrature(rdp, orders, keys, np.ones(keys.size)) is None
        weights = rng.uniform(0, 1, keys.size)
        np.testing.assert_array_equal(
            weighted_curve_sum(keys, weights, rdp, orders),
            (rdp(keys, orders) * weights[:, None]).cumsum(axis=0)[-1])


@pytest.mark.parametrize("runs", [1, 4])
def test_each_run_has_the_bits_of_its_own_column(runs):
    rng = np.random.default_rng(runs)
    keys = _block(rng, TOTAL_BLOCK, -3.0, 0.3)  # some orders kept, some refused
    weights = rng.integers(0, 2, (keys.size, runs)).astype(float)
    rdp = partial(_gnmax, 20.0)
    orders = default_orders()
    together = block_sum(rdp, orders, (keys, weights))
    for run in range(runs):
        np.testing.assert_array_equal(together[run],
                                      block_sum(rdp, orders, (keys, weights[:, run].copy())))


def test_the_points_span_the_block_and_a_polynomial_is_summed_exactly():
    """A curve that is a positive polynomial of degree DEGREE - 4 in the key (its last three
    coefficients 0) is kept and summed exactly (up to
    rounding): the quadrature is exact on the space it interpolates."""
    rng = np.random.default_rng(1)
    keys = np.sort(rng.uniform(-2.0, -1.0, MIN_ROWS))
    weights = rng.uniform(0, 1, keys.size)
    orders = np.array([2.0, 3.0])
    seen = []

    def polynomial(points, at):
        seen.append(points.copy())
        return np.outer(1.0 + points**2 + 0.1 * points**(DEGREE - 4), at)

    total, kept = quadrature(polynomial, orders, keys, weights)
    assert seen[0][0] == keys[0] and seen[0][-1] == keys[-1] and seen[0].size == DEGREE + 1
    exact = [math.fsum(weights * (1.0 + keys**2 + 0.1 * keys**(DEGREE - 4)) * a) for a in orders]
    np.testing.assert_allclose(total, exact, rtol=1e-13)
    assert kept.all()


def test_a_blocks_sums_do_not_depend_on_the_blocks_evaluated_with_it():
    """Blocks go ``BLOCKS_PER_TASK`` to a task (their points in one call of the curve
    function): each block's sums are the bits it has alone, fit or not."""
    rng = np.random.default_rng(11)
    rdp = partial(_gnmax, 40.0)
    orders = default_orders()
    edges = np.sort(rng.uniform(-9.0, -0.2, 6))
    group = [(_block(rng, size, centre, 10.0 ** -exponent), None)
             for size, centre, exponent in zip((TOTAL_BLOCK, 900, 2000, TOTAL_BLOCK, 1500),
                                               edges, (3, 2, 4, 1, 5), strict=False)]
    group = [(keys, rng.integers(0, 3, (keys.size, 2)).astype(float)) for keys, _ in group]
    together = block_sums(rdp, orders, group)
    for block, part in zip(group, together, strict=True):
        np.testing.assert_array_equal(part, block_sum(rdp, orders, block))
