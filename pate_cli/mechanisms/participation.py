"""Weighted and participation histograms of Individualized PATE (math:individualized).

The vote histograms the individualized variants aggregate: weighted counts (weighting,
paper Definition 7) and the vanishing variant's participation schedule (who votes in each
query, drawn from the seed with the package's one seeding scheme,
``noise.generator``) and its rescaled histogram (paper Appendix B, Algorithm 3); both as
rows a pass reads a slice at a time (:class:`HistogramRows`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..inputs.predicted_votes import PredictedVotes
from ..numerics import whole
from .noise import NOISE_BLOCK, STREAM_PARTICIPATION, generator

# Step of the per-query offset of the systematic sample inside a block (golden ratio
# conjugate): the offsets of consecutive queries are a Kronecker sequence, so within a
# block every teacher takes part in a fraction s_i of the queries up to O(log n / n).
_ROTATION = (math.sqrt(5.0) - 1.0) / 2.0


def weighted_histogram(predictions: np.ndarray, weights: np.ndarray | None = None, *,
                       classes: int) -> np.ndarray:
    """Weighted vote counts ``n_j = sum_i w_i [t_i = j]`` (paper Definition 7, eq. 8).

    ``predictions``: class ids, shape ``(queries, teachers)``, ``-1`` for a teacher that
    did not vote. ``weights``: ``None`` (plain counts), per teacher ``(teachers,)`` or per
    query and teacher ``(queries, teachers)``. One ``bincount`` over offset indices
    ``row * classes + class``. Returns float64 ``(queries, classes)``.
    """
    predictions = _predictions(predictions, classes)
    queries, teachers = predictions.shape
    voted = predictions >= 0
    flat = (np.arange(queries, dtype=np.int64)[:, None] * classes + predictions)[voted]
    values = None
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape not in ((teachers,), (queries, teachers)):
            raise ValueError(f"weights must have shape ({teachers},) or "
                             f"({queries}, {teachers}), got {weights.shape}")
        if not np.all(np.isfinite(weights)):
            raise ValueError("weights must be finite")
        values = np.broadcast_to(weights, predictions.shape)[voted]
    counts = np.bincount(flat, weights=values, minlength=queries * classes)
    return counts.reshape(queries, classes).astype(np.float64, copy=False)


def vanishing_participation(frequencies: np.ndarray, *, seed: int, count: int,
                            start: int = 0) -> np.ndarray:
    """Which teachers take part in each query (vanishing, math:individualized, Appendix B).

    ``frequencies``: ``s_i`` in [0, 1] per teacher (e.g.
    ``vanishing_frequencies(budgets)[teacher_groups]``). Returns bool
    ``(count, teachers)`` for the queries at positions ``start .. start+count-1``.

    Scheme (systematic sampling, chunk-invariant):

    - teachers with ``s_i = 1`` take part in every query, ``s_i = 0`` in none;
    - the others are laid end to end on a line in a random order, teacher ``i`` covering
      an interval of length ``s_i`` (total length ``m'``); query q takes part with the
      teachers whose interval contains one of the points ``u_q, u_q + 1, u_q + 2, ...``
      (``u_q`` in [0, 1)). Each interval is shorter than 1, so it holds at most one
      point: exactly ``ceil(m' - u_q)`` of these teachers take part, i.e.
      ``floor(m')`` or ``ceil(m')``, and the total per query varies by at most one
      (it is constant when ``sum_i s_i`` is an integer);
    - queries are grouped in blocks of ``NOISE_BLOCK`` by position. Block b draws, from
      ``noise.generator(seed, (STREAM_PARTICIPATION, b))``, first an offset ``u0``
      (``random()``) and then the order of the line (``permutation``). Query ``q`` at
      position ``p = q - b * NOISE_BLOCK`` in its block uses ``u_q = (u0 + p * phi) mod 1``
      with ``phi = (sqrt 5 - 1) / 2``.

    A teacher takes part in query q iff ``(u_q - a_i) mod 1 < s_i`` (``a_i`` the start of
    its interval), and ``u_q`` walks the circle as a Kronecker sequence, so inside a block
    every teacher takes part in a fraction ``s_i`` of the queries up to O(log n / n)
    (the paper's periodic participation with shifted periods); the new order at each block
    is the paper's periodic re-sampling of the teacher sets. Stepping by the golden ratio
    rather than by ``m'`` (plain round-robin) avoids a frozen schedule when ``m'`` is an
    integer. The result depends only on the seed and the query positions, never on how the
    queries are chunked.
    """
    frequencies = np.asarray(frequencies, dtype=np.float64)
    if frequencies.ndim != 1 or frequencies.size == 0:
        raise ValueError("frequencies must be a non-empty 1-D array (one per teacher)")
    if not np.all((frequencies >= 0) & (frequencies <= 1)):
        raise ValueError("participation frequencies must lie in [0, 1]")
    seed = _seed(seed)
    if not (isinstance(count, (int, np.integer)) and count >= 0):
        raise ValueError(f"count must be a non-negative integer, got {count!r}")
    if not (isinstance(start, (int, np.integer)) and start >= 0):
        raise ValueError(f"start must be a non-negative integer, got {start!r}")
    out = np.zeros((count, frequencies.size), dtype=bool)
    out[:, frequencies >= 1.0] = True
    partial = np.flatnonzero((frequencies > 0.0) & (frequencies < 1.0))
    if count == 0 or partial.size == 0:
        return out
    first, last = start // NOISE_BLOCK, (start + count - 1) // NOISE_BLOCK
    for block in range(first, last + 1):
        lo = max(start, block * NOISE_BLOCK)
        hi = min(start + count, (block + 1) * NOISE_BLOCK)
        draws = generator(seed, (STREAM_PARTICIPATION, block))
        offset = draws.random()
        order = partial[draws.permutation(partial.size)]
        ends = np.cumsum(frequencies[order])
        positions = np.arange(lo, hi, dtype=np.float64) - block * NOISE_BLOCK
        u = np.mod(offset + positions * _ROTATION, 1.0)
        # points u + n (n integer) in [0, end): ceil(end - u); first difference per teacher
        points = np.ceil(ends[None, :] - u[:, None])
        hits = np.diff(points, axis=1, prepend=0.0)
        out[lo - start : hi - start, order] = hits > 0
    return out


@dataclass(frozen=True)
class VanishingVotes:
    """Histogram of a vanishing run (math:individualized).

    ``votes``: ``(queries, classes)`` float, ``n_j = (k / |S_q|) #{i in S_q : t_i = j}``;
    ``participation``: bool ``(queries, teachers)``, the sets ``S_q``;
    ``scale``: ``(queries,)`` ``k / |S_q|``, the sensitivity ``D`` a participating
    teacher's points have at that query.
    """

    votes: np.ndarray
    participation: np.ndarray
    scale: np.ndarray


def vanishing_votes(predictions: np.ndarray, *, frequencies: np.ndarray, seed: int,
                    classes: int, start: int = 0) -> VanishingVotes:
    """Vanishing histogram of ``predictions`` (queries at positions ``start, ...``).

    Participation from :func:`vanishing_participation`; the counts of the participating
    teachers are rescaled to the full teacher count ``k`` (math:individualized, paper
    Appendix B: "the votes are scaled so that the total sum ... equals the number of
    teachers"). Raises ``ValueError`` if some query has no participating teacher.
    """
    predictions = _predictions(predictions, classes)
    queries, teachers = predictions.shape
    frequencies = np.asarray(frequencies, dtype=np.float64)
    if frequencies.shape != (teachers,):
        raise ValueError(f"frequencies must have shape ({teachers},), got {frequencies.shape}")
    participation = vanishing_participation(frequencies, seed=seed, count=queries, start=start)
    taking = participation.sum(axis=1)
    if np.any(taking == 0):
        raise ValueError(f"no teacher takes part in query {start + int(np.argmin(taking))}: "
                         "raise the participation frequencies")
    scale = teachers / taking
    counts = weighted_histogram(np.where(participation, predictions, -1), classes=classes)
    return VanishingVotes(votes=counts * scale[:, None], participation=participation,
                          scale=scale)


class HistogramRows(PredictedVotes):
    """The weighted (``weights`` per teacher) or vanishing (``frequencies`` per teacher,
    drawn from ``seed``) histogram of ``predictions`` (queries x teachers) as
    ``(queries, classes)`` float64 rows, formed for the rows a pass reads, never whole
    (``inputs.predicted_votes.PredictedVotes``): the same bits however the rows are
    split. Vanishing rows are read by row or slice (participation is keyed by position)."""

    dtype: np.dtype = np.dtype(np.float64)

    def __init__(self, predictions: np.ndarray, classes: int, *,
                 weights: np.ndarray | None = None, frequencies: np.ndarray | None = None,
                 seed: int = 0):
        super().__init__(predictions, classes)
        self.weights, self.frequencies, self.seed = weights, frequencies, seed

    def _histogram(self, rows: np.ndarray, start: int | None) -> np.ndarray:
        classes = self.shape[1]
        if self.frequencies is None:
            return weighted_histogram(rows, self.weights, classes=classes)
        if start is None:
            raise ValueError("vanishing rows are read by row or slice, not by row numbers")
        return vanishing_votes(rows, frequencies=self.frequencies, seed=self.seed,
                               classes=classes, start=start).votes

    def participation(self, start: int, count: int) -> np.ndarray:
        """Each teacher's part in queries ``start .. start+count-1`` (vanishing)."""
        assert self.frequencies is not None
        return vanishing_participation(self.frequencies, seed=self.seed, count=count,
                                       start=start)

    def whole_counts(self, step: int) -> bool:
        """Whether every count is a whole number (a pass, ``step`` rows at a time)."""
        return all(whole(part) for part in (
            self[lo:lo + step] for lo in range(0, self.shape[0], step)))


def _predictions(predictions: np.ndarray, classes: int) -> np.ndarray:
    if not (isinstance(classes, (int, np.integer)) and classes >= 2):
        raise ValueError(f"classes must be an integer >= 2, got {classes!r}")
    predictions = np.asarray(predictions)
    if predictions.ndim != 2:
        raise ValueError(f"predictions must have shape (queries, teachers), "
                         f"got {predictions.shape}")
    if predictions.dtype.kind == "f":
        if not np.all(np.isfinite(predictions) & (predictions == np.round(predictions))):
            raise ValueError("predictions must be integer class ids")
    elif predictions.dtype.kind not in "iu":
        raise ValueError("predictions must be integer class ids")
    predictions = predictions.astype(np.int64)
    if predictions.size and (predictions.min() < -1 or predictions.max() >= classes):
        raise ValueError(f"class ids must lie in -1..{classes - 1} (-1: no vote)")
    return predictions


def _seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)
