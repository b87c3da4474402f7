"""The per-query table of a totals-only run, chunk by chunk (a second pass), and the run's
decisions read from it.

:func:`per_query_frames` replays a totals-only run (order, halt, totals known) chunk by chunk
(noise keyed by query position, math:mechanisms; running sums carried, math:conversion) into
cli:per-query's table, bit for bit the per-query run's ``to_frame()``, in one chunk's memory.
Running sums are formed only at orders that can still give a cumulative epsilon
(``accounting.live_orders``); each query's own epsilon is looked up in
``result.distinct_pairs`` (``accounting.own_epsilons``) or, for a budget run, from its curves
at the orders that may give its minimum (``probed_epsilons``): both the full computation's
bits. A streamed run's smooth-sensitivity release (``PendingRelease``) and its decisions
(cli:decisions; :func:`streamed_decisions`) are formed from the same chunks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from ..accounting.composition import StepRows, initial_carry
from ..accounting.conversion import checked_setting
from ..accounting.grouped import window_pieces
from ..accounting.live_orders import LiveOrders, epsilon_ceiling
from ..accounting.own_epsilons import OwnEpsilons, probed_epsilons
from ..curve_store import SharedCurves
from ..decisions import Decisions, released_labels
from ..inputs.query_indices import analysed_positions
from ..inputs.rows import integral_maxima, rows_of
from ..mechanisms import NoiseSource
from ..query_table import per_query_frame
from ..threads import ordered_map
from ..vote_rows import plurality_classes, row_width
from ..work_sizes import CURVE_CACHE_BYTES, stream_rows
from .added_figures import PendingRelease, selection_maxima
from .result import AnalysisResult, RunSetting
from .steps import chunk_costs, curve_function, mechanism_steps, step_curves


def per_query_frames(result: AnalysisResult, votes, setting: RunSetting | None = None,
                     **options) -> Iterator:
    """The per-query run's ``to_frame()``, one DataFrame a chunk, for the totals-only LNMax,
    GNMax, Confident or Interactive ``result`` of ``votes``. ``setting`` (``options`` replace
    its fields): ``query_indices``, ``student``, ``decisions``, ``q_bound``, ``salt``,
    ``chunk_size`` (None: sized for the table), ``workers`` (threads forming chunks ahead; same
    bits for any). Only the first ``result.queries`` are replayed (a budget run's halt)."""
    setting = RunSetting.of(**options) if setting is None else replace(setting, **options)
    query_indices, student, decisions = (setting.query_indices, setting.student,
                                         setting.decisions)
    q_bound, salt, workers = setting.q_bound, setting.salt, setting.workers
    chunk_size = setting.chunk_size
    orders, converter = checked_setting(result.accounting, result.delta, result.orders,
                                        result.conversion)
    # running sums of up to every requested query (and the RDP spent before)
    converter = converter.summing((result.requested or result.queries) + 1)
    selection, answer = mechanism_steps(result.mechanism, q_bound=q_bound)
    independent = result.accounting == "data-independent"
    noise = NoiseSource(result.seed, salt=salt)
    queries = result.queries
    # a streamed run's smooth-sensitivity release, formed from this pass's chunks where they
    # are its own (PendingRelease): the table then takes its chunks
    chunk_size = stream_rows(chunk_size, row_width(votes), orders.size)
    pending = result.release if isinstance(result.release, PendingRelease) else None
    release = None if pending is None else pending.claim(chunk_size, (
        None if result.budget is None or result.budget.carries is None
        else result.budget.block))
    if release is not None and pending is not None:
        chunk_size = pending.chunk_size
    positions = (analysed_positions(votes.shape[0], query_indices, queries, lazy=True)
                 if queries else np.empty(0, np.int64))
    at_order = np.array([result.order])
    whole = None if result.counts is None else result.counts.whole_maxima
    integral = integral_maxima(votes, positions, queries, chunk_size) if whole is None else whole
    # a budget run's running sums restart from its carries at block starts (budget_run)
    # (a run that halted at once: one empty piece, the table's header)
    carries = None if result.budget is None else result.budget.carries
    block = max(1, queries) if carries is None else result.budget.block
    restarts = {0: initial_carry(result.initial_rdp, orders)} | ({} if carries is None else {
        block * (number + 1): carry for number, carry in enumerate(carries)})
    kept = SharedCurves(CURVE_CACHE_BYTES)
    # each query's own epsilon looked up by its statistics (accounting.own_epsilons)
    own = None if result.distinct_pairs is None else OwnEpsilons.of(
        result.distinct_pairs, selection_rdp=curve_function(selection, independent),
        answer_rdp=curve_function(answer, independent), orders=orders, conversion=converter,
        expected=result.accounting == "expected" and (
            getattr(selection, "raised_charge", None) or True),
        map=lambda function, items: ordered_map(function, items, workers=workers))

    def form(piece: tuple[int, int]):
        """A chunk's decisions and statistics (no carry: formed ahead on threads),
        ``costs_at(columns)`` (its curves at orders ``columns``), and its selection curves at
        every order with each query's index, formed once and sliced (same bits): no exact
        threshold curve is solved twice."""
        chunk = chunk_costs(votes, positions, *piece, mechanism=result.mechanism,
                            selection=selection, answer=answer, noise=noise, student=student,
                            decisions=decisions, accounting=result.accounting, curves=False)
        chosen, index = step_curves(selection, chunk.log_pr, orders, independent)

        def costs_at(columns: np.ndarray) -> StepRows:
            shared = kept if columns.size == orders.size else None
            return StepRows(np.ascontiguousarray(chosen[:, columns]), index, *step_curves(
                answer, chunk.log_q, orders[columns], independent, shared), chunk.weight)
        return chunk, costs_at, (chosen, index)

    # running sums at the live orders only (accounting.live_orders); a chunk formed ahead
    # has curves at the orders live then, which only become fewer until a restart
    sums = LiveOrders(converter, epsilon_ceiling(result.rdp_total, queries + 1, converter),
                      lambda piece, columns: form(piece)[1](columns))

    def formed(piece: tuple[int, int]):
        """A chunk formed ahead: its curves at the orders live now and its queries' own
        epsilons (looked up, or if a pair is missing ``probed_epsilons``)."""
        columns = sums.live
        chunk, costs_at, selection_curves = form(piece)
        chunk = chunk._replace(costs=costs_at(columns))
        keys = np.zeros((2, piece[1] - piece[0])) if independent else (chunk.log_q,
                                                                          chunk.log_pr)
        found = (None if own is None
                 else own.lookup(*keys, chunk.made.answered, chunk.raised))
        if found is None:
            found = probed_epsilons(costs_at, selection_curves, converter)
        return columns, chunk, found

    pieces = list(window_pieces(queries, chunk_size, window=block)) or [(0, 0)]
    for (start, stop), (formed_at, chunk, own_epsilon) in zip(
            pieces, ordered_map(formed, pieces, workers=workers), strict=True):
        if start in restarts:
            sums.restart(restarts[start])
        count = stop - start
        figures = sums.running((start, stop), chunk.costs, formed_at, count)
        sel, sel_index = step_curves(selection, chunk.log_pr, at_order, independent)
        ans, ans_index = step_curves(answer, chunk.log_q, at_order, independent)
        if release is not None and count:
            release.add(chunk.block, chunk.weight, selection_maxima(
                result.mechanism, chunk.block,
                None if student is None else rows_of(student, positions, start, stop)))
        made = chunk.made  # Interactive-GNMax's outcomes where it has codes
        label, outcome = released_labels(made, made.answered, made.code is not None)
        yield per_query_frame(SimpleNamespace(  # per_query_frame's names
            accounting=result.accounting, queries=count,
            query_index=np.asarray(positions[start:stop]),
            plurality=np.asarray(chunk.block.max(axis=1), dtype=np.float64),
            plurality_class=plurality_classes(chunk.block),
            answered=np.asarray(chunk.weight, dtype=np.float64), label=label, outcome=outcome,
            log_q=chunk.log_q, log_pr_answered=chunk.log_pr, rdp_selection=sel[sel_index, 0],
            rdp_answer=chunk.weight * ans[ans_index, 0], epsilon_query=own_epsilon,
            epsilon_cumulative=figures.epsilon, order_cumulative=orders[figures.order_index],
            columns={}), integral=integral)
    if release is not None and pending is not None:
        pending.form(release.report())


def decisions_of(result) -> Decisions:
    """An analysis's decisions made (or accounted) up to where labelling stopped, read from its
    table's stream."""
    result.require_columns("the decisions")
    return Decisions.joined(list(streamed_decisions(result)), result.mechanism.name)


def streamed_decisions(result, frames: Iterator | None = None) -> Iterator[Decisions]:
    """A streamed result's decisions a piece at a time from ``frames`` (else a new
    ``iter_frames()``), up to where labelling stopped (an individualized stop), in one piece's
    memory."""
    return Decisions.of_tables(result.iter_frames() if frames is None else frames,
                               result.mechanism.name,
                               None if result.groups is None else result.groups.stopped_at)
