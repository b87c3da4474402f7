"""Output ids: the generated sequence (output) each query belongs to (cli:per-query,
math:sparse), from a sparse archive's ``output`` array, a long table's ``output`` column or,
for any input, ``--outputs FILE`` (``.npy`` or a one-column ``.csv``/``.tsv``, an optional
header; or an API array). The ids are whole numbers >= 0, one per vote-file row, each output's
rows consecutive (a generation is a sequence). ``--outputs`` and a grouping inside the votes
must agree on every row, so a run never depends on which won. Read whole, as int64.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError, OptionError
from .checks import show_number
from .readers import given_matrix


def checked_ids(name, ids: np.ndarray) -> np.ndarray:
    """``ids`` as int64, else a one-line error naming the first query whose output is not a
    whole number (NaN included) or is negative."""
    if ids.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(ids) | (ids != np.round(ids)))
        if bad.size:
            raise InputError(f"{name}: query {bad[0]} has output {show_number(ids[bad[0]])}, "
                             "not a whole-number id")
    too_big = (ids > np.uint64(2**63 - 1) if ids.dtype.kind == "u"
               else ids >= 2.0**63 if ids.dtype.kind == "f" else np.zeros(ids.shape, bool))
    bad = np.flatnonzero(too_big)
    if bad.size:  # (an int64 would show it negative, or wrap it)
        value = int(ids[bad[0]]) if ids.dtype.kind == "u" else show_number(ids[bad[0]])
        raise InputError(f"{name}: query {bad[0]} has output {value}, above the largest id "
                         "2^63 - 1")
    ids = np.asarray(ids, dtype=np.int64)
    bad = np.flatnonzero(ids < 0)
    if bad.size:
        raise InputError(f"{name}: query {bad[0]} has output {ids[bad[0]]}; outputs are "
                         "ids >= 0")
    return ids


def check_outputs(outputs: np.ndarray, name: str | None) -> None:
    """One line naming the first row whose output came before another one (an output's
    queries must be consecutive rows)."""
    starts = np.flatnonzero(np.concatenate(([True], np.diff(outputs) != 0)))
    ids = outputs[starts]  # one id per run of equal ids, in file order
    order = np.argsort(ids, kind="stable")  # each id's runs, in file order
    again = np.zeros(ids.size, dtype=bool)
    again[order[1:][ids[order[1:]] == ids[order[:-1]]]] = True  # a run after the id's first
    if again.any():
        row = int(starts[np.flatnonzero(again)[0]])
        raise InputError(f"{name}: query {row} returns to output {int(outputs[row])} after "
                         "another output (an output's queries must be consecutive rows)")


def read_outputs(source, *, queries: int, votes_name: str | None) -> tuple[str, np.ndarray]:
    """``(name, ids)`` of ``--outputs`` (a path, or an API array named ``outputs``): one
    checked id per row of the ``queries`` rows of ``votes_name``."""
    name, array, _, _ = given_matrix(source, name="outputs", key="output",
                                     expected="output ids")
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise InputError(f"{name}: expected one output id per query (a single column), got "
                         f"shape {array.shape}")
    if array.shape[0] != queries:
        raise InputError(f"{name}: has {array.shape[0]} output ids, but the votes"
                         f"{_named(votes_name)} have {queries} queries (one output id per row "
                         "of the votes)")
    ids = checked_ids(name, array)
    check_outputs(ids, name)
    return name, ids


def output_starts(ids: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    """Each output's first row and its id, from checked output ids (an output's rows are
    consecutive); None without a grouping."""
    if ids is None:
        return None
    starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1]))[: ids.size])
    return starts, ids[starts]


def whole_outputs(starts: tuple[np.ndarray, np.ndarray], queries: int, rows: int) -> int:
    """The most of the first ``queries`` of ``rows`` that end where an output ends:
    ``queries`` itself unless it ends inside an output, then that output's first row (0
    inside the first output). ``starts``: :func:`output_starts`."""
    if queries >= rows:
        return queries
    first = starts[0]
    return int(first[np.searchsorted(first, queries, side="right") - 1])


def whole_outputs_kept(starts, queries: int | None,
                       rows: int) -> tuple[int | None, str | None]:
    """``-n`` (``queries``) over an output grouping (:func:`output_starts`, or None) of ``rows``
    rows: the whole outputs among the first ``queries`` (a generation is never cut) and where
    ``queries`` cut one (:func:`kept_note`'s), else None; ``OptionError`` where it ends inside
    the first output."""
    kept = queries if starts is None or queries is None else whole_outputs(starts, queries,
                                                                          rows)
    if kept == queries:
        return queries, None
    at = int(np.searchsorted(starts[0], queries, side="right")) - 1
    output = int(starts[1][at])
    end = int(starts[0][at + 1]) if at + 1 < starts[0].size else rows
    where = f"-n {queries} ends inside output {output} (queries {kept} to {end - 1})"
    if kept == 0:
        raise OptionError(f"{where}: give -n {end} or more to analyse it whole (a "
                          "generation is never cut)")
    return kept, where


def kept_note(where: str, kept: int) -> str:
    """The warning of :func:`whole_outputs_kept`'s cut ``where``: the ``kept`` queries."""
    return (f"{where}: the run analyses the first {kept} queries, the outputs before it "
            "whole (a generation is never cut)")


def attach_outputs(vote_set, outputs):
    """``vote_set`` with ``outputs`` (:func:`read_outputs`) as its output grouping (None keeps
    its own); a grouping the votes already hold must be the same ids on every row."""
    if outputs is None:
        return vote_set
    name, ids = read_outputs(outputs, queries=vote_set.queries, votes_name=vote_set.path)
    own = vote_set.outputs
    if own is not None and not np.array_equal(own, ids):
        row = int(np.flatnonzero(own != ids)[0])
        raise InputError(f"{name}: --outputs gives query {row} output {ids[row]}, but the "
                         f"votes{_named(vote_set.path)} hold their own grouping, with output "
                         f"{own[row]} (give one grouping: drop --outputs, or the votes' own)")
    return replace(vote_set, outputs=ids)


def _named(path: str | None) -> str:
    return "" if path is None else f" ({path})"
