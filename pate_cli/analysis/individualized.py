"""Individualized PATE runs (MATH.md section 9; Boenisch et al., "Individualized PATE").

Each group's parameters; the histogram the variant aggregates (plain, weighted or
participation-masked votes, ``mechanisms.participation``, formed a chunk at a time); the
replay analysed totals-only (``analyze_votes``); then the group accounting: the run
replayed chunk by chunk (noise and vanishing participation are keyed by query position,
MATH.md s.1, so a chunk's decisions are the same bits) into
``accounting.individualized.GroupRun``, and with a table a further pass adding each
group's cumulative epsilon (:func:`_group_frames`). Memory is bounded by the chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import NamedTuple

import numpy as np

from ..accounting.individualized import (
    VARIANTS,  # noqa: F401 - run_spec's and the API's
    GroupParameters,
    GroupRun,
    GroupSetting,
    GroupSums,
    add_span,
    derive_parameters,
    span_costs,
)
from ..decisions import (
    INTERACTIVE_NAMES,
    OUTCOME_ABSTAIN,
    OUTCOME_TEACHER,
    LabelCounts,
    released_labels,
)
from ..inputs import PrivacyGroups, VoteSet, load_groups, load_teacher_groups
from ..inputs.rows import FirstRows
from ..mechanisms import (
    Mechanism,
    NoiseSource,
    vanishing_participation,
    vanishing_votes,
    weighted_histogram,
)
from ..sparse_rows import row_width
from ..threads import ordered_map
from ..work_sizes import DEFAULT_CHUNK, STREAM_CURVE_VALUES, TABLE_ROWS, chunk_rows, stream_rows
from .per_query_stream import per_query_frames
from .result import AnalysisResult, GroupsPart
from .run import analyze_votes
from .steps import chunk_costs, mechanism_steps, screening_counts


@dataclass(frozen=True)
class IndividualizedPlan:
    """Each group's parameters, each teacher's group (with ``--teacher-groups``) and the
    raw predictions (with ``--predictions``)."""

    parameters: GroupParameters
    teacher_groups: np.ndarray | None
    predictions: np.ndarray | None


def individualized_plan(variant: str, vote_set: VoteSet, *, groups, teacher_groups=None,
                        precision: int = 2, weights: str = "budget",
                        power: float = 2.0) -> IndividualizedPlan:
    """The plan of a run whose option rules (``run_spec.RULES``) were checked: the groups
    (and teacher groups) read and each group's parameters derived (MATH.md s.9)."""
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

    ``votes`` is the plain histogram (upsampling); weighting and vanishing form theirs
    from ``predictions`` (queries x teachers) and ``teacher_groups``. The replay runs on
    that histogram; each group's cost uses its real ``log q`` and ``pr_answered`` with
    the noise scales divided by the group's sensitivity. Labels from the stop (the first
    query after which some group exceeds its budget) on are not released. Each group
    reports what it spent at the stop (``epsilon_if_continued``: over every analysed
    query); the top-level ``epsilon``/``order`` are the largest spent at the stop and
    ``answered`` the answers before it. ``per_query`` (True or ``"stream"``):
    ``result.iter_frames()`` gives the table with each group's cumulative epsilon;
    False: totals only. ``workers``: threads (default: the cores); no figure depends on it.
    """
    if mechanism.answer_noise != "gaussian" or mechanism.sequential:
        raise ValueError("--individualized supports -m gnmax, confident and interactive")
    variant = parameters.variant
    member_groups = participation = None
    histogram = votes
    if variant != "upsampling":
        if predictions is None or teacher_groups is None:
            raise ValueError(f"--individualized {variant} needs --predictions and "
                             "--teacher-groups")
        classes = classes or int(np.max(predictions)) + 1
        if variant == "weighting":
            weights = parameters.sensitivity[teacher_groups]
            histogram = _HistogramRows(predictions, classes, lambda rows, start: (
                weighted_histogram(rows, weights, classes=classes)))
        else:
            frequencies, member_groups = parameters.participation[teacher_groups], teacher_groups
            participation = partial(_participation, frequencies, seed)
            histogram = _HistogramRows(predictions, classes, lambda rows, start: vanishing_votes(
                rows, frequencies=frequencies, seed=seed, classes=classes, start=start).votes)
        teachers = float(predictions.shape[1])
        if getattr(mechanism, "integer_votes", False):  # weighted/rescaled: whole counts?
            mechanism = replace(mechanism, integer_votes=histogram.whole_counts(
                chunk_rows(chunk_size, classes)))
    run = dict(teachers=teachers, accounting=accounting, delta=delta, orders=orders,
               conversion=conversion, seed=seed, labels=labels, student=student,
               source=source)
    # with a table, the base run keeps its statistic pairs: the table's pass
    # (_group_frames -> per_query_frames) looks each query's own epsilon up in them
    base = analyze_votes(histogram, mechanism, **run, queries=queries, chunk_size=chunk_size,
                         per_query=bool(per_query), workers=workers)
    selects = mechanism.selects
    setting = GroupSetting(mechanism.sigma, mechanism.sigma_threshold if selects else None,
                           _screening(mechanism) if selects else None, base.orders,
                           parameters.sensitivity, participation, member_groups)
    found, counted, answered = _group_totals(
        base, histogram, setting, parameters.budgets, student=student, labels=labels,
        chunk_size=_totals_rows(chunk_size, base.orders.size), workers=workers)
    groups, independent_spent, independent_final = found.totals(parameters.names)
    stop = groups.stopped_at
    if accounting == "expected":  # pr_answered summed before the stop
        answered = (base.answered_total if stop is None or stop >= base.queries
                    else 0.0 if stop == 0 else analyze_votes(
                        histogram, base.mechanism, **run, queries=stop,
                        per_query=False).answered_total)
    outcomes = None
    if counted.outcomes is not None:  # after the stop, nothing is released
        outcomes = counted.outcomes.copy()
        outcomes[OUTCOME_ABSTAIN] += base.queries - (base.queries if stop is None else stop)
    accuracy, by_outcome = counted.accuracy(labels is not None)
    rows = [{**row,
             "sensitivity": (None if not np.isfinite(parameters.sensitivity[g])
                             else float(parameters.sensitivity[g])),
             "epsilon": float(groups.epsilon[g]), "order": _order(groups.order[g]),
             "exhausted_at": groups.exhausted_at[g],
             "epsilon_if_continued": float(groups.final_epsilon[g]),
             "order_if_continued": _order(groups.final_order[g]),
             "epsilon_data_independent": float(independent_spent[g]),
             "epsilon_data_independent_if_continued": float(independent_final[g])}
            for g, row in enumerate(parameters.as_rows())]
    part = GroupsPart(variant=variant, groups=tuple(rows), stopped_at=stop,
                      labels_released=groups.labels_released,
                      baseline={"budget": float(np.min(parameters.budgets)),
                                "labels_released": groups.baseline_labels,
                                "stopped_at": groups.baseline_stopped_at})
    worst = int(np.argmax(groups.epsilon))
    order = groups.order[worst]
    assert base.counts is not None  # analysed totals-only
    result = replace(
        base, epsilon=float(groups.epsilon[worst]),
        order=float(order) if np.isfinite(order) else float(base.orders[0]),
        answered_total=float(answered), groups=part, label_accuracy=accuracy,
        accuracy_by_outcome=by_outcome,
        counts=replace(base.counts, labels_output=counted.output,
                       outcomes=None if outcomes is None else tuple(int(n) for n in outcomes)))
    if per_query:
        result = replace(result, frames=lambda _: _group_frames(
            base, histogram, setting, names=parameters.names, stopped_at=stop,
            student=student, workers=workers,
            chunk_size=stream_rows(chunk_size, row_width(histogram), base.orders.size)))
    return result


def _participation(frequencies: np.ndarray, seed: int, start: int, count: int) -> np.ndarray:
    return vanishing_participation(frequencies, seed=seed, count=count, start=start)


def _screening(mechanism) -> tuple | None:
    """``(T, kind, low, high)`` of the threshold step's exact curve (MATH.md s.17), None
    under ``screening="gaussian"``. The counts are whole for plain and upsampled votes and
    for weighted or rescaled ones whose histogram came out whole (checked above); a
    group's step ``D`` must be whole too for the integer grid (``curves``)."""
    kind, low, high = screening_counts(mechanism)
    return None if kind == "gaussian" else (float(mechanism.threshold), kind, low, high)


def _order(value: float) -> float | None:
    """An order for the JSON (None where nothing was spent yet)."""
    return float(value) if np.isfinite(value) else None


class _HistogramRows:
    """The weighted or vanishing histogram of ``predictions`` (queries x teachers) as
    ``(queries, classes)`` float64 rows, formed for the slices a pass reads, never whole;
    ``build(rows, start)`` forms the rows from ``start`` (the same bits however the rows
    are split, ``mechanisms.participation``)."""

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, predictions: np.ndarray, classes: int,
                 build: Callable[[np.ndarray, int], np.ndarray]):
        self.predictions, self.build = predictions, build
        self.shape = (int(predictions.shape[0]), int(classes))

    def __getitem__(self, key: slice) -> np.ndarray:
        lo, hi, _ = key.indices(self.shape[0])
        if hi <= lo:
            return np.empty((0, self.shape[1]))
        return self.build(np.asarray(self.predictions[lo:hi]), lo)

    def whole_counts(self, step: int) -> bool:
        """Whether every count is a whole number (a pass, ``step`` rows at a time)."""
        return all(np.array_equal(part, np.rint(part)) for part in (
            self[lo:lo + step] for lo in range(0, self.shape[0], step)))


class _Chunk(NamedTuple):
    """A replayed chunk: the answer step's charge (``weight``), each query's output
    label and outcome, ``log q`` and ``log pr_answered``."""

    start: int
    weight: np.ndarray
    labels: np.ndarray
    outcome: np.ndarray | None
    log_q: np.ndarray
    log_pr: np.ndarray


def _totals_rows(chunk_size: int | None, orders: int) -> int:
    """Queries per chunk of the group accounting: ``chunk_size``, else at most
    ``TABLE_ROWS`` and ``STREAM_CURVE_VALUES`` curve values (fewer chunks evaluate each
    distinct selection curve fewer times; the replay runs in smaller pieces,
    :func:`_replayed`)."""
    if chunk_size is not None:
        return chunk_size
    return min(TABLE_ROWS, max(1, STREAM_CURVE_VALUES // max(1, orders)))


def _group_totals(base: AnalysisResult, votes, setting: GroupSetting, budgets: np.ndarray,
                  *, student, labels, chunk_size: int, workers: int | None
                  ) -> tuple[GroupRun, LabelCounts, float]:
    """``base`` (a totals-only analysis of ``votes``) replayed chunk by chunk into a
    ``GroupRun`` (the same bits as ``account_groups`` over the whole run's columns), the
    label counts and the answers up to the stop."""
    found = GroupRun(setting, budgets=budgets, delta=base.delta, conversion=base.conversion,
                     independent=base.accounting == "data-independent")
    counts = LabelCounts(base.mechanism.uses_student)
    truth = None if labels is None else np.asarray(labels)
    answered = 0
    curves_map = partial(ordered_map, workers=workers)
    for chunk in _replayed(base, votes, student=student, chunk_size=chunk_size,
                          workers=workers):
        output = chunk.labels >= 0
        # under expected accounting too, the answers the replay made (outcome or label)
        made = (chunk.weight if base.accounting != "expected"
                else (chunk.outcome == OUTCOME_TEACHER).astype(np.float64)
                if chunk.outcome is not None else output.astype(np.float64))
        before = found.stops.stopped_at
        found.add(chunk.start, chunk.log_q, chunk.log_pr, output, chunk.weight, made,
                  map=curves_map)
        if before is None:  # labels up to the stop
            stop = found.stops.stopped_at
            upto = output.size if stop is None else stop - chunk.start
            counts.add(chunk.labels[:upto], None if chunk.outcome is None
                       else chunk.outcome[:upto],
                       None if truth is None else truth[chunk.start:chunk.start + upto])
            answered += int(np.count_nonzero(chunk.weight[:upto]))
    return found, counts, float(answered)


def _replayed(base: AnalysisResult, votes, *, student=None, chunk_size: int,
             workers: int | None = None) -> Iterator[_Chunk]:
    """``base``'s queries replayed a chunk of ``chunk_size`` at a time (MATH.md s.1:
    noise keyed by query position), formed ahead on ``workers`` threads in pieces of at
    most ``READ_VALUES`` vote values (a replay holds several times its votes while it
    runs; a chunk keeps five numbers a query)."""
    mechanism = base.mechanism
    queries = base.queries
    selection, answer = mechanism_steps(mechanism)
    noise = NoiseSource(base.seed)
    positions = FirstRows(queries)

    def form(piece: tuple[int, int]) -> _Chunk:
        chunk = chunk_costs(votes, positions, *piece, mechanism=mechanism,
                            selection=selection, answer=answer, noise=noise,
                            accounting=base.accounting, orders=np.ones(1), student=student,
                            curves=False)
        labels, outcome = released_labels(chunk.made, chunk.made.answered,
                                          mechanism.uses_student)
        return _Chunk(piece[0], chunk.weight, labels, outcome, chunk.log_q, chunk.log_pr)

    step = max(1, min(chunk_size, chunk_rows(None, row_width(votes))))
    pieces = [(lo, min(queries, lo + step)) for lo in range(0, queries, step)]
    held: list[_Chunk] = []
    for piece in ordered_map(form, pieces, workers=workers):
        held.append(piece)
        end = piece.start + piece.weight.shape[0]
        if end - held[0].start >= chunk_size or end == queries:
            yield held[0] if len(held) == 1 else _Chunk(held[0].start, *(
                None if parts[0] is None else np.concatenate(parts)
                for parts in list(zip(*held, strict=True))[1:]))
            held = []


def _group_frames(base: AnalysisResult, votes, setting: GroupSetting, *, names: tuple,
                 stopped_at: int | None, student=None, chunk_size: int,
                 workers: int | None = None) -> Iterator:
    """The per-query table a chunk at a time: ``base``'s streamed table
    (``per_query_stream.per_query_frames``) with nothing released from ``stopped_at`` on
    and each group's cumulative epsilon (``epsilon_cumulative_<group>``) composed from
    the table's own columns: the rows, bit for bit, of the run's ``to_frame()``."""
    import pandas as pd

    sums = GroupSums(groups=len(names), orders=setting.orders, delta=base.delta,
                     conversion=base.conversion, member_groups=setting.member_groups)
    independent = base.accounting == "data-independent"
    curves_map = partial(ordered_map, workers=workers)
    start = 0
    for frame in per_query_frames(base, votes, student=student, chunk_size=chunk_size,
                                  workers=workers):
        count = len(frame)
        label = frame["label"].to_numpy(dtype=np.int64, na_value=-1)
        eps, _, _ = add_span(sums, span_costs(
            setting, start, frame["log_q"].to_numpy(dtype=np.float64),
            frame["log_pr_answered"].to_numpy(dtype=np.float64), label >= 0,
            frame["answered"].to_numpy(dtype=np.float64), independent=independent,
            map=curves_map), map=curves_map)
        cut = None if stopped_at is None else max(0, stopped_at - start)
        if cut is not None and cut < count:  # nothing released from the stop on
            label[cut:] = -1
            values = pd.array(np.where(label >= 0, label, 0), dtype="Int64")
            values[label < 0] = pd.NA
            frame["label"] = values
            if "outcome" in frame:  # built as result.per_query_frame builds it
                outcome = frame["outcome"].to_numpy(dtype=str)
                outcome[cut:] = INTERACTIVE_NAMES[OUTCOME_ABSTAIN]
                frame["outcome"] = outcome
        for g, name in enumerate(names):
            frame[f"epsilon_cumulative_{name}"] = eps[:, g]
        yield frame
        start += count
