"""The statistics of pate-audit (math:audit): Clopper-Pearson bounds, the event choice, the
lower bound they give, and the claimed upper bounds."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from pate_cli.accounting.audit import (
    Event,
    candidate_counts,
    choose_event,
    claimed_epsilon,
    clopper_pearson,
    epsilon_from_bounds,
    measure,
)
from pate_cli.accounting.pld import (
    gaussian_exact_epsilon,
    laplace_pld_epsilon,
    pld_available,
    pure_composed_epsilon,
)
from pate_cli.analysis.audit import data_dependent_claim
from pate_cli.mechanisms import build_mechanism


@settings(max_examples=200, derandomize=True, deadline=None)
@given(trials=st.integers(1, 10**7), fraction=st.floats(0, 1),
       confidence=st.floats(0.5, 0.999999))
def test_clopper_pearson_is_scipys_exact_interval(trials, fraction, confidence):
    """Each one-sided bound at c is an end of scipy's exact two-sided interval at 2c - 1,
    moved outwards by 2^-40 relative (over the quantile's rounding)."""
    k = int(round(fraction * trials))
    lower, upper = clopper_pearson(k, trials, confidence=confidence)
    interval = binomtest(k, trials).proportion_ci(confidence_level=2 * confidence - 1,
                                                  method="exact")
    assert float(lower) == pytest.approx(interval.low * (1 - 2**-40), abs=1e-12, rel=0)
    assert float(upper) == pytest.approx(min(1.0, interval.high * (1 + 2**-40)), abs=1e-12,
                                         rel=0)


@settings(max_examples=200, deadline=None)
@given(trials=st.integers(1, 10**6), confidence=st.floats(0.5, 0.999999))
def test_clopper_pearson_bounds_lie_outside_the_exact_ones(trials, confidence):
    """The closed forms at k = 0 and k = n in 40 digits: the upper bound never below, the
    lower never above (scipy's quantile is within an ulp or two either side; review R20)."""
    import mpmath

    with mpmath.workdps(40):
        n, c = mpmath.mpf(trials), mpmath.mpf(confidence)
        upper_exact = 1 - (1 - c) ** (1 / n)  # k = 0
        lower_exact = (1 - c) ** (1 / n)  # k = n
        assert mpmath.mpf(float(clopper_pearson(0, trials, confidence=confidence)[1])) \
            >= upper_exact
        assert mpmath.mpf(float(clopper_pearson(trials, trials, confidence=confidence)[0])) \
            <= lower_exact


def test_clopper_pearson_at_the_ends_and_vectorised():
    lower, upper = clopper_pearson(np.array([0, 5, 10]), 10, confidence=0.975)
    assert lower[0] == 0.0 and upper[2] == 1.0
    assert 0 < lower[1] < 0.5 < upper[1] < 1
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson(1, 10, confidence=1.0)
    with pytest.raises(ValueError, match="trials"):
        clopper_pearson(0, 0, confidence=0.9)


def test_epsilon_from_bounds():
    assert float(epsilon_from_bounds(0.5, 0.25, delta=0.0)) == pytest.approx(math.log(2))
    assert float(epsilon_from_bounds(0.5, 0.25, delta=0.1)) == pytest.approx(math.log(1.6))
    assert float(epsilon_from_bounds(1e-6, 1e-7, delta=1e-5)) == 0.0  # p below delta
    assert float(epsilon_from_bounds(0.2, 0.4, delta=0.0)) == 0.0      # no evidence


@settings(max_examples=300, derandomize=True, deadline=None)
@given(p_lower=st.floats(1e-12, 1.0), q_upper=st.floats(1e-12, 1.0),
       delta=st.one_of(st.sampled_from([0.0, 1e-5, 1e-8]), st.floats(0.0, 0.5)))
def test_epsilon_from_bounds_is_never_above_its_formula(p_lower, q_upper, delta):
    """The audit's measured epsilon is a LOWER bound: ``max(0, log((p_lower - delta) /
    q_upper))`` of the very floats it is given, at 50 digits, is never below it (the float
    difference, quotient and log each round either way; the function lowers its value by
    2^-40 relative and 8 ulps of 1 over them), and it gives that value up to its margin."""
    got = float(epsilon_from_bounds(p_lower, q_upper, delta=delta))
    with mpmath.workdps(50):
        margin = mpmath.mpf(p_lower) - mpmath.mpf(delta)
        exact = (mpmath.log(margin / mpmath.mpf(q_upper)) if margin > 0 else mpmath.mpf(0))
        exact = max(exact, mpmath.mpf(0))
        assert 0 <= got <= exact
        assert got >= exact * (1 - mpmath.mpf("1e-11")) - mpmath.mpf("1e-14")


def one_query(counts) -> np.ndarray:
    """The tallies of one-query trials whose outputs fell ``counts`` times on each outcome."""
    counts = np.asarray(counts)
    return np.stack([counts.sum() - counts, counts], axis=1)


def test_the_candidates_and_the_choice():
    first = one_query([0, 600, 300, 100])
    second = one_query([0, 300, 600, 100])
    counts, event_at = candidate_counts(first, second)
    assert counts.shape == (2 * (4 + 2), 2)
    named = [(tuple(int(j) for j in event_at(i).outcomes), event_at(i).forward)
             for i in range(len(counts))]
    assert ((1,), True) in named and ((2,), False) in named
    assert ((1, 0), True) in named  # a union: the ranking by ratio is 1, then 0 and 3 (1), 2
    assert len(candidate_counts(first, second, both=False)[0]) == 4 + 2
    chosen = choose_event(first, second, trials=1000, delta=1e-5, confidence=0.95)
    assert chosen.outcomes in {(1,), (2,)}
    assert chosen.labels == [chosen.outcomes[0] - 1]


@settings(max_examples=60, derandomize=True, deadline=None)
@given(outcomes=st.integers(2, 7), queries=st.integers(1, 6), both=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_candidate_counts_are_each_events_own_counts(outcomes, queries, both, seed):
    """Each candidate's counts (cumulative sums over the ranking or the cuts) are its
    event's own hits on the favoured side and the other side, and a union's outcomes are
    a view of the one ranking (O(outcomes) memory: 20,000 classes once took 15.5 GB)."""
    rng = np.random.default_rng(seed)
    first, second = (rng.integers(0, 50, (outcomes, queries + 1)) for _ in range(2))
    counts, event_at = candidate_counts(first, second, both=both)
    per_direction = outcomes + max(outcomes - 2, 0) if queries == 1 else 2 * outcomes * queries
    assert counts.shape == ((2 if both else 1) * per_direction, 2)
    for index, (hits, other) in enumerate(counts.tolist()):
        event = event_at(index)
        here, there = (first, second) if event.forward else (second, first)
        assert (hits, other) == (event.hits(here), event.hits(there))
        if len(event.outcomes) > 1:
            assert isinstance(event.outcomes, np.ndarray) and event.outcomes.base is not None


def test_a_long_composition_chooses_the_cut_that_separates_the_sides():
    """K composed queries make 4K candidates per outcome; their counts are cumulative sums
    (one sum per candidate was O(K^2): 100,000 queries took 47 s). 200,000 queries of 4
    outcomes: the chosen cut is the one a direct search over the counts finds."""
    rng = np.random.default_rng(5)
    queries = 200_000
    first, second = (np.zeros((4, queries + 1), dtype=np.int64) for _ in range(2))
    for side, p in ((first, 0.52), (second, 0.48)):
        side[1] = np.bincount(rng.binomial(queries, p, 2_000), minlength=queries + 1)
    counts, event_at = candidate_counts(first, second)
    assert counts.shape == (2 * 4 * 2 * queries, 2)
    chosen = choose_event(first, second, trials=2_000, delta=1e-5, confidence=0.95)
    assert chosen.outcomes == (1,) and chosen.forward and chosen.above
    assert event_at(int(np.argmax(counts[:, 0] - counts[:, 1]))).outcomes == (1,)


def test_measure_matches_the_formula():
    event = Event((1,), True)
    first, second = one_query([0, 700, 300]), one_query([0, 400, 600])
    found = measure(event, first, second, trials=1000, delta=1e-5, confidence=0.9)
    low, _ = clopper_pearson(700, 1000, confidence=0.95)
    _, high = clopper_pearson(400, 1000, confidence=0.95)
    assert (found.hits, found.other_hits, found.of) == (700, 400, 1000)
    assert found.epsilon_lower == pytest.approx(math.log((low - 1e-5) / high), rel=1e-12)
    backward = measure(Event((2,), False), first, second, trials=1000, delta=1e-5,
                       confidence=0.9)
    assert (backward.hits, backward.other_hits) == (600, 300)


def test_the_claims():
    eps, how = claimed_epsilon("gnmax", {"sigma": 40.0}, delta=1e-5)
    assert eps == gaussian_exact_epsilon([(math.sqrt(2), 40.0, 1)], 1e-5)
    assert "Gaussian" in how
    both, _ = claimed_epsilon("confident", {"sigma": 40.0, "sigma_threshold": 150.0,
                                            "threshold": 200.0}, delta=1e-5)
    assert both == gaussian_exact_epsilon([(1.0, 150.0, 1), (math.sqrt(2), 40.0, 1)], 1e-5)
    assert eps < both
    # LNMax: its noisy counts' PLD (two Laplace steps), as pate-analyze's figure, where
    # dp_accounting is installed; else its pure epsilon 2 / lambda
    lnmax, how = claimed_epsilon("lnmax", {"laplace_scale": 20.0}, delta=1e-5)
    if pld_available():
        assert lnmax == laplace_pld_epsilon(20.0, 2, 1e-5) < 0.1 and "Laplace" in how
    else:
        assert lnmax == 0.1
    assert claimed_epsilon("exponential", {"eta": 0.5}, delta=1e-5)[0] == 1.0
    with pytest.raises(ValueError, match="svt"):
        claimed_epsilon("svt", {}, delta=1e-5)


def _dependent(name, params, histogram, **options):
    """The audit's data-dependent claim of mechanism ``name`` at ``histogram`` (its teachers
    the histogram's total)."""
    mechanism = build_mechanism(name, teachers=float(histogram.sum()), **params)
    return data_dependent_claim(mechanism, histogram, **options)


@pytest.mark.parametrize("name, params", [
    ("gnmax", {"sigma": 5.0}), ("lnmax", {"laplace_scale": 5.0}), ("exponential", {"eta": 0.3}),
    ("confident", {"sigma": 5.0, "sigma_threshold": 10.0, "threshold": 30.0}),
    ("confident-exponential", {"eta": 0.3, "sigma_threshold": 10.0, "threshold": 30.0})])
def test_a_data_dependent_claim_never_exceeds_the_data_independent_one(name, params):
    independent, _ = claimed_epsilon(name, params, delta=1e-5)
    for histogram in ([40, 0, 0], [20, 20, 0], [39, 1, 0]):
        dependent, _ = _dependent(name, params, np.array(histogram),
                                                      delta=1e-5)
        assert 0 <= dependent <= independent
    confident, how = _dependent(name, params, np.array([40, 0, 0]),
                                                    delta=1e-5)
    assert confident < independent and "data-dependent" in how  # a clear plurality


def test_confident_exponentials_claim_lies_between_its_parts_and_their_sum():
    """The threshold's Gaussian composed with the exponential mechanism's 2 eta: above
    each alone, at most their basic sum (the PLD composition, dp_accounting)."""
    pytest.importorskip("dp_accounting")
    params = {"eta": 0.3, "sigma_threshold": 10.0, "threshold": 30.0}
    for queries in (1, 5):
        both, how = claimed_epsilon("confident-exponential", params, delta=1e-5,
                                    queries=queries)
        gaussian = gaussian_exact_epsilon([(1.0, 10.0, queries)], 1e-5)
        pure, _ = claimed_epsilon("exponential", {"eta": 0.3}, delta=1e-5, queries=queries)
        assert max(gaussian, pure) < both <= gaussian + queries * 0.6
        assert "PLD" in how


@pytest.mark.parametrize("sigma1, eta, queries, delta", [
    (1e12, 1.0, 30, 0.05), (1e12, 0.5, 100, 1e-5), (1e12, 0.05, 30, 1e-3),
    (1e9, 0.005, 2, 1e-3), (10.0, 0.3, 5, 1e-5),
])
def test_confident_exponentials_pld_claim_is_never_below_the_exact_composition(
        sigma1, eta, queries, delta):
    """The PLD figure of ``queries`` threshold Gaussians (sensitivity 1, std sigma1) and
    ``queries`` 2 eta-DP answers is raised 1e-9 over dp_accounting's FFT rounding: the
    exact profile at the claim (mpmath, 50 digits: the composed Gaussian of ``mu =
    sqrt(queries) / sigma1`` shifted by each randomized-response loss ``2 eta (2 j - k)``,
    which dominates 2 eta-DP) is at most delta. Where the Gaussian is negligible (sigma1
    1e9, 1e12) dp_accounting's own figure lies 1e-14 to 6e-12 relative below the exact
    one."""
    pytest.importorskip("dp_accounting")
    claim, how = claimed_epsilon("confident-exponential", {
        "eta": eta, "sigma_threshold": sigma1, "threshold": 30.0}, delta=delta, queries=queries)
    assert "PLD" in how
    with mpmath.workdps(50):
        mu = mpmath.sqrt(queries) / mpmath.mpf(sigma1)
        pure = 2 * mpmath.mpf(eta)
        p = mpmath.e**pure / (1 + mpmath.e**pure)
        profile = mpmath.mpf(0)
        for j in range(queries + 1):
            gap = mpmath.mpf(claim) - pure * (2 * j - queries)
            profile += (mpmath.binomial(queries, j) * p**j * (1 - p)**(queries - j)
                        * (mpmath.ncdf(-gap / mu + mu / 2)
                           - mpmath.exp(gap) * mpmath.ncdf(-gap / mu - mu / 2)))
        assert profile <= delta


def test_composed_claims():
    gaussian, _ = claimed_epsilon("gnmax", {"sigma": 40.0}, delta=1e-5, queries=10)
    assert gaussian == gaussian_exact_epsilon([(math.sqrt(2), 40.0, 10)], 1e-5)
    pure, how = claimed_epsilon("exponential", {"eta": 0.05}, delta=1e-5, queries=10)
    assert 0.1 < pure <= 1.0
    assert "composed" in how
    lnmax, _ = claimed_epsilon("lnmax", {"laplace_scale": 20.0}, delta=1e-5, queries=10)
    assert lnmax <= pure_composed_epsilon(0.1, 10, 1e-5)
    dependent, _ = _dependent("gnmax", {"sigma": 5.0}, np.array([40, 0, 0]),
                                                  delta=1e-5, queries=4)
    single, _ = _dependent("gnmax", {"sigma": 5.0}, np.array([40, 0, 0]),
                                               delta=1e-5)
    assert single < dependent


def test_composed_events_are_cuts_on_one_outcome():
    first = np.array([[5, 0, 0], [1, 2, 2], [0, 3, 2]])   # 3 outcomes, k = 2
    second = np.array([[5, 0, 0], [2, 2, 1], [1, 1, 3]])
    assert candidate_counts(first, second)[0].shape == (2 * 3 * (2 + 2), 2)
    assert Event((1,), True, 2, True).hits(first) == 2
    assert Event((1,), True, 0, False).hits(first) == 1
    assert Event((2,), True, 1, False).hits(second) == 2


@pytest.mark.parametrize("name, params", [
    ("gnmax", {"sigma": 1e-9}), ("gnmax", {"sigma": 0.001}),
    ("confident", {"sigma": 1e-9, "sigma_threshold": 1e-9, "threshold": 200.0}),
    ("confident-exponential", {"eta": 0.3, "sigma_threshold": 1e-9, "threshold": 200.0})])
def test_a_noise_too_small_for_the_exact_profile_still_gets_a_finite_claim(name, params):
    """Where the exact profile is not resolved (mu of 10^9: ``gaussian_exact_epsilon``
    gives inf) the claim is mu-GDP's RDP bound, and the exact profile there (mpmath, 50
    digits) is at most delta: a valid upper bound, finite, so ``-f json`` writes it."""
    epsilon, how = claimed_epsilon(name, params, delta=1e-5)
    assert math.isfinite(epsilon)
    gaussians = [(1.0, params["sigma_threshold"], 1)] if "sigma_threshold" in params else []
    if name != "confident-exponential":
        gaussians.append((math.sqrt(2.0), params["sigma"], 1))
    mu = mpmath.sqrt(sum(mpmath.mpf(s) ** 2 / mpmath.mpf(std) ** 2 for s, std, _ in gaussians))
    gaussian = epsilon - (0.6 if name == "confident-exponential" else 0.0)
    with mpmath.workdps(50):
        eps = mpmath.mpf(gaussian)
        profile = (mpmath.ncdf(-eps / mu + mu / 2)
                   - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2))
    assert profile <= 1e-5
    assert ("RDP" in how) == (params.get("sigma_threshold", params.get("sigma")) == 1e-9)


def test_composed_claims_do_not_read_a_pld_below_the_trusted_delta():
    """Below delta 1e-8 a PLD's far tail is FFT rounding (accounting.risk.TRUSTED_DELTA):
    the composed claims there add their steps, an upper bound."""
    pytest.importorskip("dp_accounting")
    both, how = claimed_epsilon("confident-exponential", {"eta": 0.1, "sigma_threshold": 40.0,
                                                          "threshold": 200.0},
                                delta=1e-10, queries=10)
    assert "composed by adding" in how


@given(epsilon=st.floats(0.01, 3.0), queries=st.integers(1, 120),
       delta=st.sampled_from([1e-12, 1e-8, 1e-5, 0.01, 0.3]))
@settings(max_examples=40, deadline=None)
def test_composed_pure_claims_are_exact_and_never_below(epsilon, queries, delta):
    """``queries`` epsilon-DP steps: the claim is the root of the binomial privacy loss's
    profile (randomized response dominates pure DP), at 60 digits: never below it, within
    1e-7 relative (dp_accounting's PLD read 7e-12 relative below it at 100 steps)."""
    claim, how = claimed_epsilon("exponential", {"eta": epsilon / 2.0}, delta=delta,
                                 queries=queries)
    with mpmath.workdps(60):
        eps, k = mpmath.mpf(epsilon), queries
        p = mpmath.e**eps / (1 + mpmath.e**eps)

        def profile(e):
            return mpmath.fsum(mpmath.binomial(k, j) * p**j * (1 - p)**(k - j)
                               * (1 - mpmath.e**(e - eps * (2 * j - k)))
                               for j in range(k + 1) if eps * (2 * j - k) > e)

        if queries == 1:
            exact = eps  # one step: the stated epsilon itself
        elif profile(mpmath.mpf(0)) <= delta:
            exact = mpmath.mpf(0)
        else:  # the profile decreases: bisection to 1e-25
            low, high = mpmath.mpf(0), k * eps
            while high - low > mpmath.mpf("1e-25"):
                middle = (low + high) / 2
                low, high = (low, middle) if profile(middle) <= delta else (middle, high)
            exact = low
        assert claim >= exact
        # the claim is the root at delta / (1 + 1e-9) (a margin for the profile's float
        # sum): where the profile is flat that moves it up to about delta 1e-9 / slope
        # absolute (epsilon 0.16, 23 steps, delta 0.3: 8.5e-10, 1.5e-7 relative)
        slope = mpmath.fsum(mpmath.binomial(k, j) * p**j * (1 - p)**(k - j)
                            * mpmath.e**(exact - eps * (2 * j - k))
                            for j in range(k + 1) if eps * (2 * j - k) > exact)
        shift = delta * 2e-9 / slope if slope > 0 else mpmath.mpf(0)
        assert claim <= exact * (1 + mpmath.mpf("1e-7")) + shift + mpmath.mpf("1e-12")
    assert claim <= queries * epsilon * (1 + 1e-15)
