"""``--rounds``: several rounds (rows, mechanism, parameters, student) from CSV or JSON,
and each round's rows and student checked against the votes."""

from __future__ import annotations

import os
import re

import numpy as np

from ..errors import InputError
from .readers import open_text, small_csv, text_number
from .votes import load_student

ROUND_KEYS = ("rows", "mechanism", "threshold", "sigma_threshold", "sigma", "laplace_scale",
              "confidence", "student", "svt_scale", "svt_cutoff", "svt_threshold", "eta")


def load_rounds(path) -> list[dict]:
    """A multi-round description (CSV with a header, or a JSON list of objects).

    Each round has ``rows`` (``start:stop``, 0-based, stop excluded, or in JSON a list of row
    numbers; integers only), ``mechanism`` and optional parameters (``threshold``,
    ``sigma_threshold``, ``sigma``, ``laplace_scale``, ``confidence``, ``student`` (a path
    relative to the rounds file), ``svt_scale``, ``svt_cutoff``, ``svt_threshold``, ``eta``).
    ``path`` may be the list of mappings itself, or a DataFrame of the CSV's columns
    (``student`` then relative to the cwd).
    """
    if isinstance(path, (list, tuple)):
        if not all(isinstance(spec, dict) for spec in path):
            raise InputError("the rounds: expected a list of mappings, one per round")
        return _checked("the rounds", list(path), os.getcwd())
    if hasattr(path, "to_csv"):  # read back as the file would be
        name, text, base = "the rounds table", path.to_csv(index=False), os.getcwd()
    else:
        name, text = open_text(path)
        base = os.path.dirname(name)  # students beside it, as given
    if name.lower().endswith(".json"):
        import json

        try:
            rounds = json.loads(text)
        except json.JSONDecodeError as error:
            raise InputError(f"{name}: not valid JSON ({error.msg}, line {error.lineno})") \
                from None
        if not isinstance(rounds, list) or not all(isinstance(r, dict) for r in rounds):
            raise InputError(f"{name}: expected a JSON list of objects, one per round")
    else:
        frame = small_csv(name, text)
        rounds = [{key: value for key, value in row.items() if str(value).strip() != ""}
                  for row in frame.to_dict("records")]
    return _checked(name, rounds, base)


def _checked(name: str, rounds: list[dict], base: str) -> list[dict]:
    if not rounds:
        raise InputError(f"{name}: describes no rounds")
    return [_check_round(name, number, spec, base) for number, spec in enumerate(rounds)]


def round_inputs(spec: dict, vote_set) -> tuple[np.ndarray, np.ndarray | None]:
    """A round's rows, checked against the votes, and an interactive round's student
    probabilities (its ``student`` file)."""
    rows = spec["rows"]  # a range (start:stop) is formed only once inside the votes
    low, high = (rows[0], rows[-1]) if isinstance(rows, range) else (min(rows), max(rows))
    if high >= vote_set.queries or low < 0:
        raise InputError(f"--rounds: rows {low} to {high} but {vote_set.name} has "
                         f"{vote_set.queries} queries (rows 0 to {vote_set.queries - 1})")
    rows = np.asarray(rows, dtype=np.int64)
    if spec["mechanism"] != "interactive":
        return rows, None
    if "student" not in spec:
        raise InputError("--rounds: an interactive round needs a 'student' file")
    return rows, load_student(spec["student"], queries=vote_set.queries,
                              classes=vote_set.classes)


def _check_round(name, number, spec, base) -> dict:
    unknown = sorted(set(spec) - set(ROUND_KEYS))
    if unknown:
        raise InputError(f"{name}: round {number}: unknown field {unknown[0]!r} "
                         f"(known: {', '.join(ROUND_KEYS)})")
    for key in ("rows", "mechanism"):
        if key not in spec:
            raise InputError(f"{name}: round {number}: missing '{key}'")
    clean = {"mechanism": str(spec["mechanism"]).strip().lower(),
             "rows": _rows(name, number, spec["rows"])}
    for key in ("threshold", "sigma_threshold", "sigma", "laplace_scale", "confidence",
                "svt_scale", "svt_threshold", "eta"):
        if key in spec:
            try:
                if isinstance(spec[key], bool):
                    raise TypeError
                clean[key] = (text_number(spec[key].strip()) if isinstance(spec[key], str)
                              else float(spec[key]))
            except (TypeError, ValueError):
                raise InputError(f"{name}: round {number}: {key} {spec[key]!r} is not a "
                                 "number") from None
    if "svt_cutoff" in spec:
        cutoff = _integer(spec["svt_cutoff"])
        if cutoff is None:
            raise InputError(f"{name}: round {number}: svt_cutoff {spec['svt_cutoff']!r} is "
                             "not an integer")
        clean["svt_cutoff"] = cutoff
    if "student" in spec:
        if clean["mechanism"] != "interactive":
            raise InputError(f"{name}: round {number}: a student applies to interactive "
                             f"rounds only, not {clean['mechanism']!r}")
        student = spec["student"]  # the API's student array is taken as it is
        clean["student"] = (os.path.join(base, os.fspath(student))
                            if isinstance(student, (str, os.PathLike)) else student)
    return clean


def _rows(name, number, rows) -> list[int] | range:
    """The round's row numbers: ``start:stop`` text or a JSON list, integers written as
    such (``1000``, not ``1e3`` or ``0.5``), never truncated."""
    if isinstance(rows, (list, tuple, np.ndarray)):
        rows = np.asarray(rows).tolist() if isinstance(rows, np.ndarray) else rows
        if not rows:
            raise InputError(f"{name}: round {number}: rows is an empty list")
        values: list[int] = []
        first: dict[int, int] = {}  # each row's entry
        for entry, value in enumerate(rows):
            row = _integer(value, text=False)
            if row is None:
                raise InputError(f"{name}: round {number}: row {value!r} (entry {entry}) is "
                                 "not an integer row number")
            if row in first:
                raise InputError(f"{name}: round {number}: row {row} is listed twice "
                                 f"(entries {first[row]} and {entry})")
            first[row] = entry
            values.append(row)
        return values
    parts = str(rows).split(":") if isinstance(rows, str) else [rows]
    if len(parts) != 2:
        raise InputError(f"{name}: round {number}: rows {rows!r} must be start:stop "
                         "(0-based, stop excluded) or, in JSON, a list of row numbers")
    start, stop = (_integer(part) for part in parts)
    for bound, value, parsed in (("start", parts[0], start), ("stop", parts[1], stop)):
        if parsed is None:
            raise InputError(f"{name}: round {number}: rows {rows!r}: {bound} "
                             f"{value.strip()!r} is not an integer row number")
    if start < 0:
        raise InputError(f"{name}: round {number}: rows {rows!r}: start {start} is below 0 "
                         "(rows are 0-based)")
    if not start < stop:
        raise InputError(f"{name}: round {number}: rows {rows!r} is an empty range")
    return range(start, stop)


_INTEGER = re.compile(r"[+-]?[0-9]+")


def _integer(value, *, text: bool = True) -> int | None:
    """``value`` as an int when it is one: a JSON integer, or (``text``) digits with an optional
    sign; None for anything else (``0.5``, ``1e3``, ``1.0``, ``true``, ``"7"`` in JSON)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if text and isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    return None
