"""The exact data-independent RDP of the threshold (screening) step, math:screening: the
supremum over reachable count pairs of the Rényi divergence of the released bit, exact over
integer counts and certified on cells over real ones, never above the Gaussian curve.

Derivation: docs/explanation/screening.md#screening-supremum.
"""

from __future__ import annotations

import math
from functools import lru_cache, partial

import numpy as np
from numpy.typing import ArrayLike

from ..numerics import expm1_minus, log_expm1_minus
from ..orders import validate_orders
from ..work_sizes import READ_VALUES
from .validators import check_positive, check_std

# Real counts: cells of 1/32 count (at most REAL_CELLS of them: wider on longer ranges), each
# cut in 8 at an order where its bound is more than 1% above the best exact pair, at most 3
# times, while the order has at most REAL_REFINE_CELLS such cells.
REAL_CELLS = 1 << 14
REAL_REFINE_CELLS = 1 << 9
REAL_CELLS_PER_STEP = 32
REAL_SPLIT = 8
REAL_TOLERANCE = 1e-2
REAL_LEVELS = 3
# Integer ranges of at most this many counts are evaluated pair by pair (exact; about 3 s at
# the largest on the default grid).
INTEGER_PAIRS = 1 << 16


def rdp_screening(*, threshold: float, sigma_threshold: float, low: float, high: float,
                  orders: ArrayLike, integer: bool = True,
                  sensitivity: float = 1.0) -> np.ndarray:
    """The exact data-independent RDP of the threshold step (math:screening).

    Args:
      low: the smallest count the step may compare (``0`` for plain votes).
      high: the largest (``M`` for plain votes).
      integer: they (and ``sensitivity``) are integers.
      sensitivity: how far one neighbour moves the count (``D``, math:individualized).

    Returns:
      One value per order, never above ``alpha sensitivity^2 / (2 sigma1^2)``.

    Raises:
      ValueError: a bad grid, ``sigma_threshold`` or ``sensitivity``, a non-finite
        ``threshold`` or range, ``low > high``, or non-integers with ``integer``.
    """
    orders = validate_orders(orders)
    check_std(sigma_threshold, "sigma_threshold")
    check_positive(sensitivity, "sensitivity")
    if not (math.isfinite(threshold) and math.isfinite(low) and math.isfinite(high)
            and low <= high):
        raise ValueError(f"need finite threshold and low <= high, got T={threshold!r}, "
                         f"range [{low!r}, {high!r}]")
    if integer and not (float(low).is_integer() and float(high).is_integer()
                        and float(sensitivity).is_integer()):
        raise ValueError("integer counts need an integer range and sensitivity, got "
                         f"[{low!r}, {high!r}] and {sensitivity!r}")
    return _curve(float(threshold), float(sigma_threshold), float(low), float(high),
                  bool(integer), float(sensitivity), tuple(orders.tolist())).copy()


# A memo of a pure function (same bits, hit or not): a run asks for one curve several times.
@lru_cache(maxsize=32)
def _curve(threshold, sigma_threshold, low, high, integer, sensitivity, orders):
    orders = np.array(orders)
    gaussian = orders * sensitivity**2 / (2.0 * sigma_threshold**2)
    # both counts of a pair are reachable, so at most high - low apart
    distance = min(sensitivity, high - low)
    if distance <= 0.0:  # one reachable count: the bit never changes
        return np.zeros_like(orders)
    pair = partial(_pair_maxima, threshold=threshold, sigma_threshold=sigma_threshold,
                   orders=orders)
    if integer and high - low <= INTEGER_PAIRS:
        supremum = pair(np.arange(low, high - distance + 1.0), distance)
    else:
        supremum = _real_supremum(pair, low, high, distance, orders, gaussian,
                                  threshold=threshold, sigma_threshold=sigma_threshold)
    result = np.fmin(supremum, gaussian)  # NaN (not evaluable) -> the Gaussian curve
    return np.maximum(result, 0.0)


def _pair_maxima(starts, gap, *, threshold, sigma_threshold, orders):
    """Per order, the largest divergence of the pairs ``(a, a + gap)``, ``a`` in ``starts``,
    a chunk of counts at a time."""
    rows = max(1, READ_VALUES // orders.size)
    supremum = np.full(orders.size, -np.inf)
    for first in range(0, starts.size, rows):  # chunks of counts, not queries
        a = starts[first:first + rows, None]
        values = _pair_divergence(a, a + gap, threshold, sigma_threshold, orders[None, :])
        supremum = np.maximum(supremum, values.max(axis=0))  # NaN stays NaN
    return supremum


def _real_supremum(pair, low, high, distance, orders, ceiling, *, threshold, sigma_threshold):
    """A certified upper bound, per order, on the supremum over real counts: cells of
    ``[low, high - d]`` bounded by their outer pairs, loose ones cut (math:screening)."""
    span = high - low - distance
    cells = min(max(1, math.ceil(span * REAL_CELLS_PER_STEP / distance)), REAL_CELLS)
    width = span / cells
    starts = low + width * np.arange(cells)
    # exact pairs at whole counts and at the range's end: reachable, so a lower bound
    best = pair(np.append(starts[::REAL_CELLS_PER_STEP], high - distance), distance)
    target = best * (1.0 + REAL_TOLERANCE)
    open_ = target < ceiling  # where cutting could take the figure below the Gaussian
    supremum, coarse = np.full(orders.size, -np.inf), np.full(orders.size, -np.inf)
    counts = np.zeros(orders.size, dtype=np.int64)
    kept = []
    rows = max(1, READ_VALUES // orders.size)
    for first in range(0, cells, rows):  # level 0: every cell at every order
        bounds = _pair_divergence(starts[first:first + rows, None],
                                  starts[first:first + rows, None] + width + distance,
                                  threshold, sigma_threshold, orders[None, :])
        coarse = np.maximum(coarse, bounds.max(axis=0))  # NaN stays NaN
        loose = (bounds > target) & open_
        supremum = np.maximum(supremum, np.where(loose, -np.inf, bounds).max(axis=0))
        counts += loose.sum(axis=0)
        cell, order = np.nonzero(loose & (counts <= REAL_REFINE_CELLS))
        kept.append((starts[first + cell], order))
    over = counts > REAL_REFINE_CELLS
    supremum[over] = coarse[over]  # too many cells to cut: every cell's bound stands
    start = np.concatenate([cell for cell, _ in kept])
    order = np.concatenate([order for _, order in kept])
    start, order = start[~over[order]], order[~over[order]]
    for level in range(1, REAL_LEVELS + 1):
        if not start.size:
            break
        width /= REAL_SPLIT
        start = (start[:, None] + width * np.arange(REAL_SPLIT)).reshape(-1)
        order = np.repeat(order, REAL_SPLIT)
        exact = _elementwise(start, distance, orders[order], threshold, sigma_threshold)
        np.fmax.at(best, order, exact)
        bound = _elementwise(start, width + distance, orders[order], threshold,
                             sigma_threshold)
        loose = (bound > best[order] * (1.0 + REAL_TOLERANCE)) & open_[order]
        over = np.bincount(order[loose], minlength=orders.size) > REAL_REFINE_CELLS
        if level == REAL_LEVELS:
            over[:] = True
        loose &= ~over[order]
        np.maximum.at(supremum, order[~loose], bound[~loose])
        start, order = start[loose], order[loose]
    return supremum


def _elementwise(starts, gap, alphas, threshold, sigma_threshold):
    """The pair divergences ``(a, a + gap)`` at one order each (``alphas``), a chunk at a time."""
    out = np.empty(starts.size)
    for first in range(0, starts.size, READ_VALUES):
        a = starts[first:first + READ_VALUES]
        out[first:first + READ_VALUES] = _pair_divergence(
            a, a + gap, threshold, sigma_threshold, alphas[first:first + READ_VALUES])
    return out


def _pair_divergence(a, b, threshold, sigma_threshold, orders):
    """``max(D_alpha(Ber(p_a) || Ber(p_b)), D_alpha(Ber(p_b) || Ber(p_a)))``, broadcast
    (``a``, ``b``: counts ``(n, 1)``; ``orders``: ``(1, A)``), rounded up."""
    with np.errstate(over="ignore", invalid="ignore"):
        za = (a - threshold) / sigma_threshold
        zb = (b - threshold) / sigma_threshold
    pa, pb = _log_probabilities(za), _log_probabilities(zb)
    up = _bernoulli_divergence(pa, pb, orders)
    down = _bernoulli_divergence(pb, pa, orders)
    return np.maximum(up, down)


def _log_probabilities(z):
    """``(log p, log q, their error bounds)`` for ``p = Phi(z)``, ``q = 1 - p`` (the bounds:
    docs/explanation/screening.md#screening-rounding)."""
    from scipy.special import log_ndtr

    eps = np.finfo(np.float64).eps
    lp, lq = log_ndtr(z), log_ndtr(-z)
    with np.errstate(over="ignore", invalid="ignore"):
        spread = 2.0 * eps * np.abs(z)
        log_density = -0.5 * z * z - 0.5 * math.log(2.0 * math.pi)
        ep = eps * (_LOG_NDTR_ULPS * np.abs(lp) + 1.0) + np.exp(log_density - lp) * spread
        eq = eps * (_LOG_NDTR_ULPS * np.abs(lq) + 1.0) + np.exp(log_density - lq) * spread
    return lp, lq, ep, eq


def _bernoulli_divergence(first, second, orders):
    """An upper bound, tight to a few ulps, on ``D_alpha(Ber(p) || Ber(p2))`` from
    :func:`_log_probabilities` of each (``(n, 1)``), at ``orders`` ``(1, A)``, summed
    without cancellation (docs/explanation/screening.md#screening-rounding)."""
    eps = np.finfo(np.float64).eps
    m = orders - 1.0
    lp, lq, ep, eq = first
    lp2, lq2, ep2, eq2 = second
    parts = [_part(lp, lp2, ep, ep2), _part(lq, lq2, eq, eq2)]
    with np.errstate(over="ignore", invalid="ignore"):
        total = sum(np.exp(weight) * (m * expm1_minus(inner, _SERIES_BELOW)
                                      + expm1_minus(m * outer, _SERIES_BELOW))
                    for weight, inner, outer in parts)
        value = np.log1p(total) / m
    redo = ~np.isfinite(value) | (np.minimum(np.minimum(lp, lq), np.minimum(lp2, lq2)) < -700.0)
    if redo.any():
        def chosen(array):
            return np.broadcast_to(array, value.shape)[redo]
        value[redo] = _careful_divergence(
            *((chosen(weight), chosen(inner), chosen(outer)) for weight, inner, outer in parts),
            chosen(m))
    return value * (1.0 + _RESULT_ULPS * eps)


def _part(log_weight, log_weight2, error, error2):
    """``(log w raised, inner, outer)``: ``w (m E(inner) + E(m outer))`` is at least the
    part's largest value for ``t = log w - log w2`` within its error; per count, ``(n, 1)``."""
    eps = np.finfo(np.float64).eps
    with np.errstate(invalid="ignore"):  # -inf - -inf: a probability 0 on both sides
        t = log_weight - log_weight2
        spread = error + error2 + eps * np.abs(t)
        straddles = np.abs(t) <= spread
        outer = np.where(straddles, np.abs(t) + spread, t + np.sign(t) * spread)
    return log_weight + error + 2.0 * eps, np.where(straddles, outer, -outer), outer


def _careful_divergence(first, second, m):
    """:func:`_bernoulli_divergence`'s sum in log space, elementwise, from the two parts'
    ``(log w raised, inner, outer)``: no overflow, no product of 0 and infinity."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        log_s = np.logaddexp(*[weight + np.logaddexp(np.log(m) + log_expm1_minus(inner),
                                                     log_expm1_minus(m * outer))
                               for weight, inner, outer in (first, second)])
        return np.logaddexp(0.0, log_s) / m


# scipy's log_ndtr's error: this many ulps plus one ulp of 1 (measured:
# docs/explanation/screening.md#screening-rounding)
_LOG_NDTR_ULPS = 4.0
# E(t) by its series below |t| = 1/4, by expm1(t) - t above: within 8 ulps of E there
_SERIES_BELOW = 0.25
# that, the sums, log1p and division above: a few ulps more
_RESULT_ULPS = 24.0
