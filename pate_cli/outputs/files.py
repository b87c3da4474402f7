"""Per-query tables as bytes (CSV, JSON lines, parquet) and atomic file writing.

Output files are written to a temporary file in the target directory and renamed into
place, so a failure never leaves a half-written file."""

from __future__ import annotations

import io
import json
import math
import os
import tempfile

import numpy as np
import pandas as pd

from ..analysis.serialize import plain_number

PER_QUERY_EXTENSIONS = (".csv", ".json", ".jsonl", ".parquet")


def per_query_bytes(frame: pd.DataFrame, path: str) -> bytes:
    """Serialise the per-query table for ``path``'s extension (CSV, JSON lines, parquet)."""
    extension = os.path.splitext(path)[1].lower()
    if extension == ".csv":
        return frame.to_csv(index=False, lineterminator="\n").encode()
    if extension in (".json", ".jsonl"):
        records = frame.astype(object).where(frame.notna(), None).to_dict("records")
        return "".join(json.dumps(_json_record(r), allow_nan=False) + "\n"
                       for r in records).encode()
    if extension == ".parquet":
        return parquet_bytes(frame, path)
    raise ValueError(f"{path}: unknown extension for the per-query table "
                     f"(use {', '.join(PER_QUERY_EXTENSIONS)})")


def require_pyarrow(path: str) -> None:
    """A one-line error naming ``path`` when pyarrow (the ``parquet`` extra) is missing."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ValueError(f"{path}: writing .parquet needs pyarrow "
                         "(pip install 'pate_cli[parquet]')") from None


def parquet_bytes(frame: pd.DataFrame, path: str) -> bytes:
    """``frame`` as parquet bytes (no index), for writing to ``path``."""
    require_pyarrow(path)
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _json_record(record: dict) -> dict:
    plain = {key: plain_number(value) if isinstance(value, np.generic) else value
             for key, value in record.items()}
    return {key: None if isinstance(value, float) and not math.isfinite(value) else value
            for key, value in plain.items()}


def write_outputs(files: dict) -> None:
    """Write several outputs (path -> bytes) only once every destination is usable.

    Each is written atomically; a destination whose directory is missing stops the run
    before any file is touched. An ``OSError`` becomes a ``ValueError`` naming the file.
    """
    for path in files:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise ValueError(f"{path}: cannot write: the directory {directory} does not exist")
    for path, data in files.items():
        try:
            write_atomically(path, data)
        except OSError as error:
            raise ValueError(f"{path}: cannot write: {error.strerror or error}") from None


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory and a rename."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ValueError(f"{path}: the directory {directory} does not exist")
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".pate-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 -> what open() would give
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def _umask() -> int:
    """The process's file-creation mask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
