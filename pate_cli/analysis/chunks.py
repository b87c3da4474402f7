"""One chunk of a run: the decisions, the statistics and the per-query cost curves of
queries ``start .. stop-1`` (MATH.md s.7), as the per-query loop of ``analysis.run`` and
the per-query stream of ``analysis.per_query_stream`` both need them, and the per-query
columns (CLI.md's per-query table) those chunks fill."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..accounting.composition import StepRows, query_epsilons
from ..accounting.conversion import Conversion
from ..mechanisms import OUTCOME_ABSTAIN, Decisions, NoiseSource
from ..sparse_rows import plurality_classes
from .setting import released_labels, rows_of, rows_read_once
from .steps import mechanism_steps, step_curves


class ChunkCosts(NamedTuple):
    """A chunk's votes, decisions, statistics, answer weight and (if asked) curves."""

    block: np.ndarray
    made: Decisions
    log_q: np.ndarray
    log_pr: np.ndarray
    weight: np.ndarray
    costs: StepRows | None
    epsilon_query: np.ndarray | None = None


def chunk_costs(votes, positions, start: int, stop: int, *, mechanism, selection, answer,
                noise, accounting: str, orders: np.ndarray, student=None,
                decisions: Decisions | None = None, curves: bool = True,
                kept=None, conversion: Conversion | None = None) -> ChunkCosts:
    """The chunk of analysed queries ``start .. stop-1``: the seeded replay's decisions
    (or the given ``decisions``' rows), ``log q``, ``log pr_answered`` (0 without a
    selection step), the answer weight (``pr_answered`` under expected accounting, else
    the decision) and, with ``curves``, the per-query curves (``StepRows``); ``kept``
    holds the answer step's distinct curves for the run's totals (``step_curves``).
    With a ``conversion`` too, each query's own epsilon (``composition.query_epsilons``:
    no carry needed, so it is formed here, where chunks are formed ahead on threads)."""
    block = rows_read_once(votes, positions, start, stop)
    block_student = None if student is None else rows_of(student, positions, start, stop)
    if decisions is None:
        made = mechanism.replay(block, noise=noise, start=start, student=block_student)
    else:
        made = given_rows(decisions, start, stop)
    log_q = answer.statistic(block, block_student)
    log_pr = (np.zeros(stop - start) if selection is None
              else selection.statistic(block, block_student))
    weight = np.exp(log_pr) if accounting == "expected" else made.answered.astype(np.float64)
    costs = None
    if curves:
        independent = accounting == "data-independent"
        sel_curves, sel_index = step_curves(selection, log_pr, orders, independent)
        ans_curves, ans_index = step_curves(answer, log_q, orders, independent, kept)
        costs = StepRows(sel_curves, sel_index, ans_curves, ans_index, weight)
    epsilon_query = (None if costs is None or conversion is None
                     else query_epsilons(costs, stop - start, conversion))
    return ChunkCosts(block, made, log_q, log_pr, weight, costs, epsilon_query)


def run_charges(votes, positions, *, mechanism, accounting: str, seed: int, q_bound: str,
                student=None, decisions=None) -> Callable[[int, int], np.ndarray]:
    """``(start, stop) ->`` the answer step's charge of analysed queries ``start ..
    stop-1`` (0/1 as the seeded replay or the given ``decisions`` decided, ``pr_answered``
    under expected accounting): the run's ``answered`` column, formed again a chunk at a
    time (the replay's noise is keyed by query position, MATH.md s.1)."""
    noise = NoiseSource(seed)

    def charges(start: int, stop: int) -> np.ndarray:
        # the steps looked up per chunk (cheap), not before: the release first names a
        # mechanism it does not apply to (SVT-PATE has no per-query steps)
        selection, answer = mechanism_steps(mechanism, q_bound=q_bound)
        return chunk_costs(votes, positions, start, stop, mechanism=mechanism,
                           selection=selection, answer=answer, noise=noise,
                           accounting=accounting, orders=np.ones(1), student=student,
                           decisions=decisions, curves=False).weight
    return charges


class QueryColumns:
    """The per-query columns of one chunk of a run (the per-query table's pass)."""

    NAMES = ("plurality", "answered", "log_q", "log_pr_answered", "epsilon_query",
             "epsilon_cumulative", "order_cumulative")

    def __init__(self, queries: int, *, with_outcome: bool):
        self.columns = {name: np.empty(queries) for name in self.NAMES}
        self.plurality_class = np.empty(queries, dtype=np.int64)
        self.label = np.empty(queries, dtype=np.int64)
        self.outcome = np.empty(queries, dtype=np.int8) if with_outcome else None

    def fill(self, part: slice, block: np.ndarray, decisions, released: np.ndarray, *,
             weight: np.ndarray, log_q: np.ndarray, log_pr: np.ndarray, figures,
             orders: np.ndarray) -> None:
        columns = self.columns
        columns["plurality"][part] = block.max(axis=1)
        self.plurality_class[part] = plurality_classes(block)
        columns["answered"][part] = weight
        block_labels, outcome = released_labels(decisions, released, self.outcome is not None)
        if self.outcome is not None:  # reinforced student labels are output too (no cost)
            self.outcome[part] = outcome
        self.label[part] = block_labels
        columns["log_q"][part] = log_q
        columns["log_pr_answered"][part] = log_pr
        columns["epsilon_query"][part] = figures.epsilon_query
        columns["epsilon_cumulative"][part] = figures.epsilon
        columns["order_cumulative"][part] = orders[figures.order_index]


def given_rows(decisions: Decisions, start: int, stop: int) -> Decisions:
    """Queries ``start .. stop-1`` of given decisions; past their end (a budget run that
    halts there), nothing answered."""
    count = stop - start
    have = max(0, min(stop, decisions.answered.size) - start)
    answered = np.zeros(count, dtype=bool)
    labels = np.full(count, -1, dtype=np.int64)
    answered[:have] = decisions.answered[start:start + have]
    labels[:have] = decisions.labels[start:start + have]
    outcome = None
    if decisions.outcome is not None:
        outcome = np.full(count, OUTCOME_ABSTAIN, dtype=np.int8)
        outcome[:have] = decisions.outcome[start:start + have]
    return Decisions(answered, labels, outcome)
