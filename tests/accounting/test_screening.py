"""The threshold step's exact data-independent curve (math:screening) against mpmath."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pate_cli.accounting.screening import INTEGER_PAIRS, _pair_maxima, rdp_screening
from pate_cli.orders import default_orders
from tests.precision import digits

_digits = digits(50)  # mpmath's precision for this module's tests


def _pair(c, c2, threshold, sigma1, alpha):
    """``D_alpha(Ber(p_c) || Ber(p_c2))`` at 50 digits, straight from the definition."""
    z, z2 = (mpmath.mpf(c) - threshold) / sigma1, (mpmath.mpf(c2) - threshold) / sigma1
    p, p2 = mpmath.ncdf(z), mpmath.ncdf(z2)
    q, q2 = mpmath.ncdf(-z), mpmath.ncdf(-z2)  # 1 - p without cancellation
    a = mpmath.mpf(alpha)
    inner = p**a * p2 ** (1 - a) + q**a * q2 ** (1 - a)
    return mpmath.log(inner) / (a - 1)


def _brute_integer(teachers, threshold, sigma1, alpha):
    """The supremum over every pair of counts 0..M one apart, both directions."""
    return max(max(_pair(c, c + 1, threshold, sigma1, alpha),
                   _pair(c + 1, c, threshold, sigma1, alpha)) for c in range(teachers))


CASES = [(250, 200, 150, (1.001, 2.0, 10.0, 100.0, 500.0)),
         (100, 30, 5, (1.5, 20.0, 300.0)),
         (50, 60, 10, (2.0, 50.0)),
         (20, 0, 3, (1.0001, 5.0))]


@pytest.mark.parametrize("teachers, threshold, sigma1, orders", CASES)
def test_integer_supremum_matches_mpmath_brute_force(teachers, threshold, sigma1, orders):
    ours = rdp_screening(threshold=threshold, sigma_threshold=sigma1, low=0, high=teachers,
                         orders=orders)
    for value, alpha in zip(ours, orders, strict=True):
        exact = _brute_integer(teachers, threshold, sigma1, alpha)
        assert value == pytest.approx(float(exact), rel=1e-10, abs=0)


def test_the_curve_is_never_below_its_exact_value_where_counts_are_close():
    """M 250, T 200, sigma1 150, order 5: neighbouring counts give close probabilities and the
    old form lost digits in ``p expm1(mx) + q expm1(my)`` (7.073663429773019e-05, 1.6e-12
    relative below the supremum, 7.073663429784508e-05 at 40 digits). The cancellation-free
    form with its rounding allowance is above it, by less than 1e-12."""
    value = rdp_screening(threshold=200, sigma_threshold=150, low=0, high=250, orders=[5.0])[0]
    exact = float(_brute_integer(250, 200, 150, 5.0))
    assert exact == 7.073663429784508e-05
    assert exact <= value <= exact * (1 + 1e-12)


@settings(max_examples=25, deadline=None)
@given(teachers=st.integers(1, 120), threshold=st.floats(-40.0, 200.0),
       sigma1=st.floats(0.2, 400.0), order=st.floats(1.001, 500.0))
@example(teachers=94, threshold=128.0, sigma1=3.0, order=2.0)  # 1 + 2e-28: 30 digits fail
def test_never_below_the_exact_supremum(teachers, threshold, sigma1, order):
    """At random settings the computed curve (an upper bound) is never below the 50-digit
    supremum, not even by rounding (the cap by the Gaussian curve included)."""
    value = rdp_screening(threshold=threshold, sigma_threshold=sigma1, low=0, high=teachers,
                          orders=[order])[0]
    exact = _brute_integer(teachers, threshold, sigma1, order)
    assert mpmath.mpf(float(value)) >= exact


@pytest.mark.parametrize("threshold, sigma1, high, orders, within", [
    (20.5, 6.0, 40.0, (1.5, 8.0, 40.0), 1.01),
    (20.25, 1.3, 40.0, (2.0, 100.0), 1.01),  # steep: the old superset bound was 8% above
    (200.0, 150.0, 250.0, (2.0, 30.0), 1.064),  # flat: too many cells near the top to cut
])
def test_real_counts_bound_the_fine_grid_supremum_closely(threshold, sigma1, high, orders,
                                                          within):
    """Real counts: a certified upper bound on the supremum over pairs of reachable counts
    (both in [0, M]), at least the analytic value at every point of a fine grid of c (step
    1/16) and within 1% of the largest where the cells are cut, within (1 + 1/32)^2 where
    the curve is so flat that more than 512 cells of an order lie near its top."""
    ours = rdp_screening(threshold=threshold, sigma_threshold=sigma1, low=0.0, high=high,
                         orders=orders, integer=False)
    grid = [k / 16 for k in range(int((high - 1) * 16) + 1)]
    if high > 100:
        grid = grid[::8]
    for value, alpha in zip(ours, orders, strict=True):
        fine = max(max(_pair(c, c + 1, threshold, sigma1, alpha),
                       _pair(c + 1, c, threshold, sigma1, alpha)) for c in grid)
        assert float(fine) <= value <= float(fine) * within


def test_real_counts_steep_case_against_its_supremum():
    """M 40, T 20.25, sigma1 1.3, order 100: the supremum over real counts is 10.5926 (at
    c = 0, 50 digits); the old bound, whose neighbour could leave [0, M], said 11.4429."""
    exact = _pair(1, 0, 20.25, 1.3, 100.0)
    value = rdp_screening(threshold=20.25, sigma_threshold=1.3, low=0.0, high=40.0,
                          orders=[100.0], integer=False)[0]
    assert float(exact) == pytest.approx(10.592639843014185, rel=1e-15)
    assert exact <= value <= exact * 1.01


def test_ratio_to_the_gaussian_curve_is_two_over_pi_at_small_orders():
    # measured: 0.636619347 at alpha 1.001 and 0.636620553 at alpha 2 (2/pi = 0.636619772)
    orders = np.array([1.001, 1.5, 2.0])
    ours = rdp_screening(threshold=200, sigma_threshold=150, low=0, high=250, orders=orders)
    ratio = ours / (orders / (2 * 150.0**2))
    np.testing.assert_allclose(ratio, 2 / math.pi, rtol=1e-5)


def test_orders_near_one_and_huge_are_finite():
    orders = np.array([1 + 1e-9, 1 + 1e-6, 1e4, 1e5])
    ours = rdp_screening(threshold=200, sigma_threshold=150, low=0, high=250, orders=orders)
    assert np.all(np.isfinite(ours)) and np.all(ours > 0)
    # near 1 the curve tends to the KL divergence, 2/pi of the Gaussian's there too
    assert ours[0] / (orders[0] / (2 * 150.0**2)) == pytest.approx(2 / math.pi, rel=1e-5)
    # extreme gaps (T far beyond the counts, tiny sigma1): no overflow, no NaN
    far = rdp_screening(threshold=1e6, sigma_threshold=0.5, low=0, high=250, orders=orders)
    assert np.all(np.isfinite(far)) and np.all(far <= orders / (2 * 0.25))


@settings(max_examples=60, deadline=None)
@given(teachers=st.integers(1, 300), threshold=st.floats(-100, 500),
       sigma1=st.floats(0.3, 600), integer=st.booleans(),
       orders=st.lists(st.floats(1.0001, 1000), min_size=1, max_size=5))
def test_never_above_the_gaussian_curve(teachers, threshold, sigma1, integer, orders):
    orders = np.array(orders)
    ours = rdp_screening(threshold=threshold, sigma_threshold=sigma1, low=0, high=teachers,
                         orders=orders, integer=integer)
    assert np.all(ours >= 0)
    assert np.all(ours <= orders / (2 * sigma1**2))


@settings(max_examples=30, deadline=None)
@given(teachers=st.integers(2, 200), threshold=st.floats(0, 300), sigma1=st.floats(1, 300))
def test_real_counts_never_below_integer_counts(teachers, threshold, sigma1):
    """The real-count bound covers a superset of the integer pairs."""
    orders = default_orders()[::37]
    whole = rdp_screening(threshold=threshold, sigma_threshold=sigma1, low=0, high=teachers,
                          orders=orders)
    real = rdp_screening(threshold=threshold, sigma_threshold=sigma1, low=0, high=teachers,
                         orders=orders, integer=False)
    assert np.all(real >= whole * (1 - 1e-12))


def test_sensitivity_scales_the_pair_distance():
    # pairs two counts apart: the integer grid with D = 2 against mpmath
    ours = rdp_screening(threshold=12, sigma_threshold=4, low=0, high=20, orders=[3.0],
                         sensitivity=2)
    exact = max(max(_pair(c, c + 2, 12, 4, 3), _pair(c + 2, c, 12, 4, 3)) for c in range(19))
    assert ours[0] == pytest.approx(float(exact), rel=1e-10)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="integer"):
        rdp_screening(threshold=1, sigma_threshold=1, low=0, high=2.5, orders=[2])
    with pytest.raises(ValueError, match="low <= high"):
        rdp_screening(threshold=1, sigma_threshold=1, low=3, high=2, orders=[2])
    with pytest.raises(ValueError, match="sigma_threshold"):
        rdp_screening(threshold=1, sigma_threshold=0, low=0, high=2, orders=[2])


@pytest.mark.parametrize("teachers, threshold, sigma1", [
    (INTEGER_PAIRS + 1000, 12_000.0, 4_000.0),  # flat
    (INTEGER_PAIRS + 1000, 9_000.5, 40.0),  # steep
    (1_000_000, 800_000.0, 600_000.0),  # the default parameters at M 10^6
])
def test_a_long_integer_range_is_bounded_as_real_counts(teachers, threshold, sigma1):
    """Beyond ``INTEGER_PAIRS`` counts the integer supremum is bounded by the real-count
    cells (a pair per count took 43 s at M 10^6): never below the supremum over every
    integer pair (evaluated pair by pair here), never above the Gaussian curve."""
    orders = np.array([1.5, 4.0, 32.0, 256.0])
    ours = rdp_screening(threshold=threshold, sigma_threshold=sigma1, low=0, high=teachers,
                         orders=orders)
    pairs = _pair_maxima(np.arange(0.0, teachers), 1.0, threshold=threshold,
                         sigma_threshold=sigma1, orders=orders)
    gaussian = orders / (2.0 * sigma1**2)
    exact = np.minimum(pairs, gaussian)
    assert np.all(ours >= exact) and np.all(ours <= gaussian)
