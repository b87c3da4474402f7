"""What one analysis produced (``AnalysisResult``) and what a sweep row averages
(``ReplayTotals``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .serialize import per_query_frame, summary_dict


@dataclass
class AnalysisResult:
    """Everything one analysis produced: per-query arrays (file order) and totals.

    ``query_index`` is the file row of each analysed query (``--query-indices`` may pick
    and order rows). ``answered`` per query is the charge weight of the answer step: 0/1
    in replay and data-independent accounting (what was released), ``pr_answered`` in expected
    accounting. ``rdp_selection``/``rdp_answer`` are at the reported ``order``, the
    answer column already multiplied by that weight, so each column sums to the
    corresponding entry of ``rdp_at_order``. ``.summary`` and ``.per_query`` give the
    dict / DataFrame forms (see ``pate_cli.report``).
    """

    mechanism: object
    accounting: str
    conversion: str
    delta: float
    seed: int
    orders: np.ndarray
    teachers: float
    classes: int
    budget_limit: float | None
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
    rdp_total: np.ndarray
    epsilon: float
    order: float
    epsilon_data_independent: float
    order_data_independent: float
    answered_total: float
    rdp_at_order: dict
    label_accuracy: float | None
    budget_stopped_at: int | None
    warnings: list = field(default_factory=list)
    source: object = None
    query_index: np.ndarray | None = None
    outcome: np.ndarray | None = None
    accuracy_by_outcome: dict | None = None
    initial_rdp: np.ndarray | None = None
    extra: dict = field(default_factory=dict)

    @property
    def queries(self) -> int:
        return int(self.plurality.shape[0])

    @property
    def summary(self) -> dict:
        return summary_dict(self)

    @property
    def per_query(self):
        return per_query_frame(self)


@dataclass(frozen=True)
class ReplayTotals:
    """The end-of-run figures of one seeded replay (what a sweep row averages)."""

    seed: int
    answered: float
    epsilon: float
    order: float
    epsilon_data_independent: float
    label_accuracy: float | None
    labels_output: int
