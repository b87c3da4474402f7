"""Votes + mechanism + accounting mode -> a result (``analyze_votes``), for one seed or
several at once (``analyze_totals``, a sweep's point).

Chunks are counted apart (``grouped_run``) into distinct statistics whose curves are evaluated
once each and summed (``accounting.grouped``, math:conversion); budget runs go through
``budget_run``. The per-query table (``per_query_stream``) and the smooth-sensitivity release
(``added_figures``) are second passes, at the best order only the first pass's totals give
(math:smooth); input checks (``inputs.vote_checks``) read a file's votes once before."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from ..accounting.composition import initial_carry, sums_at_order
from ..accounting.conversion import (
    checked_setting,
    conversion_offset,
    grid_edge_notes,
    rdp_to_epsilon,
)
from ..accounting.grouped import grouped_totals
from ..curve_store import SharedCurves
from ..decisions import Decisions
from ..inputs.query_indices import analysed_positions
from ..inputs.rows import integer_counts, picked_rows
from ..inputs.shards import task_source
from ..mechanisms import NoiseSource
from ..mechanisms.noise import SharedBlocks
from ..mechanisms.protocol import checked_mechanism
from ..numerics import real_number
from ..rounding import ceil_text
from ..vote_rows import row_width
from ..work_sizes import chunk_rows
from .added_figures import any_run_epsilon, with_pld_figure
from .attack_risk import data_independent_risk
from .budget_run import BudgetSetting, outputs_figures, run_budget
from .grouped_run import CountRequest, count_queries, count_rows
from .per_query_stream import per_query_frames
from .result import AnalysisResult, BudgetPart, QueryCounts, ReplayTotals, RunSetting
from .steps import (
    curve_function,
    data_independent_curve,
    mechanism_steps,
)
from .svt import analyze_svt


def analyze_votes(votes, mechanism, **options: Any) -> AnalysisResult:
    """Analyse ``votes`` under ``mechanism`` (SVT-PATE goes to ``analysis.svt``).

    No per-query array is kept (``result.counts`` holds what the summary needs); totals come
    from the counts of distinct statistics (``accounting.grouped``, math:conversion), the same
    bits for any chunk size, ``workers`` or ``executor``.

    Args:
      votes: ``(queries, K)``, an array or memory map.
      mechanism: the mechanism object replayed.
      **options: the fields of :class:`~pate_cli.analysis.result.RunSetting`, among them:
        accounting: ``replay`` charges what the seeded run did, ``expected`` charges the answer
          step with ``pr_answered`` (the 2018 paper's), ``data-independent`` math:independent's
          costs for the replay's decisions; labels always come from the seeded replay.
        budget: (math:costs) halt at the first query whose full cost (its expected cost under
          ``expected``) could take the total above it; the result holds the queries before
          (``analysis.budget_run``).
        decisions: a run's decisions, charged instead of the replay's (math:costs "Decisions
          accounting").
        outputs: each analysed query's output (consecutive queries): the run is walked in
          query order (``analysis.budget_run``), finding its outputs' figures
          (``result.outputs``) and, with ``halt_at="output"``, the halt before a whole output.
        workers, executor: threads (default: the cores); a ``concurrent.futures``-style
          executor counting chunks or summing budget blocks (``grouped_run.count_queries``).
        per_query: True (the default): ``result.iter_frames()`` streams the table by a second
          pass (``per_query_stream``); its ``epsilon_cumulative`` is a running sum
          (math:tolerance; a budget run's ends exactly at ``epsilon``).
        consumer: see :class:`~pate_cli.analysis.result.RunSetting` (refused with a budget,
          outputs or SVT-PATE).

    Returns:
      The :class:`AnalysisResult`.

    Raises:
      ValueError: for a setting the run cannot take (its message is the CLI's line).
      TypeError: for a keyword that is not a field of ``RunSetting``.
    """
    setting = RunSetting.of(**options)
    votes = np.asarray(votes) if isinstance(votes, (list, tuple)) else votes  # rows as lists
    return _runs(votes, mechanism, (setting.seed,), setting)[0]


def _runs(votes, mechanism, seeds: tuple[int, ...], setting: RunSetting,
          shared: SharedWork | None = None) -> list[AnalysisResult]:
    """``analyze_votes`` per seed: without a budget or outputs, chunks are counted once for all
    seeds (``grouped_run.count_span``, ``steps.block_costs``); else walked per seed."""
    checked_mechanism(mechanism)  # a name or another object: one line, not AttributeError
    orders, converter = checked_setting(setting.accounting, setting.delta, setting.orders,
                                        setting.conversion)
    classes = row_width(votes)
    walked = setting.budget is not None or setting.outputs is not None
    chunk_size = (count_rows(classes) if not walked and setting.chunk_size is None
                  else chunk_rows(setting.chunk_size, classes))
    _check_run(mechanism, votes, setting, chunk_size)
    positions = analysed_positions(votes.shape[0], setting.query_indices, setting.queries,
                                   lazy=True)
    teachers = (float(np.asarray(votes[0], dtype=np.float64).sum())
                if setting.teachers is None else setting.teachers)
    setting = replace(setting, orders=orders, teachers=teachers, chunk_size=chunk_size)
    if setting.consumer is not None and (walked or mechanism.sequential or len(seeds) != 1):
        raise ValueError("a consumer reads a single totals-only run's pass (no budget, "
                         "outputs or SVT-PATE)")
    if mechanism.sequential:
        return [analyze_svt(votes, mechanism, setting, positions, seed) for seed in seeds]
    finish = _Finish(votes, mechanism, setting, positions)
    truth = None if setting.labels is None else np.asarray(setting.labels)
    rows = (None if setting.executor is None
            else task_source(votes, getattr(setting.source, "path", None)))
    maxima = setting.per_query and not integer_counts(votes)  # for the table's pass
    request = partial(CountRequest, mechanism, setting.accounting, setting.q_bound,
                      salt=setting.salt, draw_labels=setting.labels is not None,
                      queries=setting.consumer is not None, maxima=bool(maxima))
    if walked:  # in query order (budget_run): running sums of up to every query (and the
        results = []  # RDP spent before), their figures raised for it
        converter = converter.summing(positions.size + 1)
        for seed in seeds:
            spent = run_budget(
                BudgetSetting(votes, positions, request((int(seed),)),
                              NoiseSource(seed, salt=setting.salt), orders, converter,
                              setting.budget, chunk_size, setting.student, setting.decisions,
                              truth, setting.progress, outputs=setting.outputs,
                              halt_at=setting.halt_at),
                initial_carry(setting.initial_rdp, orders), workers=setting.workers,
                executor=setting.executor, source=rows)
            ran = positions.size if spent.halted_at is None else spent.halted_at
            _check_decisions_cover(setting.decisions, ran)
            budget = None if setting.budget is None else BudgetPart(
                limit=setting.budget, halted_at=spent.halted_at, remaining=0.0,
                halt_at=setting.halt_at, carries=spent.carries, block=spent.block)
            done = finish(seed, (spent.carry, (spent.selection, spent.answer), spent.answered),
                          spent.labels, ran, budget=budget, whole=spent.whole if maxima else None,
                          running=True)
            if setting.outputs is not None:
                done = replace(done, outputs=outputs_figures(setting.outputs, ran,
                                                             spent.epsilons))
            done = replace(done, warnings=done.warnings + _decisions_after(
                setting.decisions, spent.halted_at, setting.budget))
            results.append(done)
        return results
    _check_decisions_cover(setting.decisions, positions.size)  # counted apart (grouped_run)
    # a consumer that composes the data-dependent costs itself (the group accounting):
    # the run's own totals are then math:independent's, sparing the data-dependent curves
    independent = (setting.accounting == "data-independent"
                   or bool(getattr(setting.consumer, "composes_costs", False)))
    curves = (curve_function(finish.selection, independent),
              curve_function(finish.answer, independent))
    if shared is not None:
        curves = tuple(None if rdp is None else shared.curves.serving(rdp, orders)
                       for rdp in curves)
    totals_of = partial(grouped_totals, orders=orders,
                        expected=setting.accounting == "expected",
                        raised_charge=None if finish.selection is None
                        else finish.selection.raised_charge,
                        selection_rdp=curves[0], answer_rdp=curves[1])
    counted = count_queries(votes, positions, request(seeds), totals_of, setting, truth=truth,
                            source=rows, shared_noise=None if shared is None else shared.noise)
    sums, results = counted.totals, []
    for number, (seed, counts) in enumerate(zip(seeds, counted.labels, strict=True)):
        answer_sum = sums.answer if sums.answer.ndim == 1 else sums.answer[number]
        answered = float(sums.answered if np.ndim(sums.answered) == 0
                         else sums.answered[number])
        carry = (initial_carry(setting.initial_rdp, orders) + sums.selection) + answer_sum
        results.append(finish(seed, (carry, (sums.selection, answer_sum), answered), counts,
                              positions.size, table=counted.table
                              if setting.per_query and len(seeds) == 1 else None,
                              whole=counted.whole if maxima else None))
    return results


class _Finish:
    """A run's result from its sums (:meth:`__call__`), given its ``votes``, ``mechanism``,
    resolved ``setting`` and analysed ``positions``."""

    def __init__(self, votes, mechanism, setting: RunSetting, positions) -> None:
        self.votes, self.mechanism, self.setting, self.positions = (votes, mechanism, setting,
                                                                     positions)
        self.selection, self.answer = mechanism_steps(mechanism, q_bound=setting.q_bound)

    def __call__(self, seed: int, sums: tuple, counts, queries: int, *, table=None,
                 budget: BudgetPart | None = None, whole: bool | None = None,
                 running: bool = False) -> AnalysisResult:
        """Seed ``seed``'s result from ``sums`` ``(carry, (selection, answer), answered)`` and
        the label ``counts`` of its ``queries`` (before a halt); ``table``: the pairs counted;
        ``whole``: all plurality counts whole (None: unrecorded); ``running``: sums added query
        by query (``budget_run``), epsilon raised as its running figures are
        (``Conversion.summing``)."""
        setting, selection, answer = self.setting, self.selection, self.answer
        carry, step_sums, answered_total = sums
        orders, delta, conversion = setting.orders, setting.delta, setting.conversion
        convert = partial(rdp_to_epsilon, orders=orders, delta=delta, conversion=conversion)
        # every requested query, and the RDP before; a walked run's data-independent figures
        # are raised as its own (else one could sit an ulp below the run's figure)
        terms = int(self.positions.size) + 1 if running else 0
        convert = partial(convert, terms=terms)
        # the data-independent figures include the RDP spent before the first query
        spent = initial_carry(setting.initial_rdp, orders)
        di_curve = spent + data_independent_curve(selection, answer, answered=answered_total,
                                                  queries=queries, orders=orders)
        if answer.unsampled is not None:  # sampled voters: the run's sums never above that
            carry = np.minimum(carry, di_curve)  # curve, capped by the unsampled steps' (an
            # ulp apart where sampling gains nothing; math:sampling)
        epsilon, order = (float(x) for x in convert(carry))
        eps_di, order_di = (float(x) for x in convert(di_curve))
        eps_worst = None
        if reports_any_run_bound(bool(self.mechanism.selects), setting.accounting,
                                 halts=budget is not None):
            # every requested query answered (math:costs; a halt the votes decide bounds no
            # other run)
            requested = int(self.positions.size)
            worst_curve = spent + data_independent_curve(selection, answer, answered=requested,
                                                         queries=requested, orders=orders)
            eps_worst = float(convert(worst_curve)[0])
            di_curve = worst_curve  # the curve the publishable bound rests on
        if queries == 0 and not np.any(carry):  # a budget run halted before its first query
            epsilon, eps_di = 0.0, 0.0  # (the bound for any run stays: over the requested)
        # the data-dependent curves are capped by these, summed in another order: a bound left
        # below the run's figure by rounding is raised to it (a consumer's run publishes none)
        eps_di = eps_di if setting.consumer is not None else max(eps_di, epsilon)
        eps_worst = None if eps_worst is None else max(eps_worst, eps_di)
        accuracy, by_outcome = counts.accuracy(setting.labels is not None)
        query_index, reordered = picked_rows(self.positions, queries)
        outcomes = (None if counts.outcomes is None
                    else tuple(int(n) for n in counts.outcomes))
        totals = QueryCounts(queries=queries, labels_output=counts.output, outcomes=outcomes,
                             reordered=reordered,
                             # what rounds compose (analysis.rounds)
                             step_sums=step_sums, correct=counts.correct,
                             outcome_correct=None if counts.outcomes is None
                             else tuple(int(n) for n in counts.outcome_correct),
                             whole_maxima=whole)
        over = budget is not None and epsilon > budget.limit
        result = AnalysisResult(
            mechanism=self.mechanism, seed=int(seed), classes=int(self.votes.shape[1]),
            accounting=setting.accounting, conversion=conversion, delta=delta, orders=orders,
            teachers=setting.teachers, rdp_total=carry, epsilon=epsilon, order=order,
            epsilon_data_independent=eps_di, order_data_independent=order_di,
            epsilon_data_independent_worst=eps_worst, rdp_data_independent=di_curve,
            requested=int(self.positions.size),
            answered_total=answered_total,
            rdp_at_order=sums_at_order(orders, order, *step_sums, terms=terms),
            label_accuracy=accuracy, warnings=grid_edge_notes(orders, order, epsilon) + (
                (f"the RDP spent before the first query is already epsilon "
                 f"{ceil_text(epsilon)}, above the budget {budget.limit:g}: no query was "
                 "processed",) if over else _halted_at_start(budget, orders, delta,
                                                             conversion)),
            source=setting.source,
            # below 0 only where the RDP spent before the first query exceeds the budget
            budget=None if budget is None else replace(budget, remaining=budget.limit - epsilon),
            query_index=query_index, accuracy_by_outcome=by_outcome,
            initial_rdp=(None if setting.initial_rdp is None
                         else np.asarray(setting.initial_rdp, dtype=float)),
            counts=totals, distinct_pairs=table)
        if not setting.per_query:
            return result
        # the table's pass sizes its own chunks (stream_rows)
        return replace(result, frames=partial(per_query_frames, votes=self.votes,
                                              setting=replace(setting, chunk_size=None)))


def reports_any_run_bound(selects: bool, accounting: str, *, halts: bool = False) -> bool:
    """Whether a run reports ``epsilon_data_independent_worst`` (every requested query
    answered): under ``expected`` (its count is an average); with a selection step (its count
    depends on the votes: composing only its answers bounds that outcome, not the mechanism);
    for a budget run (``halts``) whose halt a data-dependent figure decides (data-independent
    without selection pays the same per query: the same halt on any votes)."""
    return (accounting == "expected" or selects
            or (halts and accounting != "data-independent"))


class SharedWork:
    """What runs over one file with the same seeds share: noise blocks up to
    ``noise_bytes`` and curves up to ``curve_bytes`` (each least recently used first out)."""

    def __init__(self, noise_bytes: int, curve_bytes: int) -> None:
        self.noise = SharedBlocks(noise_bytes)
        self.curves = SharedCurves(curve_bytes)


def analyze_totals(votes, mechanism, *, seeds, shared: SharedWork | None = None,
                   **options: Any) -> list[ReplayTotals]:
    """``analyze_votes``' totals for several ``seeds``, the bits of one run per seed: chunks
    counted once (an answered column per seed), each distinct curve evaluated once (budget,
    Interactive, SVT-PATE: per seed). ``options``: ``RunSetting``'s fields (``workers`` 1 by
    default); ``shared``: a sweep's earlier points' noise and curves."""
    setting = RunSetting.of(**{"workers": 1, **options, "per_query": False})
    return [_totals_of(run) for run in _runs(votes, mechanism,
                                             tuple(int(seed) for seed in seeds), setting,
                                             shared)]


def _totals_of(result: AnalysisResult) -> ReplayTotals:
    pure = getattr(result.mechanism, "pure_epsilon", None) is not None
    worst = result.epsilon_data_independent_worst  # a selection step's bound for any run
    if (result.accounting == "data-independent" or pure or worst is not None
            ) and result.initial_rdp is None:
        # the exact Gaussian (or sampled PLD) figure where smaller, and a pure-DP run's risk
        result = with_pld_figure(result, result.mechanism, result.delta)
    # a search composes, under data-independent accounting, the curve of the bound for any run
    # where there is one (a selection step's count is the votes')
    curve = (result.rdp_data_independent if result.accounting == "data-independent"
             and worst is not None else result.rdp_total)
    return ReplayTotals(seed=result.seed, answered=float(result.answered_total),
                        epsilon=result.epsilon, order=float(result.order),
                        epsilon_data_independent=result.epsilon_data_independent,
                        label_accuracy=result.label_accuracy,
                        warnings=result.warnings, rdp_total=tuple(curve.tolist()),
                        labels_output=int(result.counts.labels_output),
                        risk=data_independent_risk(result),
                        epsilon_method=result.data_independent_method,
                        epsilon_any_run=any_run_epsilon(result))


def _halted_at_start(budget: BudgetPart | None, orders: np.ndarray, delta: float,
                     conversion: str) -> tuple[str, ...]:
    """A note where a budget halts before the first query (math:costs), naming the
    conversion's own term where it alone exceeds the budget."""
    if budget is None or budget.halted_at != 0:
        return ()
    floor = float(np.min(conversion_offset(orders=orders, delta=delta, conversion=conversion)))
    why = (f"the conversion alone charges {ceil_text(floor)} at delta {delta:g} on this order "
           "grid (a grid with larger orders, or a larger delta, charges less)"
           if floor > budget.limit else "the first output's tokens, charged in full, convert "
           "above it at every order of the grid" if budget.halt_at == "output" else
           "the first query's full charge converts above it at every order of the grid")
    return (f"--budget {budget.limit:g} halts before the first {budget.halt_at}, so no label "
            f"is released: {why}",)


def _check_decisions_cover(decisions: Decisions | None, queries: int) -> None:
    """Given decisions must reach the last query the run processes."""
    if decisions is not None and decisions.answered.size < queries:
        raise ValueError(f"the decisions end after {decisions.answered.size} queries but the "
                         f"run goes on to query {decisions.answered.size} (give --queries "
                         f"{decisions.answered.size} or every decision)")


def _decisions_after(decisions: Decisions | None, halted_at: int | None,
                     budget: float | None) -> tuple[str, ...]:
    """A note where given decisions go past the budget's halt: accounted to the halt
    (math:costs), labels released past it are not covered."""
    if decisions is None or halted_at is None or decisions.answered.size <= halted_at:
        return ()
    after = decisions.answered[halted_at:]
    return (f"--budget {budget:g} halts before the run's query {halted_at} (vote row "
            f"{int(decisions.query[halted_at])}): the {after.size} decisions from it on "
            f"({int(np.count_nonzero(after))} answered) are not charged, so labels "
            "released past the halt are not covered by this epsilon (analyse without "
            "--budget to charge them all)",)


def _check_run(mechanism, votes, setting: RunSetting, chunk_size: int) -> None:
    """The run's argument checks (``ValueError`` with the CLI's message)."""
    budget, student = setting.budget, setting.student
    if votes.shape[0] == 0:
        raise ValueError("the votes have no queries")
    if budget is not None and not real_number(budget, positive=True):
        raise ValueError(f"budget must be positive, got {budget!r}")
    if not real_number(chunk_size, whole=True, positive=True):
        raise ValueError(f"chunk size must be a positive integer, got {chunk_size!r}")
    if mechanism.uses_student:
        if student is None:
            raise ValueError("Interactive-GNMax needs the student's probabilities (--student)")
        if student.shape != votes.shape:
            raise ValueError(f"the student file has shape {student.shape}, the votes "
                             f"{votes.shape}")
    elif student is not None and not mechanism.sequential:
        raise ValueError(f"a student applies to Interactive-GNMax, not {mechanism.name}")
