"""Votes + mechanism + accounting mode -> per-query costs and totals (``analyze_votes``).

Queries are processed in chunks (a memory-mapped file is never loaded whole); inside a
chunk every formula runs over whole arrays. Cost curves are computed once per distinct
statistic (the selection step depends only on ``round(max n)``, the answer step only on
``log q``) and gathered, and cumulative sums run in file order with an explicit carry
(``accounting.composition``), so every number is identical whatever the chunk size.
Budget runs go through ``analysis.budget_run``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial

import numpy as np

from ..accounting.composition import initial_carry, sums_at_order
from ..accounting.conversion import grid_edge_notes, rdp_to_epsilon
from ..accounting.grouped import grouped_totals
from ..curve_store import SharedCurves
from ..decisions import Decisions
from ..inputs.shards import task_source
from ..mechanisms import NoiseSource
from ..mechanisms.noise import SharedBlocks
from ..rounding import ceil_text
from ..sparse_rows import row_width
from ..threads import executor_map, executor_threads, ordered_map
from .budget_run import BudgetSetting, run_budget
from .grouped_run import (
    CountRequest,
    count_queries,
    count_rows,
    counted_remotely,
    summed_counts,
)
from .per_query_stream import per_query_frames
from .result import AnalysisResult, BudgetPart, QueryCounts, ReplayTotals
from .setting import (
    DEFAULT_CHUNK,
    LabelCounts,
    analysed_positions,
    checked_mechanism,
    checked_setting,
    chunk_rows,
    picked_rows,
)
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
                  workers: int | None = None, executor=None) -> AnalysisResult:
    """Analyse ``votes`` (``(queries, K)``, array or memory map) under ``mechanism``.

    ``accounting``: ``replay`` charges what the seeded run did, ``expected`` charges the
    answer step with ``pr_answered`` (the 2018 paper's analysis), ``data-independent``
    charges MATH.md section 2's costs for the replay's decisions. ``budget`` turns the
    replay into a budget run (MATH.md section 7). Labels always come from the seeded
    replay. ``student`` (``(queries, K)`` probabilities) is required by Interactive-GNMax.
    ``query_indices`` analyses those rows in that order (``queries`` then takes the first
    N of them). ``initial_rdp`` (one value per order) is RDP already spent, added before
    the first query (``--add-rdp``, earlier rounds). ``salt`` gives independent noise
    under the same seed. Raises ``ValueError`` for bad parameters.

    ``budget`` (MATH.md s.7): the run halts at the first query whose selection and answer
    (counted in full; its expected cost under ``expected`` accounting) could take the
    total above ``budget``; that query and every later one is not processed, and the
    result holds only the queries before the halt (``budget.halted_at``).
    ``decisions``: a run's decisions over the analysed queries in order (``answered``,
    ``labels``, ``outcome``; MATH.md s.7 "Decisions accounting"), charged instead of the
    seeded replay's; it may end early only where a budget run halts.

    The run keeps no per-query array: each chunk only adds to the run's sums, so memory
    stays flat whatever the number of queries (``result.counts`` holds what the summary
    needs). ``per_query`` (the default): the per-query table is a stream,
    ``result.iter_frames()`` (``to_frame()`` puts it together), formed a chunk at a time
    by a second pass over the votes in chunks of its own size
    (``analysis.per_query_stream``; the result keeps its distinct statistic pairs,
    ``distinct_pairs``, for that pass); ``per_query=False``: totals only, and
    ``to_frame()`` raises. SVT-PATE's replay is counted a chunk at a time and its table
    streamed alike (``analysis.svt``).

    Totals (MATH.md s.6-7): a budget run's are the sums its halt checks, block sums
    carried from block to block and running sums inside a block (``analysis.budget_run``);
    every other run's come from the counts of its distinct statistics
    (``accounting.grouped``). Either way the same bits in both modes and for any chunk
    size or ``workers`` (threads counting chunks and evaluating curves; default: the
    cores this process may use). Without a budget the per-query ``epsilon_cumulative``
    column is a running sum: its last value may differ from ``epsilon`` in the last bits;
    a budget run's ends exactly at ``epsilon``.

    ``executor`` (a ``concurrent.futures``-style executor, e.g. a Dask client's
    ``get_executor()``): the chunks of a totals-only run are counted there, or a budget
    run's blocks summed there (``grouped_run.counted_remotely``), the same bits as here.
    """
    checked_mechanism(mechanism)  # a name or another object: one line, not AttributeError
    orders, converter = checked_setting(accounting, delta, orders, conversion)
    classes = row_width(votes)
    chunk_size = (count_rows(classes) if budget is None and chunk_size is None
                  else chunk_rows(chunk_size, classes))
    _check_run(mechanism, votes, accounting=accounting, budget=budget, student=student,
               chunk_size=chunk_size)
    positions = analysed_positions(votes.shape[0], query_indices, queries, lazy=True)
    queries = positions.size
    if teachers is None:
        teachers = float(np.asarray(votes[0], dtype=np.float64).sum())
    if mechanism.sequential:
        return analyze_svt(votes, mechanism, positions=positions, teachers=teachers,
                            accounting=accounting, delta=delta, orders=orders,
                            conversion=conversion, seed=seed, labels=labels,
                            initial_rdp=initial_rdp, salt=salt, chunk_size=chunk_size,
                            source=source, decisions=decisions, per_query=per_query)

    selection, answer = mechanism_steps(mechanism, q_bound=q_bound)
    independent = accounting == "data-independent"
    noise = NoiseSource(seed, salt=salt)
    carry = initial_carry(initial_rdp, orders)
    counts = LabelCounts(mechanism.uses_student)
    truth = None if labels is None else np.asarray(labels)
    halted_at = None
    grouped_table = None
    threads = partial(_threads_map, workers)
    answer_rdp = curve_function(answer, independent)

    def totals_function(answer_rdp, map):
        """The run's sums from a table of distinct pairs (``grouped_totals``)."""
        return partial(grouped_totals, orders=orders, expected=accounting == "expected",
                       selection_rdp=curve_function(selection, independent),
                       answer_rdp=answer_rdp, map=map)

    if budget is not None:  # blocks summed apart, the halt in query order (budget_run)
        spent = run_budget(
            BudgetSetting(votes, positions, queries,
                          CountRequest(mechanism, accounting, q_bound, (int(seed),), salt,
                                       draw_labels=labels is not None),
                          selection, answer, noise, orders, converter, budget, chunk_size,
                          student, decisions, truth, progress),
            carry, workers=workers,
            executor=executor, source=None if executor is None else task_source(
                votes, getattr(source, "path", None)))
        halted_at, carry, counts = spent.halted_at, spent.carry, spent.labels
        step_sums, answered_total = (spent.selection, spent.answer), spent.answered
    else:  # chunks counted apart (grouped_run)
        _check_decisions_cover(decisions, queries)
        request = CountRequest(mechanism, accounting, q_bound, (int(seed),), salt,
                               draw_labels=labels is not None)
        if executor is None:
            counted = count_queries(votes, positions, request, chunk_size=chunk_size,
                                    totals_of=totals_function(answer_rdp, threads),
                                    student=student, decisions=decisions, truth=truth,
                                    workers=workers, progress=progress)
        else:  # the chunks counted elsewhere (grouped_run.counted_remotely)
            counted = summed_counts(
                counted_remotely(executor, votes, positions, request,
                                 source=task_source(votes, getattr(source, "path", None)),
                                 chunk_size=chunk_size, student=student,
                                 decisions=decisions, truth=truth,
                                 window=2 * executor_threads(executor)),
                totals_function(answer_rdp, partial(executor_map, executor)),
                request, queries=queries, progress=progress)
        sums, grouped_table, (counts,) = counted.totals, counted.table, counted.labels
    _check_decisions_cover(decisions, queries if halted_at is None else halted_at)
    if halted_at is not None:
        queries = halted_at

    if budget is None:
        carry = (initial_carry(initial_rdp, orders) + sums.selection) + sums.answer
        step_sums, answered_total = (sums.selection, sums.answer), sums.answered
    epsilon, order = (float(x) for x in rdp_to_epsilon(carry, orders=orders, delta=delta,
                                                      conversion=conversion))
    if queries == 0 and not np.any(carry):
        epsilon = 0.0  # a budget run that halts before its first query released nothing
    di_curve = data_independent_curve(selection, answer, answered=answered_total,
                                      queries=queries, orders=orders)
    eps_di, order_di = (float(x) for x in rdp_to_epsilon(di_curve, orders=orders, delta=delta,
                                                        conversion=conversion))
    eps_worst = None
    if accounting == "expected":  # a bound for any particular run: every query answered
        eps_worst = float(rdp_to_epsilon(
            data_independent_curve(selection, answer, answered=queries, queries=queries,
                                   orders=orders),
            orders=orders, delta=delta, conversion=conversion)[0])
    accuracy, by_outcome = counts.accuracy(labels is not None)
    query_index, reordered = picked_rows(positions, queries)
    totals = QueryCounts(queries=queries, labels_output=counts.output,
                         outcomes=None if counts.outcomes is None
                         else tuple(int(n) for n in counts.outcomes),
                         reordered=reordered,
                         # what rounds compose (analysis.rounds)
                         step_sums=step_sums, correct=counts.correct,
                         outcome_correct=None if counts.outcomes is None
                         else tuple(int(n) for n in counts.outcome_correct))
    result = AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=teachers, classes=int(votes.shape[1]),
        rdp_total=carry, epsilon=epsilon, order=order,
        epsilon_data_independent=eps_di, order_data_independent=order_di,
        epsilon_data_independent_worst=eps_worst,
        answered_total=answered_total,
        rdp_at_order=sums_at_order(orders, order, *step_sums),
        label_accuracy=accuracy, warnings=grid_edge_notes(orders, order, epsilon) + (
            (f"the RDP spent before the first query is already epsilon {ceil_text(epsilon)}, above "
             f"the budget {budget:g}: no query was processed",)
            if budget is not None and epsilon > budget else ()),
        source=source,
        budget=None if budget is None else BudgetPart(
            limit=budget, halted_at=halted_at, remaining=max(0.0, budget - epsilon),
            carries=spent.carries, block=spent.block),
        query_index=query_index,
        accuracy_by_outcome=by_outcome,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float),
        counts=totals, distinct_pairs=grouped_table if per_query else None)
    if not per_query:
        return result
    return replace(result, frames=partial(
        per_query_frames, votes=votes, query_indices=query_indices, student=student,
        decisions=decisions, q_bound=q_bound, salt=salt, workers=workers))


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
    """End-of-run totals of ``analyze_votes`` for several seeds, sharing the work.

    The same numbers as ``analyze_votes(..., seed=s)`` for each ``s`` in ``seeds``, bit
    for bit: the chunks are counted once for every seed (``grouped_run.count_chunk``: the
    statistics formed once, an answered column per seed) and each distinct curve is
    evaluated once for all seeds. This is what a parameter sweep needs. Budget runs,
    Interactive-GNMax and SVT-PATE, whose costs depend on the replay's path, run the
    totals-only analysis once per seed. ``workers``: threads counting chunks (1 by
    default: a sweep runs points in parallel). ``shared``: noise blocks and curves kept
    from earlier runs over the same file (a sweep's points, ``analysis.sharing``; the
    same bits).
    """
    seeds = tuple(int(seed) for seed in seeds)
    options = dict(teachers=teachers, accounting=accounting, delta=delta, orders=orders,
                   conversion=conversion, queries=queries, labels=labels,
                   chunk_size=chunk_size, workers=workers)
    if budget is not None or mechanism.uses_student or mechanism.sequential:
        return [_totals_of(analyze_votes(votes, mechanism, seed=seed, budget=budget,
                                         student=student, per_query=False, **options))
                for seed in seeds]
    if student is not None:
        raise ValueError(f"a student applies to Interactive-GNMax, not {mechanism.name}")
    orders, _ = checked_setting(accounting, delta, orders, conversion)
    positions = analysed_positions(votes.shape[0], None, queries)
    selection, answer = mechanism_steps(mechanism)
    independent = accounting == "data-independent"
    truth = None if labels is None else np.asarray(labels)

    def served(rdp):
        return rdp if shared is None or rdp is None else shared.curves.serving(rdp, orders)

    counted = count_queries(
        votes, positions, CountRequest(mechanism, accounting, seeds=seeds,
                                       draw_labels=truth is not None),
        chunk_size=count_rows(votes.shape[1]) if chunk_size is None else chunk_size,
        totals_of=partial(grouped_totals, orders=orders, expected=accounting == "expected",
                          selection_rdp=served(curve_function(selection, independent)),
                          answer_rdp=served(curve_function(answer, independent))),
        truth=truth, workers=workers, shared_noise=None if shared is None else shared.noise)
    sums, totals = counted.totals, []
    for run, (seed, counts) in enumerate(zip(seeds, counted.labels, strict=True)):
        answer_sum = sums.answer if sums.answer.ndim == 1 else sums.answer[run]
        answered = float(sums.answered if np.ndim(sums.answered) == 0 else sums.answered[run])
        carry = (np.zeros(orders.size) + sums.selection) + answer_sum
        epsilon, order = (float(x) for x in rdp_to_epsilon(
            carry, orders=orders, delta=delta, conversion=conversion))
        di_curve = data_independent_curve(selection, answer, answered=answered,
                                          queries=positions.size, orders=orders)
        eps_di, _ = rdp_to_epsilon(di_curve, orders=orders, delta=delta, conversion=conversion)
        totals.append(ReplayTotals(seed=seed, answered=answered, epsilon=epsilon,
                                   order=order, epsilon_data_independent=float(eps_di),
                                   label_accuracy=counts.accuracy(truth is not None)[0],
                                   labels_output=int(counts.output),
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
                                          if result.counts is not None  # SVT-PATE's
                                          else np.count_nonzero(result.label >= 0)))


def _threads_map(workers: int | None, function, items):
    """``map`` on ``workers`` threads, in order (``threads.ordered_map``)."""
    return ordered_map(function, items, workers=workers)


def _check_decisions_cover(decisions: Decisions | None, queries: int) -> None:
    """Given decisions must reach the last query the run processes."""
    if decisions is not None and decisions.answered.size < queries:
        raise ValueError(f"the decisions end after {decisions.answered.size} queries but the "
                         f"run goes on to query {decisions.answered.size} (give --queries "
                         f"{decisions.answered.size} or every decision)")


def _check_run(mechanism, votes, *, accounting: str, budget: float | None, student,
               chunk_size: int) -> None:
    """The run's own argument checks (``ValueError`` with the message the CLI prints)."""
    if budget is not None:
        if not (math.isfinite(budget) and budget > 0):
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
