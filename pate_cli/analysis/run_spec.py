"""The frozen specification of one analysis: every option of ``pate-analyze`` as a field.

``analyze(votes, mechanism, **options)`` turns its keywords into a ``RunSpec``
(``RunSpec.of``), checks it against the one table of option rules
(``option_rules.check_options``) before reading any input, and runs from it; the command
line passes its options by name, so the API and the CLI share the setting, its defaults
and its refusals. Mechanism parameters (``sigma=40``, ``confidence=0.9``...) are kept
apart in ``parameters``, unset ones absent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from ..orders import AUTO, default_orders, validate_orders
from .setting import DEFAULT_CHUNK, checked_queries

MECHANISM_PARAMETERS = ("sigma", "threshold", "sigma_threshold", "laplace_scale", "confidence",
                        "svt_scale", "svt_cutoff", "svt_threshold", "target_epsilon", "eta",
                        "screening")


@dataclass(frozen=True, eq=False)
class RunSpec:
    """One analysis's setting (``analyze``'s keywords; see its docstring for each)."""

    mechanism: Any = "confident"
    parameters: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    predictions: Any = None
    classes: int | None = None
    labels: Any = None
    teachers: float | None = None
    queries: int | None = None
    student: Any = None
    query_indices: Any = None
    rounds: Any = None
    add_rdp: Any = None
    individualized: str | None = None
    groups: Any = None
    teacher_groups: Any = None
    precision: int = 2
    weights: str = "budget"
    power: float = 2.0
    smooth_sensitivity: bool = False
    ss_every: int | None = None
    accounting: str = "replay"
    delta: float = 1e-5
    orders: Any = None
    order: float | None = None
    conversion: str = "classic"
    seed: int = 0
    budget: float | None = None
    chunk_size: int | None = DEFAULT_CHUNK
    index_col: int | None = None
    tuning: str | None = None
    decisions: Any = None
    progress: Callable[[int, int], object] | None = None
    q_bound: str = "union"
    per_query: bool | str = True
    workers: int | None = None
    executor: Any = None
    multilabel: str | None = None
    halt_at: str = "query"
    sampling: str | None = None
    vote_change: str | None = None
    predictions_layout: str = "queries-first"

    @classmethod
    def of(cls, mechanism: Any = "confident", **options: Any) -> RunSpec:
        """The spec of ``analyze(votes, mechanism, **options)``; ``TypeError`` for a
        keyword that is neither an option nor a mechanism parameter."""
        known = {item.name for item in fields(cls)} - {"mechanism", "parameters"}
        unknown = sorted(set(options) - known - set(MECHANISM_PARAMETERS))
        if unknown:
            raise TypeError(f"analyze() got unexpected keyword arguments: {', '.join(unknown)}")
        parameters = {name: options.pop(name) for name in MECHANISM_PARAMETERS
                      if name in options}
        spec = cls(mechanism=mechanism, parameters=MappingProxyType(parameters), **options)
        return replace(spec, queries=checked_queries(spec.queries))

    @property
    def name(self) -> str:
        """The mechanism's name, lower case."""
        return (self.mechanism.lower() if isinstance(self.mechanism, str)
                else self.mechanism.name)

    def parameter(self, name: str):
        """A mechanism parameter, None when unset."""
        return self.parameters.get(name)

    @property
    def auto_orders(self) -> bool:
        """``orders="auto"`` (and no fixed ``order``)."""
        return (isinstance(self.orders, str) and self.orders.strip().lower() == AUTO
                and self.order is None)

    def grid(self) -> np.ndarray:
        """The orders the run evaluates: ``order`` alone, the default grid, or ``orders``."""
        if self.order is not None:
            return np.array([float(self.order)])
        return default_orders() if self.orders is None else validate_orders(self.orders)

    def options(self) -> dict[str, Any]:
        """The keywords that give this spec back (``analyze(votes, **spec.options())``)."""
        given = {item.name: getattr(self, item.name) for item in fields(self)
                 if item.name != "parameters"}
        return {**given, **self.parameters}
