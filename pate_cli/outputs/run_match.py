"""Do a JSON summary and a per-query table come from the same run?

``pate-report --from`` and ``pate-plot --summary`` draw a table's curve under a summary's
figures; the table has no sha256 (cli:per-query), so :func:`check_same_run` compares:

- the row count and ``queries`` (a budget run's table stops at the halt);
- the ``query`` column: ``0 .. n-1``, or with ``query_indices`` distinct vote-file rows;
- the last ``epsilon_cumulative`` against ``epsilon_rdp`` (else ``epsilon``); for an
  individualized run each group's column at the halt and at the end against its
  ``epsilon`` and ``epsilon_if_continued``;
- the answered sum and the labels output (for a multi-label run the (query, label) pairs:
  a binary table's ``answered_labels`` bits, every label of a tau or powerset row; not
  compared beyond 62 labels, -1).

The figures are sums of n terms formed two ways, compared to the larger of 1e-12 and ``2 n
2^-53`` relative: a sum of n non-negative terms in any order is within ``(n - 1) 2^-53`` of the
exact sum (Higham, "Accuracy and Stability of Numerical Algorithms", s.4.2), and the
conversion's minimum moves by at most that (docs/explanation/numerics.md); plus the raise a
running figure carries beyond the summary's (``numerics.summed_margin``). Two runs agreeing on
all of these to 12 digits is not planned for. A mismatch is one ``InputError`` line naming the
first difference.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from ..numerics import summed_margin

RELATIVE_TOLERANCE = 1e-12


def _terms_per_row(summary: dict) -> int:
    """The terms a table row's running sum adds: a binary multi-label run's labels (the
    flattened stream's rows, summed by query), else one."""
    multilabel = summary.get("multilabel")
    if not isinstance(multilabel, dict) or multilabel.get("variant") != "binary":
        return 1
    labels = multilabel.get("labels")
    return labels if isinstance(labels, int) and labels > 1 else 1


def _close(a: float, b: float, terms: int = 1) -> bool:
    """``a`` and ``b`` are one sum of ``terms`` non-negative terms formed two ways."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b
    tolerance = max(RELATIVE_TOLERANCE, 2.0 * terms * 2.0**-53) + summed_margin(terms + 1)
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def _floats(piece, column: str) -> np.ndarray:
    import pandas as pd
    return pd.to_numeric(piece[column], errors="coerce").to_numpy(dtype=np.float64)


class RunTotals:
    """What :func:`check_same_run` compares, gathered piece by piece; with ``query_indices``
    one bit per vote-file row marks the rows seen."""

    def __init__(self, summary: dict):
        self.summary = summary
        self.rows = 0
        self.columns: list[str] = []
        self.query_problem: str | None = None
        self.indices = bool(summary.get("query_indices"))
        self.limit = (summary.get("input") or {}).get("queries") if self.indices else None
        self.seen = np.zeros(0, dtype=np.uint8)  # bit i: row i of the vote file seen
        self.last: dict[str, float] = {}  # cumulative epsilon columns' last values
        self.at_halt: dict[str, float] = {}  # group columns' values at the halt
        self.answered = 0.0
        self.labels: int | None = 0  # None: not counted (a label set without bits)
        multilabel = summary.get("multilabel") or {}
        self.label_count = int(multilabel.get("labels") or 1)  # labels per query

    def add(self, piece) -> RunTotals:
        """Count the next piece of the table in."""
        start, size = self.rows, len(piece)
        self.columns = [str(column) for column in piece.columns]
        self.rows += size
        if not size:
            return self
        if "query" in piece.columns and self.query_problem is None:
            self._add_queries(piece["query"].to_numpy(), start)
        stopped = self.summary.get("stopped_at")
        for column in self.columns:
            if column.startswith("epsilon_cumulative"):
                values = _floats(piece, column)
                self.last[column] = float(values[-1])
                if stopped is not None and start < stopped <= start + size:
                    self.at_halt[column] = float(values[stopped - 1 - start])
        if "answered" in piece.columns:
            self.answered += float(np.nansum(_floats(piece, "answered")))
        if "label" in piece.columns and self.labels is not None:
            self.labels = self._labels_in(piece)
        return self

    def _labels_in(self, piece) -> int | None:
        """The labels counted so far with ``piece``'s: rows with a label, or a multi-label
        run's (query, label) pairs (None where its label sets have no bits)."""
        assert self.labels is not None
        labels = piece["label"].to_numpy(dtype=np.float64, na_value=np.nan)
        if self.label_count == 1 or self.summary.get("multilabel") is None:
            return self.labels + int(np.count_nonzero(np.isfinite(labels) & (labels >= 0)))
        if "answered_labels" not in piece.columns:  # tau, powerset: every label released
            return self.labels + self.label_count * int(np.count_nonzero(np.isfinite(labels)))
        sets = _floats(piece, "answered_labels")  # binary: bit l set, label l released
        if not np.all(np.isfinite(sets) & (sets >= 0)):
            return None
        ones = np.unpackbits(sets.astype(np.int64).view(np.uint8))
        return self.labels + int(np.count_nonzero(ones))

    def _add_queries(self, index: np.ndarray, start: int) -> None:
        if not self.indices:
            if not np.array_equal(index, np.arange(start, start + index.size)):
                self.query_problem = "order"
            return
        index = np.asarray(index, dtype=np.float64)
        whole = index.astype(np.int64)
        if (not np.all(whole == index) or whole.min() < 0
                or (self.limit is not None and whole.max() >= self.limit)
                or np.any(np.diff(np.sort(whole)) == 0)):
            self.query_problem = "distinct"
            return
        needed = int(whole.max()) // 8 + 1
        if needed > self.seen.size:
            self.seen = np.concatenate([self.seen, np.zeros(needed - self.seen.size,
                                                            dtype=np.uint8)])
        byte, bit = whole >> 3, (np.uint8(1) << (whole & 7).astype(np.uint8))
        if np.any(self.seen[byte] & bit):
            self.query_problem = "distinct"
            return
        np.bitwise_or.at(self.seen, byte, bit)

    def difference(self) -> str | None:
        """What differs between the summary and the table counted in (None: nothing)."""
        summary, rows = self.summary, self.rows
        queries = summary.get("queries")
        if queries is not None and rows != int(queries):
            return f"the table has {rows} rows, the summary {queries} queries"
        if self.query_problem == "distinct":
            return ("the table's query column is not distinct rows of the summary's "
                    "vote file")
        if self.query_problem == "order":
            return ("the table's query column is not 0.." + str(rows - 1) + " (the summary "
                    "analysed the file's first rows in order; --query-indices not recorded)")
        groups = summary.get("groups") or []
        group_columns = [c for c in self.columns if c.startswith("epsilon_cumulative_")]
        if bool(groups) != bool(group_columns):
            return ("the summary is of an individualized run and the table has no "
                    "epsilon_cumulative_<group> column" if groups else
                    "the table has per-group columns and the summary is not of an "
                    "individualized run")
        if groups:
            return self._groups_difference(groups)
        if rows and "epsilon_cumulative" in self.columns:
            last = self.last["epsilon_cumulative"]
            rdp = summary.get("epsilon_rdp")
            expected = _number(rdp if rdp is not None else summary.get("epsilon"))
            # SVT-PATE's table: the guarantee had it stopped after each query, below the
            # charge of its whole cut-off (the summary's) while the cut-off is not met
            svt = summary.get("svt")
            within = (isinstance(svt, dict) and _number(svt.get("unstable"))
                      < _number(svt.get("cutoff")) and last <= expected)
            if not within and not _close(last, expected, rows * _terms_per_row(summary)):
                return (f"the table's last epsilon_cumulative is {last!r}, the summary's "
                        f"{'epsilon_rdp' if rdp is not None else 'epsilon'} {expected!r}")
        if "answered" in self.columns and summary.get("answered") is not None:
            if not _close(self.answered, float(summary["answered"]), rows):
                return (f"the table answers {self.answered:g} queries, the summary "
                        f"{float(summary['answered']):g}")
        return self._labels_difference()

    def _groups_difference(self, groups: list) -> str | None:
        stopped = self.summary.get("stopped_at")
        for row in groups:
            column = f"epsilon_cumulative_{row['group']}"
            if column not in self.columns:
                return (f"the table has no {column} column for the summary's group "
                        f"{row['group']}")
            if not self.rows:
                continue
            pairs = [("epsilon_if_continued", self.last[column])]
            if stopped is None or stopped > 0:
                pairs.append(("epsilon", self.last[column] if stopped is None
                              else self.at_halt.get(column, float("nan"))))
            for key, found in pairs:
                if row.get(key) is not None and not _close(found, float(row[key]),
                                                           self.rows):
                    return (f"group {row['group']}: the table's {column} gives {found!r}, "
                            f"the summary's {key} {float(row[key])!r}")
        return self._labels_difference()

    def _labels_difference(self) -> str | None:
        output = self.summary.get("labels_output")
        if output is None or "label" not in self.columns or self.labels is None:
            return None
        if self.labels != int(output):
            return f"the table outputs {self.labels} labels, the summary {output}"
        return None


def check_same_run(summary: dict, frame, *, summary_path: str, table_path: str) -> None:
    """One ``InputError`` line when ``frame`` (a per-query table, or its pieces'
    ``RunTotals``) is not ``summary``'s per-query table."""
    totals = frame if isinstance(frame, RunTotals) else RunTotals(summary).add(frame)
    difference = totals.difference()
    if difference is not None:
        raise InputError(f"{table_path} and {summary_path} are not from the same run: "
                         f"{difference} (give the summary and the --per-query table "
                         "that one pate-analyze command wrote)")
