"""The only source of noise: counter-based, keyed by query position (math:mechanisms).

Blocks of ``NOISE_BLOCK`` queries each come from a generator seeded by ``(seed, salt, stream,
block)``: noise never depends on chunking, workers or resuming. Blocks of at most
``WHOLE_BLOCK_VALUES`` are drawn whole and kept; wider ones row by row (C order: same values)."""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock, get_ident

import numpy as np

NOISE_BLOCK = 1024
# Blocks of at most this many values are drawn whole and kept (8 MB: 1,024 x 1,024).
WHOLE_BLOCK_VALUES = 1 << 20
# Values drawn at once while skipping the rows of a wide block before those needed.
SKIP_VALUES = 1 << 20

# Independent noise streams, one per random draw of the algorithms.
STREAM_SELECTION = 1
STREAM_ANSWER = 2
STREAM_PARTICIPATION = 3  # individualized vanishing: who votes (mechanisms.participation)
STREAM_SVT_THRESHOLD = 4
STREAM_SVT_QUERY = 5
STREAM_GUMBEL = 6  # the exponential mechanism's Gumbel-max answer (math:exponential)


def generator(seed: int, key: tuple[int, ...]) -> np.random.Generator:
    """PCG64 seeded by ``SeedSequence(seed, spawn_key=key)``, the one place generators are
    made. Keys: ``(salt, stream, block)`` (:class:`NoiseSource`); ``(STREAM_PARTICIPATION,
    block)`` (the vanishing schedule; no salt, so schedules do not change)."""
    sequence = np.random.SeedSequence(entropy=seed, spawn_key=key)
    return np.random.Generator(np.random.PCG64(sequence))


class NoiseSource:
    """Chunk-invariant noise: block ``b`` of stream ``s`` comes from ``(seed, salt, s, b)``;
    ``salt`` separates runs under one seed (rounds). Keeps the last block of each stream."""

    def __init__(self, seed: int, *, salt: int = 0, shared: SharedBlocks | None = None):
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        self.seed = int(seed)
        self.salt = int(salt)
        self.shared = shared
        self._last: dict[tuple[int, str, tuple[int, ...]], tuple[int, np.ndarray]] = {}
        self._cursors: dict[tuple, tuple[int, np.random.Generator, int]] = {}

    def draw(self, *, stream: int, kind: str, start: int, count: int, width: int = 1):
        """Standard ``kind`` noise (``normal``, ``laplace`` or ``gumbel``), shape
        ``(count, width)``, for the queries at positions ``start .. start+count-1``."""
        if count == 0:
            return np.empty((0, width))
        if kind not in ("normal", "laplace", "gumbel"):
            raise ValueError(f"unknown noise kind {kind!r}")
        first, last = start // NOISE_BLOCK, (start + count - 1) // NOISE_BLOCK
        if NOISE_BLOCK * width > WHOLE_BLOCK_VALUES:
            return self._wide_rows(stream, kind, width, start, count)
        blocks = [self._block(stream, kind, width, b) for b in range(first, last + 1)]
        noise = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
        offset = start - first * NOISE_BLOCK
        return noise[offset : offset + count]

    def _block(self, stream: int, kind: str, width: int, index: int) -> np.ndarray:
        key = (stream, kind, (width,))
        cached = self._last.get(key)
        if cached is not None and cached[0] == index:
            return cached[1]
        shared = None if self.shared is None else self.shared.get(
            (self.seed, self.salt, stream, kind, width, index))
        if shared is not None:
            self._last[key] = (index, shared)
            return shared
        block = _values(generator(self.seed, (self.salt, stream, index)), kind,
                        (NOISE_BLOCK, width))
        block.flags.writeable = False
        if self.shared is not None:
            self.shared.put((self.seed, self.salt, stream, kind, width, index), block)
        self._last[key] = (index, block)
        return block

    def _wide_rows(self, stream: int, kind: str, width: int, start: int,
                   count: int) -> np.ndarray:
        """Rows ``start .. start+count-1`` of wide blocks; a cursor per thread and stream lets
        consecutive chunks go on where the last stopped."""
        out = np.empty((count, width))
        key = (get_ident(), stream, kind, width)
        done = 0
        while done < count:
            position = start + done
            index, row = divmod(position, NOISE_BLOCK)
            rows = min(count - done, NOISE_BLOCK - row)
            cursor = self._cursors.get(key)
            if cursor is None or cursor[0] != index or cursor[2] > row:
                cursor = (index, generator(self.seed, (self.salt, stream, index)), 0)
            _, draws, drawn = cursor
            step = max(1, SKIP_VALUES // width)
            while drawn < row:  # the rows before those needed, a piece at a time
                skipped = min(step, row - drawn)
                _values(draws, kind, (skipped, width))
                drawn += skipped
            out[done : done + rows] = _values(draws, kind, (rows, width))
            self._cursors[key] = (index, draws, row + rows)
            done += rows
        return out


def _values(draws: np.random.Generator, kind: str, shape: tuple[int, int]) -> np.ndarray:
    """The next ``shape`` standard ``kind`` values of ``draws`` (filled in C order)."""
    if kind == "normal":
        return draws.standard_normal(shape)
    if kind == "gumbel":
        return draws.gumbel(0.0, 1.0, shape)
    return draws.laplace(0.0, 1.0, shape)


class SharedBlocks:
    """Noise blocks kept across runs (``NoiseSource(..., shared=)``), up to ``limit`` bytes,
    least recently used out; a fresh draw gives the same arrays (no bit changes). Thread-safe."""

    def __init__(self, limit: int) -> None:
        self.limit = int(limit)
        self._blocks: OrderedDict = OrderedDict()
        self._bytes = 0
        self._lock = Lock()

    def get(self, key: tuple) -> np.ndarray | None:
        if not self.limit:
            return None
        with self._lock:
            block = self._blocks.get(key)
            if block is not None:
                self._blocks.move_to_end(key)
            return block

    def put(self, key: tuple, block: np.ndarray) -> None:
        if not self.limit or block.nbytes > self.limit:
            return
        with self._lock:
            if key in self._blocks:
                return
            self._blocks[key] = block
            self._bytes += block.nbytes
            while self._bytes > self.limit:
                _, dropped = self._blocks.popitem(last=False)
                self._bytes -= dropped.nbytes


def release_draw(seed: int) -> float:
    """The smooth-sensitivity release's standard normal draw (math:smooth), outside the query
    streams: ``default_rng(seed)``'s first normal, so published sanitised figures stay."""
    return float(np.random.default_rng(seed).normal())
