"""Smooth-sensitivity sanitisation (math:smooth and math:reference-values)."""

from __future__ import annotations

import math
from dataclasses import replace

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pate_cli.accounting.gnmax import log_q_gnmax
from pate_cli.accounting.smooth_sensitivity import (
    GNMaxSmoothConstants,
    SmoothSensitivityAccumulator,
    beta_grid,
    check_conditions,
    local_sensitivity_at,
    local_sensitivity_gnmax,
    local_sensitivity_threshold,
    log_b_lower,
    log_b_upper,
    rdp_gnss,
    sanitize_confident,
    sanitize_gnmax,
    smooth_sensitivity,
)
from pate_cli.accounting.smooth_sensitivity.bounds import check_smooth_domain
from pate_cli.accounting.threshold import log_pr_answered
from pate_cli.mechanisms import release_draw

RTOL = 1e-7


def _close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=0)


# --- math:reference-values ------------------------------------------------------------------

def test_gnmax_small_sigma():
    ls = local_sensitivity_gnmax([[10, 0, 0]], teachers=10, sigma=0.5, order=1.5)[0]
    _close(ls, [3.13503646e-17, 1.60178280e-08, 5.90681786e-03] + [5.99981308] * 7)


def test_gnmax_five_classes():
    ls = local_sensitivity_gnmax([[1000, 500, 300, 200, 0]], teachers=2000, sigma=250,
                                 order=10)[0]
    _close(ls, [0.0] * 298 + [2.77693450548e-7, 2.10853979548e-6] + [2.73113623988e-6] * 1700)


THRESHOLD_CASES = {
    16: [0.0] * 3 + [1.48454129e-04, 1.47826870e-02, 3.94153241e-02, 6.45775697e-02,
                     9.01543247e-02, 1.16054002e-01, 1.42180452e-01, 1.42180452e-01,
                     1.48454129e-04, 1.47826870e-02, 3.94153241e-02, 6.45775697e-02,
                     9.01543266e-02, 1.16054000e-01, 1.42180452e-01, 1.68302106e-01,
                     1.93127860e-01] + [0.0] * 10,
    2: [1.60212079e-01, 2.07021132e-01, 2.07021132e-01, 1.93127860e-01, 1.68302106e-01,
        1.42180452e-01, 1.16054002e-01, 9.01543247e-02, 6.45775697e-02, 3.94153241e-02,
        1.47826870e-02, 1.48454129e-04] + [0.0] * 18,
    50: [1.35750725752e-19, 1.88990500499e-17, 2.05403154065e-15, 1.74298153642e-13,
         1.15489723995e-11, 5.97584949325e-10, 2.41486826748e-08, 7.62150641922e-07,
         1.87846248741e-05, 0.000360973025976, 0.000360973025976, 2.76377015215e-50,
         1.00904975276e-53, 2.87254164748e-57, 6.37583360761e-61, 1.10331620211e-64,
         1.48844393335e-68, 1.56535552444e-72, 1.28328011060e-76, 8.20047697109e-81]
    + [0.0] * 10,
}


# The reference's threshold curves give each query's local sensitivity at distance exactly
# d (0 past the count range); a sum over queries needs each one's maximum over distances
# <= d (test_smooth_brute_force.py), so the curves here are their running maxima.


@pytest.mark.parametrize("threshold", sorted(THRESHOLD_CASES))
def test_threshold(threshold):
    votes = np.array([20.0, 10.0, 0.0])
    ls = local_sensitivity_threshold([votes.max()], teachers=30, threshold=threshold,
                                     sigma_threshold=2, order=10)[0]
    _close(ls, np.maximum.accumulate(THRESHOLD_CASES[threshold]))


def test_threshold_fractional_votes():
    votes = np.array([19.5, -5.1, 0.0])
    ls = local_sensitivity_threshold([votes.max()], teachers=30, threshold=10.1,
                                     sigma_threshold=2, order=10)[0]
    _close(ls, np.maximum.accumulate(
        [0.0620410301, 0.0875807131, 0.113451958, 0.139561671, 0.1657074530, 0.1908244840,
         0.2070270720, 0.207027072, 0.169718100, 0.0575152142, 0.00678695871] + [0.0] * 6
        + [0.000536304908, 0.0172181073, 0.041909870] + [0.0] * 10))


# --- C5 / C6 --------------------------------------------------------------------------------

def test_conditions_known_results():
    assert check_conditions(sigma=20, classes=10, order=25) == (True, False)
    assert check_conditions(sigma=30, classes=10, order=25) == (True, True)


def test_refusal_when_a_condition_fails():
    votes = np.array([[100, 0] + [0] * 8, [60, 40] + [0] * 8], dtype=float)
    result = sanitize_gnmax(votes, teachers=100, sigma=20, order=25, delta=1e-5,
                            release_noise=release_draw(1))
    assert (result.c5, result.c6) == (True, False)
    assert result.sanitized_epsilon is None
    assert "C6" in result.refusal


# --- the paper's MNIST row ------------------------------------------------------------------

def test_mnist_row(paper_votes):
    votes = np.load(paper_votes / "mnist_250_teachers.npy", mmap_mode="r")[:640]
    weights = np.exp(log_pr_answered(np.asarray(votes).max(axis=1), threshold=200,
                                     sigma_threshold=150))
    result = sanitize_confident(votes, teachers=250, threshold=200, sigma_threshold=150,
                                sigma=40, order=14, delta=1e-5, weights=weights,
                                release_noise=release_draw(3),
                                chunk_size=100)
    assert round(result.epsilon_before, 3) == 1.999
    assert round(result.epsilon_after, 3) == 2.516
    assert round(result.noise_std, 3) == 0.385
    assert round(result.smooth_sensitivity, 5) == 0.06175
    assert round(result.beta, 4) == 0.0329
    assert round(result.sigma_ss, 3) == 6.233
    assert result.c5 and result.c6 and result.refusal is None
    assert result.sanitized_epsilon is not None
    # Another chunk size sums in another order (within 1e-12); a history asked for
    # changes no figure of the report (the same chunks), and reports along the way.
    common = dict(teachers=250, threshold=200, sigma_threshold=150, sigma=40, order=14,
                  delta=1e-5, weights=weights, release_noise=release_draw(3))
    plain = sanitize_confident(votes, **common)
    again = sanitize_confident(votes, **common, report_every=320)
    assert math.isclose(plain.sanitized_epsilon, result.sanitized_epsilon, rel_tol=1e-12)
    assert replace(again, checkpoints=()) == plain
    assert [c.queries for c in again.checkpoints] == [320, 640]
    assert again.checkpoints[-1] == replace(again, checkpoints=())
    # a history with marks inside chunks and on their ends (chunks of 100, every 50)
    history = sanitize_confident(votes, **common, chunk_size=100, report_every=50)
    assert [c.queries for c in history.checkpoints] == [*range(50, 640, 50), 640]
    assert replace(history, checkpoints=()) == result
    for point in history.checkpoints[:-1]:
        alone = sanitize_confident(votes[: point.queries], **{
            **common, "weights": weights[: point.queries]}, chunk_size=100)
        assert math.isclose(point.epsilon_after, alone.epsilon_after, rel_tol=1e-12)
        assert math.isclose(point.smooth_sensitivity, alone.smooth_sensitivity,
                            rel_tol=1e-12)


# --- a literal walk, step by step (math:smooth) ---------------------------------------

def literal_walk(votes, teachers, constants):
    """Algorithms 4-5 exactly as math:smooth words them, one step at a time."""
    c = constants
    out = np.full(teachers, c.plateau)
    log_q = log_q_gnmax(np.array([votes], dtype=float), sigma=c.sigma)[0]
    if c.log_q1 <= log_q <= c.log_q0:
        return out
    state = sorted((int(v) for v in votes), reverse=True)
    logs = [log_q]
    go_left = log_q > c.log_q0
    d = 0
    while d < teachers - 1:
        if go_left and not (log_q > c.log_q0 and state[1] > 0):
            break
        if not go_left and not log_q < c.log_q1:
            break
        d += 1
        if go_left:
            state[0] += 1
            state[1] -= 1
            state[1:] = sorted(state[1:], reverse=True)
        else:
            state[0] -= 1
            state[1] += 1
        log_q = log_q_gnmax(np.array([state], dtype=float), sigma=c.sigma)[0]
        logs.append(log_q)
    out[: len(logs)] = local_sensitivity_at(np.array(logs), constants=c)
    return out


@st.composite
def vote_rows(draw, classes):
    teachers = draw(st.sampled_from([3, 20, 250, 1000, 5000]))
    rows = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    agreement = draw(st.floats(0.05, 1.0))
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(classes, 0.3), size=rows) * (1 - agreement)
    p[np.arange(rows), rng.integers(classes, size=rows)] += agreement
    votes = np.array([rng.multinomial(teachers, r / r.sum()) for r in p], dtype=float)
    # sigma relative to M so that walks of every kind (and plateaus) occur
    sigma = draw(st.sampled_from([0.5, 2.0, 10.0])) * max(1.0, teachers / 100)
    order = draw(st.sampled_from([2.0, 5.5, 14.0, 30.0]))
    return votes, teachers, sigma, order


@pytest.mark.parametrize("classes", [2, 10, 150])
def test_vectorised_walk_equals_literal_walk(classes):
    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(vote_rows(classes))
    def check(case):
        votes, teachers, sigma, order = case
        c = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=classes)
        fast = local_sensitivity_gnmax(votes, teachers=teachers, sigma=sigma, order=order,
                                       constants=c)
        for row, curve in zip(votes, fast, strict=True):
            np.testing.assert_allclose(curve, literal_walk(row, teachers, c), rtol=1e-9,
                                       atol=1e-300)

    check()


@pytest.mark.parametrize("classes", [2, 10, 150])
def test_walk_curves_are_their_running_maximum(classes):
    """The release sums the walks' curves over queries, which bounds the sum's local
    sensitivity at distance d only if each query's entry is its maximum over distances
    <= d. Under C5 and C6 (else no sanitised value is reported) the walks move q toward
    [q1, q0], LS grows on the way (C5 above q0, C6 below q1) and a walk
    ends inside [q1, q0] (B_U(q1) = q0, B_L(q0) = q1), at the plateau: the curves are
    non-decreasing and never above the plateau that follows them."""
    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(vote_rows(classes))
    def check(case):
        votes, teachers, sigma, order = case
        try:
            check_smooth_domain(sigma=sigma, order=order)  # where the release computes
        except ValueError:
            return
        if check_conditions(sigma=sigma, classes=classes, order=order) != (True, True):
            return
        c = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=classes)
        curves = local_sensitivity_gnmax(votes, teachers=teachers, sigma=sigma, order=order,
                                         constants=c)
        np.testing.assert_array_equal(curves, np.maximum.accumulate(curves, axis=1))
        assert np.all(curves <= c.plateau)

    check()


def test_walk_many_rows_against_literal():
    rng = np.random.default_rng(7)
    teachers, classes, sigma, order = 400, 10, 8.0, 10.0
    p = rng.dirichlet(np.full(classes, 0.4), size=300)
    votes = np.array([rng.multinomial(teachers, r) for r in p], dtype=float)
    c = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=classes)
    fast = local_sensitivity_gnmax(votes, teachers=teachers, sigma=sigma, order=order,
                                   constants=c)
    kinds = set()
    for row, curve in zip(votes, fast, strict=True):
        lq = log_q_gnmax(row[None], sigma=sigma)[0]
        kinds.add("left" if lq > c.log_q0 else "right" if lq < c.log_q1 else "plateau")
        np.testing.assert_allclose(curve, literal_walk(row, teachers, c), rtol=1e-9,
                                   atol=1e-300)
    assert {"left", "right"} <= kinds


# --- properties -------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(ls=st.lists(st.floats(0.0, 10.0), min_size=1, max_size=60),
       order=st.floats(2.0, 60.0))
def test_smooth_sensitivity_properties(ls, order):
    ls = np.array(ls)
    betas = beta_grid(order)
    ss = smooth_sensitivity(ls, betas)
    assert np.all(ss >= ls[0])
    assert np.all(np.diff(ss) <= 0)


@pytest.mark.parametrize("beta, sigma_ss, order", [
    (0.03, 6.0, 14.0), (0.0329, 6.233, 14.0), (0.01, 2.0, 20.0), (0.2, 1.5, 2.0),
    (0.001, 50.0, 100.0), (0.12, 0.7, 4.0),
])
def test_the_release_rdp_is_theorem_23_written_out(beta, sigma_ss, order):
    """The GNSS release's RDP (Papernot et al. 2018, Theorem 23), ``alpha exp(2 beta) /
    sigma_ss^2 + (beta alpha - log(1 - 2 alpha beta) / 2) / (alpha - 1)``, by mpmath at 50
    digits: within 1e-13 relative (an ``exp(beta)`` for ``exp(2 beta)`` is 0.1% or more
    off here), and below it by at most an ulp or two (the function is not raised: the
    conversion's 2^-40 covers it, as every epsilon's rounding), both for scalars and for
    the vectorised call the release makes."""
    with mpmath.workdps(50):
        b, s, a = mpmath.mpf(beta), mpmath.mpf(sigma_ss), mpmath.mpf(order)
        exact = a * mpmath.exp(2 * b) / s**2 + (b * a - mpmath.log(1 - 2 * a * b) / 2) / (a - 1)
        got = [float(rdp_gnss(beta, sigma_ss=sigma_ss, order=order)),
               float(rdp_gnss(np.array([beta, beta]), sigma_ss=np.array([sigma_ss, 1.0]),
                              order=order)[0])]
        for value in got:
            assert abs(mpmath.mpf(value) - exact) <= exact * mpmath.mpf("1e-13")
            assert mpmath.mpf(value) >= exact * (1 - mpmath.mpf("4e-16"))


def test_accumulator_matches_full_curves():
    rng = np.random.default_rng(3)
    teachers, classes = 300, 10
    votes = np.array([rng.multinomial(teachers, rng.dirichlet(np.full(classes, 0.3)))
                      for _ in range(200)], dtype=float)
    weights = rng.uniform(0, 1, size=200)
    weights[::7] = 0.0
    acc = SmoothSensitivityAccumulator(teachers=teachers, classes=classes, sigma=20, order=8,
                                       threshold=150, sigma_threshold=100)
    assert not acc.answer_independent
    for lo in range(0, 200, 37):
        acc.add(votes[lo : lo + 37], weights=weights[lo : lo + 37])
    ans = local_sensitivity_gnmax(votes, teachers=teachers, sigma=20, order=8)
    expected = weights @ ans
    if not acc.selection_independent:
        expected += local_sensitivity_threshold(votes.max(axis=1), teachers=teachers,
                                                threshold=150, sigma_threshold=100,
                                                order=8).sum(axis=0)
    np.testing.assert_allclose(acc.local_sensitivity(), expected, rtol=1e-12)


def test_b_lower_and_upper_are_inverse():
    x = np.linspace(-30, -2, 50)
    back = log_b_upper(log_b_lower(x, sigma=5.0, classes=10), sigma=5.0, classes=10)
    np.testing.assert_allclose(back, x, rtol=1e-9)


def test_rejects_non_integer_votes():
    with pytest.raises(ValueError):
        local_sensitivity_gnmax([[1.5, 0.5]], teachers=2, sigma=1.0, order=2.0)


def test_the_release_refuses_where_q0_would_underflow_and_says_how_to_choose():
    """math:smooth: ``log q0 <= -700`` is out of reach, so ``alpha <= 0.99 + sqrt(700)
    sigma`` and ``sigma >= 1 / (sqrt(700) - 1)``; the refusal names the limit and the
    options that choose another order."""
    from pate_cli.accounting.smooth_sensitivity.bounds import check_smooth_domain
    largest = 0.99 + math.sqrt(700.0) * 16.0  # 424.31...
    check_smooth_domain(sigma=16.0, order=largest)
    with pytest.raises(ValueError, match=r"at most 424\.31, got 500 .*--order or an --orders"):
        check_smooth_domain(sigma=16.0, order=500.0)
    check_smooth_domain(sigma=1.0 / (math.sqrt(700.0) - 1.0) * 1.000001, order=1.5)
    with pytest.raises(ValueError, match=r"needs sigma >= 0\.03928, got 0\.039"):
        check_smooth_domain(sigma=0.039, order=1.5)


def test_fractional_counts_are_charged_toward_the_threshold_in_the_release():
    """Interactive's max (n - M p) is fractional: the report charged it rounded half to
    even (below the mechanism's q: its epsilon before sanitising 2.8728 under the run's
    2.8820 on the MNIST sample). Rounded toward T it is never below the run's figure; with
    a fractional T a whole count toward T could pass it, so that is refused."""
    import pate_cli
    from tests import SAMPLES
    options = dict(student=str(SAMPLES / "mnist_250_student.npy"), threshold=120,
                   sigma_threshold=15, sigma=40, accounting="expected", queries=600,
                   smooth_sensitivity=True, per_query=False)
    result = pate_cli.analyze(str(SAMPLES / "mnist_250_votes.npy"), "interactive", **options)
    assert result.smooth_sensitivity.epsilon_before >= result.epsilon
    with pytest.raises(ValueError, match="needs a whole-number --threshold, got 120.5"):
        pate_cli.analyze(str(SAMPLES / "mnist_250_votes.npy"), "interactive",
                         **dict(options, threshold=120.5))


def test_a_chunk_with_no_charged_query_walks_nothing():
    """A chunk in which no query was charged (expected accounting, every pr_answered 0)
    gave 'zero-size array to reduction operation maximum' (exit 2 for a valid run)."""
    votes = np.zeros((0, 10), dtype=np.int64)
    assert local_sensitivity_gnmax(votes, teachers=250, sigma=40.0, order=20.0).shape == (0, 250)


def test_the_threshold_table_is_that_of_the_capped_cost():
    """The threshold step is charged ``min(r, cap)`` (math:screening's exact curve caps
    math:threshold's): the local sensitivities are those of the capped cost, never more
    than the uncapped ones, and below them where the cap binds (Adult's T 220, sigma1 50,
    order 10: smooth sensitivity 0.012184 where the uncapped table gave 0.012578)."""
    from pate_cli.accounting.smooth_sensitivity.bounds import ThresholdSmoothConstants

    plain = ThresholdSmoothConstants.compute(threshold=220, sigma_threshold=50, order=10,
                                             teachers=250)
    cap = 0.5 * float(plain.r.max())
    capped = ThresholdSmoothConstants.compute(threshold=220, sigma_threshold=50, order=10,
                                              teachers=250, cap=cap)
    r = np.minimum(plain.r, cap)
    assert np.array_equal(capped.r, r)
    steps = np.abs(np.diff(r))
    ls = np.zeros(251)
    ls[:-1] = steps
    ls[1:] = np.maximum(ls[1:], steps)
    assert np.array_equal(capped.ls_padded[250:501], ls)
    assert np.all(capped.ls_padded <= plain.ls_padded)
    assert np.any(capped.ls_padded < plain.ls_padded)
    import pate_cli
    from tests import SAMPLES

    result = pate_cli.analyze(str(SAMPLES / "adult_250_votes.npy"), queries=1000,
                              threshold=220, sigma_threshold=50, sigma=40,
                              accounting="expected", smooth_sensitivity=True)
    assert result.smooth_sensitivity.smooth_sensitivity == pytest.approx(0.0121840154,
                                                                         rel=1e-8)


def test_sanitize_analysis_refuses_votes_that_are_not_the_results():
    """``sanitize_analysis(result, votes[:10])`` gave a smaller release for 10 of the 640
    analysed queries, and 5 of 10 classes another, without a word (review R41)."""
    import pate_cli
    from tests import SAMPLES

    votes = np.load(SAMPLES / "mnist_250_votes.npy")
    result = pate_cli.analyze(votes[:640], accounting="expected")
    whole = pate_cli.sanitize_analysis(result, votes[:640]).epsilon_after
    assert pate_cli.sanitize_analysis(result, votes).epsilon_after == whole
    for wrong, says in [(votes[:639], r"shape \(639, 10\) cannot be the votes"),
                        (votes[:640, :5], r"\(640, 5\) cannot.*\(640 rows of 10 classes\)"),
                        ("votes.npy", "shape str cannot")]:
        with pytest.raises(ValueError, match=says):
            pate_cli.sanitize_analysis(result, wrong)
    picked = pate_cli.analyze(votes, accounting="expected", query_indices=np.arange(0, 1280, 2))
    with pytest.raises(ValueError, match=r"\(1,279 rows of 10 classes\)"):
        pate_cli.sanitize_analysis(picked, votes[:1278])
