"""Multi-label aggregation (Dziedzic et al. 2023): tau-clipped per-label voting and
powerset GNMax with a zero block of unobserved label sets, and their seeded replay.

Label sets are integers, bit l for label l (at most ``MAX_SET_LABELS`` labels). Noise
comes from ``NoiseSource``'s answer stream keyed by query position, like every other
aggregator (``noise.py``), so the same seed gives the same labels for any chunking.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .noise import STREAM_ANSWER, NoiseSource

# Label sets as int64 bitmasks: bit 62 is the last one below the sign bit.
MAX_SET_LABELS = 62
# The mechanisms each --multilabel variant runs (binary: each label's counts; tau and
# powerset: GNMax over clipped sums or label sets).
VARIANT_MECHANISMS = {"binary": ("gnmax", "confident"), "tau": ("gnmax",),
                      "powerset": ("gnmax",)}


def set_ids(bits: np.ndarray) -> np.ndarray:
    """0/1 ``(..., labels)`` -> int64 label-set ids (bit l = label l; -1 beyond
    ``MAX_SET_LABELS`` labels)."""
    if bits.shape[-1] > MAX_SET_LABELS:
        return np.full(bits.shape[:-1], -1, dtype=np.int64)
    weights = np.left_shift(np.int64(1), np.arange(bits.shape[-1], dtype=np.int64))
    return (bits.astype(np.int64) * weights).sum(axis=-1)


def clipped_sums(predictions: np.ndarray, tau: float) -> np.ndarray:
    """``(queries, labels)`` sums of the teachers' 0/1 vectors, each scaled by
    ``min(1, tau / sqrt(k))`` (k = its positive labels): clipped to L2 norm ``tau``."""
    positives = predictions.sum(axis=2, dtype=np.int64).astype(np.float64)
    with np.errstate(divide="ignore"):
        scale = np.minimum(1.0, tau / np.sqrt(positives))
    return np.einsum("qtl,qt->ql", predictions, scale, dtype=np.float64)


def replay_tau(sums: np.ndarray, *, teachers: float, sigma: float, noise: NoiseSource,
               start: int = 0) -> np.ndarray:
    """Each label's noisy argmax of ``(M - s_l, s_l)`` with ``N(0, sigma^2)`` on both
    counts (ties to the negative class): ``(queries, labels)`` 0/1."""
    count, labels = sums.shape
    draws = noise.draw(stream=STREAM_ANSWER, kind="normal", start=start, count=count,
                       width=2 * labels)
    negative = (teachers - sums) + sigma * draws[:, :labels]
    positive = sums + sigma * draws[:, labels:]
    return (positive > negative).astype(np.int64)


class PowersetVotes(NamedTuple):
    """A chunk's powerset histograms: ``sets`` (distinct observed label sets, ascending,
    padded with -1) and ``counts`` (their votes, padded with 0), both ``(queries, width)``;
    ``distinct`` sets per query."""

    sets: np.ndarray
    counts: np.ndarray
    distinct: np.ndarray


def powerset_votes(predictions: np.ndarray, width: int | None = None) -> PowersetVotes:
    """The observed label sets of ``(queries, teachers, labels)`` 0/1 predictions and
    their counts, by one sort per row (no loop over queries); ``width`` columns (at least
    the most distinct sets of a query; default: that many). A chunk of a file takes the
    file's width: the replay's noise and the zero block depend on it."""
    ids = np.sort(set_ids(predictions), axis=1)
    queries, teachers = ids.shape
    starts = np.ones_like(ids, dtype=bool)
    starts[:, 1:] = ids[:, 1:] != ids[:, :-1]
    distinct = starts.sum(axis=1)
    rank = np.cumsum(starts, axis=1) - 1
    rows, cols = np.nonzero(starts)
    ends = np.append(cols[1:], teachers)
    ends[np.flatnonzero(np.diff(rows)) if rows.size else []] = teachers
    sets = np.full((queries, teachers), -1, dtype=np.int64)
    counts = np.zeros((queries, teachers))
    sets[rows, rank[rows, cols]] = ids[rows, cols]
    counts[rows, rank[rows, cols]] = ends - cols
    width = (int(distinct.max()) if queries else 0) if width is None else width
    return PowersetVotes(sets[:, :width], counts[:, :width], distinct)


def replay_powerset(votes: PowersetVotes, *, labels: int, sigma: float, noise: NoiseSource,
                    start: int = 0) -> np.ndarray:
    """GNMax over the ``2^L`` label sets: ``N(0, sigma^2)`` on each observed set's count
    and, for the ``Z = 2^L - distinct`` unobserved sets (count 0), one draw of their
    maximum (``sigma * Phi^-1(U^(1/Z))``: the law of the largest of Z normals) and, if it
    wins, one uniform rank among them (mapped to its set id through the observed ids).
    Returns the released set ids ``(queries,)``."""
    from scipy.special import log_ndtr, ndtr, ndtri_exp
    queries, width = votes.counts.shape
    draws = noise.draw(stream=STREAM_ANSWER, kind="normal", start=start, count=queries,
                       width=width + 2)
    noisy = np.where(votes.sets >= 0, votes.counts + sigma * draws[:, :width], -np.inf)
    zeros = 2.0**labels - votes.distinct
    with np.errstate(divide="ignore"):
        block = np.where(zeros > 0, sigma * ndtri_exp(log_ndtr(draws[:, width])
                                                      / np.maximum(zeros, 1.0)), -np.inf)
    best = np.argmax(noisy, axis=1)
    chosen = votes.sets[np.arange(queries), best]
    unobserved = block > noisy[np.arange(queries), best]
    if np.any(unobserved):
        rank = np.minimum(np.floor(ndtr(draws[:, width + 1]) * zeros), zeros - 1)
        rank = np.maximum(rank, 0).astype(np.int64)
        # the rank-th id absent from the ascending observed ids s_i: rank + #{i: s_i - i <= rank}
        below = votes.sets - np.arange(width)
        taken = ((votes.sets >= 0) & (below <= rank[:, None])).sum(axis=1)
        chosen = np.where(unobserved, rank + taken, chosen)
    return chosen
