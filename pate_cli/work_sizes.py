"""How much one step of work holds at a time: memory is bounded by these sizes, never by the
number of queries, and no figure depends on them (docs/explanation/numerics.md#work-sizes)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

WORK_VALUES = 1 << 17
READ_VALUES = 1 << 20
TASK_VALUES = 1 << 22
TABLE_ROWS = 1 << 16
CURVE_CACHE_BYTES = 1 << 26
# A default chunk is sized by elements (rows x classes): :func:`chunk_rows`.
DEFAULT_CHUNK = None
CHUNK_ROWS = 8192
# A pass's chunk (:func:`stream_rows`): up to TABLE_ROWS, 2^21 vote elements and 2^23 curve
# values (docs/explanation/numerics.md#work-sizes)
STREAM_ELEMENTS = 2 * READ_VALUES
STREAM_CURVE_VALUES = 2 * TASK_VALUES




def chunk_rows(chunk_size: int | None, classes: int) -> int:
    """Rows per chunk: ``chunk_size`` when given, else ``READ_VALUES`` / ``classes``, at most
    ``CHUNK_ROWS``."""
    if chunk_size is not None:
        return chunk_size
    return min(CHUNK_ROWS, max(1, READ_VALUES // max(1, int(classes))))


def stream_rows(chunk_size: int | None, classes: int, orders: int) -> int:
    """Rows per chunk of a pass over the analysed queries: ``chunk_size``, else at most
    ``TABLE_ROWS``, ``STREAM_ELEMENTS`` vote values and ``STREAM_CURVE_VALUES`` curve values."""
    if chunk_size is not None:
        return chunk_size
    return min(TABLE_ROWS, max(1, STREAM_ELEMENTS // max(1, classes)),
               max(1, STREAM_CURVE_VALUES // max(1, orders)))


def batched(items: Iterable, size: int) -> Iterator[list]:
    """``items`` in consecutive lists of ``size`` (the last may be shorter)."""
    group: list = []
    for item in items:
        group.append(item)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group
