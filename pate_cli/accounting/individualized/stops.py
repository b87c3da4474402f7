"""Individualized PATE: the stopping rule and the figures at the stop, a chunk at a time
(math:individualized). :class:`IndependentSpent`: the data-independent epsilons
(math:independent at each group's sensitivity) from the running RDP sums alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..composition import running_total
from ..conversion import Conversion
from ..live_orders import live_running_total
from .costs import CostChunk
from .curves import CurveFactors, first_of_each_sensitivity
from .parameters import checked_budgets


@dataclass(frozen=True)
class GroupTotals:
    """An individualized run's per-group figures (math:individualized), no per-query array.

    Per group: ``names``, ``budgets``, ``sensitivities`` (as given), ``epsilon`` and ``order``
    at the stop (else after the last query; 0 and NaN if nothing was spent), ``exhausted_at``
    (the 0-based query at which that group alone would halt, or None), ``final_epsilon`` /
    ``final_order`` after the last query (likewise). ``stopped_at``: the least
    ``exhausted_at`` or None (that label and later ones are not released);
    ``labels_released``: answered before it; ``answered_total``: in the whole run;
    ``baseline_*``: the uniform run's.
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
    cumulative figures in query order; holds one chunk's figures."""

    def __init__(self, budgets: np.ndarray):
        self.budgets = checked_budgets(budgets)
        groups = self.budgets.size
        self.done = 0
        self.exhausted: list[int | None] = [None] * groups
        self.stopped_at: int | None = None
        self.spent = (np.zeros(groups), np.full(groups, np.nan))
        self.last = (np.zeros(groups), np.full(groups, np.nan))
        self.before = self.last  # the last figures before the latest chunk
        self.latest = np.zeros((0, groups))  # the latest chunk's epsilons
        self.labels_released = self.answered_total = self.baseline_labels = 0
        self.baseline_stopped_at: int | None = None

    def add(self, epsilon: np.ndarray, order: np.ndarray, baseline: np.ndarray,
            answered: np.ndarray, baseline_answered: np.ndarray,
            halts: np.ndarray | None = None) -> None:
        """The next queries' cumulative figures (``GroupSums.add``) and answers, in the run
        and the uniform run; ``halts``: ``GroupSums.halts``' stops before a query is
        charged, where its charge depends on its outcome (math:costs)."""
        count = epsilon.shape[0]
        self.before, self.latest = self.last, epsilon
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

    def epsilon_before(self, query: int) -> np.ndarray:
        """The epsilons after query ``query - 1`` (zeros for 0), ``query`` in or just after
        the latest chunk (another accounting's figures at this one's stop)."""
        start = self.done - self.latest.shape[0]
        if not start <= query <= self.done:
            raise ValueError(f"query {query} is not in the latest chunk")
        return (self.before[0] if query == start else self.latest[query - 1 - start]).copy()

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


class IndependentSpent:
    """Each group's epsilon after chosen queries from its running RDP sums alone, where group g
    pays curve g (or none) throughout (upsampling, weighting): ``GroupSums``' figure, bit for
    bit, without converting after every query; sensitivity 0: epsilon 0. ``ceilings`` (or
    None): per sensitivity, at least every figure; sums formed at the orders that can give one
    (``live_orders.live_running_total``)."""

    def __init__(self, rule: Conversion, sensitivities: np.ndarray):
        self.rule = rule
        self.sensitivities = np.asarray(sensitivities, dtype=np.float64)
        self.first_of = first_of_each_sensitivity(self.sensitivities)
        self.carry = {v: np.zeros(rule.orders.size) for v in set(self.first_of)}
        self.done = 0
        self.ceilings: dict[float, float] | None = None

    def add(self, chunk: CostChunk, *, cut: int | None = None) -> np.ndarray | None:
        """Add ``chunk``'s queries; with ``cut``, the epsilons after its first ``cut``
        queries (zeros if no query came before)."""
        curves = chunk.curves
        if not isinstance(curves, CurveFactors):
            raise TypeError("IndependentSpent takes chunks of unevaluated curves")
        count, spent = chunk.queries, {}
        rest = curves if cut is None else replace(  # the queries after the cut
            curves, log_q=curves.log_q[cut:], charge=np.asarray(curves.charge)[cut:],
            log_pr_answered=None if curves.log_pr_answered is None
            else curves.log_pr_answered[cut:])
        for v, carry in self.carry.items():
            if self.sensitivities[v] == 0.0:
                continue
            if cut is not None:
                spent[v] = carry = self._total(curves.curves(v), cut, carry)
            self.carry[v] = self._total(rest.curves(v), rest.shape[1], carry)
        before, self.done = self.done, self.done + count
        if cut is None:
            return None
        return self._epsilons(spent) if before + cut else np.zeros(self.sensitivities.size)

    def _total(self, source, count: int, carry: np.ndarray) -> np.ndarray:
        """``carry`` plus ``source``'s first ``count`` queries."""
        ceiling = (None if self.ceilings is None
                   else self.ceilings.get(float(source.sensitivity)))
        if ceiling is None:
            return running_total(source, count, carry)
        return live_running_total(source.at, count, carry, self.rule, ceiling)

    def final(self) -> np.ndarray:
        """The epsilons after the last query added (zeros before any)."""
        return self._epsilons(self.carry) if self.done else np.zeros(self.sensitivities.size)

    def _epsilons(self, sums: dict) -> np.ndarray:
        out = np.zeros(self.sensitivities.size)
        for g, v in enumerate(self.first_of):
            if self.sensitivities[v] > 0.0:
                out[g] = float(self.rule.epsilon(sums[v])[0])
        return out
