"""``--rounds``: several rounds (rows, mechanism, parameters, student) from CSV or JSON."""

from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd

from ..errors import InputError
from .readers import open_text

ROUND_KEYS = ("rows", "mechanism", "threshold", "sigma_threshold", "sigma", "laplace_scale",
              "confidence", "student", "svt_scale", "svt_cutoff", "svt_threshold")


def load_rounds(path) -> list[dict]:
    """A multi-round description (CSV with a header, or a JSON list of objects).

    Each round has ``rows`` (``start:stop``, 0-based, stop excluded; or, in JSON, a list of
    row numbers), ``mechanism`` and optional parameters (``threshold``,
    ``sigma_threshold``, ``sigma``, ``laplace_scale``, ``confidence``, ``student`` (a path,
    relative to the rounds file), ``svt_scale``, ``svt_cutoff``, ``svt_threshold``).
    """
    name, text = open_text(path)
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
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False,
                            skipinitialspace=True)
        rounds = [{key: value for key, value in row.items() if str(value).strip() != ""}
                  for row in frame.to_dict("records")]
    if not rounds:
        raise InputError(f"{name}: describes no rounds")
    base = os.path.dirname(os.path.abspath(name))
    return [_check_round(name, number, spec, base) for number, spec in enumerate(rounds)]


def _check_round(name, number, spec, base) -> dict:
    unknown = sorted(set(spec) - set(ROUND_KEYS))
    if unknown:
        raise InputError(f"{name}: round {number}: unknown field {unknown[0]!r} "
                         f"(known: {', '.join(ROUND_KEYS)})")
    for key in ("rows", "mechanism"):
        if key not in spec:
            raise InputError(f"{name}: round {number}: missing '{key}'")
    clean = {"mechanism": str(spec["mechanism"]).strip()}
    rows = spec["rows"]
    if isinstance(rows, list):
        clean["rows"] = np.asarray(rows, dtype=np.int64)
    else:
        parts = str(rows).split(":")
        try:
            start, stop = (int(p) for p in parts)
        except ValueError:
            raise InputError(f"{name}: round {number}: rows {rows!r} must be start:stop") \
                from None
        if not 0 <= start < stop:
            raise InputError(f"{name}: round {number}: rows {rows!r} is an empty range")
        clean["rows"] = np.arange(start, stop)
    for key in ("threshold", "sigma_threshold", "sigma", "laplace_scale", "confidence",
                "svt_scale", "svt_threshold"):
        if key in spec:
            try:
                clean[key] = float(spec[key])
            except (TypeError, ValueError):
                raise InputError(f"{name}: round {number}: {key} {spec[key]!r} is not a "
                                 "number") from None
    if "svt_cutoff" in spec:
        try:
            clean["svt_cutoff"] = int(spec["svt_cutoff"])
        except (TypeError, ValueError):
            raise InputError(f"{name}: round {number}: svt_cutoff {spec['svt_cutoff']!r} is "
                             "not an integer") from None
    if "student" in spec:
        clean["student"] = os.path.join(base, str(spec["student"]))
    return clean
