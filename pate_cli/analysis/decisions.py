"""A run's decisions as a value: out of a result (``--write-decisions``, ``label()``) and
in from a checked decisions table (``--decisions``), CLI.md "Decisions", MATH.md s.7.

Outcome names: ``answered``/``refused`` (LNMax, GNMax, Confident; Interactive's teacher
answers and abstentions), ``student`` (Interactive: the student's own label reinforced),
``stable``/``unstable``/``halted`` (SVT-PATE).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..mechanisms import (
    OUTCOME_ABSTAIN,
    OUTCOME_STUDENT,
    OUTCOME_TEACHER,
    SVT_HALTED,
    SVT_STABLE,
    SVT_UNSTABLE,
    Decisions,
)

_INTERACTIVE = {"refused": OUTCOME_ABSTAIN, "answered": OUTCOME_TEACHER,
                "student": OUTCOME_STUDENT}
_SVT = {"stable": SVT_STABLE, "unstable": SVT_UNSTABLE, "halted": SVT_HALTED}


@dataclass(frozen=True, repr=False)
class LabelDecisions:
    """One row per processed query, in processing order: ``query`` (the vote file's row),
    ``outcome`` (names), ``label`` (the released label, -1 for none); ``mechanism``."""

    mechanism: str
    query: np.ndarray
    outcome: np.ndarray
    label: np.ndarray

    def __len__(self) -> int:
        return int(self.query.size)

    @property
    def answered(self) -> np.ndarray:
        """Where the teachers' data answered (``answered`` or ``stable``)."""
        return np.isin(self.outcome, ("answered", "stable"))

    def to_frame(self):
        """``query, outcome, label`` as a DataFrame (label <NA> when none)."""
        import pandas as pd

        label = pd.array(np.where(self.label >= 0, self.label, 0), dtype="Int64")
        label[self.label < 0] = pd.NA
        return pd.DataFrame({"query": self.query, "outcome": self.outcome, "label": label})

    def __repr__(self) -> str:
        names, counts = np.unique(self.outcome, return_counts=True)
        shown = ", ".join(f"{count} {name}" for name, count in zip(names, counts, strict=True))
        return f"<LabelDecisions {self.mechanism}: {len(self)} queries ({shown})>"


def decisions_of(result) -> LabelDecisions:
    """The decisions an analysis made (or accounted), up to where labelling stopped."""
    result.require_columns("the decisions")
    count = result.queries
    query = (np.arange(count) if result.query_index is None
             else np.asarray(result.query_index, dtype=np.int64))
    label = np.asarray(result.label, dtype=np.int64)
    name = result.mechanism.name
    if name == "svt":
        unstable = np.asarray(result.columns["unstable"], dtype=bool)
        outcome = np.where(label >= 0, "stable", np.where(unstable, "unstable", "halted"))
    elif result.outcome is not None:
        outcome = np.array(["refused", "answered", "student"])[result.outcome.astype(np.int64)]
    else:
        outcome = np.where(label >= 0, "answered", "refused")
    if result.groups is not None and result.groups.stopped_at is not None:
        stop = result.groups.stopped_at
        query, outcome, label = query[:stop], outcome[:stop], label[:stop]
    return LabelDecisions(name, query, np.asarray(outcome, dtype=str), label)


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
