"""SVT-PATE analysis: the seeded replay, the data-independent guarantee (MATH.md s.8), the
cut-off search of ``--svt-cutoff auto`` and the note of a run that answers little.

The rounds compose in closed form (zCDP, ``accounting.svt.rdp_svt``); the guarantee is
converted over a continuous order (``accounting.svt.svt_epsilon``: never above the pure-DP
bound ``c eps0``, no order grid). Only with an external RDP curve (``--add-rdp``, known on
the grid alone) is the sum converted on the grid by ``rdp_to_epsilon`` (MATH.md s.6).

The replay goes a chunk at a time: the run keeps counts only, and its table is a second
pass (:func:`svt_frames`). The mechanism is sequential, but all it carries from one query
to the next is the number of unstable queries met so far: query noise is keyed by the
query's position and threshold noise by the round's number (MATH.md s.1), so a chunk
replayed from the carried count decides what the whole run decides (:func:`svt_pieces`).

The search and the note see the votes only through the distances to instability
(``accounting.svt_tuning``), computed once into a :class:`DistanceFile`: computing them
for every pass would read the vote file some 20 to 40 times, keeping them would hold 8
bytes per query. The search looks at the votes: its choice is not part of the reported
epsilon (MATH.md s.12 prices such searches; see ``--tuning``), and the run says so.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial
from types import SimpleNamespace
from typing import IO

import numpy as np

from ..accounting.composition import initial_carry
from ..accounting.conversion import grid_edge_notes, rdp_to_epsilon
from ..accounting.svt import (
    rdp_svt,
    rdp_svt_rounds,
    svt_epsilon,
    svt_guarantee,
    svt_scale_for_epsilon,
)
from ..accounting.svt_tuning import (
    FEW_FRACTION,
    answers_are_few,
    cutoff_candidates,
    distance_pieces,
    suggest_scale,
)
from ..decisions import SVT_HALTED, SVT_STABLE, SVT_UNSTABLE, Decisions, LabelCounts
from ..inputs.rows import integral_maxima, picked_rows, rows_read_once
from ..mechanisms import SVTPATE, NoiseSource, distance_to_instability
from ..sparse_rows import plurality_classes, row_width
from ..work_sizes import stream_rows
from .result import AnalysisResult, QueryCounts, SvtPart, per_query_frame


def analyze_svt(votes: np.ndarray, mechanism: SVTPATE, *, positions: np.ndarray,
                teachers: float, accounting: str, delta: float, orders: np.ndarray,
                conversion: str, seed: int, labels: np.ndarray | None,
                initial_rdp: np.ndarray | None, salt: int, chunk_size: int,
                source: object | None, decisions=None,
                per_query: bool = True) -> AnalysisResult:
    """SVT-PATE: the replay, and the data-independent guarantee (MATH.md s.8).

    The guarantee depends on the cut-off, not on the replay, so ``accounting`` changes
    nothing here. The reported ``epsilon`` is the guarantee at the cut-off; ``decisions``
    (outcome codes ``SVT_*`` per analysed query, from ``--decisions``) replace the replay
    and must follow the mechanism's rule (halted exactly after the cut-off's unstable
    query). The replay is counted a chunk at a time (``result.counts``); ``per_query``
    gives the result its table's pass (``result.frames``).
    """
    queries = positions.size
    with DistanceFile(votes, positions, queries, chunk_size) as distances:
        tried = None
        if mechanism.cutoff == "auto":
            tried = search_cutoff(mechanism, distances, delta=delta, conversion=conversion,
                                  seed=seed, salt=salt)
            best = max(answered for _, _, answered in tried)
            chosen = next(cutoff for cutoff, _, answered in tried if answered == best)
            mechanism = replace(mechanism, cutoff=chosen)
        target = mechanism.scale is None
        if target:
            mechanism = replace(mechanism, scale=svt_scale_for_epsilon(
                epsilon=mechanism.target_epsilon, cutoff=mechanism.cutoff, queries=queries,
                delta=delta, orders=orders, conversion=conversion,
                threshold=mechanism.threshold))
        guarantee = svt_guarantee(scale=mechanism.scale, cutoff=mechanism.cutoff,
                                  queries=queries, delta=delta, orders=orders,
                                  conversion=conversion, threshold=mechanism.threshold)
        if decisions is not None:
            check_svt_sequence(decisions.code, int(mechanism.cutoff))
        total = initial_carry(initial_rdp, orders) + rdp_svt(
            scale=mechanism.scale, cutoff=mechanism.cutoff, orders=orders)
        if initial_rdp is None:
            # The guarantee alone: converted over a continuous order, never above c eps0.
            epsilon, order, bound = guarantee.epsilon, guarantee.order, guarantee.bound
            notes: tuple[str, ...] = ()
        else:
            # An external curve is known on the grid only: compose and convert there.
            epsilon, order = (float(x) for x in rdp_to_epsilon(
                total, orders=orders, delta=guarantee.delta1, conversion=conversion))
            bound = "rdp"
            notes = grid_edge_notes(orders, order, epsilon)

        # The replay, a chunk at a time, counted.
        answered = unstable = passing = 0
        halted_at: int | None = None
        largest = -np.inf
        counts = LabelCounts(False)
        truth = None if labels is None else np.asarray(labels)
        for piece in svt_pieces(votes, positions, queries,
                                mechanism=replace(mechanism, threshold=guarantee.threshold),
                                noise=NoiseSource(seed, salt=salt), given=decisions,
                                chunk_size=chunk_size):
            made = piece.decisions
            answered += int(np.count_nonzero(made.answered))
            unstable += int(np.count_nonzero(made.code == SVT_UNSTABLE))
            halted = np.flatnonzero(made.code == SVT_HALTED)
            if halted_at is None and halted.size:
                halted_at = piece.start + int(halted[0])
            largest = max(largest, float(piece.distance.max()))
            passing += int(np.count_nonzero(piece.distance > guarantee.threshold))
            counts.add(made.label, None, None if truth is None
                       else truth[np.asarray(positions[piece.start : piece.stop])])

        if tried is not None:
            notes += (f"--svt-cutoff auto chose cut-off {mechanism.cutoff} ({best} answers; "
                      f"{len(tried)} cut-offs tried, 1 to {tried[-1][0]}) by replaying these "
                      "votes; epsilon does not include the cost of that choice (see --tuning)",)
        few = few_answers_note(mechanism, distances, answered, threshold=guarantee.threshold,
                               halted_at=halted_at, largest=largest, passing=passing,
                               delta=delta, conversion=conversion, target=target)
    query_index, reordered = picked_rows(positions, queries)
    return AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=teachers, classes=int(votes.shape[1]),
        rdp_total=total, epsilon=epsilon, order=order,
        epsilon_data_independent=epsilon, order_data_independent=order,
        answered_total=float(answered),
        rdp_at_order={"selection": float(rdp_svt_rounds(
            scale=mechanism.scale, rounds=mechanism.cutoff, orders=[order])[0]), "answer": 0.0},
        label_accuracy=counts.accuracy(labels is not None)[0], source=source,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float),
        warnings=notes if few is None else notes + (few,),
        svt=SvtPart(scale=mechanism.scale, cutoff=int(mechanism.cutoff),
                    threshold=guarantee.threshold, unstable=unstable,
                    delta1=guarantee.delta1, delta2=guarantee.delta2,
                    scale_from_target_epsilon=target, bound=bound,
                    cutoff_from_search=tried is not None,
                    cutoffs_tried=None if tried is None else tuple(
                        {"cutoff": c, "scale": lam, "answered": n} for c, lam, n in tried)),
        counts=QueryCounts(queries=queries, labels_output=counts.output, outcomes=None,
                           reordered=reordered, correct=counts.correct),
        query_index=query_index,
        frames=partial(svt_frames, votes=votes, positions=positions, given=decisions,
                       salt=salt) if per_query else None)


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
    the ``given`` decisions, whose stable queries release the plurality class
    (``ValueError`` naming the first row that gives another label)."""
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
            piece = given.piece(start, stop)
            stable = piece.code == SVT_STABLE
            wrong = np.flatnonzero(stable & (piece.label >= 0)
                                   & (piece.label != plurality_class))
            if wrong.size:
                raise ValueError(f"row {start + wrong[0] + 1}: SVT releases the plurality "
                                 f"class {int(plurality_class[wrong[0]])}, not "
                                 f"{int(piece.label[wrong[0]])}")
            made = Decisions(piece.answered, np.where(stable, plurality_class, -1), piece.code)
        yield SvtPiece(start, stop, block.max(axis=1), plurality_class, distance, made, met)
        met += int(np.count_nonzero(made.code == SVT_UNSTABLE))


def svt_frames(result, *, votes, positions, given: Decisions | None = None, salt: int = 0,
               chunk_size: int | None = None) -> Iterator:
    """The run's per-query table as DataFrames of one chunk each, by a second pass over
    ``votes`` (``result``: the analysis, which counted the replay; the other arguments
    those it was analysed with; ``chunk_size`` changes no byte).

    ``epsilon_cumulative`` is the guarantee had the mechanism stopped after that query
    (the rounds started so far, at most the cut-off): over a continuous order, or on the
    grid with an external curve (MATH.md s.6). ``rdp_selection`` is each unstable query's
    share at the reported order: ``alpha eps0^2 / 2``, or ``eps0`` when the pure-DP bound
    gave epsilon (order ``inf``). Extra columns: ``distance`` and ``unstable``.
    """
    svt, queries, orders = result.svt, result.queries, result.orders
    chunk_size = stream_rows(chunk_size, row_width(votes), 1)
    carry = None if result.initial_rdp is None else initial_carry(result.initial_rdp, orders)
    per_round = float(rdp_svt_rounds(scale=svt.scale, rounds=1, orders=[result.order])[0])
    integral = integral_maxima(votes, positions, queries, chunk_size)
    for piece in svt_pieces(votes, positions, queries,
                            mechanism=replace(result.mechanism, threshold=svt.threshold),
                            noise=NoiseSource(result.seed, salt=salt), given=given,
                            chunk_size=chunk_size):
        count = piece.stop - piece.start
        unstable = piece.decisions.code == SVT_UNSTABLE
        rounds, index = np.unique(np.minimum(svt.cutoff, piece.met + np.cumsum(unstable) + 1),
                                  return_inverse=True)
        if carry is None:
            epsilon, order, _ = svt_epsilon(scale=svt.scale, rounds=rounds, delta=svt.delta1,
                                            conversion=result.conversion)
        else:
            epsilon, order = rdp_to_epsilon(
                carry + rdp_svt_rounds(scale=svt.scale, rounds=rounds, orders=orders),
                orders=orders, delta=svt.delta1, conversion=result.conversion)
        index = index.reshape(-1)
        yield per_query_frame(SimpleNamespace(
            accounting=result.accounting, queries=count,
            query_index=np.asarray(positions[piece.start : piece.stop], dtype=np.int64),
            plurality=piece.plurality, plurality_class=piece.plurality_class,
            answered=piece.decisions.answered.astype(np.float64), label=piece.decisions.label,
            log_q=np.full(count, np.nan), log_pr_answered=np.zeros(count),
            epsilon_query=np.full(count, np.nan),
            epsilon_cumulative=np.asarray(epsilon)[index],
            order_cumulative=np.asarray(order)[index],
            rdp_selection=np.where(unstable, per_round, 0.0), rdp_answer=np.zeros(count),
            outcome=None,
            columns={"distance": piece.distance, "unstable": unstable.astype(np.int64)}),
            integral=integral)


class DistanceFile:
    """The distances to instability of the analysed queries ``positions[:queries]``,
    computed ``chunk_size`` rows at a time into an unnamed temporary file on the first
    read (never if no pass asks for them), then sliced like an array with plain reads:
    the file's pages are the kernel's cache, not this process's memory. A context
    manager: the file is closed, and so deleted, on exit."""

    def __init__(self, votes, positions, queries: int, chunk_size: int):
        self.votes, self.positions = votes, positions
        self.size, self.chunk_size = int(queries), int(chunk_size)
        self._file: IO[bytes] | None = None

    def __enter__(self) -> DistanceFile:
        return self

    def __exit__(self, *_) -> None:
        if self._file is not None:
            self._file.close()

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, rows: slice) -> np.ndarray:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="pate-svt-distances-")
            for start in range(0, self.size, self.chunk_size):
                block = rows_read_once(self.votes, self.positions, start,
                                       min(self.size, start + self.chunk_size))
                self._file.write(distance_to_instability(block).tobytes())
        start, stop, _ = rows.indices(self.size)
        self._file.seek(8 * start)
        piece = np.empty(stop - start)
        read = self._file.readinto(memoryview(piece).cast("B"))
        if read != piece.nbytes:
            raise OSError(f"the temporary file of SVT distances ended after "
                          f"{start + read // 8} of {self.size} values")
        return piece


def search_cutoff(mechanism: SVTPATE, distances: DistanceFile, *, delta: float,
                  conversion: str, seed: int,
                  salt: int) -> list[tuple[int, float, int]]:
    """``(cutoff, scale, answered)`` of each cut-off tried at ``target_epsilon``: its scale
    solved for the target as a fixed cut-off's is (a cut-off no scale in the solver's
    range serves is skipped; ``ValueError`` if none is left), its seeded replay's answers
    (a piece at a time from the unstable count of those before it; no labels formed).
    The run keeps the one that answers the most queries (the smallest on a tie)."""
    queries = len(distances)
    tried = []
    for cutoff in cutoff_candidates(queries):
        try:
            scale = svt_scale_for_epsilon(epsilon=mechanism.target_epsilon, cutoff=cutoff,
                                          queries=queries, delta=delta, conversion=conversion,
                                          threshold=mechanism.threshold)
        except ValueError:
            continue
        threshold = (mechanism.threshold if mechanism.threshold is not None else
                     svt_guarantee(scale=scale, cutoff=cutoff, queries=queries, delta=delta,
                                   conversion=conversion).threshold)
        candidate = SVTPATE(scale=scale, cutoff=cutoff, threshold=threshold)
        noise = NoiseSource(seed, salt=salt)
        start = met = answered = 0
        for piece in distance_pieces(distances):
            if met >= cutoff:  # halted: nothing more is answered
                break
            made = candidate.replay_distances(piece, np.zeros(piece.size, dtype=np.int64),
                                              noise=noise, start=start, met=met)
            answered += int(np.count_nonzero(made.answered))
            met += int(np.count_nonzero(made.code == SVT_UNSTABLE))
            start += piece.size
        tried.append((cutoff, scale, answered))
    if not tried:
        raise ValueError(f"no SVT cut-off reaches target epsilon "
                         f"{mechanism.target_epsilon:g} with a scale in [1e-6, 1e9]")
    return tried


def few_answers_note(mechanism: SVTPATE, distances: DistanceFile, answered: int, *,
                     threshold: float, halted_at: int | None, largest: float, passing: int,
                     delta: float, conversion: str, target: bool) -> str | None:
    """The one note of a run that answered nothing or few queries (None otherwise): the
    threshold used against the largest distance to instability (``passing`` queries are
    above it), where the cut-off halted the run (``halted_at``), and which
    ``--svt-scale`` / ``--target-epsilon`` would answer."""
    queries = len(distances)
    if queries == 0 or not answers_are_few(answered, queries):
        return None
    if passing == 0:
        why = (f"its threshold w = {threshold:.4g} is above the largest distance to "
               f"instability on this file, {largest:g} (half the vote margin, less 1)")
    else:
        why = (f"{passing} queries have a distance to instability above its threshold w = "
               f"{threshold:.4g} (the largest is {largest:g}), but each query at or below "
               "w (after noise) uses one of the cut-off's rounds")
    halt = ("" if halted_at is None else
            f"; the cut-off {mechanism.cutoff} halted it before query {halted_at}")
    head = f"SVT-PATE answered {answered} of {queries} queries: {why}{halt}"
    goal = 1 if answered == 0 else math.ceil(FEW_FRACTION * queries)
    what = "at least one query" if goal == 1 else f"about {goal} queries"
    found = suggest_scale(distances, cutoff=int(mechanism.cutoff), threshold=mechanism.threshold,
                          delta=delta, conversion=conversion, goal=goal, largest=largest)
    if found is None:
        fix = (f"lower --svt-threshold below {largest:g}" if mechanism.threshold is not None
               else "no --svt-scale does with this cut-off: try a larger --svt-cutoff or "
                    "another mechanism")
        return f"{head}. To answer {what}, {fix} (README: SVT-PATE)"
    scale, epsilon = found
    if scale >= mechanism.scale:
        return (f"{head}. The noiseless rule answers {what} at this scale; this seed's noise "
                "did not (try a smaller --svt-scale)")
    knob = (f"--target-epsilon {epsilon:g} (scale {scale:g})" if target else
            f"--svt-scale {scale:g} (epsilon {epsilon:g}) or --target-epsilon {epsilon:g}")
    return (f"{head}. At cut-off {mechanism.cutoff}, {knob} would answer {what} (noiseless "
            "estimate with a 2-sd noise margin); SVT-PATE needs vote margins far above its "
            "noise (README: SVT-PATE)")
