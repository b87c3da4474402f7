"""One chunk of a run: the decisions, the statistics and the per-query cost curves of
queries ``start .. stop-1`` (MATH.md s.7), as the per-query loop of ``analysis.run`` and
the per-query stream of ``analysis.per_query_stream`` both need them."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..accounting.composition import StepRows, query_epsilons
from ..accounting.conversion import Conversion
from ..mechanisms import Decisions
from .columns import given_rows
from .setting import rows_of, rows_read_once
from .steps import step_curves


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
