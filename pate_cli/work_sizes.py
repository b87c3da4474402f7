"""How much one step of work holds at a time: memory is bounded by these sizes, never by
the number of queries or by how often votes repeat.

No figure depends on any of them (composition adds in query order, math:conversion, and
counts are exact), so each trades memory for speed only, and each is one decision:

- ``WORK_VALUES`` (2^17 float64 values, 1 MB): a kernel's scratch array (rows x orders),
  small enough to stay in cache while it is filled, summed and converted;
- ``READ_VALUES`` (2^20 values, 8 MB as float64): vote values (or pairs x orders) read and
  worked on at once by one thread: large enough that per-chunk overheads vanish, small
  enough that a few chunks in flight stay cheap;
- ``TASK_VALUES`` (2^22 values, 32 MB as float64): what one task covers (several chunks,
  counted and merged on a thread or a cluster's worker, so that fewer, larger tables come
  back), and the curve values (queries x orders) a chunk of outputs holds;
- ``TABLE_ROWS`` (2^16): rows of a per-query table formed, formatted or scanned at once
  (a parquet row group);
- ``CURVE_CACHE_BYTES`` (2^26, 64 MB): curves one pass keeps for its later chunks
  (``curve_store.SharedCurves``; log q values recur from chunk to chunk).

Sizes that set an algorithm's order of additions, and so its last bits, stay with their
algorithm: ``accounting.grouped.TOTAL_BLOCK`` and ``TOTALS_WINDOW``,
``analysis.budget_run.BUDGET_BLOCK``, ``mechanisms.noise.NOISE_BLOCK``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

WORK_VALUES = 1 << 17
READ_VALUES = 1 << 20
TASK_VALUES = 1 << 22
TABLE_ROWS = 1 << 16
CURVE_CACHE_BYTES = 1 << 26
# A run's default chunk (``chunk_size=None``) is sized by elements (rows x classes), so
# that wide vote files stay bounded: :func:`chunk_rows`.
DEFAULT_CHUNK = None
CHUNK_ROWS = 8192
# Rows of a chunk of a pass over the analysed queries (:func:`stream_rows`): up to
# TABLE_ROWS (the per-query files' pieces, so that no piece is joined from two frames;
# fewer chunks evaluate fewer curves again: 19.0 -> 17.5 s for 10^7 x 10 on 2 cores
# against 32,768), at most 2^21 vote elements and at most 2^23 curve values (rows x
# orders: 64 MB; votes that never repeat have a distinct curve per row, and a few chunks
# are formed ahead: 10^6 soft votes took 0.9 GB at 65,536 rows, 298 orders)
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
