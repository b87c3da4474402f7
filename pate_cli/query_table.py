"""cli:per-query's per-query table (scripts parse its columns: extend, never rename), as a
DataFrame piece (:func:`per_query_frame`) or columns in memory (:class:`QueryTable`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .decisions import INTERACTIVE_NAMES, codes_of
from .numerics import raised_rdp, whole

if TYPE_CHECKING:
    import pandas as pd


PER_QUERY_COLUMNS = (
    "query", "plurality", "plurality_class", "answered", "label", "log_q", "log_pr_answered",
    "rdp_selection", "rdp_answer", "epsilon", "epsilon_cumulative", "order_cumulative",
)
_ATTRIBUTE = {"epsilon": "epsilon_query"}  # a column's QueryTable name, where it differs


def per_query_frame(result, *, integral: bool | None = None,
                    raised: bool = False) -> pd.DataFrame:
    """The per-query table of cli:per-query; ``plurality`` as integers if every value is one,
    or as ``integral`` says (a piece of a longer table follows the whole table's choice); RDP
    columns raised as every RDP value handed on (``numerics.raised_rdp``) unless ``raised``."""
    import pandas as pd
    answered = (result.answered if result.accounting == "expected"
                else result.answered.astype(np.int64))
    label = pd.arrays.IntegerArray(np.maximum(result.label, 0).astype(np.int64), result.label < 0)
    index = np.arange(result.queries) if result.query_index is None else result.query_index
    plurality = result.plurality
    if integral is None:
        integral = whole(plurality)
    frame = pd.DataFrame({
        "query": index, "plurality": plurality.astype(np.int64) if integral else plurality,
        "plurality_class": result.plurality_class, "answered": answered, "label": label,
        **{column: getattr(result, _ATTRIBUTE.get(column, column))
           for column in PER_QUERY_COLUMNS[5:]}})
    for column in () if raised else ("rdp_selection", "rdp_answer"):
        frame[column] = raised_rdp(frame[column].to_numpy())
    if result.outcome is not None:
        frame["outcome"] = np.asarray(INTERACTIVE_NAMES)[result.outcome.astype(np.int64)]
    for name, values in result.columns.items():
        frame[name] = values
    return frame


@dataclass(frozen=True)
class QueryTable:
    """Per-query columns in memory as :func:`per_query_frame` writes them, but ``label`` -1
    where none was output and ``outcome`` codes; ``columns``: extra ones (SVT's distance)."""

    plurality: np.ndarray
    plurality_class: np.ndarray
    answered: np.ndarray
    label: np.ndarray
    log_q: np.ndarray
    log_pr_answered: np.ndarray
    epsilon_query: np.ndarray
    epsilon_cumulative: np.ndarray
    order_cumulative: np.ndarray
    rdp_selection: np.ndarray
    rdp_answer: np.ndarray
    outcome: np.ndarray | None = None
    columns: Mapping[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def of_frame(cls, frame: pd.DataFrame) -> QueryTable:
        """The inverse of :func:`per_query_frame` (``label`` <NA> -> -1, names -> codes)."""
        floats = {_ATTRIBUTE.get(name, name): frame[name].to_numpy(np.float64)
                  for name in ("plurality", "answered", *PER_QUERY_COLUMNS[5:])}
        outcome = (codes_of(frame["outcome"].to_numpy(dtype=str), INTERACTIVE_NAMES)
                   if "outcome" in frame else None)
        extra = [name for name in frame.columns
                 if name not in (*PER_QUERY_COLUMNS, "outcome", "output")]
        return cls(plurality_class=frame["plurality_class"].to_numpy(np.int64),
                   label=frame["label"].to_numpy(np.int64, na_value=-1), outcome=outcome,
                   columns={name: frame[name].to_numpy() for name in extra}, **floats)
