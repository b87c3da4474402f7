"""Individualized PATE a span of queries at a time, in query order (math:conversion,
math:costs and math:individualized): a span's ``log q``, ``log pr_answered``, outputs and
answer charges as the replay found them; vanishing's participation is the caller's draw.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import NamedTuple

import numpy as np

from ...work_sizes import TASK_VALUES
from ..composition import running_total
from ..conversion import Conversion
from ..live_orders import epsilon_ceiling
from .costs import CostChunk, group_costs, vanishing_costs
from .curves import CurveSetting, Mapper
from .groups import GroupSums
from .parameters import GroupParameters
from .stops import GroupStops, GroupTotals, IndependentCounts

# Elements of the evaluated curves of one step of vanishing costs (32 MB).
COST_ELEMENTS = TASK_VALUES
# Queries whose curves at every order guess where a run's total is least (``sum_ceilings``).
SAMPLE_ROWS = 128


class GroupSetting(NamedTuple):
    """What any span's group costs need: the noise scales (``sigma_threshold`` None without
    a selection step), ``screening`` ``(T, kind, low, high)`` (math:screening; None:
    math:independent's), ``sensitivities`` per group (NaN for vanishing), and for vanishing
    ``participation(start, count)`` and the teachers' ``member_groups``."""

    sigma: float
    sigma_threshold: float | None
    screening: tuple | None
    orders: np.ndarray
    sensitivities: np.ndarray
    participation: Callable[[int, int], np.ndarray] | None
    member_groups: np.ndarray | None

    def curves(self, independent: bool) -> CurveSetting:
        """What the curves of a span share (``independent``: the data-independent ones)."""
        return CurveSetting(sigma=self.sigma, orders=self.orders,
                            sigma_threshold=self.sigma_threshold,
                            data_independent=independent, screening=self.screening)

    def independent_curves(self, sensitivity: float) -> tuple[np.ndarray, np.ndarray | None]:
        """One query's data-independent answer and selection curves at ``sensitivity``
        (math:independent, math:screening's where set; selection None without the step)."""
        curves = self.curves(independent=True).factors(
            np.zeros(0), sensitivities=np.array([sensitivity])).curves(0)
        assert curves.answer is not None  # (data-independent curves at a sensitivity > 0)
        return curves.answer, curves.selection


def span_costs(setting: GroupSetting, start: int, log_q: np.ndarray, log_pr: np.ndarray,
               answered: np.ndarray, charge: np.ndarray, *, independent: bool,
               map: Mapper = map) -> Iterator[CostChunk]:
    """Queries ``start ..``'s cost chunks in query order: one, unevaluated, for upsampling
    and weighting; steps of about ``COST_ELEMENTS`` values for vanishing. ``independent``:
    the data-independent costs. Interactive's ``log pr_answered`` is the replay's (n - M p)."""
    selection = setting.sigma_threshold is not None
    curves = setting.curves(independent)
    if setting.participation is None:
        yield group_costs(log_q, curves, sensitivities=setting.sensitivities, evaluate=False,
                          answered=answered, charge=charge,
                          log_pr_answered=log_pr if selection else None)
        return
    count = log_q.shape[0]
    step = max(64, COST_ELEMENTS // ((setting.sensitivities.size + 1) * setting.orders.size))
    for lo in range(0, count, step):
        part = slice(lo, min(count, lo + step))
        yield vanishing_costs(log_q[part], curves, participation=setting.participation(
                                  start + lo, part.stop - lo), map=map,
                              answered=answered[part], charge=charge[part],
                              log_pr_answered=log_pr[part] if selection else None)


def add_span(sums: GroupSums, chunks: Iterator[CostChunk], *, map: Mapper = map,
             full: Iterator[CostChunk] | None = None, limits: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """A span's cumulative figures (``GroupSums.add``, ``limits`` its figures' limits), joined;
    with ``full`` (the answer step in full) and ``limits`` (``GroupStops.limits``), also where
    each budget halts the run in the span (``GroupSums.halts``; -1: nowhere), else None."""
    parts, done = [], 0
    open_limits = None if full is None or limits is None else limits.copy()
    halts = np.full(0 if limits is None else limits.size, -1)  # per group, then uniform
    for chunk in chunks:
        if full is not None and open_limits is not None:
            found = sums.halts(chunk, next(full), open_limits)
            hit = (halts < 0) & (found >= 0)
            halts[hit], open_limits[hit] = done + found[hit], np.nan
        parts.append(sums.add(chunk, map=map, limits=limits))
        done += chunk.queries
    result = None if open_limits is None else halts
    if len(parts) == 1:
        return (*parts[0], result)
    eps, order, base = zip(*parts, strict=True)
    return np.concatenate(eps), np.concatenate(order), np.concatenate(base), result


class GroupRun:
    """A run's group accounting (math:individualized), span by span: the running sums, the
    stopping rule, and each group's data-independent epsilons at the stop and at the end
    (from each member's counts, ``IndependentCounts``). Holds one span's figures.
    ``terms``: the most queries the run holds (``GroupSums``)."""

    def __init__(self, setting: GroupSetting, *, budgets: np.ndarray, delta: float,
                 conversion: str, accounting: str, terms: int = 0):
        independent = accounting == "data-independent"
        self.setting, self.independent = setting, independent
        self.realised = accounting != "expected"  # a query's charge follows its outcome
        self.sums = GroupSums(groups=budgets.size, orders=setting.orders, delta=delta,
                              conversion=conversion, member_groups=setting.member_groups,
                              terms=terms)
        self.stops = GroupStops(budgets)
        self.counted = self.sums.rule.summing(0)  # counts times a curve: no long sum
        # the data-independent figures beside data-dependent sums (else the sums' own)
        self.counts = None if independent else IndependentCounts(
            setting.independent_curves, self.counted, groups=budgets.size,
            member_groups=setting.member_groups)
        self.spent_at_stop: np.ndarray | None = None

    @property
    def prunes(self) -> bool:
        """Whether :meth:`prepare` can spare orders: data-dependent sums where each group
        pays one curve throughout (upsampling, weighting)."""
        return not self.independent and self.setting.participation is None

    def prepare(self, log_q: np.ndarray, log_pr: np.ndarray, charge: np.ndarray, *,
                map: Mapper = map) -> None:
        """Before the first :meth:`add`, the whole run's statistics and charges (as :meth:`add`
        takes them): each sensitivity's sums are then formed only at the orders that can still
        give a figure (``sum_ceilings``; a sensitivity per task of ``map``), same figures."""
        if not self.prunes or not log_q.size:
            return
        self.sums.ceilings = sum_ceilings(self.setting, self.sums.rule, log_q, log_pr, charge,
                                          budgets=self.stops.budgets, map=map)

    def add(self, start: int, log_q: np.ndarray, log_pr: np.ndarray, output: np.ndarray,
            charge: np.ndarray, made: np.ndarray, *, map: Mapper = map) -> int:
        """Queries ``start ..`` (``made``: the replay's answers, the data-independent charge); how
        many come before the stop, their labels released (math:individualized's stopping rule)."""
        costs = partial(span_costs, self.setting, start, log_q, log_pr, output, map=map)
        before = self.stops.stopped_at
        limits = self.stops.limits()
        checked = self.realised and bool(np.any(charge < 1.0)) and not np.isnan(limits).all()
        full = costs(np.ones_like(charge), independent=self.independent) if checked else None
        eps, order, base, halts = add_span(self.sums, costs(charge, independent=self.independent),
                                           map=map, full=full, limits=limits)
        self.stops.add(eps, order, base, output, output, halts)
        stopped = self.stops.stopped_at
        if self.counts is not None:
            cut = output.size if before is not None or stopped is None else stopped - start
            self._count(start, made[:cut])
            if cut < output.size:  # the stop: the figures of the queries before it
                self.spent_at_stop = self.counts.epsilons()
                self._count(start + cut, made[cut:])
        return 0 if before is not None else output.size if stopped is None else stopped - start

    def _count(self, start: int, made: np.ndarray) -> None:
        """Queries ``start ..`` with the replay's answers ``made`` in the members' counts."""
        setting, counts = self.setting, self.counts
        assert counts is not None
        if setting.participation is None:
            counts.add(setting.sensitivities, made != 0)
        elif made.size:  # vanishing: the teachers taking part, at k / |S_q|
            taking = setting.participation(start, made.size)
            counts.add(taking.shape[1] / taking.sum(axis=1), made != 0, taking)

    def any_run_epsilons(self, requested: int) -> np.ndarray | None:
        """Each group's data-independent epsilon with all ``requested`` queries selected and
        answered at its sensitivity (math:independent, math:screening's curve where set; composed
        as ``analysis.steps.data_independent_curve``): a bound whatever a run answers and wherever
        it halts (math:costs).

        Returns:
          ``(groups,)`` epsilons, :class:`IndependentCounts`' with every query counted; None for
          vanishing (its sensitivity varies by query).
        """
        if self.setting.participation is not None:
            return None
        counts = IndependentCounts(self.setting.independent_curves, self.counted,
                                   groups=self.setting.sensitivities.size)
        counts.add(self.setting.sensitivities, np.ones(requested, dtype=bool))
        return counts.epsilons()

    def totals(self, names: tuple) -> tuple[GroupTotals, np.ndarray, np.ndarray]:
        """The group totals, and each group's data-independent epsilons at the stop and the end."""
        sensitivities = self.setting.sensitivities
        totals = self.stops.totals(names, sensitivities)
        if self.counts is None:
            return totals, totals.epsilon, totals.final_epsilon
        final = self.counts.epsilons()
        return totals, final if self.spent_at_stop is None else self.spent_at_stop, final

    def report(self, parameters: GroupParameters, bounds: np.ndarray | None = None
               ) -> tuple[GroupTotals, tuple, dict]:
        """The group totals, each group's summary row and the uniform run's; ``bounds``: each
        group's bound for any run (:meth:`any_run_epsilons`; None: none). Figures print in order,
        data-dependent <= data-independent <= bound for any run (summed in another order, a bound
        left below by rounding is raised to it, as a plain run's)."""
        groups, spent, final = self.totals(parameters.names)
        spent, final = (np.maximum(spent, groups.epsilon),
                        np.maximum(final, groups.final_epsilon))
        worst = None if bounds is None else np.maximum(bounds, final)

        def finite(value: float) -> float | None:  # None where nothing was spent yet
            return float(value) if np.isfinite(value) else None

        return groups, tuple(
            {**row, "sensitivity": finite(parameters.sensitivity[g]),
             "epsilon": float(groups.epsilon[g]), "order": finite(groups.order[g]),
             "exhausted_at": groups.exhausted_at[g],
             "epsilon_if_continued": float(groups.final_epsilon[g]),
             "order_if_continued": finite(groups.final_order[g]),
             "epsilon_data_independent": float(spent[g]),
             "epsilon_data_independent_if_continued": float(final[g]),
             "epsilon_data_independent_worst": None if worst is None else float(worst[g])}
            for g, row in enumerate(parameters.as_rows())), {
            "budget": float(np.min(parameters.budgets)),
            "labels_released": groups.baseline_labels, "stopped_at": groups.baseline_stopped_at}


def sum_ceilings(setting: GroupSetting, rule: Conversion, log_q: np.ndarray,
                 log_pr: np.ndarray, charge: np.ndarray, *, independent: bool = False,
                 budgets: np.ndarray | None = None, map: Mapper = map
                 ) -> dict[float, float]:
    """Per sensitivity (each group's; with ``budgets``, 1 for the uniform run), a ceiling on every
    epsilon read from its running sums (math:conversion, ``live_orders``): the sums only grow, so
    each figure is at most the converted total at any order, taken exactly at the order
    ``SAMPLE_ROWS`` evenly spaced queries put least and its two neighbours (``epsilon_ceiling``);
    the ``budgets`` compared with (the smallest for the uniform run) are added. Arguments as
    :meth:`GroupRun.add` takes them for the whole run; ``map``: a sensitivity per task."""
    distinct = sorted({float(d) for d in setting.sensitivities if d > 0.0}
                      | (set() if budgets is None else {1.0}))
    sensitivities = np.array(distinct)
    count = log_q.size
    selection = log_pr if setting.sigma_threshold is not None else None
    curves = setting.curves(independent)
    factors = curves.factors(log_q, sensitivities=sensitivities, charge=charge,
                             log_pr_answered=selection)
    every = slice(None, None, max(1, count // SAMPLE_ROWS))
    sampled = curves.factors(log_q[every], sensitivities=sensitivities, charge=charge[every],
                             log_pr_answered=None if selection is None else selection[every])

    def ceiling_of(v: int) -> float:
        d = distinct[v]
        rows = np.empty((sampled.shape[1], rule.orders.size))
        sampled.curves(v).rows(0, rows.shape[0], rows)
        guess = int(np.argmin(rows.sum(axis=0) * (count / rows.shape[0]) + rule.offset))
        columns = np.arange(max(0, guess - 1), min(rule.orders.size, guess + 2))
        total = running_total(factors.curves(v).at(columns), count, np.zeros(columns.size))
        ceiling = epsilon_ceiling(total, count + 1, rule.at_orders(columns))
        if budgets is not None:
            compared = budgets[setting.sensitivities == d]
            if d == 1.0:
                compared = np.append(compared, budgets.min())
            ceiling = max(ceiling, float(np.max(compared, initial=0.0)))
        return ceiling

    found = zip(distinct, map(ceiling_of, range(len(distinct))), strict=True)
    return {d: ceiling for d, ceiling in found if np.isfinite(ceiling)}
