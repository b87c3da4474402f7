"""Individualized PATE runs (math:individualized; Boenisch et al., "Individualized PATE").

The variant's histogram (plain, or weighted or participation-masked votes formed a chunk at a
time, ``mechanisms.HistogramRows``), then one pass: the run's totals (``analyze_votes``) with
the group accounting (``GroupRun``) consuming each chunk in query order (:class:`GroupPass`).
With a table, a second pass adds each group's cumulative epsilon and releases no label from
the first pass's stop on (:func:`_group_frames`). Memory: the chunk, plus the statistics of up
to ``HELD_QUERIES`` queries a group pass holds to spare orders."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from ..accounting.conversion import checked_setting, grid_edge_notes
from ..accounting.grouped import (
    BoundedTotals,
    GroupedCounts,
    GroupedTotals,
    expected_answers,
    expected_charges,
)
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
from ..decisions import INTERACTIVE_NAMES, OUTCOME_ABSTAIN, LabelCounts
from ..errors import OptionError
from ..inputs import VoteSet
from ..inputs.groups import read_groups
from ..mechanisms import HistogramRows, Mechanism
from ..threads import ordered_map
from ..vote_rows import row_width
from ..work_sizes import chunk_rows, stream_rows
from .grouped_run import QueryChunk
from .per_query_stream import per_query_frames
from .result import AnalysisResult, GroupsPart, RunSetting
from .run import analyze_votes, reports_any_run_bound
from .run_spec import RunSpec
from .steps import mechanism_steps, screening_counts


@dataclass(frozen=True)
class IndividualizedPlan:
    """Each group's parameters, each teacher's group (with ``--teacher-groups``) and the
    raw predictions (with ``--predictions``)."""

    parameters: GroupParameters
    teacher_groups: np.ndarray | None
    predictions: np.ndarray | None


def individualized_plan(spec: RunSpec, vote_set: VoteSet) -> IndividualizedPlan:
    """The plan of a run whose option rules (``run_spec.RULES``) were checked: ``spec.groups``
    (and ``teacher_groups``) read, each group's parameters derived (math:individualized; a
    knob None: ``derive_parameters``' default)."""
    # the teachers --teacher-groups names are the predictions' columns (not --teachers)
    teachers = (vote_set.teachers if vote_set.predictions is None
                else vote_set.predictions.shape[1])
    privacy_groups, assigned = read_groups(spec.groups, spec.teacher_groups, teachers=teachers)
    knobs = {key: value for key, value in (("precision", spec.precision),
                                          ("weights", spec.weights), ("power", spec.power))
             if value is not None}
    parameters = derive_parameters(privacy_groups, variant=spec.individualized,
                                   teacher_groups=assigned, **knobs)
    return IndividualizedPlan(parameters, assigned,
                              None if assigned is None else vote_set.predictions)


def analyze_individualized(votes: np.ndarray, mechanism: Mechanism,
                           parameters: GroupParameters, *, predictions=None,
                           teacher_groups: np.ndarray | None = None,
                           classes: int | None = None, **options) -> AnalysisResult:
    """Analyse an individualized run; the result's ``groups`` holds the accounting.

    The replay runs on the run's histogram; each group's cost uses its real ``log q`` and
    ``pr_answered`` with the noise scales divided by the group's sensitivity. Labels from the
    stop (the first query whose full charge would take some group over its budget,
    ``GroupRun.add``) on are not released.

    Args:
      votes: the plain histogram (upsampling).
      mechanism: GNMax, Confident or Interactive (Gaussian answers).
      parameters: each group's ``GroupParameters`` (``derive_parameters``).
      predictions: ``(queries, teachers)`` class ids, from which (with ``teacher_groups``)
        weighting and vanishing form their histogram.
      teacher_groups: each teacher's group index.
      classes: the number of classes (default: the largest prediction + 1).
      **options: the other fields of ``RunSetting`` the run takes (``teachers``, ``accounting``,
        ``delta``, ``orders``, ``conversion``, ``seed``, ``queries``, ``labels``, ``student``,
        ``chunk_size``, ``source``); ``per_query`` (True or ``"stream"``:
        ``result.iter_frames()`` gives the table with each group's cumulative epsilon; False:
        totals only); ``workers``: threads (default: the cores); no figure depends on it.

    Returns:
      The :class:`AnalysisResult`. Each group reports what it spent at the stop
      (``epsilon_if_continued``: over every analysed query); the top-level ``epsilon`` and
      ``order`` are the largest spent at the stop, ``answered`` the answers before it.

    Raises:
      ValueError: another mechanism, or weighting or vanishing without ``predictions`` and
        ``teacher_groups``.
    """
    given = RunSetting.of(**options)
    run = {key: getattr(given, key) for key in ("teachers", "accounting", "delta", "orders",
                                                "conversion", "seed", "labels", "student",
                                                "source")}
    accounting, chunk_size, per_query, workers = (given.accounting, given.chunk_size,
                                                  given.per_query, given.workers)
    if mechanism.answer_noise != "gaussian" or mechanism.sequential:
        raise OptionError("--individualized supports -m gnmax, confident and interactive")
    variant = parameters.variant
    histogram, participation, member_groups = votes, None, None
    notes: tuple[str, ...] = ()
    if variant != "upsampling":
        if predictions is None or teacher_groups is None:
            raise ValueError(f"--individualized {variant} needs --predictions and "
                             "--teacher-groups")
        classes = classes or int(np.max(predictions)) + 1
        if variant == "weighting":
            histogram = HistogramRows(predictions, classes,
                                      weights=parameters.sensitivity[teacher_groups])
        else:
            histogram = HistogramRows(predictions, classes, seed=given.seed,
                                      frequencies=parameters.participation[teacher_groups])
            participation, member_groups = histogram.participation, teacher_groups
        run["teachers"] = teachers = float(predictions.shape[1])
        total = float(np.sum(parameters.sensitivity[teacher_groups]))
        if variant == "weighting" and total > teachers * (1.0 + 1e-9):
            # weights above the teacher count (--weights group-size, Algorithm 2 as
            # printed): a row sums to at most the total weight, the threshold step's M
            notes = (f"--weights: the weights sum to {total:g} over the {int(teachers)} teachers "
                     f"(Algorithm 2 as printed): the threshold step takes M = {total:g}, "
                     "and the uniform run (sensitivity 1) is not comparable",)
            run["teachers"] = total
            mechanism = replace(mechanism, teachers=total)  # screening_counts' range
        if getattr(mechanism, "integer_votes", False):  # whole counts on any data?
            mechanism = replace(mechanism, integer_votes=histogram.whole_on_any_data(
                chunk_rows(chunk_size, classes)))
    # threshold step's exact curve (T, kind, low, high) (math:screening), None if "gaussian":
    # counts are whole for plain and upsampled votes and whole weights or rescalings (checked
    # above on any data); a group's step D must be whole too for the integer grid (``curves``)
    selects = mechanism.selects
    kind, low, high = screening_counts(mechanism) if selects else ("gaussian", 0.0, 0.0)
    screen = None if kind == "gaussian" else (float(mechanism.threshold), kind, low, high)
    grid, _ = checked_setting(accounting, given.delta, given.orders, given.conversion)
    setting = GroupSetting(mechanism.sigma, mechanism.sigma_threshold if selects else None,
                           screen, grid, parameters.sensitivity, participation,
                           member_groups)
    rows = (votes if predictions is None else predictions).shape[0]  # the most queries
    found = GroupRun(setting, budgets=parameters.budgets, delta=given.delta,
                     conversion=given.conversion, accounting=accounting,
                     terms=min(rows, given.queries or rows) + 1)
    # chunks sized for the table's pass and the group sums (no bit depends on it)
    rows = stream_rows(chunk_size, row_width(histogram), grid.size)
    consumer = GroupPass(found, uses_student=mechanism.uses_student, labels=given.labels,
                         expected=accounting == "expected", rows=rows, workers=workers,
                         raised_charge=mechanism_steps(mechanism)[0].raised_charge
                         if selects else None,
                         # the uniform run's data-dependent totals give no figure; a
                         # table's rdp_* columns are at its order (per-query.md)
                         composes_costs=not per_query)
    # the one pass (with a table the run keeps its statistic pairs, where _group_frames ->
    # per_query_frames looks each query's epsilon up)
    base = analyze_votes(histogram, mechanism, **run, queries=given.queries, chunk_size=chunk_size,
                         per_query=bool(per_query), workers=workers, consumer=consumer)
    consumer.finish()
    # each group's bound for any run: a selection step's count, and a stop that a
    # data-dependent figure decides, are functions of the votes (None for vanishing, and
    # for GNMax under data-independent accounting: the same stop on any votes)
    bounds = (found.any_run_epsilons(base.requested or base.queries)
              if reports_any_run_bound(selects, accounting, halts=True) else None)
    groups, group_rows, baseline = found.report(parameters, bounds)
    uniform = ("epsilon_data_independent", "order_data_independent",
               "epsilon_data_independent_worst")  # the uniform run's: the baseline's
    baseline = {**baseline, **{key: getattr(base, key) for key in uniform}}
    stop = groups.stopped_at
    counted = consumer.counts
    if counted.outcomes is not None and stop is not None:  # from the stop on, no release
        counted.outcomes[OUTCOME_ABSTAIN] += base.queries - stop
    answered = consumer.answered(base)
    accuracy, by_outcome = counted.accuracy(given.labels is not None)
    part = GroupsPart(variant=variant, groups=group_rows, stopped_at=stop,
                      labels_released=groups.labels_released, baseline=baseline,
                      rule=parameters.rule)
    worst = int(np.argmax(groups.epsilon))
    order = groups.order[worst]
    assert base.counts is not None  # analysed totals-only
    return replace(  # the run's data-independent bound: its largest group's at the halt
        base, epsilon=float(groups.epsilon[worst]),
        epsilon_data_independent=max(row["epsilon_data_independent"] for row in group_rows),
        order_data_independent=float("nan"),  # the largest group's bound for any run:
        epsilon_data_independent_worst=None if bounds is None else max(
            row["epsilon_data_independent_worst"] for row in group_rows),
        rdp_data_independent=None,  # the uniform run's curve: no group's bound
        rdp_at_order=None,  # the uniform run's sums: no group composes them
        order=float(order) if np.isfinite(order) else float(base.orders[0]),
        answered_total=float(answered), groups=part, label_accuracy=accuracy,
        accuracy_by_outcome=by_outcome, warnings=grid_edge_notes(  # the largest group's
            base.orders, order if np.isfinite(order) else float(base.orders[0]),
            float(groups.epsilon[worst])) + notes,
        counts=replace(base.counts, labels_output=counted.output, outcomes=None
                       if counted.outcomes is None else tuple(map(int, counted.outcomes))),
        frames=None if not per_query else lambda _: _group_frames(
            base, histogram, setting, part, student=given.student, workers=workers,
            chunk_size=rows))


# Queries a group pass holds until the run's end to spare orders (``GroupRun.prepare``;
# some 100 bytes each at the peak, 6.5 MB in all); a longer run is added as it comes.
HELD_QUERIES = 1 << 16


class GroupPass:
    """The group accounting (``GroupRun``) as ``RunSetting.consumer``: chunks
    (``QueryChunk``) added in query order, ``rows`` at a time (no figure depends on it),
    counting labels released and answers before the stop (expected accounting: their expected
    number, summed as ``accounting.grouped`` sums totals: the bits of the run analysed up to
    the stop). Call :meth:`finish` after the pass.

    Where ``GroupRun.prunes``, chunks are held to the end (up to ``HELD_QUERIES``), the run's
    statistics handed to ``GroupRun.prepare``, then added: same figures, fewer orders.
    ``composes_costs``: the run's own totals need no data-dependent curve."""

    def __init__(self, found: GroupRun, *, uses_student: bool, labels, expected: bool,
                 rows: int, workers: int | None, raised_charge=None,
                 composes_costs: bool = False):
        self.found, self.rows, self.composes_costs = found, rows, composes_costs
        self.counts = LabelCounts(uses_student)
        self.truth = None if labels is None else np.asarray(labels)
        self.made = 0  # answers before the stop
        self.before_stop = (BoundedTotals(partial(_expected_only, raised_charge=raised_charge))
                            if expected else None)
        self.map = partial(ordered_map, workers=workers)
        self.pending: list[QueryChunk] = []
        self.held = 0 if found.prunes else None  # queries held to the end, or None

    def __call__(self, chunk: QueryChunk) -> None:
        self.pending.append(chunk)
        if self.held is not None:
            self.held += chunk.labels.size
            if self.held <= HELD_QUERIES:
                return
            self.held = None  # too long a run to hold: added as it comes
        self._add_batches(last=False)

    def finish(self) -> None:
        """Add the chunks held."""
        if self.held is not None and self.pending:
            log_q, log_pr, weight = (
                np.concatenate([getattr(part, key) for part in self.pending])
                for key in ("log_q", "log_pr", "weight"))
            self.found.prepare(log_q, log_pr, weight, map=self.map)
        self._add_batches(last=True)

    def _add_batches(self, *, last: bool) -> None:
        """Add the held chunks in batches of at least ``rows`` queries (``last``: the rest)."""
        batch: list[QueryChunk] = []
        size = 0
        for part in self.pending:
            batch.append(part)
            size += part.labels.size
            if size >= self.rows:
                self._add(batch)
                batch, size = [], 0
        if batch and last:
            self._add(batch)
            batch = []
        self.pending = batch

    def _add(self, parts: list[QueryChunk]) -> None:
        """Add ``parts``, consecutive chunks, to the group accounting."""
        start = parts[0].start
        log_q, log_pr, weight, answered, labels = (
            np.concatenate([getattr(part, key) for part in parts])
            for key in ("log_q", "log_pr", "weight", "answered", "labels"))
        outcome = (None if parts[0].outcome is None
                   else np.concatenate([part.outcome for part in parts]))
        before = self.found.stops.stopped_at
        # the data-independent charge: the answers the replay made (under expected
        # accounting too, where the answer step's charge is pr_answered)
        upto = self.found.add(start, log_q, log_pr, labels >= 0, weight,
                              answered.astype(np.float64), map=self.map)
        self.counts.add(labels[:upto], None if outcome is None else outcome[:upto],
                        None if self.truth is None else self.truth[start:start + upto])
        self.made += int(np.count_nonzero(answered[:upto]))
        if self.before_stop is not None and before is None:
            for part in parts:  # each chunk lies in one window of the totals
                count = min(part.labels.size, start + upto - part.start)
                if count > 0:
                    self.before_stop.add(GroupedCounts.of_queries(
                        part.log_q[:count], part.log_pr[:count], part.answered[:count],
                        None if part.raised is None else part.raised[:count]),
                        part.start + count)

    def answered(self, base: AnalysisResult) -> float:
        """The answers before the stop (every answer of ``base``, the run, without one)."""
        stop = self.found.stops.stopped_at
        if self.before_stop is None:
            return float(self.made)
        if stop is None or stop >= base.queries:
            return base.answered_total
        return 0.0 if stop == 0 else float(self.before_stop.result()[0].answered)


def _expected_only(table: GroupedCounts, map=map, *, raised_charge=None) -> GroupedTotals:
    """A table's expected answers alone (``BoundedTotals``' sums, without curves)."""
    return GroupedTotals(np.zeros(1), np.zeros(1),
                         expected_answers(table, expected_charges(table, raised_charge)))


def _table_ceilings(group_rows: tuple) -> dict[float, float] | None:
    """Per sensitivity, its groups' largest ``epsilon_if_continued``, above every cumulative
    epsilon of the table (``GroupSums.ceilings``); the uniform run's curve (sensitivity 1): at
    least the smallest budget (its figures are not in the table, not exact above it). None for
    vanishing (no group has one sensitivity); none for a sensitivity with a non-finite figure."""
    if any(row["sensitivity"] is None for row in group_rows):
        return None
    ceilings: dict[float, float] = {1.0: min(row["budget"] for row in group_rows)}
    for row in group_rows:
        key, final = float(row["sensitivity"]), float(row["epsilon_if_continued"])
        ceilings[key] = max(ceilings.get(key, 0.0), final if np.isfinite(final) else np.inf)
    return {key: value for key, value in ceilings.items() if np.isfinite(value)}


def _group_frames(base: AnalysisResult, votes, setting: GroupSetting, part: GroupsPart, *,
                  student=None, chunk_size: int, workers: int | None = None) -> Iterator:
    """``base``'s streamed table, nothing released from ``part.stopped_at`` on, each group's
    ``epsilon_cumulative_<group>`` composed from its columns at the orders below
    :func:`_table_ceilings`: bit for bit the run's ``to_frame()``."""
    names = tuple(row["group"] for row in part.groups)
    stopped_at = part.stopped_at
    sums = GroupSums(groups=len(names), orders=setting.orders, delta=base.delta,
                     conversion=base.conversion, member_groups=setting.member_groups,
                     terms=(base.requested or base.queries) + 1)
    sums.ceilings = _table_ceilings(part.groups)
    independent = base.accounting == "data-independent"
    curves_map = partial(ordered_map, workers=workers)
    start = 0
    for frame in per_query_frames(base, votes, student=student, chunk_size=chunk_size,
                                  workers=workers):
        count = len(frame)
        label = frame["label"].to_numpy(dtype=np.int64, na_value=-1)
        eps = add_span(sums, span_costs(
            setting, start, frame["log_q"].to_numpy(dtype=np.float64),
            frame["log_pr_answered"].to_numpy(dtype=np.float64), label >= 0,
            frame["answered"].to_numpy(dtype=np.float64), independent=independent,
            map=curves_map), map=curves_map)[0]
        if stopped_at is not None and stopped_at < start + count:  # none released from it on
            cut = max(0, stopped_at - start)
            for column, value in ("label", None), ("outcome", INTERACTIVE_NAMES[OUTCOME_ABSTAIN]):
                if column in frame:  # None: <NA> in the Int64 label column
                    frame.iloc[cut:, frame.columns.get_loc(column)] = value
        for g, name in enumerate(names):
            frame[f"epsilon_cumulative_{name}"] = eps[:, g]
        yield frame
        start += count
