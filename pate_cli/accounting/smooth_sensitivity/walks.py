"""Local sensitivity at distance ``d``: the GNMax step's walks and the threshold step
(math:smooth; Papernot et al. 2018, Appendix B, Algorithms 4-5).

A walk's state after ``d`` steps has a closed form (:class:`_RightWalk`, :class:`_LeftWalk`);
its ``log q`` is Proposition 7's sum over (count, multiplicity) groups from a table of tail
probabilities. Rows with a zero block (math:sparse) stay sparse: sorted counts, one zero column
and a group ``(0, Z)``; neither walk moves the block off 0. The threshold step needs no walk: its
curve is read from :class:`.bounds.ThresholdSmoothConstants`' table at ``round(max v)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ...numerics import whole
from ...vote_rows import VoteRows, vote_rows
from ...work_sizes import WORK_VALUES
from ..gnmax import LINEAR_FLOOR, log_q_gnmax
from ..validators import as_teachers
from .bounds import GNMaxSmoothConstants, ThresholdSmoothConstants, local_sensitivity_at

# Walk states whose local sensitivity is evaluated at once.
_LS_BLOCK = 1 << 15


# --- GNMax: local sensitivity at distance d (Algorithms 4-5), vectorised over the walks.


def _groups(rest: np.ndarray, sentinel: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(values, counts)``, ``(rows, G)``: each descending row's distinct values and their
    multiplicities, padded with (0, 0); ``sentinel`` adds a final (0, 0) group."""
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
        from scipy.special import ndtr
        self.constants = constants
        self.scale = math.sqrt(2.0 * constants.sigma**2)  # as log_q_gnmax
        self.largest = int(largest_gap)
        self.tail = ndtr(-(np.arange(self.largest + 1) / self.scale))
        self.cap = math.log(1.0 - 1.0 / constants.classes)

    def log_q(self, gaps: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Capped ``log q`` of states as (gap, multiplicity) rows (``gaps``: ``intp``,
        overwritten), as ``log_q_gnmax``: linear space, log space below ``LINEAR_FLOOR``."""
        from scipy.special import log_ndtr, logsumexp
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


def _segments(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ragged segments of ``lengths``: (segment id, position within the segment)."""
    lengths = lengths.astype(np.intp)
    owner = np.repeat(np.arange(lengths.size), lengths)
    starts = np.cumsum(lengths) - lengths
    return owner, np.arange(owner.size) - starts[owner]


class _RightWalk:
    """Right walks: ``d`` votes moved from the largest class to the runner-up (runner-up gap
    ``g1 - 2d``, every other class's ``top - d - n_j``)."""

    def __init__(self, tables: _WalkTables, ordered: np.ndarray, zero_block: float):
        self.tables = tables
        self.first_gap = (ordered[:, 0] - ordered[:, 1]).astype(np.intp)
        values, self.counts = _groups(ordered[:, 2:], sentinel=False)
        if zero_block:  # sparse rows: the zero-vote classes as one more group (0, Z)
            values = np.concatenate((values, np.zeros((values.shape[0], 1))), axis=1)
            self.counts = np.concatenate(
                (self.counts, np.full((values.shape[0], 1), zero_block)), axis=1)
        self.gaps = (ordered[:, :1] - values).astype(np.intp)
        self.width = values.shape[1] + 1

    def __call__(self, rows: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, None]:
        gaps = np.empty((rows.size, self.width), dtype=np.intp)
        gaps[:, 0] = self.first_gap[rows] - 2 * d
        np.subtract(self.gaps[rows], d[:, None], out=gaps[:, 1:])
        counts = np.empty((rows.size, self.width))
        counts[:, 0] = 1.0
        np.take(self.counts, rows, axis=0, out=counts[:, 1:])
        return self.tables.log_q(gaps, counts), None

    def carries_on(self, log_q: np.ndarray, _runner: None) -> np.ndarray:
        return log_q < self.tables.constants.log_q1


class _LeftWalk:
    """Left walks: the largest class gains ``d`` votes drained from the top of the rest, levelled
    like water. After ``d`` moves the first ``k`` of the rest (found by ``drained``, the votes
    that level every group above ``g`` to ``values[g]``) share ``P_k - d`` votes at levels ``h``,
    ``h+1``."""

    def __init__(self, tables: _WalkTables, ordered: np.ndarray, zero_block: float):
        self.tables = tables
        self.top = ordered[:, 0].astype(np.intp)
        values, self.counts = _groups(ordered[:, 1:], sentinel=True)
        self.values = values.astype(np.intp)
        self.held = np.cumsum(self.counts, axis=1) - self.counts
        self.total = np.cumsum(self.counts * values, axis=1) - self.counts * values
        # Sparse rows: the Z zero-vote classes join the sentinel (value 0, never levelled)
        self.counts[:, -1] += zero_block
        drained = self.total - self.held * values
        rows, self.groups = values.shape
        self.span = 2 * (tables.largest + 2)
        self.keys = (drained + (np.arange(rows) * self.span)[:, None]).ravel()
        self.width = self.groups + 2

    def __call__(self, rows: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _sorted_rows(votes: VoteRows) -> tuple[np.ndarray, float]:
    """Each row's counts in decreasing order (with a zero block, one zero column more) and
    ``Z``, the zero-vote classes left out (math:sparse)."""
    counts = votes.counts
    if not whole(counts) or np.any(counts < 0):
        raise ValueError("the GNMax local-sensitivity walk needs non-negative integer votes")
    ordered = -np.sort(-counts, axis=1)
    if not votes.zeros:
        return ordered, 0.0
    ordered = np.concatenate((ordered, np.zeros((ordered.shape[0], 1))), axis=1)
    return ordered, float(votes.zeros - 1)


def walk_entries(votes: VoteRows, constants: GNMaxSmoothConstants,
                 teachers: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The deviating prefix of each query's local-sensitivity curve (Algorithms 4-5):
    ``(owner, distance, value, last)``, flat entries ``LS_i[d]``, ``d = 0..last_i`` (-1: all
    plateau); later entries equal ``constants.plateau``."""
    from scipy.special import ndtri_exp
    c = constants
    queries, classes = votes.shape
    ordered, zero_block = _sorted_rows(votes)
    log_q = log_q_gnmax(votes, sigma=c.sigma)
    last = np.full(queries, -1, dtype=np.intp)
    left = log_q > c.log_q0
    right = log_q < c.log_q1
    walking = np.flatnonzero(left | right)
    owners = [walking]
    distances = [np.zeros(walking.size, dtype=np.intp)]
    values = [local_sensitivity_at(log_q[walking], constants=c)]
    last[walking] = 0
    largest = int(max(teachers, ordered.sum(axis=1).max(initial=0)))  # no rows: no charge
    tables = _WalkTables(c, largest)
    limit = teachers - 1  # entries are d = 0 .. M-1

    # Right walks stop at log q >= log q1: at the latest once the runner-up gap is <= g_q1.
    chosen = np.flatnonzero(right)
    if chosen.size and limit > 0:
        g_q1 = -tables.scale * float(ndtri_exp(np.array(c.log_q1)))
        bound = np.ceil((ordered[chosen, 0] - ordered[chosen, 1] - g_q1) / 2.0) + 1.0
        _run_walk(chosen, bound, limit, _RightWalk(tables, ordered[chosen], zero_block),
                  last, owners, distances, values)

    # Left walks stop at log q <= log q0 or runner-up 0: at the latest once g1 + d >= g_q0
    # (log q <= log(K-1) + log Phi(-(g1 + d)/s)).
    chosen = np.flatnonzero(left & (ordered[:, 1] > 0))
    if chosen.size and limit > 0:
        g_q0 = -tables.scale * float(ndtri_exp(np.array(c.log_q0 - math.log(classes - 1))))
        rest = ordered[chosen, 1:]
        bound = np.minimum(np.ceil(g_q0 - (ordered[chosen, 0] - rest[:, 0])) + 1.0,
                           rest.sum(axis=1))
        _run_walk(chosen, bound, limit, _LeftWalk(tables, ordered[chosen], zero_block),
                  last, owners, distances, values)
    return (np.concatenate(owners), np.concatenate(distances), np.concatenate(values), last)


def _run_walk(chosen: np.ndarray, bound: np.ndarray, limit: int, walk: _RightWalk | _LeftWalk,
              last: np.ndarray, owners: list[np.ndarray], distances: list[np.ndarray],
              values: list[np.ndarray]) -> None:
    """Walk states ``d = 1..`` up to each walk's end, into ``last``, ``owners``, ``distances``,
    ``values``; past ``bound`` (the closed-form end) in further windows, up to ``limit``."""
    c = walk.tables.constants
    active = np.arange(chosen.size)
    start = np.ones(chosen.size, dtype=np.intp)
    length = np.clip(bound, 1.0, float(limit)).astype(np.intp)
    block = max(1, WORK_VALUES // walk.width)
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
            # mypy cannot pair walk and runner (None or a count) across the union
            going[part] = walk.carries_on(log_q_part, runner_part)  # type: ignore[arg-type]
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


def local_sensitivity_gnmax(votes: ArrayLike | VoteRows, *, teachers: int, sigma: float,
                            order: float,
                            constants: GNMaxSmoothConstants | None = None) -> np.ndarray:
    """Local sensitivity of the GNMax step at ``d = 0..M-1`` (Algorithms 4-5), ``(queries,
    M)``, from ``(queries, K)`` non-negative integers or :class:`VoteRows`. For tests."""
    votes = vote_rows(votes)
    teachers = as_teachers(teachers)
    if constants is None:
        constants = GNMaxSmoothConstants.compute(sigma=sigma, order=order,
                                                 classes=votes.shape[1])
    owner, distance, value, _ = walk_entries(votes, constants, teachers)
    out = np.full((votes.shape[0], teachers), constants.plateau)
    out[owner, distance] = value
    return out


# --- Threshold step at distance d, from the table of ThresholdSmoothConstants.


def rounded_max(max_votes: ArrayLike, teachers: int) -> np.ndarray:
    """``round(max v)`` per query, half to even as in math:threshold: the row of the threshold
    step's table. Raises ``ValueError`` unless it is one value per query in ``0..M``."""
    m = np.rint(np.asarray(max_votes, dtype=np.float64))
    if m.ndim != 1:
        raise ValueError("max_votes must be one number per query")
    if np.any(m < 0) or np.any(m > teachers):
        raise ValueError(f"round(max v) must lie in 0..{teachers} (the number of teachers)")
    return m


def toward_threshold(max_votes: ArrayLike, teachers: int, threshold: float) -> np.ndarray:
    """The whole count a smooth-sensitivity report charges ``max v`` at: rounded toward ``T``,
    so its ``q`` is at least the mechanism's (half to even may round away: an under-charge;
    math:threshold); it still moves by at most 1 between neighbours.

    Raises:
      ValueError: fractional counts with a fractional ``T`` (a whole count toward ``T``
        may then pass it, with a smaller ``q``), or a count outside ``0..M``.
    """
    m = np.asarray(max_votes, dtype=np.float64)
    if not float(threshold).is_integer() and not np.array_equal(m, np.floor(m)):
        raise ValueError(f"--smooth-sensitivity with fractional counts (Interactive's "
                         f"n - M p, weighted votes) needs a whole-number --threshold, got "
                         f"{float(threshold)!r}")
    return rounded_max(np.where(m < threshold, np.minimum(np.ceil(m), threshold),
                                np.maximum(np.floor(m), threshold)), teachers)


def local_sensitivity_threshold(max_votes: ArrayLike, *, teachers: int, threshold: float,
                                sigma_threshold: float, order: float) -> np.ndarray:
    """Local sensitivity of the threshold step at ``d = 0..M-1`` (math:smooth), ``(queries, M)``,
    from ``max_j v_j`` per query (``n`` or Interactive's ``n - M p``) rounded half to even
    (:meth:`.bounds.ThresholdSmoothConstants.curves`)."""
    tc = ThresholdSmoothConstants.compute(threshold=threshold, sigma_threshold=sigma_threshold,
                                          order=order, teachers=teachers)
    return tc.curves(rounded_max(max_votes, tc.teachers))
