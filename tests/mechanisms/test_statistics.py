"""Vote statistics the mechanisms' replays compare (math:mechanisms)."""

from __future__ import annotations

import numpy as np

from pate_cli.mechanisms import distance_to_instability


def test_distance_to_instability():
    votes = np.array([[10, 0, 0], [5, 5, 0], [6, 4, 0], [7, 4, 0], [9, 1, 0]], dtype=float)
    np.testing.assert_array_equal(distance_to_instability(votes), [4, 0, 0, 1, 3])
