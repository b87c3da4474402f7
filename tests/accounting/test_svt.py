"""SVT-PATE's accounting (``pate_cli.accounting.svt``): scale and epsilon, the RDP curve,
delta2 and the threshold, distance to instability."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pate_cli.accounting.svt import (
    rdp_svt,
    svt_delta2,
    svt_guarantee,
    svt_scale_for_epsilon,
    svt_threshold_for,
)
from pate_cli.orders import default_orders

ORDERS = default_orders()


def test_scale_and_epsilon_invert_each_other():
    for scale, cutoff in [(3.0, 10), (50.0, 200), (0.7, 1)]:
        eps = svt_guarantee(scale=scale, cutoff=cutoff, queries=1000, delta=1e-5,
                            orders=ORDERS).epsilon
        back = svt_scale_for_epsilon(epsilon=eps, cutoff=cutoff, queries=1000, delta=1e-5,
                                     orders=ORDERS)
        assert math.isclose(back, scale, rel_tol=1e-9)


def test_epsilon_grows_like_sqrt_of_the_cutoff():
    eps = [svt_guarantee(scale=1000.0, cutoff=c, queries=10, delta=1e-5,
                         orders=np.linspace(1.01, 20000, 200000)).epsilon
           for c in (10_000, 40_000)]
    assert 1.9 < eps[1] / eps[0] < 2.1


def test_rdp_is_zcdp_capped_by_pure_dp():
    rdp = rdp_svt(scale=4.0, cutoff=3, orders=np.array([2.0, 100.0]))
    np.testing.assert_allclose(rdp, [2.0 * 3 * 0.5**2 / 2, 3 * 0.5])


def test_delta2_matches_the_formula_and_the_threshold_solves_it():
    lam, c, n, w = 2.0, 5, 1000, 30.0
    expected = n * 0.5 * math.exp(-(w - 1) / (4 * lam)) + (c + 1) * 0.5 * math.exp(
        -(w - 1) / (2 * lam))
    assert math.isclose(svt_delta2(scale=lam, cutoff=c, threshold=w, queries=n),
                        expected * (1 + 2**-40), rel_tol=1e-14)  # raised over its rounding
    w_star = svt_threshold_for(scale=lam, cutoff=c, queries=n, delta2=1e-6)
    assert math.isclose(svt_delta2(scale=lam, cutoff=c, threshold=w_star, queries=n), 1e-6,
                        rel_tol=1e-9)
    assert svt_delta2(scale=lam, cutoff=c, threshold=w_star - 1e-6, queries=n) > 1e-6
    g = svt_guarantee(scale=lam, cutoff=c, queries=n, delta=2e-6, orders=ORDERS)
    assert math.isclose(g.delta1, 1e-6) and math.isclose(g.delta2, 1e-6)
    with pytest.raises(ValueError, match="leaves no delta"):
        svt_guarantee(scale=lam, cutoff=c, queries=n, delta=1e-6, orders=ORDERS, threshold=5)


def test_a_delta_whose_half_underflows_is_one_line(cli):
    """A subnormal delta (5e-324: half of it is 0) gave "math domain error" (review R17)."""
    done = cli.analyze("sample_votes/mnist_250_votes.npy", "-n", "50", "-m", "svt",
                       "--delta", "5e-324")
    assert done.code == 2 and done.err == ("Error: delta is too small for SVT-PATE: half of "
                                           "it, shared by 50 queries, is below the smallest "
                                           "float\n")
