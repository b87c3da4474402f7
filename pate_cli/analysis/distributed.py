"""One analysis counted on a Dask cluster, or on any ``concurrent.futures`` executor.

Composition is a sum (MATH.md s.6), and a chunk's count is exact integers keyed by its
distinct statistics (``analysis.grouped_run``), so the chunks of one run may be counted
anywhere: :func:`counted_remotely` submits one task per span of chunks (counted and
merged on the worker), at most ``window`` in flight, and merges the counts in order as
they come back; the distinct curves are then evaluated in blocks on the same executor
(:func:`executor_map`) and added here in block order, the same bits as a run counted on
local threads. A budget run's blocks are summed there too (``analysis.budget_run``), its
halt found here. Replay noise
is keyed by query position (MATH.md s.1), so a worker draws exactly the noise the local
run draws for its rows.

A task carries what its rows need and nothing more: for a ``.npy`` file (or ``.npy``
shards, ``inputs.shards``), its absolute path and the rows (each worker memory-maps the
file itself, so the workers must see it at the same path: one machine, or storage they
share); for any other input (CSV, stdin, an array given to the API) the votes
themselves. Student rows, given decisions and true labels go with their rows.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..accounting.grouped import batched, window_pieces
from ..errors import InputError, PateWarning
from ..inputs.shards import ShardedVotes, is_shard_set, open_shards
from ..sparse_rows import row_width
from ..threads import in_order
from ..work_sizes import TASK_VALUES
from .grouped_run import (
    ChunkCount,
    CountRequest,
    count_span,
    rows_in,
    span_arguments,
)


@dataclass(frozen=True)
class NpyRows:
    """Rows of a ``.npy`` file (or of shards) that a worker reads itself, by path,
    memory-mapped."""

    path: str
    shape: tuple[int, ...]

    def opened(self) -> np.ndarray:
        """The file (or shards), memory-mapped (a task opens it once for its chunks)."""
        return _opened(self.path, self.shape)

    def block(self, rows, lo: int = 0, hi: int | None = None, *, votes=None) -> np.ndarray:
        """Rows ``lo .. hi-1`` of the task's ``rows`` (a ``slice`` of consecutive file
        rows or an index array) as C-ordered float64, as ``setting.rows_of`` gives them
        locally; ``votes``: the file as ``opened()`` gave it."""
        return rows_in(self.opened() if votes is None else votes, rows, lo, hi)


def _opened(path: str, shape: tuple[int, ...]):
    """``path`` (a ``.npy`` file or shards) memory-mapped; a one-line error if this worker
    cannot see it as the client did."""
    hint = ("(workers read .npy inputs by path: put the files where they see them under "
            "the same names)")
    try:
        votes = (open_shards(path, _mapped_piece, hashed=False)[1] if is_shard_set(path)
                 else np.load(path, mmap_mode="r", allow_pickle=False))
    except InputError as error:
        raise InputError(f"a worker cannot read {path}: {error} {hint}") from None
    except OSError as error:
        raise InputError(f"a worker cannot read {path}: {error.strerror or error} {hint}") \
            from None
    if tuple(votes.shape) != tuple(shape):
        raise InputError(f"a worker's {path} has shape {tuple(votes.shape)}, not "
                         f"{tuple(shape)}: the workers see another file under this name")
    return votes


def task_source(votes, path: str | None):
    """How tasks get their rows: ``NpyRows`` when ``votes`` is a memory map of the
    ``.npy`` file ``path`` or the shards ``path`` names, else None (each task carries its
    votes)."""
    if path is None:
        return None
    if isinstance(votes, ShardedVotes) or (isinstance(votes, np.memmap)
                                           and str(path).lower().endswith(".npy")):
        return NpyRows(os.path.abspath(str(path)), tuple(votes.shape))
    return None


def _mapped_piece(name: str) -> np.ndarray:
    return np.load(name, mmap_mode="r", allow_pickle=False)


def counted_remotely(executor, votes, positions, request: CountRequest, *, source,
                     chunk_size: int, student=None, decisions=None, truth=None,
                     window: int = 8) -> Iterator[tuple[int, ChunkCount]]:
    """The analysed queries ``positions`` counted by ``executor`` (``submit`` and futures
    with ``result()``), a task per span of whole chunks (at most ``work_sizes.TASK_VALUES`` vote
    values; never across a window edge, ``accounting.grouped.window_pieces``), yielded
    in order as ``(stop, count)``; at most ``window`` tasks in flight."""
    queries = positions.size
    classes = row_width(votes)
    span = chunk_size * max(1, TASK_VALUES // max(1, chunk_size * classes))
    spans = list(window_pieces(queries, span))

    def submit(piece: tuple[int, int]):
        start, stop = piece
        arguments = span_arguments(votes, positions, start, stop, source=source,
                                   student=student, decisions=decisions, truth=truth)
        return executor.submit(count_span, request, *arguments.pop("at"), start,
                               chunk_size=chunk_size, **arguments)

    yield from zip((stop for _, stop in spans), in_order(submit, spans, window=window),
                   strict=True)


def executor_map(executor, function: Callable, items, *, batch: int = 8,
                 window: int = 8) -> Iterator:
    """``map(function, items)`` on ``executor``, results in order: items go in batches of
    ``batch`` (one task each, so that small items do not drown in per-task overhead), at
    most ``window`` batches in flight."""
    submit = partial(executor.submit, _mapped, function)
    for group in in_order(submit, batched(items, batch), window=window):
        yield from group


def _mapped(function: Callable, group: list) -> list:
    return [function(item) for item in group]


def usable_executor(target, *, rounds, individualized, name: str):
    """The ``concurrent.futures``-style executor of ``target`` (a ``distributed.Client``'s
    ``get_executor()``, or an executor as it is) if the run can use it, else None with a
    ``PateWarning``: a single run's totals are split (chunks counted there; a budget
    run's blocks summed there, its halt found here, ``analysis.budget_run``; the per-query
    table's pass runs here); rounds, individualized groups and SVT-PATE (sequential) are
    analysed in this process."""
    reason = ("--rounds" if rounds is not None
              else "--individualized" if individualized is not None
              else "-m svt" if name == "svt" else None)
    if reason is not None:
        warnings.warn(PateWarning(
            f"--scheduler splits the totals of single runs; a run with {reason} is "
            f"analysed in this process"), stacklevel=3)
        return None
    get_executor = getattr(target, "get_executor", None)
    return get_executor() if callable(get_executor) else target


def executor_threads(executor, default: int = 2) -> int:
    """Threads behind ``executor``: a Dask client's workers' threads, a pool's workers,
    else ``default``."""
    client = getattr(executor, "pate_client", None) or getattr(executor, "_client", None)
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - not a Dask executor, or it cannot say
        return max(1, int(getattr(executor, "_max_workers", default) or default))
