"""A run's decisions (``pate_cli.decisions.Decisions``, CLI.md "Decisions", MATH.md
s.7): out of a result's per-query table (``--write-decisions``, ``label()``) and in from
a checked decisions file or value (``--decisions``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

import numpy as np

from ..decisions import (
    INTERACTIVE_NAMES,
    OUTCOME_STUDENT,
    SVT_HALTED,
    SVT_STABLE,
    SVT_UNSTABLE,
    Decisions,
    codes_of,
)
from ..errors import InputError, OptionError
from ..inputs import VoteSet
from ..inputs.decisions import check_decisions, decisions_from_array, load_decisions
from ..mechanisms import Mechanism
from .result import DecisionsPart
from .setting import analysed_positions


def decisions_of(result) -> Decisions:
    """The decisions an analysis made (or accounted), up to where labelling stopped, read
    from its per-query table's stream (:func:`streamed_decisions`)."""
    result.require_columns("the decisions")
    pieces = list(streamed_decisions(result))
    code = [piece.code for piece in pieces if piece.code is not None]
    return Decisions(*(np.concatenate([getattr(piece, key) for piece in pieces])
                       for key in ("answered", "label")),
                     np.concatenate(code) if code else None,
                     np.concatenate([piece.query for piece in pieces]),
                     result.mechanism.name)


def streamed_decisions(result) -> Iterator[Decisions]:
    """The decisions of a result analysed with ``per_query="stream"``, a piece at a time
    from its table's stream (:func:`decisions_of_frames`), up to where labelling stopped
    (an individualized run's stop, as :func:`decisions_of`)."""
    pieces = decisions_of_frames(result.iter_frames(), result.mechanism.name)
    stop = None if result.groups is None else result.groups.stopped_at
    if stop is None:
        yield from pieces
        return
    done = 0
    try:
        for piece in pieces:  # the first piece always (a stop at 0: its empty head)
            yield piece.head(stop - done)
            done += len(piece)
            if done >= stop:
                break
    finally:  # the rest of the table's pass is not formed (its threads stopped here)
        pieces.close()


def decisions_of_frames(frames: Iterable, mechanism: str) -> Iterator[Decisions]:
    """The decisions of a single run's per-query table (``result.iter_frames()``), a
    piece at a time: what :func:`decisions_of` gives whole, with memory bounded by the
    piece (``--write-decisions`` of a totals-only run)."""
    for frame in frames:
        query = frame["query"].to_numpy(dtype=np.int64)
        label = frame["label"].fillna(-1).to_numpy(dtype=np.int64)
        known = {"query": query, "mechanism": mechanism}
        if "outcome" in frame:  # Interactive-GNMax: its codes by their table names
            code = codes_of(frame["outcome"].to_numpy(dtype=str), INTERACTIVE_NAMES)
            yield Decisions.of_codes(code, label, **known)
        elif mechanism == "svt":  # from the ``unstable`` column
            unstable = frame["unstable"].to_numpy(dtype=bool)
            yield Decisions.of_codes(np.where(label >= 0, SVT_STABLE, np.where(
                unstable, SVT_UNSTABLE, SVT_HALTED)), label, **known)
        else:
            yield Decisions(label >= 0, label, **known)


def read_given_decisions(decisions, mechanism: Mechanism, vote_set: VoteSet,
                     indices: np.ndarray | None, queries: int | None, *, partial: bool,
                     student: np.ndarray | None = None) -> tuple[Decisions, DecisionsPart]:
    """``--decisions``: read and check the file (or take the value) against the run.

    Interactive: a ``student`` outcome needs the student's confidence above gamma and
    releases the student's own label (``argmax p``)."""
    if isinstance(decisions, Decisions):
        table = replace(decisions, label=np.asarray(decisions.label, dtype=np.int64))
    elif isinstance(decisions, np.ndarray):
        table = decisions_from_array(decisions)
    else:
        table = load_decisions(decisions)
    rows_total = vote_set.queries
    try:
        positions = analysed_positions(rows_total, indices, queries)
    except ValueError as error:
        raise OptionError(str(error)) from None
    checked = check_decisions(table, mechanism=mechanism.name, classes=vote_set.classes,
                              positions=positions, rows_total=rows_total, partial=partial)
    if student is not None:
        rows = np.asarray(student)[checked.query]
        own = checked.code == OUTCOME_STUDENT
        confidence = float(getattr(mechanism, "confidence", 0.0))
        wrong = np.flatnonzero(own & ((rows.max(axis=1) <= confidence)
                                      | ((checked.label >= 0)
                                         & (checked.label != np.argmax(rows, axis=1)))))
        if wrong.size:
            row = int(wrong[0])
            raise InputError(f"{table.path or '<decisions>'}: row {row + 1}: outcome "
                             "'student' needs the "
                             f"student's own label ({int(np.argmax(rows[row]))}) with "
                             f"confidence above {confidence:g} (it has "
                             f"{float(rows[row].max()):g})")
        checked = replace(checked, label=np.where(own, np.argmax(rows, axis=1), checked.label))
    return checked, DecisionsPart(path=table.path, sha256=table.sha256 or None,
                                  rows=len(checked))
