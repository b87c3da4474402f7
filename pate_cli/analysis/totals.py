"""End-of-run totals for several seeds, sharing the seed-free work (what a sweep needs)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..accounting.composition import StepRows, running_total
from ..accounting.conversion import rdp_to_epsilon
from ..mechanisms import Mechanism, NoiseSource
from .result import AnalysisResult, ReplayTotals
from .run import analyze_votes
from .setting import (
    DEFAULT_CHUNK,
    analysed_positions,
    checked_setting,
    chunk_rows,
    grid_edge_notes,
    rows_of,
)
from .steps import data_independent_curve, mechanism_steps, step_curves


def analyze_totals(votes: np.ndarray, mechanism: Mechanism, *, seeds: Iterable[int],
                   teachers: float | None = None, accounting: str = "replay",
                   delta: float = 1e-5, orders: np.ndarray | None = None,
                   conversion: str = "classic", queries: int | None = None,
                   budget: float | None = None, labels: np.ndarray | None = None,
                   student: np.ndarray | None = None,
                   chunk_size: int | None = DEFAULT_CHUNK) -> list[ReplayTotals]:
    """End-of-run totals of ``analyze_votes`` for several seeds, sharing the work.

    The same numbers as ``analyze_votes(..., seed=s)`` for each ``s`` in ``seeds`` (the
    final RDP curve is summed in the same order, so epsilons are bit-identical), but the
    statistics and cost curves, which do not depend on the seed, are computed once, and
    no per-query epsilon is formed. This is what a parameter sweep needs. Budget runs,
    Interactive-GNMax and SVT-PATE, whose costs depend on the replay's path, run the full
    analysis once per seed.
    """
    seeds = [int(seed) for seed in seeds]
    if budget is not None or mechanism.uses_student or mechanism.sequential:
        return [_totals_of(analyze_votes(votes, mechanism, teachers=teachers,
                                         accounting=accounting, delta=delta, orders=orders,
                                         conversion=conversion, seed=seed, queries=queries,
                                         budget=budget, labels=labels, student=student,
                                         chunk_size=chunk_size))
                for seed in seeds]
    if student is not None:
        raise ValueError(f"a student applies to Interactive-GNMax, not {mechanism.name}")
    orders, _ = checked_setting(accounting, delta, orders, conversion)
    chunk_size = chunk_rows(chunk_size, votes.shape[1])
    positions = analysed_positions(votes.shape[0], None, queries)
    queries = positions.size
    selection, answer = mechanism_steps(mechanism)
    independent = accounting == "data-independent"
    expected = accounting == "expected"
    noises = [NoiseSource(seed) for seed in seeds]
    carries = np.zeros((len(seeds), orders.size))
    answered = np.zeros(len(seeds)) if not expected else None
    expected_answered = 0.0  # added in query order, as analyze_votes does (bit-identical)
    truth = None if labels is None else np.asarray(labels)
    correct = np.zeros(len(seeds), dtype=np.int64)
    output = np.zeros(len(seeds), dtype=np.int64)
    for start in range(0, queries, chunk_size):
        stop = min(queries, start + chunk_size)
        block = rows_of(votes, positions, start, stop)
        log_q = answer.statistic(block, None)
        log_pr = (np.zeros(stop - start) if selection is None
                  else selection.statistic(block, None))
        sel_curves, sel_index = step_curves(selection, log_pr, orders, independent)
        ans_curves, ans_index = step_curves(answer, log_q, orders, independent)
        if expected:  # the answer step charged with pr_answered, the same for every seed
            weight = np.exp(log_pr)
            expected_answered = float(np.add.accumulate(
                np.concatenate(([expected_answered], weight)))[-1])
            costs = StepRows(sel_curves, sel_index, ans_curves, ans_index, weight)
            carries[0] = running_total(costs, stop - start, carries[0])
        for run, noise in enumerate(noises):
            decisions = mechanism.replay(block, noise=noise, start=start)
            if not expected:
                weight = decisions.answered.astype(np.float64)
                answered[run] += np.count_nonzero(decisions.answered)
                costs = StepRows(sel_curves, sel_index, ans_curves, ans_index, weight)
                carries[run] = running_total(costs, stop - start, carries[run])
            released = decisions.answered
            output[run] += np.count_nonzero(released)
            if truth is not None:
                correct[run] += np.count_nonzero(
                    released & (decisions.labels == truth[positions[start:stop]]))
    if expected:
        carries[1:] = carries[0]
        answered = np.full(len(seeds), expected_answered)
    totals = []
    for run, seed in enumerate(seeds):
        epsilon, order = (float(x) for x in rdp_to_epsilon(
            carries[run], orders=orders, delta=delta, conversion=conversion))
        di_curve = data_independent_curve(selection, answer, answered=answered[run],
                                          queries=queries, orders=orders)
        eps_di, _ = rdp_to_epsilon(di_curve, orders=orders, delta=delta, conversion=conversion)
        accuracy = (float(correct[run] / output[run])
                    if truth is not None and output[run] else None)
        totals.append(ReplayTotals(seed=seed, answered=float(answered[run]), epsilon=epsilon,
                                   order=order, epsilon_data_independent=float(eps_di),
                                   label_accuracy=accuracy, labels_output=int(output[run]),
                                   warnings=grid_edge_notes(orders, order, epsilon),
                                   rdp_total=tuple(carries[run].tolist())))
    return totals


def _totals_of(result: AnalysisResult) -> ReplayTotals:
    return ReplayTotals(seed=result.seed, answered=float(result.answered_total),
                        epsilon=result.epsilon, order=float(result.order),
                        epsilon_data_independent=result.epsilon_data_independent,
                        label_accuracy=result.label_accuracy,
                        warnings=result.warnings, rdp_total=tuple(result.rdp_total.tolist()),
                        labels_output=int(np.count_nonzero(result.label >= 0)))
