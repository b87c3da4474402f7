"""The files a ``pate-analyze`` run writes besides its stdout summary: checked before any
work, formed from the result (table and decisions streamed from one pass), written as a set.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from functools import partial

from ..analysis.per_query_stream import streamed_decisions
from ..errors import OptionError
from ..inputs.shards import input_files
from .decisions import check_decisions_path, decisions_chunks
from .files import PER_QUERY_EXTENSIONS, per_query_bytes, per_query_stream_chunks
from .rdp_curve import rdp_curve_bytes
from .summary_json import smooth_sensitivity_history
from .writing import check_destinations, is_special

# The options naming input files, none of which an output may overwrite.
INPUT_OPTIONS = ("predictions", "labels", "student", "query_indices", "add_rdp", "groups",
                 "teacher_groups", "decisions", "outputs")


def check_run_outputs(votes, options: dict, *, output=None, per_query=None, ss_history=None,
                      write_decisions=None, write_rdp=None) -> None:
    """Refuse, before any work, outputs that cannot be written as asked: two to one file,
    no directory, one of the inputs (VOTES, ``options``' files), an extension
    ``--write-decisions`` or ``--write-rdp`` cannot write, and outputs the run cannot give
    (one RDP curve of an individualized run; decisions of a multi-label run)."""
    check_destinations(((f"{option} {path}", path) for option, path in (
        ("-o", output), ("--per-query", per_query), ("--ss-history", ss_history),
        ("--write-decisions", write_decisions), ("--write-rdp", write_rdp))
        if path is not None),
        inputs=input_files([("", votes)] + [
            (f"--{key.replace('_', '-')}", options.get(key)) for key in INPUT_OPTIONS]))
    if write_decisions is not None:
        check_decisions_path(write_decisions)
    if (ss_history is not None
            and os.path.splitext(str(ss_history))[1].lower() not in PER_QUERY_EXTENSIONS):
        raise OptionError(f"{ss_history}: unknown extension for --ss-history (use "
                          f"{', '.join(PER_QUERY_EXTENSIONS)})")
    if write_rdp is not None and os.path.splitext(str(write_rdp))[1].lower() != ".csv":
        raise OptionError(f"{write_rdp}: unknown extension for --write-rdp (use .csv: it "
                          "writes the table order,rdp)")
    if write_rdp is not None and options.get("individualized") is not None:
        raise OptionError("--write-rdp writes one curve; an individualized run has one "
                          "per group")
    if options.get("multilabel") is not None and write_decisions is not None:
        raise OptionError("--write-decisions does not combine with --multilabel (the "
                          "per-query table holds each query's released label set)")


def run_files(result, *, summary_text: Callable[[], str], output=None, per_query=None,
              write_decisions=None, ss_history=None, write_rdp=None) -> dict:
    """``{path: bytes, an iterable of bytes or a function giving bytes}`` of the outputs asked
    for (``write_outputs``): the summary and the release's history are formed after the table
    and decisions, whose pass forms a streamed run's smooth-sensitivity release."""
    files: dict = {}
    table_frames = decision_frames = None
    if per_query is not None and write_decisions is not None and not (
            is_special(per_query) or is_special(write_decisions)):
        # one pass over the votes feeds both files: written in turn, a piece of each
        table_frames, decision_frames = itertools.tee(result.iter_frames(), 2)
    if per_query is not None:
        files[per_query] = per_query_stream_chunks(
            result.iter_frames() if table_frames is None else table_frames, per_query)
    if output is not None:
        files[output] = lambda: summary_text().encode()
    if write_decisions is not None:  # from the table's stream, a piece at a time
        files[write_decisions] = decisions_chunks(
            streamed_decisions(result, decision_frames), write_decisions,
            result.mechanism.name)
    if ss_history is not None:
        files[ss_history] = partial(_history_bytes, result, ss_history)
    if write_rdp is not None:
        files[write_rdp] = rdp_curve_bytes(result.orders, result.rdp_total,
                                           terms=result.queries + 1)
    return files


def _history_bytes(result, path: str) -> bytes:
    """``--ss-history``'s table of the release's reports."""
    import pandas as pd

    history = smooth_sensitivity_history(result.smooth_sensitivity)
    return per_query_bytes(pd.DataFrame(history), path)
