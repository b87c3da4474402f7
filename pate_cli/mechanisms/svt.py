"""SVT-PATE (math:mechanisms and math:svt): the sparse vector technique over vote margins,
replayed over the whole sequence of queries (its rounds end at unstable queries)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..decisions import SVT_HALTED, SVT_STABLE, SVT_UNSTABLE, Decisions
from ..inputs.rows import FirstRows, rows_read_once
from ..vote_rows import plurality_classes, row_width, vote_rows
from ..work_sizes import chunk_rows
from .domains import SVT_SCALE, Facts, finite, noise_scale, positive
from .noise import STREAM_SVT_QUERY, STREAM_SVT_THRESHOLD, NoiseSource


def distance_to_instability(votes) -> np.ndarray:
    """``max(0, ceil(m/2) - 1)``, ``m`` the plurality margin (math:mechanisms, SVT-PATE): votes
    that must change before the plurality label can. A zero block (math:sparse) competes with
    one of its classes (count 0)."""
    rows = vote_rows(votes)
    votes = rows.counts
    if rows.zeros:
        votes = np.concatenate((votes, np.zeros((len(rows), 1))), axis=1)
    top_two = -np.partition(-votes, 1, axis=1)[:, :2]
    margin = top_two[:, 0] - top_two[:, 1]
    return np.maximum(0.0, np.ceil(margin / 2.0) - 1.0)


def check_svt_sequence(outcome: np.ndarray, cutoff: int) -> None:
    """``ValueError`` unless the outcomes are stable/unstable until the ``cutoff``-th unstable
    query, then halted (math:mechanisms)."""
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


def given_svt_decisions(given: Decisions, plurality_class: np.ndarray,
                        start: int) -> Decisions:
    """Given decisions from position ``start``: stable queries release the plurality class
    (``ValueError`` naming the first row giving another label), the others nothing."""
    stable = given.code == SVT_STABLE
    wrong = np.flatnonzero(stable & (given.label >= 0) & (given.label != plurality_class))
    if wrong.size:
        raise ValueError(f"row {start + wrong[0] + 1}: SVT releases the plurality "
                         f"class {int(plurality_class[wrong[0]])}, not "
                         f"{int(given.label[wrong[0]])}")
    return Decisions(given.answered, np.where(stable, plurality_class, -1), given.code)


@dataclass(frozen=True)
class SVTPATE(Facts):
    """SVT-PATE (Bassily, Thakkar, Thakurta 2018; Liu et al., Algorithm 2; math:mechanisms,
    math:svt).

    Each query's distance to instability plus ``Laplace(2 lam)`` is compared with a noisy
    threshold ``w + Laplace(lam)``: above it the plain majority label is released; at or
    below it the query is unstable (abstain, fresh threshold); after ``cutoff`` unstable
    queries it halts. ``threshold`` None: chosen from delta; ``scale`` None: solved from
    ``target_epsilon``; ``cutoff`` ``"auto"`` (with ``target_epsilon``): the cut-off that
    answers the most queries (``analysis.svt``).
    """

    scale: float | None
    cutoff: int | str
    threshold: float | None = None
    target_epsilon: float | None = None
    name: str = field(default="svt", init=False)
    sequential: ClassVar[bool] = True

    def __post_init__(self):
        if self.scale is None and self.target_epsilon is None:
            raise ValueError("SVT needs --svt-scale or --target-epsilon")
        if self.scale is not None:
            object.__setattr__(self, "scale", noise_scale(self.scale, "SVT scale", SVT_SCALE))
        if self.target_epsilon is not None:
            object.__setattr__(self, "target_epsilon",
                               positive(self.target_epsilon, "target epsilon"))
        if isinstance(self.cutoff, str) and self.cutoff.lower() == "auto":
            if self.target_epsilon is None or self.scale is not None:
                raise ValueError("--svt-cutoff auto needs --target-epsilon (each cut-off's "
                                 "scale is solved for it), not --svt-scale")
            object.__setattr__(self, "cutoff", "auto")
        elif not (isinstance(self.cutoff, (int, np.integer)) and self.cutoff >= 1):
            raise ValueError(f"SVT cut-off must be a positive integer or 'auto', got "
                             f"{self.cutoff!r}")
        if self.threshold is not None:
            threshold = finite(self.threshold, "SVT threshold")
            if not threshold > 1.0:
                raise ValueError(f"SVT threshold must be above 1, got {threshold:g} (at w <= 1 "
                                 "the failure probability delta2 is at least 1/2)")
            object.__setattr__(self, "threshold", threshold)

    @property
    def params(self) -> dict:
        cutoff = self.cutoff if self.cutoff == "auto" else int(self.cutoff)
        return {"svt_scale": self.scale, "svt_cutoff": cutoff,
                "svt_threshold": self.threshold, "target_epsilon": self.target_epsilon}

    def replay(self, votes: np.ndarray, *, noise: NoiseSource, start: int = 0,
               student: np.ndarray | None = None, labels: bool = True) -> Decisions:
        """Run the whole sequence (``start`` 0): stable queries get the plurality label
        (``labels`` ignored: it costs no noise); outcomes ``SVT_STABLE``/``SVT_UNSTABLE``/
        ``SVT_HALTED``."""
        if start != 0:
            raise ValueError("SVT-PATE is replayed over the whole sequence at once (start 0)")
        count = votes.shape[0]
        made = [piece.decisions for piece in self.pieces(
            votes, FirstRows(count), count, noise=noise,
            chunk_size=chunk_rows(None, row_width(votes)))]
        return Decisions.joined(made) if made else self.replay_distances(
            np.empty(0), np.empty(0, dtype=np.int64), noise=noise)

    def pieces(self, votes, positions, queries: int, *, noise: NoiseSource,
               given: Decisions | None = None, chunk_size: int) -> Iterator[SvtPiece]:
        """The run over ``positions[:queries]``, ``chunk_size`` queries at a time: the seeded
        replay, or the ``given`` decisions; the same decisions however the queries are split."""
        met = 0
        for start in range(0, queries, chunk_size):
            stop = min(queries, start + chunk_size)
            block = rows_read_once(votes, positions, start, stop)
            distance = distance_to_instability(block)
            plurality_class = plurality_classes(block)
            made = (self.replay_distances(distance, plurality_class, noise=noise,
                                          start=start, met=met) if given is None
                    else given_svt_decisions(given.piece(start, stop), plurality_class, start))
            yield SvtPiece(start, stop, block.max(axis=1), plurality_class, distance, made, met)
            met += int(np.count_nonzero(made.code == SVT_UNSTABLE))

    def answers(self, pieces: Iterable[np.ndarray], *, noise: NoiseSource) -> int:
        """Queries the replay answers, from consecutive ``pieces`` of distances to instability
        (no labels; none read once halted)."""
        start = met = answered = 0
        for piece in pieces:
            if met >= int(self.cutoff):  # halted: nothing more is answered
                break
            made = self.replay_distances(piece, np.zeros(piece.size, dtype=np.int64),
                                         noise=noise, start=start, met=met)
            answered += int(np.count_nonzero(made.answered))
            met += int(np.count_nonzero(made.code == SVT_UNSTABLE))
            start += piece.size
        return answered

    def replay_distances(self, distance: np.ndarray, plurality_class: np.ndarray, *,
                         noise: NoiseSource, start: int = 0, met: int = 0) -> Decisions:
        """:meth:`replay` from distances and plurality classes, for queries from ``start``
        after ``met`` unstable ones; noise keyed by position (queries) and round (thresholds)
        makes it chunk-invariant (math:mechanisms)."""
        if self.scale is None or self.threshold is None or self.cutoff == "auto":
            raise ValueError("resolve the SVT scale, cut-off and threshold before replaying")
        count, cutoff = distance.shape[0], int(self.cutoff)
        if met >= cutoff:  # the run halted before these queries
            return Decisions(np.zeros(count, dtype=bool), np.full(count, -1, dtype=np.int64),
                             np.full(count, SVT_HALTED, dtype=np.int8))
        score = distance + 2.0 * self.scale * noise.draw(
            stream=STREAM_SVT_QUERY, kind="laplace", start=start, count=count)[:, 0]
        rounds = min(cutoff - met, count)
        thresholds = self.threshold + self.scale * noise.draw(
            stream=STREAM_SVT_THRESHOLD, kind="laplace", start=met, count=rounds)[:, 0]
        cutoff -= met  # the rounds left, numbered from 0 in ``thresholds``
        unstable = np.zeros(count, dtype=bool)
        position, met, window, run = 0, 0, 1024, 16
        while met < cutoff and position < count:
            # a run of unstable queries: query position + j meets threshold met + j; the run
            # ends at the first j whose score clears its threshold
            if score[position] <= thresholds[met]:
                span = min(count - position, cutoff - met, run)
                clears = score[position : position + span] > thresholds[met : met + span]
                first = int(np.argmax(clears)) if clears.any() else span
                unstable[position : position + first] = True
                position, met = position + first, met + first
                run = run * 2 if first == span else 16
                continue
            # stable: find the next unstable query in windows that double
            end = min(count, position + window)
            hits = np.flatnonzero(score[position:end] <= thresholds[met])
            if hits.size == 0:
                position, window = end, window * 2
                continue
            unstable[position + hits[0]] = True
            position, met, window = position + hits[0] + 1, met + 1, 1024
        halted_from = position if met == cutoff else count
        released = ~unstable
        released[halted_from:] = False
        outcome = np.full(count, SVT_STABLE, dtype=np.int8)
        outcome[halted_from:] = SVT_HALTED
        outcome[unstable] = SVT_UNSTABLE
        labels = np.where(released, plurality_class, -1)
        return Decisions(released, labels, outcome)


@dataclass(frozen=True)
class SvtPiece:
    """Queries ``start .. stop-1`` of a run (:meth:`SVTPATE.pieces`): their statistics,
    decisions, and ``met``, the unstable queries before them."""

    start: int
    stop: int
    plurality: np.ndarray
    plurality_class: np.ndarray
    distance: np.ndarray
    decisions: Decisions
    met: int
