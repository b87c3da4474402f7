"""The rows of a sweep as they finish, in a sidecar file beside ``--out`` (``OUT.partial``).

``pate-sweep --out OUT`` writes OUT once, atomically and in grid order, when the run
ends. Until then every finished row is also appended to ``OUT.partial``, one JSON object
per line (every column of ``SWEEP_COLUMNS``, numbers as JSON numbers, so rows read back
exactly; NaN and infinities as Python's ``json`` writes them), in the order the rows
finish, each line written with one ``os.write`` as soon as its row arrives. So a run
killed outright (``kill -9``, a crash, a lost machine) or one that cannot write OUT (a
read-only directory, a full disk, a file-size limit) leaves its rows on disk, and
``--resume`` reads them with OUT's. The sidecar is removed once OUT is written.

A run without ``--resume`` starts the sidecar afresh; one with ``--resume`` appends to
it. A sidecar that is a symbolic link is replaced by a file of its own (the link is
removed, never written through: the file it points to is left as it was). Reading skips
what a killed writer may leave: a last line cut short, a line that is not a complete row.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from .columns import SWEEP_COLUMNS

SUFFIX = ".partial"


def journal_path(out: str) -> str:
    """The sidecar of the table ``out``: ``out`` + ``.partial``."""
    return os.fspath(out) + SUFFIX


class RowJournal:
    """Appends finished rows to a sidecar; stops (and says why) at the first failure.

    ``error`` is None while every row handed to ``append`` is on disk, else the
    ``OSError`` that stopped it (the rows before it are kept).
    """

    def __init__(self, path: str, *, append: bool):
        self.path = path
        self.rows = 0
        self.error: OSError | None = None
        self._fd: int | None = None
        flags = (os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
                 | getattr(os, "O_NOFOLLOW", 0))
        try:
            if os.path.islink(path):  # never written through: the link itself is replaced
                os.remove(path)
            self._fd = os.open(path, flags, 0o666)
            if append:
                self._end_last_line()
        except OSError as error:
            self._fail(error)

    @property
    def intact(self) -> bool:
        """Every row appended so far is in the sidecar."""
        return self.error is None

    def append(self, row: dict) -> None:
        """Write ``row`` (its SWEEP_COLUMNS) as one line; on failure stop writing."""
        if self._fd is None:
            return
        line = json.dumps({column: _plain(row.get(column)) for column in SWEEP_COLUMNS})
        try:
            _write_all(self._fd, (line + "\n").encode())
        except OSError as error:
            self._fail(error)
            return
        self.rows += 1

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.close(fd)
            except OSError as error:
                self.error = self.error or error

    def remove(self) -> None:
        """Close and delete the sidecar (its rows are in the table now)."""
        self.close()
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass

    def _end_last_line(self) -> None:
        """After a writer killed mid-line, start on a new line (the cut one is skipped)."""
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as stream:
                stream.seek(size - 1)
                if stream.read(1) != b"\n":
                    _write_all(self._fd, b"\n")

    def _fail(self, error: OSError) -> None:
        self.error = error
        self.close()


def read_journal(path: str) -> list[dict]:
    """The complete rows of a sidecar, in the order written; [] when there is none.

    A line that is not a JSON object with every SWEEP_COLUMN (a line cut short by a
    kill, another program's file) is skipped.
    """
    try:
        with open(path, "rb") as stream:
            lines = stream.read().splitlines()
    except FileNotFoundError:
        return []
    rows = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and all(column in row for column in SWEEP_COLUMNS):
            rows.append({column: row[column] for column in SWEEP_COLUMNS})
    return rows


def _write_all(fd: int, data: bytes) -> None:
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _plain(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
