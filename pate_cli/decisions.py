"""A run's decisions, the one type for them (cli:decisions, math:costs, math:svt): replays,
``--write-decisions``, ``label()``, ``--decisions`` and ``analyze(decisions=...)``. Outcome codes
index :data:`OUTCOME_NAMES` (Interactive-GNMax, SVT-PATE); other mechanisms carry none.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

OUTCOME_NAMES = ("refused", "answered", "student", "stable", "unstable", "halted")
# Interactive-GNMax's outcomes (math:costs): abstain, teacher answer, student label.
OUTCOME_ABSTAIN, OUTCOME_TEACHER, OUTCOME_STUDENT = 0, 1, 2
# Their names in the per-query table and the summary's counts (cli:per-query).
INTERACTIVE_NAMES = ("abstain", "teacher", "student")
# SVT-PATE's outcomes (math:svt): answered with the plurality, new round, after the cut-off.
SVT_STABLE, SVT_UNSTABLE, SVT_HALTED = 3, 4, 5
# Codes that release a label, and those where the teachers' data answered.
_LABELLED = np.array([False, True, True, True, False, False])
_ANSWERED = np.array([False, True, False, True, False, False])
# The outcomes each mechanism can produce (cli:decisions).
MECHANISM_OUTCOMES = {
    "lnmax": ("answered",),
    "gnmax": ("answered",),
    "confident": ("answered", "refused"),
    "interactive": ("answered", "refused", "student"),
    "svt": ("stable", "unstable", "halted"),
    "exponential": ("answered",),
    "confident-exponential": ("answered", "refused"),
}
# The mechanisms whose decisions carry codes.
CODED = ("interactive", "svt")


@dataclass(frozen=True, repr=False, eq=False)
class Decisions:
    """One run's decisions, one entry per processed query in processing order.

    ``answered``: bool, where the teachers' data answered (a stable SVT query included);
    ``label``: int64, the released label, -1 for none; ``code``: int8 indices of
    :data:`OUTCOME_NAMES` (Interactive-GNMax, SVT-PATE; else None). ``query`` (vote-file
    rows) and ``mechanism``: None for a bare replay; ``path``, ``sha256``: the file read."""

    answered: np.ndarray
    label: np.ndarray
    code: np.ndarray | None = None
    query: np.ndarray | None = None
    mechanism: str | None = None
    path: str | None = None
    sha256: str | None = None

    def __eq__(self, other) -> bool:
        """Equal decisions: the same arrays (by value) and the same names."""
        if not isinstance(other, Decisions):
            return NotImplemented
        return all((mine is None and theirs is None) if mine is None or theirs is None
                   else np.array_equal(mine, theirs)
                   for mine, theirs in ((self.answered, other.answered),
                                        (self.label, other.label), (self.code, other.code),
                                        (self.query, other.query))) and \
            (self.mechanism, self.path, self.sha256) == (other.mechanism, other.path,
                                                          other.sha256)

    __hash__ = None  # type: ignore[assignment]  # arrays: not hashable

    @classmethod
    def of_codes(cls, code: np.ndarray, label: np.ndarray, **known) -> Decisions:
        """Decisions from outcome codes (``answered`` follows from them)."""
        code = np.asarray(code, dtype=np.int8)
        return cls(_ANSWERED[code], np.asarray(label, dtype=np.int64), code, **known)

    @classmethod
    def of_table(cls, frame, mechanism: str) -> Decisions:
        """The decisions of a piece of a per-query table (cli:decisions's columns; codes from
        Interactive-GNMax's ``outcome`` or SVT-PATE's ``unstable``)."""
        query = frame["query"].to_numpy(dtype=np.int64)
        label = frame["label"].fillna(-1).to_numpy(dtype=np.int64)
        known = {"query": query, "mechanism": mechanism}
        if "outcome" in frame:
            return cls.of_codes(codes_of(frame["outcome"].to_numpy(dtype=str),
                                         INTERACTIVE_NAMES), label, **known)
        if mechanism == "svt":
            unstable = frame["unstable"].to_numpy(dtype=bool)
            return cls.of_codes(np.where(label >= 0, SVT_STABLE, np.where(
                unstable, SVT_UNSTABLE, SVT_HALTED)), label, **known)
        return cls(label >= 0, label, **known)

    @classmethod
    def of_tables(cls, frames: Iterator, mechanism: str, stop: int | None = None
                  ) -> Iterator[Decisions]:
        """:meth:`of_table` of each streamed piece up to query ``stop`` (the first piece
        always); the rest of the stream is closed, not formed."""
        pieces = (cls.of_table(frame, mechanism) for frame in frames)
        done = 0
        try:
            for piece in pieces:
                yield piece if stop is None else piece.head(stop - done)
                done += len(piece)
                if stop is not None and done >= stop:
                    break
        finally:
            pieces.close()

    @classmethod
    def joined(cls, pieces: list[Decisions], mechanism: str | None = None) -> Decisions:
        """Consecutive pieces' decisions as one (a field None in the first is None)."""
        def join(key: str):
            parts = [getattr(piece, key) for piece in pieces]
            return None if parts[0] is None else np.concatenate(parts)

        return cls(join("answered"), join("label"), join("code"), join("query"), mechanism)

    def __len__(self) -> int:
        return int(self.label.size)

    @property
    def outcome(self) -> np.ndarray:
        """The outcome names (cli:decisions) of every query."""
        if self.code is None:
            return np.where(self.answered, "answered", "refused")
        return np.asarray(OUTCOME_NAMES)[self.code]

    @property
    def labelled(self) -> np.ndarray:
        """Where the outcome may release a label."""
        return self.answered if self.code is None else _LABELLED[self.code]

    def head(self, count: int) -> Decisions:
        """The first ``count`` queries' decisions."""
        return self.piece(0, count)

    def piece(self, start: int, stop: int) -> Decisions:
        """The decisions of queries ``start .. stop-1``."""
        def cut(values):
            return None if values is None else values[start:stop]

        return Decisions(self.answered[start:stop], self.label[start:stop], cut(self.code),
                         cut(self.query), self.mechanism, self.path, self.sha256)

    def padded(self, start: int, stop: int) -> Decisions:
        """Queries ``start .. stop-1``'s answers, labels and codes; past the end (a budget
        run halted): refused, no label (abstain)."""
        def cut(values, fill, dtype):
            if values is None:
                return None
            rows = np.full(stop - start, fill, dtype=dtype)
            rows[:max(0, min(stop, values.size) - start)] = values[start:stop]
            return rows

        return Decisions(cut(self.answered, False, bool), cut(self.label, -1, np.int64),
                         cut(self.code, OUTCOME_ABSTAIN, np.int8))

    def to_frame(self):
        """``query, outcome, label`` as a DataFrame (label <NA> when none)."""
        import pandas as pd

        label = pd.array(np.where(self.label >= 0, self.label, 0), dtype="Int64")
        label[self.label < 0] = pd.NA
        return pd.DataFrame({"query": self.query, "outcome": self.outcome, "label": label})

    def __repr__(self) -> str:
        names, counts = np.unique(self.outcome, return_counts=True)
        shown = ", ".join(f"{count} {name}" for name, count in zip(names, counts, strict=True))
        made = "" if self.mechanism is None else f" {self.mechanism}"
        return f"<Decisions{made}: {len(self)} queries ({shown})>"


def named_decisions(mechanism: str | None, query, outcome, label, *, path: str | None = None,
                    sha256: str | None = None) -> Decisions:
    """Decisions from outcome names (cli:decisions), as a notebook or a decisions file gives
    them (codes kept whatever the mechanism, until ``--decisions``' check).

    Args:
      mechanism: the mechanism's name, or None.
      query: each decision's vote-file row, or None.
      outcome: each query's outcome name, one of :data:`OUTCOME_NAMES`.
      label: each query's released label (-1 for none).
      path: the decisions file's name, when read from one.
      sha256: that file's digest.

    Returns:
      The frozen :class:`Decisions` (``answered`` follows from the outcomes).

    Raises:
      ValueError: a name that is no outcome, naming its row; fields of different lengths.
    """
    outcome = np.asarray(outcome, dtype=str)
    code = codes_of(outcome, OUTCOME_NAMES)
    found = code >= 0
    if not np.all(found):
        row = int(np.flatnonzero(~found)[0])
        raise ValueError(f"row {row + 1}: outcome {str(outcome[row])!r} is not one of "
                         f"{', '.join(OUTCOME_NAMES)}")
    label = np.asarray(label, dtype=np.int64)
    query = None if query is None else np.asarray(query, dtype=np.int64)
    lengths = {"outcome": outcome.shape, "label": label.shape,
               **({} if query is None else {"query": query.shape})}
    if len(set(lengths.values())) > 1 or outcome.ndim != 1:
        raise ValueError("decisions: the fields must be one-dimensional and of one length, got "
                         + ", ".join(f"{name} {shape}" for name, shape in lengths.items()))
    return Decisions(_ANSWERED[code], label, code, query, mechanism, path, sha256)


# A former name of this constructor (scripts may call it).
LabelDecisions = named_decisions


def codes_of(names, known: tuple[str, ...]) -> np.ndarray:
    """The code (the index in ``known``) of each name, -1 where it is none of them."""
    names, table = np.asarray(names, dtype=str), np.asarray(known)
    order = np.argsort(table)
    at = np.clip(np.searchsorted(table[order], names), 0, table.size - 1)
    return np.where(table[order][at] == names, order[at], -1).astype(np.int8)


def released_labels(decisions: Decisions, released: np.ndarray, with_outcome: bool
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """Each query's output label (-1 for none) and, for Interactive-GNMax, its outcome code
    (reinforced student labels are output too, at no cost)."""
    labels = np.where(released, decisions.label, -1)
    if not with_outcome:
        return labels, None
    code = decisions.code
    assert code is not None  # Interactive-GNMax's decisions carry outcome codes
    from_student = code == OUTCOME_STUDENT
    labels = np.where(from_student, decisions.label, labels)
    outcome = np.where(released | from_student, code, OUTCOME_ABSTAIN)
    return labels, outcome.astype(np.int8)


class LabelCounts:
    """Counts behind ``label_accuracy``, ``labels_output`` and the outcome figures."""

    def __init__(self, with_outcome: bool):
        self.output = self.correct = 0
        self.outcomes = np.zeros(len(INTERACTIVE_NAMES), dtype=np.int64) if with_outcome else None
        self.outcome_correct = np.zeros(len(INTERACTIVE_NAMES), dtype=np.int64)

    def merge_in(self, other: LabelCounts) -> None:
        self.output += other.output
        self.correct += other.correct
        if self.outcomes is not None and other.outcomes is not None:
            self.outcomes += other.outcomes
        self.outcome_correct += other.outcome_correct

    def add(self, labels: np.ndarray, outcome: np.ndarray | None,
            truth: np.ndarray | None) -> None:
        output = labels >= 0
        self.output += int(np.count_nonzero(output))
        right = None if truth is None else labels == truth
        if right is not None:
            self.correct += int(np.count_nonzero(right & output))
        if self.outcomes is not None and outcome is not None:
            codes = outcome.astype(np.int64)
            self.outcomes += np.bincount(codes, minlength=self.outcomes.size)
            if right is not None:
                self.outcome_correct += np.bincount(codes[right], minlength=self.outcomes.size)

    def accuracy(self, labelled: bool) -> tuple[float | None, dict[str, float | None] | None]:
        """Accuracy over output labels, and per outcome for Interactive-GNMax."""
        if not labelled:
            return None, None
        accuracy = self.correct / self.output if self.output else None
        return accuracy, None if self.outcomes is None else {
            name: int(self.outcome_correct[code]) / int(self.outcomes[code])
            if self.outcomes[code] else None
            for code, name in enumerate(INTERACTIVE_NAMES) if name != "abstain"}
