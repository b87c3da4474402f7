"""GNMax: the bound on q (Papernot et al. 2018, Proposition 7) and its data-dependent RDP
(Theorem 6, higher orders of Proposition 10) or data-independent RDP (math:independent,
math:gnmax), vectorised over queries (leading axes) and orders (last axis).

Derivation: docs/explanation/data-dependent.md#gnmax.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ..numerics import log1mexp, whole
from ..orders import validate_orders
from ..vote_rows import VoteRows, vote_rows
from ..work_sizes import WORK_VALUES
from .validators import as_log_q, check_std

# Terms of the log q sum whose Gaussian tail is below exp(-_PRUNE) times the largest one
# are skipped: Phi(-z) / Phi(-z0) <= exp(-(z^2 - z0^2) / 2) for z >= z0 >= 0 (the Mills
# ratio is decreasing), so each skipped term changes log q by less than 2e-22 relative.
_PRUNE = 50.0
# Sums of tail probabilities at least this large are exact to double precision in linear
# space (terms that underflow are then below 1e-20 of the sum).
LINEAR_FLOOR = 1e-280
# Largest integer gap for which tail probabilities are tabulated.
_TABLE_LIMIT = 1 << 22
_LOG1P_IDENTITY = 2.0**-53


def log_q_gnmax(votes: ArrayLike | VoteRows, *, sigma: float) -> np.ndarray:
    """Upper bound on log Pr[GNMax does not output the plurality class] (Prop. 7).

    ``log q = logsumexp_{j != i*} log_ndtr(-(n_i* - n_j) / (sqrt(2) sigma))``, capped at
    ``log(1 - 1/K)`` (math:gnmax); ties for the plurality give the cap. The sum is taken in
    linear space (``ndtr``) where the runner-up's tail probability is a normal double, else
    in log space with far terms pruned. Integer votes have integer gaps: their tail
    probabilities come from a table of ``max gap + 1`` values, not one per (query, class).

    Args:
      votes: ``(queries, K)`` counts (K >= 2), or a :class:`VoteRows` chunk, whose ``Z``
        zero-vote classes add the one term ``Z Phi(-n_i* / (sqrt(2) sigma))`` (math:sparse).
      sigma: the answer noise's standard deviation, in ``validators.GAUSSIAN_STD``.

    Returns:
      ``log q``, shape ``(queries,)``.

    Raises:
      ValueError: ``sigma`` outside ``GAUSSIAN_STD``; ``votes`` not 2-D with K >= 2, or
        not finite and non-negative.
    """
    from scipy.special import log_ndtr, ndtr
    form = vote_rows(votes)
    check_std(sigma, "sigma")
    votes = form.counts
    queries = votes.shape[0]
    top = form.top()
    rows = np.arange(queries)
    leader = votes[rows, top]
    gaps = leader[:, None] - votes
    scale = math.sqrt(2.0 * sigma**2)  # as the reference analysis rounds it
    largest = float(gaps.max()) if gaps.size else 0.0
    integral = largest <= _TABLE_LIMIT and whole(gaps)
    if integral:
        table = np.append(ndtr(-(np.arange(largest + 1) / scale)), 0.0)
        index = gaps.astype(np.intp)
        index[rows, top] = table.size - 1  # the plurality class itself is not in the sum
        total = table[index].sum(axis=1)
    else:
        tails = ndtr(-(gaps / scale))
        tails[rows, top] = 0.0
        total = tails.sum(axis=1)
    if form.zeros:  # the zero block: Z classes at gap n_i* (math:sparse)
        total = total + form.zeros * ndtr(-(leader / scale))
    with np.errstate(divide="ignore"):
        log_q = np.log(total)
    tiny = np.flatnonzero(~(total >= LINEAR_FLOOR))
    if tiny.size:
        log_q[tiny] = _log_q_log_space(gaps[tiny], top[tiny], scale)
        if form.zeros:
            log_q[tiny] = np.logaddexp(log_q[tiny], math.log(form.zeros)
                                       + log_ndtr(-(leader[tiny] / scale)))
    return np.minimum(log_q, form.cap)


def _log_q_log_space(gaps: np.ndarray, top: np.ndarray, scale: float) -> np.ndarray:
    """The Prop. 7 sum over the matrix's classes in log space for rows whose tail
    probabilities underflow (``-inf`` for a row of one class)."""
    from scipy.special import log_ndtr
    queries = gaps.shape[0]
    rows = np.arange(queries)
    z = gaps / scale
    z[rows, top] = np.inf
    z_runner_up = z.min(axis=1)
    lead = log_ndtr(-z_runner_up)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        keep = (z - z_runner_up[:, None]) * (z + z_runner_up[:, None]) <= 2.0 * _PRUNE
        keep_rows, keep_cols = np.nonzero(keep)
        ratios = np.exp(log_ndtr(-z[keep_rows, keep_cols]) - lead[keep_rows])
        log_q = lead + np.log(np.bincount(keep_rows, weights=ratios, minlength=queries))
    # a runner-up whose log tail is -inf (gap / scale beyond ~1e154): q is below any double
    return np.where(lead == -np.inf, -np.inf, log_q)


def rdp_gnmax(log_q: ArrayLike, *, sigma: float, orders: ArrayLike) -> np.ndarray:
    """Data-dependent RDP of one GNMax answer, given ``log q`` (Thm 6 + Prop. 10).

    ``log q = -inf`` gives 0 (the output is certain); where the conditions of Theorem 6 fail
    the data-independent ``alpha / sigma^2``; elsewhere the smaller of the two (math:gnmax).
    Where Theorem 6 applies, cache-sized blocks in increasing ``log q`` span narrow ranges
    of ``mu1``, and orders at or above a block's every ``mu1`` skip the bound; every entry
    takes the same operations whatever the blocking.

    Args:
      log_q: ``log q`` per query (:func:`log_q_gnmax`), any shape, each ``<= 0``.
      sigma: the answer noise's standard deviation, in ``validators.GAUSSIAN_STD``.
      orders: the Rényi orders, each > 1.

    Returns:
      RDP of shape ``log_q.shape + (orders,)``, never below 0 (as RDP; a value rounded below
      0 would be clipped: callers that skip orders, ``accounting.live_orders`` and
      ``own_epsilons``, rely on it).

    Raises:
      ValueError: ``log q > 0`` (or NaN), ``sigma`` outside ``GAUSSIAN_STD`` or any order <= 1.
    """
    orders = validate_orders(orders)
    check_std(sigma, "sigma")
    log_q = as_log_q(log_q)
    variance = sigma * sigma
    independent = orders / variance
    out = np.empty(log_q.shape + orders.shape)
    flat_log_q = log_q.reshape(-1)
    flat_out = out.reshape(-1, orders.size)
    applies = _theorem6_applies(flat_log_q, sigma)
    flat_out[~applies] = independent
    flat_out[np.isneginf(flat_log_q)] = 0.0
    where = np.flatnonzero(applies)
    ascending = not np.any(np.diff(flat_log_q[where]) < 0)
    if not ascending:
        where = where[np.argsort(flat_log_q[where], kind="stable")]
    block = max(1, WORK_VALUES // orders.size)
    work = _Theorem6Work(min(block, where.size), orders, sigma)
    for lo in range(0, where.size, block):
        chosen = where[lo : lo + block]
        if ascending and chosen[-1] - chosen[0] == chosen.size - 1:  # a run: in place
            _theorem6_bound(flat_log_q[chosen], work, flat_out[chosen[0] : chosen[-1] + 1])
        else:
            target = work.result[: chosen.size]
            _theorem6_bound(flat_log_q[chosen], work, target)
            flat_out[chosen] = target
    return np.maximum(out, 0.0, out=out)  # RDP is non-negative: no rounding below 0


class _Theorem6Work:
    """Per-order constants and reusable (block x orders) buffers of :func:`_theorem6_bound`
    (fresh megabyte-sized temporaries per block would cost page faults)."""

    def __init__(self, rows: int, orders: np.ndarray, sigma: float):
        self.sigma = sigma
        self.orders = orders
        self.steps = orders - 1.0
        self.independent = orders / (sigma * sigma)
        size = max(rows, 0) * orders.size
        self.result = np.empty((max(rows, 0), orders.size))
        self._flat = [np.empty(size) for _ in range(3)]
        self._mask = np.empty(size, dtype=bool)

    def buffers(self, rows: int,
                width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Three float and one bool C-contiguous ``(rows, width)`` work arrays (ufuncs on
        contiguous arrays run about three times faster than on column slices)."""
        size = rows * width
        first, second, third = (flat[:size].reshape(rows, width) for flat in self._flat)
        return first, second, third, self._mask[:size].reshape(rows, width)


class Theorem6Terms(NamedTuple):
    """The per-query quantities of Theorem 6 (math:gnmax)."""

    mu1: np.ndarray
    mu2: np.ndarray
    e1: np.ndarray
    e2: np.ndarray


def theorem6_terms(log_q: np.ndarray, sigma: float) -> Theorem6Terms:
    """``mu2 = sigma sqrt(-log q)``, ``mu1 = mu2 + 1``, ``e_i = mu_i / sigma^2``."""
    variance = sigma * sigma
    mu2 = sigma * np.sqrt(-log_q)
    mu1 = mu2 + 1.0
    return Theorem6Terms(mu1, mu2, mu1 / variance, mu2 / variance)


def _theorem6_bound(log_q: np.ndarray, work: _Theorem6Work, out: np.ndarray) -> None:
    """``min(alpha / sigma^2, dep)`` where ``mu1 > alpha``, else ``alpha / sigma^2``, into
    ``out`` (math:gnmax); the values do not depend on the blocking."""
    mu1, mu2, e1, e2 = theorem6_terms(log_q, work.sigma)
    log1q = log1mexp(log_q)
    slope_a = log1mexp((log_q + e2) * (1.0 - 1.0 / mu2)) - log1q
    slope_b = e1 - log_q / (mu1 - 1.0)
    orders, independent = work.orders, work.independent
    below = np.flatnonzero(orders < mu1.max())
    width = int(below[-1]) + 1 if below.size else 0  # orders past it: all >= every mu1
    reached = np.flatnonzero(orders >= mu1.min())
    mixed = int(reached[0]) if reached.size else orders.size  # orders before it: all < mu1
    out[:, width:] = independent[width:]
    if width == 0:
        return
    steps = work.steps[:width]
    first, second, low, mask = work.buffers(log_q.size, width)
    if width == orders.size and out.flags.c_contiguous:
        first = out  # the result goes straight to its rows
    # first = log(1 - q) + log A, second = log q + log B (both linear in alpha - 1)
    np.multiply(-slope_a[:, None], steps, out=first)
    first += log1q[:, None]
    np.multiply(slope_b[:, None], steps, out=second)
    second += log_q[:, None]
    # log(e^first + e^second) = high + log1p(exp(low - high)), low - high = -|first - second|
    np.minimum(first, second, out=low)
    high = np.maximum(first, second, out=first)
    np.subtract(low, high, out=low)
    np.exp(low, out=low)
    # log1p(v) rounds to v itself for v < 2^-53: skip the costly call there.
    np.greater(low, _LOG1P_IDENTITY, out=mask)
    np.log1p(low, out=low, where=mask)
    low += high
    np.divide(low, steps, out=first)
    np.minimum(first, independent[:width], out=first)
    if first is not out:
        out[:, :width] = first
    if mixed < width:
        np.copyto(out[:, mixed:width], independent[mixed:width],
                  where=mu1[:, None] <= orders[mixed:width])


def rdp_gnmax_data_independent(*, sigma: float, orders: ArrayLike) -> np.ndarray:
    """Data-independent RDP of one GNMax answer: ``alpha / sigma^2`` (math:independent)."""
    orders = validate_orders(orders)
    check_std(sigma, "sigma")
    return orders / (sigma * sigma)


def _theorem6_applies(log_q: np.ndarray, sigma: float) -> np.ndarray:
    """The order-free conditions of Theorem 6 (math:gnmax), per query."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mu1, mu2, _, e2 = theorem6_terms(log_q, sigma)
        limit = (mu2 - 1.0) * e2 - mu2 * (
            np.log(1.0 + 1.0 / (mu1 - 1.0)) + np.log(1.0 + 1.0 / (mu2 - 1.0))
        )
        return np.isfinite(log_q) & (mu2 > 1.0) & (-log_q > e2) & (log_q <= limit)
