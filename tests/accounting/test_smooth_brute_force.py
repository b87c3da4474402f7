"""The threshold step's smooth sensitivity against brute force (math:smooth, "Threshold step
at distance d").

The release charges ``f(x) = sum_i r[m_i(x)]`` (``m_i`` the i-th query's largest count) and
needs, at each distance ``d``, an upper bound on ``max LS(y)`` over every dataset ``y``
within ``d`` teachers of the real one, ``LS(y) = max |f(y) - f(y')|`` over the ``y'`` one
teacher away. On small cases every dataset (one label per teacher and query) is enumerated
and both maxima are taken literally; the release's curves and smooth sensitivity must
reach them. A rule that reads each query at distance exactly ``d`` (and 0 past the count
range) does not: one query's count may move by less while another's moves by ``d``.
"""

from __future__ import annotations

from functools import cache

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting.smooth_sensitivity import (
    SmoothSensitivityAccumulator,
    ThresholdSmoothConstants,
    beta_grid,
    smooth_sensitivity,
)

# Sums of the same terms in another order may differ in the last bits.
RTOL = 1e-12


@cache
def _datasets(teachers: int, classes: int, queries: int) -> tuple[np.ndarray, np.ndarray]:
    """Every dataset: ``(digits, largest)``, each teacher's labels coded in base ``K^Q`` and
    each dataset's largest count per query, ``(N, Q)``."""
    base = classes**queries
    codes = np.arange(base**teachers)
    digits = (codes[:, None] // base ** np.arange(teachers)) % base
    labels = (digits[..., None] // classes ** np.arange(queries)) % classes  # (N, M, Q)
    counts = np.stack([(labels == k).sum(axis=1) for k in range(classes)], axis=-1)
    return digits, counts.max(axis=-1)


def _exact(table: np.ndarray, labels: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(within, largest)``: ``within[d]`` the largest ``LS(y)`` over data within ``d`` of
    ``labels`` (``(M, Q)``), ``d = 0..M``, and the real data's largest counts."""
    teachers, queries = labels.shape
    base = classes**queries
    digits, largest = _datasets(teachers, classes, queries)
    f = table[largest].sum(axis=1)
    codes = np.arange(f.size)
    local = np.zeros(f.size)
    for teacher in range(teachers):  # every neighbour: one teacher's labels replaced
        for value in range(base):
            neighbour = codes + (value - digits[:, teacher]) * base**teacher
            local = np.maximum(local, np.abs(f - f[neighbour]))
    real = int(np.dot(labels @ classes ** np.arange(queries), base ** np.arange(teachers)))
    distance = (digits != digits[real]).sum(axis=1)
    within = np.array([local[distance <= d].max() for d in range(teachers + 1)])
    return within, largest[real]


def _exact_smooth(within: np.ndarray, betas: np.ndarray) -> np.ndarray:
    return np.max(np.exp(-betas[:, None] * np.arange(within.size)) * within, axis=1)


def _accumulator(teachers: int, classes: int, threshold: float, sigma_threshold: float,
                 order: float) -> SmoothSensitivityAccumulator:
    return SmoothSensitivityAccumulator(teachers=teachers, classes=max(classes, 2), sigma=50,
                                        order=order, threshold=threshold,
                                        sigma_threshold=sigma_threshold)


def _exact_distance_rule(selection: ThresholdSmoothConstants, m: np.ndarray) -> np.ndarray:
    """The unsound rule: ``max(ls(m+d), ls(m-d))``, 0 from ``d >= max(m, M-m)`` on."""
    teachers = selection.teachers
    m = m.astype(np.intp)[:, None]
    d = np.arange(teachers)[None, :]
    out = np.maximum(selection.ls_padded[m + teachers + d],
                     selection.ls_padded[m + teachers - d])
    out[d >= np.maximum(m, teachers - m)] = 0.0
    return out


def _check(labels: np.ndarray, classes: int, threshold: float, sigma_threshold: float,
           order: float) -> None:
    """The release's LS[d] and SS_beta reach the exact ones, for the uncapped table and
    for the capped one the run charges."""
    teachers, queries = labels.shape
    acc = _accumulator(teachers, classes, threshold, sigma_threshold, order)
    betas = beta_grid(order)
    for table in (acc.selection.r, np.minimum(acc.selection.r, acc.selection_independent_cost)):
        within, largest = _exact(table, labels, classes)
        ours = acc.selection.curves(largest.astype(np.float64)).sum(axis=0)
        assert np.all(ours * (1 + RTOL) >= within[:teachers])
        assert np.all(ours[-1] * (1 + RTOL) >= within[teachers])  # distance M: all data
        assert np.all(smooth_sensitivity(ours, betas) * (1 + RTOL)
                      >= _exact_smooth(within, betas))
    if not acc.selection_independent:  # the release sums the same curves
        counts = np.stack([(labels == k).sum(axis=0) for k in range(max(classes, 2))], axis=1)
        acc.add(counts.astype(np.float64), weights=np.zeros(queries))
        np.testing.assert_allclose(acc.local_sensitivity(), ours, rtol=RTOL)


# (labels (M, Q), K, T, sigma1, order); the first three: the old rule's smooth sensitivity
# is 1.77, 1.67 and 1.64 times too small
CASES = [
    (np.array([[0, 0], [0, 0], [0, 0], [0, 1], [0, 1], [1, 1]]), 2, 2, 1.0, 5),
    (np.array([[0, 0], [0, 0], [0, 0], [0, 0], [1, 0], [1, 0], [1, 0]]), 2, 3, 1.0, 5),
    (np.array([[0, 0], [0, 0], [0, 0], [0, 0], [1, 0], [1, 0], [1, 1]]), 2, 4, 1.5, 3),
    (np.array([[0, 0, 1], [0, 1, 1], [0, 0, 0], [1, 0, 1], [1, 1, 0]]), 2, 2, 1.0, 5),
    (np.array([[0, 2], [1, 2], [0, 0], [2, 1], [0, 2]]), 3, 2, 1.0, 4),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_release_bounds_the_exact_smooth_sensitivity(case):
    _check(*CASES[case])


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 6), st.data(), st.integers(0, 6), st.sampled_from([0.7, 1.0, 1.5]),
       st.sampled_from([3.0, 5.0, 8.0]))
def test_the_release_bounds_brute_force_anywhere(teachers, data, threshold, sigma_threshold,
                                                 order):
    labels = np.array(data.draw(st.lists(st.lists(st.integers(0, 1), min_size=2, max_size=2),
                                         min_size=teachers, max_size=teachers)))
    _check(labels, 2, min(threshold, teachers), sigma_threshold, order)


@pytest.mark.parametrize("case, shortfall", [(0, 1.77), (1, 1.67), (2, 1.63)])
def test_the_exact_distance_rule_falls_short(case, shortfall):
    """What the brute force guards against: reading each query at distance exactly d."""
    labels, classes, threshold, sigma_threshold, order = CASES[case]
    teachers = labels.shape[0]
    acc = _accumulator(teachers, classes, threshold, sigma_threshold, order)
    within, largest = _exact(acc.selection.r, labels, classes)
    betas = beta_grid(order)
    old = smooth_sensitivity(_exact_distance_rule(acc.selection, largest).sum(axis=0), betas)
    assert np.max(_exact_smooth(within, betas) / old) > shortfall


@pytest.mark.parametrize("case", [0, 1, 2, 4])  # (case 3's curve is 0)
def test_the_smooth_sensitivity_is_never_below_its_maximum_at_50_digits(case):
    """``SS_beta = max_d exp(-beta d) LS[d]`` of the release's own curve, every beta of the
    grid, by mpmath at 50 digits: the release's figure (raised 2^-40 relative) is never
    below it, though ``exp(-beta d)`` and the product each round either way. These curves
    grow faster than ``exp(beta d)`` at first: the maximum lies at some d > 0."""
    labels, classes, threshold, sigma_threshold, order = CASES[case]
    teachers = labels.shape[0]
    acc = _accumulator(teachers, classes, threshold, sigma_threshold, order)
    largest = np.stack([(labels == k).sum(axis=0) for k in range(classes)]).max(axis=0)
    curve = acc.selection.curves(largest.astype(np.float64)).sum(axis=0)
    betas = beta_grid(order)
    ours = smooth_sensitivity(curve, betas)
    with mpmath.workdps(50):
        for beta, figure in zip(betas.tolist(), ours.tolist(), strict=True):
            terms = [mpmath.exp(-mpmath.mpf(beta) * d) * mpmath.mpf(ls)
                     for d, ls in enumerate(curve.tolist())]
            exact = max(terms)
            assert terms.index(exact) > 0
            assert mpmath.mpf(figure) >= exact


def test_the_auditors_two_queries():
    """M = 250, T = 150, sigma1 = 40, order 17, largest counts 200 and 240: 26 teachers
    move them to 226 and 226, where one more teacher moves both by 1, so SS_beta is at
    least ``exp(-26 beta) 2 |r[227] - r[226]|`` (the exact-distance rule gave 1.81e-4)."""
    acc = _accumulator(250, 2, 150, 40.0, 17)
    acc.add(np.array([[200.0, 50.0], [240.0, 10.0]]), weights=np.zeros(2))
    beta = beta_grid(17)[:1]
    r = acc.selection.r
    witness = np.exp(-26 * beta) * 2 * abs(r[227] - r[226])
    assert witness[0] > 2.87e-4
    assert smooth_sensitivity(acc.local_sensitivity(), beta)[0] >= witness[0]
