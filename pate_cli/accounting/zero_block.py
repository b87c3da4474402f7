"""GNMax's bound on q for a histogram stored by its non-zero counts (MATH.md s.14).

A query over K classes is stored as some counts plus ``Z`` classes known to have count
0 (a vocabulary's unseen tokens; a powerset's unobserved label sets, MATH.md s.14). The
zero classes are one block of identical competitors of the plurality ``i*``:

    log q = logaddexp( logsumexp over stored j != i* of log_ndtr(-(n_i* - n_j) / (sqrt(2) sigma)),
                       log Z + log_ndtr(-n_i* / (sqrt(2) sigma)) )
    log q = min(log q, log(1 - 1/K)),   K = stored classes + Z

which is Proposition 7 (MATH.md s.3) on the dense row, computed without forming it.
Stored zeros are allowed (they are members of the block kept apart), so rows of
different lengths can share one padded array.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .validators import check_positive


def log_q_gnmax_with_zero_block(counts: ArrayLike, zero_classes: ArrayLike,
                                sigma: float) -> np.ndarray:
    """Prop. 7's ``log q`` (MATH.md s.3, s.14) of rows ``counts`` (``(queries, stored)``)
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
    return np.minimum(log_q, np.log1p(-1.0 / total))
