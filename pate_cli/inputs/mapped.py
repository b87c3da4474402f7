"""Memory-mapped inputs: let a pass over a large file leave it non-resident."""

from __future__ import annotations

import numpy as np


def drop_mapped_rows(array, lo: int, hi: int) -> None:
    """Let this process drop the file pages of rows ``lo .. hi-1`` of a memory-mapped
    array once they have been read (``madvise(MADV_DONTNEED)``: the kernel reads them
    again if they are touched), so a pass over a large file does not keep the whole file
    resident. Does nothing for other arrays, non-contiguous rows or other systems."""
    import mmap
    if hasattr(array, "drop_rows"):  # votes in several mapped pieces (inputs.shards)
        array.drop_rows(lo, hi)
        return
    mapping = _mapping_of(array)
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if mapping is None or advice is None or hi <= lo or not array.flags.c_contiguous:
        return
    try:
        start = np.frombuffer(mapping, dtype=np.uint8).__array_interface__["data"][0]
        first = array.__array_interface__["data"][0] + lo * array.strides[0] - start
        end = first + (hi - lo) * array.strides[0]
        first -= first % mmap.PAGESIZE
        end -= end % mmap.PAGESIZE  # whole pages only: a shared edge page stays
        if end > first >= 0:
            mapping.madvise(advice, first, end - first)
    except (ValueError, OSError, TypeError):
        pass


def _mapping_of(array):
    """The ``mmap`` under ``array`` (a ``numpy.memmap``, or a view of one), or None."""
    import mmap
    seen = array
    for _ in range(32):  # views of views: the chain is short
        if seen is None:
            return None
        if isinstance(seen, mmap.mmap):
            return seen
        mapping = getattr(seen, "_mmap", None)
        if mapping is not None:
            return mapping
        seen = getattr(seen, "base", None)
    return None
