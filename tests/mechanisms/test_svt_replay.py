"""SVT-PATE's replay (math:mechanisms) against a plain loop over queries, on random distances,
scales, cut-offs and thresholds: the windowed search and the runs of unstable queries
must decide exactly what the loop decides."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.decisions import SVT_HALTED, SVT_STABLE, SVT_UNSTABLE
from pate_cli.mechanisms import (
    STREAM_SVT_QUERY,
    STREAM_SVT_THRESHOLD,
    SVTPATE,
    NoiseSource,
)


def loop_outcomes(distance, scale, cutoff, threshold, seed):
    """math:mechanisms, one query at a time, with the replay's noise streams."""
    noise = NoiseSource(seed)
    q = noise.draw(stream=STREAM_SVT_QUERY, kind="laplace", start=0, count=len(distance))
    t = noise.draw(stream=STREAM_SVT_THRESHOLD, kind="laplace", start=0,
                   count=min(cutoff, len(distance)))
    outcomes, met = [], 0
    for i, d in enumerate(distance):
        if met >= cutoff:
            outcomes.append(SVT_HALTED)
        elif d + 2 * scale * q[i, 0] > threshold + scale * t[met, 0]:
            outcomes.append(SVT_STABLE)
        else:
            outcomes.append(SVT_UNSTABLE)
            met += 1
    return np.array(outcomes)


@settings(max_examples=80, deadline=None)
@given(queries=st.integers(1, 4000), top=st.integers(1, 130),
       scale=st.sampled_from([0.05, 0.5, 2.0, 20.0]), cutoff=st.integers(1, 5000),
       threshold=st.floats(1.5, 150), seed=st.integers(0, 3), data=st.integers(0, 2**31))
def test_replay_equals_a_loop_over_queries(queries, top, scale, cutoff, threshold, seed, data):
    rng = np.random.default_rng(data)
    distance = rng.integers(0, top, queries).astype(float)
    plurality = rng.integers(0, 4, queries)
    decisions = SVTPATE(scale=scale, cutoff=cutoff, threshold=threshold).replay_distances(
        distance, plurality, noise=NoiseSource(seed))
    expected = loop_outcomes(distance, scale, cutoff, threshold, seed)
    np.testing.assert_array_equal(decisions.code, expected)
    np.testing.assert_array_equal(decisions.label,
                                  np.where(expected == SVT_STABLE, plurality, -1))


def test_a_long_run_of_unstable_queries_halts_at_the_cutoff():
    distance = np.zeros(50_000)
    decisions = SVTPATE(scale=1.0, cutoff=30_000, threshold=200.0).replay_distances(
        distance, np.zeros(50_000, dtype=np.int64), noise=NoiseSource(0))
    assert np.count_nonzero(decisions.code == SVT_UNSTABLE) == 30_000
    assert np.all(decisions.code[30_000:] == SVT_HALTED)
