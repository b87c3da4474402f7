"""Multi-label accounting: the zero-block bound on q against the dense Prop. 7 and 50-digit
arithmetic, and each variant's sensitivity against a brute force over teachers' votes."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.gnmax import log_q_gnmax, rdp_gnmax_data_independent
from pate_cli.accounting.multilabel import (
    rdp_multilabel_data_independent,
    sensitivity_squared,
    tau_sensitivity_squared,
)
from pate_cli.vote_rows import VoteRows
from tests.precision import digits

_digits = digits(50)  # mpmath's precision for this module's tests


def dense_row(sets: np.ndarray, labels: int) -> np.ndarray:
    """The powerset histogram over all 2^L label sets of one query's teacher sets."""
    return np.bincount(sets, minlength=2**labels).astype(np.float64)


@settings(max_examples=60, deadline=None)
@given(labels=st.integers(1, 10), teachers=st.integers(1, 40),
       sigma=st.floats(0.3, 30.0), seed=st.integers(0, 2**32 - 1))
def test_zero_block_equals_dense_prop7(labels, teachers, sigma, seed):
    """Stored observed sets + a block of 2^L - distinct zeros = Prop. 7 on the dense row."""
    rng = np.random.default_rng(seed)
    sets = rng.integers(0, 2**labels, size=(3, teachers))
    dense = np.stack([dense_row(row, labels) for row in sets])
    width = min(teachers, 2**labels)
    stored = []
    for row in sets:
        _, counts = np.unique(row, return_counts=True)
        stored.append(np.pad(counts, (0, width - counts.size)).astype(np.float64))
    # the padding zeros are members of the block kept in the matrix
    got = log_q_gnmax(VoteRows(np.stack(stored), 2**labels - width), sigma=sigma)
    want = log_q_gnmax(dense, sigma=sigma)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


def test_zero_block_against_mpmath_and_the_dropped_block():
    """math:sparse's worked case: counts 300 and 100 of M = 512 over K = 128,256 classes, sigma
    40: Prop. 7 with the zero block gives q = 7.5e-3 (math:index), 50 digits agree; without
    the block (Z = 0) only the runner-up's 2.0e-4."""
    counts = np.array([[300.0, 100.0, 112.0]])  # 112 more votes on a third class
    zeros = 128_256 - 3
    got = log_q_gnmax(VoteRows(counts, zeros), sigma=40.0)[0]
    scale = mpmath.sqrt(2) * 40
    want = mpmath.log(mpmath.ncdf(-200 / scale) + mpmath.ncdf(-188 / scale)
                      + zeros * mpmath.ncdf(-300 / scale))
    assert got == pytest.approx(float(want), rel=1e-12)
    two = log_q_gnmax(VoteRows(np.array([[300.0, 100.0]]), 128_254), sigma=40.0)[0]
    assert math.exp(two) == pytest.approx(7.5e-3, rel=0.01)
    dropped = log_q_gnmax(np.array([[300.0, 100.0]]), sigma=40.0)[0]
    assert dropped == pytest.approx(float(mpmath.log(mpmath.ncdf(-200 / scale))), rel=1e-12)
    assert math.exp(dropped) < math.exp(two) / 30  # the invalid figure math:index warns of


def test_zero_block_cap_uses_every_class():
    """A tie caps at log(1 - 1/K) with K = stored + zero classes (here 2 + 2^40 - 2)."""
    got = log_q_gnmax(VoteRows(np.array([[5.0, 5.0]]), 2.0**40 - 2), sigma=1.0)[0]
    assert got == math.log1p(-2.0**-40)
    with pytest.raises(ValueError, match="zero-vote classes"):
        VoteRows(np.array([[5.0, 5.0]]), -3)


def brute_tau(tau: float, labels: int) -> float:
    """The largest |c(v) - c(v')|^2 over every pair of 0/1 vectors, c = L2 clipping."""
    vectors = np.array(list(itertools.product((0.0, 1.0), repeat=labels)))
    norms = np.sqrt(vectors.sum(axis=1))
    clipped = vectors * np.minimum(1.0, tau / np.maximum(norms, 1e-300))[:, None]
    gaps = clipped[:, None, :] - clipped[None, :, :]
    return float((gaps**2).sum(axis=-1).max())


@settings(max_examples=80, deadline=None)
@given(labels=st.integers(1, 7), tau=st.floats(0.05, 4.0))
def test_tau_sensitivity_is_the_brute_force_maximum(labels, tau):
    assert tau_sensitivity_squared(tau, labels) == pytest.approx(brute_tau(tau, labels),
                                                                 rel=1e-12)


def test_sensitivities_by_hand():
    """binary: L two-count histograms each moved by sqrt 2 -> 2L; tau = 1 over 5 labels:
    two disjoint clipped sets -> 1 + 1 = 2, released on both counts -> 4; tau = 3 over 5
    labels: no clipping, 5 -> 10 = binary; powerset: one vote moved -> 2."""
    assert sensitivity_squared("binary", labels=5) == 10.0
    assert tau_sensitivity_squared(1.0, 5) == 2.0
    assert sensitivity_squared("tau", labels=5, tau=1.0) == 4.0
    assert sensitivity_squared("tau", labels=5, tau=3.0) == 10.0
    assert tau_sensitivity_squared(0.5, 1) == 0.25  # one label: 0 or 0.5
    assert sensitivity_squared("powerset", labels=7) == 2.0
    orders = np.array([2.0, 10.0])
    np.testing.assert_array_equal(
        rdp_multilabel_data_independent("binary", sigma=4.0, orders=orders, labels=3),
        3 * rdp_gnmax_data_independent(sigma=4.0, orders=orders))
    np.testing.assert_allclose(
        rdp_multilabel_data_independent("tau", sigma=4.0, orders=orders, labels=5, tau=1.0),
        orders * 2.0 / 16.0)
    with pytest.raises(ValueError, match="unknown multi-label variant"):
        sensitivity_squared("ternary", labels=2)
