"""AnalysisResult -> the JSON summary dict and the per-query DataFrame of CLI.md, and back
from a DataFrame to per-query arrays (``QueryTable``).

The keys and columns follow ``CLI.md``: scripts parse them, so they may be extended but
never renamed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._version import __version__
from ..accounting.conversion import rdp_to_epsilon
from ..decisions import INTERACTIVE_NAMES, codes_of

if TYPE_CHECKING:
    import pandas as pd

if TYPE_CHECKING:
    from ..accounting.smooth_sensitivity import SmoothSensitivityResult

PER_QUERY_COLUMNS = (
    "query", "plurality", "plurality_class", "answered", "label", "log_q", "log_pr_answered",
    "rdp_selection", "rdp_answer", "epsilon", "epsilon_cumulative", "order_cumulative",
)


def summary_dict(result) -> dict:
    """The JSON summary of CLI.md (``--format json``), with provenance."""
    source = result.source
    expected = result.accounting == "expected"
    answered = result.answered_total if expected else int(round(result.answered_total))
    budget = None
    summary = {}
    if result.budget is not None:
        budget = {"limit": result.budget.limit, "halted_at": result.budget.halted_at,
                  "remaining": result.budget.remaining, "answered": answered}
        if result.budget.halt_at != "query":
            budget["halt_at"] = result.budget.halt_at
    summary.update({
        "tool": "pate-analyze",
        "version": __version__,
        "input": {
            "path": getattr(source, "path", None),
            "sha256": getattr(source, "sha256", None),
            "queries": int(getattr(source, "queries", result.queries)),
            "classes": result.classes,
            "teachers": plain_number(result.teachers),
        },
        "mechanism": result.mechanism.name,
        "params": {key: plain_number(value) for key, value in result.mechanism.params.items()},
        "accounting": result.accounting,
        "conversion": result.conversion,
        "delta": result.delta,
        "seed": result.seed,
        "orders": _orders_summary(result.orders),
        "queries": result.queries,
        "answered": answered,
        "epsilon": result.epsilon,
        "order": _finite_or_none(result.order),
        "epsilon_data_independent": result.epsilon_data_independent,
        "order_data_independent": _finite_or_none(result.order_data_independent),
        "epsilon_data_independent_worst": getattr(result, "epsilon_data_independent_worst",
                                                  None),
        "rdp_at_order": dict(result.rdp_at_order),
        "label_accuracy": result.label_accuracy,
        "labels_output": _labels_output(result),
        "budget": budget,
        "smooth_sensitivity": (None if result.smooth_sensitivity is None
                               else smooth_sensitivity_dict(result.smooth_sensitivity)),
        "svt": None if result.svt is None else plain_dict(asdict(result.svt)),
        "groups": None,
        "decisions": None if result.decisions is None else asdict(result.decisions),
        "warnings": list(result.warnings),
        "q_bound": result.q_bound,
        "epsilon_improved": epsilon_improved(result),
        "data_independent_method": result.data_independent_method,
        "epsilon_rdp": epsilon_rdp(result),
        "epsilon_method": epsilon_method(result),
        "sampling": sampling_summary(result.mechanism),
    })
    outcome_counts = result.counts.outcomes
    if outcome_counts is not None:
        summary["outcomes"] = {name: int(outcome_counts[code])
                               for code, name in enumerate(INTERACTIVE_NAMES)}
        summary["accuracy_by_outcome"] = result.accuracy_by_outcome
    if result.groups is not None:
        info = result.groups
        summary["groups"] = [plain_dict(row) for row in info.groups]
        summary["individualized"] = info.variant
        summary["stopped_at"] = info.stopped_at
        summary["labels_released"] = info.labels_released
        summary["baseline"] = plain_dict(info.baseline)
    if result.rounds is not None:
        summary["rounds"] = [plain_dict(asdict(entry)) for entry in result.rounds]
    if result.counts.reordered:
        summary["query_indices"] = True
    if result.added_rdp is not None:
        summary["add_rdp"] = asdict(result.added_rdp)
    summary["tuning"] = None if result.tuning is None else tuning_dict(result.tuning)
    summary["outputs"] = None if result.outputs is None else dict(result.outputs)
    # last, so that the CSV summary's earlier columns keep their places
    summary["multilabel"] = (None if result.multilabel is None
                             else plain_dict(asdict(result.multilabel)))
    return summary


def sampling_summary(mechanism) -> dict | None:
    """The JSON ``sampling`` object of CLI.md (None for a run without sampling;
    ``mechanisms.sampled``): the scheme, ``rate`` (``size / population`` without
    replacement), ``vote_change`` and the argmax's ``sensitivity`` (L2 for Gaussian
    answers, L1 for LNMax), the threshold's (1) for Confident."""
    sampling = getattr(mechanism, "sampling", None)
    if sampling is None:
        return None
    laplace = mechanism.name == "lnmax"
    return {"scheme": sampling.scheme, "rate": sampling.rate, "size": sampling.size,
            "population": sampling.population, "vote_change": sampling.vote_change,
            "sensitivity": sampling.laplace_sensitivity() if laplace
            else sampling.answer_sensitivity,
            "sensitivity_norm": "L1" if laplace else "L2",
            "threshold_sensitivity": 1.0 if mechanism.name == "confident" else None}


def _labels_output(result) -> int:
    if result.multilabel is not None:  # (query, label) pairs released
        return result.multilabel.labels_output
    return result.counts.labels_output


def tuning_dict(part) -> dict:
    """The JSON ``tuning`` object of CLI.md (``--tuning``, MATH.md s.12)."""
    return {"distribution": part.distribution, "mean": plain_number(part.mean),
            "shape": plain_number(part.shape), "epsilon_single": part.epsilon_single,
            "epsilon_tuned": part.epsilon_tuned, "order": plain_number(part.order)}


def epsilon_improved(result) -> float | None:
    """The improved conversion (MATH.md s.6) of the run's total RDP curve, whatever
    ``--conversion`` chose; None where the epsilon is not an RDP conversion (SVT-PATE's
    guarantee, individualized groups)."""
    if result.svt is not None or result.groups is not None or result.rdp_total is None:
        return None
    epsilon, _ = rdp_to_epsilon(result.rdp_total, orders=result.orders, delta=result.delta,
                                conversion="improved")
    if result.data_independent_method == "pld":  # the PLD figure is valid and smaller
        return min(float(epsilon), result.epsilon)
    return float(epsilon)


def epsilon_method(result) -> str:
    """Which accountant gave ``epsilon`` (CLI.md): ``pld`` (dp_accounting's
    privacy-loss-distribution accountant, ``data_independent_method`` ``pld``), ``pure``
    (a pure-DP bound no finite order attains: SVT-PATE's ``c eps0``) or ``rdp`` (an RDP
    curve converted at ``order``, MATH.md s.6)."""
    if result.data_independent_method == "pld":
        return "pld"
    if not math.isfinite(result.order):
        return "pure"
    return "rdp"


def epsilon_rdp(result) -> float | None:
    """The RDP conversion of the run's total curve (MATH.md s.6), at the run's
    conversion: ``epsilon`` itself unless the privacy-loss-distribution accountant gave a
    smaller data-independent figure (``data_independent_method`` ``pld``), where this is
    the figure the per-query table's ``epsilon_cumulative`` and ``order`` belong to; None
    where the epsilon is not an RDP conversion (SVT-PATE, individualized groups)."""
    if result.epsilon_rdp is not None:
        return result.epsilon_rdp
    if result.svt is not None or result.groups is not None or result.rdp_total is None:
        return None
    return result.epsilon


def smooth_sensitivity_dict(report: SmoothSensitivityResult) -> dict:
    """The JSON ``smooth_sensitivity`` object of CLI.md."""
    return {
        "order": report.order, "beta": report.beta,
        "smooth_sensitivity": report.smooth_sensitivity, "sigma_ss": report.sigma_ss,
        "epsilon_before": report.epsilon_before, "epsilon_after": report.epsilon_after,
        "noise_std": report.noise_std, "sanitized_epsilon": report.sanitized_epsilon,
        "conditions": {"c5": bool(report.c5), "c6": bool(report.c6)},
    }


def smooth_sensitivity_history(report: SmoothSensitivityResult) -> list[dict]:
    """One row per checkpoint (``--ss-history``): the paper's table, printed as it grew."""
    return [{"queries": point.queries, "answered": point.answered,
             "epsilon_before": point.epsilon_before, "epsilon_after": point.epsilon_after,
             "noise_std": point.noise_std, "smooth_sensitivity": point.smooth_sensitivity,
             "beta": point.beta, "sigma_ss": point.sigma_ss}
            for point in report.checkpoints]


def per_query_frame(result, *, integral: bool | None = None) -> pd.DataFrame:
    """The per-query table of CLI.md, one row per analysed query in file order.

    ``answered`` is 0/1 (replay, data-independent) or pr_answered (expected); ``label``
    is empty (<NA>) where nothing was output; ``rdp_answer`` is the charged answer cost.
    ``plurality`` is written as integers when every value is one; ``integral`` decides
    it instead (a piece of a longer table follows the whole table's choice).
    """
    import pandas as pd
    answered = result.answered
    if result.accounting != "expected":
        answered = answered.astype(np.int64)
    label = pd.array(np.where(result.label >= 0, result.label, 0), dtype="Int64")
    label[result.label < 0] = pd.NA
    index = np.arange(result.queries) if result.query_index is None else result.query_index
    frame = pd.DataFrame({
        "query": index,
        "plurality": (_integral(result.plurality) if integral is None
                      else result.plurality.astype(np.int64) if integral
                      else result.plurality),
        "plurality_class": result.plurality_class,
        "answered": answered,
        "label": label,
        "log_q": result.log_q,
        "log_pr_answered": result.log_pr_answered,
        "rdp_selection": result.rdp_selection,
        "rdp_answer": result.rdp_answer,
        "epsilon": result.epsilon_query,
        "epsilon_cumulative": result.epsilon_cumulative,
        "order_cumulative": result.order_cumulative,
    })
    if result.outcome is not None:
        frame["outcome"] = np.asarray(INTERACTIVE_NAMES)[result.outcome.astype(np.int64)]
    for name, values in result.columns.items():
        frame[name] = values
    return frame


def plain_dict(value):
    if value is None:
        return None
    return {key: plain_number(item) if not isinstance(item, dict) else plain_dict(item)
            for key, item in value.items()}


def _orders_summary(orders: np.ndarray) -> dict:
    return {"count": int(orders.size), "min": float(orders.min()), "max": float(orders.max())}


def plain_number(value):
    """numpy scalars to Python numbers; integral floats to int."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _integral(values: np.ndarray) -> np.ndarray:
    rounded = np.round(values)
    return rounded.astype(np.int64) if np.array_equal(rounded, values) else values


def _finite_or_none(value):
    """An order as a plain number, or None for ``inf`` (SVT-PATE's pure-DP bound, which
    no finite order attains)."""
    value = plain_number(value)
    return None if isinstance(value, float) and math.isinf(value) else value


@dataclass(frozen=True)
class QueryTable:
    """Per-query columns held in memory, in analysed order (a multi-label run's; any
    other run streams its table; ``result.<column>`` gives one as an array).
    ``answered`` is the charge weight of the answer step (0/1 in replay and
    data-independent accounting, ``pr_answered`` in expected accounting); ``label`` -1
    where nothing was output; ``rdp_selection``/``rdp_answer`` are at the reported
    order; ``outcome``: Interactive-GNMax's codes or None; ``columns``: extra per-query
    columns (SVT's distance and unstable flag)."""

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
        """The columns of a per-query table (CLI.md) as arrays: the inverse of
        ``serialize.per_query_frame`` (``label`` <NA> -> -1, outcome names -> codes)."""
        floats = {name: frame[column].to_numpy(np.float64) for name, column in (
            ("plurality", "plurality"), ("answered", "answered"), ("log_q", "log_q"),
            ("log_pr_answered", "log_pr_answered"), ("epsilon_query", "epsilon"),
            ("epsilon_cumulative", "epsilon_cumulative"),
            ("order_cumulative", "order_cumulative"), ("rdp_selection", "rdp_selection"),
            ("rdp_answer", "rdp_answer"))}
        outcome = None
        if "outcome" in frame:
            outcome = codes_of(frame["outcome"].to_numpy(dtype=str), INTERACTIVE_NAMES)
        extra = [name for name in frame.columns
                 if name not in PER_QUERY_COLUMNS and name not in ("outcome", "output")]
        return cls(plurality_class=frame["plurality_class"].to_numpy(np.int64),
                   label=frame["label"].to_numpy(np.int64, na_value=-1), outcome=outcome,
                   columns={name: frame[name].to_numpy() for name in extra}, **floats)


# What ``result.<name>`` gives of the per-query table (the stream put together, or the
# columns held in memory).
TABLE_NAMES = frozenset(name for name in QueryTable.__dataclass_fields__)
