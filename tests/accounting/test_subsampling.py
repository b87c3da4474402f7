"""Amplification by subsampling (math:sampling) against dp_accounting, mpmath and hand
computations, and its properties (never above the step's own curve, monotone in the rate,
the step itself at rate 1)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.laplace import rdp_laplace, rdp_lnmax_data_independent
from pate_cli.accounting.subsampling import (
    MAX_INTEGER_ORDER,
    THEOREM_27_ORDER,
    _fractional_series,
    _gaussian_even_moments,
    rdp_poisson_gaussian,
    rdp_poisson_general,
    rdp_poisson_laplace,
    rdp_without_replacement,
    rdp_without_replacement_gaussian,
    sampled_laplace_curve,
)
from pate_cli.orders import default_orders

ORDERS = default_orders()
INTEGER = ORDERS == np.floor(ORDERS)
# (rate, z): Private-kNN's two steps (MNIST, rate 0.15), and others across the range
CASES = [(0.15, 75.0), (0.15, 25 / math.sqrt(2)), (0.01, 1.0), (0.001, 5.0), (0.9, 3.0),
         (0.3, 10.0)]


def gaussian(z):
    return lambda orders: np.asarray(orders, dtype=float) / (2.0 * z * z)


def mp_sampled_gaussian(q, z, order):
    """log E_{x ~ N(0, z^2)} [((1 - q) + q exp((2x - 1) / (2 z^2)))^alpha] / (alpha - 1) by
    40-digit quadrature (MTZ 2019's definition of A_alpha)."""
    with mpmath.workdps(40):  # whatever precision other test modules set
        q, z, a = mpmath.mpf(q), mpmath.mpf(z), mpmath.mpf(order)
        integrand = lambda x: mpmath.npdf(x, 0, z) * ((1 - q) + q * mpmath.exp((2 * x - 1) / (2 * z * z)))**a  # noqa: E731,E501
        total = mpmath.quad(integrand, [-mpmath.inf, -10 * z, 0, 10 * z, mpmath.inf])
        return float(mpmath.log(total) / (a - 1))


@pytest.fixture(scope="module")
def rdp_accountant():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    def curve(event, replace_one=False, orders=ORDERS):
        relation = rdp.NeighborRel.REPLACE_ONE if replace_one else rdp.NeighborRel.ADD_OR_REMOVE_ONE
        accountant = rdp.RdpAccountant(orders=list(orders), neighboring_relation=relation)
        accountant.compose(event)
        return np.array(accountant._rdp)

    return dp_accounting, curve


@pytest.mark.parametrize("rate, z", CASES)
def test_poisson_gaussian_matches_dp_accounting(rdp_accountant, rate, z):
    """Integer orders: the same finite sum, to 1e-10. Fractional orders: dp_accounting adds
    |C(alpha, i)| (an upper bound), this module the signed series (the exact value) raised
    by its rounding allowance: never above dp_accounting's beyond that allowance."""
    dp_accounting, curve = rdp_accountant
    theirs = curve(dp_accounting.PoissonSampledDpEvent(
        rate, dp_accounting.GaussianDpEvent(z)))
    ours = rdp_poisson_gaussian(rate=rate, noise_multiplier=z, orders=ORDERS)
    np.testing.assert_allclose(ours[INTEGER], theirs[INTEGER], rtol=1e-10, atol=0)
    assert np.all(ours[~INTEGER] <= theirs[~INTEGER] * (1 + 1e-6))


@pytest.mark.parametrize("rate, z, order", [(0.01, 1.0, 2.5), (0.15, 75.0, 3.5),
                                            (0.001, 5.0, 2.5), (0.5, 0.7, 5.5),
                                            (0.15, 17.7, 99.5), (0.3, 2.0, 100.0),
                                            (0.15, 75.0, 4.0)])
def test_poisson_gaussian_against_quadrature(rate, z, order):
    exact = mp_sampled_gaussian(rate, z, order)
    ours = rdp_poisson_gaussian(rate=rate, noise_multiplier=z, orders=[order])[0]
    assert ours == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize("rate, z, order, chord", [
    (0.5, 0.7, 2.5, 1.695), (0.05, 0.6, 2.5, 0.1747), (0.4375, 0.5, 2.5, 3.98),
    (0.2, 0.4, 1.5, None), (0.6681, 0.8954, 1.5, None), (0.01309, 0.9109, 1.5, None)])
def test_a_slow_series_is_closed_by_a_bound_on_its_rest(rate, z, order, chord):
    """Little noise: the fractional series falls only polynomially and does not settle
    within its terms. Its sum plus the first term left out bounds the exact value (the
    terms alternate and fall), within 1e-10 of quadrature; the chord of the exact values
    at the integer orders either side, taken before, was up to twice the exact value."""
    _, settled = _fractional_series(rate, z, np.array([order]))
    assert not settled[0]
    ours = rdp_poisson_gaussian(rate=rate, noise_multiplier=z, orders=[order])[0]
    exact = mp_sampled_gaussian(rate, z, order)
    assert exact <= ours <= exact * (1 + 1e-10)
    if chord is not None:
        low, high = rdp_poisson_gaussian(rate=rate, noise_multiplier=z, orders=[2.0, 3.0])
        assert (0.5 * low + 0.5 * 2 * high) / 1.5 == pytest.approx(chord, rel=1e-3)


@pytest.mark.parametrize("rate, z", [(0.15, 25 / math.sqrt(2)), (0.15, 75.0), (0.01, 1.0),
                                     (0.5, 3.0)])
def test_without_replacement_gaussian_is_dp_accountings_theorem_27(rdp_accountant, rate, z):
    """dp_accounting's SampledWithoutReplacementDpEvent: WBK Theorem 27 up to order 256,
    Theorem 9 above. The same bound here, equal to 1e-9 where dp_accounting's alternating
    sums keep their digits (the low orders), and never above it: where those sums lose their
    digits (large noise, orders from some 20 up) dp_accounting's figure rises above the
    theorem's (21% at rate 0.113, z 11.42, order 200), and the central moments here are a
    series of positive terms (``test_without_replacement_gaussian_never_below_theorem_27``
    holds them to the theorem)."""
    dp_accounting, curve = rdp_accountant
    population = 1000
    size = int(rate * population)
    # dp_accounting's Theorem 27 takes O(alpha^2) Python steps per order: the low orders,
    # every order above 256, and every 20th between
    orders = ORDERS[(ORDERS <= 12) | (np.floor(ORDERS) > 256)
                    | (np.arange(ORDERS.size) % 20 == 0)]
    theirs = curve(dp_accounting.SampledWithoutReplacementDpEvent(
        population, size, dp_accounting.GaussianDpEvent(z)), replace_one=True, orders=orders)
    ours = rdp_without_replacement_gaussian(rate=size / population, noise_multiplier=z,
                                            orders=orders)
    low, high = orders <= 12, np.floor(orders) > THEOREM_27_ORDER
    own = gaussian(z)(orders)  # dp_accounting does not cap by the step's own curve
    np.testing.assert_allclose(ours[low], np.minimum(theirs, own)[low], rtol=1e-9)
    assert np.all(ours[~high] <= np.minimum(theirs, own)[~high] * (1 + 1e-8))
    # above order 256 dp_accounting keeps only Theorem 9's terms; here Theorem 27's terms up
    # to j = 256 stay (the theorem holds at every order): never above theirs
    assert np.all(ours[high] <= theirs[high] * (1 + 1e-12))
    general = rdp_without_replacement(gaussian(z), rate=size / population, orders=orders)
    assert np.all(ours <= general * (1 + 1e-12))  # Theorem 27 never above Theorem 9


def mp_theorem_27(order: int, rate: float, z: float) -> float:
    """WBK Theorem 27 at an integer order, every term at 400 digits (the central moments'
    alternating sums exact), Theorem 9's terms past j = 256."""
    with mpmath.workdps(400):
        g, c = mpmath.mpf(rate), 1 / (2 * mpmath.mpf(z) ** 2)
        moment = {l: mpmath.fsum(mpmath.binomial(l, i) * (-1) ** (l - i)
                                 * mpmath.exp(i * (i - 1) * c) for i in range(l + 1))
                  for l in range(2, min(order + 1, 256) + 1, 2)}
        total = mpmath.mpf(1)
        for j in range(2, order + 1):
            general = 2 * mpmath.exp(j * (j - 1) * c)
            if j <= 256:
                lo, hi = 2 * (j // 2), min(2 * ((j + 1) // 2), 256)
                general = min(4 * mpmath.sqrt(moment[lo] * moment[hi]), general)
            total += g ** j * mpmath.binomial(order, j) * general
        return float(mpmath.log(total) / (order - 1))


@pytest.mark.parametrize("rate, z, order", [(0.15, 17.7, 3), (0.15, 17.7, 40), (0.15, 75.0, 261),
                                            (0.01, 1.0, 20), (0.5, 3.0, 7),
                                            (0.113, 11.42, 200), (0.0015, 76.8, 256),
                                            (0.5811, 20.22, 100)])
def test_without_replacement_gaussian_never_below_theorem_27(rate, z, order):
    """At or above the theorem at 400 digits, and within 1e-8 of it: at rate 0.113, z 11.42,
    order 200 the rounding allowance of the alternating sums alone gave 0.0651 for 0.01996
    (review R23), +18.6% on a one-query epsilon."""
    ours = rdp_without_replacement_gaussian(rate=rate, noise_multiplier=z, orders=[order])[0]
    exact = mp_theorem_27(order, rate, z)
    assert ours >= exact
    assert ours == pytest.approx(exact, rel=1e-12 if order <= 20 else 1e-8)


def test_theorem_27_on_the_private_knn_setting_is_dp_accountings():
    """1,000 threshold steps (sigma1 75) and 735 answers (sigma 25, L2 sqrt 2), 9,000 of
    60,000 without replacement: 2.4498 at delta 1e-5 (Theorem 9 alone gave 8.8349)."""
    select = rdp_without_replacement_gaussian(rate=0.15, noise_multiplier=75.0, orders=ORDERS)
    answer = rdp_without_replacement_gaussian(rate=0.15, noise_multiplier=25 / math.sqrt(2),
                                              orders=ORDERS)
    epsilon = np.min(1000 * select + 735 * answer + math.log(1e5) / (ORDERS - 1))
    assert epsilon == pytest.approx(2.449756801136259, rel=1e-11)


@pytest.mark.parametrize("z", [0.5, 3.0, 17.7, 75.0, 1e4, 1e9])
def test_gaussian_central_moments_are_never_below_their_exact_values(z):
    """``M_l = E_Q[(P/Q - 1)^l]`` at 500 digits: never below, and within 1e-9 where the
    alternating sum keeps its digits, within 1e-7 in the logarithm where only the series of
    positive terms does (at z 1e9, M_40 is some e^-1560: the sum is all rounding)."""
    ours = _gaussian_even_moments(z, 40)
    with mpmath.workdps(500):
        c = 1 / (2 * mpmath.mpf(z) ** 2)
        for l in range(2, 41, 2):
            exact = mpmath.log(mpmath.fsum(mpmath.binomial(l, i) * (-1) ** (l - i)
                                           * mpmath.exp(i * (i - 1) * c) for i in range(l + 1)))
            assert ours[l] >= float(exact)
            if z <= 3.0 or l <= 4:
                assert ours[l] == pytest.approx(float(exact), rel=1e-9, abs=1e-9)
            assert ours[l] <= float(exact) + 1e-7


def mp_sampled_laplace(rate, scale, sensitivity, order, remove=True):
    """One direction of the Poisson-sampled Laplace pair at 40 digits: ``D_alpha(M || Q)``
    (a unit removed) or ``D_alpha(Q || M)`` (added), ``M = (1 - g) Q + g P``, ``Q = Lap(0,
    b)``, ``P = Lap(sensitivity, b)``, by quadrature over the three pieces of the ratio."""
    with mpmath.workdps(40):
        g, b, d, a = (mpmath.mpf(x) for x in (rate, scale, sensitivity, order))
        q = lambda x: mpmath.exp(-abs(x) / b) / (2 * b)  # noqa: E731
        m = lambda x: (1 - g) * q(x) + g * mpmath.exp(-abs(x - d) / b) / (2 * b)  # noqa: E731
        f = ((lambda x: m(x) ** a * q(x) ** (1 - a)) if remove  # noqa: E731
             else (lambda x: q(x) ** a * m(x) ** (1 - a)))
        return float(mpmath.log(mpmath.quad(f, [-mpmath.inf, 0, d, mpmath.inf])) / (a - 1))


@pytest.mark.parametrize("rate, scale, sensitivity", [(0.05, 20.0, 2.0), (0.05, 20.0, 1.0),
                                                      (0.5, 1.0, 1.0), (0.3, 0.5, 2.0),
                                                      (0.9, 5.0, 1.0)])
@pytest.mark.parametrize("order", [2.0, 3.0, 5.0, 10.0])
def test_poisson_laplace_is_the_exact_sampled_laplace(rate, scale, sensitivity, order):
    """Zhu and Wang's Theorem 8 for the Laplace mechanism: the exact divergence of the
    removal direction, never below either direction (40-digit quadrature)."""
    ours = rdp_poisson_laplace(rate=rate, scale=scale, sensitivity=sensitivity,
                               orders=[order])[0]
    remove = mp_sampled_laplace(rate, scale, sensitivity, order)
    add = mp_sampled_laplace(rate, scale, sensitivity, order, remove=False)
    assert ours >= max(remove, add)
    assert ours == pytest.approx(remove, rel=1e-12)


def test_poisson_laplace_matches_autodp():
    """autodp's Poisson-subsampled bound for mechanisms that meet Zhu and Wang's Theorem 8
    (``compose_poisson_subsampled_mechanisms``), for the Laplace mechanism of scale b / L1."""
    rdp_acct = pytest.importorskip("autodp.rdp_acct")
    rdp_bank = pytest.importorskip("autodp.rdp_bank")
    orders = np.array([2.0, 3.0, 4.0, 10.0, 50.0, 2.5])
    for rate, scale, sensitivity in ((0.05, 20.0, 2.0), (0.05, 20.0, 1.0), (0.5, 1.0, 1.0)):
        accountant = rdp_acct.anaRDPacct()
        accountant.compose_poisson_subsampled_mechanisms(
            lambda a, b=scale / sensitivity: rdp_bank.RDP_laplace({"b": b}, a), rate)
        ours = rdp_poisson_laplace(rate=rate, scale=scale, sensitivity=sensitivity,
                                   orders=orders)
        np.testing.assert_allclose(ours, accountant.get_rdp(orders), rtol=1e-10)


def test_sampled_lnmax_uses_the_tighter_laplace_bound():
    """LNMax, lambda 20, rate 0.05, 500 queries (a unit moves one vote): at order 3 the
    general Theorem 6 over the argmax's curve gave 0.0727; the one-dimensional Laplace pair
    of L1 distance 2 under Theorem 8 gives 0.0182, and the figure is the smaller."""
    orders = np.array([2.0, 3.0, 4.0])
    ours = 500 * sampled_laplace_curve("poisson", 0.05, 20.0, 2.0, orders)
    general = 500 * rdp_poisson_general(
        lambda o: rdp_lnmax_data_independent(scale=20.0, orders=o), rate=0.05, orders=orders)
    assert general[1] == pytest.approx(0.07265, rel=1e-3)
    assert ours[1] == pytest.approx(0.018172, rel=1e-3)
    assert np.all(ours <= general)


def test_zhu_wang_by_hand():
    """Theorem 6 at orders 2 and 3 for a step with e(2) = 0.3, e(3) = 0.5, rate 0.2, and
    the chord at 2.5."""
    g, e2, e3 = mpmath.mpf("0.2"), mpmath.mpf("0.3"), mpmath.mpf("0.5")
    two = mpmath.log((1 - g) * (1 + g) + g**2 * mpmath.exp(e2))
    three = mpmath.log((1 - g)**2 * (2 * g + 1) + 3 * g**2 * (1 - g) * mpmath.exp(e2)
                       + 3 * g**3 * mpmath.exp(2 * e3)) / 2
    table = {2.0: 0.3, 3.0: 0.5}

    def step(orders):  # the chord's ends only; the cap uses the curve at 2.5 too
        return np.array([table.get(float(o), 10.0) for o in np.atleast_1d(orders)])

    ours = rdp_poisson_general(step, rate=0.2, orders=[2.0, 3.0, 2.5])
    assert ours[0] == pytest.approx(float(two), rel=1e-13)
    assert ours[1] == pytest.approx(float(three), rel=1e-13)
    assert ours[2] == pytest.approx(float((two + 2 * three) / 2 / 1.5), rel=1e-13)


@pytest.mark.parametrize("rate, e2", [(1e-4, 1e-6), (1e-3, 1e-9), (1e-2, 3e-7), (0.2, 0.3)])
def test_zhu_wang_at_order_2_never_below_its_value_where_it_is_close_to_one(rate, e2):
    """Theorem 6 at order 2 is log(1 + g^2 (e^e(2) - 1)): formed as (1 - g^2) + g^2 e^e(2), it
    lost up to 1.8e-7 relative at rate 1e-4 (the two parts cancel); never below it now."""
    with mpmath.workdps(50):
        exact = mpmath.log1p(mpmath.mpf(rate) ** 2 * mpmath.expm1(mpmath.mpf(e2)))
    ours = rdp_poisson_general(lambda orders: np.full(np.shape(orders), e2), rate=rate,
                               orders=[2.0])[0]
    assert exact <= ours <= exact * (1 + 1e-13)


@pytest.mark.parametrize("rate, scale", [(1e-4, 1000.0), (1e-4, 200.0), (1e-3, 50.0),
                                         (1e-2, 1000.0)])
def test_sampled_lnmax_at_order_2_never_below_one_neighbouring_pair(rate, scale):
    """LNMax's Poisson-sampled curve at order 2 against the exact divergence of one pair: the
    two Laplace counts moved by (-1, +1), the unit removed, log(1 + g^2 (E^2 - 1)) with
    E = E_Q[P/Q squared] of one count = (2/3) e^(1/b) + (1/3) e^(-2/b). Any valid bound is at
    least this; it was 1.8e-7 relative below at rate 1e-4, scale 1000."""
    with mpmath.workdps(50):
        b, g = mpmath.mpf(scale), mpmath.mpf(rate)
        one = mpmath.mpf(2) / 3 * mpmath.exp(1 / b) + mpmath.mpf(1) / 3 * mpmath.exp(-2 / b)
        exact = mpmath.log1p(g**2 * (one**2 - 1))
    assert sampled_laplace_curve("poisson", rate, scale, 2.0, np.array([2.0]))[0] >= exact


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([1e-3, 0.01, 0.1, 0.5, 0.9]), st.sampled_from([0.71, 3.5, 70.7, 200.0]),
       st.integers(2, 60))
def test_poisson_gaussian_integer_orders_never_below_the_exact_sum(rate, z, order):
    """MTZ's binomial sum at integer orders, at 60 digits: the computed bound is never below
    it (1,210 of 2,088 values were, by up to 3.7e-14 relative, before its rounding was
    added)."""
    with mpmath.workdps(60):
        q, zz = mpmath.mpf(rate), mpmath.mpf(z)
        total = mpmath.fsum(mpmath.binomial(order, k) * (1 - q) ** (order - k) * q**k
                            * mpmath.exp((k * k - k) / (2 * zz * zz)) for k in range(order + 1))
        exact = mpmath.log(total) / (order - 1)
    ours = rdp_poisson_gaussian(rate=rate, noise_multiplier=z, orders=[float(order)])[0]
    assert ours >= exact
    assert ours <= exact * (1 + 1e-11) or ours == order / (2 * z * z)


def test_wang_balle_kasiviswanathan_by_hand():
    """Theorem 9 at order 3, e(2) = 0.3, e(3) = 0.5, rate 0.1, for a step with a pure-DP
    epsilon 0.4 (factors min(2, (e^0.4 - 1)^j)) and without one (factor 2)."""
    g, e2, e3, pure = (mpmath.mpf(x) for x in ("0.1", "0.3", "0.5", "0.4"))
    table = {2.0: 0.3, 3.0: 0.5}

    def step(orders):
        return np.array([table.get(float(o), 10.0) for o in np.atleast_1d(orders)])

    for eps_inf, spread in ((0.4, mpmath.exp(pure) - 1), (math.inf, None)):
        factor2 = 2 if spread is None else min(2, spread**2)
        factor3 = 2 if spread is None else min(2, spread**3)
        second = min(4 * (mpmath.exp(e2) - 1), mpmath.exp(e2) * factor2)
        expected = mpmath.log(1 + g**2 * 3 * second + g**3 * mpmath.exp(2 * e3) * factor3) / 2
        ours = rdp_without_replacement(step, rate=0.1, orders=[3.0], pure_epsilon=eps_inf)
        assert ours[0] == pytest.approx(float(expected), rel=1e-13)


rates = st.floats(min_value=1e-4, max_value=1.0)
noise = st.floats(min_value=0.3, max_value=200.0)


def _series_settles(rate: float, z: float) -> np.ndarray:
    """Per order of ``ORDERS``: False where the exact Poisson value's fractional series
    does not settle and the order takes a bound on the series' rest instead (valid, but
    not the exact value, so not monotone in the rate)."""
    settles = np.ones(ORDERS.size, dtype=bool)
    series = (ORDERS != np.floor(ORDERS)) & (ORDERS <= MAX_INTEGER_ORDER)
    if rate < 1.0 and series.any():
        settles[series] = _fractional_series(rate, z, ORDERS[series])[1]
    return settles


@settings(max_examples=25, deadline=None)
@given(low=rates, high=rates, z=noise)
def test_amplified_curves_are_below_the_step_and_monotone_in_the_rate(low, high, z):
    """At each of two rates: Zhu and Wang's general bound is never below the exact sampled
    Gaussian, and no amplified curve is above the step's own; from the lower rate to the
    higher, every curve grows (the exact Poisson Gaussian where its series settles). One
    test over the curves three tests drew apart (40, 40 and 15 examples): each property now
    holds at 50 rates or 25 pairs of rates."""
    low, high = sorted((low, high))
    own = gaussian(z)(ORDERS)
    laplace = rdp_laplace(scale=z, orders=ORDERS)
    curves = {}
    for rate in (low, high):
        exact = rdp_poisson_gaussian(rate=rate, noise_multiplier=z, orders=ORDERS)
        general = rdp_poisson_general(gaussian(z), rate=rate, orders=ORDERS)
        # the cumulants (alpha - 1) rdp, to the 1e-16 of a log near 0
        assert np.all((general - exact) * (ORDERS - 1) >= -1e-15 - 1e-12 * exact * ORDERS)
        replaced = rdp_without_replacement(gaussian(z), rate=rate, orders=ORDERS)
        replaced_gaussian = rdp_without_replacement_gaussian(rate=rate, noise_multiplier=z,
                                                             orders=ORDERS)
        for curve in (exact, general, replaced, replaced_gaussian):
            assert np.all(curve <= own * (1 + 1e-12))
        assert np.all(rdp_poisson_laplace(rate=rate, scale=z, sensitivity=1.0, orders=ORDERS)
                      <= laplace)
        curves[rate] = (exact, replaced, replaced_gaussian,
                        rdp_poisson_laplace(rate=rate, scale=z, sensitivity=2.0, orders=ORDERS),
                        general)
    exact = _series_settles(low, z) & _series_settles(high, z)
    for smaller, larger, where in zip(curves[low], curves[high],
                                      (exact, True, True, True, True), strict=True):
        assert np.all(((smaller - larger) * (ORDERS - 1) <= 1e-15 + 1e-12 * larger * ORDERS)
                      | ~np.asarray(where))


def test_where_the_series_does_not_settle_the_bound_is_above_the_exact_value():
    """Rate 0.4375, z = 0.5, order 2.5: the series' terms fall only polynomially, so the
    order takes the series closed by a bound on its rest, above the exact value
    (3.6285682069918737, mpmath quadrature of the integral at 40 digits; the chord of the
    integer values gave 3.98)."""
    assert not _series_settles(0.4375, 0.5)[ORDERS == 2.5][0]
    bound = rdp_poisson_gaussian(rate=0.4375, noise_multiplier=0.5, orders=[2.5])[0]
    assert 3.6285682069918737 <= bound <= 3.6285682069918737 * (1 + 1e-12)
    exact = rdp_poisson_gaussian(rate=0.5, noise_multiplier=0.5, orders=[2.5])[0]
    assert exact == pytest.approx(3.8494871350349096, rel=1e-12)


@settings(max_examples=20, deadline=None)
@given(z=noise, scale=st.floats(min_value=0.5, max_value=500.0))
def test_rate_one_is_the_step(z, scale):
    assert np.array_equal(rdp_poisson_gaussian(rate=1.0, noise_multiplier=z, orders=ORDERS),
                          gaussian(z)(ORDERS))
    laplace = lambda o: rdp_lnmax_data_independent(scale=scale, orders=o)  # noqa: E731
    for bound in (rdp_poisson_general, rdp_without_replacement):
        assert np.array_equal(bound(laplace, rate=1.0, orders=ORDERS), laplace(ORDERS))


@pytest.mark.parametrize("rate", [0.0, -0.1, 1.5, math.nan, math.inf])
def test_rate_outside_the_interval_is_refused(rate):
    with pytest.raises(ValueError, match=r"sampling rate must lie in \(0, 1\]"):
        rdp_poisson_gaussian(rate=rate, noise_multiplier=1.0, orders=ORDERS)


def _mtz_exact(q, z, alpha):
    """The Poisson-sampled Gaussian's RDP at any order, by 40-digit quadrature of
    ``A = E_{x ~ N(0, z^2)}[((1 - q) + q exp((2x - 1) / (2 z^2)))^alpha]`` (MTZ 2019)."""
    with mpmath.workdps(40):
        q, z, a = mpmath.mpf(q), mpmath.mpf(z), mpmath.mpf(alpha)

        def integrand(x):
            return mpmath.npdf(x, 0, z) * ((1 - q) + q * mpmath.exp((2 * x - 1) / (2 * z * z))) ** a
        points = sorted({-mpmath.inf, -40 * z, -10 * z, 0, 10 * z, a, 2 * a + 40 * z, mpmath.inf})
        return mpmath.log(mpmath.quad(integrand, points)) / (a - 1)


@pytest.mark.parametrize("q, z, alpha, within", [
    (0.001, 10.0, 14.5, 1e-6),  # the series cancels: was 6.4e-11 below
    (0.001, 10.0, 17.5, 1e-6),  # was 1.28e-10 below
    (0.01, 5.0 / math.sqrt(2.0), 65.5, 1e-9),
    (0.001, 200.0, 2.5, 1e-3),  # was 2.1e-8 below; a tiny value, its allowance dominates
    (0.001, 200.0, 1.01, 0.1),  # was 6.9e-6 below
])
def test_fractional_orders_never_below_the_quadrature(q, z, alpha, within):
    """At fractional orders the MTZ series subtracts nearly equal sums where A is close
    to 1: the bound carries the terms' rounding and is never below the exact value."""
    ours = rdp_poisson_gaussian(rate=q, noise_multiplier=z, orders=np.array([alpha]))[0]
    exact = _mtz_exact(q, z, alpha)
    assert exact <= ours <= exact * (1 + within)


@pytest.mark.parametrize("rate", [5e-324, 1e-310])
def test_a_subnormal_rate_meets_no_floating_point_limit(rate):
    """``1/q - 1`` overflows at a subnormal rate: the series' split point came out infinite,
    its sums NaN (a ``Warning:`` line in pate-analyze), and the chord was taken."""
    with np.errstate(invalid="raise", over="raise"):
        tiny = rdp_poisson_gaussian(rate=rate, noise_multiplier=2.0, orders=ORDERS)
    assert np.all(np.isfinite(tiny))
    assert np.all(tiny <= rdp_poisson_gaussian(rate=1e-300, noise_multiplier=2.0, orders=ORDERS))
