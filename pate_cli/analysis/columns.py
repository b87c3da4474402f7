"""The per-query columns of a run (CLI.md's per-query table), filled chunk by chunk."""

from __future__ import annotations

import numpy as np

from ..mechanisms import OUTCOME_ABSTAIN, Decisions
from ..sparse_rows import plurality_classes
from .run_sums import released_labels


class QueryColumns:
    """The per-query columns of one run, filled chunk by chunk in analysed order."""

    NAMES = ("plurality", "answered", "log_q", "log_pr_answered", "epsilon_query",
             "epsilon_cumulative", "order_cumulative")

    def __init__(self, queries: int, *, with_outcome: bool):
        self.columns = {name: np.empty(queries) for name in self.NAMES}
        self.plurality_class = np.empty(queries, dtype=np.int64)
        self.label = np.empty(queries, dtype=np.int64)
        self.outcome = np.empty(queries, dtype=np.int8) if with_outcome else None

    def truncate(self, count: int) -> None:
        """Keep the first ``count`` queries (a budget run's processed prefix)."""
        self.columns = {name: values[:count] for name, values in self.columns.items()}
        self.plurality_class = self.plurality_class[:count]
        self.label = self.label[:count]
        if self.outcome is not None:
            self.outcome = self.outcome[:count]

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
