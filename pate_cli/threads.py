"""Threads for numpy work (numpy releases the GIL in its heavy loops): the cores this
process may use, an ordered map on a thread pool, and the in-order draining of futures
with a bounded window that every parallel path of the package shares."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def ordered_map(function: Callable, items, *, workers: int | None = None) -> Iterator:
    """``map(function, items)`` on ``workers`` threads, results in order, at most two
    per worker in flight (numpy releases the GIL in the heavy work)."""
    workers = default_workers() if workers is None else workers
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        yield from map(function, items)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from in_order(partial(pool.submit, function), items, window=2 * workers)


def in_order(submit: Callable, items: Iterable, *, window: int) -> Iterator:
    """The results of ``submit(item)`` (a future) for each of ``items``, in the order of
    ``items``, with at most ``window`` futures in flight; those still pending are
    cancelled if the caller stops early (a thread pool here, a cluster's executor in
    ``analysis.distributed``)."""
    pending: deque = deque()
    try:
        for item in items:
            pending.append(submit(item))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
