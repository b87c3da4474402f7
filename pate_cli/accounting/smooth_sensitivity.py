"""Smooth-sensitivity sanitisation of the data-dependent epsilon (GNSS).

MATH.md section 10 (the authority), after Appendix B of Papernot et al. 2018, "Scalable
Private Learning with PATE". Everything is at one fixed Rényi order ``alpha``.

Pieces, bottom up:

* scalar functions of ``(sigma, order, K)``: ``dep`` (section 3 without its validity
  checks), ``log q0`` (where ``dep`` meets ``alpha / sigma^2``), ``log q1 = log B_L(q0)``
  and the plateau ``LS(q1)``, cached once in :class:`GNMaxSmoothConstants`;
* local sensitivity at ``q`` (Algorithm 3) and at distance ``d`` (Algorithms 4-5, the
  "left" and "right" walks), vectorised over queries *and* steps: the state of a walk after
  ``d`` steps has a closed form (right: ``d`` votes moved from the largest class to the
  runner-up; left: the largest class gains ``d`` votes drained from the top of the rest,
  levelled like water), so a chunk of queries' walks is array arithmetic;
* the threshold step at distance ``d`` from a table ``r[v]``, ``v = 0..M``, computed once
  per (T, sigma1, order, M) in :class:`ThresholdSmoothConstants`;
* :class:`SmoothSensitivityAccumulator`, which adds chunks of queries (bounded memory)
  and finishes with the beta / sigma_ss search and the report;
* :func:`sanitize_confident` and :func:`sanitize_gnmax`, one-call front ends, and
  :func:`check_conditions` (C5 and C6).

No I/O here: the caller (``analysis`` / the CLI) reads votes and prints results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import erfcinv, log_ndtr, logsumexp, ndtr, ndtri_exp

from ..numerics import log1mexp
from .gnmax import LINEAR_FLOOR, log_q_gnmax, rdp_gnmax, theorem6_terms
from .threshold import log_pr_answered, rdp_threshold
from .validators import as_teachers, as_votes, check_order, check_positive, check_positive_integer

# Step caps of the iterative solvers (they raise rather than return an unchecked value).
_BRENT_MAXITER = 200
_BRACKET_STEPS = 200
# Elements of a (walk states x groups) work array evaluated at once (~1 MB per array).
_STATE_ELEMENTS = 1 << 17
# Walk states whose local sensitivity is evaluated at once.
_LS_BLOCK = 1 << 15
# Rows of a (distinct max votes x distances) work array for the threshold step.
_THRESHOLD_ELEMENTS = 1 << 21
DEFAULT_CHUNK = 4096


# --------------------------------------------------------------------------------------
# Scalar functions of (sigma, order, K): MATH.md section 10, "Where the data-dependent
# bound stops helping" and "How far one teacher moves q".
# --------------------------------------------------------------------------------------


def dep_gnmax(log_q, *, sigma: float, order: float) -> np.ndarray:
    """Section 3's data-dependent bound *without* its validity checks (MATH.md s.10).

    ``dep(log q) = logaddexp(log(1-q) + log A, log q + log B) / (alpha - 1)`` with
    ``log A``, ``log B`` of section 3. ``log q = -inf`` gives 0. Only meaningful for
    ``log q <= ub`` (see :func:`log_q0_gnmax`); elsewhere the result may be NaN.
    """
    log_q = np.asarray(log_q, dtype=np.float64)
    out = np.zeros(log_q.shape)
    finite = np.isfinite(log_q)
    x = log_q[finite]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mu1, mu2, e1, e2 = theorem6_terms(x, sigma)
        log1q = log1mexp(x)
        inner = (x + e2) * (1.0 - 1.0 / mu2)
        outside = ~(inner <= 0.0)  # the formula has no real value there
        log_a = (order - 1.0) * (log1q - log1mexp(np.where(outside, -1.0, inner)))
        log_a[outside] = np.nan
        log_b = (order - 1.0) * (e1 - x / (mu1 - 1.0))
        out[finite] = np.logaddexp(log1q + log_a, x + log_b) / (order - 1.0)
    return out


def log_q0_gnmax(*, sigma: float, order: float) -> float:
    """``log q0``: where ``dep`` meets ``alpha / sigma^2`` (MATH.md section 10).

    ``ub = min(-(1 + 1/sigma)^2, -((alpha - 0.99)/sigma)^2, -1/sigma^2)``; if
    ``dep(ub) < alpha/sigma^2`` the answer is ``ub``, else the lower end is pushed down
    (``lb = 2 ub``, then ``lb *= 1.5``) until ``dep(lb) <= alpha/sigma^2`` and the root of
    ``dep - alpha/sigma^2`` on ``[lb, ub]`` is found by Brent's method. Both loops are
    capped; a failure raises ``RuntimeError`` instead of returning an unchecked value.
    """
    check_positive(sigma, "sigma")
    check_order(order)
    independent = order / (sigma * sigma)

    def excess(x: float) -> float:
        return float(dep_gnmax(np.array([x]), sigma=sigma, order=order)[0]) - independent

    ub = min(-((1.0 + 1.0 / sigma) ** 2), -(((order - 0.99) / sigma) ** 2), -1.0 / sigma**2)
    at_ub = excess(ub)
    if np.isnan(at_ub):
        raise RuntimeError(f"dep is undefined at ub={ub!r} (sigma={sigma}, order={order})")
    if at_ub < 0:
        return ub
    lb = 2.0 * ub
    for _ in range(_BRACKET_STEPS):
        value = excess(lb)
        if np.isnan(value):
            raise RuntimeError(f"dep is undefined at lb={lb!r} (sigma={sigma}, order={order})")
        if value <= 0:
            break
        lb *= 1.5
    else:
        raise RuntimeError(f"could not bracket log q0 (sigma={sigma}, order={order})")
    if value == 0:
        return lb
    root, info = brentq(excess, lb, ub, maxiter=_BRENT_MAXITER, full_output=True,
                        disp=False)
    if not info.converged:
        raise RuntimeError(f"Brent's method did not converge for log q0 "
                           f"(sigma={sigma}, order={order}): {info.flag}")
    return float(root)


def _log_erfc_shifted(log_q, *, shift: float, classes: int) -> np.ndarray:
    """``log((K-1)/2 * erfc(shift + erfcinv(2q/(K-1))))``, with erfc via ``log_ndtr``.

    ``erfc(x) = 2 Phi(-sqrt(2) x)``, so the log stays accurate where erfc underflows.
    """
    log_q = np.asarray(log_q, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore"):
        return _log_erfc_at(erfcinv(2.0 * np.exp(log_q) / (classes - 1)), shift, classes)


def _log_erfc_at(inverse, shift: float, classes: int) -> np.ndarray:
    return math.log(classes - 1) + log_ndtr(-math.sqrt(2.0) * (shift + inverse))


def log_b_lower(log_q, *, sigma: float, classes: int) -> np.ndarray:
    """``log B_L(q)``, ``B_L(q) = (K-1)/2 erfc(1/sigma + erfcinv(2q/(K-1)))`` (s.10)."""
    return _log_erfc_shifted(log_q, shift=1.0 / sigma, classes=classes)


def log_b_upper(log_q, *, sigma: float, classes: int) -> np.ndarray:
    """``log B_U(q)``, ``B_U(q) = min(1, (K-1)/2 erfc(-1/sigma + erfcinv(2q/(K-1))))``."""
    return np.minimum(0.0, _log_erfc_shifted(log_q, shift=-1.0 / sigma, classes=classes))


def rdp_gnss(beta, *, sigma_ss, order: float):
    """RDP of the GNSS release (Theorem 23; MATH.md section 10), ``1 < alpha < 1/(2 beta)``.

    ``alpha exp(2 beta) / sigma_ss^2 + (-0.5 log(1 - 2 alpha beta) + beta alpha) / (alpha-1)``.
    Vectorised over ``beta`` and ``sigma_ss``.
    """
    beta = np.asarray(beta, dtype=np.float64)
    sigma_ss = np.asarray(sigma_ss, dtype=np.float64)
    if np.any(beta <= 0) or np.any(2.0 * order * beta >= 1.0) or order <= 1:
        raise ValueError("rdp_gnss needs beta > 0 and 1 < order < 1/(2 beta)")
    return (order * np.exp(2.0 * beta) / sigma_ss**2
            + (-0.5 * np.log1p(-2.0 * order * beta) + beta * order) / (order - 1.0))


@dataclass(frozen=True)
class GNMaxSmoothConstants:
    """Scalars of the GNMax step's smooth-sensitivity analysis for one (sigma, order, K).

    Computed once by :meth:`compute` (MATH.md section 10): ``log_q0``, ``log_q1 =
    log B_L(q0)``, ``independent = alpha/sigma^2`` and ``plateau = LS(q1)``.
    """

    sigma: float
    order: float
    classes: int
    log_q0: float
    log_q1: float
    independent: float
    plateau: float

    @classmethod
    def compute(cls, *, sigma: float, order: float, classes: int) -> GNMaxSmoothConstants:
        check_positive(sigma, "sigma")
        if int(classes) != classes or classes < 2:
            raise ValueError(f"classes must be an integer >= 2, got {classes!r}")
        classes = int(classes)
        log_q0 = log_q0_gnmax(sigma=sigma, order=order)
        log_q1 = float(log_b_lower(np.array([log_q0]), sigma=sigma, classes=classes)[0])
        partial = cls(sigma=float(sigma), order=float(order), classes=classes, log_q0=log_q0,
                      log_q1=log_q1, independent=order / sigma**2, plateau=math.nan)
        plateau = float(local_sensitivity_at(np.array([log_q1]), constants=partial)[0])
        return cls(sigma=float(sigma), order=float(order), classes=classes, log_q0=log_q0,
                   log_q1=log_q1, independent=order / sigma**2, plateau=plateau)


def rdp_ss(log_q, *, constants: GNMaxSmoothConstants) -> np.ndarray:
    """``rdp_ss(log q) = alpha/sigma^2 if log q >= log q0 else dep(log q)`` (s.10)."""
    log_q = np.asarray(log_q, dtype=np.float64)
    out = np.full(log_q.shape, constants.independent)
    below = log_q < constants.log_q0
    out[below] = dep_gnmax(log_q[below], sigma=constants.sigma, order=constants.order)
    return out


def local_sensitivity_at(log_q, *, constants: GNMaxSmoothConstants) -> np.ndarray:
    """Local sensitivity of ``rdp_ss`` at ``q`` (Algorithm 3; MATH.md section 10).

    If ``log q1 <= log q <= log q0`` use ``log q1``; then with ``b = rdp_ss(log q)``,
    ``LS = max(rdp_ss(log B_U(q)) - b, b - rdp_ss(log B_L(q)))``. Elementwise.
    """
    c = constants
    log_q = np.asarray(log_q, dtype=np.float64)
    at_q1 = (log_q >= c.log_q1) & (log_q <= c.log_q0)
    log_q = np.where(at_q1, c.log_q1, log_q)
    base = rdp_ss(log_q, constants=c)
    # B_U(B_L(q)) = q exactly, so B_U(q1) = q0, where rdp_ss is alpha/sigma^2. Computed in
    # floating point it may land just below q0, where dep can be far smaller (when q0 = ub
    # dep does not meet alpha/sigma^2 there); use the exact value instead.
    with np.errstate(divide="ignore", over="ignore"):
        inverse = erfcinv(2.0 * np.exp(log_q) / (c.classes - 1))  # shared by B_U and B_L
        log_upper = np.minimum(0.0, _log_erfc_at(inverse, -1.0 / c.sigma, c.classes))
        log_lower = _log_erfc_at(inverse, 1.0 / c.sigma, c.classes)
    log_upper[log_q == c.log_q1] = c.log_q0
    upper = rdp_ss(log_upper, constants=c)
    lower = rdp_ss(log_lower, constants=c)
    return np.maximum(upper - base, base - lower)


# --------------------------------------------------------------------------------------
# GNMax: local sensitivity at distance d (Algorithms 4-5), vectorised over the walks.
# --------------------------------------------------------------------------------------


def _groups(rest: np.ndarray, sentinel: bool):
    """Distinct values of each row of a descending ``rest`` and their multiplicities.

    Returns ``(values, counts)`` of shape ``(rows, G)``, padded with (0, 0); with
    ``sentinel`` one extra (0, 0) group always ends each row. The Prop. 7 sum only depends
    on the multiset of counts, so walk states are summed over groups instead of classes.
    """
    rows, width = rest.shape
    if width == 0:
        return np.zeros((rows, 1)), np.zeros((rows, 1))
    starts = np.ones((rows, width), dtype=bool)
    starts[:, 1:] = rest[:, 1:] != rest[:, :-1]
    group = np.cumsum(starts, axis=1) - 1
    size = int(group[:, -1].max()) + 1 + int(sentinel)
    flat = (np.arange(rows)[:, None] * size + group).ravel()
    counts = np.bincount(flat, minlength=rows * size).reshape(rows, size).astype(np.float64)
    values = np.zeros(rows * size)
    values[flat[starts.ravel()]] = rest[starts]
    return values.reshape(rows, size), counts


class _WalkTables:
    """Per-call tables for walk states: ``ndtr(-g / (sqrt(2) sigma))`` for integer gaps."""

    def __init__(self, constants: GNMaxSmoothConstants, largest_gap: int):
        self.constants = constants
        self.scale = math.sqrt(2.0 * constants.sigma**2)  # as log_q_gnmax
        self.largest = int(largest_gap)
        self.tail = ndtr(-(np.arange(self.largest + 1) / self.scale))
        self.cap = math.log(1.0 - 1.0 / constants.classes)

    def log_q(self, gaps: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Section 3's ``log q`` (with the cap) of states given as (gap, multiplicity) rows.

        ``gaps`` are integer gaps (``intp``; overwritten). The sum runs in linear space
        from the table, as ``log_q_gnmax`` does; states whose sum falls below
        ``LINEAR_FLOOR`` are redone in log space.
        """
        np.clip(gaps, 0, self.largest, out=gaps)
        total = np.einsum("ij,ij->i", self.tail.take(gaps), counts)
        with np.errstate(divide="ignore"):
            log_q = np.log(total)
        tiny = np.flatnonzero(~(total >= LINEAR_FLOOR))
        if tiny.size:
            terms = log_ndtr(-(gaps[tiny] / self.scale))
            with np.errstate(divide="ignore"):
                log_q[tiny] = logsumexp(terms, b=counts[tiny], axis=1)
        return np.minimum(log_q, self.cap)


def _segments(lengths: np.ndarray):
    """For ragged segments of ``lengths``: (segment id, position within the segment)."""
    lengths = lengths.astype(np.intp)
    owner = np.repeat(np.arange(lengths.size), lengths)
    starts = np.cumsum(lengths) - lengths
    return owner, np.arange(owner.size) - starts[owner]


class _RightWalk:
    """States of right walks: ``d`` votes moved from the largest class to the runner-up.

    After ``d`` moves the runner-up's gap is ``g1 - 2d``, every other class's gap grew
    smaller by ``d``: ``top - d - n_j``. The other classes enter as (count, multiplicity)
    groups.
    """

    def __init__(self, tables: _WalkTables, ordered: np.ndarray):
        self.tables = tables
        self.first_gap = (ordered[:, 0] - ordered[:, 1]).astype(np.intp)
        values, self.counts = _groups(ordered[:, 2:], sentinel=False)
        self.gaps = (ordered[:, :1] - values).astype(np.intp)
        self.width = values.shape[1] + 1

    def __call__(self, rows: np.ndarray, d: np.ndarray):
        gaps = np.empty((rows.size, self.width), dtype=np.intp)
        gaps[:, 0] = self.first_gap[rows] - 2 * d
        np.subtract(self.gaps[rows], d[:, None], out=gaps[:, 1:])
        counts = np.empty((rows.size, self.width))
        counts[:, 0] = 1.0
        np.take(self.counts, rows, axis=0, out=counts[:, 1:])
        return self.tables.log_q(gaps, counts), None

    def carries_on(self, log_q: np.ndarray, _runner) -> np.ndarray:
        return log_q < self.tables.constants.log_q1


class _LeftWalk:
    """States of left walks: the largest class gains ``d`` votes from the top of the rest.

    The rest is drained like water: with ``drained[g]`` the votes removed to bring every
    group above ``g`` down to ``values[g]`` and ``held[g]``/``total[g]`` the count and votes
    of the groups before ``g``, after ``d`` moves the first ``k`` elements of the rest
    share ``P_k - d`` votes as evenly as possible (levels ``h`` and ``h+1``) and the others
    keep their counts.
    """

    def __init__(self, tables: _WalkTables, ordered: np.ndarray):
        self.tables = tables
        self.top = ordered[:, 0].astype(np.intp)
        values, self.counts = _groups(ordered[:, 1:], sentinel=True)
        self.values = values.astype(np.intp)
        self.held = np.cumsum(self.counts, axis=1) - self.counts
        self.total = np.cumsum(self.counts * values, axis=1) - self.counts * values
        drained = self.total - self.held * values
        rows, self.groups = values.shape
        self.span = 2 * (tables.largest + 2)
        self.keys = (drained + (np.arange(rows) * self.span)[:, None]).ravel()
        self.width = self.groups + 2

    def __call__(self, rows: np.ndarray, d: np.ndarray):
        first = np.searchsorted(self.keys, d + rows * self.span, side="left")
        first -= rows * self.groups
        np.clip(first, 1, self.groups - 1, out=first)
        k = self.held[rows, first]
        votes = self.total[rows, first] - d
        level = np.floor(votes / k)
        extra = votes - level * k  # elements at level + 1
        new_top = self.top[rows] + d
        gaps = np.empty((rows.size, self.width), dtype=np.intp)
        counts = np.empty((rows.size, self.width))
        gaps[:, 0] = new_top - level.astype(np.intp)
        counts[:, 0] = k - extra
        gaps[:, 1] = gaps[:, 0] - 1
        counts[:, 1] = extra
        np.subtract(new_top[:, None], self.values[rows], out=gaps[:, 2:])
        np.multiply(self.counts[rows], np.arange(self.groups)[None, :] >= first[:, None],
                    out=counts[:, 2:])
        return self.tables.log_q(gaps, counts), level + (extra > 0)

    def carries_on(self, log_q: np.ndarray, runner: np.ndarray) -> np.ndarray:
        return (log_q > self.tables.constants.log_q0) & (runner > 0)


def _walk_entries(votes: np.ndarray, constants: GNMaxSmoothConstants, teachers: int):
    """The deviating prefix of each query's local-sensitivity curve (Algorithms 4-5).

    Returns ``(owner, distance, value, last)``: flat arrays of entries ``LS_i[d]`` for
    ``d = 0..last_i`` and, per query, ``last_i`` (``-1`` for queries whose whole curve is
    the plateau). Entries after ``last_i`` equal ``constants.plateau``.
    """
    c = constants
    queries, classes = votes.shape
    if not np.array_equal(votes, np.rint(votes)) or np.any(votes < 0):
        raise ValueError("the GNMax local-sensitivity walk needs non-negative integer votes")
    ordered = -np.sort(-votes, axis=1)
    log_q = log_q_gnmax(votes, sigma=c.sigma)
    last = np.full(queries, -1, dtype=np.intp)
    left = log_q > c.log_q0
    right = log_q < c.log_q1
    walking = np.flatnonzero(left | right)
    owners = [walking]
    distances = [np.zeros(walking.size, dtype=np.intp)]
    values = [local_sensitivity_at(log_q[walking], constants=c)]
    last[walking] = 0
    largest = int(max(teachers, ordered.sum(axis=1).max()))
    tables = _WalkTables(c, largest)
    limit = teachers - 1  # entries are d = 0 .. M-1

    # Right walks stop at the first state with log q >= log q1. As log q is at least the
    # runner-up's own term, that happens at the latest once the runner-up gap is <= g_q1.
    chosen = np.flatnonzero(right)
    if chosen.size and limit > 0:
        g_q1 = -tables.scale * float(ndtri_exp(np.array(c.log_q1)))
        bound = np.ceil((ordered[chosen, 0] - ordered[chosen, 1] - g_q1) / 2.0) + 1.0
        _run_walk(chosen, bound, limit, _RightWalk(tables, ordered[chosen]), c, last, owners,
                  distances, values)

    # Left walks stop at the first state with log q <= log q0 or runner-up count 0. As
    # log q <= log(K-1) + log Phi(-(g1 + d)/s), that happens once g1 + d >= g_q0.
    chosen = np.flatnonzero(left & (ordered[:, 1] > 0))
    if chosen.size and limit > 0:
        g_q0 = -tables.scale * float(ndtri_exp(np.array(c.log_q0 - math.log(classes - 1))))
        rest = ordered[chosen, 1:]
        bound = np.minimum(np.ceil(g_q0 - (ordered[chosen, 0] - rest[:, 0])) + 1.0,
                           rest.sum(axis=1))
        _run_walk(chosen, bound, limit, _LeftWalk(tables, ordered[chosen]), c, last, owners,
                  distances, values)
    return (np.concatenate(owners), np.concatenate(distances), np.concatenate(values), last)


def _run_walk(chosen, bound, limit, walk, c, last, owners, distances, values):
    """Materialise walk states ``d = 1..`` per query, find each walk's end, keep entries.

    ``bound`` is an upper bound on where each walk ends (closed form, see the caller);
    should rounding ever put the end beyond it, the walk goes on in further windows (at
    most ``limit`` steps in all). States are evaluated in cache-sized blocks.
    """
    active = np.arange(chosen.size)
    start = np.ones(chosen.size, dtype=np.intp)
    length = np.clip(bound, 1.0, float(limit)).astype(np.intp)
    block = max(1, _STATE_ELEMENTS // walk.width)
    while active.size:
        span = np.minimum(length[active], limit - start[active] + 1)
        owner, offset = _segments(span)
        d_all = start[active][owner] + offset
        rows_all = active[owner]
        log_q_all = np.empty(d_all.size)
        going = np.empty(d_all.size, dtype=bool)
        for lo in range(0, d_all.size, block):
            part = slice(lo, lo + block)
            log_q_part, runner_part = walk(rows_all[part], d_all[part])
            log_q_all[part] = log_q_part
            going[part] = walk.carries_on(log_q_part, runner_part)
        # Each walk keeps its entries up to and including its first stopping state.
        ends = np.cumsum(span) - 1
        stops = np.flatnonzero(~going)
        stopped_owner, first = np.unique(owner[stops], return_index=True)
        end = ends.copy()
        end[stopped_owner] = stops[first]
        keep = np.flatnonzero(np.arange(d_all.size) <= end[owner])
        owners.append(chosen[rows_all[keep]])
        distances.append(d_all[keep])
        for lo in range(0, keep.size, _LS_BLOCK):
            values.append(local_sensitivity_at(log_q_all[keep[lo : lo + _LS_BLOCK]],
                                               constants=c))
        last[chosen[active]] = d_all[end]
        unfinished = np.ones(active.size, dtype=bool)
        unfinished[stopped_owner] = False
        unfinished &= d_all[ends] < limit
        start[active] = d_all[ends] + 1
        length[active] = 2 * span
        active = active[unfinished]


def local_sensitivity_gnmax(votes, *, teachers: int, sigma: float, order: float,
                            constants: GNMaxSmoothConstants | None = None) -> np.ndarray:
    """Local sensitivity of the GNMax step at distance ``d = 0..M-1`` (Algorithms 4-5).

    ``votes``: ``(queries, K)`` non-negative integer votes; returns ``(queries, M)``.
    Materialises full curves: meant for tests and small inputs; accumulation over many
    queries goes through :class:`SmoothSensitivityAccumulator`, which never does.
    """
    votes = as_votes(votes)
    teachers = as_teachers(teachers)
    if constants is None:
        constants = GNMaxSmoothConstants.compute(sigma=sigma, order=order,
                                                 classes=votes.shape[1])
    owner, distance, value, _ = _walk_entries(votes, constants, teachers)
    out = np.full((votes.shape[0], teachers), constants.plateau)
    out[owner, distance] = value
    return out


# --------------------------------------------------------------------------------------
# Threshold step at distance d.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThresholdSmoothConstants:
    """``r[v] = rdp_sel(log_ndtr((v - T)/sigma1))`` and ``ls(v)`` for ``v = 0..M``.

    MATH.md section 10, "Threshold step at distance d"; computed once per
    (T, sigma1, order, M). ``ls`` is stored padded with ``M`` zeros on each side so that
    ``ls_padded[M + v]`` is ``ls(v)`` and out-of-range neighbours read 0.
    """

    threshold: float
    sigma_threshold: float
    order: float
    teachers: int
    r: np.ndarray = field(repr=False)
    ls_padded: np.ndarray = field(repr=False)

    @classmethod
    def compute(cls, *, threshold: float, sigma_threshold: float, order: float,
                teachers: int) -> ThresholdSmoothConstants:
        teachers = as_teachers(teachers)
        check_positive(sigma_threshold, "sigma_threshold")
        v = np.arange(teachers + 1, dtype=np.float64)
        r = rdp_threshold(log_ndtr((v - threshold) / sigma_threshold),
                          sigma_threshold=sigma_threshold, orders=[order])[:, 0]
        diff = np.abs(np.diff(r))
        ls = np.zeros(teachers + 1)
        ls[:-1] = diff
        ls[1:] = np.maximum(ls[1:], diff)
        padded = np.zeros(3 * teachers + 1)
        padded[teachers : 2 * teachers + 1] = ls
        r.setflags(write=False)
        padded.setflags(write=False)
        return cls(float(threshold), float(sigma_threshold), float(order), teachers, r, padded)

    def curves(self, rounded_max: np.ndarray) -> np.ndarray:
        """``LS_sel[d] = max(ls(m+d), ls(m-d))`` for ``d < max(m, M-m)``, later 0."""
        m = rounded_max.astype(np.intp)[:, None]
        d = np.arange(self.teachers)[None, :]
        out = np.maximum(self.ls_padded[m + self.teachers + d],
                         self.ls_padded[m + self.teachers - d])
        out[d >= np.maximum(m, self.teachers - m)] = 0.0
        return out


def _rounded_max(max_votes, teachers: int) -> np.ndarray:
    m = np.rint(np.asarray(max_votes, dtype=np.float64))
    if m.ndim != 1:
        raise ValueError("max_votes must be one number per query")
    if np.any(m < 0) or np.any(m > teachers):
        raise ValueError(f"round(max v) must lie in 0..{teachers} (the number of teachers)")
    return m


def local_sensitivity_threshold(max_votes, *, teachers: int, threshold: float,
                                sigma_threshold: float, order: float) -> np.ndarray:
    """Local sensitivity of the threshold step at distance ``d = 0..M-1`` (MATH.md s.10).

    ``max_votes`` is ``max_j v_j`` per query (``v = n`` or, for Interactive-GNMax,
    ``v = n - M p``, possibly fractional); it is rounded half-to-even as in section 4.
    Returns ``(queries, M)``; for ``m = round(max v)`` entries ``d >= max(m, M-m)`` are 0.
    """
    tc = ThresholdSmoothConstants.compute(threshold=threshold, sigma_threshold=sigma_threshold,
                                          order=order, teachers=teachers)
    return tc.curves(_rounded_max(max_votes, tc.teachers))


# --------------------------------------------------------------------------------------
# Smooth sensitivity, the beta search, conditions C5 and C6.
# --------------------------------------------------------------------------------------


def smooth_sensitivity(local_sensitivity, beta) -> np.ndarray:
    """``SS_beta = max_d exp(-beta d) LS[d]`` (MATH.md s.10), vectorised over ``beta``."""
    ls = np.asarray(local_sensitivity, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    d = np.arange(ls.size)
    return np.max(np.exp(-beta[..., None] * d) * ls, axis=-1)


def beta_grid(order: float) -> np.ndarray:
    """``arange(0.3/alpha, 0.495/alpha, 0.01/alpha)`` (MATH.md section 10)."""
    return np.arange(0.3 / order, 0.495 / order, 0.01 / order)


def _nondecreasing(fn, lo: float, hi: float, points: int = 20001) -> bool:
    """Numerical check that ``fn`` (vectorised, of log q) is non-decreasing on [lo, hi].

    A dense grid in ``log q`` (monotone in q, so the property is the same), then, around
    the grid's steepest descent, a bounded minimiser of the finite-difference slope. A
    decrease is real if it exceeds the rounding of the function values involved.
    """
    x = np.linspace(lo, hi, points)
    y = fn(x)
    if not np.all(np.isfinite(y)):
        return False
    scale = np.max(np.abs(y))
    tolerance = 1e-10 * scale + 1e-300
    dy = np.diff(y)
    if np.any(dy < -tolerance):
        return False
    worst = int(np.argmin(dy))
    a, b = x[max(worst - 1, 0)], x[min(worst + 2, points - 1)]
    h = (hi - lo) / points * 1e-2

    def slope(t: float) -> float:
        t0, t1 = max(lo, t - h), min(hi, t + h)
        values = fn(np.array([t0, t1]))
        return float(values[1] - values[0])

    best = minimize_scalar(slope, bounds=(a, b), method="bounded",
                           options={"maxiter": 200, "xatol": h})
    return bool(best.fun >= -tolerance)


# log q below which B_U / B_L underflow (q is then not a normal double).
_LOWEST_LOG_Q = -700.0


def check_conditions(*, sigma: float, classes: int, order: float) -> tuple[bool, bool]:
    """Conditions C5 and C6 of the GNSS analysis (MATH.md section 10), numerically.

    C5: ``dep`` non-decreasing in q on ``(0, q0)``; C6: ``dep(B_U(q)) - dep(q)``
    non-decreasing on ``(0, B_L(q0))``. Checked on ``log q`` from -700 (below which q and
    B_U(q) underflow to 0 and both functions vanish) up to ``log q0`` resp. ``log q1``.
    Returns ``(c5, c6)``.
    """
    c = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=classes)
    lo = min(_LOWEST_LOG_Q, 10.0 * c.log_q0)

    def dep(x):
        return dep_gnmax(x, sigma=sigma, order=order)

    def gain(x):
        return dep(log_b_upper(x, sigma=sigma, classes=c.classes)) - dep(x)

    c5 = _nondecreasing(dep, lo, c.log_q0)
    c6 = _nondecreasing(gain, lo, c.log_q1)
    return c5, c6


# --------------------------------------------------------------------------------------
# Accumulation and the report.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SmoothSensitivityResult:
    """The GNSS report at one order (MATH.md section 10).

    ``epsilon_before`` is the data-dependent epsilon at ``order``; ``epsilon_after`` adds
    the release's own cost; ``noise_std = smooth_sensitivity * sigma_ss``;
    ``sanitized_epsilon`` is ``epsilon_after + noise_std * N(0,1)`` drawn from the seed
    (``None`` without a seed or when ``refusal`` says C5/C6 failed).
    """

    order: float
    beta: float
    smooth_sensitivity: float
    sigma_ss: float
    epsilon_before: float
    epsilon_after: float
    noise_std: float
    sanitized_epsilon: float | None
    c5: bool
    c6: bool
    rdp_cumulative: float
    queries: int
    answered: float
    selection_data_independent: bool
    answer_data_independent: bool
    refusal: str | None = None
    checkpoints: tuple = ()


class SmoothSensitivityAccumulator:
    """Adds chunks of queries' local sensitivities and RDP at one order (MATH.md s.10).

    ``threshold``/``sigma_threshold`` given: Confident- (or Interactive-) GNMax, else plain
    GNMax. Memory is ``O(M)`` plus one chunk: per-query curves are never materialised (a
    query's curve is its deviating prefix plus the plateau ``LS(q1)`` from some distance on,
    accumulated as a difference array). Call :meth:`add` per chunk, in any order, and
    :meth:`result` at any time (it does not change the state).
    """

    def __init__(self, *, teachers: int, classes: int, sigma: float, order: float,
                 threshold: float | None = None, sigma_threshold: float | None = None):
        self.teachers = as_teachers(teachers)
        check_order(order)
        self.order = float(order)
        self.gnmax = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=classes)
        unanimous = np.zeros((1, self.gnmax.classes))
        unanimous[0, 0] = self.teachers
        at_unanimous = rdp_gnmax(log_q_gnmax(unanimous, sigma=sigma), sigma=sigma,
                                 orders=[order])[0, 0]
        # "Steps whose data-dependent bound never helps" (MATH.md section 10).
        self.answer_independent = bool(np.isclose(at_unanimous, self.gnmax.independent))
        self.selection = None
        self.selection_independent = True
        if (threshold is None) != (sigma_threshold is None):
            raise ValueError("give both threshold and sigma_threshold, or neither")
        if threshold is not None:
            self.selection = ThresholdSmoothConstants.compute(
                threshold=threshold, sigma_threshold=sigma_threshold, order=order,
                teachers=self.teachers)
            ends = log_pr_answered(np.array([0.0, self.teachers]), threshold=threshold,
                                   sigma_threshold=sigma_threshold)
            at_ends = rdp_threshold(ends, sigma_threshold=sigma_threshold, orders=[order])[:, 0]
            self.selection_independent_cost = order / (2.0 * sigma_threshold**2)
            self.selection_independent = bool(
                np.all(np.isclose(at_ends, self.selection_independent_cost)))
        self._ls_prefix = np.zeros(self.teachers)
        self._plateau_from = np.zeros(self.teachers + 1)
        self._max_histogram = np.zeros(self.teachers + 1)
        self._rdp = 0.0
        self._queries = 0
        self._answered = 0.0
        self._conditions: tuple[bool, bool] | None = None

    def add(self, votes, *, weights, max_votes=None) -> None:
        """Add a chunk: ``votes`` ``(n, K)``, answer-step ``weights`` ``(n,)`` (1/0 replay,
        ``pr_answered`` expected), ``max_votes`` the selection's ``max v`` per query
        (default ``max n``; Interactive passes ``max(n - M p)``)."""
        votes = as_votes(votes)
        if votes.shape[1] != self.gnmax.classes:
            raise ValueError(f"votes have {votes.shape[1]} classes, expected "
                             f"{self.gnmax.classes}")
        weights = np.asarray(weights, dtype=np.float64).reshape(-1)
        if weights.shape[0] != votes.shape[0] or np.any(~(weights >= 0)):
            raise ValueError("weights must be one non-negative number per query")
        c = self.gnmax
        if self.selection is not None:
            max_votes = votes.max(axis=1) if max_votes is None else max_votes
            rounded = _rounded_max(max_votes, self.teachers)
            if self.selection_independent:
                self._rdp += votes.shape[0] * self.selection_independent_cost
            else:
                sel = self.selection
                # rdp_sel(log pr_answered) with round(max v) (section 4) is r[round(max v)].
                self._rdp += float(np.sum(sel.r[rounded.astype(np.intp)]))
                self._max_histogram += np.bincount(rounded.astype(np.intp),
                                                   minlength=self.teachers + 1)
        if self.answer_independent:
            self._rdp += float(np.sum(weights)) * c.independent
        else:
            log_q = log_q_gnmax(votes, sigma=c.sigma)
            self._rdp += float(np.dot(weights, rdp_gnmax(log_q, sigma=c.sigma,
                                                         orders=[c.order])[:, 0]))
            charged = np.flatnonzero(weights > 0)
            owner, distance, value, last = _walk_entries(votes[charged], c, self.teachers)
            w = weights[charged]
            self._ls_prefix += np.bincount(distance, weights=w[owner] * value,
                                           minlength=self.teachers)
            self._plateau_from += np.bincount(last + 1, weights=w,
                                              minlength=self.teachers + 1)
        self._queries += votes.shape[0]
        self._answered += float(np.sum(weights))

    def local_sensitivity(self) -> np.ndarray:
        """Total ``LS[d]``, ``d = 0..M-1``, of the queries added so far."""
        total = self._ls_prefix.copy()
        if not self.answer_independent:
            total += np.cumsum(self._plateau_from)[: self.teachers] * self.gnmax.plateau
        if self.selection is not None and not self.selection_independent:
            present = np.flatnonzero(self._max_histogram)
            block = max(1, _THRESHOLD_ELEMENTS // self.teachers)
            for lo in range(0, present.size, block):
                m = present[lo : lo + block]
                total += self._max_histogram[m] @ self.selection.curves(m.astype(np.float64))
        return total

    @property
    def rdp_cumulative(self) -> float:
        return self._rdp

    def conditions(self) -> tuple[bool, bool]:
        """(C5, C6) for the answer step's (sigma, K, order), computed once when needed."""
        if self._conditions is None:
            c = self.gnmax
            self._conditions = check_conditions(sigma=c.sigma, classes=c.classes,
                                                order=c.order)
        return self._conditions

    def result(self, *, delta: float, seed=None) -> SmoothSensitivityResult:
        """Choose beta and sigma_ss and report (MATH.md section 10, last paragraphs)."""
        if not (0.0 < delta < 1.0):
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
        alpha = self.order
        ls = self.local_sensitivity()
        betas = beta_grid(alpha)
        ss = smooth_sensitivity(ls, betas)
        with np.errstate(divide="ignore"):
            sigma_ss = np.cbrt(alpha * np.exp(2.0 * betas) / ss)
            release = rdp_gnss(betas, sigma_ss=sigma_ss, order=alpha)
        cost = self._rdp + release + 2.0 * ss * sigma_ss
        best = int(np.argmin(np.where(np.isnan(cost), np.inf, cost)))
        eps_before = self._rdp + math.log(1.0 / delta) / (alpha - 1.0)
        eps_after = eps_before + float(release[best])
        noise_std = float(ss[best] * sigma_ss[best])
        c5, c6 = self.conditions()
        refusal = None
        if not self.answer_independent and not (c5 and c6):
            failed = " and ".join(n for n, ok in (("C5", c5), ("C6", c6)) if not ok)
            c = self.gnmax
            refusal = (f"condition {failed} fails for sigma={c.sigma:g}, K={c.classes}, "
                       f"order={alpha:g}: no sanitised epsilon is reported")
        sanitized = None
        if seed is not None and refusal is None:
            sanitized = eps_after + noise_std * float(np.random.default_rng(seed).normal())
        return SmoothSensitivityResult(
            order=alpha, beta=float(betas[best]), smooth_sensitivity=float(ss[best]),
            sigma_ss=float(sigma_ss[best]), epsilon_before=eps_before, epsilon_after=eps_after,
            noise_std=noise_std, sanitized_epsilon=sanitized, c5=c5, c6=c6,
            rdp_cumulative=self._rdp, queries=self._queries, answered=self._answered,
            selection_data_independent=self.selection_independent,
            answer_data_independent=self.answer_independent, refusal=refusal)


def sanitize_confident(votes, *, teachers: int, threshold: float, sigma_threshold: float,
                       sigma: float, order: float, delta: float, weights, seed=None,
                       max_votes=None, report_every: int | None = None,
                       chunk_size: int = DEFAULT_CHUNK) -> SmoothSensitivityResult:
    """GNSS report for Confident-GNMax (or Interactive with ``max_votes``; MATH.md s.10).

    ``votes`` ``(queries, K)`` (array or memory map, read in chunks), ``weights`` the
    answer step's charge per query (1/0 replay, ``pr_answered`` expected). With
    ``report_every=N`` the result's ``checkpoints`` hold the report after every N queries
    (and the last), as the paper's table was printed.
    """
    return _sanitize(votes, teachers=teachers, threshold=threshold,
                     sigma_threshold=sigma_threshold, sigma=sigma, order=order, delta=delta,
                     weights=weights, seed=seed, max_votes=max_votes,
                     report_every=report_every, chunk_size=chunk_size)


def sanitize_gnmax(votes, *, teachers: int, sigma: float, order: float, delta: float,
                   weights=None, seed=None, report_every: int | None = None,
                   chunk_size: int = DEFAULT_CHUNK) -> SmoothSensitivityResult:
    """GNSS report for plain GNMax (no threshold step; every query answered by default)."""
    return _sanitize(votes, teachers=teachers, threshold=None, sigma_threshold=None,
                     sigma=sigma, order=order, delta=delta, weights=weights, seed=seed,
                     max_votes=None, report_every=report_every, chunk_size=chunk_size)


def _sanitize(votes, *, teachers, threshold, sigma_threshold, sigma, order, delta, weights,
              seed, max_votes, report_every, chunk_size):
    check_positive_integer(chunk_size, "chunk size")
    if report_every is not None:
        check_positive_integer(report_every, "report_every")
    queries = votes.shape[0]
    if weights is None:
        weights = np.ones(queries)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (queries,):
        raise ValueError(f"weights must have shape ({queries},), got {weights.shape}")
    if max_votes is not None:
        max_votes = np.asarray(max_votes, dtype=np.float64)
        if max_votes.shape != (queries,):
            raise ValueError(f"max_votes must have shape ({queries},)")
    acc = SmoothSensitivityAccumulator(teachers=teachers, classes=votes.shape[1], sigma=sigma,
                                       order=order, threshold=threshold,
                                       sigma_threshold=sigma_threshold)
    marks = [] if report_every is None else list(range(report_every, queries, report_every))
    bounds = sorted(set(range(chunk_size, queries, chunk_size)) | set(marks) | {queries})
    checkpoints = []
    start = 0
    for stop in bounds:
        acc.add(np.asarray(votes[start:stop], dtype=np.float64), weights=weights[start:stop],
                max_votes=None if max_votes is None else max_votes[start:stop])
        if report_every is not None and (stop in marks or stop == queries):
            checkpoints.append(acc.result(delta=delta, seed=seed))
        start = stop
    final = acc.result(delta=delta, seed=seed)
    if checkpoints:
        final = _replace_checkpoints(final, tuple(checkpoints))
    return final


def _replace_checkpoints(result: SmoothSensitivityResult, checkpoints: tuple):
    from dataclasses import replace

    return replace(result, checkpoints=checkpoints)
