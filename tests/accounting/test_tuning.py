"""Repeat and select (math:tuning): dp_accounting as the reference, hand values, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.accounting.tuning import (
    TuningDistribution,
    candidate_bound,
    parse_tuning,
    truncated_negbin_gamma,
    truncated_negbin_mean,
    tuned_epsilon,
    tuned_rdp,
)
from pate_cli.orders import default_orders

ORDERS = default_orders()
LAWS = ("poisson:{mu}", "geometric:{mu}", "logarithmic:{mu}", "negbin:{mu},0.5",
        "negbin:{mu},2.5", "negbin:{mu},1", "negbin:{mu},0")
SETTINGS = settings(max_examples=60, deadline=None)


def random_curve(rng, orders=ORDERS) -> np.ndarray:
    """A non-decreasing RDP-like curve: Gaussian-shaped plus a random increasing part,
    one value per order (the default grid holds 100 twice: both get the same value)."""
    sigma = rng.uniform(0.3, 60.0)
    scale = rng.uniform(1.0, 500.0)
    unique, inverse = np.unique(orders, return_inverse=True)
    bump = np.cumsum(rng.exponential(rng.uniform(1e-6, 0.05), size=unique.size))
    return scale * orders / (2 * sigma**2) + bump[inverse]


# --- dp_accounting, the independent reference -----------------------------------------------

@pytest.mark.parametrize("law", LAWS)
def test_equals_dp_accounting_repeat_and_select(law):
    rdp_module = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    rng = np.random.default_rng(abs(hash(law)) % 2**32)
    orders = ORDERS
    for _trial in range(25):
        mu = float(rng.choice([1.0, 1.7, 5.0, 20.0, 113.0]))
        distribution = parse_tuning(law.format(mu=mu))
        curve = random_curve(rng)
        ours = tuned_rdp(curve, orders=orders, distribution=distribution)
        reference = rdp_module._compute_rdp_repeat_and_select(
            orders, curve, distribution.mean, distribution.shape)
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=0)
    # The accountant's public route (a RepeatAndSelectDpEvent around a Gaussian) agrees too.
    sigma, count = 3.0, 7
    accountant = rdp_module.RdpAccountant(orders=list(np.unique(orders)))
    inner = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(sigma), count)
    accountant.compose(dp_event.RepeatAndSelectDpEvent(inner, distribution.mean,
                                                       distribution.shape))
    unique = np.unique(orders)
    ours = tuned_rdp(count * unique / (2 * sigma**2), orders=unique, distribution=distribution)
    np.testing.assert_allclose(ours, accountant._rdp, rtol=1e-12)


def test_gamma_matches_dp_accounting():
    rdp_module = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    for shape in (0.0, 0.3, 1.0, 2.5, 10.0):
        for mean in (1.0, 1.5, 20.0, 1000.0):
            assert truncated_negbin_gamma(mean, shape) == \
                rdp_module._gamma_truncated_negative_binomial(shape, mean)


# --- closed forms, without dp_accounting -----------------------------------------------------

def test_geometric_single_order_closed_form():
    # One order alpha = 2, gamma = 1/mu: c = 2 (r/2 + log(mu)/2) = r + log mu, so
    # eps'(2) = r + log(mu)/(2-1) + c = 2 r + 2 log mu.
    r, mu = 0.5, 10.0
    value = tuned_rdp([r], orders=[2.0], distribution=parse_tuning(f"geometric:{mu}"))
    assert value[0] == pytest.approx(2 * r + 2 * math.log(mu), rel=1e-14)


def test_poisson_single_order_closed_form():
    # alpha = 2: epshat = log 2; delta <= min(sqrt(1 - e^-r), exp(r - log 2 + log(1/2) - log 2))
    r, mu = 0.5, 20.0
    deltahat = min(math.sqrt(1 - math.exp(-r)), math.exp(r - 3 * math.log(2)))
    value = tuned_rdp([r], orders=[2.0], distribution=parse_tuning(f"poisson:{mu}"))
    assert value[0] == pytest.approx(r + mu * deltahat + math.log(mu), rel=1e-14)
    assert deltahat == pytest.approx(0.20609, abs=1e-5)


def test_geometric_on_a_grid_by_hand():
    """Theorem 2 with eta = 1, evaluated order by order in plain Python."""
    orders = np.array([1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0])
    curve = 0.07 * orders  # a Gaussian mechanism's RDP, alpha / (2 sigma^2)
    mu = 20.0
    c = 2 * min((1 - 1 / a) * e + math.log(mu) / a for a, e in zip(orders, curve, strict=True))
    raw = [e + math.log(mu) / (a - 1) + c for a, e in zip(orders, curve, strict=True)]
    expected = [min(raw[j] for j in range(len(orders)) if orders[j] >= a) for a in orders]
    got = tuned_rdp(curve, orders=orders, distribution=parse_tuning("geometric:20"))
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_mean_one_geometric_costs_nothing_more_than_c():
    # K = 1 always (gamma = 1): log(mu) = 0 and c = 2 min (1 - 1/a) eps(a) = 0 when some
    # order's RDP is 0; on a zero curve the search costs 0.
    zero = np.zeros(ORDERS.size)
    assert np.all(tuned_rdp(zero, orders=ORDERS, distribution=parse_tuning("geometric:1")) == 0)


def test_unsorted_grid_with_duplicates_is_made_monotone():
    orders = np.array([3.0, 2.0, 3.0, 10.0, 2.5])
    curve = np.array([0.3, 0.2, 0.3, 1.0, 0.25])
    got = tuned_rdp(curve, orders=orders, distribution=parse_tuning("logarithmic:5"))
    assert got[0] == got[2]
    by_order = dict(zip(orders, got, strict=True))
    assert by_order[2.0] <= by_order[2.5] <= by_order[3.0] <= by_order[10.0]


def test_negbin_mean_inverts():
    for shape in (0.0, 0.5, 1.0, 3.0):
        for mean in (1.2, 20.0, 500.0):
            gamma = truncated_negbin_gamma(mean, shape)
            assert truncated_negbin_mean(gamma, shape) == pytest.approx(mean, rel=1e-8)
            assert truncated_negbin_mean(gamma, shape) >= mean  # rounded down: conservative


@pytest.mark.parametrize("text, message", [
    ("poisson", "write poisson:MU"),
    ("poisson:", "write poisson:MU"),
    ("uniform:3", "unknown distribution 'uniform'"),
    ("poisson:abc", "is not a number"),
    ("poisson:0.5", "must be a number >= 1, got 0.5"),
    ("geometric:nan", "must be a number >= 1"),
    ("negbin:3", "negbin takes 2 numbers"),
    ("negbin:3,-1", "eta must be a finite number >= 0 .*, got -1"),
    ("negbin:3,inf", "eta must be a finite number >= 0"),
    ("geometric:3,1", "geometric takes 1 number"),
])
def test_parse_errors_are_one_line(text, message):
    with pytest.raises(ValueError, match=message) as error:
        parse_tuning(text)
    assert "\n" not in str(error.value)


def test_parse_names_and_text():
    assert parse_tuning("negbin:20,1") == TuningDistribution("negbin", 20.0, 1.0)
    assert parse_tuning(" Poisson:20 ").shape == math.inf
    assert parse_tuning("logarithmic:7").text == "logarithmic:7"
    assert parse_tuning("negbin:7,0.5").text == "negbin:7,0.5"


def test_candidate_bound_is_the_pointwise_maximum():
    curves = np.array([[1.0, 5.0, 2.0], [3.0, 1.0, 2.5]])
    np.testing.assert_array_equal(candidate_bound(curves), [3.0, 5.0, 2.5])


# --- properties -----------------------------------------------------------------------------

laws = st.sampled_from(LAWS)


@SETTINGS
@given(law=laws, mu=st.floats(1.0, 500.0), seed=st.integers(0, 2**32 - 1),
       delta=st.sampled_from([1e-5, 1e-8]), conversion=st.sampled_from(["classic", "improved"]))
@example(law="logarithmic:{mu}", mu=1.0, seed=409900, delta=1e-5, conversion="classic")
def test_tuned_is_never_below_the_single_run(law, mu, seed, delta, conversion):
    curve = random_curve(np.random.default_rng(seed))
    distribution = parse_tuning(law.format(mu=mu))
    tuned = tuned_rdp(curve, orders=ORDERS, distribution=distribution)
    assert np.all(tuned >= curve)
    single, _ = rdp_to_epsilon(curve, orders=ORDERS, delta=delta, conversion=conversion)
    epsilon, _ = tuned_epsilon(curve, orders=ORDERS, delta=delta, conversion=conversion,
                               distribution=distribution)
    assert epsilon >= float(single)


@SETTINGS
@given(law=laws, mu=st.floats(1.0, 300.0), factor=st.floats(1.001, 10.0),
       seed=st.integers(0, 2**32 - 1))
def test_more_candidates_cost_more(law, mu, factor, seed):
    curve = random_curve(np.random.default_rng(seed))
    fewer = tuned_rdp(curve, orders=ORDERS, distribution=parse_tuning(law.format(mu=mu)))
    more = tuned_rdp(curve, orders=ORDERS,
                     distribution=parse_tuning(law.format(mu=mu * factor)))
    assert np.all(more >= fewer)


@SETTINGS
@given(law=laws, mu=st.floats(1.0, 300.0), seed=st.integers(0, 2**32 - 1),
       extra=st.floats(0.0, 2.0))
def test_a_costlier_candidate_costs_more(law, mu, seed, extra):
    curve = random_curve(np.random.default_rng(seed))
    distribution = parse_tuning(law.format(mu=mu))
    base = tuned_rdp(curve, orders=ORDERS, distribution=distribution)
    worse = tuned_rdp(curve + extra, orders=ORDERS, distribution=distribution)
    assert np.all(worse >= base)


@pytest.mark.parametrize("eta", ["5e-324", "1e-320", "1e-15"])
def test_a_negbin_shape_too_close_to_zero_is_refused(eta):
    """5e-324 divided by zero (exit 1); 1e-320 gave a tuned epsilon below the eta -> 0
    limit (logarithmic) that it must exceed."""
    with pytest.raises(ValueError, match="use logarithmic:MU, its limit eta -> 0"):
        parse_tuning(f"negbin:2,{eta}")
    assert parse_tuning("negbin:2,1e-9").shape == 1e-9
