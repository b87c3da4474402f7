"""Do a JSON summary and a per-query table come from the same run?

``pate-report --from a.json --per-query b.csv`` and ``pate-plot ... --summary`` draw a
table's curve under a summary's figures; from two different runs that would be one run's
curve under another's headline. The per-query table has no sha256 or parameters of its own
(CLI.md fixes its columns), so :func:`check_same_run` compares what both carry:

- the number of rows and the summary's ``queries`` (a budget run's table stops at the
  halt, as its ``queries`` does);
- the ``query`` column: ``0 .. n-1`` unless the summary says ``query_indices`` (then
  distinct rows of the vote file, below its ``input.queries``);
- the table's last ``epsilon_cumulative`` and the summary's RDP figure (``epsilon_rdp``,
  else ``epsilon``), at most 1e-12 relative apart (README, "Tolerance between
  algorithms"); for an individualized run, each group's column at the halt and at the
  end against the group's ``epsilon`` and ``epsilon_if_continued``;
- the answered count (the sum of ``answered``, to 1e-12 relative for expected accounting)
  and the labels output (rows with a label).

Every figure depends on the mechanism, its parameters, delta, the order grid, the votes
and the decisions, so two different runs agreeing on all of these to 12 digits is not a
case to plan for. A mismatch is one ``InputError`` line naming the first thing that differs.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError

RELATIVE_TOLERANCE = 1e-12


def _close(a: float, b: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b
    return abs(a - b) <= RELATIVE_TOLERANCE * max(abs(a), abs(b))


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def run_difference(summary: dict, frame) -> str | None:
    """What differs between ``summary`` and the per-query ``frame`` (None: nothing)."""
    rows = len(frame)
    queries = summary.get("queries")
    if queries is not None and rows != int(queries):
        return f"the table has {rows} rows, the summary {queries} queries"
    if "query" in frame.columns:
        index = frame["query"].to_numpy()
        if summary.get("query_indices"):
            limit = (summary.get("input") or {}).get("queries")
            if len(np.unique(index)) != rows or (
                    rows and (index.min() < 0 or (limit is not None and index.max() >= limit))):
                return ("the table's query column is not distinct rows of the summary's "
                        "vote file")
        elif not np.array_equal(index, np.arange(rows)):
            return ("the table's query column is not 0.." + str(rows - 1) + " (the summary "
                    "analysed the file's first rows in order; --query-indices not recorded)")
    groups = summary.get("groups") or []
    group_columns = sorted(c for c in frame.columns if str(c).startswith("epsilon_cumulative_"))
    if bool(groups) != bool(group_columns):
        return ("the summary is of an individualized run and the table has no "
                "epsilon_cumulative_<group> column" if groups else
                "the table has per-group columns and the summary is not of an "
                "individualized run")
    if groups:
        return _groups_difference(summary, groups, frame)
    if rows and "epsilon_cumulative" in frame.columns:
        last = float(frame["epsilon_cumulative"].iloc[-1])
        rdp = summary.get("epsilon_rdp")
        expected = _number(rdp if rdp is not None else summary.get("epsilon"))
        if not _close(last, expected):
            return (f"the table's last epsilon_cumulative is {last!r}, the summary's "
                    f"{'epsilon_rdp' if rdp is not None else 'epsilon'} {expected!r}")
    if "answered" in frame.columns and summary.get("answered") is not None:
        total = float(np.nansum(frame["answered"].to_numpy(dtype=np.float64)))
        if not _close(total, float(summary["answered"])):
            return (f"the table answers {total:g} queries, the summary "
                    f"{float(summary['answered']):g}")
    return _labels_difference(summary, frame)


def _groups_difference(summary: dict, groups: list, frame) -> str | None:
    stopped = summary.get("stopped_at")
    for row in groups:
        column = f"epsilon_cumulative_{row['group']}"
        if column not in frame.columns:
            return f"the table has no {column} column for the summary's group {row['group']}"
        values = frame[column].to_numpy(dtype=np.float64)
        if not len(values):
            continue
        pairs = [("epsilon_if_continued", values[-1])]
        if stopped is None or stopped > 0:
            pairs.append(("epsilon", values[-1] if stopped is None else values[stopped - 1]))
        for key, found in pairs:
            if row.get(key) is not None and not _close(float(found), float(row[key])):
                return (f"group {row['group']}: the table's {column} gives {float(found)!r}, "
                        f"the summary's {key} {float(row[key])!r}")
    return _labels_difference(summary, frame)


def _labels_difference(summary: dict, frame) -> str | None:
    output = summary.get("labels_output")
    if output is None or "label" not in frame.columns:
        return None
    labels = frame["label"].to_numpy(dtype=np.float64, na_value=np.nan)
    count = int(np.count_nonzero(np.isfinite(labels) & (labels >= 0)))
    if count != int(output):
        return f"the table outputs {count} labels, the summary {output}"
    return None


def check_same_run(summary: dict, frame, *, summary_path: str, table_path: str) -> None:
    """One ``InputError`` line when ``frame`` is not the per-query table of ``summary``."""
    difference = run_difference(summary, frame)
    if difference is not None:
        raise InputError(f"{table_path} and {summary_path} are not from the same run: "
                         f"{difference} (give the summary and the --per-query table "
                         "that one pate-analyze command wrote)")
