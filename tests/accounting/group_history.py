"""The whole per-query history of an individualized run's group accounting, for the
tests: each group's cumulative epsilon after every query, composed a chunk at a time by
the package's ``GroupSums`` and ``GroupStops`` (math:individualized)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields

import numpy as np

from pate_cli.accounting.individualized import CostChunk, GroupStops, GroupSums, GroupTotals
from pate_cli.accounting.individualized.parameters import checked_budgets


@dataclass(frozen=True)
class GroupAccounting(GroupTotals):
    """:class:`GroupTotals` with the per-query histories.

    ``cumulative_epsilon``/``cumulative_order``: ``(queries, groups)``, the worst-off
    member's cumulative epsilon after each query and the order achieving it, over every
    analysed query (also past the stopping point, as the paper's figures track them); a
    member that has not yet taken part in any query has epsilon 0 (order NaN).
    ``baseline_epsilon``: the uniform run's cumulative epsilon per query.
    """

    cumulative_epsilon: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    cumulative_order: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    baseline_epsilon: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class AccountedGroups:
    """The groups of :func:`account_groups`: ``budgets`` (``eps_g``), ``member_groups``
    (each member's group; default: member g is group g, as ``group_costs`` builds them;
    for ``vanishing_costs`` the teachers' groups), ``names`` and ``sensitivities``."""

    budgets: np.ndarray
    member_groups: np.ndarray | None = None
    names: Iterable | None = None
    sensitivities: np.ndarray | None = None


def account_groups(chunks: CostChunk | Iterable[CostChunk], groups: AccountedGroups, *,
                   orders: np.ndarray, delta: float, conversion: str = "classic",
                   map=map) -> GroupAccounting:
    """Compose per-query costs per group, convert, and apply the stopping rule.

    ``chunks``: a :class:`CostChunk` or an iterable of them, in query order (the numbers
    do not depend on how the queries are split).
    Each member's RDP is summed order by order in query order (math:conversion) and
    converted after every query at ``delta`` with ``conversion``; a group reports its
    worst-off member (the largest epsilon, math:individualized). Summation and conversion are
    the composition kernel's, as in ``pate_cli.analysis``, so a one-group run at
    sensitivity 1 reproduces its ``epsilon_cumulative`` and ``order_cumulative`` exactly.
    :class:`GroupSums` and :class:`GroupStops` do the same a chunk at a time, keeping no
    history.

    ``map`` runs independent evaluations and running sums (see the module doc); the
    numbers do not depend on it.
    """
    budgets = checked_budgets(groups.budgets)
    names, sensitivities = group_labels(budgets.size, groups.names, groups.sensitivities)
    if isinstance(chunks, CostChunk):
        chunks = (chunks,)
    sums = GroupSums(groups=budgets.size, orders=orders, delta=delta, conversion=conversion,
                     member_groups=groups.member_groups)
    stops = GroupStops(budgets)
    parts: dict[str, list[np.ndarray]] = {"eps": [], "order": [], "base": []}
    for chunk in chunks:
        eps, order, base = sums.add(chunk, map=map)
        stops.add(eps, order, base, chunk.answered, chunk.baseline_answered)
        parts["eps"].append(eps)
        parts["order"].append(order)
        parts["base"].append(base)
    totals = stops.totals(names, sensitivities)
    return GroupAccounting(
        **{item.name: getattr(totals, item.name) for item in fields(GroupTotals)},
        cumulative_epsilon=(np.concatenate(parts["eps"]) if parts["eps"]
                            else np.zeros((0, budgets.size))),
        cumulative_order=(np.concatenate(parts["order"]) if parts["order"]
                          else np.zeros((0, budgets.size))),
        baseline_epsilon=np.concatenate(parts["base"]) if parts["base"] else np.zeros(0))


def group_labels(groups: int, names: Iterable | None, sensitivities: np.ndarray | None
                 ) -> tuple[tuple, np.ndarray]:
    """The groups' names (``group0``... by default) and sensitivities (NaN by default),
    checked against the number of groups."""
    if names is None:
        names = tuple(f"group{g}" for g in range(groups))
    names = tuple(str(n) for n in names)
    if len(names) != groups:
        raise ValueError(f"{len(names)} names for {groups} groups")
    if sensitivities is None:
        sensitivities = np.full(groups, np.nan)
    sensitivities = np.asarray(sensitivities, dtype=np.float64).reshape(-1)
    if sensitivities.size != groups:
        raise ValueError(f"{sensitivities.size} sensitivities for {groups} groups")
    return names, sensitivities


