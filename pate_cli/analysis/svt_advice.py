"""SVT-PATE made usable: the cut-off search of ``--svt-cutoff auto`` and the note a run that
answers nothing or few queries gets (MATH.md s.1 and s.8).

Both read the analysed votes only through each query's distance to instability ``d``
(MATH.md s.1), a piece at a time from a :class:`DistanceFile` (the column computed once,
a chunk at a time, into an unnamed temporary file, read back with plain reads: its pages
are the kernel's cache, not this process's memory; computing ``d`` from the votes for
every pass would read the vote file some 20 to 40 times, and keeping the column would
hold 8 bytes per query), so memory holds one piece whatever the number of queries.
:class:`DistanceArray` serves a column already in memory (the tests' hand-made cases) the
same way. Choices made here, where the spec is silent:

* **Few answers**: fewer than 1% of the analysed queries (so always when none is answered).
* **The suggestion** is computed on the noiseless rule: a query is answered when ``d``
  exceeds the threshold ``w`` by a margin of two standard deviations of the noise gap
  (``Laplace(2 lam) - Laplace(lam)`` has standard deviation ``sqrt(10) lam``), unstable
  otherwise, and the run halts at the cut-off's unstable query. The threshold the analysis
  would pick grows linearly in the scale (``w = 1 + 4 lam log(1/x)``, MATH.md s.8, with
  ``x`` fixed by n, c and delta), so the largest scale whose noiseless run answers at least
  ``goal`` queries is ``(w_goal - 1) / (4 log(1/x) + 2 sqrt(10))``, ``w_goal`` the largest
  effective threshold that leaves ``goal`` answers (bisection: the count falls as the
  threshold rises). ``goal`` is 1 for a run that answered nothing, else 1% of the
  queries. The printed scale is rounded down and the target epsilon (the guarantee at
  that scale) rounded up, to 3 significant digits.
* **The bisection** takes 100 steps, each asking whether the noiseless run at the middle
  answers ``goal`` queries. ``d`` is a whole number, so a threshold ``t >= 0`` answers
  what ``floor(t)`` answers: one pass over the distances per distinct ``floor(t)`` (about
  ``log2`` of the largest distance, plus two), each answer kept, gives the very steps, and
  so the very bits, of a pass per step.
* **``--svt-cutoff auto``** tries the cut-offs 1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100,
  ... (about three per decade) up to the number of queries, solves each one's scale for
  the target epsilon, replays each with the run's seed (a pass over the distances each,
  the replay a piece at a time from the carried unstable count), and keeps the one that
  answers the most queries (the smallest on a tie). The search looks at the votes: its
  choice is not part of the reported epsilon (MATH.md s.12 prices such searches; see
  ``--tuning``), and the run says so in a note.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import numpy as np

from ..accounting.svt import (
    svt_guarantee,
    svt_scale_for_epsilon,
    svt_threshold_for,
)
from ..decisions import SVT_UNSTABLE
from ..inputs.rows import rows_read_once
from ..mechanisms import SVTPATE, NoiseSource, distance_to_instability
from ..work_sizes import TABLE_ROWS

# Distances read back at once (512 KB of float64).
DISTANCE_ROWS = TABLE_ROWS


class DistanceArray:
    """Distances to instability held in memory, served as pieces of ``DISTANCE_ROWS``."""

    def __init__(self, distance: np.ndarray):
        self.distance = np.asarray(distance, dtype=np.float64)
        self.size = int(self.distance.shape[0])

    def pieces(self) -> Iterator[np.ndarray]:
        for start in range(0, self.size, DISTANCE_ROWS):
            yield self.distance[start : start + DISTANCE_ROWS]

    def whole(self) -> bool:
        """Whether every distance is a whole number (or infinite)."""
        return bool(np.all(np.floor(self.distance) == self.distance))


class DistanceFile:
    """The distances of the analysed queries ``positions[:queries]`` of ``votes``,
    computed from ``chunk_size`` rows at a time into a temporary file on the first call
    of :meth:`pieces` (never if no pass asks for them), read back from it afterwards.
    A context manager: the file is closed (and so deleted) on exit."""

    def __init__(self, votes, positions, queries: int, chunk_size: int):
        self.votes, self.positions = votes, positions
        self.size, self.chunk_size = int(queries), int(chunk_size)
        self._file: IO[bytes] | None = None

    def __enter__(self) -> DistanceFile:
        return self

    def __exit__(self, *_) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def whole(self) -> bool:
        """Always: ``max(0, ceil(m/2) - 1)`` is a whole number (MATH.md s.1)."""
        return True

    def pieces(self) -> Iterator[np.ndarray]:
        """The distances in analysed order, at most ``DISTANCE_ROWS`` at a time."""
        if self._file is None:
            self._write()
        assert self._file is not None
        for start in range(0, self.size, DISTANCE_ROWS):
            count = min(DISTANCE_ROWS, self.size - start)
            self._file.seek(8 * start)
            piece = np.empty(count)
            read = self._file.readinto(memoryview(piece).cast("B"))
            if read != 8 * count:
                raise OSError(f"the temporary file of SVT distances ended after "
                              f"{start + read // 8} of {self.size} values")
            yield piece

    def _write(self) -> None:
        self._file = written = tempfile.TemporaryFile(prefix="pate-svt-distances-")
        for start in range(0, self.size, self.chunk_size):
            stop = min(self.size, start + self.chunk_size)
            block = rows_read_once(self.votes, self.positions, start, stop)
            written.write(np.ascontiguousarray(distance_to_instability(block),
                                               dtype=np.float64).tobytes())
        written.flush()


Distances = DistanceArray | DistanceFile

FEW_FRACTION = 0.01
MARGIN = 2.0 * math.sqrt(10.0)  # noise-gap standard deviations, in units of lam
_CUTOFF_STEPS = (1, 1.5, 2, 3, 5, 7)
_BISECTION_STEPS = 100


@dataclass(frozen=True)
class CutoffSearch:
    """What ``--svt-cutoff auto`` tried: ``(cutoff, scale, answered)`` per cut-off."""

    chosen: int
    tried: tuple[tuple[int, float, int], ...]


def cutoff_candidates(queries: int) -> list[int]:
    """1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, ... up to ``queries`` (at least 1)."""
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


def search_cutoff(mechanism: SVTPATE, distances: Distances, *, delta: float, conversion: str,
                  seed: int, salt: int) -> CutoffSearch:
    """The cut-off whose seeded replay answers the most queries at ``target_epsilon``.

    Each candidate's scale is solved for the target as a fixed cut-off's is; a candidate
    no scale in the solver's range serves is skipped. ``ValueError`` if none is left.
    """
    queries = distances.size
    tried = []
    for cutoff in cutoff_candidates(queries):
        try:
            scale = svt_scale_for_epsilon(epsilon=mechanism.target_epsilon, cutoff=cutoff,
                                          queries=queries, delta=delta, conversion=conversion,
                                          threshold=mechanism.threshold)
        except ValueError:
            continue
        threshold = (mechanism.threshold if mechanism.threshold is not None else
                     svt_guarantee(scale=scale, cutoff=cutoff, queries=queries, delta=delta,
                                   conversion=conversion).threshold)
        candidate = SVTPATE(scale=scale, cutoff=cutoff, threshold=threshold)
        tried.append((cutoff, scale, replayed_answers(candidate, distances,
                                                      NoiseSource(seed, salt=salt))))
    if not tried:
        raise ValueError(f"no SVT cut-off reaches target epsilon "
                         f"{mechanism.target_epsilon:g} with a scale in [1e-6, 1e9]")
    best = max(answered for _, _, answered in tried)
    chosen = next(cutoff for cutoff, _, answered in tried if answered == best)
    return CutoffSearch(chosen=chosen, tried=tuple(tried))


def replayed_answers(mechanism: SVTPATE, distances: Distances, noise: NoiseSource) -> int:
    """The answers of ``mechanism``'s seeded replay over ``distances``, a piece at a time
    (each piece from the unstable count of those before it; the labels are not formed)."""
    start = met = answered = 0
    for piece in distances.pieces():
        if met >= int(mechanism.cutoff):  # halted: nothing more is answered
            break
        made = mechanism.replay_distances(piece, np.zeros(piece.size, dtype=np.int64),
                                          noise=noise, start=start, met=met)
        answered += int(np.count_nonzero(made.answered))
        met += int(np.count_nonzero(made.code == SVT_UNSTABLE))
        start += piece.size
    return answered


def search_note(search: CutoffSearch) -> str:
    """The note of an ``--svt-cutoff auto`` run: what it chose, and that epsilon excludes
    the choice."""
    answered = dict((cutoff, count) for cutoff, _, count in search.tried)
    return (f"--svt-cutoff auto chose cut-off {search.chosen} ({answered[search.chosen]} "
            f"answers; {len(search.tried)} cut-offs tried, 1 to {search.tried[-1][0]}) by "
            "replaying these votes; epsilon does not include the cost of that choice "
            "(see --tuning)")


def answers_are_few(answered: int, queries: int) -> bool:
    """Fewer than 1% of the queries answered (always true for none)."""
    return answered == 0 or answered < FEW_FRACTION * queries


def noiseless_answers(distance: np.ndarray | Distances, threshold: float,
                      cutoff: int) -> int:
    """Answers of the noiseless rule at effective threshold ``threshold``: ``d >
    threshold`` answers, otherwise unstable; halts at the cut-off's unstable query (a
    piece at a time, the unstable count carried)."""
    met = answered = 0
    for piece in _distances(distance).pieces():
        unstable = piece <= threshold
        counted = np.cumsum(unstable)
        halt = int(np.searchsorted(counted, cutoff - met))  # the c-th unstable, or the end
        answered += int(np.count_nonzero(~unstable[:halt]))
        if halt < piece.size:
            break
        met += int(counted[-1]) if piece.size else 0
    return answered


def largest_distance(distance: np.ndarray | Distances) -> float:
    """The largest distance to instability (0 for no query)."""
    return max((float(piece.max()) for piece in _distances(distance).pieces() if piece.size),
               default=0.0)


def largest_threshold_for(distance: np.ndarray | Distances, cutoff: int, goal: int, *,
                          largest: float | None = None) -> float | None:
    """The largest effective threshold whose noiseless run answers ``goal`` queries (to
    the bisection's precision, from below), or None if even threshold 0 does not.
    ``largest``: the largest distance, if known (else a pass finds it).

    With whole-number distances (always, from votes) each step's count is that at
    ``floor(middle)``, counted once per distinct floor (the module's docstring)."""
    source = _distances(distance)
    whole = source.whole()
    counts: dict[float, int] = {}

    def enough(threshold: float) -> bool:
        key = math.floor(threshold) if whole and math.isfinite(threshold) else threshold
        if key not in counts:
            counts[key] = noiseless_answers(source, key, cutoff)
        return counts[key] >= goal

    low = 0.0
    high = largest_distance(source) if largest is None else float(largest)
    if not enough(low):
        return None
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        if enough(middle):
            low = middle
        else:
            high = middle
    return low


def _distances(distance: np.ndarray | Distances) -> Distances:
    return distance if isinstance(distance, (DistanceArray, DistanceFile)) else DistanceArray(
        distance)


@dataclass(frozen=True)
class Suggestion:
    """A scale (and its epsilon at this cut-off) whose noiseless run answers ``goal``."""

    goal: int
    scale: float
    epsilon: float


def suggest_scale(mechanism: SVTPATE, distances: Distances, *, delta: float, conversion: str,
                  goal: int, largest: float | None = None) -> Suggestion | None:
    """The largest scale (rounded down) whose noiseless run answers ``goal`` queries with
    this cut-off (and threshold rule), and its guarantee (rounded up); None if none does.
    ``largest``: the largest distance, if known."""
    queries = distances.size
    effective = largest_threshold_for(distances, int(mechanism.cutoff), goal, largest=largest)
    if effective is None:
        return None
    if mechanism.threshold is None:
        # w(lam) = 1 + 4 lam k with k = log(1/x) independent of lam (MATH.md s.8).
        k = (svt_threshold_for(scale=1.0, cutoff=mechanism.cutoff, queries=queries,
                               delta2=delta / 2.0) - 1.0) / 4.0
        scale = (effective - 1.0) / (4.0 * k + MARGIN)
    else:
        scale = (effective - mechanism.threshold) / MARGIN
    scale = _round_down(scale)
    if not scale >= 1e-6:
        return None
    try:
        epsilon = svt_guarantee(scale=scale, cutoff=mechanism.cutoff, queries=queries,
                                delta=delta, conversion=conversion,
                                threshold=mechanism.threshold).epsilon
    except ValueError:  # a fixed threshold that leaves no delta at this scale
        return None
    return Suggestion(goal=goal, scale=scale, epsilon=_round_up(epsilon))


def few_answers_note(mechanism: SVTPATE, distances: Distances, answered: int, *,
                     threshold: float, halted_at: int | None, largest: float, passing: int,
                     delta: float, conversion: str, target: bool) -> str | None:
    """The one note of a run that answered nothing or few queries (None otherwise): the
    threshold ``threshold`` used against the largest distance to instability
    (``largest``; ``passing`` queries have a larger distance than ``threshold``), where
    the cut-off halted the run (``halted_at``, None if it did not), and which
    ``--svt-scale`` / ``--target-epsilon`` would answer (``mechanism.threshold`` is the
    user's fixed threshold or None)."""
    queries = distances.size
    if queries == 0 or not answers_are_few(answered, queries):
        return None
    if passing == 0:
        why = (f"its threshold w = {threshold:.4g} is above the largest distance to "
               f"instability on this file, {largest:g} (half the vote margin, less 1)")
    else:
        why = (f"{passing} queries have a distance to instability above its threshold w = "
               f"{threshold:.4g} (the largest is {largest:g}), but each query at or below "
               "w (after noise) uses one of the cut-off's rounds")
    halt = ("" if halted_at is None else
            f"; the cut-off {mechanism.cutoff} halted it before query {halted_at}")
    head = f"SVT-PATE answered {answered} of {queries} queries: {why}{halt}"
    goal = 1 if answered == 0 else math.ceil(FEW_FRACTION * queries)
    what = "at least one query" if goal == 1 else f"about {goal} queries"
    found = suggest_scale(mechanism, distances, delta=delta, conversion=conversion, goal=goal,
                          largest=largest)
    if found is None:
        fix = (f"lower --svt-threshold below {largest:g}" if mechanism.threshold is not None
               else "no --svt-scale does with this cut-off: try a larger --svt-cutoff or "
                    "another mechanism")
        return f"{head}. To answer {what}, {fix} (README: SVT-PATE)"
    if found.scale >= mechanism.scale:
        return (f"{head}. The noiseless rule answers {what} at this scale; this seed's noise "
                "did not (try a smaller --svt-scale)")
    knob = (f"--target-epsilon {found.epsilon:g} (scale {found.scale:g})" if target else
            f"--svt-scale {found.scale:g} (epsilon {found.epsilon:g}) or --target-epsilon "
            f"{found.epsilon:g}")
    return (f"{head}. At cut-off {mechanism.cutoff}, {knob} would answer {what} (noiseless "
            "estimate with a 2-sd noise margin); SVT-PATE needs vote margins far above its "
            "noise (README: SVT-PATE)")


def _round_down(value: float) -> float:
    """``value`` rounded down to 3 significant digits (the suggested scale)."""
    return _three_digits(value, math.floor)


def _round_up(value: float) -> float:
    """``value`` rounded up to 3 significant digits (the epsilon at that scale)."""
    return _three_digits(value, math.ceil)


def _three_digits(value: float, rounding) -> float:
    if not (math.isfinite(value) and value > 0):
        return value
    factor = 10.0 ** (2 - math.floor(math.log10(value)))
    return rounding(value * factor * (1 - 1e-12)) / factor
