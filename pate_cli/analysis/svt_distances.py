"""Each analysed query's distance to instability (MATH.md s.1), read again and again a
piece at a time: what SVT-PATE's cut-off search and few-answers advice go over.

``--svt-cutoff auto`` replays the run once per candidate cut-off (about three per decade of
queries) and the few-answers note bisects over the noiseless rule's answer count; both
read the queries only through ``d``. Computing ``d`` from the votes for every pass would
read the vote file some 20 to 40 times, and keeping the column would hold 8 bytes per
query. :class:`DistanceFile` computes it once, a chunk at a time, into an unnamed
temporary file (float64, deleted when closed or when the process ends) and reads it back a
piece at a time with plain reads: the file's pages are the kernel's cache, not this
process's memory (a memory map's touched pages would count as resident), so memory holds
one piece whatever the number of queries. :class:`DistanceArray` serves a column already
in memory (the tests' hand-made cases) the same way.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import IO

import numpy as np

from ..mechanisms import distance_to_instability
from ..work_sizes import TABLE_ROWS
from .setting import rows_read_once

# Distances read back at once (512 KB of float64).
DISTANCE_ROWS = TABLE_ROWS


class DistanceArray:
    """Distances to instability held in memory, served as pieces of ``DISTANCE_ROWS``."""

    def __init__(self, distance: np.ndarray):
        self.distance = np.asarray(distance, dtype=np.float64)
        self.size = int(self.distance.shape[0])

    def pieces(self) -> Iterator[np.ndarray]:
        for start in range(0, self.size, DISTANCE_ROWS):
            yield self.distance[start : start + DISTANCE_ROWS]

    def whole(self) -> bool:
        """Whether every distance is a whole number (or infinite)."""
        return bool(np.all(np.floor(self.distance) == self.distance))


class DistanceFile:
    """The distances of the analysed queries ``positions[:queries]`` of ``votes``,
    computed from ``chunk_size`` rows at a time into a temporary file on the first call
    of :meth:`pieces` (never if no pass asks for them), read back from it afterwards.
    A context manager: the file is closed (and so deleted) on exit."""

    def __init__(self, votes, positions, queries: int, chunk_size: int):
        self.votes, self.positions = votes, positions
        self.size, self.chunk_size = int(queries), int(chunk_size)
        self._file: IO[bytes] | None = None

    def __enter__(self) -> DistanceFile:
        return self

    def __exit__(self, *_) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def whole(self) -> bool:
        """Always: ``max(0, ceil(m/2) - 1)`` is a whole number (MATH.md s.1)."""
        return True

    def pieces(self) -> Iterator[np.ndarray]:
        """The distances in analysed order, at most ``DISTANCE_ROWS`` at a time."""
        if self._file is None:
            self._write()
        assert self._file is not None
        for start in range(0, self.size, DISTANCE_ROWS):
            count = min(DISTANCE_ROWS, self.size - start)
            self._file.seek(8 * start)
            piece = np.empty(count)
            read = self._file.readinto(memoryview(piece).cast("B"))
            if read != 8 * count:
                raise OSError(f"the temporary file of SVT distances ended after "
                              f"{start + read // 8} of {self.size} values")
            yield piece

    def _write(self) -> None:
        self._file = written = tempfile.TemporaryFile(prefix="pate-svt-distances-")
        for start in range(0, self.size, self.chunk_size):
            stop = min(self.size, start + self.chunk_size)
            block = rows_read_once(self.votes, self.positions, start, stop)
            written.write(np.ascontiguousarray(distance_to_instability(block),
                                               dtype=np.float64).tobytes())
        written.flush()
