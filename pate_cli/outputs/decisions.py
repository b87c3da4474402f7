"""``--write-decisions FILE``: a run's decisions as bytes (CLI.md "Decisions").

One row per processed query in processing order: ``query, outcome, label`` (label empty
when none). The mechanism is recorded so that ``--decisions`` can refuse a file made by
another one: a ``# mechanism: NAME`` comment line before the CSV header, a first JSON
line ``{"mechanism": NAME}``, or a 0-d ``mechanism`` array in the ``.npz``
(``inputs.decisions`` reads all three).
"""

from __future__ import annotations

import io
import json
import os

import numpy as np

WRITE_EXTENSIONS = (".csv", ".jsonl", ".npz")


def decisions_bytes(decisions, path: str) -> bytes:
    """``decisions`` (an ``analysis.decisions.LabelDecisions``) serialised for ``path``."""
    extension = os.path.splitext(path)[1].lower()
    query = np.asarray(decisions.query, dtype=np.int64)
    outcome = np.asarray(decisions.outcome, dtype=str)
    label = np.asarray(decisions.label, dtype=np.int64)
    if extension == ".csv":
        lines = [f"# mechanism: {decisions.mechanism}", "query,outcome,label"]
        lines += [f"{q},{o},{'' if y < 0 else y}"
                  for q, o, y in zip(query.tolist(), outcome.tolist(), label.tolist(),
                                     strict=True)]
        return ("\n".join(lines) + "\n").encode()
    if extension == ".jsonl":
        lines = [json.dumps({"mechanism": decisions.mechanism})]
        lines += [json.dumps({"query": q, "outcome": o, "label": None if y < 0 else y})
                  for q, o, y in zip(query.tolist(), outcome.tolist(), label.tolist(),
                                     strict=True)]
        return ("\n".join(lines) + "\n").encode()
    if extension == ".npz":
        return _npz_bytes({"query": query, "outcome": outcome, "label": label,
                           "mechanism": np.array(decisions.mechanism)})
    raise ValueError(f"{path}: unknown extension for --write-decisions (use "
                     f"{', '.join(WRITE_EXTENSIONS)})")


def check_decisions_path(path: str) -> None:
    """Refuse an extension ``decisions_bytes`` cannot write, before any work."""
    if os.path.splitext(path)[1].lower() not in WRITE_EXTENSIONS:
        raise ValueError(f"{path}: unknown extension for --write-decisions (use "
                         f"{', '.join(WRITE_EXTENSIONS)})")


def _npz_bytes(arrays: dict) -> bytes:
    """An ``.npz`` (what ``numpy.savez`` writes) with fixed member dates, so the same
    decisions give the same bytes."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for key, array in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, member.getvalue())
    return buffer.getvalue()
