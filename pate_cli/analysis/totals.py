"""End-of-run totals for several seeds, sharing the seed-free work (what a sweep needs)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

import numpy as np

from ..accounting.conversion import rdp_to_epsilon
from ..accounting.grouped import BoundedTotals, GroupedCounts, grouped_totals, window_pieces
from ..mechanisms import Mechanism, NoiseSource
from ..threads import ordered_map
from .grouped_run import CountRequest, chunk_keys, count_rows
from .result import AnalysisResult, ReplayTotals
from .run import analyze_votes
from .run_sums import LabelCounts, released_labels
from .setting import (
    DEFAULT_CHUNK,
    analysed_positions,
    checked_setting,
    grid_edge_notes,
    rows_of,
)
from .sharing import SharedWork
from .steps import curve_function, data_independent_curve, mechanism_steps


def analyze_totals(votes: np.ndarray, mechanism: Mechanism, *, seeds: Iterable[int],
                   teachers: float | None = None, accounting: str = "replay",
                   delta: float = 1e-5, orders: np.ndarray | None = None,
                   conversion: str = "classic", queries: int | None = None,
                   budget: float | None = None, labels: np.ndarray | None = None,
                   student: np.ndarray | None = None,
                   chunk_size: int | None = DEFAULT_CHUNK,
                   workers: int | None = 1,
                   shared: SharedWork | None = None) -> list[ReplayTotals]:
    """End-of-run totals of ``analyze_votes`` for several seeds, sharing the work.

    The same numbers as ``analyze_votes(..., seed=s)`` for each ``s`` in ``seeds``, bit
    for bit: each seed's decisions are counted per distinct statistic into one table
    with an answered column per seed (``accounting.grouped``), so the statistics are
    computed once per chunk and each distinct curve is evaluated once for all seeds.
    This is what a parameter sweep needs. Budget runs, Interactive-GNMax and SVT-PATE,
    whose costs depend on the replay's path, run the totals-only analysis once per seed.
    ``workers``: threads counting chunks (1 by default: a sweep runs points in parallel).
    ``shared``: noise blocks and curves kept from earlier runs over the same file (a
    sweep's points, ``analysis.sharing``); the grouped totals draw and evaluate through it
    (the same bits), the runs per seed do not.
    """
    seeds = [int(seed) for seed in seeds]
    if budget is not None or mechanism.uses_student or mechanism.sequential:
        return [_totals_of(analyze_votes(votes, mechanism, teachers=teachers,
                                         accounting=accounting, delta=delta, orders=orders,
                                         conversion=conversion, seed=seed, queries=queries,
                                         budget=budget, labels=labels, student=student,
                                         chunk_size=chunk_size, keep_columns=False,
                                         workers=workers))
                for seed in seeds]
    if student is not None:
        raise ValueError(f"a student applies to Interactive-GNMax, not {mechanism.name}")
    orders, _ = checked_setting(accounting, delta, orders, conversion)
    chunk_size = count_rows(votes.shape[1]) if chunk_size is None else chunk_size
    positions = analysed_positions(votes.shape[0], None, queries)
    queries = positions.size
    selection, answer = mechanism_steps(mechanism)
    independent = accounting == "data-independent"
    truth = None if labels is None else np.asarray(labels)
    request = CountRequest(mechanism, accounting, draw_labels=truth is not None)
    noise_kept = None if shared is None else shared.noise

    def one(piece: tuple[int, int]) -> tuple[GroupedCounts, list[LabelCounts]]:
        start, stop = piece
        block = rows_of(votes, positions, start, stop)
        keys = chunk_keys(request, block)
        answered, counted = [], []
        for seed in seeds:
            made = mechanism.replay(block, noise=NoiseSource(seed, shared=noise_kept),
                                    start=start, labels=request.draw_labels)
            answered.append(made.answered)
            labels_of = LabelCounts(False)
            labels_of.add(*released_labels(made, made.answered, False),
                          None if truth is None else truth[positions[start:stop]])
            counted.append(labels_of)
        return GroupedCounts.of_queries(*keys, np.stack(answered, axis=1)), counted

    def served(rdp):
        return rdp if shared is None else shared.curves.serving(rdp, orders)

    selection_rdp = curve_function(selection, independent)
    bounded = BoundedTotals(partial(
        grouped_totals, orders=orders, expected=accounting == "expected",
        selection_rdp=None if selection_rdp is None else served(selection_rdp),
        answer_rdp=served(curve_function(answer, independent))))
    label_counts = [LabelCounts(False) for _ in seeds]
    pieces = list(window_pieces(queries, chunk_size))
    for (_, stop), (table, counted) in zip(pieces, ordered_map(one, pieces, workers=workers),
                                           strict=True):
        bounded.add(table, stop)
        for total, part in zip(label_counts, counted, strict=True):
            total.merge_in(part)
    sums, _ = bounded.result()
    totals = []
    for run, seed in enumerate(seeds):
        answer_sum = sums.answer if sums.answer.ndim == 1 else sums.answer[run]
        answered = float(sums.answered if np.ndim(sums.answered) == 0 else sums.answered[run])
        carry = (np.zeros(orders.size) + sums.selection) + answer_sum
        epsilon, order = (float(x) for x in rdp_to_epsilon(
            carry, orders=orders, delta=delta, conversion=conversion))
        di_curve = data_independent_curve(selection, answer, answered=answered,
                                          queries=queries, orders=orders)
        eps_di, _ = rdp_to_epsilon(di_curve, orders=orders, delta=delta, conversion=conversion)
        accuracy, _ = label_counts[run].accuracy(truth is not None)
        totals.append(ReplayTotals(seed=seed, answered=answered, epsilon=epsilon,
                                   order=order, epsilon_data_independent=float(eps_di),
                                   label_accuracy=accuracy,
                                   labels_output=int(label_counts[run].output),
                                   warnings=grid_edge_notes(orders, order, epsilon),
                                   rdp_total=tuple(carry.tolist())))
    return totals


def _totals_of(result: AnalysisResult) -> ReplayTotals:
    return ReplayTotals(seed=result.seed, answered=float(result.answered_total),
                        epsilon=result.epsilon, order=float(result.order),
                        epsilon_data_independent=result.epsilon_data_independent,
                        label_accuracy=result.label_accuracy,
                        warnings=result.warnings, rdp_total=tuple(result.rdp_total.tolist()),
                        labels_output=int(result.counts.labels_output
                                          if result.counts is not None
                                          else np.count_nonzero(result.label >= 0)))
