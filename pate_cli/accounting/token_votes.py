"""Bounds on q for sparse votes: the zero-vote classes as one block (MATH.md s.14).

Every formula is the dense one on the dense row, computed without forming it. A chunk
(``SparseRows``) holds each row's stored counts and the count ``Z = K - stored`` of its
zero-vote classes; those Z classes are identical competitors, so their terms of a sum over
``j != i*`` are one term times Z. Dropping them would under-report q. The cap is
``log(1 - 1/K)`` with K the vocabulary.
"""

from __future__ import annotations

import math

import numpy as np

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


def log_q_gnmax_sparse(rows: SparseRows, *, sigma: float) -> np.ndarray:
    """Prop. 7 with the zero block (MATH.md s.14):
    ``log q = logaddexp(logsumexp_{stored j != i*} log_ndtr(-(n_i* - n_j) / (sqrt(2) sigma)),
    log Z + log_ndtr(-n_i* / (sqrt(2) sigma)))``, capped at ``log(1 - 1/K)``."""
    from scipy.special import log_ndtr, logsumexp
    check_positive(sigma, "sigma")
    scale = math.sqrt(2.0 * sigma**2)  # as the dense bound rounds it
    top_count, gaps, others = _plurality_gaps(rows)
    with np.errstate(divide="ignore"):
        terms = np.where(others, log_ndtr(-(gaps / scale)), -np.inf)
    block = _log_zero_classes(rows) + log_ndtr(-(top_count / scale))
    terms = np.concatenate((terms, block[:, None]), axis=1)
    with np.errstate(divide="ignore"):
        log_q = logsumexp(terms, axis=1)
    return np.minimum(log_q, _cap(rows))


def log_q_lnmax_sparse(rows: SparseRows, *, scale: float) -> np.ndarray:
    """MATH.md s.5 with the zero block of s.14: the Z zero classes add
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
