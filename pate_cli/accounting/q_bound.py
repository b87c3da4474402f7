"""A certified integral upper bound on GNMax's q (``--q-bound integral``, math:integral):
``min(Prop. 7, A, B)`` over a grid of points, sharpened by log-concavity, capped at
``log(1 - 1/K)``. Derivation: docs/explanation/data-dependent.md#integral-bound.
"""

from __future__ import annotations

import math
from functools import cache, lru_cache

import numpy as np
from numpy.typing import ArrayLike

from ..numerics import log1mexp
from ..vote_rows import VoteRows, vote_rows
from .gnmax import log_q_gnmax
from .validators import check_std

Q_BOUNDS = ("union", "integral")
FLOOR = -50.0
_LEFT, _CORE, _RIGHT = 12, 96, 8
POINTS = _LEFT + _CORE + _RIGHT
_SINGLES = 7
_LATTICE = 4096  # points per unit of t: the lattice is 2^-12 Z (exact in binary)
_TABLE_HALF_WIDTH = 40  # the table covers [-40, 40]; log Phi(40) rounds to -0.0
_TAIL_NATS = 30.0
_UNDERFLOW = -700.0
_ROUNDING = 1e-9
_ROWS_PER_BLOCK = 256
_CHORD_LIMIT = math.log1p(-1e-4)


def check_q_bound(q_bound: str) -> None:
    """Raise ``ValueError`` unless ``q_bound`` is ``union`` or ``integral``."""
    if q_bound not in Q_BOUNDS:
        raise ValueError(f"q bound must be one of {', '.join(Q_BOUNDS)}, got {q_bound!r}")


def log_q_bound(votes: ArrayLike, *, sigma: float, q_bound: str = "union") -> np.ndarray:
    """``log q`` for GNMax by the chosen bound: Prop. 7 (``union``) or :func:`log_q_integral`."""
    check_q_bound(q_bound)
    if q_bound == "union":
        return log_q_gnmax(votes, sigma=sigma)
    return log_q_integral(votes, sigma=sigma)


def log_q_integral(votes: ArrayLike | VoteRows, *, sigma: float) -> np.ndarray:
    """Certified upper bound on log q, never above Prop. 7's (math:integral).

    Args:
      votes: ``(queries, K)`` or a :class:`VoteRows` chunk, whose zero block (math:sparse)
        is charged as the dense row's would be.

    Returns:
      ``log q``, shape ``(queries,)``.
    """
    form = vote_rows(votes)
    check_std(sigma, "sigma")
    union = log_q_gnmax(form, sigma=sigma)
    classes = form.vocabulary
    rows = np.flatnonzero(union > FLOOR) if classes > 2 else np.zeros(0, dtype=np.intp)
    if rows.size == 0:
        return union
    out = union.copy()
    cap = form.cap
    for lo in range(0, rows.size, _ROWS_PER_BLOCK):
        chosen = rows[lo : lo + _ROWS_PER_BLOCK]
        block = form.counts[chosen]
        if form.zeros:  # one zero-vote class in the matrix: a runner-up exists
            block = np.concatenate((block, np.zeros((chosen.size, 1))), axis=1)
        top = np.argmax(block, axis=1)
        plurality = block[np.arange(chosen.size), top]
        gaps = (plurality[:, None] - block) / sigma
        gaps[np.arange(chosen.size), top] = np.inf
        gaps = np.sort(gaps, axis=1)[:, : block.shape[1] - 1]
        bound = _integral_bound(gaps, union[chosen], plurality / sigma, int(classes) - 2)
        out[chosen] = np.minimum(np.minimum(union[chosen], bound), cap)
    return out


def _integral_bound(gaps: np.ndarray, log_union: np.ndarray, zero_gap: np.ndarray,
                    total: int) -> np.ndarray:
    """``log min(A, B)`` (math:integral) for rows of sorted gaps ``(rows, columns - 1)``, then
    ``zero_gap`` (per row) up to ``total`` gaps after the runner-up (a zero block's)."""
    from scipy.special import log_ndtr, logsumexp

    runner_up = gaps[:, 0]
    t = _grid(runner_up, log_union)  # (rows, points), on the lattice
    steps = np.rint(t * _LATTICE).astype(np.int64)
    log_cdf = _lattice_log_ndtr(steps)
    log_mass = _log_interval_masses(t, log_cdf, _lattice_log_ndtr(-steps))  # (rows, points - 1)
    log_first = log_ndtr(runner_up[:, None] + t)  # log Phi(a_1 + t_k), exact
    log_others = _log_others(gaps[:, 1:], steps, zero_gap, total)  # <= log G'(t_k)
    chord = _Chord(t, log_mass)
    log_upper_tail = log_ndtr(-t[:, -1])
    log_all = np.minimum(log_first + log_others, 0.0)
    not_all = chord.log_not_g(log_all)
    bound_a = np.concatenate((
        log_cdf[:, :1], log_mass + not_all,
        (log_upper_tail + log1mexp(log_all[:, -1]))[:, None]), axis=1)
    others = np.minimum(log_others, 0.0)
    bound_b = np.concatenate((
        log_ndtr(-runner_up / math.sqrt(2.0))[:, None],
        log_cdf[:, :1],
        log_mass + log_first[:, 1:] + chord.log_not_g(others),
        (log_upper_tail + log1mexp(others[:, -1]))[:, None]), axis=1)
    with np.errstate(divide="ignore"):
        best = np.minimum(logsumexp(bound_a, axis=1), logsumexp(bound_b, axis=1))
    return np.logaddexp(best, _UNDERFLOW) + _ROUNDING


class _Chord:
    """Upper bounds on ``(1/mass_k) integral_{t_k}^{t_{k+1}} phi(t) (1 - G(t)) dt`` for a
    log-concave ``G`` from ``S = log G`` at the points: the smallest of three certified values
    (docs/explanation/data-dependent.md#integral-bound)."""

    def __init__(self, t: np.ndarray, log_mass: np.ndarray):
        from scipy.special import log_ndtr

        self.t = t
        self.width = t[:, 1:] - t[:, :-1]
        self.log_mass = log_mass
        log_pdf = -0.5 * t * t - 0.5 * math.log(2.0 * math.pi)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            moment = (np.exp(log_pdf[:, :-1] - log_mass) - np.exp(log_pdf[:, 1:] - log_mass)
                      - t[:, :-1])
            share = np.clip(moment / self.width, 0.0, 1.0)
        share = np.where(np.isfinite(share), share, 1.0)  # empty: the right end
        with np.errstate(divide="ignore"):
            self.log_share, self.log_rest = np.log(share), np.log1p(-share)
        self._log_ndtr = log_ndtr

    def log_not_g(self, log_g: np.ndarray) -> np.ndarray:
        """``log`` of the bound on the mean of ``1 - G`` over each interval."""
        left, right = log_g[:, :-1], log_g[:, 1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            best = log1mexp(left)
            negative = np.log(-log_g)
            linear = np.logaddexp(negative[:, :-1] + self.log_rest,
                                  negative[:, 1:] + self.log_share)
            best = np.minimum(best, np.where(np.isnan(linear), np.inf, linear))
        # The closed form only where it can be usable: the chord's G is at least
        # min(G_k, G_{k+1}) = G_k, so G_k must be below 1 - 10^-4.
        rows, cols = np.nonzero(left < _CHORD_LIMIT)
        if rows.size == 0:
            return best
        lo, hi = left[rows, cols], right[rows, cols]
        t_lo, t_hi = self.t[rows, cols], self.t[rows, cols + 1]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope = (hi - lo) / (t_hi - t_lo)
            slope = np.where(np.isfinite(slope), slope, 0.0)
            log_x = (lo - slope * t_lo + 0.5 * slope * slope
                     + _log_pair_mass(t_lo - slope, t_hi - slope, self._log_ndtr)
                     - self.log_mass[rows, cols])
            usable = np.isfinite(log_x) & (log_x < _CHORD_LIMIT)
            exact = log1mexp(np.where(usable, log_x, -1.0))
        best[rows, cols] = np.where(usable, np.minimum(best[rows, cols], exact),
                                    best[rows, cols])
        return best


def _log_pair_mass(a: np.ndarray, b: np.ndarray, log_ndtr) -> np.ndarray:
    """``log(Phi(b) - Phi(a))`` for ``a < b``, by ``log_ndtr(-x)`` right of 0."""
    flip = a >= 0.0
    lo, hi = np.where(flip, -b, a), np.where(flip, -a, b)
    log_hi = log_ndtr(hi)
    return log_hi + log1mexp(np.minimum(log_ndtr(lo) - log_hi, 0.0))


def _grid(runner_up: np.ndarray, log_union: np.ndarray) -> np.ndarray:
    """Per-row points: ``t_0`` far in the left tail, dense around ``c = -a_1/2``."""
    center = -0.5 * runner_up
    # Phi(t) <= exp(-t^2 / 2) for t <= 0: log Phi(t_0) <= log_union - 30.
    first = np.minimum(-np.sqrt(2.0 * (_TAIL_NATS - np.minimum(log_union, 0.0))),
                       center - 5.0)
    u_left = np.arange(_LEFT) / _LEFT
    u_core = np.arange(_CORE) / _CORE
    u_right = np.arange(_RIGHT + 1) / _RIGHT
    low = center - 4.0
    t = np.concatenate((
        first[:, None] + (low - first)[:, None] * u_left,
        low[:, None] + 8.0 * u_core,
        (center + 4.0)[:, None] + 4.0 * u_right), axis=1)
    t = np.rint(t * _LATTICE) / _LATTICE
    # Rounding keeps the order (spacings are far above the lattice step).
    return t


def _log_interval_masses(t: np.ndarray, log_cdf: np.ndarray,
                         log_sf: np.ndarray) -> np.ndarray:
    """``log(Phi(t_{k+1}) - Phi(t_k))``: differences of ``log_ndtr(t)`` left of 0 and of
    ``log_ndtr(-t)`` right of it (no cancellation either side); ``-inf`` for empty ones."""
    right = t[:, :-1] >= 0.0
    upper = np.where(right, log_sf[:, :-1], log_cdf[:, 1:])
    lower = np.where(right, log_sf[:, 1:], log_cdf[:, :-1])
    return upper + log1mexp(np.minimum(lower - upper, 0.0))


def _log_others(others: np.ndarray, steps: np.ndarray, zero_gap: np.ndarray,
                total: int) -> np.ndarray:
    """A lower bound on ``sum_{j >= 2} log Phi(a_j + t_k)``, shape ``(rows, points)``.

    ``others``: sorted gaps after the runner-up, going on with ``zero_gap`` (per row) up to
    ``total`` gaps (a zero block's, never formed). Buckets charge their smallest gap; each gap
    is rounded down to the lattice and the table read there (``log Phi`` increases).
    """
    if total == 0:
        return np.zeros(steps.shape)
    starts, counts = _buckets(total)
    table, offset = _log_cdf_table()
    formed = starts < others.shape[1]
    smallest = np.empty((others.shape[0], starts.size))
    smallest[:, formed] = others[:, starts[formed]]
    smallest[:, ~formed] = zero_gap[:, None]
    base = np.floor(smallest * _LATTICE)  # may be +inf for far classes
    base = np.minimum(base, 2 * offset).astype(np.int64)
    index = base[:, :, None] + steps[:, None, :] + offset + 1
    np.clip(index, 0, table.size - 1, out=index)
    values = table[index]  # (rows, buckets, points)
    return np.einsum("rbp,b->rp", values, counts)


@cache
def _buckets(others: int) -> tuple[np.ndarray, np.ndarray]:
    """Start index and size of each bucket of ``others`` sorted gaps: ``_SINGLES`` of size
    one, then sizes 2, 4, 8, ... (the last one takes what is left)."""
    starts, counts = [], []
    position, size = 0, 1
    while position < others:
        if position >= _SINGLES:
            size *= 2
        take = min(size, others - position)
        starts.append(position)
        counts.append(float(take))
        position += take
    return np.array(starts, dtype=np.intp), np.array(counts)


def _lattice_log_ndtr(steps: np.ndarray) -> np.ndarray:
    """``log_ndtr(steps / 2^12)``, read from :func:`_log_cdf_table` (which holds those very
    values) where it covers every point, else computed."""
    table, offset = _log_cdf_table()
    if steps.size and np.abs(steps).max() > offset:
        from scipy.special import log_ndtr
        return log_ndtr(steps / _LATTICE)
    return table[steps + offset + 1]


@lru_cache(maxsize=1)
def _log_cdf_table() -> tuple[np.ndarray, int]:
    """``log_ndtr`` on ``[-40, 40]`` with step 2^-12, with ``-inf`` in front for arguments
    below the table (``Phi`` there is below e^-800: charging 0 is a lower value)."""
    from scipy.special import log_ndtr

    offset = _TABLE_HALF_WIDTH * _LATTICE
    grid = np.arange(-offset, offset + 1) / _LATTICE
    return np.concatenate(([-np.inf], log_ndtr(grid))), offset
