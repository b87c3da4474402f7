"""Properties every accounting result must have, checked with hypothesis."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.accounting.gnmax import log_q_gnmax, rdp_gnmax, rdp_gnmax_data_independent
from pate_cli.accounting.laplace import log_q_lnmax, rdp_lnmax, rdp_lnmax_data_independent
from pate_cli.accounting.threshold import (
    log_pr_answered,
    rdp_threshold,
    rdp_threshold_data_independent,
)
from pate_cli.analysis import analyze_votes, mechanism_steps
from pate_cli.mechanisms import ConfidentGNMax, LNMax
from pate_cli.orders import default_orders

ORDERS = default_orders()
SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def vote_matrices(draw, max_queries=30):
    """Vote rows from a seeded draw: hypothesis shrinks the shape and the seed."""
    queries = draw(st.integers(1, max_queries))
    classes = draw(st.integers(2, 12))
    teachers = draw(st.integers(1, 400))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    concentration = draw(st.sampled_from([0.05, 0.3, 1.0, 5.0]))
    probs = rng.dirichlet(np.full(classes, concentration), size=queries)
    return np.array([rng.multinomial(teachers, p) for p in probs], dtype=np.float64)


sigmas = st.floats(0.5, 300.0)


@SETTINGS
@given(votes=vote_matrices(), sigma=sigmas)
def test_gnmax_data_dependent_at_most_data_independent(votes, sigma):
    rdp = rdp_gnmax(log_q_gnmax(votes, sigma=sigma), sigma=sigma, orders=ORDERS)
    assert np.all(rdp >= 0)
    assert np.all(rdp <= rdp_gnmax_data_independent(sigma=sigma, orders=ORDERS))


@SETTINGS
@given(votes=vote_matrices(), scale=st.floats(0.5, 100.0))
def test_lnmax_data_dependent_at_most_data_independent(votes, scale):
    rdp = rdp_lnmax(log_q_lnmax(votes, scale=scale), scale=scale, orders=ORDERS)
    assert np.all(rdp >= 0)
    eps0 = 2.0 / scale  # math:lnmax's curve is capped by math:independent's generic bound
    assert np.all(rdp <= np.minimum(eps0, 0.5 * eps0 * eps0 * ORDERS))
    # the cost step the analysis charges is capped by the exact data-independent curve
    _, step = mechanism_steps(LNMax(laplace_scale=scale))
    charged = step.rdp(log_q_lnmax(votes, scale=scale), ORDERS)
    assert np.all(charged <= rdp_lnmax_data_independent(scale=scale, orders=ORDERS))
    assert np.all(charged <= rdp)


@SETTINGS
@given(maxima=st.lists(st.floats(0, 500), min_size=1, max_size=20),
       threshold=st.floats(0, 500), sigma1=sigmas)
def test_threshold_data_dependent_at_most_data_independent(maxima, threshold, sigma1):
    lp = log_pr_answered(np.array(maxima), threshold=threshold, sigma_threshold=sigma1)
    rdp = rdp_threshold(lp, sigma_threshold=sigma1, orders=ORDERS)
    # Where the bound does not apply the step costs alpha / (sqrt(2) sigma1)^2, which
    # exceeds alpha / (2 sigma1^2) by at most an ulp (the reference analysis rounds alike).
    independent = rdp_threshold_data_independent(sigma_threshold=sigma1, orders=ORDERS)
    assert np.all(rdp <= independent * (1 + 1e-15))


@SETTINGS
@given(votes=vote_matrices(max_queries=10), sigma=st.floats(2.0, 300.0), data=st.data())
def test_growing_plurality_never_raises_the_answer_cost(votes, sigma, data):
    """Moving one vote from another class to the plurality lowers q, so the GNMax cost
    cannot rise (C5 of math:smooth: the bound is non-decreasing in q)."""
    row = votes[data.draw(st.integers(0, votes.shape[0] - 1))].copy()
    top = int(np.argmax(row))
    donors = [j for j in range(row.size) if j != top and row[j] > 0]
    if not donors:
        return
    donor = data.draw(st.sampled_from(donors))
    stronger = row.copy()
    stronger[donor] -= 1
    stronger[top] += 1
    both = np.vstack([row, stronger])
    log_q = log_q_gnmax(both, sigma=sigma)
    assert log_q[1] <= log_q[0]
    rdp = rdp_gnmax(log_q, sigma=sigma, orders=ORDERS)
    assert np.all(rdp[1] <= rdp[0] * (1 + 1e-9) + 1e-300)


@SETTINGS
@given(votes=vote_matrices(), sigma=sigmas)
def test_rdp_is_monotone_in_q(votes, sigma):
    log_q = np.sort(log_q_gnmax(votes, sigma=sigma))
    rdp = rdp_gnmax(log_q, sigma=sigma, orders=ORDERS)
    assert np.all(np.diff(rdp, axis=0) >= -1e-12 * rdp[1:])


@SETTINGS
@given(curve_scale=st.floats(1e-4, 50.0), seed=st.integers(0, 1000),
       deltas=st.lists(st.floats(1e-12, 0.9), min_size=2, max_size=6, unique=True))
def test_epsilon_falls_as_delta_grows_and_improved_is_smaller(curve_scale, seed, deltas):
    rng = np.random.default_rng(seed)
    curve = curve_scale * ORDERS * rng.uniform(0.5, 1.5) / 100
    previous, previous_delta = np.inf, 0.0
    for delta in sorted(deltas):
        classic, _ = rdp_to_epsilon(curve, orders=ORDERS, delta=delta)
        improved, _ = rdp_to_epsilon(curve, orders=ORDERS, delta=delta, conversion="improved")
        assert float(classic) <= previous
        if delta > previous_delta * (1 + 1e-6):   # deltas a few ulps apart may tie
            assert float(classic) < previous
        assert float(improved) <= float(classic)
        previous, previous_delta = float(classic), delta


@settings(max_examples=25, deadline=None)
@given(votes=vote_matrices(max_queries=60), seed=st.integers(0, 2**31),
       chunk=st.integers(1, 70), accounting=st.sampled_from(["replay", "expected"]))
def test_results_independent_of_chunk_size_and_repeatable(votes, seed, chunk, accounting):
    teachers = votes[0].sum()
    mechanism = ConfidentGNMax(threshold=0.6 * teachers, sigma_threshold=0.3 * teachers + 1,
                               sigma=0.1 * teachers + 1)
    whole = analyze_votes(votes, mechanism, seed=seed, accounting=accounting)
    chunked = analyze_votes(votes, mechanism, seed=seed, accounting=accounting,
                            chunk_size=chunk)
    for name in ("answered", "label", "epsilon_query", "epsilon_cumulative",
                 "order_cumulative", "rdp_total"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(chunked, name))
    assert np.all(np.diff(whole.epsilon_cumulative) >= 0)
    # RDP adds up: the total curve is the sum of the per-query ones.
    assert whole.epsilon <= whole.epsilon_data_independent + 1e-12
