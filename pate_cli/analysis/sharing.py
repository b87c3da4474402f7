"""Work kept from one run to the next in a process: what a sweep's points have in common.

The points of a sweep analyse one file with the same seeds under different parameters.
Points with the same sigma evaluate the same answer curves at the same log q values
(MATH.md s.3, one curve per distinct statistic), points with the same (T, sigma1) the
same selection curves (s.4), and every point draws the same standard noise (s.1), scaled
by its own sigma. :func:`sharing_across_runs` turns on, for this process, a bounded store
of each: noise blocks (``mechanisms.noise``) and :class:`SharedCurves`, which
``analysis.totals`` consults. A kept value is the very array a fresh computation gives
(curves are computed entry by entry, so a row's bits do not depend on the rows computed
with it), so sharing changes no bit of any point.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import partial

import numpy as np

from ..mechanisms.noise import sharing_noise


class SharedCurves:
    """Curves of value-identified curve functions, kept up to ``limit`` bytes (least
    recently used function first out); off while ``limit`` is 0."""

    def __init__(self, limit: int = 0) -> None:
        self.limit = int(limit)
        self._entries: OrderedDict = OrderedDict()  # identity -> [(keys, curves), ...]
        self._bytes = 0
        self._lock = threading.Lock()

    def serving(self, rdp, orders: np.ndarray):
        """``rdp`` (sorted distinct statistics -> ``(keys, orders)`` curves), answering
        the keys it has kept and keeping the others. ``rdp`` is shared only when it is a
        ``functools.partial`` of plain numbers and strings (its value is its identity)."""
        identity = _identity(rdp, orders)
        if not self.limit or identity is None:
            return rdp

        def cached(wanted: np.ndarray, at_orders: np.ndarray) -> np.ndarray:
            out = np.empty((wanted.size, np.size(at_orders)))
            missing = np.ones(wanted.size, dtype=bool)
            for keys, curves in self._pieces(identity):
                where = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
                hit = missing & (keys[where] == wanted)
                out[hit] = curves[where[hit]]
                missing &= ~hit
            if missing.any():
                fresh = rdp(wanted[missing], at_orders)
                out[missing] = fresh
                self._keep(identity, wanted[missing], fresh)
            return out

        return cached

    def _pieces(self, identity) -> list:
        with self._lock:
            pieces = self._entries.get(identity)
            if pieces is None:
                return []
            self._entries.move_to_end(identity)
            return list(pieces)

    def _keep(self, identity, keys: np.ndarray, curves: np.ndarray) -> None:
        size = keys.nbytes + curves.nbytes
        if size > self.limit:
            return
        keys, curves = keys.copy(), np.array(curves)
        keys.flags.writeable = curves.flags.writeable = False
        with self._lock:
            pieces = self._entries.setdefault(identity, [])
            pieces.append((keys, curves))
            # pieces are merged when the newer is as large as the older (a binary
            # counter), so a lookup searches O(log) pieces and each row moves O(log) times
            while len(pieces) > 1 and pieces[-1][0].size >= pieces[-2][0].size:
                newer, older = pieces.pop(), pieces.pop()
                pieces.append(_merged(older, newer))
            self._entries.move_to_end(identity)
            self._bytes += size
            while self._bytes > self.limit and len(self._entries) > 1:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= sum(k.nbytes + c.nbytes for k, c in dropped)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


def _merged(first: tuple, second: tuple) -> tuple:
    """Two pieces ``(sorted keys, curves)`` as one (a key in both is kept once)."""
    keys = np.concatenate((first[0], second[0]))
    order = np.argsort(keys, kind="stable")  # two sorted runs: merged in linear time
    keys = keys[order]
    keep = np.concatenate(([True], keys[1:] != keys[:-1]))
    order, keys = order[keep], keys[keep]
    curves = np.concatenate((first[1], second[1]))[order]
    keys.flags.writeable = curves.flags.writeable = False
    return keys, curves


SHARED_CURVES = SharedCurves()


def _identity(rdp, orders: np.ndarray):
    """A hashable value naming ``rdp`` and the orders, or None if ``rdp`` has none."""
    if not isinstance(rdp, partial) or rdp.keywords:
        return None
    if not all(isinstance(arg, (int, float, str)) for arg in rdp.args):
        return None
    return (rdp.func, rdp.args, np.asarray(orders, dtype=np.float64).tobytes())


def sharing_across_runs(noise_bytes: int, curve_bytes: int) -> None:
    """Keep up to ``noise_bytes`` of noise blocks and ``curve_bytes`` of curves across the
    runs of this process (0 and 0: stop, and drop what was kept)."""
    sharing_noise(noise_bytes)
    SHARED_CURVES.limit = int(curve_bytes)
    if not curve_bytes:
        SHARED_CURVES.clear()
