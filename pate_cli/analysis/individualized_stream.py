"""An individualized run in bounded memory: the group accounting fed a chunk at a time.

MATH.md sections 1, 6 and 9. ``analyze_individualized(..., per_query=False)`` analyses the
base run totals-only (``analyze_votes(per_query=False)``) and then replays it chunk by
chunk (the noise and the vanishing participation are keyed by query position, so a
chunk's decisions are the same bits): :func:`group_totals` feeds each chunk's costs to
``accounting.individualized.GroupSums``, the running RDP carried from chunk to chunk,
and keeps only what the summary needs (``GroupStops``, the label counts up to the stop).
:func:`group_frames` gives the per-query table with each group's cumulative epsilon a
chunk at a time (``per_query="stream"``). The weighted and vanishing histograms are
formed a chunk at a time from the predictions (:class:`HistogramRows`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from ..accounting.individualized import (
    CostChunk,
    GroupStops,
    GroupSums,
    GroupTotals,
    IndependentSpent,
    group_costs,
    vanishing_costs,
)
from ..accounting.individualized.curves import Mapper
from ..decisions import INTERACTIVE_NAMES, OUTCOME_ABSTAIN, OUTCOME_TEACHER
from ..mechanisms import (
    Mechanism,
    NoiseSource,
    vanishing_participation,
    vanishing_votes,
    weighted_histogram,
)
from ..sparse_rows import row_width
from ..threads import default_workers, ordered_map
from ..work_sizes import TABLE_ROWS, TASK_VALUES
from .per_query_stream import STREAM_CURVE_VALUES, per_query_frames
from .result import AnalysisResult
from .setting import FirstRows, LabelCounts, chunk_rows, released_labels
from .steps import chunk_costs, mechanism_steps, screening_counts

# Elements of the evaluated curves of one step of vanishing costs (32 MB).
COST_ELEMENTS = TASK_VALUES


class HistogramRows:
    """The weighted or vanishing histogram of ``predictions`` (queries x teachers) as
    ``(queries, classes)`` float64 rows, formed where rows are asked for (a slice, a row
    or an array of row numbers: what ``setting.rows_of`` asks), never whole.
    ``build(rows, start)`` gives the histogram of the predictions' rows from ``start``
    (``mechanisms.participation``: the same bits however the rows are split)."""

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, predictions: np.ndarray, classes: int,
                 build: Callable[[np.ndarray, int], np.ndarray]):
        self.predictions = predictions
        self.shape = (int(predictions.shape[0]), int(classes))
        self.build = build

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key) -> np.ndarray:
        if isinstance(key, (int, np.integer)):
            row = int(key) + (self.shape[0] if key < 0 else 0)
            return self._rows(row, row + 1)[0]
        if isinstance(key, slice) and key.step in (None, 1):
            lo, hi, _ = key.indices(self.shape[0])
            return self._rows(lo, max(lo, hi))
        rows = np.asarray(key, dtype=np.int64).reshape(-1)
        if rows.size == 0:
            return np.empty((0, self.shape[1]))
        lo, hi = int(rows.min()), int(rows.max()) + 1
        return self._rows(lo, hi)[rows - lo]

    def _rows(self, lo: int, hi: int) -> np.ndarray:
        if hi <= lo:
            return np.empty((0, self.shape[1]))
        return self.build(np.asarray(self.predictions[lo:hi]), lo)

    def whole_counts(self, step: int) -> bool:
        """Whether every count is a whole number (a pass, ``step`` rows at a time)."""
        return all(np.array_equal(part, np.rint(part))
                   for part in (self._rows(lo, min(self.shape[0], lo + step))
                                for lo in range(0, self.shape[0], step)))


def histogram_rows(variant: str, predictions: np.ndarray, *, classes: int,
                   weights: np.ndarray | None = None,
                   frequencies: np.ndarray | None = None, seed: int = 0) -> HistogramRows:
    """Weighting's (per-teacher ``weights``) or vanishing's (per-teacher participation
    ``frequencies``, drawn from ``seed``) histogram rows (MATH.md section 9)."""
    if variant == "weighting":
        def build(rows: np.ndarray, start: int) -> np.ndarray:
            return weighted_histogram(rows, weights, classes=classes)
    else:
        def build(rows: np.ndarray, start: int) -> np.ndarray:
            return vanishing_votes(rows, frequencies=frequencies, seed=seed,
                                   classes=classes, start=start).votes
    return HistogramRows(predictions, classes, build)


class GroupSetting(NamedTuple):
    """What the group costs of any span of queries need (MATH.md section 9):
    ``sensitivities`` per group (upsampling, weighting) or ``frequencies`` per teacher
    (vanishing, whose members are the teachers, of groups ``member_groups``)."""

    mechanism: Mechanism
    orders: np.ndarray
    sensitivities: np.ndarray
    frequencies: np.ndarray | None
    member_groups: np.ndarray | None
    seed: int
    groups: int


def span_costs(setting: GroupSetting, start: int, log_q: np.ndarray, log_pr: np.ndarray,
               answered: np.ndarray, charge: np.ndarray, *, independent: bool,
               map: Mapper = map) -> Iterator[CostChunk]:
    """The group costs of queries ``start ..`` (their ``log q``, ``log pr_answered``,
    whether a label was output and the answer step's charge), as cost chunks in query
    order: one for upsampling and weighting (curves left to ``account_groups`` or
    ``GroupSums`` to evaluate a window at a time), steps of about ``COST_ELEMENTS``
    evaluated values for vanishing. ``independent``: each group's data-independent costs.
    Interactive's selection runs on n - M p; its ``log pr_answered`` is the replay's."""
    mechanism = setting.mechanism
    selection = mechanism.selects
    common = dict(sigma=mechanism.sigma, orders=setting.orders,
                  sigma_threshold=mechanism.sigma_threshold if selection else None,
                  data_independent=independent,
                  screening=_screening(mechanism) if selection else None)
    count = log_q.shape[0]
    if setting.frequencies is None:
        yield group_costs(log_q, sensitivities=setting.sensitivities, evaluate=False,
                          answered=answered, charge=charge,
                          log_pr_answered=log_pr if selection else None, **common)
        return
    step = max(64, COST_ELEMENTS // ((setting.groups + 1) * setting.orders.size))
    for lo in range(0, count, step):
        part = slice(lo, min(count, lo + step))
        participation = vanishing_participation(setting.frequencies, seed=setting.seed,
                                                count=part.stop - lo, start=start + lo)
        yield vanishing_costs(log_q[part], participation=participation, map=map,
                              answered=answered[part], charge=charge[part],
                              log_pr_answered=log_pr[part] if selection else None,
                              **common)


def _screening(mechanism) -> tuple | None:
    """``(T, kind, low, high)`` of the threshold step's exact curve (MATH.md s.17), None
    under ``screening="gaussian"``. The counts are whole for plain and upsampled votes and
    for weighted or rescaled ones whose histogram came out whole (the caller's check); a
    group's step ``D`` must be whole too for the integer grid (``curves``)."""
    kind, low, high = screening_counts(mechanism)
    if kind == "gaussian":
        return None
    return (float(mechanism.threshold), kind, low, high)


def add_span(sums: GroupSums, chunks: Iterator[CostChunk], *, map: Mapper = map
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A span's cumulative figures (``GroupSums.add``) over its cost chunks, joined."""
    parts = [sums.add(chunk, map=map) for chunk in chunks]
    if len(parts) == 1:
        return parts[0]
    eps, order, base = zip(*parts, strict=True)
    return np.concatenate(eps), np.concatenate(order), np.concatenate(base)


class _Chunk(NamedTuple):
    """A replayed chunk: the answer step's charge (``answered``), each query's output
    label and outcome, ``log q`` and ``log pr_answered``."""

    start: int
    weight: np.ndarray
    labels: np.ndarray
    outcome: np.ndarray | None
    log_q: np.ndarray
    log_pr: np.ndarray


class StreamTotals(NamedTuple):
    """The summary's figures of a streamed individualized run: the group totals, the
    data-independent epsilons at the stop and after the last query, the label counts up
    to the stop and the answered weight before the stop (counted; None under expected
    accounting, whose sum of probabilities ``individualized.answered_before`` forms)."""

    groups: GroupTotals
    independent_spent: np.ndarray
    independent_final: np.ndarray
    labels: LabelCounts
    answered: float | None


def totals_rows(chunk_size: int | None, orders: int) -> int:
    """Queries per chunk of :func:`group_totals`: ``chunk_size``, else at most
    ``TABLE_ROWS`` and ``STREAM_CURVE_VALUES`` curve values (its replay forms them in
    pieces bounded by vote values apart, :func:`replayed`; fewer chunks evaluate each
    distinct selection curve fewer times)."""
    if chunk_size is not None:
        return chunk_size
    return min(TABLE_ROWS, max(1, STREAM_CURVE_VALUES // max(1, orders)))


def group_totals(base: AnalysisResult, votes, setting: GroupSetting, *, names: tuple,
                 budgets: np.ndarray, student=None, labels=None, chunk_size: int,
                 workers: int | None = None) -> StreamTotals:
    """Replay ``base`` (a totals-only analysis of ``votes``) chunk by chunk and compose
    every group's cost (MATH.md section 9): the summary figures, the same bits as
    ``account_groups`` over the whole run's columns, in memory bounded by the chunk."""
    accounting = base.accounting
    independent = accounting == "data-independent"
    make: dict[str, Any] = dict(groups=budgets.size, orders=setting.orders, delta=base.delta,
                conversion=base.conversion, member_groups=setting.member_groups)
    sums, stops = GroupSums(**make), GroupStops(budgets)
    # each group's data-independent figures at the stop and at the end: from the running
    # sums alone where every group pays one curve (upsampling, weighting), else composed
    # per teacher as the run's own (vanishing)
    spent_only = (None if independent or setting.frequencies is not None
                  else IndependentSpent(sums.rule, setting.sensitivities))
    other_sums, other_stops = ((None, None) if independent or spent_only is not None
                               else (GroupSums(**make), GroupStops(budgets)))
    counts = LabelCounts(base.mechanism.uses_student)
    truth = None if labels is None else np.asarray(labels)
    answered_count = 0
    held: dict[str, np.ndarray] = {}

    def add(chunk: _Chunk) -> None:
        nonlocal answered_count
        count = chunk.weight.shape[0]
        output = chunk.labels >= 0
        eps, order, base_eps = add_span(sums, span_costs(
            setting, chunk.start, chunk.log_q, chunk.log_pr, output, chunk.weight,
            independent=independent, map=curves_map), map=curves_map)
        before = stops.stopped_at
        stops.add(eps, order, base_eps, output, output)
        # under expected accounting too, the answers the replay made (outcome or label)
        made = (chunk.weight if accounting != "expected"
                else (chunk.outcome == OUTCOME_TEACHER).astype(np.float64)
                if chunk.outcome is not None else output.astype(np.float64))
        if spent_only is not None:
            cut = (None if before is not None or stops.stopped_at is None
                   else stops.stopped_at - chunk.start)
            (costs,) = span_costs(setting, chunk.start, chunk.log_q, chunk.log_pr, output,
                                  made, independent=True)
            at_cut = spent_only.add(costs, cut=cut)
            if at_cut is not None:
                held["spent"] = at_cut
        if other_sums is not None and other_stops is not None:
            other = add_span(other_sums, span_costs(
                setting, chunk.start, chunk.log_q, chunk.log_pr, output, made,
                independent=True, map=curves_map), map=curves_map)
            other_stops.add(*other, output, output)
            if stops.stopped_at is not None and "spent" not in held:
                held["spent"] = other_stops.epsilon_before(stops.stopped_at)
        if before is None:  # labels up to the stop
            upto = count if stops.stopped_at is None else stops.stopped_at - chunk.start
            stop = chunk.start + upto
            counts.add(chunk.labels[:upto],
                       None if chunk.outcome is None else chunk.outcome[:upto],
                       None if truth is None else truth[chunk.start:stop])
            answered_count += int(np.count_nonzero(chunk.weight[:upto]))

    with curve_threads(workers) as curves_map:
        for chunk in replayed(base, votes, student=student, chunk_size=chunk_size,
                              workers=workers):
            add(chunk)
    # a sum of pr_answered is the caller's (``individualized.answered_before``)
    answered = None if accounting == "expected" else float(answered_count)
    totals = stops.totals(names, setting.sensitivities)
    if spent_only is not None:
        final = spent_only.final()
        spent = held.get("spent", final)
    elif other_stops is None:
        spent, final = totals.epsilon, totals.final_epsilon
    else:
        final = other_stops.totals(names, setting.sensitivities).final_epsilon
        spent = held.get("spent", final)
    return StreamTotals(totals, spent, final, counts, answered)


@contextmanager
def curve_threads(workers: int | None) -> Iterator[Mapper]:
    """A thread pool's ``map`` for the group accounting's independent curves (numpy
    releases the GIL in its loops; each task writes only its own figures, so the numbers
    do not depend on it), the builtin ``map`` on one core."""
    workers = default_workers() if workers is None else workers
    if workers < 2:
        yield map
        return
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        yield pool.map
    finally:  # every map has returned; a stream closed early may be closed on a thread
        pool.shutdown(wait=False)


def replayed(base: AnalysisResult, votes, *, student=None, chunk_size: int,
             workers: int | None = None) -> Iterator[_Chunk]:
    """``base``'s queries replayed a chunk of ``chunk_size`` at a time (MATH.md s.1:
    noise keyed by query position), formed ahead on ``workers`` threads in pieces of at
    most ``READ_VALUES`` vote values (what a replay holds while it runs is several times
    its votes; a chunk keeps only five numbers a query)."""
    mechanism = base.mechanism
    queries = base.queries
    selection, answer = mechanism_steps(mechanism)
    noise = NoiseSource(base.seed)
    positions = FirstRows(queries)

    def form(piece: tuple[int, int]) -> _Chunk:
        start, stop = piece
        chunk = chunk_costs(votes, positions, start, stop, mechanism=mechanism,
                            selection=selection, answer=answer, noise=noise,
                            accounting=base.accounting, orders=np.ones(1), student=student,
                            curves=False)
        labels, outcome = released_labels(chunk.made, chunk.made.answered,
                                          mechanism.uses_student)
        return _Chunk(start, chunk.weight, labels, outcome, chunk.log_q, chunk.log_pr)

    step = max(1, min(chunk_size, chunk_rows(None, row_width(votes))))
    pieces = [(lo, min(queries, lo + step)) for lo in range(0, queries, step)]
    held: list[_Chunk] = []
    for piece in ordered_map(form, pieces, workers=workers):
        held.append(piece)
        end = piece.start + piece.weight.shape[0]
        if end - held[0].start >= chunk_size or end == queries:
            yield _joined(held)
            held = []


def _joined(pieces: list[_Chunk]) -> _Chunk:
    """Consecutive replayed pieces as one chunk."""
    if len(pieces) == 1:
        return pieces[0]
    _, *columns = zip(*pieces, strict=True)
    return _Chunk(pieces[0].start, *(None if parts[0] is None else np.concatenate(parts)
                                     for parts in columns))


def group_frames(base: AnalysisResult, votes, setting: GroupSetting, *, names: tuple,
                 stopped_at: int | None, student=None, chunk_size: int,
                 workers: int | None = None) -> Iterator:
    """The per-query table of the individualized run, a chunk at a time: ``base``'s
    streamed table (``per_query_stream.per_query_frames``) with nothing released from
    ``stopped_at`` on and each group's cumulative epsilon (``epsilon_cumulative_<group>``),
    composed from the table's own ``log q``, ``log pr_answered``, labels and charges:
    the rows, bit for bit, of the individualized run's ``to_frame()``."""
    sums = GroupSums(groups=len(names), orders=setting.orders, delta=base.delta,
                     conversion=base.conversion, member_groups=setting.member_groups)
    independent = base.accounting == "data-independent"
    start = 0
    with curve_threads(workers) as curves_map:
        for frame in per_query_frames(base, votes, student=student, chunk_size=chunk_size,
                                      workers=workers):
            yield _with_group_columns(frame, sums, setting, start, names=names,
                                      stopped_at=stopped_at, independent=independent,
                                      map=curves_map)
            start += len(frame)


def _with_group_columns(frame, sums: GroupSums, setting: GroupSetting, start: int, *,
                        names: tuple, stopped_at: int | None, independent: bool,
                        map: Mapper):
    """A piece of the base run's table from query ``start`` on, with nothing released
    from ``stopped_at`` on and each group's cumulative epsilon (``sums`` carried)."""
    import pandas as pd

    count = len(frame)
    label = frame["label"].to_numpy(dtype=np.int64, na_value=-1)
    eps, _, _ = add_span(sums, span_costs(
        setting, start, frame["log_q"].to_numpy(dtype=np.float64),
        frame["log_pr_answered"].to_numpy(dtype=np.float64), label >= 0,
        frame["answered"].to_numpy(dtype=np.float64), independent=independent, map=map),
        map=map)
    cut = None if stopped_at is None else max(0, stopped_at - start)
    if cut is not None and cut < count:  # nothing released from the stop on
        label[cut:] = -1
        values = pd.array(np.where(label >= 0, label, 0), dtype="Int64")
        values[label < 0] = pd.NA
        frame["label"] = values
        if "outcome" in frame:  # built as result.per_query_frame builds it
            outcome = frame["outcome"].to_numpy(dtype=str)
            outcome[cut:] = INTERACTIVE_NAMES[OUTCOME_ABSTAIN]
            frame["outcome"] = outcome
    for g, name in enumerate(names):
        frame[f"epsilon_cumulative_{name}"] = eps[:, g]
    return frame
