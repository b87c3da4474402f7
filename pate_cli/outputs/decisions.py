"""``--write-decisions FILE``: a run's decisions as bytes (cli:decisions), one row per
processed query in order: ``query, outcome, label``. The mechanism is recorded (as
``inputs.decisions`` reads it) so ``--decisions`` can refuse another's file.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Iterator

import numpy as np

WRITE_EXTENSIONS = (".csv", ".jsonl", ".npz")


def decisions_chunks(parts: Iterable, path: str, mechanism: str) -> Iterator[bytes]:
    """The decisions ``parts`` yields as ``path``'s bytes: CSV and JSON lines a part at a
    time; an ``.npz`` whole at the end (its headers need the length and widest outcome)."""
    extension = check_decisions_path(path)
    if extension == ".npz":
        parts = list(parts)
        query = np.concatenate([np.asarray(part.query, dtype=np.int64) for part in parts]
                               or [np.empty(0, np.int64)])
        outcome = np.concatenate([np.asarray(part.outcome, dtype=str) for part in parts]
                                 or [np.empty(0, str)])
        label = np.concatenate([np.asarray(part.label, dtype=np.int64) for part in parts]
                               or [np.empty(0, np.int64)])
        yield _npz_bytes({"query": query, "outcome": outcome, "label": label,
                          "mechanism": np.array(mechanism)})
        return
    if extension == ".csv":
        yield f"# mechanism: {mechanism}\nquery,outcome,label\n".encode()
    else:
        yield (json.dumps({"mechanism": mechanism}) + "\n").encode()
    for part in parts:
        query = np.asarray(part.query, dtype=np.int64).tolist()
        outcome = np.asarray(part.outcome, dtype=str).tolist()
        label = np.asarray(part.label, dtype=np.int64).tolist()
        if extension == ".csv":
            lines = [f"{q},{o},{'' if y < 0 else y}\n"
                     for q, o, y in zip(query, outcome, label, strict=True)]
        else:
            lines = [json.dumps({"query": q, "outcome": o, "label": None if y < 0 else y})
                     + "\n" for q, o, y in zip(query, outcome, label, strict=True)]
        yield "".join(lines).encode()


def check_decisions_path(path: str) -> str:
    """The extension of ``path``, or ``ValueError`` where ``decisions_chunks`` cannot write it."""
    extension = os.path.splitext(path)[1].lower()
    if extension not in WRITE_EXTENSIONS:
        raise ValueError(f"{path}: unknown extension for --write-decisions (use "
                         f"{', '.join(WRITE_EXTENSIONS)})")
    return extension


def _npz_bytes(arrays: dict) -> bytes:
    """An ``.npz`` (as ``numpy.savez``) with fixed member dates: same decisions, same bytes."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for key, array in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, member.getvalue())
    return buffer.getvalue()
