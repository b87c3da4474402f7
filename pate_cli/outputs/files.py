"""Per-query tables as bytes (CSV, JSON lines, parquet) and atomic file writing.

Output files are written to a temporary file in the target directory and renamed into
place, all outputs of one command together, so a failure never leaves a half-written file
nor a mix of old and new outputs (``write_outputs``)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from ..analysis.grouped_run import in_order
from ..analysis.serialize import plain_number
from .csv_arrow import csv_bytes

if TYPE_CHECKING:
    import pandas as pd

PER_QUERY_EXTENSIONS = (".csv", ".json", ".jsonl", ".parquet")
WRITE_CHUNK = 1 << 20
CHUNK_ROWS = 1 << 16  # rows of a per-query table formatted at a time (a parquet row group)


def per_query_bytes(frame: pd.DataFrame, path: str) -> bytes:
    """Serialise the per-query table for ``path``'s extension (CSV, JSON lines, parquet)."""
    return b"".join(per_query_chunks(frame, path))


def per_query_chunks(frame: pd.DataFrame, path: str, *,
                     rows: int = CHUNK_ROWS) -> Iterator[bytes]:
    """``per_query_bytes`` in pieces of ``rows`` rows (the same bytes, joined): CSV and
    JSON lines are formatted a chunk at a time, parquet gets row groups of ``rows``.
    ``write_outputs`` takes the pieces as they come, so the whole text is never held.

    JSON lines are formatted column by column with numpy (``json_lines``), not a Python
    loop over rows; so are CSV chunks (``csv_arrow.csv_bytes``: the bytes of pandas'
    ``to_csv`` of each slice, several times faster, by pyarrow's kernels when installed;
    other column types than the per-query table's fall back to ``to_csv``), after
    pandas' header line once. An unknown extension (or parquet without pyarrow) raises
    here, before any piece.
    """
    extension = os.path.splitext(path)[1].lower()
    if extension not in PER_QUERY_EXTENSIONS:
        raise ValueError(f"{path}: unknown extension for the per-query table "
                         f"(use {', '.join(PER_QUERY_EXTENSIONS)})")
    if extension == ".parquet":
        require_pyarrow(path)
    return _chunks(frame, path, extension, rows)


def _chunks(frame: pd.DataFrame, path: str, extension: str, rows: int) -> Iterator[bytes]:
    if extension == ".parquet":
        yield parquet_bytes(frame, path, row_group_size=rows)
        return
    if extension == ".csv":
        yield frame.iloc[:0].to_csv(index=False, lineterminator="\n").encode()
    for start in range(0, len(frame), rows):
        part = frame.iloc[start:start + rows]
        if extension == ".csv":
            yield csv_bytes(part)
        else:
            yield json_lines(part).encode()


def per_query_stream_chunks(frames, path: str, *,
                            rows: int | None = None) -> Iterator[bytes]:
    """``per_query_chunks`` of the table whose consecutive pieces ``frames`` yields (e.g.
    ``AnalysisResult.iter_frames()``): the same bytes as for the whole table, while only
    ``rows`` rows (default ``CHUNK_ROWS``) are held at a time, a piece of CSV or JSON
    lines formatted on a background thread while the next frame is drawn. The extension
    is checked before any frame is drawn."""
    import pandas as pd
    rows = CHUNK_ROWS if rows is None else rows
    extension = os.path.splitext(path)[1].lower()
    if extension not in PER_QUERY_EXTENSIONS:
        raise ValueError(f"{path}: unknown extension for the per-query table "
                         f"(use {', '.join(PER_QUERY_EXTENSIONS)})")
    if extension == ".parquet":
        require_pyarrow(path)

    def regrouped() -> Iterator[pd.DataFrame]:
        """The frames cut again into pieces of exactly ``rows`` rows (the last shorter),
        as ``per_query_chunks`` slices the whole table."""
        held: list[pd.DataFrame] = []
        size, cut = 0, False
        for frame in frames:
            held.append(frame)
            size += len(frame)
            while size >= rows:
                joined = pd.concat(held, ignore_index=True) if len(held) > 1 else held[0]
                yield joined.iloc[:rows].reset_index(drop=True)
                rest = joined.iloc[rows:].reset_index(drop=True)
                held, size, cut = [rest], len(rest), True
        if size or not cut:  # the rest, or an empty table (its header)
            yield (pd.concat(held, ignore_index=True) if len(held) > 1
                   else held[0] if held else pd.DataFrame())

    def pieces() -> Iterator[bytes]:
        first = True
        writer, sink = None, io.BytesIO()
        for part in regrouped():
            if extension == ".parquet":
                import pyarrow as pa
                import pyarrow.parquet as pq
                table = pa.Table.from_pandas(part, preserve_index=False)
                if writer is None:
                    writer = pq.ParquetWriter(sink, table.schema)
                writer.write_table(table, row_group_size=rows)
                yield sink.getvalue()
                sink.seek(0)
                sink.truncate()
                continue
            if extension == ".csv" and first:
                yield part.iloc[:0].to_csv(index=False, lineterminator="\n").encode()
            first = False
            if len(part):
                yield part  # formatted by as_bytes, below
        if writer is not None:
            writer.close()
            yield sink.getvalue()

    def as_bytes(piece) -> bytes:
        """A piece of the file: the CSV header as it is, a frame formatted."""
        if isinstance(piece, bytes):
            return piece
        return csv_bytes(piece) if extension == ".csv" else json_lines(piece).encode()

    if extension == ".parquet":
        return pieces()
    return _ahead(as_bytes, pieces())  # text formed while the next frame is computed


def _ahead(function, items: Iterator) -> Iterator:
    """``map(function, items)``, each result formed on one background thread while the
    next item is drawn (the text of one piece while the next is computed: pyarrow and
    numpy release the GIL); at most two pieces in flight."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pate-text") as pool:
        yield from in_order(partial(pool.submit, function), items, window=2)


def json_lines(frame: pd.DataFrame) -> str:
    """One JSON object per row (``json.dumps`` of the row's dict: ``", "`` and ``": "``
    separators, floats as ``repr``, missing and non-finite values ``null``), formatted a
    column at a time."""
    if len(frame) == 0:
        return ""
    if len(frame.columns) == 0:
        return "{}\n" * len(frame)
    line = np.full(len(frame), "", dtype=object)
    for number, column in enumerate(frame.columns):
        key = ("{" if number == 0 else ", ") + json.dumps(str(column)) + ": "
        line += key
        line += _json_cells(frame[column])
    return "}\n".join(line.tolist()) + "}\n"


def _json_cells(column: pd.Series) -> np.ndarray:
    """Each value of ``column`` as JSON text (an object array of ``str``), as ``json.dumps``
    writes the Python value ``DataFrame.astype(object)`` gives (``int``, ``float``, ``bool``,
    ``str``): numbers through ``int.__str__``/``float.__repr__`` mapped over the column."""
    missing = column.isna().to_numpy()
    kind = column.dtype.kind
    text = np.empty(len(column), dtype=object)
    if kind == "b":
        text[:] = np.where(column.to_numpy(dtype=bool, na_value=False), "true", "false")
    elif kind in "iu":
        values = column.to_numpy(dtype=np.int64 if kind == "i" else np.uint64, na_value=0)
        text[:] = list(map(str, values.tolist()))
    elif kind == "f":
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
        missing = missing | ~np.isfinite(values)
        text[:] = list(map(repr, values.tolist()))
    else:
        import pandas as pd

        values = column.to_numpy(dtype=object)
        if pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty"):
            # text (outcome names): json.dumps of each distinct value only
            distinct, where = np.unique(np.where(missing, "", values).astype(str),
                                        return_inverse=True)
            encoded = np.empty(distinct.size, dtype=object)
            encoded[:] = [json.dumps(value) for value in distinct.tolist()]
            text = encoded[where]
        else:  # mixed Python objects (no per-query column is): one value at a time
            text[:] = [json.dumps(_plain(value), allow_nan=False) for value in values]
    text[missing] = "null"
    return text


def _plain(value):
    """A cell as ``json.dumps`` wants it (numpy scalars to Python numbers, as
    ``plain_number``; non-finite floats to ``None``)."""
    value = plain_number(value) if isinstance(value, np.generic) else value
    return None if isinstance(value, float) and not math.isfinite(value) else value


def require_pyarrow(path: str) -> None:
    """A one-line error naming ``path`` when pyarrow (the ``parquet`` extra) is missing."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ValueError(f"{path}: writing .parquet needs pyarrow "
                         "(pip install 'pate_cli[parquet]')") from None


def parquet_bytes(frame: pd.DataFrame, path: str, *, row_group_size: int | None = None
                  ) -> bytes:
    """``frame`` as parquet bytes (no index), for writing to ``path``; row groups of
    ``row_group_size`` rows [default: pyarrow's]."""
    require_pyarrow(path)
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, row_group_size=row_group_size)
    return buffer.getvalue()


def write_outputs(files: dict) -> None:
    """Write the outputs of one command (path -> bytes, or an iterable of bytes such as
    ``per_query_chunks``) as a set: all of them or none.

    Every regular destination is first written in full to a temporary file beside it;
    only when all of them (and any special destination, below) are written are the
    temporaries renamed into place. If any write fails, every temporary is removed and
    no regular destination is touched. An existing regular file keeps its permissions
    (a new one gets the umask's, as ``open`` would give); a symbolic link is followed
    (its target is replaced, the link kept). A destination that exists and is not a
    regular file (``/dev/null``, a FIFO), and ``/dev/stdout`` whatever it is redirected
    to, is written directly, never replaced or removed. Problems are ``ValueError``s
    naming the file (``cannot write: ...``): a missing directory, a directory as
    destination, two paths naming the same file, and any ``OSError`` (read-only
    directory, full disk, file too large).
    """
    destinations = check_destinations((path, path) for path in files)
    contents = list(files.values())
    staged: list[str] = []  # temporaries not yet renamed into place
    current = ""
    try:
        for destination, data in zip(destinations, contents, strict=True):
            current = destination.path
            if not destination.special:
                staged.append(_stage(destination, data))
        for destination, data in zip(destinations, contents, strict=True):
            current = destination.path
            if destination.special:
                _write_in_place(destination, data)
        temporaries = iter(list(staged))
        for destination in destinations:
            current = destination.path
            if not destination.special:
                temporary = next(temporaries)
                os.replace(temporary, destination.target)
                staged.remove(temporary)
    except OSError as error:
        raise ValueError(f"{current}: cannot write: {error.strerror or error}") from None
    finally:
        for temporary in staged:
            _remove(temporary)


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory and a rename.

    ``write_outputs`` for one file: the same rules (kept permissions, special files
    written in place) and the same ``ValueError`` naming the file on any failure.
    """
    write_outputs({path: data})


@dataclass(frozen=True)
class Destination:
    """Where one output goes: ``path`` as given, ``target`` the file written (for a
    regular or new file, ``path`` with symbolic links resolved), ``mode`` the permissions
    of the replacement (``None`` for a special file, written in place), ``identity`` what
    tells two paths to the same file apart (``None`` for a special file), ``descriptor``
    the open file descriptor that ``path`` names (``/dev/stdout``: 1), written to as it is
    (a shell's ``>> log`` keeps appending), whatever file it is."""

    path: str
    target: str
    mode: int | None
    identity: object
    descriptor: int | None = None

    @property
    def special(self) -> bool:
        return self.mode is None


def check_destinations(outputs, inputs=()) -> list[Destination]:
    """Refuse, before any work, outputs that cannot be written as asked.

    ``outputs`` is a sequence of ``(name, path)`` (``name`` is how the message shows the
    path, e.g. ``"-o x.json"``); ``inputs`` the same for the files the command reads.
    Raises ``ValueError`` (one line) when a directory is missing, a destination is a
    directory, two outputs are the same file, or an output is one of the inputs (it would
    be lost): the same file once ``.``, ``..`` and symbolic links are resolved, or the
    same inode. Special files (``/dev/null``) may take several outputs.
    """
    destinations, seen = [], {}
    for name, path in outputs:
        destination = _destination(str(path))
        if destination.identity is not None:
            if destination.identity in seen:
                raise ValueError(f"{seen[destination.identity]} and {name} are the same "
                                 f"file ({destination.target}); give each output its own "
                                 "path")
            seen[destination.identity] = name
        destinations.append(destination)
    for name, path in inputs:
        identity = _file_identity(str(path))
        if identity is not None and identity in seen:
            raise ValueError(f"{seen[identity]} is the input {name}: writing it would "
                             "destroy the input; give the output another path")
    return destinations


def _file_identity(path: str):
    """``(device, inode)`` of an existing regular file, else None (stdin, devices, a
    path that does not exist: the reader says what is wrong with it)."""
    if path == "-" or _descriptor_named(path) is not None:
        return None
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISREG(status.st_mode) else None


def _destination(path: str) -> Destination:
    descriptor = _descriptor_named(path)
    if descriptor is not None:
        return Destination(path, path, None, None, descriptor)
    try:
        status = os.stat(path)  # follows links, also /dev/stdout's
    except FileNotFoundError:
        target = os.path.realpath(path)
        directory = os.path.dirname(target)
        if not os.path.isdir(directory):
            raise ValueError(f"{path}: cannot write: the directory {directory} does not "
                             "exist") from None
        return Destination(path, target, 0o666 & ~_umask(), target)  # as open() would
    except OSError as error:
        raise ValueError(f"{path}: cannot write: {error.strerror or error}") from None
    if stat.S_ISDIR(status.st_mode):
        raise ValueError(f"{path}: cannot write: it is a directory")
    if stat.S_ISREG(status.st_mode):
        return Destination(path, os.path.realpath(path), stat.S_IMODE(status.st_mode),
                           (status.st_dev, status.st_ino))
    return Destination(path, path, None, None)  # a device, FIFO or socket: written in place


def _stage(destination: Destination, data: bytes) -> str:
    """``data`` in a new temporary file beside the destination; its path."""
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(destination.target),
                                         prefix=".pate-", suffix=".tmp")
    try:
        try:
            _write_all(handle, data)
        finally:
            os.close(handle)
        os.chmod(temporary, destination.mode)  # mkstemp's 0600 -> the mode to keep
    except BaseException:
        _remove(temporary)
        raise
    return temporary


def _descriptor_named(path: str) -> int | None:
    """N for ``/dev/stdout`` (1), ``/dev/stderr`` (2), ``/dev/fd/N``, ``/proc/self/fd/N``."""
    absolute = os.path.abspath(path)
    named = {"/dev/stdout": "1", "/dev/stderr": "2"}.get(absolute)
    for prefix in ("/dev/fd/", "/proc/self/fd/"):
        if absolute.startswith(prefix):
            named = absolute[len(prefix):]
    return int(named) if named is not None and named.isdigit() else None


def _write_in_place(destination: Destination, data: bytes) -> None:
    """Write to an existing special file (device, FIFO) or an open descriptor: opened or
    duplicated, never created, truncated, replaced or removed."""
    if destination.descriptor is None:
        handle = os.open(destination.target, os.O_WRONLY)
    else:
        for stream in (sys.stdout, sys.stderr):  # what was printed comes first
            with contextlib.suppress(AttributeError, OSError, ValueError):
                stream.flush()
        handle = os.dup(destination.descriptor)
    try:
        _write_all(handle, data)
    finally:
        os.close(handle)


def _write_all(handle: int, data) -> None:
    """Every byte of ``data`` (bytes, or an iterable of bytes written as they come, by
    :func:`_write_behind`) to the file descriptor."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        _write_bytes(handle, data)
    else:
        _write_behind(handle, data)


def _write_bytes(handle: int, data) -> None:
    """``data`` to the descriptor in chunks (a signal arriving during a large write
    interrupts it between two chunks)."""
    view = memoryview(data)
    while view:
        written = os.write(handle, view[:WRITE_CHUNK])
        view = view[written:]


def _write_behind(handle: int, pieces) -> None:
    """Each piece of ``pieces`` written on a background thread while the next is drawn
    (a streamed table's next rows are computed while the last are written; at most two
    pieces wait). A write's error is raised here, and drawing stops; an error while
    drawing stops the writes after the pieces already drawn."""
    import queue
    import threading

    waiting: queue.Queue = queue.Queue(maxsize=2)
    failure: list[BaseException] = []

    def drain() -> None:
        while (piece := waiting.get()) is not None:
            if not failure:
                try:
                    _write_bytes(handle, piece)
                except BaseException as error:  # raised in the drawing thread, below
                    failure.append(error)

    writer = threading.Thread(target=drain, name="pate-write", daemon=True)
    writer.start()
    try:
        for piece in pieces:
            if failure:
                break
            waiting.put(piece)
    finally:
        waiting.put(None)
        writer.join()
    if failure:
        raise failure[0]


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _umask() -> int:
    """The process's file-creation mask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
