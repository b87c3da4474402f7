"""Weighted and participation histograms of Individualized PATE (math:individualized):
weighted counts (paper Definition 7) and the vanishing variant's seeded participation
schedule with its rescaled histogram (Appendix B, Algorithm 3), a slice at a time."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..inputs.predicted_votes import PredictedVotes
from .noise import NOISE_BLOCK, STREAM_PARTICIPATION, generator

# Step of the per-query offset inside a block (golden ratio conjugate: a Kronecker sequence).
_ROTATION = (math.sqrt(5.0) - 1.0) / 2.0


def weighted_histogram(predictions: np.ndarray, weights: np.ndarray | None = None, *,
                       classes: int) -> np.ndarray:
    """Weighted vote counts ``n_j = sum_i w_i [t_i = j]`` (paper Definition 7, eq. 8), float64
    ``(queries, classes)``, from ``(queries, teachers)`` class ids (-1: no vote) and
    ``weights`` None (plain counts), ``(teachers,)`` or ``(queries, teachers)``."""
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
    """Which teachers take part in queries ``start .. start+count-1`` (vanishing,
    math:individualized, Appendix B): bool ``(count, teachers)``, from ``frequencies`` ``s_i``
    in [0, 1] per teacher; depends on the seed and positions only, never on chunking.

    Systematic sampling: ``s_i = 1`` always, ``s_i = 0`` never; the others lie end to end on a
    line in random order, ``i`` covering length ``s_i`` (total ``m'``); query q takes those
    whose interval holds one of ``u_q, u_q + 1, ...``: ``ceil(m' - u_q)`` teachers. Block b of
    ``NOISE_BLOCK`` positions draws from ``generator(seed, (STREAM_PARTICIPATION, b))`` an
    offset ``u0`` (``random()``), then the order (``permutation``); position ``p`` uses ``u_q =
    (u0 + p phi) mod 1``, ``phi = (sqrt 5 - 1) / 2``: a Kronecker sequence, so each teacher
    takes part in a fraction ``s_i`` of a block's queries up to O(log n / n), and no schedule
    freezes when ``m'`` is whole (as a round-robin step ``m'`` would)."""
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
    """Histogram of a vanishing run (math:individualized): ``votes`` ``n_j = (k / |S_q|) #{i in
    S_q : t_i = j}``, ``participation`` the sets ``S_q``, ``scale`` ``k / |S_q|`` (``D``)."""

    votes: np.ndarray
    participation: np.ndarray
    scale: np.ndarray


def vanishing_votes(predictions: np.ndarray, *, frequencies: np.ndarray, seed: int,
                    classes: int, start: int = 0) -> VanishingVotes:
    """Vanishing histogram of ``predictions`` at positions ``start, ...``, rescaled to all
    ``k`` teachers (math:individualized, Appendix B); ``ValueError`` for a query without one."""
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
    """The weighted (``weights``) or vanishing (``frequencies``, ``seed``) histogram of
    ``predictions``, float64 rows formed when read: same bits however the rows are split.
    Vanishing rows are read by row or slice (participation is keyed by position)."""

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

    def whole_on_any_data(self, step: int) -> bool:
        """Whether every count is whole whatever the teachers predict (math:screening's
        integer grid): whole weights, or (vanishing) every ``k / |S_q|`` whole."""
        if self.frequencies is None:
            weights = np.asarray(self.weights, dtype=np.float64)
            return bool(np.all(weights == np.round(weights)))
        teachers = int(self.predictions.shape[1])
        return all(bool(np.all(teachers % self.participation(lo, min(step, self.shape[0] - lo))
                                .sum(axis=1) == 0))
                   for lo in range(0, self.shape[0], step))


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
