"""GNMax: the bound on q and data-dependent / data-independent RDP.

Papernot et al. 2018, "Scalable Private Learning with PATE": Proposition 7 (bound on q),
Theorem 6 with the higher orders of Proposition 10 (RDP from q). MATH.md sections 2-3.
All functions are vectorised over queries (leading axes) and orders (last axis).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtr

from ..numerics import log1mexp
from ..orders import validate_orders

# Terms of the log q sum whose Gaussian tail is below exp(-_PRUNE) times the largest one
# are skipped: Phi(-z) / Phi(-z0) <= exp(-(z^2 - z0^2) / 2) for z >= z0 >= 0 (the Mills
# ratio is decreasing), so each skipped term changes log q by less than 2e-22 relative.
_PRUNE = 50.0
# Sums of tail probabilities at least this large are exact to double precision in linear
# space (terms that underflow are then below 1e-20 of the sum).
_LINEAR_FLOOR = 1e-280
# Largest integer gap for which tail probabilities are tabulated.
_TABLE_LIMIT = 1 << 22
_LOG1P_IDENTITY = 2.0**-53
# Rows of (queries x orders) work arrays evaluated at once (about 1 MB each, cache-sized).
_WORK_ELEMENTS = 1 << 17


def log_q_gnmax(votes, *, sigma: float) -> np.ndarray:
    """Upper bound on log Pr[GNMax does not output the plurality class] (Prop. 7).

    ``log q = logsumexp_{j != i*} log_ndtr(-(n_i* - n_j) / (sqrt(2) sigma))``, capped at
    ``log(1 - 1/K)`` (MATH.md section 3). ``votes`` has shape ``(queries, K)``; the result
    has shape ``(queries,)``. Ties for the plurality give the cap.

    The sum is taken in linear space (``ndtr``) where the runner-up's tail probability is
    a normal double, and in log space with far terms pruned for the other rows. With
    integer votes the gaps are integers, so the tail probabilities come from a table of
    ``max gap + 1`` values instead of one evaluation per (query, class).
    """
    votes = _as_votes(votes)
    _check_positive(sigma, "sigma")
    queries, classes = votes.shape
    top = np.argmax(votes, axis=1)
    rows = np.arange(queries)
    gaps = votes[rows, top][:, None] - votes
    scale = math.sqrt(2.0 * sigma**2)  # as the reference analysis rounds it
    largest = float(gaps.max()) if gaps.size else 0.0
    integral = largest <= _TABLE_LIMIT and np.array_equal(gaps, np.rint(gaps))
    if integral:
        table = np.append(ndtr(-(np.arange(largest + 1) / scale)), 0.0)
        index = gaps.astype(np.intp)
        index[rows, top] = table.size - 1  # the plurality class itself is not in the sum
        total = table[index].sum(axis=1)
    else:
        tails = ndtr(-(gaps / scale))
        tails[rows, top] = 0.0
        total = tails.sum(axis=1)
    with np.errstate(divide="ignore"):
        log_q = np.log(total)
    tiny = np.flatnonzero(~(total >= _LINEAR_FLOOR))
    if tiny.size:
        log_q[tiny] = _log_q_log_space(gaps[tiny], top[tiny], scale)
    return np.minimum(log_q, math.log(1.0 - 1.0 / classes))


def _log_q_log_space(gaps: np.ndarray, top: np.ndarray, scale: float) -> np.ndarray:
    """The Prop. 7 sum in log space for rows whose tail probabilities underflow."""
    queries = gaps.shape[0]
    rows = np.arange(queries)
    z = gaps / scale
    z[rows, top] = np.inf
    z_runner_up = z.min(axis=1)
    lead = log_ndtr(-z_runner_up)
    keep = (z - z_runner_up[:, None]) * (z + z_runner_up[:, None]) <= 2.0 * _PRUNE
    keep_rows, keep_cols = np.nonzero(keep)
    ratios = np.exp(log_ndtr(-z[keep_rows, keep_cols]) - lead[keep_rows])
    return lead + np.log(np.bincount(keep_rows, weights=ratios, minlength=queries))


def rdp_gnmax(log_q, *, sigma: float, orders) -> np.ndarray:
    """Data-dependent RDP of one GNMax answer, given ``log q`` (Thm 6 + Prop. 10).

    Returns shape ``log_q.shape + (orders,)``. ``log q = -inf`` gives 0 (the output is
    certain); where the conditions of Theorem 6 fail the data-independent
    ``alpha / sigma^2`` is returned; elsewhere the smaller of the two (MATH.md section 3).
    Raises ``ValueError`` for ``log q > 0``, ``sigma <= 0`` or any order <= 1.
    """
    orders = validate_orders(orders)
    _check_positive(sigma, "sigma")
    log_q = np.asarray(log_q, dtype=np.float64)
    if np.any(np.isnan(log_q)) or np.any(log_q > 0):
        raise ValueError("log q must be <= 0 (it is the log of a probability)")
    variance = sigma * sigma
    independent = orders / variance
    out = np.empty(log_q.shape + orders.shape)
    flat_log_q = log_q.reshape(-1)
    flat_out = out.reshape(-1, orders.size)
    applies = _theorem6_applies(flat_log_q, sigma)
    flat_out[~applies] = independent
    flat_out[np.isneginf(flat_log_q)] = 0.0
    where = np.flatnonzero(applies)
    block = max(1, _WORK_ELEMENTS // orders.size)
    for lo in range(0, where.size, block):
        chosen = where[lo : lo + block]
        flat_out[chosen] = _theorem6_bound(flat_log_q[chosen], sigma, orders, independent)
    return out


def _theorem6_bound(log_q, sigma, orders, independent):
    """``min(alpha / sigma^2, dep)`` where ``mu1 > alpha``, for queries where Theorem 6
    applies (MATH.md section 3), computed in place on one cache-sized block."""
    variance = sigma * sigma
    mu2 = sigma * np.sqrt(-log_q)
    mu1 = mu2 + 1.0
    e1 = mu1 / variance
    e2 = mu2 / variance
    log1q = log1mexp(log_q)
    slope_a = log1mexp((log_q + e2) * (1.0 - 1.0 / mu2)) - log1q
    slope_b = e1 - log_q / (mu1 - 1.0)
    steps = orders - 1.0
    # first = log(1 - q) + log A, second = log q + log B (both linear in alpha - 1)
    first = np.multiply(-slope_a[:, None], steps)
    first += log1q[:, None]
    second = np.multiply(slope_b[:, None], steps)
    second += log_q[:, None]
    result = _log_add_inplace(first, second)
    result /= steps
    np.minimum(result, independent, out=result)
    np.copyto(result, independent, where=mu1[:, None] <= orders)
    return result


def _log_add_inplace(x, y):
    """``log(e^x + e^y)`` for finite arrays, overwriting both; returns the result array."""
    high = np.maximum(x, y)
    np.subtract(x, y, out=x)
    np.abs(x, out=x)
    np.negative(x, out=x)
    np.exp(x, out=x)
    # log1p(v) rounds to v itself for v < 2^-53: skip the costly call there.
    np.log1p(x, out=x, where=x > _LOG1P_IDENTITY)
    x += high
    return x


def rdp_gnmax_data_independent(*, sigma: float, orders) -> np.ndarray:
    """Data-independent RDP of one GNMax answer: ``alpha / sigma^2`` (MATH.md section 2)."""
    orders = validate_orders(orders)
    _check_positive(sigma, "sigma")
    return orders / (sigma * sigma)


def _theorem6_applies(log_q: np.ndarray, sigma: float) -> np.ndarray:
    """The order-free conditions of Theorem 6 (MATH.md section 3), per query."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mu2 = sigma * np.sqrt(-log_q)
        mu1 = mu2 + 1.0
        e2 = mu2 / (sigma * sigma)
        limit = (mu2 - 1.0) * e2 - mu2 * (
            np.log(1.0 + 1.0 / (mu1 - 1.0)) + np.log(1.0 + 1.0 / (mu2 - 1.0))
        )
        return np.isfinite(log_q) & (mu2 > 1.0) & (-log_q > e2) & (log_q <= limit)


def _as_votes(votes) -> np.ndarray:
    votes = np.asarray(votes, dtype=np.float64)
    if votes.ndim != 2 or votes.shape[1] < 2:
        raise ValueError(f"votes must have shape (queries, classes>=2), got {votes.shape}")
    return votes


def _check_positive(value: float, name: str) -> None:
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
