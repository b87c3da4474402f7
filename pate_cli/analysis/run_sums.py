"""Running sums of a run that need no per-query table (MATH.md sections 6 and 7).

A budget run (``analysis.budget_run``) adds, chunk after chunk and in query order
through the blocks it goes through query by query, what its totals need:
the RDP carry (selection + weight x answer, MATH.md s.7), the selection and the weighted
answer curves apart (``rdp_at_order`` is their entries at the reported order, which is
known only at the end, so every order is kept), the answered weight, and the label
counts. Every sum adds one query after another (``sequential_total``, a cumulative sum),
so no figure depends on where chunks start, and the totals-only mode (``keep_columns=False``)
and the per-query mode compute the same bits: both go through :class:`RunSums`.
"""

from __future__ import annotations

import numpy as np

from ..accounting.composition import WORK_ELEMENTS, StepRows, sequential_total
from ..mechanisms import OUTCOME_ABSTAIN, OUTCOME_NAMES, OUTCOME_STUDENT


class RunSums:
    """Per-order sums of the selection and weighted answer curves, the carry, the
    answered weight (``answered``), in query order."""

    def __init__(self, carry: np.ndarray):
        self.carry = np.array(carry, dtype=np.float64)
        self.selection = np.zeros(self.carry.size)
        self.answer = np.zeros(self.carry.size)
        self.answered = 0.0

    def add(self, costs: StepRows, count: int, *, with_carry: bool) -> None:
        """Add the first ``count`` queries of ``costs``; ``with_carry`` also adds their
        curves to the carry (bit for bit ``running_total``'s: the same row sums, the
        same order of additions), for runs that form no per-query epsilon."""
        if count == 0:
            return
        weight = costs.weight[:count]
        self.answered = float(np.add.accumulate(
            np.concatenate(([self.answered], weight)))[-1])
        size = self.carry.size
        step = max(1, WORK_ELEMENTS // size)
        answer = np.empty((min(step, count), size))
        selection = np.empty_like(answer)
        both = np.empty_like(answer) if with_carry else None
        for lo in range(0, count, step):
            hi = min(count, lo + step)
            rows_a, rows_s = answer[: hi - lo], selection[: hi - lo]
            np.take(costs.answer, costs.answer_index[lo:hi], axis=0, out=rows_a)
            rows_a *= weight[lo:hi, None]
            np.take(costs.selection, costs.selection_index[lo:hi], axis=0, out=rows_s)
            if both is not None:
                rows = both[: hi - lo]
                np.add(rows_a, rows_s, out=rows)
                rows[0] += self.carry
                self.carry = sequential_total(rows)
            rows_a[0] += self.answer
            self.answer = sequential_total(rows_a)
            rows_s[0] += self.selection
            self.selection = sequential_total(rows_s)



def sums_at_order(orders: np.ndarray, order: float, selection: np.ndarray,
                  answer: np.ndarray) -> dict[str, float]:
    """``rdp_at_order``: the selection and answer sums at the reported order."""
    where = np.flatnonzero(orders == order)
    if where.size == 0:  # no order attains it (not reached by these mechanisms)
        return {"selection": 0.0, "answer": 0.0}
    k = int(where[0])
    return {"selection": float(selection[k]), "answer": float(answer[k])}


def released_labels(decisions, released: np.ndarray, with_outcome: bool
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """Each query's output label (-1 for none) and, for Interactive-GNMax, its outcome
    code (reinforced student labels are output too, at no cost)."""
    labels = np.where(released, decisions.labels, -1)
    if not with_outcome:
        return labels, None
    from_student = decisions.outcome == OUTCOME_STUDENT
    labels = np.where(from_student, decisions.labels, labels)
    outcome = np.where(released | from_student, decisions.outcome,
                       OUTCOME_ABSTAIN).astype(np.int8)
    return labels, outcome


class LabelCounts:
    """Counts behind ``label_accuracy``, ``labels_output`` and the outcome figures,
    chunk by chunk (what ``setting.label_accuracy`` gives from the whole columns)."""

    def __init__(self, with_outcome: bool):
        self.output = 0
        self.correct = 0
        self.outcomes = np.zeros(len(OUTCOME_NAMES), dtype=np.int64) if with_outcome else None
        self.outcome_correct = np.zeros(len(OUTCOME_NAMES), dtype=np.int64)

    @classmethod
    def merged(cls, parts) -> LabelCounts:
        """The counts of every part (integers: any order gives the same)."""
        parts = list(parts)
        total = cls(parts[0].outcomes is not None if parts else False)
        for part in parts:
            total.merge_in(part)
        return total

    def merge_in(self, other: LabelCounts) -> None:
        """Add ``other``'s counts to these."""
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
                self.outcome_correct += np.bincount(codes[right],
                                                    minlength=self.outcomes.size)

    def accuracy(self, labelled: bool) -> tuple[float | None, dict[str, float | None] | None]:
        """As ``setting.label_accuracy``: a mean of 0/1 values is ``correct / count``."""
        if not labelled:
            return None, None
        accuracy = self.correct / self.output if self.output else None
        if self.outcomes is None:
            return accuracy, None
        by_outcome: dict[str, float | None] = {}
        for code, name in enumerate(OUTCOME_NAMES):
            if name == "abstain":
                continue
            count = int(self.outcomes[code])
            by_outcome[name] = int(self.outcome_correct[code]) / count if count else None
        return accuracy, by_outcome
