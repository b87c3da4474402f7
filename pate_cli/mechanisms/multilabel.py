"""Multi-label aggregation (Dziedzic et al. 2023): tau-clipped per-label voting and its
seeded replay, and the powerset histogram (sparse vote rows whose zero block holds the
unobserved label sets; GNMax replays it as any sparse votes).

Label sets are integers, bit l for label l (at most ``MAX_SET_LABELS``). Noise is the answer
stream keyed by query position: same labels for any chunking."""

from __future__ import annotations

import numpy as np

from ..vote_rows import VoteRows
from .noise import STREAM_ANSWER, NoiseSource
from .noisy_argmax import noisy_argmax

# Label sets as int64 bitmasks: bit 62 is the last one below the sign bit.
MAX_SET_LABELS = 62
# Each --multilabel variant's mechanisms (binary: each label's counts; tau, powerset: GNMax).
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
    """Each label's noisy argmax (``noisy_argmax``) of ``(M - s_l, s_l)``, ``N(0, sigma^2)``
    on both, ties to the negative class: ``(queries, labels)`` 0/1 (draws keyed by query)."""
    count, labels = sums.shape
    draws = noise.draw(stream=STREAM_ANSWER, kind="normal", start=start, count=count,
                       width=2 * labels)
    pairs = VoteRows(np.stack([teachers - sums, sums], axis=2).reshape(-1, 2))
    paired = draws.reshape(count, 2, labels).transpose(0, 2, 1).reshape(-1, 2)
    return noisy_argmax(pairs, paired, kind="normal", scale=sigma).reshape(count, labels)


def powerset_votes(predictions: np.ndarray, width: int | None = None) -> VoteRows:
    """The powerset histogram of ``(queries, teachers, labels)`` 0/1 predictions (a class per
    label set of ``2^L``) as sparse vote rows (math:sparse): each query's observed sets
    (ascending, ``-1`` padding) and counts in ``width`` columns (default: the most distinct
    sets of a query), the others the zero block. A chunk must take the file's width: the
    replay's noise and the zero block depend on it."""
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
    return VoteRows(counts[:, :width], 2.0 ** predictions.shape[2] - width, sets[:, :width],
                    distinct)
