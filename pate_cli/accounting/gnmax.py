"""GNMax: the bound on q and data-dependent / data-independent RDP.

Papernot et al. 2018, "Scalable Private Learning with PATE": Proposition 7 (bound on q),
Theorem 6 with the higher orders of Proposition 10 (RDP from q). MATH.md sections 2-3.
All functions are vectorised over queries (leading axes) and orders (last axis).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..numerics import log1mexp, log_add
from ..orders import validate_orders

# Terms of the log q sum whose Gaussian tail is below exp(-_PRUNE) times the largest one
# are skipped: Phi(-z) / Phi(-z0) <= exp(-(z^2 - z0^2) / 2) for z >= z0 >= 0 (the Mills
# ratio is decreasing), so each skipped term changes log q by less than 2e-22 relative.
_PRUNE = 50.0


def log_q_gnmax(votes, *, sigma: float) -> np.ndarray:
    """Upper bound on log Pr[GNMax does not output the plurality class] (Prop. 7).

    ``log q = logsumexp_{j != i*} log_ndtr(-(n_i* - n_j) / (sqrt(2) sigma))``, capped at
    ``log(1 - 1/K)`` (MATH.md section 3). ``votes`` has shape ``(queries, K)``; the result
    has shape ``(queries,)``. Ties for the plurality give the cap.
    """
    votes = _as_votes(votes)
    _check_positive(sigma, "sigma")
    queries, classes = votes.shape
    top = np.argmax(votes, axis=1)
    rows = np.arange(queries)
    z = (votes[rows, top][:, None] - votes) / (math.sqrt(2.0) * sigma)
    z[rows, top] = np.inf  # the plurality class itself is not in the sum
    z_runner_up = z.min(axis=1)
    lead = log_ndtr(-z_runner_up)
    keep = (z - z_runner_up[:, None]) * (z + z_runner_up[:, None]) <= 2.0 * _PRUNE
    keep_rows, keep_cols = np.nonzero(keep)
    ratios = np.exp(log_ndtr(-z[keep_rows, keep_cols]) - lead[keep_rows])
    log_q = lead + np.log(np.bincount(keep_rows, weights=ratios, minlength=queries))
    return np.minimum(log_q, math.log(1.0 - 1.0 / classes))


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
    out[...] = independent
    out[np.isneginf(log_q)] = 0.0

    flat_log_q = log_q.reshape(-1)
    where = np.flatnonzero(_theorem6_applies(flat_log_q, sigma))
    if where.size:
        lq = flat_log_q[where]
        mu2 = sigma * np.sqrt(-lq)
        mu1 = mu2 + 1.0
        e1 = mu1 / variance
        e2 = mu2 / variance
        log1q = log1mexp(lq)
        slope_a = log1q - log1mexp((lq + e2) * (1.0 - 1.0 / mu2))
        slope_b = e1 - lq / (mu1 - 1.0)
        steps = orders - 1.0
        dependent = log_add(
            log1q[:, None] + steps * slope_a[:, None], lq[:, None] + steps * slope_b[:, None]
        ) / steps
        bounded = np.where(mu1[:, None] > orders, np.minimum(independent, dependent), independent)
        out.reshape(-1, orders.size)[where] = bounded
    return out


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
