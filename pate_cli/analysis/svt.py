"""SVT-PATE analysis: the seeded replay and the data-independent guarantee (MATH.md s.8).

The rounds compose in closed form (zCDP, ``accounting.svt.rdp_svt``); the guarantee is
converted over a continuous order (``accounting.svt.svt_epsilon``: never above the pure-DP
bound ``c eps0``, no order grid). Only with an external RDP curve (``--add-rdp``, known on
the grid alone) is the sum converted on the grid by ``rdp_to_epsilon`` (MATH.md s.6).

The replay goes a chunk at a time: the run keeps counts only, and its table is a second
pass, so memory is bounded by the chunk. The mechanism is sequential (a fresh threshold
after each unstable query, a halt after the cut-off's), but all it carries from one query
to the next is the number of unstable queries met so far: query noise is keyed by the
query's position and threshold noise by the round's number (MATH.md s.1), so a chunk
replayed from the carried count (``SVTPATE.replay_distances(start=, met=)``) decides what
the whole run decides, whatever the chunk size (:func:`svt_pieces`; the counts in
:class:`SvtTally`, the table's rows by :func:`svt_frames`). The cut-off
search of ``--svt-cutoff auto`` and the few-answers note read the distances to
instability from a temporary file (``analysis.svt_advice``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from types import SimpleNamespace

import numpy as np

from ..accounting.conversion import rdp_to_epsilon
from ..accounting.svt import (
    rdp_svt,
    rdp_svt_rounds,
    svt_epsilon,
    svt_guarantee,
    svt_scale_for_epsilon,
)
from ..decisions import SVT_HALTED, SVT_STABLE, SVT_UNSTABLE, Decisions
from ..inputs.rows import rows_read_once
from ..mechanisms import SVTPATE, NoiseSource, distance_to_instability
from ..sparse_rows import plurality_classes, row_width
from .per_query_stream import integral_maxima, stream_rows
from .result import AnalysisResult, QueryCounts, SvtPart, per_query_frame
from .setting import LabelCounts, grid_edge_notes, initial_carry, picked_rows
from .svt_advice import DistanceFile, few_answers_note, search_cutoff, search_note


def analyze_svt(votes: np.ndarray, mechanism: SVTPATE, *, positions: np.ndarray,
                teachers: float, accounting: str, delta: float, orders: np.ndarray,
                conversion: str, seed: int, labels: np.ndarray | None,
                initial_rdp: np.ndarray | None, salt: int, chunk_size: int,
                source: object | None, decisions=None,
                per_query: bool = True) -> AnalysisResult:
    """SVT-PATE: the replay, and the data-independent guarantee (MATH.md s.8).

    The guarantee depends on the cut-off, not on the replay, so ``accounting`` changes
    nothing here. Per query, ``epsilon_cumulative`` is the guarantee had the mechanism
    been stopped after that query (the rounds started so far, at most the cut-off); the
    reported ``epsilon`` is the guarantee at the cut-off. ``rdp_selection`` per query is
    each unstable query's share at the reported order: ``alpha eps0^2 / 2``, or ``eps0``
    when the pure-DP bound ``c eps0`` gave epsilon (order ``inf``, ``null`` in JSON).
    ``decisions`` (outcome codes ``SVT_*`` per analysed query, from ``--decisions``)
    replace the replay; they must follow the mechanism's rule (halted exactly after the
    cut-off's unstable query).

    The replay is counted a chunk at a time and no per-query array is kept
    (``result.counts``); ``per_query`` gives the result its table's pass
    (``result.frames``, :func:`svt_frames`).
    """
    queries = positions.size
    with DistanceFile(votes, positions, queries, chunk_size) as distances:
        return _analyze(votes, mechanism, distances, positions=positions, teachers=teachers,
                        accounting=accounting, delta=delta, orders=orders,
                        conversion=conversion, seed=seed, labels=labels,
                        initial_rdp=initial_rdp, salt=salt, chunk_size=chunk_size,
                        source=source, given=decisions, per_query=per_query)


def _analyze(votes, mechanism: SVTPATE, distances: DistanceFile, *, positions, teachers,
             accounting, delta, orders, conversion, seed, labels, initial_rdp, salt,
             chunk_size, source, given, per_query) -> AnalysisResult:
    queries = distances.size
    search = None
    if mechanism.cutoff == "auto":
        search = search_cutoff(mechanism, distances, delta=delta, conversion=conversion,
                               seed=seed, salt=salt)
        mechanism = replace(mechanism, cutoff=search.chosen)
    if mechanism.scale is None:
        scale = svt_scale_for_epsilon(epsilon=mechanism.target_epsilon,
                                      cutoff=mechanism.cutoff, queries=queries, delta=delta,
                                      orders=orders, conversion=conversion,
                                      threshold=mechanism.threshold)
        mechanism = SVTPATE(scale=scale, cutoff=mechanism.cutoff,
                            threshold=mechanism.threshold,
                            target_epsilon=mechanism.target_epsilon)
        target = True
    else:
        target = False
    guarantee = svt_guarantee(scale=mechanism.scale, cutoff=mechanism.cutoff, queries=queries,
                              delta=delta, orders=orders, conversion=conversion,
                              threshold=mechanism.threshold)
    if given is not None:
        check_svt_sequence(given.code, int(mechanism.cutoff))

    carry = initial_carry(initial_rdp, orders)
    total = carry + rdp_svt(scale=mechanism.scale, cutoff=mechanism.cutoff, orders=orders)
    if initial_rdp is None:
        # The guarantee alone: converted over a continuous order, never above c eps0.
        epsilon, order, bound = guarantee.epsilon, guarantee.order, guarantee.bound
        notes: tuple[str, ...] = ()
    else:
        # An external curve is known on the grid only: compose and convert there.
        epsilon, order = (float(x) for x in rdp_to_epsilon(total, orders=orders,
                                                          delta=guarantee.delta1,
                                                          conversion=conversion))
        bound = "rdp"
        notes = grid_edge_notes(orders, order, epsilon)
    at_order = float(rdp_svt_rounds(scale=mechanism.scale, rounds=mechanism.cutoff,
                                    orders=[order])[0])
    part = SvtPart(scale=mechanism.scale, cutoff=int(mechanism.cutoff),
                   threshold=guarantee.threshold, unstable=0,
                   delta1=guarantee.delta1, delta2=guarantee.delta2,
                   scale_from_target_epsilon=target, bound=bound,
                   cutoff_from_search=search is not None,
                   cutoffs_tried=None if search is None else tuple(
                       {"cutoff": c, "scale": lam, "answered": n}
                       for c, lam, n in search.tried))
    result = AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=teachers, classes=int(votes.shape[1]),
        rdp_total=total, epsilon=epsilon, order=order,
        epsilon_data_independent=epsilon, order_data_independent=order, answered_total=0.0,
        rdp_at_order={"selection": at_order, "answer": 0.0}, label_accuracy=None,
        source=source,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float),
        svt=part)

    # The replay, a chunk at a time, counted.
    run = run_columns(result, salt=salt)
    tally = SvtTally(guarantee.threshold, None if labels is None else np.asarray(labels),
                     positions)
    for piece in svt_pieces(votes, positions, queries, mechanism=run["mechanism"],
                            noise=run["noise"], given=given, chunk_size=chunk_size):
        tally.add(piece)

    if search is not None:
        notes += (search_note(search),)
    few = few_answers_note(mechanism, distances, tally.answered,
                           threshold=guarantee.threshold, halted_at=tally.halted_at,
                           largest=tally.largest, passing=tally.passing, delta=delta,
                           conversion=conversion, target=target)
    if few is not None:
        notes += (few,)
    result = replace(result, answered_total=float(tally.answered),
                     label_accuracy=tally.labels.accuracy(labels is not None)[0],
                     warnings=notes, svt=replace(part, unstable=tally.unstable))
    query_index, reordered = picked_rows(positions, queries)
    counts = QueryCounts(queries=queries, labels_output=tally.labels.output, outcomes=None,
                         reordered=reordered, correct=tally.labels.correct)
    result = replace(result, counts=counts, query_index=query_index)
    if per_query:
        result = replace(result, frames=partial(svt_frames, votes=votes, positions=positions,
                                                given=given, salt=salt))
    return result


def check_svt_sequence(outcome: np.ndarray, cutoff: int) -> None:
    """SVT's outcomes in order can only be: stable/unstable until the ``cutoff``-th
    unstable query, then halted on every later one (MATH.md s.1). ``ValueError``."""
    unstable = np.cumsum(outcome == SVT_UNSTABLE)
    halted = outcome == SVT_HALTED
    before = np.concatenate([[0], unstable[:-1]])
    early = np.flatnonzero(halted & (before < cutoff))
    if early.size:
        raise ValueError(f"row {early[0] + 1}: halted after {int(before[early[0]])} unstable "
                         f"queries, but the cut-off is {cutoff}")
    late = np.flatnonzero(~halted & (before >= cutoff))
    if late.size:
        raise ValueError(f"row {late[0] + 1}: SVT halts after {cutoff} unstable queries, so "
                         "every later query is 'halted'")


@dataclass(frozen=True)
class SvtPiece:
    """The analysed queries ``start .. stop-1``: their votes' statistics, the decisions
    made (or given) and ``met``, the unstable queries before them."""

    start: int
    stop: int
    plurality: np.ndarray
    plurality_class: np.ndarray
    distance: np.ndarray
    decisions: Decisions
    met: int


def svt_pieces(votes, positions, queries: int, *, mechanism: SVTPATE, noise: NoiseSource,
               given: Decisions | None, chunk_size: int) -> Iterator[SvtPiece]:
    """The run over ``positions[:queries]`` of ``votes``, ``chunk_size`` queries at a
    time: the seeded replay of ``mechanism`` (scale, cut-off and threshold resolved), or
    the ``given`` decisions (outcome codes ``SVT_*``, checked against the cut-off by the
    caller), whose stable queries release the plurality class (``ValueError`` naming the
    first row that gives another label)."""
    met = 0
    for start in range(0, queries, chunk_size):
        stop = min(queries, start + chunk_size)
        block = rows_read_once(votes, positions, start, stop)
        distance = distance_to_instability(block)
        plurality_class = plurality_classes(block)
        if given is None:
            made = mechanism.replay_distances(distance, plurality_class, noise=noise,
                                              start=start, met=met)
        else:
            made = _given_piece(given, start, stop, plurality_class)
        yield SvtPiece(start, stop, block.max(axis=1), plurality_class, distance, made, met)
        met += int(np.count_nonzero(made.code == SVT_UNSTABLE))


def _given_piece(given: Decisions, start: int, stop: int,
                 plurality_class: np.ndarray) -> Decisions:
    """Given decisions of queries ``start .. stop-1``, stable ones labelled with their
    plurality class."""
    piece = given.piece(start, stop)
    labels = piece.label
    stable = piece.code == SVT_STABLE
    wrong = np.flatnonzero(stable & (labels >= 0) & (labels != plurality_class))
    if wrong.size:
        raise ValueError(f"row {start + wrong[0] + 1}: SVT releases the plurality class "
                         f"{int(plurality_class[wrong[0]])}, not {int(labels[wrong[0]])}")
    return Decisions(piece.answered, np.where(stable, plurality_class, -1), piece.code)


class SvtTally:
    """What a run's summary needs of its pieces: answers, unstable queries, the first
    halted query, the label counts, and (for the few-answers note) the largest distance
    and the number of distances above ``threshold``."""

    def __init__(self, threshold: float, truth: np.ndarray | None, positions):
        self.threshold, self.truth, self.positions = threshold, truth, positions
        self.answered = self.unstable = self.passing = 0
        self.halted_at: int | None = None
        self.largest = -np.inf
        self.labels = LabelCounts(False)

    def add(self, piece: SvtPiece) -> None:
        made = piece.decisions
        self.answered += int(np.count_nonzero(made.answered))
        self.unstable += int(np.count_nonzero(made.code == SVT_UNSTABLE))
        halted = np.flatnonzero(made.code == SVT_HALTED)
        if self.halted_at is None and halted.size:
            self.halted_at = piece.start + int(halted[0])
        if piece.distance.size:
            self.largest = max(self.largest, float(piece.distance.max()))
        self.passing += int(np.count_nonzero(piece.distance > self.threshold))
        truth = (None if self.truth is None
                 else self.truth[np.asarray(self.positions[piece.start : piece.stop])])
        self.labels.add(made.label, None, truth)


@dataclass(frozen=True)
class RoundsEpsilon:
    """The guarantee had the mechanism stopped after ``k`` rounds, for each ``k``: over a
    continuous order (``svt_epsilon``), or on the grid with an external curve ``carry``
    (``rdp_to_epsilon``, MATH.md s.6). Each value depends on its own ``k`` only."""

    scale: float
    delta1: float
    conversion: str
    orders: np.ndarray
    carry: np.ndarray | None

    def __call__(self, rounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.carry is None:
            epsilon, order, _ = svt_epsilon(scale=self.scale, rounds=rounds,
                                            delta=self.delta1, conversion=self.conversion)
            return epsilon, order
        curves = self.carry + rdp_svt_rounds(scale=self.scale, rounds=rounds,
                                             orders=self.orders)
        epsilon, order = rdp_to_epsilon(curves, orders=self.orders, delta=self.delta1,
                                        conversion=self.conversion)
        return np.asarray(epsilon), np.asarray(order)


def piece_columns(piece: SvtPiece, *, positions, cutoff: int,
                  epsilon_of: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                  per_round: float) -> SimpleNamespace:
    """A piece's rows of the per-query table (``result.per_query_frame``'s fields):
    ``epsilon_cumulative`` is the guarantee of the rounds started so far (at most the
    cut-off), ``rdp_selection`` each unstable query's share ``per_round`` at the reported
    order; the extra columns ``distance`` and ``unstable``."""
    count = piece.stop - piece.start
    unstable = piece.decisions.code == SVT_UNSTABLE
    rounds = np.minimum(cutoff, piece.met + np.cumsum(unstable) + 1)
    distinct, index = np.unique(rounds, return_inverse=True)
    eps_rounds, order_rounds = epsilon_of(distinct)
    return SimpleNamespace(
        accounting=None, queries=count,
        query_index=np.asarray(positions[piece.start : piece.stop], dtype=np.int64),
        plurality=piece.plurality, plurality_class=piece.plurality_class,
        answered=piece.decisions.answered.astype(np.float64), label=piece.decisions.label,
        log_q=np.full(count, np.nan), log_pr_answered=np.zeros(count),
        epsilon_query=np.full(count, np.nan),
        epsilon_cumulative=eps_rounds[index.reshape(-1)],
        order_cumulative=order_rounds[index.reshape(-1)],
        rdp_selection=np.where(unstable, per_round, 0.0), rdp_answer=np.zeros(count),
        outcome=None,
        columns={"distance": piece.distance, "unstable": unstable.astype(np.int64)})


def run_columns(result, *, salt: int) -> dict:
    """What :func:`piece_columns` needs of an analysed run ``result``, and the replayed
    mechanism and noise (the threshold resolved: ``result.svt.threshold``)."""
    mechanism, svt = result.mechanism, result.svt
    return dict(
        mechanism=replace(mechanism, threshold=svt.threshold),
        noise=NoiseSource(result.seed, salt=salt), cutoff=int(mechanism.cutoff),
        epsilon_of=RoundsEpsilon(
            scale=svt.scale, delta1=svt.delta1, conversion=result.conversion,
            orders=result.orders, carry=None if result.initial_rdp is None
            else initial_carry(result.initial_rdp, result.orders)),
        per_round=float(rdp_svt_rounds(scale=svt.scale, rounds=1,
                                       orders=[result.order])[0]))


def svt_frames(result, *, votes, positions, given: Decisions | None = None, salt: int = 0,
               chunk_size: int | None = None) -> Iterator:
    """The run's per-query table as DataFrames of one chunk each, by a second pass over
    ``votes`` (``result``: the analysis, which counted the replay;
    the other arguments those it was analysed with). ``chunk_size`` (rows; default
    ``per_query_stream.stream_rows``'s) changes no byte."""
    queries = result.queries
    chunk_size = stream_rows(chunk_size, row_width(votes), 1)
    run = run_columns(result, salt=salt)
    integral = integral_maxima(votes, positions, queries, chunk_size)
    for piece in svt_pieces(votes, positions, queries, mechanism=run["mechanism"],
                            noise=run["noise"], given=given, chunk_size=chunk_size):
        table = piece_columns(piece, positions=positions, cutoff=run["cutoff"],
                              epsilon_of=run["epsilon_of"], per_round=run["per_round"])
        table.accounting = result.accounting
        yield per_query_frame(table, integral=integral)
