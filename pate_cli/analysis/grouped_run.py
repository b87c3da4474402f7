"""Totals-only runs: chunks counted apart, in parallel, here or on any executor (MATH.md
s.6-7).

A chunk of queries becomes a :class:`ChunkCount`: the table of its distinct (answer,
selection) statistics with their query and answer counts (``accounting.grouped``) and its
label counts. Counts are integers and merge exactly, in any order: on threads here
(:func:`count_queries`) or on any ``concurrent.futures`` executor, e.g. a Dask cluster
(:func:`counted_remotely`: a task per span of chunks, merged in order as they come back).
The totals are formed from whole windows of queries (``accounting.grouped.BoundedTotals``:
memory bounded whatever the votes), so they are the same bits for any chunk size, worker
count or place of counting; replay noise is keyed by query position (``mechanisms.noise``).
Without true labels to score, the answer noise is not drawn (the costs do not need it).
A span is counted from a row source (``inputs.rows``: ``LocalRows`` here, ``ShippedRows``
or ``inputs.shards.NpyRows`` in a task, which carries only what its rows need), for a
whole run's chunks or one budget block (``analysis.budget_run``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from ..accounting.grouped import BoundedTotals, GroupedCounts, GroupedTotals, window_pieces
from ..decisions import Decisions
from ..inputs.rows import LocalRows, ShippedRows, rows_of
from ..mechanisms import Mechanism, NoiseSource
from ..sparse_rows import row_width
from ..threads import in_order, ordered_map
from ..work_sizes import READ_VALUES, TASK_VALUES
from .setting import FirstRows, LabelCounts, released_labels
from .steps import given_rows, mechanism_steps


@dataclass(frozen=True)
class CountRequest:
    """What every chunk of one run is counted with (small and picklable)."""

    mechanism: Mechanism
    accounting: str
    q_bound: str = "union"
    seeds: tuple[int, ...] = (0,)  # a sweep's point counts its repeats' seeds at once
    salt: int = 0
    draw_labels: bool = True


@dataclass(frozen=True, eq=False)
class ChunkCount:
    """A set of queries' distinct statistics with counts (an answered column per seed
    when several), and their label counts (one per seed)."""

    table: GroupedCounts
    labels: tuple[LabelCounts, ...]


def count_chunk(request: CountRequest, block: np.ndarray, start: int, *,
                student: np.ndarray | None = None, decisions: Decisions | None = None,
                truth: np.ndarray | None = None, shared_noise=None) -> ChunkCount:
    """Count the queries of ``block`` (float64 rows, the analysed queries ``start ..``):
    the seeded replay's decisions for each of ``request.seeds`` (or the given
    ``decisions`` for these rows), the statistics their costs depend on (formed once for
    every seed), and the released labels (scored against ``truth`` when given).
    ``shared_noise``: noise blocks kept across a sweep's points (``analysis.run.SharedWork``)."""
    mechanism = request.mechanism
    made = [decisions] if decisions is not None else [
        mechanism.replay(block, noise=NoiseSource(seed, salt=request.salt, shared=shared_noise),
                         start=start, student=student, labels=request.draw_labels)
        for seed in request.seeds]
    answer_key, selection_key = chunk_keys(request, block, student)
    labels = []
    for one in made:
        labels.append(LabelCounts(mechanism.uses_student))
        labels[-1].add(*released_labels(one, one.answered, mechanism.uses_student), truth)
    answered = (made[0].answered if len(made) == 1
                else np.stack([one.answered for one in made], axis=1))
    return ChunkCount(GroupedCounts.of_queries(answer_key, selection_key, answered),
                      tuple(labels))


def grouping_keys(log_q: np.ndarray, log_pr: np.ndarray,
                  independent: bool) -> tuple[np.ndarray, np.ndarray]:
    """The (answer, selection) statistics a run's table of distinct pairs groups queries
    by, given their ``log q`` and ``log pr_answered``: those, or zeros under
    data-independent accounting, where every query costs the same (:func:`chunk_keys`)."""
    if independent:
        return np.zeros(log_q.shape[0]), np.zeros(log_q.shape[0])
    return log_q, log_pr


def chunk_keys(request: CountRequest, block: np.ndarray,
               student: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The (answer, selection) statistics of ``block``'s queries: ``log q`` and
    ``log pr_answered`` (0 without a selection step); zeros under data-independent
    accounting, where every query costs the same."""
    count = block.shape[0]
    if request.accounting == "data-independent":
        return np.zeros(count), np.zeros(count)
    selection, answer = mechanism_steps(request.mechanism, q_bound=request.q_bound)
    return (answer.statistic(block, student),
            np.zeros(count) if selection is None else selection.statistic(block, student))


def count_rows(classes: int) -> int:
    """Rows per counted chunk for ``classes`` classes: a power of two, so that whole
    chunks fill a window of ``accounting.grouped.TOTALS_WINDOW`` (no short piece at
    each window's end)."""
    rows = max(1, READ_VALUES // max(1, classes))
    return 1 << (rows.bit_length() - 1)


def count_span(request: CountRequest, source, rows, start: int, *, chunk_size: int,
               student=None, decisions=None, truth=None, lo: int = 0, hi: int | None = None,
               opened=None, shared_noise=None) -> ChunkCount:
    """Count the queries ``lo .. hi-1`` (default: all) of a span: the analysed queries
    ``start ..``, file rows ``rows`` of ``source`` (``LocalRows`` or a cluster task's
    source, ``opened`` if already opened), with the span's own rows of ``student``,
    ``decisions`` and ``truth``; a chunk of ``chunk_size`` rows at a time, merged."""
    size = rows.stop - rows.start if isinstance(rows, slice) else rows.size
    hi = size if hi is None else hi
    opened = source.opened() if opened is None else opened

    def chunk(first: int) -> ChunkCount:
        last = min(hi, first + chunk_size)
        return count_chunk(
            request, source.block(rows, first, last, votes=opened), start + first,
            student=None if student is None else student[first:last],
            decisions=None if decisions is None else given_rows(decisions, first, last),
            truth=None if truth is None else truth[first:last], shared_noise=shared_noise)

    return merged_counts(map(chunk, range(lo, hi, chunk_size)), request)


def span_arguments(votes, positions, start: int, stop: int, *, source, student=None,
                   decisions=None, truth=None) -> dict:
    """What a span of the analysed queries ``start .. stop-1`` is counted with (the
    keywords of ``count_span`` after ``request``): ``at``, where its rows come from
    (``source``; its rows themselves when None, ``ShippedRows``)
    and which file rows (a slice or an index array), and its rows of ``student``,
    ``decisions`` and ``truth``."""
    rows = (slice(start, stop) if isinstance(positions, FirstRows)
            else np.asarray(positions[start:stop]))
    if source is None:
        source = ShippedRows(rows_of(votes, positions, start, stop, dtype=None))
    return {"at": (source, rows),
            "student": None if student is None else rows_of(student, positions, start, stop),
            "decisions": None if decisions is None else given_rows(decisions, start, stop),
            "truth": None if truth is None else truth[positions[start:stop]]}


@dataclass(frozen=True, eq=False)
class CountedRun:
    """A run's sums (``accounting.grouped.grouped_totals``), its label counts, and its
    whole table of distinct pairs when the sums came from one table (else None)."""

    totals: GroupedTotals
    labels: tuple[LabelCounts, ...]
    table: GroupedCounts | None


def count_queries(votes, positions, request: CountRequest, *, chunk_size: int,
                  totals_of: Callable[[GroupedCounts], GroupedTotals],
                  student=None, decisions: Decisions | None = None,
                  truth: np.ndarray | None = None, workers: int | None = None,
                  progress: Callable[[int, int], object] | None = None,
                  shared_noise=None) -> CountedRun:
    """Count the analysed queries ``positions`` of ``votes`` chunk by chunk (chunks cut
    at window edges, ``accounting.grouped.window_pieces``), on ``workers`` threads
    (default: the cores this process may use), and sum them (``totals_of`` sums a table)
    as windows end; memory holds a few chunks and the bounded tables, whatever the file
    size and however often its votes repeat."""
    queries = positions.size
    pieces = list(window_pieces(queries, chunk_size))
    local = LocalRows(votes)

    def one(piece: tuple[int, int]) -> ChunkCount:
        start, stop = piece
        arguments = span_arguments(votes, positions, start, stop, source=local,
                                   student=student, decisions=decisions, truth=truth)
        return count_span(request, *arguments.pop("at"), start, chunk_size=chunk_size,
                          shared_noise=shared_noise, **arguments)

    return summed_counts(zip((stop for _, stop in pieces),
                             ordered_map(one, pieces, workers=workers), strict=True),
                         totals_of, request, queries=queries, progress=progress)


def summed_counts(parts: Iterable[tuple[int, ChunkCount]],
                  totals_of: Callable[[GroupedCounts], GroupedTotals], request: CountRequest,
                  *, queries: int, progress: Callable[[int, int], object] | None = None
                  ) -> CountedRun:
    """The run's sums from its pieces' counts ``(stop, count)`` in query order (pieces
    never cross a window edge), with label counts merged as they come."""
    totals = BoundedTotals(totals_of)
    labels = _no_labels(request)
    for stop, part in parts:
        totals.add(part.table, stop)
        for total, counted in zip(labels, part.labels, strict=True):
            total.merge_in(counted)
        if progress is not None:
            progress(stop, queries)
    sums, table = totals.result()
    return CountedRun(sums, labels, table)


def merged_counts(parts: Iterable[ChunkCount], request: CountRequest) -> ChunkCount:
    """The chunk counts ``parts`` (of one span: a budget block, a cluster task) merged
    (exact, in any order)."""
    parts = list(parts)
    labels = _no_labels(request)
    for part in parts:
        for total, counted in zip(labels, part.labels, strict=True):
            total.merge_in(counted)
    return ChunkCount(GroupedCounts.merge(part.table for part in parts), labels)


def _no_labels(request: CountRequest) -> tuple[LabelCounts, ...]:
    """Empty label counts, one per seed of ``request``."""
    return tuple(LabelCounts(request.mechanism.uses_student) for _ in request.seeds)


def counted_remotely(executor, votes, positions, request: CountRequest, *, source,
                     chunk_size: int, student=None, decisions=None, truth=None,
                     window: int = 8) -> Iterator[tuple[int, ChunkCount]]:
    """The analysed queries ``positions`` counted by ``executor`` (``submit`` and futures
    with ``result()``), a task per span of whole chunks (at most
    ``work_sizes.TASK_VALUES`` vote values; never across a window edge,
    ``accounting.grouped.window_pieces``), yielded in order as ``(stop, count)``; at most
    ``window`` tasks in flight."""
    queries = positions.size
    classes = row_width(votes)
    span = chunk_size * max(1, TASK_VALUES // max(1, chunk_size * classes))
    spans = list(window_pieces(queries, span))

    def submit(piece: tuple[int, int]):
        start, stop = piece
        arguments = span_arguments(votes, positions, start, stop, source=source,
                                   student=student, decisions=decisions, truth=truth)
        return executor.submit(count_span, request, *arguments.pop("at"), start,
                               chunk_size=chunk_size, **arguments)

    yield from zip((stop for _, stop in spans), in_order(submit, spans, window=window),
                   strict=True)
