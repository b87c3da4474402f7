"""Smooth sensitivity on sparse (token) votes: the walks of math:smooth over rows whose
zero-vote classes are one block (math:sparse), against the dense rows and hand-derived states."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pate_cli.accounting.gnmax import log_q_gnmax
from pate_cli.accounting.smooth_sensitivity import (
    GNMaxSmoothConstants,
    SmoothSensitivityAccumulator,
    local_sensitivity_at,
    local_sensitivity_gnmax,
    sanitize_confident,
    sanitize_gnmax,
)
from pate_cli.accounting.threshold import log_pr_answered
from pate_cli.vote_rows import SparseVotes
from tests.synthetic import TOLERANCE, as_sparse


def sparse_rows(rng: np.random.Generator, queries: int, classes: int, teachers: int,
                stored: int) -> np.ndarray:
    """Dense integer rows with at most ``stored`` non-zero classes: unanimous rows (one
    stored class), rows with a tie at the top, and Dirichlet-spread rows."""
    dense = np.zeros((queries, classes))
    for row in range(queries):
        kind = rng.integers(3)
        if kind == 0 or classes < 2:
            dense[row, rng.integers(classes)] = teachers
        elif kind == 1 and teachers >= 2 and (classes > 2 or teachers % 2 == 0):
            # a tie at the top; an odd vote goes to a third class
            chosen = rng.choice(classes, size=min(3, classes), replace=False)
            dense[row, chosen[:2]] = teachers // 2
            if teachers % 2:
                dense[row, chosen[2]] = 1
        else:
            chosen = rng.choice(classes, size=min(stored, classes), replace=False)
            agreement = rng.uniform(0.05, 1.0)
            p = rng.dirichlet(np.full(chosen.size, 0.3)) * (1 - agreement)
            p[0] += agreement
            dense[row, chosen] = rng.multinomial(teachers, p / p.sum())
    return dense


def _assert_same_curves(sparse: np.ndarray, dense: np.ndarray) -> None:
    """Within the stated 1e-12 of each value, or of its row's largest value: the walk's
    late steps are differences of values two to three orders larger, so their rounding is
    absolute (measured: 1.1e-16 at 3.5e-5 in a row of 1.1e-2, 3e-12 relative)."""
    largest = np.max(np.abs(dense), axis=-1, keepdims=True)
    assert np.all(np.abs(sparse - dense) <= TOLERANCE * np.maximum(np.abs(dense), largest)
                  ), np.max(np.abs(sparse - dense) / np.maximum(np.abs(dense), largest))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1), classes=st.sampled_from([2, 3, 7, 40, 400, 3000]),
       stored=st.integers(1, 10), teachers=st.sampled_from([3, 20, 100, 400]),
       relative_sigma=st.sampled_from([0.5, 2.0, 10.0]),
       order=st.sampled_from([2.0, 5.5, 14.0, 30.0]))
def test_the_sparse_walk_equals_the_dense_walk(seed, classes, stored, teachers,
                                               relative_sigma, order):
    """Local sensitivity at every distance d = 0..M-1 of random sparse rows (one stored
    class, ties, spread rows) equals the dense walk's within 1e-12 relative."""
    rng = np.random.default_rng(seed)
    dense = sparse_rows(rng, 8, classes, teachers, stored)
    sigma = relative_sigma * max(1.0, teachers / 100)
    constants = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=classes)
    rows = as_sparse(dense)[0:8]
    assert np.array_equal(rows.dense(), dense)
    _assert_same_curves(
        local_sensitivity_gnmax(rows, teachers=teachers, sigma=sigma, order=order,
                                constants=constants),
        local_sensitivity_gnmax(dense, teachers=teachers, sigma=sigma, order=order,
                                constants=constants))


def test_every_kind_of_walk_is_compared():
    """The rows above take left walks, right walks (from one stored class too: the
    runner-up then comes out of the zero block) and plateaus; a fixed set shows it."""
    rng = np.random.default_rng(4)
    teachers, classes, sigma, order = 100, 3000, 3.0, 14.0
    dense = sparse_rows(rng, 300, classes, teachers, 6)
    c = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=classes)
    log_q = log_q_gnmax(dense, sigma=sigma)
    single = np.count_nonzero(dense, axis=1) == 1
    assert np.any(log_q > c.log_q0) and np.any((log_q < c.log_q1) & single)
    assert np.any((log_q >= c.log_q1) & (log_q <= c.log_q0))
    fast = local_sensitivity_gnmax(as_sparse(dense)[0:300], teachers=teachers, sigma=sigma,
                                   order=order, constants=c)
    dense_curves = local_sensitivity_gnmax(dense, teachers=teachers, sigma=sigma, order=order,
                                           constants=c)
    _assert_same_curves(fast, dense_curves)
    # the single-class rows' right walks deviate from the plateau for several steps
    assert np.all(fast[single & (log_q < c.log_q1)][:, 1] != c.plateau)


def _mp_log_q(counts: list[int], zeros: int, sigma: float) -> float:
    """Prop. 7 (math:gnmax and math:sparse) at 60 digits: stored counts, then ``zeros`` classes of
    count 0; the plurality is the first largest count; capped at log(1 - 1/K)."""
    with mpmath.workdps(60):
        scale = mpmath.sqrt(2) * mpmath.mpf(sigma)
        top = max(counts)
        leader = counts.index(top)
        total = mpmath.fsum(mpmath.ncdf(-(top - n) / scale)
                            for j, n in enumerate(counts) if j != leader)
        total += zeros * mpmath.ncdf(-top / scale)
        classes = len(counts) + zeros
        return float(min(mpmath.log(total), mpmath.log(1 - mpmath.mpf(1) / classes)))


@pytest.mark.parametrize("vocabulary", [50, 32_000, 2**40])
def test_a_single_stored_class_walks_right_into_the_zero_block(vocabulary):
    """A unanimous row [M] over K classes: after d right steps the state is M - d, d and
    K - 2 zeros (the runner-up taken out of the zero block), its log q by hand at 60
    digits; the walk's entries are local_sensitivity_at of those states, then the plateau
    once log q reaches log q1 (math:smooth, Algorithm 4). With K = 2^40 no dense row could
    be formed."""
    teachers, sigma, order = 60, 4.0, 10.0
    c = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=vocabulary)
    votes = SparseVotes(np.array([0, 1]), np.array([17]), np.array([float(teachers)]),
                        vocabulary, 1)
    curve = local_sensitivity_gnmax(votes[0:1], teachers=teachers, sigma=sigma, order=order,
                                    constants=c)[0]
    states = []
    for d in range(teachers):
        states.append(_mp_log_q([teachers - d, d], vocabulary - 2, sigma))
        if states[-1] >= c.log_q1:
            break
    assert len(states) > 3 and states[0] < c.log_q1
    expected = np.full(teachers, c.plateau)
    expected[: len(states)] = local_sensitivity_at(np.array(states), constants=c)
    np.testing.assert_allclose(curve, expected, rtol=1e-11, atol=1e-300)


def test_the_left_walk_never_drains_the_zero_block():
    """[9, 4, 2, 2] (stored in class order 2, 9, 4, 2) over K = 300, sigma 2, order 3:
    q is above q0, so the walk goes left, moving one vote at a time from the top of the
    rest to the plurality while the 296 zero classes keep 0, until log q <= log q0; by
    hand: the states' log q at 60 digits (math:smooth, Algorithm 5)."""
    teachers, sigma, order, classes = 17, 2.0, 3.0, 300
    c = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=classes)
    votes = SparseVotes(np.array([0, 4]), np.array([3, 9, 11, 200]),
                        np.array([2.0, 9.0, 4.0, 2.0]), classes, 4)
    top, rest = 9, [4, 2, 2]
    states = [_mp_log_q([top] + rest, classes - 4, sigma)]
    while states[-1] > c.log_q0 and rest[0] > 0:
        top += 1
        rest[0] -= 1
        rest.sort(reverse=True)
        states.append(_mp_log_q([top] + rest, classes - 4, sigma))
    assert len(states) >= 3 and rest[0] > 0  # stopped by log q <= log q0, votes left
    expected = np.full(teachers, c.plateau)
    expected[: len(states)] = local_sensitivity_at(np.array(states), constants=c)
    assert np.all(expected[: len(states)] > 0.1)
    curve = local_sensitivity_gnmax(votes[0:1], teachers=teachers, sigma=sigma, order=order,
                                    constants=c)[0]
    np.testing.assert_allclose(curve, expected, rtol=1e-11, atol=1e-300)


@pytest.mark.parametrize("chunk_size", [7, 64, None])
def test_the_sparse_release_equals_the_dense_one(chunk_size):
    """sanitize_confident and sanitize_gnmax on SparseVotes, read in chunks of 7, 64 or the
    default rows, against the dense rows: every figure within 1e-12 relative."""
    rng = np.random.default_rng(9)
    teachers, classes = 50, 700
    dense = sparse_rows(rng, 400, classes, teachers, 5)
    votes = as_sparse(dense)
    size = {} if chunk_size is None else {"chunk_size": chunk_size}
    weights = np.exp(log_pr_answered(dense.max(axis=1), threshold=35, sigma_threshold=20))
    confident = dict(teachers=teachers, threshold=35, sigma_threshold=20, sigma=6, order=5,
                     delta=1e-5, weights=weights, release_noise=0.3, report_every=150)
    gnmax = dict(teachers=teachers, sigma=4, order=5, delta=1e-5, release_noise=-1.1)
    for run, options in ((sanitize_confident, confident), (sanitize_gnmax, gnmax)):
        sparse_report = run(votes, **options, **size)
        dense_report = run(dense, **options)
        assert not sparse_report.answer_data_independent
        assert sparse_report.smooth_sensitivity > 0
        points = sparse_report.checkpoints or (sparse_report,)
        for mine, theirs in zip(points, dense_report.checkpoints or (dense_report,),
                                strict=True):
            for key in ("beta", "smooth_sensitivity", "sigma_ss", "epsilon_before",
                        "epsilon_after", "noise_std", "sanitized_epsilon", "rdp_cumulative",
                        "answered"):
                assert getattr(mine, key) == pytest.approx(getattr(theirs, key),
                                                           rel=TOLERANCE), key


def test_the_accumulator_takes_sparse_chunks_of_a_vast_vocabulary():
    """K = 2^50 (no dense row could exist): the unanimous check and the walks run on the
    stored counts alone; chunks added one by one give the figures within 1e-12 of one
    chunk."""
    rng = np.random.default_rng(2)
    teachers, classes = 80, 2**50
    counts = sparse_rows(rng, 200, 12, teachers, 4)
    matrix = sp.csr_matrix(counts)
    votes = SparseVotes(matrix.indptr, matrix.indices.astype(np.int64) * 10**12, matrix.data,
                        classes, int(np.diff(matrix.indptr).max()))
    whole = SmoothSensitivityAccumulator(teachers=teachers, classes=classes, sigma=5,
                                         order=6, threshold=50, sigma_threshold=25)
    parts = SmoothSensitivityAccumulator(teachers=teachers, classes=classes, sigma=5,
                                         order=6, threshold=50, sigma_threshold=25)
    weights = rng.uniform(0, 1, 200)
    whole.add(votes[0:200], weights=weights)
    for lo in range(0, 200, 13):
        parts.add(votes[lo : lo + 13], weights=weights[lo : lo + 13])
    assert not whole.answer_independent
    np.testing.assert_allclose(parts.local_sensitivity(), whole.local_sensitivity(),
                               rtol=TOLERANCE)
    assert math.isclose(parts.rdp_cumulative, whole.rdp_cumulative, rel_tol=TOLERANCE)
    assert np.all(whole.local_sensitivity() > 0)
