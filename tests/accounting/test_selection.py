"""What Confident-GNMax settings select per bin of plurality counts
(``accounting.selection``, the 2018 paper's Figure 5 left): bins, counts, expected answers
and the answer step's mean RDP against a hand-derived case (mpmath's normal CDF), the
per-row reference of ``tests.scalar_reference`` and brute force over random votes; the
same bins whatever the chunks the votes are read in."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.accounting import selection
from pate_cli.accounting.selection import SelectionBins, selection_bins
from tests import scalar_reference


def _reference_cost(rows, sigma: float, order: float) -> np.ndarray:
    return np.array([scalar_reference.rdp_gnmax(scalar_reference.log_q_gnmax(row, sigma),
                                                sigma, order) for row in rows])


def test_a_hand_derived_case():
    """M = 10, pluralities 10, 6, 5, 9 in about 3 bins: from the lowest count 5, width
    ceil(6 / 3) = 2, edges 4.5, 6.5, 8.5, 10.5; the middle bin is empty (cost NaN)."""
    votes = np.array([[10, 0], [6, 4], [5, 5], [9, 1]])
    data = selection_bins(votes, teachers=10, params=[(7.0, 2.0)], sigma=2.0, order=4.0,
                          bins=3)
    assert isinstance(data, SelectionBins)
    np.testing.assert_array_equal(data.edges, [4.5, 6.5, 8.5, 10.5])
    np.testing.assert_array_equal(data.left, [4.5, 6.5, 8.5])
    np.testing.assert_array_equal(data.right, [6.5, 8.5, 10.5])
    np.testing.assert_array_equal(data.center, [5.5, 7.5, 9.5])
    np.testing.assert_array_equal(data.queries, [2, 0, 2])
    with mpmath.workdps(40):
        def pr(plurality):  # Pr[plurality + N(0, 2^2) >= 7]
            return mpmath.ncdf((plurality - 7) / mpmath.mpf(2))
        expected = [float(pr(6) + pr(5)), 0.0, float(pr(10) + pr(9))]
    assert data.answered.shape == (1, 3)
    np.testing.assert_allclose(data.answered[0], expected, rtol=1e-14)
    rdp = _reference_cost(votes, 2.0, 4.0)
    assert math.isnan(data.cost[1])
    np.testing.assert_allclose(data.cost[[0, 2]], [(rdp[1] + rdp[2]) / 2,
                                                   (rdp[0] + rdp[3]) / 2], rtol=1e-12)


def test_no_queries():
    data = selection_bins(np.zeros((0, 3)), teachers=4, params=[(3.0, 1.0)], sigma=1.0,
                          order=2.0, bins=5)
    assert data.queries.sum() == 0 and data.edges[-1] == 4.5
    assert np.isnan(data.cost).all()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), queries=st.integers(1, 40),
       classes=st.integers(2, 6), teachers=st.integers(1, 300), bins=st.integers(1, 30),
       chunk=st.integers(1, 50),
       params=st.lists(st.tuples(st.floats(0, 300), st.floats(0.5, 200)), min_size=1,
                       max_size=3),
       sigma=st.floats(1.0, 100.0), order=st.floats(1.5, 100.0))
def test_bins_by_brute_force(seed, queries, classes, teachers, bins, chunk, params, sigma,
                             order):
    """Every query in exactly one bin (its plurality count inside ``[left, right)``), the
    bins of one integer width ending at M + 1/2, at most about ``bins`` of them, and each
    bin's counts, expected answers (scipy's normal survival function) and mean cost (the
    per-row reference) those of its queries; the same numbers read in chunks of any
    number of rows."""
    from scipy.stats import norm

    rng = np.random.default_rng(seed)
    votes = rng.multinomial(teachers, rng.dirichlet(np.ones(classes)), size=queries)
    data = selection_bins(votes, teachers=teachers, params=params, sigma=sigma,
                          order=order, bins=bins)
    widths = np.diff(data.edges)
    assert data.edges[-1] == teachers + 0.5 and np.all(widths == widths[0])
    assert widths[0] == int(widths[0]) >= 1 and len(widths) <= bins
    plurality = votes.max(axis=1)
    assert data.edges[0] <= plurality.min()
    inside = (plurality[:, None] >= data.left) & (plurality[:, None] < data.right)
    assert np.all(inside.sum(axis=1) == 1)
    np.testing.assert_array_equal(data.queries, inside.sum(axis=0))
    for number, (threshold, sigma_threshold) in enumerate(params):
        pr = norm.sf((threshold - plurality) / sigma_threshold)
        np.testing.assert_allclose(data.answered[number], pr @ inside, rtol=1e-9,
                                   atol=1e-300)
    rdp = _reference_cost(votes, sigma, order)
    occupied = inside.sum(axis=0) > 0
    np.testing.assert_allclose(data.cost[occupied], (rdp @ inside)[occupied]
                               / inside.sum(axis=0)[occupied], rtol=1e-9, atol=1e-300)
    assert np.isnan(data.cost[~occupied]).all()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(selection, "READ_VALUES", chunk * classes)
        chunked = selection_bins(votes, teachers=teachers, params=params, sigma=sigma,
                                 order=order, bins=bins)
    np.testing.assert_array_equal(chunked.edges, data.edges)
    np.testing.assert_array_equal(chunked.queries, data.queries)
    np.testing.assert_allclose(chunked.answered, data.answered, rtol=1e-12, atol=0)
    np.testing.assert_allclose(chunked.cost, data.cost, rtol=1e-12, atol=0)


def test_selection_bins_are_counted_a_chunk_at_a_time(tmp_path, monkeypatch):
    """pate-plot selection and the report's figure read the votes in chunks: a memory
    map of soft votes gives the same bins as the array at once (counts exact, sums
    within the tolerance between algorithms)."""
    rng = np.random.default_rng(27)
    soft = rng.dirichlet(np.full(10, 0.3), size=3000) * 250
    np.save(tmp_path / "votes.npy", soft.astype(np.float32))
    votes = np.load(tmp_path / "votes.npy", mmap_mode="r")
    options = dict(teachers=250.0, params=[(200.0, 150.0), (150.0, 100.0)], sigma=40.0,
                   order=8.0)
    whole = selection_bins(np.asarray(votes), **options)
    monkeypatch.setattr(selection, "READ_VALUES", 70)  # 7 rows a chunk
    chunked = selection_bins(votes, **options)
    np.testing.assert_array_equal(chunked.queries, whole.queries)
    np.testing.assert_allclose(chunked.answered, whole.answered, rtol=1e-12, atol=0)
    np.testing.assert_allclose(chunked.cost, whole.cost, rtol=1e-12, atol=0)
