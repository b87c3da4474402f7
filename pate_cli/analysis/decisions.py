"""A run's decisions as a value: out of a result (``--write-decisions``, ``label()``) and
in from a checked decisions table (``--decisions``), CLI.md "Decisions", MATH.md s.7.

Outcome names: ``answered``/``refused`` (LNMax, GNMax, Confident; Interactive's teacher
answers and abstentions), ``student`` (Interactive: the student's own label reinforced),
``stable``/``unstable``/``halted`` (SVT-PATE).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

import numpy as np

from ..errors import InputError, OptionError
from ..inputs import VoteSet
from ..inputs.decisions import (
    LabelDecisions,
    check_decisions,
    decisions_from_array,
    load_decisions,
)
from ..mechanisms import (
    OUTCOME_ABSTAIN,
    OUTCOME_STUDENT,
    OUTCOME_TEACHER,
    SVT_HALTED,
    SVT_STABLE,
    SVT_UNSTABLE,
    Decisions,
    Mechanism,
)
from .result import DecisionsPart
from .setting import analysed_positions

_INTERACTIVE = {"refused": OUTCOME_ABSTAIN, "answered": OUTCOME_TEACHER,
                "student": OUTCOME_STUDENT}
_SVT = {"stable": SVT_STABLE, "unstable": SVT_UNSTABLE, "halted": SVT_HALTED}


def decisions_of(result) -> LabelDecisions:
    """The decisions an analysis made (or accounted), up to where labelling stopped, read
    from its per-query table's stream (:func:`streamed_decisions`)."""
    result.require_columns("the decisions")
    pieces = list(streamed_decisions(result))
    return LabelDecisions(result.mechanism.name,
                          *(np.concatenate([getattr(piece, key) for piece in pieces])
                            for key in ("query", "outcome", "label")))


def streamed_decisions(result) -> Iterator[LabelDecisions]:
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
            keep = min(len(piece), stop - done)
            yield piece if keep == len(piece) else LabelDecisions(
                piece.mechanism, piece.query[:keep], piece.outcome[:keep], piece.label[:keep])
            done += len(piece)
            if done >= stop:
                break
    finally:  # the rest of the table's pass is not formed (its threads stopped here)
        pieces.close()


# Interactive-GNMax's outcome names in the per-query table -> its decisions' names.
_TABLE_OUTCOMES = {"abstain": "refused", "teacher": "answered", "student": "student"}


def decisions_of_frames(frames: Iterable, mechanism: str) -> Iterator[LabelDecisions]:
    """The decisions of a single run's per-query table (``result.iter_frames()``), a
    piece at a time: what :func:`decisions_of` gives whole, with memory bounded by the
    piece (``--write-decisions`` of a totals-only run)."""
    for frame in frames:
        query = frame["query"].to_numpy(dtype=np.int64)
        label = frame["label"].fillna(-1).to_numpy(dtype=np.int64)
        if "outcome" in frame:
            outcome = frame["outcome"].map(_TABLE_OUTCOMES).to_numpy(dtype=str)
        elif mechanism == "svt":  # as decisions_of: from the ``unstable`` column
            unstable = frame["unstable"].to_numpy(dtype=bool)
            outcome = np.where(label >= 0, "stable", np.where(unstable, "unstable", "halted"))
        else:
            outcome = np.where(label >= 0, "answered", "refused")
        yield LabelDecisions(mechanism, query, np.asarray(outcome, dtype=str), label)


def given_decisions(outcome: np.ndarray, label: np.ndarray, mechanism: str) -> Decisions:
    """A checked table's outcome names and labels as the mechanism protocol's
    ``Decisions`` (``answered``: the answer step ran / a stable query was released)."""
    label = np.asarray(label, dtype=np.int64)
    if mechanism == "interactive":
        codes = np.vectorize(_INTERACTIVE.__getitem__, otypes=[np.int8])(outcome)
        return Decisions(codes == OUTCOME_TEACHER, label, codes.astype(np.int8))
    if mechanism == "svt":
        codes = np.vectorize(_SVT.__getitem__, otypes=[np.int8])(outcome)
        return Decisions(codes == SVT_STABLE, label, codes.astype(np.int8))
    return Decisions(outcome == "answered", label)


def read_given_decisions(decisions, mechanism: Mechanism, vote_set: VoteSet,
                     indices: np.ndarray | None, queries: int | None, *, partial: bool,
                     student: np.ndarray | None = None) -> tuple[Decisions, DecisionsPart]:
    """``--decisions``: read and check the file (or take the value) against the run.

    Interactive: a ``student`` outcome needs the student's confidence above gamma and
    releases the student's own label (``argmax p``)."""
    if isinstance(decisions, LabelDecisions):
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
    outcome = checked.outcome
    assert outcome is not None  # check_decisions names every row's outcome
    if student is not None:
        rows = np.asarray(student)[checked.query]
        own = outcome == "student"
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
    given = given_decisions(outcome, checked.label, mechanism.name)
    return given, DecisionsPart(path=table.path, sha256=table.sha256 or None,
                                rows=len(checked))
