"""``pate-sweep --resume``: which rows of an existing table (and its sidecar of finished rows,
``journal.py``) are reused, replaced or kept. A row is reused only when it matches a planned
point on every column that made its numbers (``KEY_COLUMNS``: options, input files' sha256,
tool version)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..analysis.run import reports_any_run_bound
from ..mechanisms.aggregators import SELECTING
from .columns import place_key, point_key

if TYPE_CHECKING:
    from .points import SweepPoint


@dataclass(frozen=True)
class ResumePlan:
    """``--resume``'s sort of a table's rows: ``reused`` ``{point index: row}`` (every
    KEY_COLUMN matches); ``replaced`` (planned places that do not: recomputed); ``others``
    (unplanned places, kept in order)."""

    reused: dict
    replaced: int
    others: list


def match_rows(points: list[SweepPoint], rows: list[dict]) -> ResumePlan:
    """Sort a table's ``rows`` against the planned ``points`` (see ``ResumePlan``)."""
    by_key: dict = {}
    for row in rows:
        key = point_key(row)
        if key is not None and _has_epsilon(row):  # an emptied figure is computed again
            by_key.setdefault(key, row)
    reused = {point.index: by_key[point.key()] for point in points if point.key() in by_key}
    planned = {point.place() for point in points}
    taken = {id(row) for row in reused.values()}
    others, replaced = [], 0
    for row in rows:
        if id(row) in taken:
            continue
        if place_key(row) in planned:
            replaced += 1
        else:
            others.append(row)
    return ResumePlan(reused=reused, replaced=replaced, others=others)


def _has_epsilon(row: dict) -> bool:
    """Whether every figure of a row is a valid epsilon (an older table lacks ``epsilon_max``
    or ``epsilon_any_run``; an edited cell may be negative)."""
    figures = [row.get("epsilon"), row.get("epsilon_max")]
    if reports_any_run_bound(row.get("mechanism") in SELECTING, str(row.get("accounting")),
                             halts=row.get("budget") is not None):
        figures.append(row.get("epsilon_any_run"))
    return all(isinstance(value, (int, float)) and not math.isnan(value) and value >= 0
               for value in figures)


def resumed_rows(points: list[SweepPoint], table: list[dict], journal: list[dict]
                 ) -> tuple[list[dict], list[dict]]:
    """The rows ``--resume`` starts from: the table's, the sidecar's at planned places over
    them (:func:`merge_rows`), and the sidecar's at unplanned places (another grid's
    unfinished run: kept in the sidecar, never folded into this table)."""
    planned = {point.place() for point in points}
    mine = [row for row in journal if place_key(row) in planned]
    return merge_rows(table, mine), [row for row in journal if place_key(row) not in planned]


def merge_rows(table: list[dict], journal: list[dict]) -> list[dict]:
    """A table's rows with its sidecar's (newer) over them at the same ``place_key``, new
    places after; among sidecar rows at one place the last wins."""
    rows = list(table)
    where = {place_key(row): position for position, row in enumerate(rows)}
    for row in journal:
        place = place_key(row)
        if place in where:
            rows[where[place]] = row
        else:
            where[place] = len(rows)
            rows.append(row)
    return rows


def resume_text(out: str, plan: ResumePlan, total: int, *, exists: bool,
                sidecar: str) -> str:
    """One line: how many rows ``--resume`` reuses, how many it computes, why others are not."""
    reused = len(plan.reused)
    partial = os.path.exists(sidecar)
    rows = f"{total} row{'s' if total != 1 else ''}"
    if not exists and not partial:
        return f"pate-sweep: {out} does not exist yet; computing {rows}"
    source = " and ".join(([out] if exists else []) + ([sidecar] if partial else []))
    line = f"pate-sweep: reused {reused} of {rows} from {source}; computing {total - reused}"
    if plan.replaced:
        line += (f" (replacing {plan.replaced} row{'s' if plan.replaced > 1 else ''} made "
                 "with other options, other input files or another version, or without "
                 "epsilon_max)")
    return line
