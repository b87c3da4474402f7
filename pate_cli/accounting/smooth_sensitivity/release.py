"""The GNSS release: accumulate queries, choose beta and sigma_ss, report (math:smooth);
:func:`sanitize_confident` and :func:`sanitize_gnmax` read the votes in chunks."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...vote_rows import SparseVotes, VoteRows, as_float_rows, vote_rows
from ..conversion import Conversion
from ..gnmax import log_q_gnmax, rdp_gnmax
from ..threshold import log_pr_answered, rdp_threshold
from ..validators import as_teachers, check_order, check_positive_integer
from .bounds import (
    LOWEST_LOG_Q,
    GNMaxSmoothConstants,
    ThresholdSmoothConstants,
    beta_grid,
    check_conditions,
    check_smooth_domain,
    rdp_gnss,
    smooth_sensitivity,
)
from .walks import toward_threshold, walk_entries

# Rows of a (distinct max votes x distances) work array for the threshold step.
_THRESHOLD_ELEMENTS = 1 << 21
DEFAULT_CHUNK = 4096
# Per-query values formed a chunk at a time: ``(start, stop) -> values of queries start..stop-1``.
ChunkValues = Callable[[int, int], np.ndarray]


# --- Accumulation and the report.


@dataclass(frozen=True)
class SmoothSensitivityResult:
    """The GNSS report at one order (math:smooth): ``epsilon_after`` adds the release's cost;
    ``noise_std = smooth_sensitivity * sigma_ss``; ``sanitized_epsilon = epsilon_after +
    noise_std * z`` for the draw ``z`` (None without one, or when ``refusal``: C5/C6 fail)."""

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
    checkpoints: tuple[SmoothSensitivityResult, ...] = ()


class SmoothSensitivityAccumulator:
    """Sums chunks of queries' local sensitivities and RDP at one order (math:smooth), in
    ``O(M)`` memory (curves go into a difference array); with ``threshold``: Confident- (or
    Interactive-) GNMax. :meth:`add` in any order; :meth:`result` leaves the state as is."""

    def __init__(self, *, teachers: int, classes: int, sigma: float, order: float,
                 threshold: float | None = None, sigma_threshold: float | None = None,
                 selection_cap: float | None = None, spent: float = 0.0) -> None:
        self.teachers = as_teachers(teachers)
        check_order(order)
        check_smooth_domain(sigma=sigma, order=order)
        self.order = float(order)
        self.gnmax = GNMaxSmoothConstants.compute(sigma=sigma, order=order, classes=classes)
        if not (self.gnmax.log_q0 >= LOWEST_LOG_Q and math.isfinite(self.gnmax.log_q1)):
            raise ValueError(f"smooth sensitivity is not computable at sigma {sigma:g}, order "
                             f"{order:g}: log q0 = {self.gnmax.log_q0:.4g} underflows (choose "
                             "a smaller --order)")
        # [M, 0, ..., 0] as one count and a block of K - 1 zeros (math:sparse)
        unanimous = log_q_gnmax(VoteRows(np.array([[float(self.teachers)]]),
                                          self.gnmax.classes - 1), sigma=sigma)
        at_unanimous = rdp_gnmax(unanimous, sigma=sigma, orders=[order])[0, 0]
        # "Steps whose data-dependent bound never helps" (math:smooth).
        self.answer_independent = bool(np.isclose(at_unanimous, self.gnmax.independent))
        self.selection: ThresholdSmoothConstants | None = None
        self.selection_independent = True
        if (threshold is None) != (sigma_threshold is None):
            raise ValueError("give both threshold and sigma_threshold, or neither")
        if threshold is not None and sigma_threshold is not None:
            # the data-independent cost (math:screening's exact one, else math:independent's)
            # caps the table as charged; a constant cap raises no local sensitivity
            cost = order / (2.0 * sigma_threshold**2)
            cost = cost if selection_cap is None else min(cost, float(selection_cap))
            self.selection = ThresholdSmoothConstants.compute(
                threshold=threshold, sigma_threshold=sigma_threshold, order=order,
                teachers=self.teachers, cap=cost)
            ends = log_pr_answered(np.array([0.0, self.teachers]), threshold=threshold,
                                   sigma_threshold=sigma_threshold)
            at_ends = rdp_threshold(ends, sigma_threshold=sigma_threshold, orders=[order])[:, 0]
            self.selection_independent_cost = cost
            self.selection_independent = bool(np.all(np.isclose(np.minimum(at_ends, cost),
                                                                cost)))
        self._ls_prefix = np.zeros(self.teachers)
        self._plateau_from = np.zeros(self.teachers + 1)
        self._max_histogram = np.zeros(self.teachers + 1)
        self._rdp = float(spent)  # RDP spent before the first query (--add-rdp)
        self._queries = 0
        self._answered = 0.0
        self._conditions: tuple[bool, bool] | None = None

    def add(self, votes: ArrayLike | VoteRows, *, weights: ArrayLike,
            max_votes: ArrayLike | None = None) -> None:
        """Add ``votes`` ``(n, K)`` (or :class:`VoteRows`, math:sparse), answer ``weights``
        ``(n,)`` (1/0 replay, ``pr_answered`` expected), and the selection's ``max v``
        (default ``max n``; Interactive: ``max(n - M p)``)."""
        votes = vote_rows(votes)
        if votes.shape[1] != self.gnmax.classes:
            raise ValueError(f"votes have {votes.shape[1]} classes, expected "
                             f"{self.gnmax.classes}")
        weights = np.asarray(weights, dtype=np.float64).reshape(-1)
        if weights.shape[0] != votes.shape[0] or np.any(~(weights >= 0)):
            raise ValueError("weights must be one non-negative number per query")
        c = self.gnmax
        if self.selection is not None:
            max_votes = votes.max(axis=1) if max_votes is None else max_votes
            rounded = toward_threshold(max_votes, self.teachers, self.selection.threshold)
            if self.selection_independent:
                self._rdp += votes.shape[0] * self.selection_independent_cost
            else:
                # rdp_sel(log pr_answered) at max v rounded toward T is r[that count],
                # capped by the data-independent curve (math:screening)
                self._rdp += float(np.sum(self.selection.r[rounded.astype(np.intp)]))
                self._max_histogram += np.bincount(rounded.astype(np.intp),
                                                   minlength=self.teachers + 1)
        if self.answer_independent:
            self._rdp += float(np.sum(weights)) * c.independent
        else:
            log_q = log_q_gnmax(votes, sigma=c.sigma)
            self._rdp += float(np.dot(weights, rdp_gnmax(log_q, sigma=c.sigma,
                                                         orders=[c.order])[:, 0]))
            charged = np.flatnonzero(weights > 0)
            owner, distance, value, last = walk_entries(votes[charged], c, self.teachers)
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

    def copy(self) -> SmoothSensitivityAccumulator:
        """An independent copy of the sums so far (constants shared)."""
        twin = copy.copy(self)
        for name in ("_ls_prefix", "_plateau_from", "_max_histogram"):
            setattr(twin, name, getattr(self, name).copy())
        return twin

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

    def result(self, *, delta: float,
               release_noise: float | None = None) -> SmoothSensitivityResult:
        """Choose beta and sigma_ss and report (math:smooth, last paragraphs)."""
        if not (0.0 < delta < 1.0):
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
        alpha = self.order
        ls = self.local_sensitivity()
        betas = beta_grid(alpha)
        ss = smooth_sensitivity(ls, betas)
        if not np.any(ss > 0.0):
            # SS = 0 at every beta: released as is, no noise, no cost (not 0 x inf)
            sigma_ss = release = np.zeros(betas.size)
        else:
            sigma_ss = np.cbrt(alpha * np.exp(2.0 * betas) / ss)
            release = rdp_gnss(betas, sigma_ss=sigma_ss, order=alpha)
        cost = self._rdp + release + 2.0 * ss * sigma_ss
        noise = ss * sigma_ss
        best = int(np.argmin(np.where(np.isnan(cost), np.inf, cost)))
        # the classic conversion at the order (raised past the rounding as every epsilon)
        rule = Conversion.of(orders=[alpha], delta=delta)
        eps_before, eps_after = (float(e) for e in rule.epsilon(
            np.array([[self._rdp], [self._rdp + float(release[best])]]))[0])
        noise_std = float(noise[best])
        c5, c6 = self.conditions()
        refusal = None
        if not self.answer_independent and not (c5 and c6):
            failed = " and ".join(n for n, ok in (("C5", c5), ("C6", c6)) if not ok)
            c = self.gnmax
            refusal = (f"condition {failed} fails for sigma={c.sigma:g}, K={c.classes}, "
                       f"order={alpha:g}: no sanitised epsilon is reported")
        sanitized = None
        if release_noise is not None and refusal is None:
            sanitized = eps_after + noise_std * float(release_noise)
        return SmoothSensitivityResult(
            order=alpha, beta=float(betas[best]), smooth_sensitivity=float(ss[best]),
            sigma_ss=float(sigma_ss[best]), epsilon_before=eps_before, epsilon_after=eps_after,
            noise_std=noise_std, sanitized_epsilon=sanitized, c5=c5, c6=c6,
            rdp_cumulative=self._rdp, queries=self._queries, answered=self._answered,
            selection_data_independent=self.selection_independent,
            answer_data_independent=self.answer_independent, refusal=refusal)


@dataclass(frozen=True, kw_only=True)
class ReleaseSetting:
    """What a GNSS release accounts (math:smooth). ``threshold``/``sigma_threshold`` None: plain
    GNMax; ``selection_cap``: math:screening's exact data-independent cost (None:
    math:independent's); ``weights`` (None: all answered), ``max_votes``: arrays or
    :data:`ChunkValues`; ``release_noise`` None: no sanitised epsilon; ``report_every`` N: a
    report every N queries in ``checkpoints``; ``chunk_size``: rows read at once; ``spent``: RDP
    at the order spent before the first query (the votes do not change it: no sensitivity)."""

    teachers: int
    sigma: float
    order: float
    delta: float
    weights: ArrayLike | ChunkValues | None = None
    threshold: float | None = None
    sigma_threshold: float | None = None
    selection_cap: float | None = None
    max_votes: ArrayLike | ChunkValues | None = None
    release_noise: float | None = None
    report_every: int | None = None
    chunk_size: int = DEFAULT_CHUNK
    spent: float = 0.0


def sanitize_confident(votes: np.ndarray | SparseVotes,
                       **setting: Any) -> SmoothSensitivityResult:
    """GNSS report for Confident-GNMax (or Interactive with ``max_votes``; math:smooth).

    Args:
      votes: ``(queries, K)`` array, memory map or ``SparseVotes`` (read in chunks, never
        densified).
      **setting: the fields of :class:`ReleaseSetting`, with T, sigma1 and the weights.
    """
    if not {"threshold", "sigma_threshold", "weights"} <= set(setting):
        raise TypeError("sanitize_confident() needs threshold, sigma_threshold and weights")
    return _sanitize(votes, ReleaseSetting(**setting))


def sanitize_gnmax(votes: np.ndarray | SparseVotes,
                   **setting: Any) -> SmoothSensitivityResult:
    """GNSS report for plain GNMax (no threshold step; every query answered by default):
    :func:`sanitize_confident` without T, sigma1 and ``max_votes``."""
    if set(setting) & {"threshold", "sigma_threshold", "max_votes"}:
        raise TypeError("sanitize_gnmax() has no selection step (threshold, "
                        "sigma_threshold, max_votes)")
    return _sanitize(votes, ReleaseSetting(**setting))


def _sanitize(votes: np.ndarray | SparseVotes, setting: ReleaseSetting
              ) -> SmoothSensitivityResult:
    queries = votes.shape[0]
    weights_of = _chunk_values(np.ones(queries) if setting.weights is None
                               else setting.weights, queries, "weights")
    max_votes_of = None if setting.max_votes is None else _chunk_values(
        setting.max_votes, queries, "max_votes")
    return Release(setting, classes=votes.shape[1], queries=queries).read(
        votes, weights_of, max_votes_of)


class Release:
    """A GNSS release (math:smooth) fed its ``queries`` in order, ``chunk_size`` rows a time:
    the same chunks give the same report and history whoever reads them."""

    def __init__(self, setting: ReleaseSetting, *, classes: int, queries: int):
        check_positive_integer(setting.chunk_size, "chunk size")
        if setting.report_every is not None:
            check_positive_integer(setting.report_every, "report_every")
        self.every, self.queries, self.done = setting.report_every, queries, 0
        self.chunk_size = setting.chunk_size
        self.sums = SmoothSensitivityAccumulator(
            teachers=setting.teachers, classes=classes, sigma=setting.sigma,
            order=setting.order, threshold=setting.threshold,
            sigma_threshold=setting.sigma_threshold, selection_cap=setting.selection_cap,
            spent=setting.spent)
        self.result = partial(SmoothSensitivityAccumulator.result, delta=setting.delta,
                              release_noise=setting.release_noise)
        self.checkpoints: list[SmoothSensitivityResult] = []

    def add(self, rows, weights: np.ndarray, max_votes: np.ndarray | None) -> None:
        """The next chunk: its rows, answer weights and selection ``max v`` (None: ``max n``)
        as :meth:`SmoothSensitivityAccumulator.add` takes them."""
        rows = as_float_rows(rows)
        start, every = self.done, self.every
        self.done = stop = start + rows.shape[0]
        if every is not None:  # the history's reports inside this chunk
            self.checkpoints += _reports_within(self.sums, rows, weights, max_votes, start,
                                                every, self.result)
        self.sums.add(rows, weights=weights, max_votes=max_votes)
        if every is not None and stop % every == 0 and stop < self.queries:
            self.checkpoints.append(self.result(self.sums))

    def read(self, votes, weights: ChunkValues,
             max_votes: ChunkValues | None) -> SmoothSensitivityResult:
        """:meth:`add` each chunk of the first ``queries`` rows of ``votes``; :meth:`report`."""
        for start in range(0, self.queries, self.chunk_size):
            stop = min(self.queries, start + self.chunk_size)
            self.add(votes[start:stop], weights(start, stop),
                     None if max_votes is None else max_votes(start, stop))
        return self.report()

    def report(self) -> SmoothSensitivityResult:
        """The release after the chunks added (with the history, if asked for)."""
        final = self.result(self.sums)
        if self.every is not None:
            final = replace(final, checkpoints=tuple(self.checkpoints) + (final,))
        return final


def _reports_within(acc: SmoothSensitivityAccumulator, rows, weights: np.ndarray,
                    max_votes: np.ndarray | None, start: int, every: int,
                    result: Callable) -> list[SmoothSensitivityResult]:
    """The reports at each multiple of ``every`` strictly inside the chunk at ``start``, from
    a copy of ``acc`` (which takes whole chunks: figures do not depend on the history)."""
    stop = start + rows.shape[0]
    marks = range(start - start % every + every, stop, every)
    if not marks:
        return []
    copy, reports, done = acc.copy(), [], start
    for mark in marks:
        piece = slice(done - start, mark - start)
        copy.add(rows[piece], weights=weights[piece],
                 max_votes=None if max_votes is None else max_votes[piece])
        reports.append(result(copy))
        done = mark
    return reports


def _chunk_values(values: ArrayLike | ChunkValues, queries: int, name: str) -> ChunkValues:
    """``values`` (one number per query, or already one) as a :data:`ChunkValues`."""
    if callable(values):
        return values
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (queries,):
        raise ValueError(f"{name} must have shape ({queries},), got {values.shape}")
    return lambda start, stop: values[start:stop]
