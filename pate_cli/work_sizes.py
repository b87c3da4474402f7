"""How much one step of work holds at a time: memory is bounded by these sizes, never by
the number of queries or by how often votes repeat.

No figure depends on them (composition adds in query order, math:conversion; counts are
exact): each trades memory for speed only.

- ``WORK_VALUES`` (2^17, 1 MB): a kernel's scratch (rows x orders), kept in cache;
- ``READ_VALUES`` (2^20, 8 MB): vote values one thread works on at once;
- ``TASK_VALUES`` (2^22, 32 MB): what one task covers (several chunks merged on a thread or
  worker), and the curve values a chunk of outputs holds;
- ``TABLE_ROWS`` (2^16): per-query table rows formed or scanned at once (a parquet group);
- ``CURVE_CACHE_BYTES`` (2^26, 64 MB): curves a pass keeps (``curve_store.SharedCurves``).

Sizes that set an order of additions, and so the last bits, stay with their algorithm:
``accounting.grouped.TOTAL_BLOCK`` and ``TOTALS_WINDOW``, ``analysis.budget_run.BUDGET_BLOCK``,
``mechanisms.noise.NOISE_BLOCK``.
"""

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
# A pass's chunk (:func:`stream_rows`): up to TABLE_ROWS (no table piece joined from two
# frames; 19.0 -> 17.5 s for 10^7 x 10 against 32,768), 2^21 vote elements and 2^23 curve
# values (64 MB: never-repeating votes have a curve per row; 10^6 soft votes took 0.9 GB
# at 65,536 rows, 298 orders)
STREAM_ELEMENTS = 2 * READ_VALUES
STREAM_CURVE_VALUES = 2 * TASK_VALUES




def chunk_rows(chunk_size: int | None, classes: int) -> int:
    """Rows per chunk: ``chunk_size`` when given, else ``READ_VALUES``' share of
    ``classes``-wide rows, at most ``CHUNK_ROWS``."""
    if chunk_size is not None:
        return chunk_size
    return min(CHUNK_ROWS, max(1, READ_VALUES // max(1, int(classes))))


def stream_rows(chunk_size: int | None, classes: int, orders: int) -> int:
    """Rows per chunk of a pass over the analysed queries: ``chunk_size``, else at most
    ``TABLE_ROWS``, ``STREAM_ELEMENTS`` vote values and ``STREAM_CURVE_VALUES`` curve
    values (the table's pass, and an individualized run's group passes)."""
    if chunk_size is not None:
        return chunk_size
    return min(TABLE_ROWS, max(1, STREAM_ELEMENTS // max(1, classes)),
               max(1, STREAM_CURVE_VALUES // max(1, orders)))


def batched(items: Iterable, size: int) -> Iterator[list]:
    """``items`` in consecutive lists of ``size`` (the last may be shorter): the blocks
    of one task (``accounting.grouped``), the items of one task on an executor
    (:func:`executor_map`)."""
    group: list = []
    for item in items:
        group.append(item)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group
