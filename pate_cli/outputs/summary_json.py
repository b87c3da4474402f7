"""AnalysisResult -> the JSON summary dict of cli:json, the result's ``dict`` view
(``AnalysisResult.to_dict()``). Scripts parse the keys: extend them, never rename them."""

from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np

from .._version import __version__
from ..accounting.risk import REPORTED_FPRS, profile_risk
from ..analysis.added_figures import streamed_notes
from ..analysis.result import AnalysisResult, register_presenter
from ..analysis.run import reports_any_run_bound
from ..decisions import INTERACTIVE_NAMES
from ..numerics import whole_int
from .report_statement import headline


def summary_dict(result: AnalysisResult) -> dict:
    """The JSON summary of cli:json (``--format json``), with provenance."""
    source, counts = result.source, result.counts
    assert counts is not None  # every analysis counts its queries
    expected = result.accounting == "expected"
    answered = result.answered_total if expected else int(round(result.answered_total))
    budget: dict | None = None
    if result.budget is not None:
        budget = {"limit": result.budget.limit, "halted_at": result.budget.halted_at,
                  "remaining": result.budget.remaining, "answered": answered,
                  "requested": result.requested}  # what the bound for any run covers
        if result.budget.halt_at != "query":
            budget["halt_at"] = result.budget.halt_at
    ss = result.smooth_sensitivity
    summary = {
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
        "orders": {"count": int(result.orders.size), "min": float(result.orders.min()),
                   "max": float(result.orders.max())},
        "queries": result.queries,
        "answered": answered,
        "epsilon": result.epsilon,
        "order": _finite_or_none(result.order),
        "epsilon_data_independent": result.epsilon_data_independent,
        "order_data_independent": _finite_or_none(result.order_data_independent),
        "epsilon_data_independent_worst": result.epsilon_data_independent_worst,
        "epsilon_data_independent_pld": result.epsilon_data_independent_pld,
        "epsilon_data_independent_worst_pld": result.epsilon_data_independent_worst_pld,
        "rdp_at_order": None if result.rdp_at_order is None else dict(result.rdp_at_order),
        "label_accuracy": result.label_accuracy,
        "labels_output": (counts.labels_output if result.multilabel is None
                          else result.multilabel.labels_output),  # (query, label) pairs
        "budget": budget,
        "smooth_sensitivity": None if ss is None else {
            "order": ss.order, "beta": ss.beta,
            "smooth_sensitivity": ss.smooth_sensitivity, "sigma_ss": ss.sigma_ss,
            "epsilon_before": ss.epsilon_before, "epsilon_after": ss.epsilon_after,
            "noise_std": ss.noise_std, "sanitized_epsilon": ss.sanitized_epsilon,
            "conditions": {"c5": bool(ss.c5), "c6": bool(ss.c6)}},
        "svt": None if result.svt is None else plain_dict(asdict(result.svt)),
        "groups": None,
        "decisions": None if result.decisions is None else asdict(result.decisions),
        "warnings": [*result.warnings, *streamed_notes(result)],
        "q_bound": result.q_bound,
        "epsilon_improved": result.epsilon_improved,
        "data_independent_method": result.data_independent_method,
        "epsilon_rdp": epsilon_rdp(result),
        "epsilon_method": epsilon_method(result),
        "sampling": sampling_summary(result.mechanism),
    }
    if counts.outcomes is not None:
        summary["outcomes"] = {name: int(counts.outcomes[code])
                               for code, name in enumerate(INTERACTIVE_NAMES)}
        summary["accuracy_by_outcome"] = result.accuracy_by_outcome
    if result.groups is not None:
        info = result.groups
        summary["groups"] = [{**plain_dict(row), "risk": group_risk(row, result)}
                             for row in info.groups]
        summary["individualized"] = info.variant
        summary["individualized_rule"] = dict([info.rule]) if info.rule else None
        summary["stopped_at"] = info.stopped_at
        summary["labels_released"] = info.labels_released
        summary["baseline"] = plain_dict(info.baseline)
    if result.rounds is not None:
        summary["rounds"] = [plain_dict(asdict(entry)) for entry in result.rounds]
    if counts.reordered:
        summary["query_indices"] = True
    if result.added_rdp is not None:
        summary["add_rdp"] = asdict(result.added_rdp)
    tuning = result.tuning  # --tuning, math:tuning
    summary["tuning"] = None if tuning is None else {
        "distribution": tuning.distribution, "mean": plain_number(tuning.mean),
        "shape": plain_number(tuning.shape), "epsilon_single": tuning.epsilon_single,
        "epsilon_tuned": tuning.epsilon_tuned, "order": plain_number(tuning.order),
        "epsilon_tuned_data_independent": tuning.epsilon_tuned_data_independent,
        "risk": risk_dict(tuning.risk)}
    summary["outputs"] = None if result.outputs is None else dict(result.outputs)
    # last, so that the CSV summary's earlier columns keep their places
    summary["multilabel"] = (None if result.multilabel is None
                             else plain_dict(asdict(result.multilabel)))
    summary["risk"] = risk_dict(result.risk)
    summary["risk_data_independent"] = risk_dict(result.risk_data_independent)
    summary["files"] = {entry.option: {"path": entry.path, "sha256": entry.sha256}
                        for entry in result.input_files} or None
    summary["published"] = published_summary(summary)
    summary["read"] = None if result.read_options is None else dict(result.read_options)
    return summary


def published_summary(summary: dict) -> dict:
    """What the run may publish, as pate-report's headline states it (cli:json ``published``).

    Args:
      summary: the JSON summary so far.

    Returns:
      ``{epsilon, kind}``: ``kind`` ``"bound"`` (data-independent: holds for any run, the
      search's cost included where ``--tuning`` led it), ``"sanitised release"`` (a private
      estimate of the data-dependent cost, not an upper bound), ``"per group"`` (``epsilon``
      None: each group's is in ``groups``), or None with ``epsilon`` None where no figure
      covers the run (an SVT cut-off chosen on the votes).
    """
    if (summary.get("svt") or {}).get("cutoff_from_search"):
        return {"epsilon": None, "kind": None}
    groups, head = summary.get("groups"), headline(summary)
    return {"epsilon": head["published"], "kind": "per group" if groups else
            "sanitised release" if head["sanitised"] else "bound"}


register_presenter("dict", summary_dict)


def sampling_summary(mechanism) -> dict | None:
    """The JSON ``sampling`` object of cli:json, or None (``mechanisms.sampled``): scheme,
    ``rate`` (``size / population`` without replacement), ``vote_change``, ``moves`` (whether
    the argmax's counts move between neighbours), the argmax's ``sensitivity`` (L2 Gaussian,
    L1 LNMax), and for Confident the threshold's (1) and ``steps``."""
    sampling = getattr(mechanism, "sampling", None)
    if sampling is None:
        return None
    laplace = mechanism.name == "lnmax"
    return {"scheme": sampling.scheme, "rate": sampling.rate, "size": sampling.size,
            "population": sampling.population, "vote_change": sampling.vote_change,
            "moves": sampling.moves,
            "sensitivity": sampling.laplace_sensitivity() if laplace
            else sampling.answer_sensitivity,
            "sensitivity_norm": "L1" if laplace else "L2",
            "threshold_sensitivity": 1.0 if mechanism.name == "confident" else None,
            "steps": sampling.steps if mechanism.name == "confident" else None}


def risk_dict(risk) -> dict | None:
    """The JSON ``risk`` object of cli:json (math:risk), or None: ``source`` (``pld``, ``rdp``,
    ``pure``), ``data_dependent``, ``tpr_at_fpr``, ``advantage``, ``mu``, ``tradeoff``."""
    if risk is None:
        return None
    return {"source": risk.source, "data_dependent": risk.data_dependent,
            "tpr_at_fpr": {f"{fpr:g}": tpr for fpr, tpr in zip(REPORTED_FPRS,
                                                              risk.at_reported,
                                                              strict=True)},
            "advantage": risk.advantage, "mu": risk.mu,
            "tradeoff": {"fpr": [float(x) for x in risk.fpr],
                         "tpr": [float(x) for x in risk.tpr]}}


def group_risk(row, result) -> dict | None:
    """A group's attack risk (math:risk) from its data-independent (epsilon, delta): its bound
    for any run, else its figure at the halt (GNMax under data-independent accounting: the same
    stop on any votes); no curve (``source`` ``rdp``, ``mu`` None); None without a bound
    (vanishing: figures at a halt the votes decide are not bounds)."""
    epsilon = row.get("epsilon_data_independent_worst")
    if epsilon is None and reports_any_run_bound(bool(result.mechanism.selects),
                                                 result.accounting, halts=True):
        return None
    if epsilon is None:
        epsilon = row.get("epsilon_data_independent")
    if epsilon is None and result.accounting == "data-independent":
        epsilon = row.get("epsilon")
    if epsilon is None:
        return None
    risk = risk_dict(profile_risk([float(epsilon)], [result.delta], "rdp"))
    assert risk is not None
    del risk["tradeoff"]
    return risk


def epsilon_method(result) -> str:
    """Which accountant gave ``epsilon`` (cli:json): ``pld`` (``accounting.pld``), ``pure``
    (SVT-PATE's ``c eps0``, no finite order) or ``rdp`` (at ``order``, math:conversion)."""
    if result.data_independent_method == "pld":
        return "pld"
    return "rdp" if math.isfinite(result.order) else "pure"


def epsilon_rdp(result) -> float | None:
    """The RDP conversion of the run's total curve (math:conversion): ``epsilon`` unless the
    PLD gave a smaller figure, then the one the per-query ``epsilon_cumulative`` and ``order``
    belong to; SVT-PATE's ``epsilon`` where its RDP route gave it; None for the pure-DP figure
    and groups."""
    if result.epsilon_rdp is not None:
        return result.epsilon_rdp
    if result.svt is not None:
        return result.epsilon if math.isfinite(result.order) else None
    if result.groups is not None or result.rdp_total is None:
        return None
    return result.epsilon


def smooth_sensitivity_history(report) -> list[dict]:
    """One row per checkpoint (``--ss-history``): the paper's table, printed as it grew."""
    return [{"queries": point.queries, "answered": point.answered,
             "epsilon_before": point.epsilon_before, "epsilon_after": point.epsilon_after,
             "noise_std": point.noise_std, "smooth_sensitivity": point.smooth_sensitivity,
             "beta": point.beta, "sigma_ss": point.sigma_ss}
            for point in report.checkpoints]


def plain_dict(value):
    """A mapping with :func:`plain_number` values, nested mappings likewise."""
    if value is None:
        return None
    return {key: plain_number(item) if not isinstance(item, dict) else plain_dict(item)
            for key, item in value.items()}


def plain_number(value):
    """numpy scalars to Python numbers; integral floats below 2^53 to int (``whole_int``)."""
    return whole_int(value.item() if isinstance(value, np.generic) else value)


def _finite_or_none(value):
    """An order as a plain number, or None for ``inf`` (SVT-PATE's pure-DP bound: no finite
    order) and NaN (an individualized run's groups each have their own)."""
    value = plain_number(value)
    return None if isinstance(value, float) and not math.isfinite(value) else value
