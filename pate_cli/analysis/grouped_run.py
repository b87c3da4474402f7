"""Totals-only runs (math:conversion, math:costs): chunks counted apart, here or on any executor.

A chunk's :class:`ChunkCount` (distinct (answer, selection) statistics with integer query and
answer counts, ``accounting.grouped``, and label counts) merges exactly in any order, on
threads or any ``concurrent.futures`` executor such as Dask (:func:`count_queries`). Totals
come from whole windows (``BoundedTotals``: bounded memory): same bits for any chunk size,
worker count or place of counting; replay noise is keyed by query position. Without true
labels to score, the answer noise is not drawn (the costs do not need it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..accounting.grouped import BoundedTotals, GroupedCounts, GroupedTotals, window_pieces
from ..decisions import LabelCounts, released_labels
from ..inputs.rows import LocalRows, Span, span_of
from ..mechanisms import Mechanism, NoiseSource
from ..numerics import whole as whole_numbers
from ..threads import executor_map, ordered_map, tasks_in_order
from ..vote_rows import row_width
from ..work_sizes import READ_VALUES, TASK_VALUES
from .result import RunSetting
from .steps import Costing, block_costs, mechanism_steps


@dataclass(frozen=True)
class CountRequest:
    """What every chunk of one run is counted with (small, picklable); ``queries``: keep each
    chunk's per-query statistics (:class:`QueryChunk`) for a consumer."""

    mechanism: Mechanism
    accounting: str
    q_bound: str = "union"
    seeds: tuple[int, ...] = (0,)  # a sweep's point counts its repeats' seeds at once
    salt: int = 0
    draw_labels: bool = True
    queries: bool = False
    maxima: bool = False  # record whether every plurality count is whole (a table's type)


@dataclass(frozen=True, eq=False)
class QueryChunk:
    """A counted chunk's queries for a consumer (one seed): ``start`` (the first's analysed
    position), ``log_q``, ``log_pr`` (zeros if data-independent), ``weight`` (answer charge),
    ``answered``, released ``labels`` (-1: none; without true labels to score,
    ``LABEL_NOT_DRAWN`` for each teacher label), Interactive's ``outcome`` codes (else None),
    ``raised`` (``steps.ChunkCosts.raised``)."""

    start: int
    log_q: np.ndarray
    log_pr: np.ndarray
    weight: np.ndarray
    answered: np.ndarray
    labels: np.ndarray
    outcome: np.ndarray | None
    raised: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class ChunkCount:
    """Queries' distinct statistics with counts (an answered column per seed), label counts
    per seed and, if asked, their :class:`QueryChunk` s."""

    table: GroupedCounts
    labels: tuple[LabelCounts, ...]
    queries: tuple[QueryChunk, ...] = ()
    whole: bool = True  # every plurality count whole (``CountRequest.maxima``)


def count_rows(classes: int) -> int:
    """Rows per counted chunk for ``classes`` classes: a power of two, so whole chunks fill a
    ``TOTALS_WINDOW`` window (no short piece at its end)."""
    rows = max(1, READ_VALUES // max(1, classes))
    return 1 << (rows.bit_length() - 1)


def count_span(request: CountRequest, span: Span, *, chunk_size: int, lo: int = 0,
               hi: int | None = None, opened=None, shared_noise=None) -> ChunkCount:
    """Count queries ``lo .. hi-1`` (default all) of ``span`` (``opened``: its open source),
    ``chunk_size`` rows at a time through ``block_costs`` (all ``request.seeds`` at once, or
    the span's ``decisions``), labels scored against ``truth`` if given. ``shared_noise``:
    noise blocks kept across a sweep's points (``run.SharedWork``)."""
    hi = span.size if hi is None else hi
    opened = span.source.opened() if opened is None else opened
    mechanism = request.mechanism
    selection, answer = mechanism_steps(mechanism, q_bound=request.q_bound)
    labels, tables, kept, whole = _no_labels(request), [], [], True
    costing = Costing(mechanism, selection, answer, noise=tuple(
        NoiseSource(seed, salt=request.salt, shared=shared_noise) for seed in request.seeds),
        accounting=request.accounting, curves=False,
        labels=request.draw_labels,
        statistics=request.accounting != "data-independent")
    for first in range(lo, hi, chunk_size):
        last = min(hi, first + chunk_size)
        chunk = block_costs(
            span.source.block(span.rows, first, last, votes=opened),
            None if span.student is None else span.student[first:last], span.start + first,
            None if span.decisions is None else span.decisions.padded(first, last), costing)
        for counts, one in zip(labels, chunk.runs, strict=True):
            released = released_labels(one, one.answered, mechanism.uses_student)
            counts.add(*released, None if span.truth is None else span.truth[first:last])
        if request.maxima and whole:
            whole = whole_numbers(chunk.block.max(axis=1))
        if request.queries:  # (a single seed)
            kept.append(QueryChunk(span.start + first, chunk.log_q, chunk.log_pr,
                                   chunk.weight, chunk.made.answered, *released,
                                   raised=chunk.raised))
        answered = (chunk.made.answered if len(chunk.runs) == 1
                    else np.stack([one.answered for one in chunk.runs], axis=1))
        tables.append(GroupedCounts.of_queries(chunk.log_q, chunk.log_pr, answered,
                                               chunk.raised))
    return ChunkCount(GroupedCounts.merge(tables), labels, tuple(kept), whole)


@dataclass(frozen=True, eq=False)
class CountedRun:
    """A run's sums (``grouped_totals``), label counts, and whole table of distinct pairs when
    the sums came from one table (else None)."""

    totals: GroupedTotals
    labels: tuple[LabelCounts, ...]
    table: GroupedCounts | None
    whole: bool = True  # every plurality count whole (``CountRequest.maxima``)


def count_queries(votes, positions, request: CountRequest,
                  totals_of: Callable[..., GroupedTotals], setting: RunSetting, *,
                  truth: np.ndarray | None = None, source=None,
                  shared_noise=None) -> CountedRun:
    """Count queries ``positions`` of ``votes``, summed as windows end (``totals_of(table,
    map=...)``; ``BoundedTotals``), in a few chunks' memory. Chunks of ``setting.chunk_size``
    rows (``truth`` scored) never cross a window edge; they run on ``workers`` threads
    (default: the cores) or ``executor``, a task per span of whole chunks of at most
    ``TASK_VALUES`` values (``source`` its rows). ``progress`` is called after each span, the
    ``consumer`` (with ``request.queries``) with each :class:`QueryChunk` in query order."""
    chunk_size, student, decisions = setting.chunk_size, setting.student, setting.decisions
    workers, executor, progress = setting.workers, setting.executor, setting.progress
    consumer = setting.consumer
    if executor is None:
        source, span_rows = LocalRows(votes), chunk_size
    else:
        span_rows = chunk_size * max(1, TASK_VALUES // max(1, chunk_size * row_width(votes)))
        shared_noise = None  # kept in this process only
    pieces = list(window_pieces(positions.size, span_rows))

    def task(piece: tuple[int, int]) -> partial:
        span = span_of(votes, positions, *piece, source=source, student=student,
                       decisions=decisions, truth=truth)
        return partial(count_span, request, span, chunk_size=chunk_size,
                       shared_noise=shared_noise)

    totals = BoundedTotals(partial(totals_of, map=partial(ordered_map, workers=workers)
                                   if executor is None else partial(executor_map, executor)))
    labels, whole = _no_labels(request), True
    counts = tasks_in_order(task, pieces, workers=workers, executor=executor)
    for (_, stop), part in zip(pieces, counts, strict=True):
        totals.add(part.table, stop)
        whole = whole and part.whole
        for total, one in zip(labels, part.labels, strict=True):
            total.merge_in(one)
        for chunk in part.queries:
            consumer(chunk)
        if progress is not None:
            progress(stop, positions.size)
    sums, table = totals.result()
    return CountedRun(sums, labels, table, whole)


def _no_labels(request: CountRequest) -> tuple[LabelCounts, ...]:
    return tuple(LabelCounts(request.mechanism.uses_student) for _ in request.seeds)
