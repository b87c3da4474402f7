"""The exponential mechanism's accounting (math:exponential) against independent values.

q against the softmax in 50-digit arithmetic (mpmath), ties and huge eta included; the
curves against math:exponential and math:lnmax written out plainly (one order at a time, in mpmath);
the properties every curve must have (hypothesis); hand-derived cases.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.exponential import (
    log_q_exponential,
    rdp_exponential,
    rdp_exponential_data_independent,
)
from pate_cli.accounting.laplace import rdp_lnmax
from pate_cli.orders import default_orders
from pate_cli.vote_rows import VoteRows
from tests.precision import digits

_digits = digits(50)  # mpmath's precision for this module's tests


def mp_log_q(counts, eta, zero_classes=0):
    """1 - softmax(eta n)_{i*} in 50 digits, i* the lowest-index plurality; ``zero_classes``
    further classes with count 0."""
    counts = [mpmath.mpf(c) for c in counts]
    top = max(range(len(counts)), key=lambda j: (counts[j], -j))
    weights = [mpmath.exp(eta * c) for c in counts] + [mpmath.mpf(1)] * zero_classes
    others = mpmath.fsum(w for j, w in enumerate(weights) if j != top)
    return mpmath.log(others) - mpmath.log(mpmath.fsum(weights))  # no 1 - p cancellation


def mp_rdp(log_q, eta, order):
    """math:exponential written out: math:lnmax's formula with eps0 = 2 eta (each branch as printed
    there), then the minimum with min(eps0, alpha eps0^2 / 8)."""
    eps0, alpha = 2 * mpmath.mpf(eta), mpmath.mpf(order)
    independent = min(eps0, alpha * eps0**2 / 8)
    if log_q == -math.inf:
        return min(mpmath.mpf(0), independent)
    q = mpmath.exp(mpmath.mpf(log_q))
    if q <= 1 / (mpmath.exp(eps0) + 1):
        log_t = mpmath.log(
            (1 - q) * ((1 - q) / (1 - mpmath.exp(eps0) * q)) ** (alpha - 1)
            + q * mpmath.exp(eps0 * (alpha - 1)))
    else:
        log_t = mpmath.inf
    section5 = min(eps0**2 * alpha / 2, log_t / (alpha - 1), eps0)
    return min(section5, independent)


def _random_rows(seed: int, count: int, classes: int, teachers: int) -> np.ndarray:
    """Vote histograms summing to ``teachers``, with some exact ties."""
    draws = np.random.default_rng(seed)
    rows = np.stack([np.bincount(draws.integers(0, classes, teachers), minlength=classes)
                     for _ in range(count)]).astype(np.float64)
    rows[0] = [teachers // 2, teachers - teachers // 2] + [0] * (classes - 2)  # a 2-way tie
    rows[1] = np.full(classes, teachers // classes)  # all tied (when teachers % K == 0)
    return rows


@pytest.mark.parametrize("eta", [1e-6, 0.01, 0.1, 1.0, 7.0, 300.0, 1e5])
def test_log_q_matches_the_softmax_in_50_digits(eta):
    rows = _random_rows(3, 40, 6, 60)
    got = log_q_exponential(rows, eta=eta)
    for row, value in zip(rows, got, strict=True):
        exact = mp_log_q(row, eta)
        assert value == pytest.approx(float(exact), rel=1e-12, abs=1e-300), (row, eta)


def test_log_q_of_ties_and_of_huge_gaps():
    rows = np.array([[5.0, 5.0, 0.0], [4.0, 4.0, 4.0], [250.0, 0.0, 0.0], [1e6, 0.0, 0.0]])
    got = log_q_exponential(rows, eta=1.0)
    assert got[0] == pytest.approx(float(mp_log_q(rows[0], 1.0)), rel=1e-15)  # ~ 1/2
    assert got[1] == pytest.approx(math.log(2 / 3), rel=1e-15)  # q = (K-1)/K, the cap
    assert got[2] == pytest.approx(math.log(2) - 250.0, rel=1e-15)  # 2 e^-250 / (1 + ...)
    assert got[3] == pytest.approx(math.log(2) - 1e6, rel=1e-15)  # far below any float q
    assert np.all(got <= np.log1p(-1.0 / rows.shape[1]))


@pytest.mark.parametrize("eta", [0.05, 1.0, 40.0])
def test_the_zero_block_is_one_term(eta):
    """A zero block of Z classes gives the q of the dense row with Z more zero columns."""
    rows = _random_rows(5, 20, 4, 30)
    for zero in (1, 7, 1000):
        dense = np.hstack([rows, np.zeros((rows.shape[0], zero))])
        sparse = log_q_exponential(VoteRows(rows, zero), eta=eta)
        np.testing.assert_allclose(sparse, log_q_exponential(dense, eta=eta), rtol=1e-12)
        for row, value in zip(rows[:5], sparse[:5], strict=True):
            assert value == pytest.approx(float(mp_log_q(row, eta, zero)), rel=1e-12)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="eta"):
        log_q_exponential([[1.0, 2.0]], eta=0.0)
    with pytest.raises(ValueError, match="zero-vote classes"):
        log_q_exponential(VoteRows(np.array([[1.0, 2.0]]), -1), eta=1.0)
    with pytest.raises(ValueError, match="log q"):
        rdp_exponential([0.5], eta=1.0, orders=[2.0])
    with pytest.raises(ValueError):
        rdp_exponential_data_independent(eta=1.0, orders=[1.0])


ORDERS = [1.5, 2.0, 3.0, 8.0, 32.0, 100.5, 500.0]


@pytest.mark.parametrize("eta", [0.005, 0.035, 0.2, 1.0, 5.0])
def test_curves_match_section_15_written_out(eta):
    rows = _random_rows(11, 25, 10, 250)
    log_q = log_q_exponential(rows, eta=eta)
    log_q = np.concatenate([log_q, [-math.inf, -1e4, -50.0, -5.0, -0.01]])
    got = rdp_exponential(log_q, eta=eta, orders=ORDERS)
    independent = rdp_exponential_data_independent(eta=eta, orders=ORDERS)
    for column, order in enumerate(ORDERS):
        eps0 = 2 * eta
        assert independent[column] == pytest.approx(min(eps0, order * eps0**2 / 8), rel=1e-15)
        for row, value in enumerate(log_q):
            exact = mp_rdp(float(value), eta, order)
            assert got[row, column] == pytest.approx(float(exact), rel=1e-9, abs=1e-15), \
                (value, eta, order)


def test_hand_derived_values():
    """eta = 1/2 (eps0 = 1): the data-independent curve is min(1, alpha / 8); a certain
    answer (q = 0) costs nothing; a q above 1/(e + 1) has no data-dependent bound."""
    curve = rdp_exponential_data_independent(eta=0.5, orders=[2.0, 8.0, 9.0])
    np.testing.assert_array_equal(curve, [0.25, 1.0, 1.0])
    assert np.all(rdp_exponential([-math.inf], eta=0.5, orders=[2.0, 8.0]) == 0.0)
    above = math.log(1 / (math.e + 1)) + 1e-9
    np.testing.assert_array_equal(rdp_exponential([above], eta=0.5, orders=[2.0, 8.0, 9.0]),
                                  [[0.25, 1.0, 1.0]])


def test_section_5_is_shared_with_lnmax():
    """The data-dependent part is LNMax's curve at the same eps0 (lam = 1 / eta) where the
    zCDP cap does not bind (at order 2 and small q, math:lnmax's value is the smaller)."""
    log_q = np.array([-40.0, -20.0, -12.0])
    eta = 0.5
    lnmax = rdp_lnmax(log_q, scale=1 / eta, orders=[2.0])
    ours = rdp_exponential(log_q, eta=eta, orders=[2.0])
    assert np.all(lnmax < 0.25)  # below the zCDP cap alpha eps0^2 / 8
    np.testing.assert_array_equal(ours, lnmax)


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(0, 300), min_size=2, max_size=12),
       eta=st.floats(1e-4, 50.0))
def test_q_is_a_probability_below_one_minus_one_over_k(counts, eta):
    if sum(counts) == 0:
        counts[0] = 1
    log_q = log_q_exponential(np.array([counts], dtype=np.float64), eta=eta)[0]
    assert log_q <= math.log1p(-1 / len(counts)) and not math.isnan(log_q)
    assert log_q == pytest.approx(float(mp_log_q(counts, eta)), rel=1e-10, abs=1e-300)


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(0, 300), min_size=2, max_size=12),
       eta=st.floats(1e-4, 50.0))
def test_data_dependent_never_exceeds_data_independent(counts, eta):
    orders = default_orders()
    log_q = log_q_exponential(np.array([counts], dtype=np.float64), eta=eta)
    dependent = rdp_exponential(log_q, eta=eta, orders=orders)[0]
    independent = rdp_exponential_data_independent(eta=eta, orders=orders)
    assert np.all(dependent >= 0.0) and np.all(dependent <= independent)
    ascending = rdp_exponential_data_independent(eta=eta, orders=np.sort(orders))
    assert np.all(np.diff(ascending) >= 0)  # non-decreasing in the order


@settings(max_examples=40, deadline=None)
@given(log_q=st.lists(st.floats(-1e3, -1e-3), min_size=2, max_size=8),
       eta=st.floats(1e-3, 10.0))
def test_more_certain_answers_cost_no_more(log_q, eta):
    """Section 5's bound is non-decreasing in q where it applies, and capped everywhere."""
    log_q = np.sort(np.array(log_q))
    curves = rdp_exponential(log_q, eta=eta, orders=[2.0, 10.0, 50.0])
    assert np.all(np.diff(curves, axis=0) >= -1e-12)
