"""Multi-round runs (``--rounds``): successive analyses composed into one RDP curve.

RDP adds up order by order (MATH.md section 6), so a run in rounds (for instance the 2018
paper's Confident-GNMax round followed by an Interactive-GNMax round with a student) costs
the sum of its rounds' curves. Each round starts from the RDP the earlier rounds spent, so
per-query cumulative figures run across rounds (the carry goes into ``analyze_votes``);
whole curves are converted by ``rdp_to_epsilon`` (MATH.md s.6).

Each round is analysed totals-only (``analyze_votes(per_query=False)``): what the
summary composes comes from each round's ``QueryCounts`` (its selection and answer sums at
every order, its label counts), so memory is bounded by the chunk whatever the number of
queries. A round whose rows are a range of an array (a ``start:stop`` round) reads that
range as a view, keeping nothing per query (its noise is keyed by the query's position in
the round, MATH.md s.1, as when its rows are given as query indices). The per-query table
is each round's (``per_query_frames``, a chunk at a time) with the round's number.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from ..accounting.conversion import check_delta, rdp_to_epsilon
from ..accounting.svt import rdp_svt, rdp_svt_rounds
from ..decisions import INTERACTIVE_NAMES, OUTCOME_ABSTAIN, OUTCOME_TEACHER
from ..errors import InputError
from ..inputs import load_rounds, load_student
from ..mechanisms import MECHANISMS, Mechanism, build_mechanism
from ..orders import default_orders, validate_orders
from .per_query_stream import integral_maxima
from .result import AnalysisResult, QueryCounts, RoundPart
from .run import analyze_votes
from .setting import (
    DEFAULT_CHUNK,
    FirstRows,
    LabelCounts,
    grid_edge_notes,
    initial_carry,
    needs_integer_votes,
    sums_at_order,
)
from .steps import data_independent_curve, mechanism_steps

# Rows compared at a time when a round's row numbers are checked for a range.
SPAN_CHECK = 1 << 16


@dataclass(frozen=True)
class Round:
    """One round of a multi-round run: which file rows, which mechanism, which student."""

    rows: np.ndarray
    mechanism: Mechanism
    student: np.ndarray | None = None


@dataclass(frozen=True)
class _Window:
    """Where a round's queries are read: ``votes`` (a view of the range of rows, or the
    whole array with ``indices``), its labels and student rows alike, and the file row of
    its first position (``offset``, 0 with ``indices``)."""

    votes: Any
    indices: np.ndarray | None
    labels: np.ndarray | None
    student: np.ndarray | None
    offset: int


def analyze_rounds(votes: np.ndarray, rounds: list[Round], *, teachers: float | None = None,
                   accounting: str = "replay", delta: float = 1e-5,
                   orders: np.ndarray | None = None, conversion: str = "classic",
                   seed: int = 0, labels: np.ndarray | None = None,
                   initial_rdp: np.ndarray | None = None, chunk_size: int | None = DEFAULT_CHUNK,
                   source: object | None = None, per_query: bool | str = True,
                   workers: int | None = None) -> AnalysisResult:
    """Compose successive rounds into one RDP curve and one epsilon (RDP adds up, s.6).

    Round k is analysed on its rows with the RDP spent by rounds 0..k-1 as its starting
    point (so per-query cumulative figures run across rounds) and independent noise (salt
    k). The result has the rounds' queries one round after another; ``rounds`` has one
    summary per round, with the epsilon of that round alone. ``rdp_at_order`` adds the
    rounds' selection and answer sums at the composed order, round after round.
    ``per_query`` as for ``analyze``: True (or ``"stream"``): ``result.iter_frames()``
    gives the per-query table a chunk at a time (with a ``round`` column), False: totals
    only. ``workers``: threads (``analyze_votes``); no figure depends on it.
    """
    check_delta(delta)
    orders = default_orders() if orders is None else validate_orders(orders)
    if not rounds:
        raise ValueError("a multi-round run needs at least one round")
    if teachers is None:  # the file's first row, as analyze_votes takes it
        teachers = float(np.asarray(votes[0], dtype=np.float64).sum())
    carry = initial_carry(initial_rdp, orders)
    windows = [_window(votes, spec, labels) for spec in rounds]
    parts, summaries = [], []
    for number, (spec, window) in enumerate(zip(rounds, windows, strict=True)):
        common: dict[str, Any] = dict(
            teachers=teachers, accounting=accounting, delta=delta, orders=orders,
            conversion=conversion, seed=seed, initial_rdp=carry, salt=number,
            chunk_size=chunk_size, source=source, workers=workers)
        part = analyze_votes(window.votes, spec.mechanism, labels=window.labels,
                             student=window.student, query_indices=window.indices,
                             per_query=bool(per_query), **common)
        # Orders an added curve leaves out (+inf) carry no information about this round.
        alone = np.where(np.isfinite(carry), part.rdp_total - carry, np.inf)
        eps_alone, order_alone = rdp_to_epsilon(alone, orders=orders, delta=delta,
                                                conversion=conversion)
        summaries.append(RoundPart(
            round=number, mechanism=spec.mechanism.name,
            params=dict(spec.mechanism.params), first_row=int(spec.rows[0]),
            queries=part.queries,
            answered=part.answered_total if accounting == "expected"
            else int(round(part.answered_total)),
            epsilon=float(eps_alone), order=float(order_alone),
            label_accuracy=part.label_accuracy,
        ))
        carry = part.rdp_total
        parts.append(part)
    epsilon, order = (float(x) for x in rdp_to_epsilon(carry, orders=orders, delta=delta,
                                                      conversion=conversion))
    at_order = [_sums_at(part, orders, order) for part in parts]
    di_curve = sum(_data_independent_curve(part, orders) for part in parts)
    eps_di, order_di = (float(x) for x in rdp_to_epsilon(di_curve, orders=orders, delta=delta,
                                                        conversion=conversion))
    with_outcome = any(spec.mechanism.uses_student for spec in rounds)
    tally = LabelCounts.merged(_label_counts(part.counts, with_outcome) for part in parts)
    accuracy, by_outcome = tally.accuracy(labels is not None)
    composed = AnalysisResult(
        mechanism=_Rounds(tuple(spec.mechanism for spec in rounds)), accounting=accounting,
        conversion=conversion, delta=delta, seed=int(seed), orders=orders,
        teachers=parts[0].teachers, classes=parts[0].classes,
        rdp_total=carry, epsilon=epsilon, order=order,
        epsilon_data_independent=eps_di, order_data_independent=order_di,
        answered_total=float(sum(p.answered_total for p in parts)),
        rdp_at_order={key: float(sum(sums[key] for sums in at_order))
                      for key in ("selection", "answer")},
        label_accuracy=accuracy, warnings=grid_edge_notes(orders, order, epsilon),
        source=source, accuracy_by_outcome=by_outcome,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float),
        rounds=tuple(summaries),
        counts=QueryCounts(
            queries=sum(part.queries for part in parts), labels_output=tally.output,
            outcomes=None if tally.outcomes is None else tuple(int(n) for n in tally.outcomes),
            reordered=not _in_file_order(rounds, int(votes.shape[0])),
            correct=tally.correct,
            outcome_correct=None if tally.outcomes is None
            else tuple(int(n) for n in tally.outcome_correct)))
    if per_query:
        return replace(composed, frames=partial(
            _round_frames, parts=parts, windows=windows, with_outcome=with_outcome))
    return composed


def _sums_at(part: AnalysisResult, orders: np.ndarray, order: float) -> dict[str, float]:
    """A round's selection and answer RDP summed over its queries at ``order``: its
    step sums there (``QueryCounts.step_sums``), or, for an SVT-PATE round, its unstable
    queries' shares (MATH.md s.8)."""
    assert part.counts is not None
    if part.mechanism.sequential:
        share = float(rdp_svt_rounds(scale=part.mechanism.scale, rounds=1, orders=[order])[0])
        return {"selection": share * part.svt.unstable, "answer": 0.0}
    assert part.counts.step_sums is not None  # analyze_votes fills them
    return sums_at_order(orders, order, *part.counts.step_sums)


def _label_counts(counts: QueryCounts, with_outcome: bool) -> LabelCounts:
    """A round's label counts; in a run with an Interactive round, another round's
    output labels count as teacher answers and the rest as abstentions."""
    tally = LabelCounts(with_outcome)
    tally.output, tally.correct = counts.labels_output, counts.correct
    if tally.outcomes is not None:
        if counts.outcomes is not None and counts.outcome_correct is not None:
            tally.outcomes[:] = counts.outcomes
            tally.outcome_correct[:] = counts.outcome_correct
        else:
            tally.outcomes[[OUTCOME_ABSTAIN, OUTCOME_TEACHER]] = (
                counts.queries - counts.labels_output, counts.labels_output)
            tally.outcome_correct[OUTCOME_TEACHER] = counts.correct
    return tally


def _round_frames(result: AnalysisResult, *, parts: list[AnalysisResult],
                  windows: list[_Window], with_outcome: bool) -> Iterator:
    """The per-query table of a streamed rounds run, a chunk at a time: each round's
    ``per_query_frames`` (its noise salt, its rows, costs at the composed order) with the
    columns the whole table has (file rows, an outcome in every round if one round is
    Interactive, ``round``)."""
    integral = all(_integral_pluralities(window) for window in windows)
    for number, (part, window) in enumerate(zip(parts, windows, strict=True)):
        at_order = replace(part, order=result.order)  # costs at the composed order
        assert at_order.frames is not None  # the round's own pass (analyze_votes')
        for frame in at_order.frames(at_order):
            frame = frame.drop(columns=["distance", "unstable"], errors="ignore")
            if window.offset:
                frame["query"] += window.offset
            if not integral:  # the whole table's plurality is not all whole numbers
                frame["plurality"] = frame["plurality"].astype(np.float64)
            if with_outcome and "outcome" not in frame:
                frame["outcome"] = np.asarray(INTERACTIVE_NAMES)[np.where(
                    frame["label"].notna().to_numpy(), OUTCOME_TEACHER, OUTCOME_ABSTAIN)]
            frame["round"] = np.full(len(frame), number)
            yield frame


def _integral_pluralities(window: _Window) -> bool:
    """Whether every plurality count of the round is a whole number (the per-query table
    then writes the column as integers): at once for integer votes, else by a pass."""
    positions: Any = (FirstRows(window.votes.shape[0]) if window.indices is None
                      else window.indices)
    return integral_maxima(window.votes, positions, positions.size, SPAN_CHECK)


def _window(votes, spec: Round, labels) -> _Window:
    """A round's rows as a view of the array when they are a range of it (and its
    student has the votes' shape), else as query indices."""
    start = (_range_start(spec.rows, votes.shape[0])
             if isinstance(votes, np.ndarray) and not spec.mechanism.sequential
             and (spec.student is None or spec.student.shape == votes.shape) else None)
    if start is None:
        return _Window(votes, spec.rows, labels, spec.student, 0)
    stop = start + np.asarray(spec.rows).size
    return _Window(votes[start:stop], None,
                   None if labels is None else np.asarray(labels)[start:stop],
                   None if spec.student is None else spec.student[start:stop], start)


def _range_start(rows, total: int) -> int | None:
    """``start`` if ``rows`` are ``start, start + 1, ...`` within ``0 .. total - 1``."""
    rows = np.asarray(rows)
    if rows.ndim != 1 or rows.size == 0 or rows.dtype.kind not in "iu":
        return None
    start = int(rows[0])
    if start < 0 or start + rows.size > total or int(rows[-1]) != start + rows.size - 1:
        return None
    for lo in range(0, rows.size, SPAN_CHECK):
        piece = rows[lo:lo + SPAN_CHECK]
        if not np.array_equal(piece, np.arange(start + lo, start + lo + piece.size)):
            return None
    return start


def _in_file_order(rounds: list[Round], total: int) -> bool:
    """Whether the rounds' rows, one round after another, are ``0, 1, 2, ...``."""
    done = 0
    for spec in rounds:
        if _range_start(spec.rows, total) != done:
            return False
        done += np.asarray(spec.rows).size
    return True


@dataclass(frozen=True)
class _Rounds:
    """The mechanism of a composed multi-round run (for reporting)."""

    mechanisms: tuple[Mechanism, ...]
    name: str = field(default="rounds", init=False)

    @property
    def params(self) -> dict:
        return {"rounds": len(self.mechanisms)}


def _data_independent_curve(result: AnalysisResult, orders: np.ndarray) -> np.ndarray:
    if result.mechanism.sequential:
        return rdp_svt(scale=result.mechanism.scale, cutoff=result.mechanism.cutoff,
                       orders=orders)
    selection, answer = mechanism_steps(result.mechanism)
    return data_independent_curve(selection, answer, answered=result.answered_total,
                                  queries=result.queries, orders=orders)


def rounds_of(rounds, vote_set, defaults: dict, parameter_names) -> list[Round]:
    """``--rounds``: a JSON file's rounds (or given specs / ``Round`` objects), each with
    its rows and mechanism (the call's ``defaults`` for parameters it does not set)."""
    specs = load_rounds(rounds) if isinstance(rounds, (str, os.PathLike)) else rounds
    return [_round(dict(spec) if not isinstance(spec, Round) else spec, vote_set, defaults,
                   parameter_names) for spec in specs]


def _round(spec, vote_set, defaults: dict, parameter_names) -> Round:
    """One round of ``--rounds``: its rows, mechanism (the call's values as defaults)."""
    if isinstance(spec, Round):
        return spec
    name = spec["mechanism"]
    if name not in MECHANISMS or name == "svt":
        raise InputError(f"--rounds: mechanism {name!r} is not one of "
                         f"{', '.join(m for m in MECHANISMS if m != 'svt')}")
    rows = np.asarray(spec["rows"])
    if rows.max() >= vote_set.queries:
        raise InputError(f"--rounds: rows up to {int(rows.max())} but {vote_set.path} has "
                         f"{vote_set.queries} queries")
    keys = set(parameter_names)
    parameters = {**defaults, **{key: value for key, value in spec.items() if key in keys}}
    student = None
    if name == "interactive":
        if "student" not in spec:
            raise InputError("--rounds: an interactive round needs a 'student' file")
        student = load_student(spec["student"], queries=vote_set.queries,
                               classes=vote_set.classes)
    mechanism = build_mechanism(name, teachers=vote_set.teachers, **parameters,
                                integer_votes=needs_integer_votes(name, parameters, vote_set))
    return Round(rows=rows, mechanism=mechanism, student=student)
