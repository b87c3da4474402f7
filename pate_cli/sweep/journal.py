"""The rows of a sweep as they finish, in a sidecar beside ``--out`` (``OUT.partial``).

OUT is written once, atomically, at the end; until then each finished row is appended to the
sidecar with one ``os.write`` (a JSON object of ``SWEEP_COLUMNS`` per line), so a killed run
leaves its rows for ``--resume``. The sidecar starts afresh without ``--resume`` and is removed
once OUT is written; a symbolic link there is replaced, never written through; a last line cut
short by a kill is dropped before the first new row."""

from __future__ import annotations

import json
import math
import os

import numpy as np

from ..outputs.writing import write_atomically
from .columns import SWEEP_COLUMNS
from .table import TEXT_COLUMNS

SUFFIX = ".partial"
# Columns an older release's sidecar lacks: its rows read with them empty (their points are
# computed again, ``resume._has_epsilon``; another grid's stay in the sidecar).
LATER_COLUMNS = ("epsilon_max", "epsilon_any_run")


def journal_path(out: str) -> str:
    """The sidecar of the table ``out``: ``out`` + ``.partial``."""
    return os.fspath(out) + SUFFIX


class RowJournal:
    """Appends finished rows to a sidecar; ``error``: None while every row is on disk, else the
    ``OSError`` that stopped it (rows before it kept)."""

    def __init__(self, path: str, *, append: bool):
        self.path = path
        self.rows = 0
        self.error: OSError | None = None
        self._fd: int | None = None
        self._opened = False  # the sidecar is this journal's (else never removed)
        flags = (os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
                 | getattr(os, "O_NOFOLLOW", 0))
        try:
            if os.path.islink(path):  # never written through: the link itself is replaced
                os.remove(path)
            self._fd = os.open(path, flags, 0o666)
            self._opened = True
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
        try:
            _write_all(self._fd, (_line(row) + "\n").encode())
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

    def keep_only(self, rows: list[dict]) -> None:
        """Close, leaving only ``rows`` (another grid's, not in this run's table) in the
        sidecar, rewritten atomically."""
        self.close()
        if self._opened:
            keep_rows(self.path, rows)

    def remove(self) -> None:
        """Close and delete the sidecar (its rows are in the table now)."""
        self.close()
        if not self._opened:  # a directory or an unreadable file of that name: not ours
            return
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass

    def _end_last_line(self) -> None:
        """After a writer killed mid-line, drop the cut line (read, and skipped, before)."""
        size = end = os.fstat(self._fd).st_size
        with open(self.path, "rb") as stream:
            while end:
                start = max(0, end - (1 << 16))
                stream.seek(start)
                cut = stream.read(end - start).rfind(b"\n")
                if cut >= 0:
                    end = start + cut + 1
                    break
                end = start
        if end != size:
            os.ftruncate(self._fd, end)

    def _fail(self, error: OSError) -> None:
        self.error = error
        self.close()


def keep_rows(path: str, rows: list[dict]) -> None:
    """Rewrite the sidecar ``path`` (atomically) to hold only ``rows``."""
    write_atomically(path, "".join(_line(row) + "\n" for row in rows).encode())


def read_journal(path: str, damage: list | None = None) -> list[dict]:
    """A sidecar's complete rows in order ([] when none). A last line cut short is skipped
    silently; other incomplete rows, or an unreadable sidecar, go to ``damage`` (one sentence
    each: ``--resume`` warns)."""
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except FileNotFoundError:
        return []
    except OSError as error:
        if damage is not None:
            damage.append(f"cannot read {path} ({error.strerror or type(error).__name__}); "
                          "its rows are computed again")
        return []
    lines = data.splitlines()
    rows, skipped = [], 0
    for number, line in enumerate(lines, 1):
        row = _row(line)
        if row is not None:
            rows.append(row)
        elif number < len(lines) or data.endswith(b"\n"):  # not the cut last line
            skipped += 1
    if skipped and damage is not None:
        many = skipped > 1
        damage.append(f"{path}: {skipped} line{'s are' if many else ' is'} not a pate-sweep "
                      f"row and {'are' if many else 'is'} skipped (the point"
                      f"{'s they' if many else ' it'} held {'are' if many else 'is'} "
                      "computed again)" if rows
                      else f"cannot read {path} (no line is a pate-sweep row); its rows are "
                      "computed again")
    return rows


def _row(line: bytes) -> dict | None:
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(row, dict) and all(column in row for column in SWEEP_COLUMNS
                                     if column not in LATER_COLUMNS):
        row = {column: row.get(column) for column in SWEEP_COLUMNS}
        if all(_cell_fits(column, value) for column, value in row.items()):
            return row
    return None


def _cell_fits(column: str, value) -> bool:
    """A cell a row's key and table can hold: a number in a number column, text (or a number,
    read as text) in a text column, or null (an edited ``"sigma": ""`` is no row: no key)."""
    if value is None:
        return True
    if isinstance(value, str) and column in TEXT_COLUMNS:
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _line(row: dict) -> str:
    """A row as the sidecar holds it: one JSON object of its SWEEP_COLUMNS."""
    return json.dumps({column: _plain(row.get(column)) for column in SWEEP_COLUMNS})


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
