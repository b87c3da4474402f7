"""Bounds on q for sparse votes: the zero-vote classes as one block (math:sparse).

Rows stored by some counts plus ``Z`` classes known to have count 0 (a vocabulary's unseen
tokens, a powerset's unobserved label sets): stored zeros are allowed (members of the
block kept apart), so rows of different lengths can share one padded array.

Every formula is the dense one on the dense row, computed without forming it. A chunk
(``SparseRows``) holds each row's stored counts and the count ``Z = K - stored`` of its
zero-vote classes; those Z classes are identical competitors, so their terms of a sum over
``j != i*`` are one term times Z. Dropping them would under-report q. The cap is
``log(1 - 1/K)`` with K the vocabulary.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..sparse_rows import SparseRows
from .validators import check_positive


def _plurality_gaps(rows: SparseRows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(top count (rows,), n_i* - n_j (rows, width), mask of the j != i* stored cells)``."""
    top = rows.top()
    index = np.arange(rows.counts.shape[0])
    top_count = rows.counts[index, top]
    gaps = top_count[:, None] - rows.counts
    others = ~rows.padding
    others[index, top] = False
    return top_count, gaps, others


def _log_zero_classes(rows: SparseRows) -> np.ndarray:
    """``log Z`` per row (-inf for a row that stores every class)."""
    with np.errstate(divide="ignore"):
        return np.log(rows.zero_classes)


def _cap(rows: SparseRows) -> float:
    return math.log(1.0 - 1.0 / rows.vocabulary)


def log_q_gnmax_with_zero_block(counts: ArrayLike, zero_classes: ArrayLike,
                                sigma: float) -> np.ndarray:
    """Prop. 7's ``log q`` (math:gnmax and math:sparse) of rows ``counts`` (``(queries, stored)``)
    followed by ``zero_classes`` (one per query, or one for all; a float may stand for a
    count beyond int64, such as ``2**70``) classes of count 0; ``(queries,)``.

    The plurality is the first largest stored count (a row needs a positive count, which
    a valid row of votes has). The cap is ``log(1 - 1/K)`` with ``K = stored + Z``.
    """
    from scipy.special import log_ndtr, logsumexp
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[1] < 1:
        raise ValueError(f"counts must have shape (queries, stored>=1), got {counts.shape}")
    check_positive(sigma, "sigma")
    queries, stored = counts.shape
    zeros = np.broadcast_to(np.asarray(zero_classes, dtype=np.float64), (queries,))
    if np.any(~np.isfinite(zeros) | (zeros < 0)):
        raise ValueError("zero_classes must be finite and non-negative")
    top = np.argmax(counts, axis=1)
    rows = np.arange(queries)
    leader = counts[rows, top]
    if np.any(leader <= 0):
        raise ValueError("every row needs a positive count (its plurality)")
    scale = math.sqrt(2.0 * sigma**2)  # as gnmax.log_q_gnmax rounds it
    terms = log_ndtr(-((leader[:, None] - counts) / scale))
    terms[rows, top] = -np.inf  # the plurality is not its own competitor
    with np.errstate(divide="ignore"):
        block = np.log(zeros) + log_ndtr(-(leader / scale))
    log_q = logsumexp(np.concatenate([terms, block[:, None]], axis=1), axis=1)
    total = stored + zeros
    if np.any(total < 2):
        raise ValueError("a row needs at least two classes (stored + zero classes)")
    return np.minimum(log_q, np.log(1.0 - 1.0 / total))  # as gnmax.log_q_gnmax caps it


def log_q_gnmax_sparse(rows: SparseRows, *, sigma: float) -> np.ndarray:
    """Prop. 7 with the zero block (math:sparse) of a chunk: its padding cells are
    zero-vote classes kept apart, the other ``K - width`` classes the block."""
    return log_q_gnmax_with_zero_block(rows.counts, rows.vocabulary - rows.counts.shape[1],
                                       sigma)


def log_q_lnmax_sparse(rows: SparseRows, *, scale: float) -> np.ndarray:
    """math:lnmax with the zero block of math:sparse: the Z zero classes add
    ``log Z + log(2 + n_i*/lam) + log(1/4) - n_i*/lam``; capped at ``log(1 - 1/K)``."""
    from scipy.special import logsumexp
    check_positive(scale, "laplace scale")
    top_count, gaps, others = _plurality_gaps(rows)
    g = -gaps / scale
    terms = np.where(others, np.log(2.0 + np.abs(g)) + math.log(0.25) + g, -np.inf)
    g0 = -top_count / scale
    block = _log_zero_classes(rows) + np.log(2.0 + np.abs(g0)) + math.log(0.25) + g0
    terms = np.concatenate((terms, block[:, None]), axis=1)
    with np.errstate(divide="ignore"):
        log_q = logsumexp(terms, axis=1)
    return np.minimum(log_q, _cap(rows))
