"""Individualized PATE: the stopping rule and the figures at the stop, a chunk at a time
(math:individualized). :class:`IndependentCounts`: the data-independent epsilons
(math:independent at each member's sensitivity) from counts of queries and answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..conversion import Conversion
from .parameters import checked_budgets


@dataclass(frozen=True)
class GroupTotals:
    """An individualized run's per-group figures (math:individualized), no per-query array.

    Per group: ``names``, ``budgets``, ``sensitivities`` (as given), ``epsilon`` and ``order`` at
    the stop (else after the last query; 0 and NaN if nothing was spent), ``exhausted_at`` (the
    0-based query at which that group alone would halt, or None), ``final_epsilon`` /
    ``final_order`` after the last query (likewise). ``stopped_at``: the least ``exhausted_at``
    or None (that label and later ones are not released); ``labels_released``: answered before
    it; ``answered_total``: in the whole run; ``baseline_*``: the uniform run's.
    """

    names: tuple
    budgets: np.ndarray
    sensitivities: np.ndarray
    epsilon: np.ndarray
    order: np.ndarray
    exhausted_at: tuple
    stopped_at: int | None
    labels_released: int
    answered_total: int
    baseline_stopped_at: int | None
    baseline_labels: int
    final_epsilon: np.ndarray
    final_order: np.ndarray
    queries: int


class GroupStops:
    """The stopping rule and the figures at the stop (math:individualized), fed chunks of
    cumulative figures in query order."""

    def __init__(self, budgets: np.ndarray):
        self.budgets = checked_budgets(budgets)
        groups = self.budgets.size
        self.done = 0
        self.exhausted: list[int | None] = [None] * groups
        self.stopped_at: int | None = None
        self.spent = (np.zeros(groups), np.full(groups, np.nan))
        self.last = (np.zeros(groups), np.full(groups, np.nan))
        self.labels_released = self.answered_total = self.baseline_labels = 0
        self.baseline_stopped_at: int | None = None

    def add(self, epsilon: np.ndarray, order: np.ndarray, baseline: np.ndarray,
            answered: np.ndarray, baseline_answered: np.ndarray,
            halts: np.ndarray | None = None) -> None:
        """The next queries' cumulative figures (``GroupSums.add``) and answers, in the run and
        the uniform run; ``halts``: ``GroupSums.halts``' stops before a query is charged, where
        its charge depends on its outcome (math:costs)."""
        count = epsilon.shape[0]
        if count == 0:
            return
        over = np.column_stack((epsilon > self.budgets, baseline > self.budgets.min()))
        firsts = np.where(over.any(axis=0), np.argmax(over, axis=0), count)
        if halts is not None:
            firsts = np.minimum(firsts, np.where(halts >= 0, halts, count))
        firsts, base_first = firsts[:-1], int(firsts[-1])
        for g, first in enumerate(firsts):  # a handful of groups
            if self.exhausted[g] is None and first < count:
                self.exhausted[g] = self.done + int(first)
        upto = count
        if self.stopped_at is None:
            first = int(firsts.min())
            if first < count:
                upto, self.stopped_at = first, self.done + first
                self.spent = ((epsilon[first - 1].copy(), order[first - 1].copy())
                              if first else self.last)
            self.labels_released += int(np.count_nonzero(answered[:upto]))
        self.answered_total += int(np.count_nonzero(answered))
        if self.baseline_stopped_at is None:
            if base_first < count:
                self.baseline_stopped_at = self.done + base_first
            self.baseline_labels += int(np.count_nonzero(baseline_answered[:base_first]))
        self.last = (epsilon[-1].copy(), order[-1].copy())
        self.done += count

    def limits(self) -> np.ndarray:
        """Each group's budget, then the uniform run's, NaN where its stop is found."""
        budgets = np.where([first is None for first in self.exhausted], self.budgets, np.nan)
        return np.append(budgets, float(self.budgets.min())
                         if self.baseline_stopped_at is None else np.nan)

    def totals(self, names: tuple, sensitivities: np.ndarray) -> GroupTotals:
        epsilon, order = self.last if self.stopped_at is None else self.spent
        return GroupTotals(
            names=names, budgets=self.budgets, sensitivities=sensitivities,
            epsilon=epsilon.copy(), order=order.copy(), exhausted_at=tuple(self.exhausted),
            stopped_at=self.stopped_at, labels_released=self.labels_released,
            answered_total=self.answered_total,
            baseline_stopped_at=self.baseline_stopped_at,
            baseline_labels=self.baseline_labels, final_epsilon=self.last[0].copy(),
            final_order=self.last[1].copy(), queries=self.done)


class IndependentCounts:
    """Each member's data-independent RDP (math:independent at the sensitivity it pays) as
    counts: per sensitivity, the queries the member paid for and the answers among them, its
    sums those counts times one query's curves (``curves(sensitivity)``: answer, selection or
    None), as a plain run's data-independent figure is formed. A group's epsilon is its
    worst-off member's, 0 where none paid. Members are the groups (one sensitivity each) or,
    with ``member_groups``, the teachers (vanishing)."""

    def __init__(self, curves: Callable[[float], tuple[np.ndarray, np.ndarray | None]],
                 rule: Conversion, *, groups: int, member_groups: np.ndarray | None = None):
        self.curves, self.rule, self.groups = curves, rule, groups
        self.member_groups = (np.arange(groups) if member_groups is None
                              else np.asarray(member_groups))
        self.counts: dict[float, np.ndarray] = {}  # sensitivity -> paid, answered per member

    def add(self, sensitivity: np.ndarray, answered: np.ndarray,
            participation: np.ndarray | None = None) -> None:
        """Queries whose answers the replay made where ``answered`` (bool ``(queries,)``):
        each member pays at its ``sensitivity`` ``(members,)`` (0: nothing) for each, or,
        with ``participation`` (bool ``(queries, members)``), at the query's ``sensitivity``
        ``(queries,)`` where it takes part."""
        if participation is None:
            for d in np.unique(sensitivity[sensitivity > 0.0]):
                paid = sensitivity == d
                self._add(float(d), paid * answered.size, paid * np.count_nonzero(answered))
            return
        values, which = np.unique(sensitivity, return_inverse=True)
        for v, d in enumerate(values):
            rows = which.reshape(-1) == v
            self._add(float(d), np.count_nonzero(participation[rows], axis=0),
                      np.count_nonzero(participation[rows & answered], axis=0))

    def _add(self, sensitivity: float, paid: np.ndarray, answered: np.ndarray) -> None:
        counts = self.counts.setdefault(sensitivity,
                                        np.zeros((2, self.member_groups.size), np.int64))
        counts[0] += paid
        counts[1] += answered

    def epsilons(self) -> np.ndarray:
        """Each group's epsilon after the queries added (zeros before any)."""
        members = self.member_groups.size
        total, paid = np.zeros((members, self.rule.orders.size)), np.zeros(members, bool)
        for d in sorted(self.counts):  # a fixed order: the same bits however added
            queries, answered = self.counts[d]
            answer, selection = self.curves(d)
            total += answered[:, None] * answer
            if selection is not None:
                total += queries[:, None] * selection
            paid |= queries > 0
        epsilon = np.where(paid, self.rule.epsilon(total)[0], 0.0)
        out = np.zeros(self.groups)
        np.maximum.at(out, self.member_groups, epsilon)
        return out
