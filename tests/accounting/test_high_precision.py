"""The kernels against 50-digit arithmetic (mpmath), at ordinary values and at extremes:
gaps of thousands of votes, q near 1, orders up to 500."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from pate_cli.accounting.gnmax import log_q_gnmax, rdp_gnmax
from pate_cli.accounting.laplace import log_q_lnmax, rdp_lnmax
from pate_cli.accounting.threshold import log_pr_answered
from pate_cli.numerics import log1mexp
from tests.precision import digits

_digits = digits(50)  # mpmath's precision for this module's tests


def mp_log_q_gnmax(counts, sigma):
    """Prop. 7 in 50 digits: log sum_{j != i*} Phi(-(n_i* - n_j) / (sqrt(2) sigma))."""
    counts = [mpmath.mpf(c) for c in counts]
    top = max(range(len(counts)), key=lambda j: (counts[j], -j))
    scale = mpmath.sqrt(2) * sigma
    total = mpmath.fsum(mpmath.ncdf(-(counts[top] - c) / scale)
                        for j, c in enumerate(counts) if j != top)
    return min(mpmath.log(total), mpmath.log(1 - mpmath.mpf(1) / len(counts)))


def mp_rdp_gnmax(log_q, sigma, order):
    """Theorem 6 + Prop. 10 (math:gnmax) in 50 digits."""
    log_q, sigma, order = mpmath.mpf(log_q), mpmath.mpf(sigma), mpmath.mpf(order)
    var = sigma**2
    independent = order / var
    mu2 = sigma * mpmath.sqrt(-log_q)
    mu1 = mu2 + 1
    e1, e2 = mu1 / var, mu2 / var
    limit = (mu2 - 1) * e2 - mu2 * (mpmath.log(1 + 1 / (mu1 - 1)) + mpmath.log(1 + 1 / (mu2 - 1)))
    if not (mu1 > order and mu2 > 1 and -log_q > e2 and log_q <= limit):
        return independent
    q = mpmath.exp(log_q)
    log_a = (order - 1) * (mpmath.log(1 - q) - mpmath.log(1 - mpmath.exp((log_q + e2)
                                                                          * (1 - 1 / mu2))))
    log_b = (order - 1) * (e1 - log_q / (mu1 - 1))
    dep = mpmath.log((1 - q) * mpmath.exp(log_a) + q * mpmath.exp(log_b)) / (order - 1)
    return min(independent, dep)


@pytest.mark.parametrize(("counts", "sigma"), [
    ([250, 0, 0, 0, 0, 0, 0, 0, 0, 0], 40.0),
    ([5000, 0], 100.0),                      # tail far below double's range in linear space
    ([4000, 1000, 0], 40.0),                 # log q around -6000
    ([120, 119, 11], 40.0),                  # nearly tied
    ([100, 100, 50], 10.0),                  # tied: the cap
    ([1e6, 3.0, 2.0, 1.0], 1000.0),          # beyond the tabulated gaps
    ([10.5, 3.25, 0.0], 2.0),                # weighted (fractional) votes
])
def test_log_q_gnmax_to_50_digits(counts, sigma):
    expected = float(mp_log_q_gnmax(counts, sigma))
    actual = log_q_gnmax(np.array([counts], dtype=float), sigma=sigma)[0]
    assert math.isclose(actual, expected, rel_tol=1e-13), (actual, expected)


@pytest.mark.parametrize("log_q", [-1e-3, -0.5, -3.0, -10.0, -50.0, -400.0, -5000.0])
@pytest.mark.parametrize("sigma", [1.0, 40.0, 150.0 * math.sqrt(2)])
def test_rdp_gnmax_to_50_digits(log_q, sigma):
    orders = np.array([1.5, 2.0, 7.5, 14.0, 32.0, 100.0, 257.3, 500.0])
    actual = rdp_gnmax(np.array([log_q]), sigma=sigma, orders=orders)[0]
    expected = np.array([float(mp_rdp_gnmax(log_q, sigma, a)) for a in orders])
    # Relative to the data-independent scale: tiny values are absolute noise in sums.
    np.testing.assert_allclose(actual, expected, rtol=1e-11, atol=1e-15 * orders[-1] / sigma**2)


@pytest.mark.parametrize("x", [-1e-300, -1e-20, -1e-8, -0.5, -1.0, -1.0000001, -30.0, -700.0])
def test_log1mexp_to_50_digits(x):
    with mpmath.workdps(800):  # 1 - e^x needs ~300 digits at both ends of the range
        expected = float(mpmath.log(1 - mpmath.exp(mpmath.mpf(x))))
    assert math.isclose(float(log1mexp(np.array([x]))[0]), expected, rel_tol=1e-15)


@pytest.mark.parametrize(("maximum", "threshold", "sigma1"),
                         [(250, 200, 150), (10, 300, 5), (300, 200, 1), (0.5, 0, 1)])
def test_log_pr_answered_to_50_digits(maximum, threshold, sigma1):
    step = min(1.0, 2.0 ** math.floor(math.log2(sigma1 / 64)))  # toward T on the lattice
    toward = (min(math.ceil(maximum / step) * step, threshold) if maximum < threshold
              else max(math.floor(maximum / step) * step, threshold))
    expected = float(mpmath.log(mpmath.ncdf((mpmath.mpf(toward) - threshold) / sigma1)))
    actual = log_pr_answered(np.array([maximum]), threshold=threshold, sigma_threshold=sigma1)
    assert math.isclose(float(actual[0]), expected, rel_tol=1e-13)


@pytest.mark.parametrize(("counts", "lam"), [([250, 0, 0], 20.0), ([130, 120, 0], 20.0),
                                             ([5000, 0], 10.0)])
def test_lnmax_to_50_digits(counts, lam):
    c = [mpmath.mpf(v) for v in counts]
    top = max(range(len(c)), key=lambda j: c[j])
    terms = [(2 - (x - c[top]) / lam) / 4 * mpmath.exp((x - c[top]) / lam)
             for j, x in enumerate(c) if j != top]
    log_q = min(mpmath.log(mpmath.fsum(terms)), mpmath.log(1 - mpmath.mpf(1) / len(c)))
    actual = log_q_lnmax(np.array([counts], dtype=float), scale=lam)[0]
    assert math.isclose(actual, float(log_q), rel_tol=1e-13)
    eps0, order = mpmath.mpf(2) / lam, mpmath.mpf(8)
    q = mpmath.exp(log_q)
    if q <= 1 / (mpmath.exp(eps0) + 1):
        t = (1 - q) * ((1 - q) / (1 - mpmath.exp(eps0) * q)) ** (order - 1) \
            + q * mpmath.exp(eps0 * (order - 1))
        expected = min(eps0**2 * order / 2, mpmath.log(t) / (order - 1), eps0)
    else:
        expected = min(eps0**2 * order / 2, eps0)
    got = rdp_lnmax(np.array([float(log_q)]), scale=lam, orders=[8.0])[0, 0]
    assert math.isclose(got, float(expected), rel_tol=1e-11, abs_tol=1e-16)


@pytest.mark.parametrize("order", [1.0001, 2.0, 50.0, 53817.37, 1e5, 1e6])
@pytest.mark.parametrize("delta", [1e-5, 1e-300])
def test_the_improved_conversion_term_to_50_digits(order, delta):
    """log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1): the quotient rounded to
    within an ulp of 1 at large orders gave an absolute error of 1e-16 in its log, which
    put a gnmax epsilon at sigma 7e4 2.4e-12 below the exact one."""
    from pate_cli.accounting.conversion import conversion_offset

    ours = conversion_offset(orders=np.array([order]), delta=delta, conversion="improved")[0]
    a = mpmath.mpf(order)
    exact = mpmath.log((a - 1) / a) - (mpmath.log(mpmath.mpf(delta)) + mpmath.log(a)) / (a - 1)
    assert abs(mpmath.mpf(ours) - exact) <= 1e-14 * abs(exact)


@pytest.mark.parametrize("scale, rounds", [(1e5, 1), (1e5, 10), (3e4, 10), (1e5, 100),
                                           (50.0, 20)])
def test_the_svt_improved_line_is_never_below_its_value_at_its_order(scale, rounds):
    """The improved conversion of SVT's rho-zCDP line at the order it picks (math:svt), in
    50 digits: log(t) - log1p(t) cancelled at t = alpha - 1 = 7e4 and left the publishable
    epsilon 1.85e-11 below it."""
    from pate_cli.accounting.svt import svt_epsilon

    delta = 4.999999999995456e-06
    epsilon, order, pure = (float(x[0]) for x in svt_epsilon(
        scale=scale, rounds=np.array([float(rounds)]), delta=delta, conversion="improved"))
    assert not pure
    a, rho = mpmath.mpf(order), mpmath.mpf(rounds) * (2 / mpmath.mpf(scale)) ** 2 / 2
    exact = a * rho + mpmath.log((a - 1) / a) + (-mpmath.log(mpmath.mpf(delta))
                                                 - mpmath.log(a)) / (a - 1)
    assert exact <= epsilon <= exact * (1 + 2e-12)
