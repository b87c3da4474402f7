"""Each query's own epsilon, once per distinct statistic pair of a file (math:conversion and
math:costs): a query's own curve ``selection(s) + w * answer(a)`` converted depends on
``(a, s, w)`` only, and a file's pairs are usually far fewer than its queries, so
:class:`OwnEpsilons` converts each pair once, by the per-query path's
``composition.query_epsilons``: a looked-up figure has that path's bits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .composition import StepRows, query_epsilons
from .conversion import Conversion
from .grouped import CurveFunction, GroupedCounts

# Pairs converted at once (a block's rows: PAIR_BLOCK x orders floats, about 2.4 MB).
PAIR_BLOCK = 1024
# Orders, spread over the grid, at which every pair is converted first.
PROBES = 13


@dataclass(frozen=True, eq=False)
class OwnEpsilons:
    """The own epsilon of every distinct ``(answer, selection)`` pair of a file, sorted as
    ``GroupedCounts``: expected accounting, one per pair (weight ``exp(selection)``; a
    second, the raised charge's, with raised queries), else two (weight 0 and 1)."""

    answer_keys: np.ndarray      # distinct answer statistics, ascending
    selection_keys: np.ndarray   # distinct selection statistics, ascending
    pair_keys: np.ndarray        # answer rank * len(selection_keys) + selection rank
    epsilons: np.ndarray         # (pairs,) or (pairs, 2): weight 0 and 1, or plain and raised
    expected: bool

    @classmethod
    def of(cls, counts: GroupedCounts, *, selection_rdp: CurveFunction | None,
           answer_rdp: CurveFunction, orders: np.ndarray, conversion: Conversion,
           expected: Callable | bool, map: Callable = map) -> OwnEpsilons:
        """Convert each pair of ``counts`` (``map``, ordered, over blocks of ``PAIR_BLOCK``;
        the figures do not depend on it). ``expected``: False, True, or the threshold
        step's ``raised_charge`` (with raised queries)."""
        orders = np.asarray(orders, dtype=np.float64)
        raise_by = expected if callable(expected) and counts.raised is not None else None
        raised = counts.raised
        answer_keys, answer_rank = np.unique(counts.answer, return_inverse=True)
        selection_keys, selection_rank = np.unique(counts.selection, return_inverse=True)
        pair_keys = (answer_rank.reshape(-1).astype(np.int64) * selection_keys.size
                     + selection_rank.reshape(-1))
        selection_curves = (np.zeros((selection_keys.size, orders.size))
                            if selection_rdp is None
                            else np.asarray(selection_rdp(selection_keys, orders)))

        probes = np.unique(np.linspace(0, orders.size - 1, PROBES).round().astype(np.intp))

        def block(lo: int) -> np.ndarray:
            hi = min(counts.size, lo + PAIR_BLOCK)
            keys, rows = np.unique(counts.answer[lo:hi], return_inverse=True)
            selected = selection_rank.reshape(-1)[lo:hi]
            weights = ([np.exp(counts.selection[lo:hi])] if expected
                       else [np.zeros(hi - lo), np.ones(hi - lo)])
            if raise_by is not None and raised is not None:
                weights.append(np.where(raised[lo:hi] > 0,
                                        raise_by(counts.selection[lo:hi]), weights[0]))

            def converted(columns: np.ndarray) -> np.ndarray:
                """Each pair's epsilon over the orders ``columns``, per weight."""
                curves = np.asarray(answer_rdp(keys, orders[columns]))
                selection_part = np.ascontiguousarray(selection_curves[:, columns])
                part = conversion.at_orders(columns)
                return np.stack([query_epsilons(
                    StepRows(selection_part, selected, curves, rows.reshape(-1), weight),
                    hi - lo, part) for weight in weights], axis=-1)

            figures = converted(probes)
            rest = _reachable(selection_curves, selected, figures.max(axis=1), conversion)
            rest[probes] = False
            if rest.any():
                np.minimum(figures, converted(np.flatnonzero(rest)), out=figures)
            return figures

        parts = list(map(block, range(0, counts.size, PAIR_BLOCK)))
        width = 1 if expected and raise_by is None else 2
        epsilons = (np.concatenate(parts) if parts else np.empty((0, width)))
        return cls(answer_keys, selection_keys, pair_keys,
                   epsilons[:, 0] if width == 1 else epsilons, bool(expected))

    def lookup(self, answer: np.ndarray, selection: np.ndarray,
               answered: np.ndarray | None = None,
               raised: np.ndarray | None = None) -> np.ndarray | None:
        """The own epsilons of queries ``answer``, ``selection`` (and ``answered``, or
        under expected accounting ``raised``); None if a pair is not in the table."""
        answer = np.asarray(answer, dtype=np.float64) + 0.0   # -0.0 is 0.0, as in the table
        selection = np.asarray(selection, dtype=np.float64) + 0.0
        if answer.size == 0:
            return np.empty(0)
        if self.pair_keys.size == 0:
            return None
        answer_rank = _ranks(self.answer_keys, answer)
        selection_rank = _ranks(self.selection_keys, selection)
        if answer_rank is None or selection_rank is None:
            return None
        where = _ranks(self.pair_keys,
                       answer_rank.astype(np.int64) * self.selection_keys.size + selection_rank)
        if where is None:
            return None
        if self.expected and self.epsilons.ndim == 1:
            return None if raised is not None else self.epsilons[where]
        column = raised if self.expected else answered
        column = np.zeros(where.size, np.intp) if column is None else np.asarray(
            column, dtype=bool).astype(np.intp)
        return self.epsilons[where, column]


def step_epsilons(costs: StepRows, conversion: Conversion) -> np.ndarray:
    """Each query's own curve of ``costs`` converted (``composition.query_epsilons``, bit
    for bit); those whose answer step weighs 0 (not answered) once per distinct selection
    curve: their rows are that curve (``0 * a + s = s`` for the finite answer curves)."""
    idle = costs.weight == 0.0
    if not idle.any() or not np.all(np.isfinite(costs.answer)):
        return query_epsilons(costs, costs.count, conversion)
    figures, busy = np.empty(costs.count), np.flatnonzero(~idle)
    used, where = np.unique(costs.selection_index[idle], return_inverse=True)
    figures[idle] = conversion.epsilon(costs.selection[used])[0][where.reshape(-1)]
    figures[busy] = query_epsilons(StepRows(
        costs.selection, costs.selection_index[busy], costs.answer, costs.answer_index[busy],
        costs.weight[busy]), busy.size, conversion)
    return figures


def probed_epsilons(costs_at: Callable[[np.ndarray], StepRows],
                    selection: tuple[np.ndarray, np.ndarray], conversion: Conversion
                    ) -> np.ndarray:
    """:func:`step_epsilons` bit for bit, from the curves at ``PROBES`` orders, then only at the
    orders where some query may have its minimum (``_reachable``). ``costs_at(columns)``: the
    curves at those grid columns; ``selection``: the distinct selection curves at every order
    and each query's index."""
    size = conversion.offset.size
    probes = np.unique(np.linspace(0, size - 1, PROBES).round().astype(np.intp))
    figures = step_epsilons(costs_at(probes), conversion.at_orders(probes))
    rest = _reachable(*selection, figures, conversion)
    rest[probes] = False
    if rest.any():
        columns = np.flatnonzero(rest)
        np.minimum(figures, step_epsilons(costs_at(columns), conversion.at_orders(columns)),
                   out=figures)
    return figures


def _ranks(keys: np.ndarray, values: np.ndarray) -> np.ndarray | None:
    """The index in sorted ``keys`` of each of ``values``, or None if one is missing
    (distinct values searched in ascending order: several times faster)."""
    distinct, back = np.unique(values, return_inverse=True)
    where = np.searchsorted(keys, distinct)
    if where[-1] >= keys.size or not np.array_equal(keys[where], distinct):
        return None
    return where[back.reshape(-1)]


def _reachable(selection_curves: np.ndarray, selected: np.ndarray, ceilings: np.ndarray,
               conversion: Conversion) -> np.ndarray:
    """The orders at which some pair of a block may hold its minimum: a candidate ``w * answer +
    selection + offset`` is at least ``selection + offset`` (non-negative curves, monotone
    rounding), so orders where the selection curve is ``Conversion.beyond`` the pairs' epsilon
    at the probes (``ceilings``; per selection statistic, its pairs' largest) are out."""
    ranks, where = np.unique(selected, return_inverse=True)
    highest = np.full(ranks.size, -np.inf)
    np.maximum.at(highest, where.reshape(-1), ceilings)
    return ~np.all(conversion.beyond(selection_curves[ranks], highest[:, None]), axis=0)
