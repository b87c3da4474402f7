"""Individualized PATE runs (math:individualized; Boenisch et al., "Individualized PATE").

Each group's parameters; the histogram the variant aggregates (plain votes, or weighted
or participation-masked ones formed a chunk at a time, ``mechanisms.HistogramRows``); the
replay analysed totals-only (``analyze_votes``); then the group accounting: the run
replayed chunk by chunk (noise and vanishing participation are keyed by query position,
math:mechanisms, so a chunk's decisions are the same bits) into
``accounting.individualized.GroupRun``, and with a table a further pass at the same chunk
size adding each group's cumulative epsilon (:func:`_group_frames`). Memory is bounded by
the chunk.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial

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
    Decisions,
    LabelCounts,
    released_labels,
)
from ..inputs import VoteSet
from ..inputs.groups import read_groups
from ..inputs.rows import FirstRows
from ..mechanisms import HistogramRows, Mechanism, NoiseSource
from ..threads import ordered_map
from ..vote_rows import row_width
from ..work_sizes import chunk_rows, stream_rows
from .per_query_stream import per_query_frames
from .result import AnalysisResult, GroupsPart, RunSetting
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
    (and teacher groups) read and each group's parameters derived (math:individualized)."""
    privacy_groups, assigned = read_groups(groups, teacher_groups, teachers=vote_set.teachers)
    parameters = derive_parameters(privacy_groups, variant=variant, teacher_groups=assigned,
                                   precision=precision, weights=weights, power=power)
    return IndividualizedPlan(parameters, assigned,
                              None if assigned is None else vote_set.predictions)


def analyze_individualized(votes: np.ndarray, mechanism: Mechanism,
                           parameters: GroupParameters, *, predictions=None,
                           teacher_groups: np.ndarray | None = None,
                           classes: int | None = None, **options) -> AnalysisResult:
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
    ``options``: the other fields of ``RunSetting`` the run takes (``teachers``,
    ``accounting``, ``delta``, ``orders``, ``conversion``, ``seed``, ``queries``,
    ``labels``, ``student``, ``chunk_size``, ``source``).
    """
    setting = RunSetting.of(**options)
    teachers, accounting, delta, orders = (setting.teachers, setting.accounting,
                                           setting.delta, setting.orders)
    conversion, seed, queries, labels = (setting.conversion, setting.seed, setting.queries,
                                         setting.labels)
    student, chunk_size, source = setting.student, setting.chunk_size, setting.source
    per_query, workers = setting.per_query, setting.workers
    if mechanism.answer_noise != "gaussian" or mechanism.sequential:
        raise ValueError("--individualized supports -m gnmax, confident and interactive")
    variant = parameters.variant
    histogram, participation, member_groups = votes, None, None
    if variant != "upsampling":
        if predictions is None or teacher_groups is None:
            raise ValueError(f"--individualized {variant} needs --predictions and "
                             "--teacher-groups")
        classes = classes or int(np.max(predictions)) + 1
        if variant == "weighting":
            histogram = HistogramRows(predictions, classes,
                                      weights=parameters.sensitivity[teacher_groups])
        else:
            histogram = HistogramRows(predictions, classes, seed=seed,
                                      frequencies=parameters.participation[teacher_groups])
            participation, member_groups = histogram.participation, teacher_groups
        teachers = float(predictions.shape[1])
        if getattr(mechanism, "integer_votes", False):  # weighted/rescaled: whole counts?
            mechanism = replace(mechanism, integer_votes=histogram.whole_counts(
                chunk_rows(chunk_size, classes)))
    run = dict(teachers=teachers, accounting=accounting, delta=delta, orders=orders,
               conversion=conversion, seed=seed, labels=labels, student=student, source=source)
    # with a table, the base run keeps its statistic pairs: the table's pass
    # (_group_frames -> per_query_frames) looks each query's own epsilon up in them
    base = analyze_votes(histogram, mechanism, **run, queries=queries, chunk_size=chunk_size,
                         per_query=bool(per_query), workers=workers)
    # the threshold step's exact curve (T, kind, low, high) (math:screening), None under
    # screening="gaussian": the counts are whole for plain and upsampled votes and for
    # weighted or rescaled ones whose histogram came out whole (checked above); a group's
    # step D must be whole too for the integer grid (``curves``)
    selects = mechanism.selects
    kind, low, high = screening_counts(mechanism) if selects else ("gaussian", 0.0, 0.0)
    screen = None if kind == "gaussian" else (float(mechanism.threshold), kind, low, high)
    setting = GroupSetting(mechanism.sigma, mechanism.sigma_threshold if selects else None,
                           screen, base.orders, parameters.sensitivity, participation,
                           member_groups)
    # one chunk size for both passes over the queries (the totals' and the table's)
    rows = stream_rows(chunk_size, row_width(histogram), base.orders.size)
    found, counted, answered = _group_totals(base, histogram, setting, parameters.budgets,
                                             student=student, labels=labels,
                                             chunk_size=rows, workers=workers)
    groups, group_rows, baseline = found.report(parameters)
    stop = groups.stopped_at
    if accounting == "expected":  # pr_answered summed before the stop
        answered = (base.answered_total if stop is None or stop >= base.queries
                    else 0.0 if stop == 0 else analyze_votes(
                        histogram, base.mechanism, **run, queries=stop,
                        per_query=False).answered_total)
    accuracy, by_outcome = counted.accuracy(labels is not None)
    part = GroupsPart(variant=variant, groups=group_rows, stopped_at=stop,
                      labels_released=groups.labels_released, baseline=baseline)
    worst = int(np.argmax(groups.epsilon))
    order = groups.order[worst]
    assert base.counts is not None  # analysed totals-only
    return replace(
        base, epsilon=float(groups.epsilon[worst]),
        order=float(order) if np.isfinite(order) else float(base.orders[0]),
        answered_total=float(answered), groups=part, label_accuracy=accuracy,
        accuracy_by_outcome=by_outcome,
        counts=replace(base.counts, labels_output=counted.output, outcomes=None
                       if counted.outcomes is None else tuple(map(int, counted.outcomes))),
        frames=None if not per_query else lambda _: _group_frames(
            base, histogram, setting, names=parameters.names, stopped_at=stop,
            student=student, workers=workers, chunk_size=rows))


def _group_totals(base: AnalysisResult, votes, setting: GroupSetting, budgets: np.ndarray,
                  *, student, labels, chunk_size: int, workers: int | None
                  ) -> tuple[GroupRun, LabelCounts, float]:
    """``base`` (a totals-only analysis of ``votes``) replayed ``chunk_size`` queries at a
    time (math:mechanisms: noise keyed by query position), formed ahead on ``workers``
    threads, into a ``GroupRun`` (the same bits as ``account_groups`` over the whole
    run's columns), the label counts (the queries from the stop on abstain) and the
    answers up to the stop."""
    mechanism, queries = base.mechanism, base.queries
    selection, answer = mechanism_steps(mechanism)
    noise, positions = NoiseSource(base.seed), FirstRows(queries)
    found = GroupRun(setting, budgets=budgets, delta=base.delta, conversion=base.conversion,
                     independent=base.accounting == "data-independent")
    counts = LabelCounts(mechanism.uses_student)
    truth = None if labels is None else np.asarray(labels)
    answered = 0
    curves_map = partial(ordered_map, workers=workers)

    # a replay holds several times its votes while it runs: pieces of at most
    # ``chunk_rows`` rows (the same bits however the queries are split, math:mechanisms)
    piece = max(1, min(chunk_size, chunk_rows(None, row_width(votes))))

    def form(start: int) -> tuple:  # a chunk's decisions and statistics, not its votes
        stop = min(queries, start + chunk_size)
        parts = [chunk_costs(votes, positions, lo, min(stop, lo + piece), mechanism=mechanism,
                             selection=selection, answer=answer, noise=noise,
                             accounting=base.accounting, student=student, curves=False)
                 for lo in range(start, stop, piece)]
        return (start, Decisions.joined([part.made for part in parts]),
                *(np.concatenate([getattr(part, key) for part in parts])
                  for key in ("weight", "log_q", "log_pr")))

    for start, decisions, weight, log_q, log_pr in ordered_map(
            form, range(0, queries, chunk_size), workers=workers):
        released, outcome = released_labels(decisions, decisions.answered,
                                            mechanism.uses_student)
        # the data-independent charge: the answers the replay made (under expected
        # accounting too, where the answer step's charge is pr_answered)
        upto = found.add(start, log_q, log_pr, released >= 0, weight,
                         decisions.answered.astype(np.float64), map=curves_map)
        counts.add(released[:upto], None if outcome is None else outcome[:upto],
                   None if truth is None else truth[start:start + upto])  # up to the stop
        answered += int(np.count_nonzero(decisions.answered[:upto]))
    stop = found.stops.stopped_at
    if counts.outcomes is not None and stop is not None:  # from the stop on, no release
        counts.outcomes[OUTCOME_ABSTAIN] += queries - stop
    return found, counts, float(answered)


def _group_frames(base: AnalysisResult, votes, setting: GroupSetting, *, names: tuple,
                 stopped_at: int | None, student=None, chunk_size: int,
                 workers: int | None = None) -> Iterator:
    """The per-query table a chunk at a time: ``base``'s streamed table
    (``per_query_stream.per_query_frames``) with nothing released from ``stopped_at`` on
    and each group's cumulative epsilon (``epsilon_cumulative_<group>``) composed from
    the table's own columns: the rows, bit for bit, of the run's ``to_frame()``."""
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
        if stopped_at is not None and stopped_at < start + count:  # none released from it on
            cut = max(0, stopped_at - start)
            for column, value in ("label", None), ("outcome", INTERACTIVE_NAMES[OUTCOME_ABSTAIN]):
                if column in frame:  # None: <NA> in the Int64 label column
                    frame.iloc[cut:, frame.columns.get_loc(column)] = value
        for g, name in enumerate(names):
            frame[f"epsilon_cumulative_{name}"] = eps[:, g]
        yield frame
        start += count
