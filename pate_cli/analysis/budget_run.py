"""Budget runs (math:costs): whole blocks summed apart, the halt found in query order.

A budget run halts at the first query whose full cost could take the total above the
budget. Its queries go in blocks of ``BUDGET_BLOCK``, whose sums do not depend on one
another: they are formed ahead, on threads or a cluster's workers (:func:`block_sums`:
each distinct curve once, ``accounting.grouped``). A block is taken whole from its sums
only where those plus the largest cost one query can add (the data-independent curves,
which cap every data-dependent one) convert within the budget, with a margin for every
rounding: it holds no halt. Any other block is gone through query after query
(``accounting.composition``), as the halt checks it.

No figure depends on the chunk size, the workers, or where block sums were formed; a run
of at most ``BUDGET_BLOCK`` queries is exactly the query-after-query run. Which blocks
are skipped depends on the budget; grouped and query-after-query sums differ in the last
bits only (the tolerance of math:tolerance), and every figure reported was checked
against the budget. The per-query ``epsilon_cumulative`` restarts from the carry at each
block start (``BudgetPart.carries``), so it ends exactly at the reported epsilon.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from ..accounting.composition import budget_halt, running_total, within_limit
from ..accounting.conversion import Conversion
from ..accounting.grouped import GroupedTotals, grouped_totals
from ..curve_store import SharedCurves
from ..decisions import Decisions, LabelCounts, released_labels
from ..inputs.rows import FirstRows, LocalRows, Span, span_of
from ..mechanisms import NoiseSource
from ..threads import tasks_in_order
from ..vote_rows import VoteRows, row_width
from ..work_sizes import CURVE_CACHE_BYTES, TASK_VALUES
from .grouped_run import CountRequest, count_span
from .steps import chunk_costs, curve_function, data_independent_curve, mechanism_steps

# Queries per block (a fixed constant: the carries, and so the last bits of a run of more
# queries, depend on it).
BUDGET_BLOCK = 1 << 16
# A block is skipped when its sums plus one query's largest cost, raised by this factor,
# convert within the budget: it exceeds the relative rounding of any sum of a block.
MARGIN = 1.0 + 2.0 ** -32
# One block's sums (per-order selection and weighted answer, answered weight), its labels.
BlockSums = tuple[GroupedTotals, LabelCounts]


@dataclass(frozen=True, eq=False)
class BudgetSetting:
    """What every pass of one budget run reads: the analysed rows and their inputs, the
    mechanism (``request``, with its accounting, q bound, seed and salt) and its noise,
    the orders and the budget."""

    votes: np.ndarray | VoteRows  # the vote file (a memory map) or its sparse rows
    positions: np.ndarray | FirstRows  # the analysed file rows, in order
    request: CountRequest
    noise: NoiseSource
    orders: np.ndarray
    converter: Conversion
    budget: float
    chunk_size: int
    student: np.ndarray | None = None  # Interactive-GNMax's probabilities, per file row
    decisions: Decisions | None = None
    truth: np.ndarray | None = None
    progress: Callable[[int, int], None] | None = None


def block_sums(request: CountRequest, span: Span, *, block: int, chunk_size: int,
               orders: np.ndarray, shared: SharedCurves | None = None) -> list[BlockSums]:
    """The sums of the blocks of ``block`` queries that ``span`` makes up, each counted a
    chunk of ``chunk_size`` rows at a time (exact counts), then summed from its distinct
    statistics. ``shared`` keeps curves across blocks (one per call if None). A
    module-level function: a cluster's workers run it."""
    opened = span.source.opened()
    independent = request.accounting == "data-independent"
    shared = SharedCurves(CURVE_CACHE_BYTES) if shared is None else shared
    selection_rdp, answer_rdp = (
        None if step is None else shared.serving(curve_function(step, independent), orders)
        for step in mechanism_steps(request.mechanism, q_bound=request.q_bound))
    counts = (count_span(request, span, chunk_size=chunk_size, lo=first,
                         hi=min(span.size, first + block), opened=opened)
              for first in range(0, span.size, block))
    return [(grouped_totals(counted.table, selection_rdp=selection_rdp, answer_rdp=answer_rdp,
                            orders=orders, expected=request.accounting == "expected"),
             counted.labels[0]) for counted in counts]


class BudgetWalk:
    """The second pass of a budget run, in query order to the halt: blocks taken whole from
    their sums (:meth:`took`) or gone through query by query (:meth:`through`). Its sums
    (``carry``, the ``selection`` and weighted ``answer`` curves apart, the ``answered``
    weight) run on from block to block: a skipped block adds its grouped sums, a block gone
    through its queries one after another (``running_total``, a cumulative sum: no figure
    depends on where chunks start). ``carries``: the carries at block starts 1, 2, ... up
    to the last processed (where the per-query table restarts)."""

    def __init__(self, run: BudgetSetting, carry: np.ndarray):
        self.run = run
        self.block = BUDGET_BLOCK  # the queries of a block (the carries' spacing)
        self.carry = np.array(carry, dtype=np.float64)
        self.selection = np.zeros(self.carry.size)
        self.answer = np.zeros(self.carry.size)
        self.answered = 0.0
        self.labels = LabelCounts(run.request.mechanism.uses_student)
        self.halted_at: int | None = None
        self.carries = np.empty((0, self.carry.size))
        self.steps = mechanism_steps(run.request.mechanism, q_bound=run.request.q_bound)
        # the largest curve one query can add: its data-independent curves (math:independent)
        self.peak = np.asarray(data_independent_curve(*self.steps, answered=1, queries=1,
                                                      orders=run.orders), dtype=np.float64)

    def took(self, part: BlockSums, hi: int) -> bool:
        """Add a block's sums whole (its queries end at ``hi``) where no query of it can
        halt the run (``composition.within_limit``, raised by ``MARGIN``); whether it did."""
        sums, labels = part
        after = (self.carry + sums.selection) + sums.answer
        if not within_limit(after, self.peak, self.run.converter, self.run.budget, MARGIN):
            return False
        self.selection = self.selection + sums.selection
        self.answer = self.answer + sums.answer
        self.answered = self.answered + float(sums.answered)
        self.carry = after
        self.labels.merge_in(labels)
        if self.run.progress is not None:
            self.run.progress(hi, self.run.positions.size)
        return True

    def through(self, lo: int, hi: int) -> None:
        """Go through queries ``lo .. hi-1`` (one block) query by query, to the halt."""
        run, (selection, answer) = self.run, self.steps
        expected = run.request.accounting == "expected"
        for start in range(lo, hi, run.chunk_size):
            stop = min(hi, start + run.chunk_size)
            chunk = chunk_costs(run.votes, run.positions, start, stop, student=run.student,
                                decisions=run.decisions, mechanism=run.request.mechanism,
                                selection=selection, answer=answer, noise=run.noise,
                                accounting=run.request.accounting, orders=run.orders)
            costs, made = chunk.costs, chunk.made
            full = costs if expected else replace(costs, weight=np.ones(stop - start))
            halt = budget_halt(costs, full, self.carry, run.converter, run.budget)
            if halt is not None:
                self.halted_at = stop = start + halt
                made = made.head(halt)
            if stop > start:  # query after query (composition.running_total): the carry
                count = stop - start  # is running_epsilon's bit for bit
                self.answered = float(np.add.accumulate(
                    np.concatenate(([self.answered], costs.weight[:count])))[-1])
                self.selection = running_total(costs.step("selection"), count, self.selection)
                self.answer = running_total(costs.step("answer"), count, self.answer)
                self.carry = running_total(costs, count, self.carry)
                self.labels.add(*released_labels(made, made.answered,
                                                 run.request.mechanism.uses_student),
                                None if run.truth is None else run.truth[run.positions[start:stop]])
            if run.progress is not None:
                run.progress(stop, run.positions.size)
            if self.halted_at is not None:
                return


def run_budget(run: BudgetSetting, carry: np.ndarray, *, workers: int | None = None,
               executor=None, source=None) -> BudgetWalk:
    """A budget run's halt and sums (the module's docstring). ``run``: the run's setting
    (:class:`BudgetSetting`); ``executor``: where block sums are formed (else on
    ``workers`` threads)."""
    queries = run.positions.size
    blocks = max(1, math.ceil(queries / BUDGET_BLOCK))
    parts = summed_blocks(run, blocks - 1, workers=workers, executor=executor, source=source)
    walk = BudgetWalk(run, carry)
    carries = []
    try:
        for number in range(blocks):
            lo, hi = number * BUDGET_BLOCK, min(queries, (number + 1) * BUDGET_BLOCK)
            if number:
                carries.append(walk.carry)
            if number < blocks - 1 and walk.took(next(parts), hi):
                continue
            walk.through(lo, hi)
            if walk.halted_at is not None:
                break
    finally:
        parts.close()
    if carries:
        walk.carries = np.array(carries)
    return walk


def summed_blocks(run: BudgetSetting, count: int, *, workers: int | None = None, executor=None,
                  source=None) -> Iterator[BlockSums]:
    """The sums of blocks ``0 .. count-1`` in order, formed ahead as they are drawn
    (``threads.tasks_in_order``: a block a thread, or on ``executor`` a task per span of
    whole blocks, ``source`` their rows); closing the iterator cancels what is pending."""
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
