"""Runs walked in query order (math:costs): budget runs, whose halt is found query by query
or output by output, and runs whose queries are grouped into outputs (token votes).

A budget run halts at the first query whose full cost could take the total above the budget
(``halt_at="query"``), or before the first output whose tokens, charged in full, could
(``"output"``): no output is cut. Under a query halt, blocks of ``BUDGET_BLOCK`` queries have
their sums formed ahead (:func:`block_sums`, threads or a cluster); a block is taken whole
where its sums plus one query's largest cost (the data-independent curves, which cap every
data-dependent one), raised by ``MARGIN`` for rounding, convert within the budget, else it
goes query by query. A run with outputs goes through every query, summing each output's
curves (``accounting.output_sums``) for cli:json's ``outputs``; an output halt goes back to
the chunk where that output began.

No figure depends on the chunk size, the workers or where block sums were formed (up to
``BUDGET_BLOCK`` queries it is exactly the query-by-query run); grouped and sequential sums
differ in the last bits only (math:tolerance); every reported figure was checked against the
budget. ``epsilon_cumulative`` restarts from the carry at each block start, so it ends exactly
at the reported epsilon."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from ..accounting.composition import ArrayRows, budget_halt, running_total, within_limit
from ..accounting.conversion import Conversion
from ..accounting.grouped import GroupedTotals, grouped_totals
from ..accounting.output_sums import OutputSums, first_over
from ..curve_store import SharedCurves
from ..decisions import Decisions, LabelCounts, released_labels
from ..inputs.rows import FirstRows, LocalRows, Span, span_of
from ..mechanisms import NoiseSource
from ..numerics import whole as whole_numbers
from ..numerics import whole_int
from ..threads import tasks_in_order
from ..vote_rows import VoteRows, row_width
from ..work_sizes import CURVE_CACHE_BYTES, TASK_VALUES
from .grouped_run import CountRequest, count_span
from .steps import chunk_costs, curve_function, data_independent_curve, mechanism_steps

# Queries per block (fixed: the carries, so a longer run's last bits, depend on it).
BUDGET_BLOCK = 1 << 16
# A block is skipped when its sums plus one query's largest cost, raised by this factor,
# convert within the budget: it exceeds the relative rounding of any sum of a block.
MARGIN = 1.0 + 2.0 ** -32
# One block's sums (per-order selection and weighted answer, answered weight), its labels,
# whether its plurality counts are all whole (``CountRequest.maxima``).
BlockSums = tuple[GroupedTotals, LabelCounts, bool]


@dataclass(frozen=True, eq=False)
class BudgetSetting:
    """What every pass of one walked run reads (``request``: mechanism, accounting, q bound,
    seed, salt)."""

    votes: np.ndarray | VoteRows  # the vote file (a memory map) or its sparse rows
    positions: np.ndarray | FirstRows  # the analysed file rows, in order
    request: CountRequest
    noise: NoiseSource
    orders: np.ndarray
    converter: Conversion
    budget: float | None  # None: no halt (a run walked for its outputs)
    chunk_size: int
    student: np.ndarray | None = None  # Interactive-GNMax's probabilities, per file row
    decisions: Decisions | None = None
    truth: np.ndarray | None = None
    progress: Callable[[int, int], None] | None = None
    outputs: np.ndarray | None = None  # each analysed query's output (token votes)
    halt_at: str = "query"  # or "output": the halt before a whole output


def block_sums(request: CountRequest, span: Span, *, block: int, chunk_size: int,
               orders: np.ndarray, shared: SharedCurves | None = None) -> list[BlockSums]:
    """Sums of ``span``'s ``block``-query blocks, counted a chunk at a time, summed from their
    distinct statistics; ``shared`` keeps curves across blocks. Module-level: cluster workers
    run it."""
    opened = span.source.opened()
    independent = request.accounting == "data-independent"
    shared = SharedCurves(CURVE_CACHE_BYTES) if shared is None else shared
    steps = mechanism_steps(request.mechanism, q_bound=request.q_bound)
    selection_rdp, answer_rdp = (
        None if step is None else shared.serving(curve_function(step, independent), orders)
        for step in steps)
    raised_charge = None if steps[0] is None else steps[0].raised_charge
    counts = (count_span(request, span, chunk_size=chunk_size, lo=first,
                         hi=min(span.size, first + block), opened=opened)
              for first in range(0, span.size, block))
    return [(grouped_totals(counted.table, selection_rdp=selection_rdp, answer_rdp=answer_rdp,
                            orders=orders, expected=request.accounting == "expected",
                            raised_charge=raised_charge),
             counted.labels[0], counted.whole) for counted in counts]


class BudgetWalk:
    """A run's walk in query order to its halt: blocks taken whole (:meth:`took`) or query by
    query (:meth:`through`). Its sums (``carry``, ``selection``, weighted ``answer``,
    ``answered``) run on across blocks; ``carries``: at block starts 1, 2, ... (where the
    per-query table restarts); ``epsilons``: each processed output's own."""

    def __init__(self, run: BudgetSetting, carry: np.ndarray):
        self.run = run
        self.block = BUDGET_BLOCK  # the queries of a block (the carries' spacing)
        self.carry = np.array(carry, dtype=np.float64)
        self.selection = np.zeros(self.carry.size)
        self.answer = np.zeros(self.carry.size)
        self.answered = 0.0
        self.labels = LabelCounts(run.request.mechanism.uses_student)
        self.whole = True  # every plurality count processed whole (``CountRequest.maxima``)
        self.halted_at: int | None = None
        self.carries = np.empty((0, self.carry.size))
        self.steps = mechanism_steps(run.request.mechanism, q_bound=run.request.q_bound)
        # the largest curve one query can add: its data-independent curves (math:independent)
        self.peak = np.asarray(data_independent_curve(*self.steps, answered=1, queries=1,
                                                      orders=run.orders), dtype=np.float64)
        self.sums = None if run.outputs is None else OutputSums(run.outputs)
        self.spent = self.carry.copy()  # after the outputs decided (an output halt)
        self.epsilons: list[np.ndarray] = []
        self.marks: list = []  # states at chunk starts since the undecided output began

    def took(self, part: BlockSums, hi: int) -> bool:
        """Add a block's sums whole (ending at ``hi``) if none of its queries can halt the run
        (``composition.within_limit``, raised by ``MARGIN``); whether it did."""
        sums, labels, whole = part
        after = (self.carry + sums.selection) + sums.answer
        if not within_limit(after, self.peak, self.run.converter, self.run.budget, MARGIN):
            return False
        self.selection = self.selection + sums.selection
        self.answer = self.answer + sums.answer
        self.answered = self.answered + float(sums.answered)
        self.carry = after
        self.labels.merge_in(labels)
        self.whole = self.whole and whole
        if self.run.progress is not None:
            self.run.progress(hi, self.run.positions.size)
        return True

    def through(self, lo: int, hi: int) -> None:
        """Go through queries ``lo .. hi-1`` (one block) query by query, to the halt."""
        run = self.run
        # with outputs, a chunk's curves are summed by output from whole (rows, orders)
        # arrays, two of them: chunks of at most TASK_VALUES values each
        step = (run.chunk_size if self.sums is None
                else min(run.chunk_size, max(1, TASK_VALUES // run.orders.size)))
        for start in range(lo, hi, step):
            stop = min(hi, start + step)
            if run.halt_at == "output" and run.budget is not None:
                self.marks.append((start, self._state()))
            chunk, full = self._chunk(start, stop)
            halt = None
            if run.budget is not None and run.halt_at == "query":
                halt = budget_halt(chunk.costs, full, chunk.costs.count, self.carry, run.converter,
                                   run.budget)
            if halt is not None:
                self.halted_at = stop = start + halt
            # with outputs, the curves charged formed once, for the sums and the outputs
            actual = None if self.sums is None else chunk.costs.block(0, stop - start)
            self._add(chunk, start, stop, actual)
            if self.sums is not None:
                over = self._outputs(self.sums.add(start, actual, actual if full is chunk.costs
                                                   else full.block(0, stop - start)))
                if over is not None:
                    self._back_to(over)
            if run.progress is not None:
                run.progress(stop, run.positions.size)
            if self.halted_at is not None:
                return

    def finish(self) -> None:
        """The last output, once every query was gone through (or the halt found)."""
        if self.sums is None:
            return
        over = self._outputs(self.sums.flush())
        if over is not None:
            self._back_to(over)

    def _chunk(self, start: int, stop: int):
        """A chunk's costs, and with every answer step charged in full (``expected``: the
        expected cost)."""
        run, (selection, answer) = self.run, self.steps
        chunk = chunk_costs(run.votes, run.positions, start, stop, student=run.student,
                            decisions=run.decisions, mechanism=run.request.mechanism,
                            selection=selection, answer=answer, noise=run.noise,
                            accounting=run.request.accounting, orders=run.orders)
        expected = run.request.accounting == "expected"
        return chunk, (chunk.costs if expected
                       else replace(chunk.costs, weight=np.ones(stop - start)))

    def _add(self, chunk, start: int, stop: int, charged: np.ndarray | None = None) -> None:
        """Add queries ``start .. stop-1`` of ``chunk`` one by one (the carry is
        running_epsilon's bit for bit); ``charged``: their curves as charged, if formed."""
        run, costs, made = self.run, chunk.costs, chunk.made
        count = stop - start
        if count <= 0:
            return
        self.answered = float(np.add.accumulate(
            np.concatenate(([self.answered], costs.weight[:count])))[-1])
        self.selection = running_total(costs.step("selection"), count, self.selection)
        self.answer = running_total(costs.step("answer"), count, self.answer)
        self.carry = running_total(costs if charged is None else ArrayRows(charged), count,
                                   self.carry)
        if run.request.maxima and self.whole:
            self.whole = whole_numbers(chunk.block[:count].max(axis=1))
        made = made.head(count)
        self.labels.add(*released_labels(made, made.answered,
                                         run.request.mechanism.uses_student),
                        None if run.truth is None else run.truth[run.positions[start:stop]])

    def _outputs(self, done) -> int | None:
        """Keep the epsilons of the outputs a chunk completed; under an output halt, return the
        first query of the first that could exceed the budget, or None."""
        run = self.run
        for firsts, actual, full in done:
            if run.halt_at == "output" and run.budget is not None:
                index, self.spent = first_over((firsts, actual, full), self.spent,
                                               run.converter, run.budget)
                if index is not None:
                    self._kept(actual[:index])
                    return int(firsts[index])
            self._kept(actual)
        pending = self.sums.pending if self.sums is not None else None
        if self.marks and pending is not None:  # states before the undecided output began
            began = int(pending[0][0])  # are not needed any more
            keep = max(number for number, mark in enumerate(self.marks) if mark[0] <= began)
            self.marks = self.marks[keep:]
        return None

    def _kept(self, actual: np.ndarray) -> None:
        if actual.shape[0]:
            self.epsilons.append(self.run.converter.epsilon(actual)[0])

    def _back_to(self, halt: int) -> None:
        """Output halt at query ``halt``: state back to the chunk where that output began, then
        that chunk's queries before ``halt`` added again."""
        start, state = max((mark for mark in self.marks if mark[0] <= halt),
                           key=lambda mark: mark[0])
        (self.carry, self.selection, self.answer, self.answered, self.labels,
         self.whole) = state
        self.halted_at = halt
        if halt > start:
            chunk, _ = self._chunk(start, halt)
            self._add(chunk, start, halt)

    def _state(self):
        return (self.carry.copy(), self.selection.copy(), self.answer.copy(), self.answered,
                copy.deepcopy(self.labels), self.whole)


def run_budget(run: BudgetSetting, carry: np.ndarray, *, workers: int | None = None,
               executor=None, source=None) -> BudgetWalk:
    """A walked run's halt and sums; block sums formed on ``executor`` (else ``workers``
    threads), taken whole only under a query halt without outputs."""
    queries = run.positions.size
    blocks = max(1, math.ceil(queries / BUDGET_BLOCK))
    skipping = run.budget is not None and run.outputs is None and run.halt_at == "query"
    parts = (summed_blocks(run, blocks - 1, workers=workers, executor=executor, source=source)
             if skipping else iter(()))
    walk = BudgetWalk(run, carry)
    carries = []
    try:
        for number in range(blocks):
            lo, hi = number * BUDGET_BLOCK, min(queries, (number + 1) * BUDGET_BLOCK)
            if number:
                carries.append(walk.carry)
            if skipping and number < blocks - 1 and walk.took(next(parts), hi):
                continue
            walk.through(lo, hi)
            if walk.halted_at is not None:
                break
        if walk.halted_at is None or run.halt_at == "query":
            walk.finish()  # the last output (at a query halt: its tokens processed)
    finally:
        close = getattr(parts, "close", None)
        if close is not None:
            close()
    if walk.halted_at is not None:  # the carries of blocks starting at or before the halt
        carries = carries[:walk.halted_at // BUDGET_BLOCK]  # (an output halt goes back)
    if carries:
        walk.carries = np.array(carries)
    return walk


def outputs_figures(ids: np.ndarray, processed: int, epsilons: list[np.ndarray]) -> dict:
    """cli:json's ``outputs``: count, tokens per output, epsilon per output (min, median, max
    over a walk's ``epsilons``), and how many were processed whole (``processed``: the queries
    before the halt)."""
    ids = np.asarray(ids)
    tokens = np.diff(np.flatnonzero(np.concatenate(([True], np.diff(ids) != 0, [True]))))
    return {
        "count": int(tokens.size),
        "tokens_per_output": _spread(tokens),
        "epsilon_per_output": _spread(np.concatenate(epsilons)) if epsilons else None,
        "completed": int(np.count_nonzero(np.cumsum(tokens) <= processed)),
    }


def _spread(values: np.ndarray) -> dict:
    return {"min": _plain(values.min()), "median": _plain(np.median(values)),
            "max": _plain(values.max())}


def _plain(value):
    return whole_int(float(value))


def summed_blocks(run: BudgetSetting, count: int, *, workers: int | None = None, executor=None,
                  source=None) -> Iterator[BlockSums]:
    """Sums of blocks ``0 .. count-1`` in order, formed ahead (a block a thread, or a task per
    span on ``executor``); closing the iterator cancels what is pending."""
    size = BUDGET_BLOCK
    per_task = 1 if executor is None else max(
        1, TASK_VALUES // (size * max(1, row_width(run.votes))))
    shared = SharedCurves(CURVE_CACHE_BYTES) if executor is None else None
    source = LocalRows(run.votes) if executor is None else source

    def task(number: int) -> partial:
        span = span_of(run.votes, run.positions, number * size,
                       min(count, number + per_task) * size, source=source,
                       student=run.student, decisions=run.decisions, truth=run.truth)
        return partial(block_sums, run.request, span, block=size, chunk_size=run.chunk_size,
                       orders=run.orders, shared=shared)

    for group in tasks_in_order(task, range(0, count, per_task), workers=workers,
                                executor=executor):
        yield from group
