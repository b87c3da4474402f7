"""Individualized PATE: per-query RDP curves at each sensitivity ``D`` (math:individualized,
the kernels of math:independent, math:gnmax and math:threshold, the charge of math:costs;
paper Theorem 1, Corollary 1)::

    rdp_g(alpha) = rdp_sel(log q_sel, sqrt(2) sigma1 / D) + charge * rdp_gnmax(log q, sigma / D)

``map`` (default the builtin) may be a thread pool's: each task writes only its own curve,
so the numbers do not depend on it."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ...orders import validate_orders
from ..gnmax import rdp_gnmax, rdp_gnmax_data_independent
from ..screening import rdp_screening
from ..threshold import rdp_threshold, rdp_threshold_data_independent

# A ``map``-like callable: the builtin, or an executor's ``map``.
Mapper = Callable[..., Iterable[Any]]

# Largest run-wide table of one sensitivity's selection curves (32 MB).
_SELECTION_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class CurveSetting:
    """What every per-query curve of a run shares (see :func:`rdp_individual`)."""

    sigma: float
    orders: np.ndarray
    sigma_threshold: float | None = None
    data_independent: bool = False
    screening: tuple | None = None  # (T, kind, low, high): math:screening

    def factors(self, log_q: np.ndarray, *, sensitivities: np.ndarray,
                charge: float | np.ndarray = 1.0,
                log_pr_answered: np.ndarray | None = None) -> CurveFactors:
        """The curves of :func:`rdp_individual` with these arguments, not yet evaluated.

        Returns:
          The :class:`CurveFactors` (``ValueError`` from it for inconsistent arguments).
        """
        return CurveFactors(**vars(self), log_q=log_q, sensitivities=sensitivities,
                            charge=charge, log_pr_answered=log_pr_answered)


def rdp_individual(log_q: np.ndarray, setting: CurveSetting, *, sensitivities: np.ndarray,
                   log_pr_answered: np.ndarray | None = None,
                   charge: float | np.ndarray = 1.0, map: Mapper = map) -> np.ndarray:
    """Per-query RDP ``(len(sensitivities), queries, orders)`` of one data point for each
    sensitivity ``D``, 0 at ``D = 0`` (math:individualized).

    Args:
      log_q: ``(queries,)``, the real mechanism's.
      log_pr_answered: ``(queries,)``, the real mechanism's (GNMax: none, nor
        ``setting.sigma_threshold``).
      setting: ``screening`` ``(T, kind, low, high)`` of ``analysis.steps.screening_counts``.
      charge: a scalar or ``(queries,)``: 1 for GNMax, the replay's 0/1 ``answered`` or
        ``pr_answered`` (math:costs).
    """
    return setting.factors(log_q, sensitivities=sensitivities, charge=charge,
                           log_pr_answered=log_pr_answered).evaluate(map=map)


@dataclass(frozen=True, eq=False, kw_only=True)
class CurveFactors(CurveSetting):
    """The curves of :func:`rdp_individual` (its arguments), not yet evaluated: each formula once
    per distinct statistic and ``D``, rows gathered from those; ``groups.GroupSums`` evaluates
    them a sensitivity at a time in cache-sized blocks, the numbers of :meth:`evaluate`."""

    log_q: np.ndarray
    sensitivities: np.ndarray
    charge: float | np.ndarray = 1.0
    log_pr_answered: np.ndarray | None = None

    def __post_init__(self) -> None:
        orders = validate_orders(self.orders)
        log_q = np.asarray(self.log_q, dtype=np.float64)
        if log_q.ndim != 1:
            raise ValueError(f"log_q must be 1-D (one value per query), got shape "
                             f"{log_q.shape}")
        sensitivities = np.atleast_1d(np.asarray(self.sensitivities, dtype=np.float64))
        if sensitivities.ndim != 1 or not np.all(np.isfinite(sensitivities)
                                                 & (sensitivities >= 0)):
            raise ValueError("sensitivities must be a 1-D array of non-negative numbers")
        selection = self.sigma_threshold is not None
        if not self.data_independent and selection != (self.log_pr_answered is not None):
            raise ValueError("give both log_pr_answered and sigma_threshold (Confident-GNMax) "
                             "or neither (GNMax)")
        queries = log_q.shape[0]
        charge = np.broadcast_to(np.asarray(self.charge, dtype=np.float64), (queries,))
        if not np.all(np.isfinite(charge) & (charge >= 0)):
            raise ValueError("charge must be non-negative")
        log_pr = None
        if selection and not self.data_independent:
            log_pr = np.asarray(self.log_pr_answered, dtype=np.float64).reshape(-1)
            if log_pr.shape != (queries,):
                raise ValueError("log_pr_answered must have one value per query")
        for name, value in (("orders", orders), ("log_q", log_q),
                            ("sensitivities", sensitivities), ("charge", charge),
                            ("log_pr_answered", log_pr),
                            ("data_independent", bool(self.data_independent))):
            object.__setattr__(self, name, value)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.sensitivities.size, self.log_q.shape[0], self.orders.size)

    @cached_property
    def _selection_values(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct ``log pr_answered`` values and, per query, which one (at most teachers + 1:
        the statistic is a function of ``round(max v)``)."""
        values, index = np.unique(self.log_pr_answered, return_inverse=True)
        return values, index.reshape(-1)

    def curves(self, variant: int) -> _Curves:
        """The distinct curves of one variant, from which its rows are gathered."""
        return _Curves(self, float(self.sensitivities[variant]))

    def evaluate(self, *, map: Mapper = map) -> np.ndarray:
        """All curves, ``(variants, queries, orders)``: one evaluation per distinct D (equal D: a
        copy) through ``map``, each writing its own slice (numpy releases the GIL): the same for
        any number of threads."""
        out = np.zeros(self.shape)
        queries = self.shape[1]

        def fill(v: int) -> None:
            self.curves(v).rows(0, queries, out[v])

        first_of = first_of_each_sensitivity(self.sensitivities)
        distinct = sorted(v for v in set(first_of) if self.sensitivities[v] > 0)
        for _ in map(fill, distinct):
            pass
        for v, first in enumerate(first_of):
            if first != v and self.sensitivities[v] > 0:
                out[v] = out[first]
        return out


def first_of_each_sensitivity(sensitivities: np.ndarray) -> list[int]:
    """Per variant, the first variant with the same sensitivity (equal curves)."""
    first_of: dict[float, int] = {}
    return [first_of.setdefault(float(d), v) for v, d in enumerate(sensitivities)]


class _Curves:
    """One sensitivity's curves at some of the grid's orders (``columns``: every order, or those
    of :meth:`at`), a ``composition.RowSource``: ``charge * answer + selection``, answer curves
    once per distinct ``log q`` of the rows asked for; selection curves once for the run's
    distinct ``log pr_answered`` (at most teachers + 1) up to ``_SELECTION_ELEMENTS`` values
    (``run_wide``: shared by every :meth:`at`), else per block asked for; data-independent
    ones sliced. Memory bounded by what is asked."""

    def __init__(self, factors: CurveFactors, sensitivity: float) -> None:
        self.factors, self.sensitivity = factors, sensitivity
        self.zero = sensitivity == 0.0
        self.columns, self.orders = np.arange(factors.orders.size), factors.orders
        self.charge = factors.charge
        self.answer = self.selection = None  # the data-independent curves
        self.shared: dict = {}  # with every :meth:`at`: the run-wide table, screening's curve
        self.table: tuple | None = None  # the run-wide selection curves here, their positions
        self.pair: list | None = None  # (lo, hi), answer and selection rows of a block
        self.run_wide = False
        if self.zero:
            return
        if factors.data_independent:
            self.answer = rdp_gnmax_data_independent(sigma=factors.sigma / sensitivity,
                                                     orders=factors.orders)
            if factors.sigma_threshold is not None:
                self.selection = self.independent_selection()
            return
        self.run_wide = factors.log_pr_answered is not None and (
            factors._selection_values[0].size * factors.orders.size <= _SELECTION_ELEMENTS)

    def independent_selection(self) -> np.ndarray:
        """The selection's data-independent curve here (math:independent, or math:screening)."""
        factors, d = self.factors, self.sensitivity
        if "independent" not in self.shared:
            self.shared["independent"] = rdp_threshold_data_independent(
                sigma_threshold=factors.sigma_threshold / d, orders=factors.orders
            ) if factors.screening is None else rdp_screening(
                threshold=factors.screening[0], sigma_threshold=factors.sigma_threshold,
                low=factors.screening[2], high=factors.screening[3], sensitivity=d,
                orders=factors.orders, integer=factors.screening[1] == "integer"
                and float(d).is_integer())
        return self.shared["independent"]

    def at(self, columns: np.ndarray) -> _Curves:
        """The rows at the grid's orders ``columns`` only (an entry depends on its own
        statistic and order alone: the bits of :meth:`rows`' at that order)."""
        other = copy.copy(self)
        other.columns, other.orders = columns, self.factors.orders[columns]
        other.table = other.pair = None
        return other

    def charged(self, charge: float | np.ndarray) -> _Curves:
        """These rows with the answer step charged ``charge`` instead (``(queries,)``): the
        two share each block's curves, formed by the one asked first."""
        other = copy.copy(self)
        other.charge = np.broadcast_to(np.asarray(charge, dtype=np.float64), self.charge.shape)
        self.pair = other.pair = [None, None, None]
        return other

    def rows(self, lo: int, hi: int, out: np.ndarray,
             scratch: np.ndarray | None = None) -> None:
        """Queries ``lo .. hi-1`` into ``out`` ``(hi - lo, orders)`` (``scratch``, same shape,
        saves a temporary)."""
        factors, pair, columns = self.factors, self.pair, self.columns
        if self.zero:
            out.fill(0.0)
            return
        if factors.data_independent:
            np.multiply(self.charge[lo:hi, None], self.answer[None, columns], out=out)
            if self.selection is not None:
                out += self.selection[columns]
            return
        if pair is not None and pair[0] == (lo, hi):  # the block the other one formed
            np.multiply(pair[1], self.charge[lo:hi, None], out=out)
            if pair[2] is not None:
                out += pair[2]
            return
        values, index = np.unique(factors.log_q[lo:hi], return_inverse=True)
        answer = rdp_gnmax(values, sigma=factors.sigma / self.sensitivity, orders=self.orders)
        np.take(answer, index.reshape(-1), axis=0, out=out)
        answer = None if pair is None else out.copy()
        out *= self.charge[lo:hi, None]
        selection = None
        if self.run_wide:  # a run of columns gathered at once, else whole rows
            table, positions = self.table or self._run_wide_table()
            which = factors._selection_values[1][lo:hi]
            selection = (table[which, positions] if isinstance(positions, slice)
                         else table[which][:, positions])
        elif factors.log_pr_answered is not None:
            p_values, which = np.unique(factors.log_pr_answered[lo:hi], return_inverse=True)
            selection = np.take(self._selection(p_values), which.reshape(-1), axis=0,
                                out=scratch if pair is None else None)
        if selection is not None:
            out += selection
        if pair is not None:
            pair[:] = (lo, hi), answer, selection

    def _run_wide_table(self) -> tuple:
        """The run's selection curves at these orders (formed at the first columns not among
        those formed before) and where these columns are in them (a run of columns: a slice)."""
        known = self.shared.get("table")
        if known is None or not np.isin(self.columns, known[0]).all():
            known = self.shared["table"] = (self.columns, self._selection(
                self.factors._selection_values[0]))
        positions = np.searchsorted(known[0], self.columns)
        self.table = (known[1], slice(positions[0], positions[-1] + 1) if positions.size
                      and positions[-1] - positions[0] == positions.size - 1 else positions)
        return self.table

    def _selection(self, values: np.ndarray) -> np.ndarray:
        """The selection curves of ``values`` at these orders (math:threshold), capped by
        math:screening's exact one (valid for every query)."""
        factors = self.factors
        selection = rdp_threshold(values, orders=self.orders,
                                  sigma_threshold=factors.sigma_threshold / self.sensitivity)
        if factors.screening is not None:
            np.minimum(selection, self.independent_selection()[self.columns], out=selection)
        return selection
