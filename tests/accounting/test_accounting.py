"""The accounting kernels against independent per-row code, hand-derived cases and the
values math:reference-values lists."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.accounting.gnmax import log_q_gnmax, rdp_gnmax, rdp_gnmax_data_independent
from pate_cli.accounting.laplace import log_q_lnmax, rdp_lnmax, rdp_lnmax_data_independent
from pate_cli.accounting.threshold import (
    count_step,
    log_pr_answered,
    raised_charge,
    raised_counts,
    rdp_threshold,
)
from pate_cli.numerics import log1mexp, log_add
from pate_cli.orders import default_orders, parse_orders
from tests import scalar_reference as ref

ORDERS = default_orders()
RAISED = 1.0 + 2.0**-40  # every converted epsilon (conversion.ROUNDING_MARGIN)
SOME_ORDERS = np.array([1.5, 2.0, 3.5, 8.0, 14.0, 25.0, 60.0, 100.0, 250.0, 500.0])


def random_votes(rng, queries, classes, teachers):
    """Vote rows from teachers that agree to varied degrees, with some ties."""
    strength = rng.uniform(0.0, 6.0, size=queries)
    logits = rng.normal(size=(queries, classes)) * strength[:, None]
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    return np.array([rng.multinomial(teachers, p) for p in probs], dtype=np.float64)


def close(actual, expected, rtol=1e-12):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert np.array_equal(np.isneginf(actual), np.isneginf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(actual[finite], expected[finite], rtol=rtol, atol=0)


# --- the default grid and --orders ---------------------------------------------------------

def test_default_grid_is_the_papers():
    assert ORDERS.size == 298
    assert ORDERS[0] == 2 and ORDERS[197] == 100.5 and ORDERS[198] == 100
    assert ORDERS[196] == 100 and math.isclose(ORDERS[-1], 500)


@pytest.mark.parametrize(("text", "expected"), [
    ("2,4,8.5", [2, 4, 8.5]), ("2:4:0.5", [2, 2.5, 3, 3.5, 4]), ("2:4.2:1", [2, 3, 4]),
])
def test_parse_orders(text, expected):
    assert parse_orders(text).tolist() == expected


@pytest.mark.parametrize(("text", "message"), [
    ("0.5,2", "greater than 1"), ("1", "greater than 1"), ("2:1:1", "below start"),
    ("2:5:0", "positive"), ("a,2", "not a number"), ("", "empty"),
])
def test_parse_orders_rejects(text, message):
    with pytest.raises(ValueError, match=message):
        parse_orders(text)


# --- numerics ------------------------------------------------------------------------------

def test_log1mexp_matches_scalar_code_across_the_switch():
    x = np.concatenate([-np.logspace(-300, 3, 500), [0.0, -1.0]])
    close(log1mexp(x), [ref.log1mexp(float(v)) for v in x], rtol=1e-15)
    with pytest.raises(ValueError):
        log1mexp(np.array([0.1]))


def test_log_add_equals_logaddexp():
    rng = np.random.default_rng(3)
    x, y = rng.normal(scale=50, size=(2, 1000))
    x[:5] = -np.inf
    y[:3] = -np.inf
    np.testing.assert_allclose(log_add(x, y), np.logaddexp(x, y), rtol=1e-15)


# --- GNMax ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("classes", "teachers", "sigma"), [
    (2, 250, 40.0), (10, 250, 40.0), (10, 250, 5.0), (150, 5000, 100.0), (26, 100, 20.0),
])
def test_log_q_gnmax_equals_per_row_code(classes, teachers, sigma):
    rng = np.random.default_rng(classes + teachers)
    votes = random_votes(rng, 300, classes, teachers)
    expected = [ref.log_q_gnmax(row, sigma) for row in votes]
    close(log_q_gnmax(votes, sigma=sigma), expected)


@pytest.mark.parametrize("sigma", [0.5, 5.0, 40.0, 100.0])
def test_rdp_gnmax_equals_per_row_code(sigma):
    rng = np.random.default_rng(int(sigma * 10))
    log_q = np.concatenate([-rng.exponential(scale=200.0, size=300), [-np.inf, -1e-9,
                                                                     math.log(0.5)]])
    actual = rdp_gnmax(log_q, sigma=sigma, orders=ORDERS)
    expected = [[ref.rdp_gnmax(float(lq), sigma, float(a)) for a in ORDERS] for lq in log_q]
    close(actual, expected)


def test_log_q_hand_cases():
    # A two-way tie: Phi(0) = 1/2 for the runner-up already exceeds the cap log(1 - 1/K)
    # for K = 2, and for K = 3 the sum is 1/2 + Phi(-1000/(sqrt2 sigma)) < 2/3.
    assert log_q_gnmax(np.array([[5.0, 5.0]]), sigma=1.0)[0] == math.log(0.5)
    lq = log_q_gnmax(np.array([[5.0, 5.0, 0.0]]), sigma=1.0)[0]
    assert math.isclose(lq, math.log(0.5 + 0.5 * math.erfc(5 / 2)), rel_tol=1e-14)
    tie = log_q_gnmax(np.array([[3.0, 3.0, 3.0, 3.0]]), sigma=1.0)[0]
    assert tie == math.log(1 - 1 / 4)
    # One other class at gap g: q = Phi(-g / (sqrt2 sigma)).
    g, sigma = 30.0, 10.0
    lq = log_q_gnmax(np.array([[40.0, 10.0]]), sigma=sigma)[0]
    assert math.isclose(lq, math.log(0.5 * math.erfc(g / (2 * sigma))), rel_tol=1e-14)


def test_log_q_minus_infinity_gives_zero_cost():
    assert np.all(rdp_gnmax(np.array([-np.inf]), sigma=40.0, orders=ORDERS) == 0)


def test_unanimous_votes_cost_far_less_than_data_independent():
    votes = np.array([[250.0, 0, 0, 0, 0, 0, 0, 0, 0, 0]])
    rdp = rdp_gnmax(log_q_gnmax(votes, sigma=40.0), sigma=40.0, orders=ORDERS)[0]
    independent = rdp_gnmax_data_independent(sigma=40.0, orders=ORDERS)
    # log q = log(9 Phi(-250 / (sqrt2 40))) = -10.019...; at order 14 the bound is about
    # 3.1e-5 against 14/1600 = 8.75e-3 data-independent (under 1/250 of it).
    assert math.isclose(log_q_gnmax(votes, sigma=40.0)[0],
                        math.log(9 * 0.5 * math.erfc(250 / (2 * 40))), rel_tol=1e-13)
    assert np.all(rdp > 0)
    assert np.all(rdp[:60] < 0.02 * independent[:60])  # orders 2 .. 31.5
    assert rdp[ORDERS == 14][0] < independent[ORDERS == 14][0] / 250


def test_rdp_gnmax_rejects_bad_arguments():
    with pytest.raises(ValueError, match="log q"):
        rdp_gnmax(np.array([0.1]), sigma=1.0, orders=ORDERS)
    with pytest.raises(ValueError, match="sigma"):
        rdp_gnmax(np.array([-1.0]), sigma=-1.0, orders=ORDERS)
    with pytest.raises(ValueError, match="greater than 1"):
        rdp_gnmax(np.array([-1.0]), sigma=1.0, orders=[1.0, 2.0])


def test_rdp_gnmax_decreasing_in_q_then_flat():
    """math:reference-values: strictly decreasing inside the data-dependent range, constant
    above."""
    sigma, order = 40.0, np.array([14.0])
    log_q = -np.linspace(0.01, 60, 4000)[::-1]   # increasing q
    rdp = rdp_gnmax(log_q, sigma=sigma, orders=order)[:, 0]
    flat = rdp == order[0] / sigma**2
    assert flat[-1] and not flat[0]
    boundary = np.flatnonzero(~flat)[-1]
    assert np.all(flat[boundary + 1:])
    assert np.all(np.diff(rdp[: boundary + 1]) > 0)   # cost rises with q


# --- threshold ------------------------------------------------------------------------------

def test_threshold_step_equals_per_row_code():
    rng = np.random.default_rng(11)
    maxima = np.concatenate([rng.uniform(0, 250, 300), [0.5, 1.5, 2.5, 199.5, 200.5, 250]])
    lp = log_pr_answered(maxima, threshold=200.0, sigma_threshold=150.0)
    close(lp, [ref.log_pr_answered([m], 200.0, 150.0) for m in maxima], rtol=1e-15)
    actual = rdp_threshold(lp, sigma_threshold=150.0, orders=ORDERS)
    expected = [[ref.rdp_threshold(float(x), 150.0, float(a)) for a in ORDERS] for x in lp]
    close(actual, expected)


@pytest.mark.parametrize("count, toward", [(139.4, 139.5), (260.6, 260.5),
                                           (199.99, 200.0), (200.03, 200.0), (2.5, 2.5),
                                           (150.0, 150.0), (139.25 + 1e-13, 139.5)])
def test_a_fractional_count_is_rounded_toward_the_threshold(count, toward):
    """Rounding half to even (the 2018 paper's) charged 139.4 as 139, a q 6% below the
    mechanism's (which compares 139.4): an under-charge. Rounded toward T on a lattice of
    at most sigma1 / 64 (1/4 at sigma1 20), q is at least the mechanism's; whole counts are
    unchanged."""
    lp = log_pr_answered(np.array([count]), threshold=200.0, sigma_threshold=20.0)
    assert lp[0] == log_pr_answered(np.array([toward]), threshold=200.0,
                                    sigma_threshold=20.0)[0]
    exact = mpmath.ncdf((mpmath.mpf(repr(count)) - 200) / 20)
    exact_q = float(min(exact, 1 - exact))
    q = min(math.exp(lp[0]), -math.expm1(lp[0]))
    assert q >= exact_q * (1 - 1e-14)
    orders = np.array([2.0, 5.0, 10.0])
    charged = rdp_threshold(lp, sigma_threshold=20.0, orders=orders)
    assert np.all(charged >= rdp_threshold(np.log([exact_q]), sigma_threshold=20.0,
                                           orders=orders) * (1 - 1e-12))


@settings(max_examples=300, deadline=None)
@given(sigma1=st.sampled_from([5.0, 20.0, 150.0]), offset=st.floats(1e-9, 60.0))
def test_the_expected_charge_of_a_count_rounded_down_is_never_below_its_own(sigma1, offset):
    """A fractional count above T is rounded down (toward T) for the selection's cost,
    which lowers its pr_answered: the answer step's expected charge (math:costs) of such a
    raised count is the probability one lattice step up, never below the mechanism's
    (mpmath at 40 digits), and whole counts are never raised."""
    threshold = 200.0
    count = threshold + offset
    raised = raised_counts(np.array([count]), threshold=threshold, sigma_threshold=sigma1)
    step = count_step(sigma1)
    assert raised[0] == (count != math.floor(count / step) * step)
    lp = log_pr_answered(np.array([count]), threshold=threshold, sigma_threshold=sigma1)
    charge = raised_charge(lp, sigma_threshold=sigma1)[0] if raised[0] else math.exp(lp[0])
    with mpmath.workdps(40):
        exact = mpmath.ncdf((mpmath.mpf(repr(count)) - threshold) / sigma1)
        up = mpmath.ncdf((mpmath.mpf(repr(count)) + step - threshold) / sigma1)
    # (a whole count's exp(log pr) may round an ulp low: the conversion's 2^-40 covers it)
    assert charge >= exact * (1 - 4e-16)
    assert charge <= up * (1 + 1e-9)  # at most one lattice step (and the margin) above
    whole = np.arange(0.0, 400.0)
    assert not raised_counts(whole, threshold=threshold, sigma_threshold=sigma1).any()


@pytest.mark.parametrize("sigma1, threshold", [(5.0, 200.0), (20.0, 200.0), (150.0, 200.0),
                                              (1.0, 200.0), (40.0, 137.3)])
def test_a_count_an_ulp_below_a_lattice_point_is_charged_at_least_its_own(sigma1, threshold):
    """The tightest raised counts: an ulp below each lattice point above T (as n - M p can
    land), within 4 sigma1 of T. Rounded down a whole step, then raised one step back by
    :func:`raised_charge`, the charge sits within rounding of the mechanism's own
    ``Phi((count - T) / sigma1)``; its 1e-12 (1 + |z|) margin keeps it at or above that
    value at 40 digits with no slack (without it a sixth of these fall an ulp below).
    Farther out (z from about 4.7) the margin moves Phi by under half an ulp of 1 and the
    charge may round an ulp low, which the conversion's 2^-40 covers."""
    step = count_step(sigma1)
    first = math.floor(threshold / step) * step + step
    lattice = first + step * np.arange(int(4.0 * sigma1 / step))
    counts = np.nextafter(lattice, 0.0)
    assert raised_counts(counts, threshold=threshold, sigma_threshold=sigma1).all()
    lp = log_pr_answered(counts, threshold=threshold, sigma_threshold=sigma1)
    charges = raised_charge(lp, sigma_threshold=sigma1)
    with mpmath.workdps(40):
        for count, charge in zip(counts.tolist(), charges.tolist(), strict=True):
            exact = mpmath.ncdf((mpmath.mpf(count) - mpmath.mpf(threshold)) / sigma1)
            assert mpmath.mpf(charge) >= exact, count


# --- LNMax ---------------------------------------------------------------------------------

@pytest.mark.parametrize("lam", [0.5, 5.0, 20.0, 100.0])
def test_lnmax_equals_per_row_code(lam):
    rng = np.random.default_rng(int(lam * 7))
    votes = random_votes(rng, 200, 10, 250)
    lq = log_q_lnmax(votes, scale=lam)
    close(lq, [ref.log_q_lnmax(row, lam) for row in votes])
    actual = rdp_lnmax(lq, scale=lam, orders=SOME_ORDERS)
    expected = [[ref.rdp_lnmax(float(x), lam, float(a)) for a in SOME_ORDERS] for x in lq]
    close(actual, expected)


def test_lnmax_bounded_by_pure_dp():
    rng = np.random.default_rng(5)
    votes = random_votes(rng, 200, 10, 250)
    rdp = rdp_lnmax(log_q_lnmax(votes, scale=20.0), scale=20.0, orders=ORDERS)
    eps0 = 2 / 20.0
    generic = np.minimum(eps0, 0.5 * eps0 * eps0 * ORDERS)  # math:independent, pure DP -> zCDP
    assert np.all(rdp <= generic)
    # the data-independent curve is the exact Laplace RDP, below the generic bound
    independent = rdp_lnmax_data_independent(scale=20.0, orders=ORDERS)
    assert np.all(independent <= generic)
    assert np.all(independent <= eps0)


def test_a_huge_eps0_with_an_underflowing_q():
    """eps0 past 700 (exp overflows) with log q below -745 (q underflows to 0): the test
    q <= 1 / (e^eps0 + 1) fails in log space (log q = -994.5 > -2000), so the curve is the
    generic min(eps0, alpha eps0^2 / 2) (math:lnmax); it raised ValueError in log1mexp
    (review R12). Where log q is below -eps0 the bound applies and stays below eps0."""
    from pate_cli.accounting.laplace import rdp_pure_from_q

    log_q = log_q_lnmax(np.array([[5, 4, 1]]), scale=1e-3)
    assert log_q[0] == pytest.approx(-994.5, abs=0.1)
    assert rdp_lnmax(log_q, scale=1e-3, orders=[2.0]).tolist() == [[2000.0]]
    tight = rdp_pure_from_q(np.array([-3000.0]), eps0=2000.0, orders=[2.0, 8.0])
    assert np.all((tight >= 0.0) & (tight < 2000.0))


# --- conversion -----------------------------------------------------------------------------

def test_conversions_equal_per_row_code():
    rng = np.random.default_rng(2)
    curves = rng.exponential(size=(50, ORDERS.size)) * ORDERS / 100
    for delta in (1e-5, 1e-8, 0.3):
        eps, order = rdp_to_epsilon(curves, orders=ORDERS, delta=delta)
        for i, curve in enumerate(curves):
            want_eps, want_order = ref.epsilon_classic(list(curve), list(ORDERS), delta)
            assert math.isclose(eps[i], want_eps * RAISED, rel_tol=1e-13)
            assert eps[i] >= want_eps and order[i] == want_order
        better, _ = rdp_to_epsilon(curves, orders=ORDERS, delta=delta, conversion="improved")
        want = np.array([ref.epsilon_improved(list(c), list(ORDERS), delta) for c in curves])
        np.testing.assert_allclose(better, want * RAISED, rtol=1e-13)
        assert np.all(better >= want)


def test_every_epsilon_is_raised_past_the_rounding_of_its_sums():
    """An epsilon is a bound: the conversion raises it by 2^-40 relative (0 stays 0), more
    than the sums' and curves' rounding, so a figure a few ulps below the formula's value
    (LNMax: 8.870399706009104 for 8.8703997060091132) is not reported."""
    eps, _ = rdp_to_epsilon(np.array([[0.5], [0.0]]), orders=[3.0], delta=1e-4,
                            conversion="improved")  # 0: the total-variation shortcut
    exact = 0.5 + math.log(2 / 3) - (math.log(1e-4) + math.log(3)) / 2
    assert eps[0] == exact * RAISED and eps[0] > exact and eps[1] == 0.0


def test_conversion_hand_case():
    # One order: eps = rdp + log(1/delta)/(alpha - 1).
    eps, order = rdp_to_epsilon(np.array([0.5]), orders=[3.0], delta=1e-4)
    assert math.isclose(float(eps), (0.5 + math.log(1e4) / 2) * RAISED, rel_tol=1e-15)
    assert float(order) == 3.0


def test_conversion_rejects_bad_delta():
    for delta in (0.0, 1.0, -1e-5, 2.0):
        with pytest.raises(ValueError, match="delta"):
            rdp_to_epsilon(np.zeros(ORDERS.size), orders=ORDERS, delta=delta)


@pytest.mark.parametrize("sigma1, step", [(150.0, 1.0), (64.0, 1.0), (63.9, 0.5), (20.0, 0.25),
                                          (5.0, 1 / 16), (1e-9, 2.0**-10), (1e300, 1.0)])
def test_the_count_lattice_follows_the_threshold_noise(sigma1, step):
    assert count_step(sigma1) == step


@pytest.mark.parametrize("votes, sigma", [
    ([620, 100, 97, 96, 95, 94, 93, 92, 91, 90], 10.0),  # runners-up a vote apart
    ([2000, 700, 699, 698, 650, 100, 0, 0, 0, 0], 25.0),
    ([1000, 380, 380, 379, 379, 2, 0, 0], 12.0)])
def test_log_q_of_a_confident_row_counts_every_close_runner_up(votes, sigma):
    """Rows so confident that q is below 1e-280 go through log space, where terms far
    below the runner-up's are dropped: dropping terms up to e^-5 of it (a cut at z^2
    distance 10 instead of 100) gave log q 4.3e-4 too low, below Prop. 7's bound, and no
    test saw it (mutation review R34). Against mpmath at 50 digits."""
    top = max(votes)
    with mpmath.workdps(50):
        exact = mpmath.log(mpmath.fsum(
            mpmath.ncdf(-(top - v) / (mpmath.sqrt(2) * sigma))
            for v in sorted(votes, reverse=True)[1:]))
    got = float(log_q_gnmax(np.array([votes]), sigma=sigma)[0])
    assert got < -600  # the log-space path
    assert abs(got - float(exact)) <= 1e-12 * abs(float(exact))
