"""Publishing the data-dependent epsilon: the GNSS report for an analysis (MATH.md s.10).

Connects an ``AnalysisResult`` to ``accounting/smooth_sensitivity/``: the same queries,
the answer step's charge per query (0/1 in replay, ``pr_answered`` in expected
accounting), and the order the accounting chose (or one the user fixes).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..accounting.smooth_sensitivity import (
    DEFAULT_CHUNK,
    SmoothSensitivityResult,
    sanitize_confident,
    sanitize_gnmax,
)
from ..mechanisms import release_draw
from ..sparse_rows import SparseRows, SparseVotes, is_sparse
from .setting import CHUNK_ELEMENTS

SANITIZABLE = ("gnmax", "confident", "interactive")


def sanitize_analysis(result, votes, *, student=None, order: float | None = None,
                      report_every: int | None = None) -> SmoothSensitivityResult:
    """The smooth-sensitivity report for ``result`` (computed from ``votes``).

    Raises ``ValueError`` for mechanisms or accounting modes it does not apply to, and
    when condition C5 or C6 fails at the order (naming the condition, sigma, K and
    order, so the user can pick another ``--order``).
    """
    mechanism = result.mechanism
    if mechanism.name not in SANITIZABLE:
        raise ValueError(f"--smooth-sensitivity applies to {', '.join(SANITIZABLE)}, "
                         f"not {mechanism.name}")
    if result.accounting == "data-independent":
        raise ValueError("--smooth-sensitivity needs replay or expected accounting (a "
                         "data-independent epsilon is already public)")
    order = float(result.order if order is None else order)
    common: dict = dict(teachers=int(round(result.teachers)), sigma=mechanism.sigma,
                        order=order, delta=result.delta, release_noise=release_draw(result.seed))
    if is_sparse(votes):  # a chunk at a time, its rows x stored width within the budget
        rows = _SparseSubset(votes, result.query_index)
        common["chunk_size"] = min(DEFAULT_CHUNK, max(1, CHUNK_ELEMENTS // votes.width))
    else:
        rows = _rows(votes, result.query_index)
    if not mechanism.selects:
        def run(every):
            return sanitize_gnmax(rows, weights=result.answered, report_every=every, **common)
    else:
        max_votes = None
        if mechanism.uses_student:  # the selection compares max n - M p (MATH.md s.4)
            max_votes = mechanism.selection_counts(rows, _rows(student, result.query_index))

        def run(every):
            return sanitize_confident(rows, threshold=mechanism.threshold,
                                      sigma_threshold=mechanism.sigma_threshold,
                                      weights=result.answered, max_votes=max_votes,
                                      report_every=every, **common)
    # The reported figures never depend on whether a history was asked for (checkpoints
    # split the sums differently); the history's last row is the reported one.
    report = run(None)
    if report_every is not None and report.refusal is None:
        points = run(report_every).checkpoints
        report = replace(report, checkpoints=tuple(points[:-1]) + (report,))
    if report.refusal is not None:
        failed = [name for name, ok in (("C5", report.c5), ("C6", report.c6)) if not ok]
        raise ValueError(f"smooth sensitivity is not valid here: condition "
                         f"{' and '.join(failed)} fails for sigma {mechanism.sigma:g}, "
                         f"K {result.classes}, order {order:g} (choose another --order)")
    return report


class _SparseSubset:
    """Rows ``positions`` (all rows if ``None``) of ``SparseVotes``, read as ``SparseRows``
    a slice at a time: the subset is never gathered whole (MATH.md s.14)."""

    def __init__(self, votes: SparseVotes, positions: np.ndarray | None) -> None:
        self.votes = votes
        self.positions = np.arange(len(votes)) if positions is None else positions
        self.shape = (int(self.positions.size), int(votes.vocabulary))

    def __getitem__(self, part: slice) -> SparseRows:
        return self.votes.rows(self.positions[part])


def _rows(array, positions):
    if positions is None or (positions.size and np.array_equal(
            positions, np.arange(positions[0], positions[0] + positions.size))):
        start = 0 if positions is None or positions.size == 0 else int(positions[0])
        stop = array.shape[0] if positions is None else start + positions.size
        return array[start:stop]
    return np.asarray(array)[positions]
