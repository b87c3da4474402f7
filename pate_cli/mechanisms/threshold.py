"""The noisy threshold (selection step) that Confident, Interactive and Confident-exponential
share: its parameters' checks and its seeded replay (math:mechanisms and math:threshold)."""

from __future__ import annotations

import numpy as np

from .domains import GAUSSIAN_SCALE, finite, noise_scale
from .noise import STREAM_SELECTION, NoiseSource

# The threshold step's curve: math:screening's exact one, or math:independent's Gaussian
SCREENINGS = ("exact", "gaussian")


def check_threshold_parameters(mechanism) -> None:
    """``screening`` known, T finite, sigma1 in the Gaussian domain (frozen fields set)."""
    if mechanism.screening not in SCREENINGS:
        raise ValueError(f"screening must be one of {', '.join(SCREENINGS)}, got "
                         f"{mechanism.screening!r}")
    object.__setattr__(mechanism, "threshold", finite(mechanism.threshold, "threshold"))
    object.__setattr__(mechanism, "sigma_threshold",
                       noise_scale(mechanism.sigma_threshold, "sigma threshold", GAUSSIAN_SCALE))


def passes_threshold(mechanism, votes, *, noise: NoiseSource, start: int,
                     student: np.ndarray | None = None) -> np.ndarray:
    """Which queries pass ``selection_counts + N(0, sigma1^2) >= T`` (one draw per query from
    the selection stream, keyed by query index)."""
    count = votes.shape[0]
    selection = noise.draw(stream=STREAM_SELECTION, kind="normal", start=start, count=count)
    return (mechanism.selection_counts(votes, student)
            + mechanism.sigma_threshold * selection[:, 0] >= mechanism.threshold)
