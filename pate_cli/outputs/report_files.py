"""The files of ``pate-report``: its destination checked before any work, the run read back
from ``--from``, and the statement written with its figure files as one set."""

from __future__ import annotations

import os
import shutil

import numpy as np

from ..errors import InputError
from ..inputs import load_votes
from ..inputs.tables import REPORT_KEYS, read_summary
from .figure_data import figure_rows
from .plot_tables import HISTORY_COLUMNS, Drawing, drawn_table
from .report import files_folder, report_format
from .report_figures import FIGURE_TITLES, figure_budgets, marked_budgets
from .risk_figure import risk_problem
from .writing import check_destinations, utf8_text, write_outputs


def check_report_destination(output: str, fmt: str) -> None:
    """Refuse, before any work, a report that cannot be written (no directory...), or for
    Markdown whose figures' folder is a file."""
    folder = files_folder(output)
    check_destinations([("-o " + output, output)])
    if fmt == "markdown" and os.path.exists(folder) and not os.path.isdir(folder):
        raise InputError(f"{folder}: exists and is not a directory (the Markdown report's "
                         "figures go there)")


def figure_table(result):
    """The rows of ``result``'s per-query table the figures draw, streamed a chunk at a time
    (``figure_data.figure_rows``: bounded memory, each budget's first row over it kept),
    read from the result's parts so the table's pass precedes the summary and forms a
    streamed run's release."""
    budgets = marked_budgets(None if result.budget is None else result.budget.limit,
                             () if result.groups is None else result.groups.groups)
    return figure_rows(result.iter_frames(), queries=result.queries, budgets=budgets)


def analysed_votes(result):
    """``result``'s analysed vote rows in analysed order (Confident's selection figure); None
    for rounds, groups, multi-label votes (not one histogram per query) or votes not from a
    file."""
    if (result.source is None or result.rounds is not None or result.groups is not None
            or result.multilabel is not None):
        return None
    votes = result.source.votes
    if result.query_index is not None:
        return votes[result.query_index]
    return votes[:result.queries]


def read_run(summary_path: str, per_query: str | None):
    """``(summary, drawn rows or None, votes or None)`` of ``--from``: the table's drawn rows,
    checked to be the summary's run, and the analysed votes when the input file is still there
    with the same sha256 (not for a multi-label run)."""
    summary = read_summary(summary_path)
    for key in REPORT_KEYS:
        if key not in summary:
            raise InputError(f"{summary_path}: has no {key!r} key; expected a JSON summary "
                             "of pate-analyze (--format json -o FILE.json)")
    for key in ("risk_data_independent", "risk"):  # as pate-plot tradeoff-curve refuses
        problem = None if summary.get(key) is None else risk_problem(summary[key])
        if problem:
            raise InputError(f"{summary_path}: '{key}' is not an attack risk of pate-analyze "
                             f"({problem})")
    frame, index = None, None
    if per_query is not None:
        frame, index = _drawn_run(summary, summary_path, per_query)
    rows = None
    source = summary.get("input") or {}
    path = source.get("path")
    if (summary.get("mechanism") == "confident" and path and os.path.isfile(path)
            and not summary.get("groups") and not summary.get("multilabel")):
        try:
            vote_set = load_votes(path)
        except InputError:  # not votes (a predictions file...): no selection figure
            vote_set = None
        if vote_set is not None and vote_set.sha256 == source.get("sha256"):
            rows = vote_set.votes[slice(0, summary["queries"]) if index is None else index]
    return summary, frame, rows


def _drawn_run(summary: dict, summary_path: str, per_query: str):
    """The rows of ``per_query`` the figures draw (read a piece at a time, checked against
    ``summary``), and its whole ``query`` column where the run had ``--query-indices``."""
    index: list | None = [] if summary.get("query_indices") else None
    drawing = Drawing(HISTORY_COLUMNS, keep=("output",), groups=True, sums=(),
                      budgets=figure_budgets(summary), allow_empty=True)
    frame = drawn_table(per_query, drawing, summary=summary, summary_path=summary_path,
                        index=index)
    return frame, None if index is None else np.concatenate(index)


def write_report(output: str, text: str, figures: dict) -> None:
    """Write the statement and its figures (in ``files_folder(output)``) as one set; on
    failure nothing is left, not even the folder. Then figures an earlier report left there
    and this one does not draw are removed (only names a report writes)."""
    folder = files_folder(output)
    made = bool(figures) and not os.path.isdir(folder)
    if figures:
        os.makedirs(folder, exist_ok=True)
    try:
        write_outputs({output: utf8_text(text).encode("utf-8"), **figures})
    except BaseException:
        if made:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    if report_format(output) == "markdown":
        for key in (*FIGURE_TITLES, "risk"):
            stale = os.path.join(folder, f"{key}.svg")
            if stale not in figures and os.path.isfile(stale):
                os.remove(stale)
