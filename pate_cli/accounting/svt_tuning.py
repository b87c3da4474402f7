"""SVT-PATE tuned from the distances to instability ``d`` (math:mechanisms and math:svt):
the cut-offs ``--svt-cutoff auto`` tries, and the note (with a suggested scale) of a run that
answers little; distances read ``DISTANCE_ROWS`` at a time from anything sliced like an array.
Rules: docs/explanation/svt.md#the-cut-offs-tried-and-runs-that-answer-little
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..work_sizes import TABLE_ROWS
from .svt import svt_guarantee, svt_threshold_for

DISTANCE_ROWS = TABLE_ROWS  # distances read at once (512 KB of float64)
FEW_FRACTION = 0.01
MARGIN = 2.0 * math.sqrt(10.0)  # noise-gap standard deviations, in units of lam
_CUTOFF_STEPS = (1, 1.5, 2, 3, 5, 7)
_BISECTION_STEPS = 100


class DistanceColumn(Protocol):
    def __len__(self) -> int: ...

    def __getitem__(self, rows: slice, /) -> np.ndarray: ...


def distance_pieces(distance: DistanceColumn) -> Iterator[np.ndarray]:
    for start in range(0, len(distance), DISTANCE_ROWS):
        yield distance[start : start + DISTANCE_ROWS]


def cutoff_candidates(queries: int) -> list[int]:
    found: list[int] = []
    decade = 1
    while True:
        for step in _CUTOFF_STEPS:
            value = int(round(step * decade))
            if value > max(1, queries):
                return found
            if value not in found:
                found.append(value)
        decade *= 10


def answers_are_few(answered: int, queries: int) -> bool:
    return answered == 0 or answered < FEW_FRACTION * queries


def noiseless_answers(distance: DistanceColumn, threshold: float, cutoff: int) -> int:
    """Answers of the noiseless rule at effective threshold ``threshold``: ``d > threshold``
    answers, otherwise unstable; halts at the cut-off's unstable query."""
    met = answered = 0
    for piece in distance_pieces(distance):
        unstable = piece <= threshold
        counted = np.cumsum(unstable)
        halt = int(np.searchsorted(counted, cutoff - met))  # the c-th unstable, or the end
        answered += int(np.count_nonzero(~unstable[:halt]))
        if halt < piece.size:
            break
        met += int(counted[-1])
    return answered


def largest_threshold_for(distance: DistanceColumn, cutoff: int, goal: int, *,
                          largest: float | None = None) -> float | None:
    """The largest effective threshold whose noiseless run answers ``goal`` queries (to the
    bisection's precision, from below), or None if even 0 does not. ``largest``: the largest
    distance, if known (else a pass finds it)."""
    counts: dict[float, int] = {}  # by floor(threshold): distances are whole (math:svt)

    def enough(threshold: float) -> bool:
        key = math.floor(threshold) if math.isfinite(threshold) else threshold
        if key not in counts:
            counts[key] = noiseless_answers(distance, key, cutoff)
        return counts[key] >= goal

    low = 0.0
    high = (max((float(piece.max()) for piece in distance_pieces(distance)), default=0.0)
            if largest is None else float(largest))
    if not enough(low):
        return None
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        if enough(middle):
            low = middle
        else:
            high = middle
    return low


def suggest_scale(distance: DistanceColumn, *, cutoff: int, threshold: float | None,
                  delta: float, conversion: str, goal: int,
                  largest: float) -> tuple[float, float] | None:
    """``(scale, epsilon)``: the largest scale (rounded down) whose noiseless run answers
    ``goal`` queries with this cut-off and threshold rule (``threshold`` the user's or
    None), and its guarantee (rounded up); None if none does."""
    queries = len(distance)
    effective = largest_threshold_for(distance, cutoff, goal, largest=largest)
    if effective is None:
        return None
    if threshold is None:
        # w(lam) = 1 + 4 lam k with k = log(1/x) independent of lam (math:svt).
        k = (svt_threshold_for(scale=1.0, cutoff=cutoff, queries=queries,
                               delta2=delta / 2.0) - 1.0) / 4.0
        scale = (effective - 1.0) / (4.0 * k + MARGIN)
    else:
        scale = (effective - threshold) / MARGIN
    scale = _three_digits(scale, math.floor)
    if not scale >= 1e-6:
        return None
    try:
        epsilon = svt_guarantee(scale=scale, cutoff=cutoff, queries=queries, delta=delta,
                                conversion=conversion, threshold=threshold).epsilon
    except ValueError:  # a fixed threshold that leaves no delta at this scale
        return None
    return scale, _three_digits(epsilon, math.ceil)


@dataclass(frozen=True)
class SvtOutcome:
    """An SVT-PATE run for :func:`few_answers_note`: threshold ``w`` (``user_threshold`` the
    one given, or None), ``halted_at`` the query the cut-off halted before (or None),
    ``passing`` the queries above ``w``, ``target`` whether the scale came from a target."""

    cutoff: int
    scale: float
    threshold: float
    user_threshold: float | None
    halted_at: int | None
    largest: float
    passing: int
    delta: float
    conversion: str
    target: bool


def few_answers_note(distances: DistanceColumn, answered: int, **outcome: Any) -> str | None:
    """The note of a run that answered few queries (else None): its threshold against the
    largest distance, where the cut-off halted it, and which ``--svt-scale`` /
    ``--target-epsilon`` would answer. ``**outcome``: the fields of :class:`SvtOutcome`."""
    run = SvtOutcome(**outcome)
    cutoff, threshold, largest, passing = run.cutoff, run.threshold, run.largest, run.passing
    user_threshold, halted_at = run.user_threshold, run.halted_at
    queries = len(distances)
    if queries == 0 or not answers_are_few(answered, queries):
        return None
    if passing == 0:
        why = (f"its threshold w = {threshold:.4g} is above the largest distance to "
               f"instability on this file, {largest:g} (half the vote margin, less 1)")
    else:
        why = (f"{passing} queries have a distance to instability above its threshold w = "
               f"{threshold:.4g} (the largest is {largest:g}), but each query at or below "
               "w (after noise) uses one of the cut-off's rounds")
    halt = "" if halted_at is None else f"; the cut-off {cutoff} halted it before query {halted_at}"
    head = f"SVT-PATE answered {answered} of {queries} queries: {why}{halt}"
    goal = 1 if answered == 0 else math.ceil(FEW_FRACTION * queries)
    what = "at least one query" if goal == 1 else f"about {goal} queries"
    found = suggest_scale(distances, cutoff=cutoff, threshold=user_threshold,
                          delta=run.delta, conversion=run.conversion, goal=goal,
                          largest=largest)
    if found is None:
        fix = (f"lower --svt-threshold below {largest:g}" if user_threshold is not None
               else "no --svt-scale does with this cut-off: try a larger --svt-cutoff or "
                    "another mechanism")
        return f"{head}. To answer {what}, {fix} (docs/tutorials/svt-pate.md)"
    suggested, epsilon = found
    if suggested >= run.scale:
        return (f"{head}. The noiseless rule answers {what} at this scale; this seed's noise "
                "did not (try a smaller --svt-scale)")
    knob = (f"--target-epsilon {epsilon:g} (scale {suggested:g})" if run.target else
            f"--svt-scale {suggested:g} (epsilon {epsilon:g}) or --target-epsilon {epsilon:g}")
    return (f"{head}. At cut-off {cutoff}, {knob} would answer {what} (noiseless "
            "estimate with a 2-sd noise margin); SVT-PATE needs vote margins far above its "
            "noise (docs/tutorials/svt-pate.md)")


def _three_digits(value: float, rounding) -> float:
    if not (math.isfinite(value) and value > 0):
        return value
    factor = 10.0 ** (2 - math.floor(math.log10(value)))
    return rounding(value * factor * (1 - 1e-12)) / factor
