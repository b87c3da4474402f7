"""Individualized PATE runs: privacy groups -> histogram -> replay -> per-group accounting.

MATH.md section 9 (Boenisch et al., "Individualized PATE"); the numeric rules live in
``accounting/individualized/``, the histograms in ``mechanisms/participation.py``. This
module decides the run: each group's parameters, the histogram the variant aggregates
(plain, weighted or participation-masked votes), the replay (``analyze_votes``) and every
group's cost composed a chunk at a time (``individualized_stream``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from ..accounting.individualized import (
    GroupTotals,
    group_weights,
    upsampling_factors,
    vanishing_frequencies,
)
from ..decisions import OUTCOME_ABSTAIN
from ..inputs import PrivacyGroups, VoteSet, load_groups, load_teacher_groups
from ..mechanisms import Mechanism
from ..sparse_rows import row_width
from .individualized_stream import (
    GroupSetting,
    group_frames,
    group_totals,
    histogram_rows,
    totals_rows,
)
from .per_query_stream import stream_rows
from .result import AnalysisResult, GroupsPart
from .run import analyze_votes
from .setting import DEFAULT_CHUNK, chunk_rows

VARIANTS = ("upsampling", "weighting", "vanishing")


@dataclass(frozen=True)
class GroupParameters:
    """What each privacy group gets under one variant (MATH.md section 9).

    ``sensitivity`` is ``D_g`` (upsampling factor or weight; for vanishing the sensitivity
    varies by query, ``k / |S_q|``, and this holds NaN); ``participation`` the vanishing
    frequency ``s_g`` (1 for the other variants).
    """

    variant: str
    names: tuple
    budgets: np.ndarray
    sensitivity: np.ndarray
    participation: np.ndarray
    share: np.ndarray | None = None

    def as_rows(self) -> list[dict]:
        rows = []
        for g, name in enumerate(self.names):
            row = {"group": name, "budget": float(self.budgets[g])}
            if self.variant == "upsampling":
                row["upsampling"] = int(self.sensitivity[g])
            elif self.variant == "weighting":
                row["weight"] = float(self.sensitivity[g])
            else:
                row["participation"] = float(self.participation[g])
            if self.share is not None and np.isfinite(self.share[g]):
                row["share"] = float(self.share[g])
            rows.append(row)
        return rows


def derive_parameters(groups: PrivacyGroups, *, variant: str,
                      teacher_groups: np.ndarray | None = None, precision: int = 2,
                      weights: str = "budget", power: float = 2.0) -> GroupParameters:
    """Each group's upsampling factor, weight or participation frequency.

    Values the groups file gives are used as they are; the others follow MATH.md section 9
    (``upsampling_factors``, ``group_weights`` (Appendix C, or ``group-size``),
    ``vanishing_frequencies`` with ``power``). Weighting needs ``teacher_groups`` (the
    weights are normalised over the teachers).
    """
    if variant not in VARIANTS:
        raise ValueError(f"--individualized must be one of {', '.join(VARIANTS)}, "
                         f"got {variant!r}")
    budgets = np.asarray(groups.budgets, dtype=np.float64)
    count = budgets.size
    ones = np.ones(count)
    if variant == "upsampling":
        derived = upsampling_factors(budgets, precision=precision).astype(np.float64)
        sensitivity = _given_or(groups.upsampling, derived)
        return GroupParameters(variant, groups.names, budgets, sensitivity, ones, groups.share)
    if variant == "weighting":
        if teacher_groups is None:
            raise ValueError("--individualized weighting needs --predictions and "
                             "--teacher-groups (weights apply to teachers' votes)")
        derived = group_weights(budgets, teacher_groups, rule=weights)
        sensitivity = _given_or(groups.weight, derived)
        if groups.weight is not None and weights == "budget":
            total = float(sensitivity[teacher_groups].sum())
            teachers = teacher_groups.size
            if abs(total - teachers) > 1e-6 * teachers:
                raise ValueError(f"the weights sum to {total:.6g} over the {teachers} "
                                 f"teachers, not {teachers} (Appendix C: weights are "
                                 "budget / mean teacher budget)")
        return GroupParameters(variant, groups.names, budgets, sensitivity, ones, groups.share)
    if teacher_groups is None:
        raise ValueError("--individualized vanishing needs --predictions and "
                         "--teacher-groups (teachers take part by group)")
    frequency = _given_or(groups.participation, vanishing_frequencies(budgets, power=power))
    return GroupParameters(variant, groups.names, budgets, np.full(count, np.nan), frequency,
                           groups.share)


def analyze_individualized(votes: np.ndarray, mechanism: Mechanism,
                           parameters: GroupParameters, *, predictions=None,
                           teacher_groups: np.ndarray | None = None,
                           classes: int | None = None, teachers: float | None = None,
                           accounting: str = "replay", delta: float = 1e-5,
                           orders: np.ndarray | None = None, conversion: str = "classic",
                           seed: int = 0, queries: int | None = None, labels=None,
                           student=None, chunk_size: int | None = DEFAULT_CHUNK,
                           source: object | None = None, per_query: bool | str = True,
                           workers: int | None = None) -> AnalysisResult:
    """Analyse an individualized run; the result's ``groups`` holds the accounting.

    ``student`` is Interactive-GNMax's probabilities. ``votes`` is the plain histogram
    (upsampling); weighting and vanishing build theirs
    from ``predictions`` (queries x teachers) and ``teacher_groups``. The replay runs on
    that histogram; each group's cost uses the real ``log q`` and ``pr_answered`` with
    noise scales divided by its sensitivity. Labels after the stopping point (the first
    query after which some group exceeds its budget) are not released: they are removed
    from ``label`` and from the label accuracy. Each group reports what it spent at the
    stop (at most its budget; ``epsilon_if_continued``: over every analysed query); the
    top-level ``epsilon``/``order`` are the largest spent-at-stop, and ``answered`` counts
    the queries answered before the stop.

    No per-query array is kept: the base run is analysed totals-only, then replayed a
    chunk at a time for the group accounting (``analysis.individualized_stream``), the
    histograms formed a chunk at a time too, so memory does not grow with the queries.
    ``per_query`` (True, the default, or ``"stream"``): ``result.iter_frames()`` gives the
    per-query table (with each group's cumulative epsilon) a chunk at a time; False:
    totals only. ``workers``: threads of the passes (default: the cores); no figure
    depends on it.
    """
    if mechanism.answer_noise != "gaussian" or mechanism.sequential:
        raise ValueError("--individualized supports -m gnmax, confident and interactive")
    variant = parameters.variant
    member_groups = frequencies = None
    if variant == "upsampling":
        histogram = votes
    else:
        if predictions is None or teacher_groups is None:
            raise ValueError(f"--individualized {variant} needs --predictions and "
                             "--teacher-groups")
        classes = classes or int(np.max(predictions)) + 1
        if variant == "weighting":
            histogram = histogram_rows(variant, predictions, classes=classes,
                                       weights=parameters.sensitivity[teacher_groups])
        else:
            frequencies = parameters.participation[teacher_groups]
            histogram = histogram_rows(variant, predictions, classes=classes,
                                       frequencies=frequencies, seed=seed)
            member_groups = teacher_groups
        teachers = float(predictions.shape[1])
        if getattr(mechanism, "integer_votes", False):  # weighted/rescaled: whole counts?
            mechanism = replace(mechanism, integer_votes=histogram.whole_counts(
                chunk_rows(chunk_size, classes)))
    run: dict[str, Any] = dict(teachers=teachers, accounting=accounting, delta=delta, orders=orders,
               conversion=conversion, seed=seed, queries=queries, labels=labels,
               student=student, source=source)
    # with a table, the base run keeps its statistic pairs: the table's pass
    # (group_frames -> per_query_frames) looks each query's own epsilon up in them
    base = analyze_votes(histogram, mechanism, **run, chunk_size=chunk_size,
                         per_query=bool(per_query), workers=workers)
    setting = GroupSetting(mechanism, base.orders, parameters.sensitivity, frequencies,
                           member_groups, seed, len(parameters.names))
    return _streamed(base, histogram, setting, parameters, labels=labels,
                     student=student, workers=workers, frames=bool(per_query),
                     chunk_size=chunk_size, answered=partial(answered_before, base, histogram, run))


def answered_before(base: AnalysisResult, histogram, run: dict, stop: int | None) -> float:
    """The answered weight before the stop under expected accounting (pr_answered
    summed; the group pass counts it otherwise): the base run's total without a stop,
    else that of the run analysed again, totals only, up to the stop."""
    if stop is None or stop >= base.queries:
        return float(base.answered_total)
    if stop == 0:
        return 0.0
    return float(analyze_votes(histogram, base.mechanism, **{**run, "queries": stop},
                               per_query=False).answered_total)


def _streamed(base: AnalysisResult, histogram, setting: GroupSetting,
              parameters: GroupParameters, *, labels, student, workers, frames: bool,
              chunk_size: int | None, answered) -> AnalysisResult:
    """The totals-only individualized result of ``base`` (analysed without columns): the
    group accounting replayed a chunk at a time, and with ``frames`` the per-query table
    streamed by a further pass (``analysis.individualized_stream``)."""
    orders = base.orders.size
    found = group_totals(base, histogram, setting, names=parameters.names,
                         budgets=parameters.budgets, student=student, labels=labels,
                         chunk_size=totals_rows(chunk_size, orders), workers=workers)
    groups = found.groups
    released_upto = base.queries if groups.stopped_at is None else groups.stopped_at
    counted = found.labels
    outcomes = None
    if counted.outcomes is not None:  # after the stop, nothing is released
        outcomes = counted.outcomes.copy()
        outcomes[OUTCOME_ABSTAIN] += base.queries - released_upto
    accuracy, by_outcome = counted.accuracy(labels is not None)
    assert base.counts is not None  # analysed totals-only
    result = replace(
        _summary(base, groups, parameters, found.independent_spent, found.independent_final,
                 answered(groups.stopped_at) if found.answered is None else found.answered),
        label_accuracy=accuracy, accuracy_by_outcome=by_outcome,
        counts=replace(base.counts, labels_output=counted.output,
                       outcomes=None if outcomes is None else tuple(int(n) for n in outcomes)))
    if frames:
        result = replace(result, frames=lambda _: group_frames(
            base, histogram, setting, names=parameters.names, stopped_at=groups.stopped_at,
            student=student, workers=workers,
            chunk_size=stream_rows(chunk_size, row_width(histogram), orders)))
    return result


def _summary(base: AnalysisResult, groups: GroupTotals, parameters: GroupParameters,
             independent_spent: np.ndarray, independent_final: np.ndarray,
             answered: float) -> AnalysisResult:
    """``base`` with the groups' figures (CLI.md's ``groups``, ``stopped_at``...): the
    top-level ``epsilon``/``order`` are the largest spent at the stop, ``answered`` the
    answer weight before the stop."""
    spent = groups.epsilon
    worst = int(np.argmax(spent))
    rows = []
    for g, row in enumerate(parameters.as_rows()):
        rows.append({**row,
                     "sensitivity": (None if not np.isfinite(parameters.sensitivity[g])
                                     else float(parameters.sensitivity[g])),
                     "epsilon": float(spent[g]),
                     "order": _order(groups.order[g]),
                     "exhausted_at": groups.exhausted_at[g],
                     "epsilon_if_continued": float(groups.final_epsilon[g]),
                     "order_if_continued": _order(groups.final_order[g]),
                     "epsilon_data_independent": float(independent_spent[g]),
                     "epsilon_data_independent_if_continued": float(independent_final[g])})
    part = GroupsPart(variant=parameters.variant, groups=tuple(rows),
                      stopped_at=groups.stopped_at, labels_released=groups.labels_released,
                      baseline={"budget": float(np.min(parameters.budgets)),
                                "labels_released": groups.baseline_labels,
                                "stopped_at": groups.baseline_stopped_at})
    order = groups.order[worst]
    return replace(base, epsilon=float(spent[worst]),
                   order=float(order) if np.isfinite(order) else float(base.orders[0]),
                   answered_total=answered, groups=part)


def _order(value: float) -> float | None:
    """An order for the JSON (None where nothing was spent yet)."""
    return float(value) if np.isfinite(value) else None


def _given_or(given: np.ndarray | None, derived: np.ndarray) -> np.ndarray:
    derived = np.asarray(derived, dtype=np.float64)
    if given is None:
        return derived
    return np.where(np.isfinite(given := np.asarray(given, dtype=np.float64)), given, derived)


@dataclass(frozen=True)
class IndividualizedPlan:
    """What ``--individualized`` needs: each group's parameters, each teacher's group
    (with ``--teacher-groups``) and the raw predictions (with ``--predictions``)."""

    parameters: GroupParameters
    teacher_groups: np.ndarray | None
    predictions: np.ndarray | None


def individualized_plan(variant: str, vote_set: VoteSet, *, groups, teacher_groups=None,
                        precision: int = 2, weights: str = "budget",
                        power: float = 2.0) -> IndividualizedPlan:
    """Group parameters of an individualized run (MATH.md s.9), reading the groups (and
    teacher groups). The option rules (``run_spec.RULES``: a known variant, ``--groups``
    given, predictions and teacher groups where the variant needs them) were checked."""
    privacy_groups = groups if isinstance(groups, PrivacyGroups) else load_groups(groups)
    assigned, raw = None, None
    if teacher_groups is not None:
        raw = vote_set.predictions
        assigned = (np.asarray(teacher_groups) if isinstance(teacher_groups, np.ndarray)
                    else load_teacher_groups(teacher_groups, groups=privacy_groups,
                                             teachers=int(vote_set.teachers)))
    parameters = derive_parameters(privacy_groups, variant=variant, teacher_groups=assigned,
                                   precision=precision, weights=weights, power=power)
    return IndividualizedPlan(parameters, assigned, raw)
