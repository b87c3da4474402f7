"""Curves kept from one chunk, block or run to the next in a process (``SharedCurves``): a
sweep's points of one sigma (or T, sigma1) share curves; a per-query pass keeps its own; no
process-wide store. Curves are computed entry by entry, so a kept value is what a fresh
computation gives: no bit changes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import partial

import numpy as np


class SharedCurves:
    """Curves of value-identified curve functions, kept up to ``limit`` bytes (least
    recently used function out first; off at 0), in the pieces they were computed in
    (never copied), with one sorted index of their keys."""

    def __init__(self, limit: int = 0) -> None:
        self.limit = int(limit)
        self._entries: OrderedDict = OrderedDict()  # identity -> _Kept
        self._bytes = 0
        self._lock = threading.Lock()

    def serving(self, rdp, orders: np.ndarray):
        """``rdp`` (sorted distinct statistics -> ``(keys, orders)`` curves) answering kept keys
        (when at least an eighth of those asked are kept) and keeping the others; shared only
        for a ``functools.partial`` of plain numbers and strings. Asked for some of
        ``orders``, it serves those columns of kept rows."""
        identity = _identity(rdp, orders)
        if not self.limit or identity is None:
            return rdp

        served = np.asarray(orders, dtype=np.float64)
        column_of = {value: column for column, value in reversed(list(enumerate(served.tolist())))}

        def cached(wanted: np.ndarray, at_orders: np.ndarray) -> np.ndarray:
            # some of the orders (``accounting.grouped.block_sums``): their columns
            whole = np.shape(at_orders) == served.shape and np.array_equal(at_orders, served)
            columns = None if whole else [column_of.get(value)
                                          for value in np.ravel(at_orders).tolist()]
            if columns is not None and None in columns:
                return rdp(wanted, at_orders)
            with self._lock:
                kept = self._entries.get(identity)
                if kept is not None:
                    self._entries.move_to_end(identity)
            hit = None if kept is None else kept.rows_of(wanted)
            if hit is None or 8 * hit[0].size < wanted.size:
                fresh = rdp(wanted, at_orders)
                if whole:
                    self._keep(identity, wanted, fresh)
                return fresh
            found, piece, row = hit
            out = np.empty((wanted.size, np.size(at_orders)))
            for number in np.unique(piece):
                chosen = piece == number
                rows = kept.pieces[number][row[chosen]]
                out[found[chosen]] = rows if whole else rows[:, columns]
            missing = np.ones(wanted.size, dtype=bool)
            missing[found] = False
            if missing.any():
                fresh = rdp(wanted[missing], at_orders)
                out[missing] = fresh
                if whole:
                    self._keep(identity, wanted[missing], fresh)
            return out

        return cached

    def _keep(self, identity, keys: np.ndarray, curves: np.ndarray) -> None:
        size = curves.nbytes + _INDEX_BYTES * keys.size
        with self._lock:
            while self._bytes + size > self.limit and any(
                    other != identity for other in self._entries):
                other = next(key for key in self._entries if key != identity)
                self._bytes -= self._entries.pop(other).nbytes  # least recently used
            if self._bytes + size > self.limit:
                return  # full with this function's own curves: the rest are evaluated
            kept = self._entries.setdefault(identity, _Kept())
            kept.add(keys, curves)
            self._entries.move_to_end(identity)
            self._bytes += size


# Bytes of index per kept key: its value, piece number and row.
_INDEX_BYTES = 8 + 4 + 4


class _Kept:
    """One function's kept curves: the pieces, and their keys sorted with where each is.
    Readers run outside the lock: the index is one tuple replaced in one assignment after
    the piece is appended, so a reader sees the old index or the new, never a mix."""

    def __init__(self) -> None:
        self.pieces: list[np.ndarray] = []
        self.index = (np.empty(0), np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32))

    @property
    def nbytes(self) -> int:
        return sum(piece.nbytes for piece in self.pieces) + _INDEX_BYTES * self.index[0].size

    def add(self, keys: np.ndarray, curves: np.ndarray) -> None:
        curves.flags.writeable = False  # the caller's array, kept as it is
        old_keys, old_piece, old_row = self.index
        keys = np.concatenate((old_keys, keys))
        order = np.argsort(keys, kind="stable")  # two sorted runs: merged in linear time
        piece = np.concatenate((old_piece, np.full(curves.shape[0], len(self.pieces),
                                                   dtype=np.int32)))[order]
        row = np.concatenate((old_row, np.arange(curves.shape[0], dtype=np.int32)))[order]
        self.pieces.append(curves)  # before the index that points into it
        self.index = (keys[order], piece, row)

    def rows_of(self, wanted: np.ndarray):
        """``(positions in wanted, piece, row)`` of the wanted keys kept, or None."""
        keys, piece, row = self.index  # one consistent snapshot
        if keys.size == 0:
            return None
        where = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
        found = np.flatnonzero(keys[where] == wanted)
        if found.size == 0:
            return None
        return found, piece[where[found]], row[where[found]]


def _identity(rdp, orders: np.ndarray):
    """A hashable value naming ``rdp`` and the orders, or None if ``rdp`` has none."""
    if not isinstance(rdp, partial) or rdp.keywords:
        return None
    if not all(isinstance(arg, (int, float, str)) for arg in rdp.args):
        return None
    return (rdp.func, rdp.args, np.asarray(orders, dtype=np.float64).tobytes())
