"""Votes + mechanism + accounting mode -> totals and a result (``analyze_votes``), for one
seed or several at once (``analyze_totals``, a sweep's point).

Chunks of queries are counted apart (``analysis.grouped_run``) into their distinct
statistics, whose curves are evaluated once each and summed (``accounting.grouped``,
math:conversion); budget runs go through ``analysis.budget_run``; the per-query table is a
second pass (``analysis.per_query_stream``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial

import numpy as np

from ..accounting.composition import initial_carry, sums_at_order
from ..accounting.conversion import checked_setting, grid_edge_notes, rdp_to_epsilon
from ..accounting.grouped import grouped_totals
from ..curve_store import SharedCurves
from ..decisions import Decisions
from ..inputs.query_indices import analysed_positions
from ..inputs.rows import picked_rows
from ..inputs.shards import task_source
from ..mechanisms import NoiseSource
from ..mechanisms.noise import SharedBlocks
from ..mechanisms.protocol import checked_mechanism
from ..rounding import ceil_text
from ..vote_rows import row_width
from ..work_sizes import DEFAULT_CHUNK, chunk_rows
from .budget_run import BudgetSetting, outputs_figures, run_budget
from .grouped_run import CountRequest, count_queries, count_rows
from .per_query_stream import per_query_frames
from .result import AnalysisResult, BudgetPart, QueryCounts, ReplayTotals
from .steps import (
    curve_function,
    data_independent_curve,
    mechanism_steps,
)
from .svt import analyze_svt


def analyze_votes(votes, mechanism, *, teachers: float | None = None,
                  accounting: str = "replay", delta: float = 1e-5, orders=None,
                  conversion: str = "classic", seed: int = 0, queries: int | None = None,
                  budget: float | None = None, labels=None, student=None,
                  query_indices=None, initial_rdp=None, salt: int = 0,
                  chunk_size: int | None = DEFAULT_CHUNK, source=None,
                  decisions: Decisions | None = None, progress=None,
                  q_bound: str = "union", per_query: bool = True,
                  workers: int | None = None, executor=None, outputs=None,
                  halt_at: str = "query") -> AnalysisResult:
    """Analyse ``votes`` (``(queries, K)``, array or memory map) under ``mechanism``.

    ``accounting``: ``replay`` charges what the seeded run did, ``expected`` charges the
    answer step with ``pr_answered`` (the 2018 paper's), ``data-independent``
    math:independent's costs for the replay's decisions; labels always come from the seeded replay.
    ``student``: Interactive-GNMax's ``(queries, K)`` probabilities. ``query_indices``:
    those rows in that order (``queries``: the first N). ``initial_rdp``: RDP spent before
    the first query (``--add-rdp``, earlier rounds). ``salt``: independent noise under the
    same seed. ``budget`` (math:costs): halt at the first query whose full cost (its
    expected cost under ``expected``) could take the total above it; the result holds the
    queries before (``analysis.budget_run``). ``decisions``: a run's decisions, charged
    instead of the replay's (math:costs "Decisions accounting"). ``outputs``: each
    analysed query's output (a generated sequence of consecutive queries): the run is
    walked in query order (``analysis.budget_run``), its outputs' figures
    (``result.outputs``) and, with ``halt_at="output"``, the budget's halt before a whole
    output found in the same pass. Raises ``ValueError``.

    No per-query array is kept (``result.counts`` holds what the summary needs); totals
    come from the counts of distinct statistics (``accounting.grouped``, math:conversion), the same
    bits for any chunk size, ``workers`` (threads; default: the cores) or ``executor``
    (a ``concurrent.futures``-style executor counting chunks or summing budget blocks,
    ``grouped_run.count_queries``). ``per_query`` (default): the table is a stream,
    ``result.iter_frames()``, formed by a second pass (``per_query_stream``); its
    ``epsilon_cumulative`` is a running sum (the tolerance of math:tolerance; a budget run's ends
    exactly at ``epsilon``). SVT-PATE goes to ``analysis.svt``.
    """
    setting = dict(locals())
    return _runs(setting.pop("votes"), setting.pop("mechanism"), (setting.pop("seed"),),
                 **setting)[0]


def _runs(votes, mechanism, seeds: tuple[int, ...], *, teachers, accounting, delta, orders,
          conversion, queries, budget, labels, student, query_indices=None,
          initial_rdp=None, salt: int = 0, chunk_size, source=None, decisions=None,
          progress=None, q_bound: str = "union", per_query: bool, workers, executor=None,
          shared: SharedWork | None = None, outputs=None,
          halt_at: str = "query") -> list[AnalysisResult]:
    """``analyze_votes`` for each of ``seeds``: a run without a budget counts its chunks
    once for every seed (``grouped_run.count_span``, ``steps.block_costs``); the others run
    once per seed."""
    checked_mechanism(mechanism)  # a name or another object: one line, not AttributeError
    orders, converter = checked_setting(accounting, delta, orders, conversion)
    classes = row_width(votes)
    chunk_size = (count_rows(classes) if budget is None and chunk_size is None
                  else chunk_rows(chunk_size, classes))
    _check_run(mechanism, votes, budget=budget, student=student, chunk_size=chunk_size)
    positions = analysed_positions(votes.shape[0], query_indices, queries, lazy=True)
    queries = positions.size
    if teachers is None:
        teachers = float(np.asarray(votes[0], dtype=np.float64).sum())
    if mechanism.sequential:
        return [analyze_svt(votes, mechanism, positions=positions, teachers=teachers,
                            accounting=accounting, delta=delta, orders=orders,
                            conversion=conversion, seed=seed, labels=labels,
                            initial_rdp=initial_rdp, salt=salt, chunk_size=chunk_size,
                            source=source, decisions=decisions, per_query=per_query)
                for seed in seeds]

    selection, answer = mechanism_steps(mechanism, q_bound=q_bound)
    truth = None if labels is None else np.asarray(labels)
    rows = None if executor is None else task_source(votes, getattr(source, "path", None))
    result = partial(_result, votes, mechanism, setting=dict(
        accounting=accounting, conversion=conversion, delta=delta, orders=orders,
        teachers=teachers), selection=selection, answer=answer, positions=positions,
        labels=labels, initial_rdp=initial_rdp, source=source,
        frames=None if not per_query else partial(
            per_query_frames, votes=votes, query_indices=query_indices, student=student,
            decisions=decisions, q_bound=q_bound, salt=salt, workers=workers))
    if budget is not None or outputs is not None:  # walked in query order (budget_run)
        results = []
        for seed in seeds:
            spent = run_budget(
                BudgetSetting(votes, positions,
                              CountRequest(mechanism, accounting, q_bound, (int(seed),), salt,
                                           draw_labels=labels is not None),
                              NoiseSource(seed, salt=salt), orders, converter, budget,
                              chunk_size, student, decisions, truth, progress,
                              outputs=outputs, halt_at=halt_at),
                initial_carry(initial_rdp, orders), workers=workers, executor=executor,
                source=rows)
            ran = queries if spent.halted_at is None else spent.halted_at
            _check_decisions_cover(decisions, ran)
            done = result(seed, spent.carry, (spent.selection, spent.answer), spent.answered,
                          spent.labels, queries=ran, table=None, budget=None if budget is None
                          else BudgetPart(limit=budget, halted_at=spent.halted_at,
                                          remaining=0.0, halt_at=halt_at,
                                          carries=spent.carries, block=spent.block))
            if outputs is not None:
                done = replace(done, outputs=outputs_figures(outputs, ran, spent.epsilons))
            results.append(done)
        return results
    _check_decisions_cover(decisions, queries)  # chunks counted apart (grouped_run)
    request = CountRequest(mechanism, accounting, q_bound, seeds, salt,
                           draw_labels=labels is not None)
    independent = accounting == "data-independent"
    curves = (curve_function(selection, independent), curve_function(answer, independent))
    if shared is not None:
        curves = tuple(None if rdp is None else shared.curves.serving(rdp, orders)
                       for rdp in curves)
    totals_of = partial(grouped_totals, orders=orders, expected=accounting == "expected",
                        selection_rdp=curves[0], answer_rdp=curves[1])
    counted = count_queries(votes, positions, request, chunk_size=chunk_size,
                            totals_of=totals_of, student=student, decisions=decisions,
                            truth=truth, workers=workers, executor=executor, source=rows,
                            progress=progress,
                            shared_noise=None if shared is None else shared.noise)
    sums, results = counted.totals, []
    for number, (seed, counts) in enumerate(zip(seeds, counted.labels, strict=True)):
        answer_sum = sums.answer if sums.answer.ndim == 1 else sums.answer[number]
        answered = float(sums.answered if np.ndim(sums.answered) == 0
                         else sums.answered[number])
        results.append(result(
            seed, (initial_carry(initial_rdp, orders) + sums.selection) + answer_sum,
            (sums.selection, answer_sum), answered, counts, queries=queries, budget=None,
            table=counted.table if per_query and len(seeds) == 1 else None))
    return results


def _result(votes, mechanism, seed, carry, step_sums, answered_total, counts, *,
            setting: dict, selection, answer, positions, queries: int, labels, initial_rdp,
            source, table, frames, budget: BudgetPart | None) -> AnalysisResult:
    """A run's result from its sums: the carry, the selection and answer sums, the
    answered weight and the label counts of its ``queries`` (a budget run's before its
    halt)."""
    orders, delta, conversion = setting["orders"], setting["delta"], setting["conversion"]
    epsilon, order = (float(x) for x in rdp_to_epsilon(carry, orders=orders, delta=delta,
                                                      conversion=conversion))
    if queries == 0 and not np.any(carry):
        epsilon = 0.0  # a budget run that halts before its first query released nothing
    # the data-independent figures include the RDP spent before the first query (--add-rdp)
    spent = initial_carry(initial_rdp, orders)
    di_curve = spent + data_independent_curve(selection, answer, answered=answered_total,
                                              queries=queries, orders=orders)
    eps_di, order_di = (float(x) for x in rdp_to_epsilon(di_curve, orders=orders, delta=delta,
                                                        conversion=conversion))
    eps_worst = None
    if setting["accounting"] == "expected":  # a bound for any run: every query answered
        di_curve = spent + data_independent_curve(selection, answer, answered=queries,
                                                  queries=queries, orders=orders)
        eps_worst = float(rdp_to_epsilon(di_curve, orders=orders, delta=delta,
                                         conversion=conversion)[0])
    accuracy, by_outcome = counts.accuracy(labels is not None)
    query_index, reordered = picked_rows(positions, queries)
    outcomes = None if counts.outcomes is None else tuple(int(n) for n in counts.outcomes)
    totals = QueryCounts(queries=queries, labels_output=counts.output, outcomes=outcomes,
                         reordered=reordered,
                         # what rounds compose (analysis.rounds)
                         step_sums=step_sums, correct=counts.correct,
                         outcome_correct=None if counts.outcomes is None
                         else tuple(int(n) for n in counts.outcome_correct))
    result = AnalysisResult(
        mechanism=mechanism, seed=int(seed), classes=int(votes.shape[1]), **setting,
        rdp_total=carry, epsilon=epsilon, order=order,
        epsilon_data_independent=eps_di, order_data_independent=order_di,
        epsilon_data_independent_worst=eps_worst, rdp_data_independent=di_curve,
        answered_total=answered_total,
        rdp_at_order=sums_at_order(orders, order, *step_sums),
        label_accuracy=accuracy, warnings=grid_edge_notes(orders, order, epsilon) + (
            (f"the RDP spent before the first query is already epsilon {ceil_text(epsilon)}, above "
             f"the budget {budget.limit:g}: no query was processed",)
            if budget is not None and epsilon > budget.limit else ()),
        source=source,
        budget=None if budget is None else replace(
            budget, remaining=max(0.0, budget.limit - epsilon)),
        query_index=query_index,
        accuracy_by_outcome=by_outcome,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float),
        counts=totals, distinct_pairs=table)
    return result if frames is None else replace(result, frames=frames)


class SharedWork:
    """What runs over one file with the same seeds share: noise blocks up to
    ``noise_bytes`` and curves up to ``curve_bytes`` (each least recently used first out)."""

    def __init__(self, noise_bytes: int, curve_bytes: int) -> None:
        self.noise = SharedBlocks(noise_bytes)
        self.curves = SharedCurves(curve_bytes)


def analyze_totals(votes, mechanism, *, seeds, teachers: float | None = None,
                   accounting: str = "replay", delta: float = 1e-5, orders=None,
                   conversion: str = "classic", queries: int | None = None,
                   budget: float | None = None, labels=None, student=None,
                   chunk_size: int | None = DEFAULT_CHUNK, workers: int | None = 1,
                   shared: SharedWork | None = None) -> list[ReplayTotals]:
    """End-of-run totals of ``analyze_votes`` for several seeds, sharing the work: the
    same bits as ``analyze_votes(..., seed=s)`` for each. Chunks are counted once for every
    seed (an answered column per seed) and each distinct curve evaluated once; budget,
    Interactive-GNMax and SVT-PATE runs go once per seed. ``workers``: threads (1 by
    default: a sweep runs points in parallel). ``shared``: noise blocks and curves kept
    from a sweep's earlier points (:class:`SharedWork`; the same bits)."""
    setting = dict(locals())
    return [_totals_of(run) for run in _runs(
        setting.pop("votes"), setting.pop("mechanism"),
        tuple(int(seed) for seed in setting.pop("seeds")), per_query=False, **setting)]


def _totals_of(result: AnalysisResult) -> ReplayTotals:
    return ReplayTotals(seed=result.seed, answered=float(result.answered_total),
                        epsilon=result.epsilon, order=float(result.order),
                        epsilon_data_independent=result.epsilon_data_independent,
                        label_accuracy=result.label_accuracy,
                        warnings=result.warnings, rdp_total=tuple(result.rdp_total.tolist()),
                        labels_output=int(result.counts.labels_output))


def _check_decisions_cover(decisions: Decisions | None, queries: int) -> None:
    """Given decisions must reach the last query the run processes."""
    if decisions is not None and decisions.answered.size < queries:
        raise ValueError(f"the decisions end after {decisions.answered.size} queries but the "
                         f"run goes on to query {decisions.answered.size} (give --queries "
                         f"{decisions.answered.size} or every decision)")


def _check_run(mechanism, votes, *, budget: float | None, student, chunk_size: int) -> None:
    """The run's own argument checks (``ValueError`` with the message the CLI prints)."""
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise ValueError(f"budget must be positive, got {budget!r}")
    if not (isinstance(chunk_size, (int, np.integer)) and chunk_size >= 1):
        raise ValueError(f"chunk size must be a positive integer, got {chunk_size!r}")
    if mechanism.uses_student:
        if student is None:
            raise ValueError("Interactive-GNMax needs the student's probabilities (--student)")
        if student.shape != votes.shape:
            raise ValueError(f"the student file has shape {student.shape}, the votes "
                             f"{votes.shape}")
    elif student is not None and not mechanism.sequential:
        raise ValueError(f"a student applies to Interactive-GNMax, not {mechanism.name}")
