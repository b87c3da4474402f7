"""Multi-round runs (``--rounds``): successive analyses composed into one RDP curve.

RDP adds up order by order (math:conversion), so a run in rounds (e.g. the 2018 paper's
Confident-GNMax, then Interactive-GNMax with a student) costs the sum of its rounds' curves.
Each round is analysed totals-only from the RDP spent before it, rows read as a view (noise
keyed by position in the round, math:mechanisms); the summary composes their ``QueryCounts``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import partial

import numpy as np

from ..accounting.composition import initial_carry, sums_at_order
from ..accounting.conversion import checked_setting, grid_edge_notes, rdp_to_epsilon
from ..accounting.svt import rdp_svt, rdp_svt_rounds
from ..decisions import INTERACTIVE_NAMES, OUTCOME_ABSTAIN, OUTCOME_TEACHER, LabelCounts
from ..inputs.rows import SPAN_CHECK, FirstRows, RowWindow, integral_maxima, row_window
from ..mechanisms.rounds import Round, RoundsMechanism
from .added_figures import exact_gaussian_figure, with_smaller_pld
from .attack_risk import rounds_steps
from .result import AnalysisResult, QueryCounts, RoundPart, RunSetting
from .run import analyze_votes
from .steps import data_independent_curve, mechanism_steps


def analyze_rounds(votes: np.ndarray, rounds: list[Round], **options) -> AnalysisResult:
    """Compose successive rounds into one RDP curve and one epsilon (math:conversion).

    Round k starts from the RDP spent by rounds 0..k-1, with independent noise (salt k).

    Args:
      votes: ``(queries, K)`` vote counts.
      rounds: the ``Round``s (file rows, mechanism, student), in order; at least one.
      **options: the fields of ``RunSetting`` a round takes (``teachers``, ``accounting``,
        ``delta``, ``orders``, ``conversion``, ``seed``, ``labels``, ``initial_rdp``,
        ``chunk_size``, ``source``, ``per_query`` as for ``analyze``: the table gains a
        ``round`` column; ``workers``: threads).

    Returns:
      The :class:`AnalysisResult`: ``rounds`` has each round's epsilon alone;
      ``rdp_at_order`` adds the rounds' selection and answer sums at the composed order;
      rounds of Gaussian aggregators (without ``initial_rdp``) also their steps' exact
      composition, ``epsilon_data_independent_pld`` (:func:`_with_pld`).

    Raises:
      ValueError: no rounds, or a bad accounting setting.
      TypeError: a keyword that is not a field of ``RunSetting``.
    """
    setting = RunSetting.of(**options)
    teachers, accounting, delta, orders = (setting.teachers, setting.accounting,
                                           setting.delta, setting.orders)
    conversion, seed, labels, initial_rdp = (setting.conversion, setting.seed, setting.labels,
                                             setting.initial_rdp)
    chunk_size, source, per_query, workers = (setting.chunk_size, setting.source,
                                              setting.per_query, setting.workers)
    orders, _ = checked_setting(accounting, delta, orders, conversion)
    if not rounds:
        raise ValueError("a multi-round run needs at least one round")
    if teachers is None:  # the file's first row, as analyze_votes takes it
        teachers = float(np.asarray(votes[0], dtype=np.float64).sum())
    convert = partial(rdp_to_epsilon, orders=orders, delta=delta, conversion=conversion)
    carry = spent = initial_carry(initial_rdp, orders)
    windows = [row_window(votes, spec.rows, labels, spec.student,
                          view=not spec.mechanism.sequential) for spec in rounds]
    parts, summaries = [], []
    for number, (spec, window) in enumerate(zip(rounds, windows, strict=True)):
        part = analyze_votes(window.votes, spec.mechanism, labels=window.labels,
                             student=window.student, query_indices=window.indices,
                             per_query=bool(per_query), teachers=teachers,
                             accounting=accounting, delta=delta, orders=orders,
                             conversion=conversion, seed=seed, initial_rdp=carry, salt=number,
                             chunk_size=chunk_size, source=source, workers=workers)
        # Orders an added curve leaves out (+inf) carry no information about this round.
        eps_alone, order_alone = convert(np.where(np.isfinite(carry), part.rdp_total - carry,
                                                  np.inf))
        summaries.append(RoundPart(
            round=number, mechanism=spec.mechanism.name, params=dict(spec.mechanism.params),
            first_row=int(spec.rows[0]), queries=part.queries,
            answered=part.answered_total if accounting == "expected"
            else int(round(part.answered_total)),
            epsilon=float(eps_alone), order=float(order_alone), label_accuracy=part.label_accuracy))
        carry = part.rdp_total
        parts.append(part)
    epsilon, order = (float(x) for x in convert(carry))
    at_order, independent, any_run = zip(*(_part_figures(part, orders, order)
                                           for part in parts), strict=True)
    di_curve = spent + sum(independent)  # --add-rdp too
    eps_di, order_di = (float(x) for x in convert(di_curve))
    eps_worst = None  # a selecting round's count is the votes': every query answered
    if any(part.epsilon_data_independent_worst is not None for part in parts):
        di_curve = spent + sum(any_run)  # the curve the publishable bound rests on
        eps_worst = float(convert(di_curve)[0])
    with_outcome = any(spec.mechanism.uses_student for spec in rounds)
    # in file order: the rounds' rows, one round after another, are 0, 1, 2, ...
    firsts = np.cumsum([0] + [part.queries for part in parts])[:-1]
    reordered = any(w.start != first for w, first in zip(windows, firsts, strict=True))
    tally = LabelCounts(with_outcome)
    for counts in (part.counts for part in parts):
        assert counts is not None
        tally.output += counts.labels_output
        tally.correct += counts.correct
        if tally.outcomes is not None:  # (abstain, teacher, student), INTERACTIVE_NAMES' order
            # another round's labels are teacher answers
            tally.outcomes += counts.outcomes or (
                counts.queries - counts.labels_output, counts.labels_output, 0)
            tally.outcome_correct += counts.outcome_correct or (0, counts.correct, 0)
    accuracy, by_outcome = tally.accuracy(labels is not None)
    return _with_pld(AnalysisResult(
        mechanism=RoundsMechanism(tuple(spec.mechanism for spec in rounds)), accounting=accounting,
        conversion=conversion, delta=delta, seed=int(seed), orders=orders,
        teachers=parts[0].teachers, classes=parts[0].classes,
        rdp_total=carry, epsilon=epsilon, order=order,
        epsilon_data_independent=eps_di, order_data_independent=order_di,
        rdp_data_independent=di_curve, epsilon_data_independent_worst=eps_worst,
        answered_total=float(sum(p.answered_total for p in parts)),
        rdp_at_order={key: float(sum(sums[key] for sums in at_order))
                      for key in ("selection", "answer")},
        label_accuracy=accuracy, warnings=grid_edge_notes(orders, order, epsilon),
        source=source, accuracy_by_outcome=by_outcome,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float),
        rounds=tuple(summaries),
        counts=QueryCounts(
            queries=sum(part.queries for part in parts), labels_output=tally.output,
            outcomes=None if tally.outcomes is None else tuple(map(int, tally.outcomes)),
            reordered=reordered, correct=tally.correct,
            outcome_correct=None if tally.outcomes is None
            else tuple(map(int, tally.outcome_correct))),
        frames=None if not per_query else partial(
            _round_frames, parts=parts, windows=windows, with_outcome=with_outcome)))


def _with_pld(result: AnalysisResult) -> AnalysisResult:
    """``with_pld_figure`` for rounds of Gaussian aggregators: every round's steps composed
    exactly (``exact_gaussian_figure``) at the rounds' answers and, beside
    ``epsilon_data_independent_worst``, with every query of a selecting round answered;
    unchanged for other rounds, with ``--add-rdp`` or where the profile is not resolved."""
    steps = None if result.initial_rdp is not None else rounds_steps(result, any_run=False)
    figure = None if steps is None else exact_gaussian_figure(steps, result.delta)
    if figure is None:
        return result
    if result.accounting == "data-independent":
        result = with_smaller_pld(result, figure)
    worst = None
    if result.epsilon_data_independent_worst is not None:
        every = rounds_steps(result, any_run=True)
        assert every is not None  # (the same rounds)
        worst = exact_gaussian_figure(every, result.delta)
    return replace(result, epsilon_data_independent_pld=figure,
                   epsilon_data_independent_worst_pld=worst)


def _part_figures(part: AnalysisResult, orders: np.ndarray, order: float
                  ) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
    """A round's selection and answer sums at ``order``, its data-independent curve
    (math:independent) and any run's (every query answered where the round reports it);
    SVT-PATE: its unstable queries' shares and math:svt's curve (twice)."""
    mechanism = part.mechanism
    if mechanism.sequential:
        share = float(rdp_svt_rounds(scale=mechanism.scale, rounds=1, orders=[order])[0])
        curve = rdp_svt(scale=mechanism.scale, cutoff=mechanism.cutoff, orders=orders)
        return {"selection": share * part.svt.unstable, "answer": 0.0}, curve, curve
    assert part.counts is not None and part.counts.step_sums is not None
    selection, answer = mechanism_steps(mechanism)
    any_run = part.queries if part.epsilon_data_independent_worst is not None else None
    return (sums_at_order(orders, order, *part.counts.step_sums, terms=0),  # counted sums
            *(data_independent_curve(selection, answer, answered=answered,
                                     queries=part.queries, orders=orders)
              for answered in (part.answered_total, any_run or part.answered_total)))


def _round_frames(result: AnalysisResult, *, parts: list[AnalysisResult],
                  windows: list[RowWindow], with_outcome: bool) -> Iterator:
    """Each round's per-query table at the composed order, with the whole table's columns
    (file rows, ``round``, an outcome in every round if one is Interactive)."""
    integral = all(integral_maxima(w.votes, p, p.size, SPAN_CHECK) for w in windows
                   for p in [FirstRows(w.votes.shape[0]) if w.indices is None else w.indices])
    for number, (part, window) in enumerate(zip(parts, windows, strict=True)):
        at_order = replace(part, order=result.order)
        assert at_order.frames is not None
        for frame in at_order.frames(at_order):
            frame = frame.drop(columns=["distance", "unstable"], errors="ignore")
            if window.indices is None and window.start:  # a view: its rows from start
                frame["query"] += window.start
            if not integral:  # the whole table's plurality is not all whole numbers
                frame["plurality"] = frame["plurality"].astype(np.float64)
            if with_outcome and "outcome" not in frame:
                frame["outcome"] = np.asarray(INTERACTIVE_NAMES)[np.where(
                    frame["label"].notna().to_numpy(), OUTCOME_TEACHER, OUTCOME_ABSTAIN)]
            frame["round"] = np.full(len(frame), number)
            yield frame
