"""Threads for numpy work (numpy releases the GIL in its heavy loops) and executors: ordered
maps on a thread pool or any ``concurrent.futures`` executor (Dask's), with a bounded window."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from .work_sizes import batched

# How many processes share this one's cores (``share_cores``; 1: none).
_SHARERS = [1]


def default_workers() -> int:
    """This process's share of the cores it may run on (at least 1)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores // _SHARERS[0])


def share_cores(processes: int) -> None:
    """This process is one of ``processes`` sharing its cores (a pool's worker): its default
    threads (:func:`default_workers`) are its share, not every core."""
    _SHARERS[0] = max(1, int(processes))


def ordered_map(function: Callable, items, *, workers: int | None = None) -> Iterator:
    """``map(function, items)`` on ``workers`` threads, results in order, at most two per
    worker in flight; nothing runs before the first result is asked for. A consumer stopping
    part-way never waits (tasks not started are cancelled, running ones finish on their
    threads), so it cannot hang, even closed on a pool thread."""
    return _OrderedMap(function, items,
                       default_workers() if workers is None else workers)


class _OrderedMap:
    """The iterator of :func:`ordered_map`: its pool made at the first ``next``, shut down
    (threads joined) when every result is out, or without waiting on ``close`` (also when
    dropped or collected)."""

    def __init__(self, function: Callable, items, workers: int):
        self._function, self._items, self._workers = function, items, workers
        self._results: Iterator | None = None
        self._pool: ThreadPoolExecutor | None = None

    def __iter__(self) -> Iterator:
        return self

    def __next__(self):
        if self._results is None:
            self._start()
        try:
            return next(self._results)
        except StopIteration:
            if self._pool is not None:  # every task is done: the threads end now
                self._pool.shutdown(wait=True)
                self._pool = None
            raise
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        items = list(self._items)
        self._items = ()
        if self._workers <= 1 or len(items) <= 1:
            self._results = map(self._function, items)
            return
        self._pool = ThreadPoolExecutor(max_workers=self._workers)
        self._results = in_order(partial(self._pool.submit, self._function), items,
                                 window=2 * self._workers)

    def close(self) -> None:
        """Stop: the tasks not started cancelled, the pool shut down without waiting for
        those running; later ``next`` calls raise ``StopIteration``."""
        results, self._results = self._results, iter(())
        if isinstance(results, Generator):
            results.close()  # in_order cancels its pending futures
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def __del__(self) -> None:
        self.close()


def in_order(submit: Callable, items: Iterable, *, window: int) -> Iterator:
    """The results of ``submit(item)`` (a future) for each of ``items``, in order, at most
    ``window`` in flight; pending ones are cancelled if the caller stops early."""
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


def executor_map(executor, function: Callable, items, *, batch: int = 8,
                 window: int = 8) -> Iterator:
    """``map(function, items)`` on ``executor``, results in order: items go in batches of
    ``batch`` (one task each, against per-task overhead), at most ``window`` in flight."""
    submit = partial(executor.submit, _mapped, function)
    for group in in_order(submit, batched(items, batch), window=window):
        yield from group


def _mapped(function: Callable, group: list) -> list:
    return [function(item) for item in group]


def tasks_in_order(task: Callable[..., partial], items: Iterable, *,
                   workers: int | None = None, executor=None) -> Iterator:
    """The results of ``task(item)()`` for each of ``items``, in order: on ``workers``
    threads (:func:`ordered_map`), or on ``executor`` (:func:`in_order`, two tasks per
    thread in flight). A task (a picklable partial) is made as its turn comes."""
    if executor is None:
        return ordered_map(lambda item: task(item)(), items, workers=workers)
    return in_order(lambda item: executor.submit(task(item)), items,
                    window=2 * executor_threads(executor))


def executor_threads(executor, default: int = 2) -> int:
    """Threads behind ``executor``: a Dask client's workers', a pool's, else ``default``."""
    client = getattr(executor, "pate_client", None) or getattr(executor, "_client", None)
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # noqa: BLE001 - a client that cannot say
            pass
    return max(1, int(getattr(executor, "_max_workers", default) or default))
