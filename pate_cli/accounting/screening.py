"""The exact data-independent RDP of the threshold (screening) step, MATH.md section 17.

The step releases one bit ``b = [c + N(0, sigma1^2) >= T]``, a Bernoulli of
``p_c = Phi((c - T) / sigma1)``, and a neighbouring data set moves the compared count ``c``
by at most ``D`` (the step's sensitivity: 1, or a group's ``D_g``, MATH.md s.9). Its RDP is

    rdp_sel(alpha) = sup over reachable c, c' with |c - c'| <= D of
        log( p_c^alpha p_c'^(1-alpha) + (1-p_c)^alpha (1-p_c')^(1-alpha) ) / (alpha - 1)

Two facts make the supremum computable:

- For fixed ``p`` the Rényi divergence ``D_alpha(Ber(p) || Ber(p'))`` grows as ``p'`` moves
  away from ``p`` (either side), and for fixed ``p'`` it grows as ``p`` moves away from
  ``p'``. ``p_c`` increases with ``c``, so over ``|c' - c| <= D`` the supremum sits at
  ``c' = c +- D``, and for ``c`` in a cell ``[a, b]`` both directions of the pair
  ``(c, c + D)`` are at most those of ``(a, b + D)`` (``p_a <= p_c < p_{c+D} <= p_{b+D}``).
- The bit is a post-processing of ``c + N(0, sigma1^2)``, so the result never exceeds the
  Gaussian curve ``alpha D^2 / (2 sigma1^2)`` of MATH.md s.2; a final ``minimum`` enforces
  it in floating point too.

**Integer counts** (plain votes: ``c = max_j n_j`` lies in ``0..M``, integer ``D``): the
reachable counts are the integers of ``[low, high]`` and the neighbour's count is one of
them too, so every pair ``(c, c + D)`` inside the range is evaluated in both directions;
the supremum over this finite set is exact.

**Real counts** (weighted or rescaled votes, Interactive's ``max_j (n_j - M p_j)``): ``s.4``
rounds the count (``rint``) in the data-dependent bound, but the mechanism compares the
unrounded count, and even a rounding mechanism would see rounded counts move by up to 2
(``rint(0.5) = 0``, ``rint(1.5) = 2``); the integer grid is therefore not valid. The
supremum over ``c`` in ``[low, high]`` (every neighbour ``c +- D`` allowed, also outside
it: a superset) is bounded by cells: ``[low - D, high]`` is cut into cells of width ``w``
and each cell contributes the pair ``(a, b + D)``, the bound above. The result is a
certified upper bound, at most about ``(1 + w / D)^2`` times the supremum; ``w`` is
``D / 32``, widened when the range is so long that the cells times the orders would
exceed ``REAL_CELL_LIMIT`` (the bound stays valid, only looser).

Everything is in log space (``log_ndtr`` for ``log p`` and ``log(1 - p)``), vectorised over
orders and chunked over counts, so memory is bounded whatever ``M``. A value that cannot
be evaluated in floating point (gaps beyond the floats) falls back to the Gaussian curve.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from ..orders import validate_orders
from ..work_sizes import READ_VALUES
from .validators import check_positive

# Real counts: at most this many cells x orders (the cell width grows beyond it).
REAL_CELL_LIMIT = 1 << 22
REAL_CELLS_PER_STEP = 32


def rdp_screening(*, threshold: float, sigma_threshold: float, low: float, high: float,
                  orders: ArrayLike, integer: bool = True,
                  sensitivity: float = 1.0) -> np.ndarray:
    """The exact data-independent RDP of the threshold step (MATH.md s.17), one value per
    order, never above ``alpha sensitivity^2 / (2 sigma1^2)``.

    ``low``/``high`` bound the counts the step may compare (``0`` and ``M`` for plain
    votes); ``integer`` says they are integers (then ``sensitivity`` must be one too);
    ``sensitivity`` is how far one neighbour moves the count (``D``, MATH.md s.9).
    """
    orders = validate_orders(orders)
    check_positive(sigma_threshold, "sigma_threshold")
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


# A memo of a pure function of its arguments (the same bits whether it hits or not): a
# run asks for the same curve from several places (totals, columns, the cap of s.4).
@lru_cache(maxsize=32)
def _curve(threshold, sigma_threshold, low, high, integer, sensitivity, orders):
    orders = np.array(orders)
    gaussian = orders * sensitivity**2 / (2.0 * sigma_threshold**2)
    if integer:
        starts = np.arange(low, high - sensitivity + 1.0)  # c with c + D in range
        width = 0.0
    else:
        cells = max(1, math.ceil((high - low + sensitivity) * REAL_CELLS_PER_STEP / sensitivity))
        cells = min(cells, max(1, REAL_CELL_LIMIT // orders.size))
        width = (high - low + sensitivity) / cells
        starts = (low - sensitivity) + width * np.arange(cells)
    if starts.size == 0:  # one reachable count: the bit never changes
        return np.zeros_like(orders)
    supremum = np.full(orders.size, -np.inf)
    rows = max(1, READ_VALUES // orders.size)
    for first in range(0, starts.size, rows):  # chunks of counts, not queries
        a = starts[first:first + rows, None]
        pair = _pair_divergence(a, a + width + sensitivity, threshold, sigma_threshold,
                                orders[None, :])
        supremum = np.maximum(supremum, pair.max(axis=0))  # NaN stays NaN
    result = np.fmin(supremum, gaussian)  # NaN (not evaluable) -> the Gaussian curve
    return np.maximum(result, 0.0)


def _pair_divergence(a, b, threshold, sigma_threshold, orders):
    """``max(D_alpha(Ber(p_a) || Ber(p_b)), D_alpha(Ber(p_b) || Ber(p_a)))``, broadcast
    (``a``, ``b``: counts ``(n, 1)``; ``orders``: ``(1, A)``)."""
    from scipy.special import log_ndtr

    with np.errstate(over="ignore", invalid="ignore"):
        za = (a - threshold) / sigma_threshold
        zb = (b - threshold) / sigma_threshold
    lpa, lqa = log_ndtr(za), log_ndtr(-za)
    lpb, lqb = log_ndtr(zb), log_ndtr(-zb)
    up = _bernoulli_divergence(lpa, lqa, lpb, lqb, orders)
    down = _bernoulli_divergence(lpb, lqb, lpa, lqa, orders)
    return np.maximum(up, down)


def _bernoulli_divergence(lp, lq, lp2, lq2, orders):
    """``D_alpha(Ber(p) || Ber(p2))`` from ``log p``, ``log(1 - p)`` and the same of ``p2``
    (per count, ``(n, 1)``), at ``orders`` ``(1, A)``.

    ``S = log(p e^{t1} + q e^{t2})`` with ``t1 = (alpha - 1) log(p / p2)`` and
    ``t2 = (alpha - 1) log(q / q2)``; since ``p + q = 1``,
    ``S = log1p(p expm1(t1) + q expm1(t2))``: accurate for small ``S`` (orders near 1,
    close counts: no ``log`` of a sum near 1) and for large ``S``. Where that overflows,
    or where ``p`` or ``q`` is below the normal floats, the log-space form is used
    (``_careful_divergence``). ``D = S / (alpha - 1)``.
    """
    m = orders - 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        x = lp - lp2
        y = lq - lq2
        s = np.exp(lp) * np.expm1(m * x) + np.exp(lq) * np.expm1(m * y)
        value = np.log1p(s) / m
    tiny = (np.minimum(np.minimum(lp, lq), np.minimum(lp2, lq2)) < -700.0).reshape(-1)
    redo = ~np.isfinite(value)
    redo[tiny, :] = True
    if redo.any():
        rows, cols = np.nonzero(redo)
        value[rows, cols] = _careful_divergence(
            lp.reshape(-1)[rows], lq.reshape(-1)[rows], x.reshape(-1)[rows],
            y.reshape(-1)[rows], m.reshape(-1)[cols])
    return value


def _careful_divergence(lp, lq, x, y, m):
    """The same in log space, elementwise: ``logaddexp`` where ``S >= 1``, else ``log1p`` of
    the two terms each formed as ``exp(log weight + log|expm1(t)|)`` (no ``0 * inf``)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        t1, t2 = m * x, m * y
        big = np.logaddexp(lp + t1, lq + t2)
        small = np.log1p(_signed_term(lp, t1) + _signed_term(lq, t2))
        return np.where(big < 1.0, small, big) / m


def _signed_term(log_weight, t):
    """``exp(log_weight) * expm1(t)`` without overflow or ``0 * inf``."""
    magnitude = np.where(np.abs(t) < 1.0, np.log(np.abs(np.expm1(t))),
                         np.where(t > 0, t + np.log1p(-np.exp(-np.abs(t))),
                                  np.log1p(-np.exp(-np.abs(t)))))
    return np.sign(t) * np.exp(np.minimum(log_weight + magnitude, 700.0))
